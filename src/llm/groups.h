/*
 * groups.h - the collectives of a layout's communication groups priced on
 * the links each group really crosses (docs/model.md eq. L7).
 *
 * Every group of a kind has one shape (layout.h): `local` GPUs on each of
 * `hosts` hosts, `concurrent` groups of the kind sharing a host.  Its
 * collectives are those of a machine made of its own GPUs: one host of the
 * topology with only the group's GPUs kept, and of the NICs only the
 * group's share (each NIC's rate times the fraction of the GPUs it serves
 * that are in the group: a GPU with a NIC of its own keeps that NIC whole,
 * a host with one NIC for eight GPUs gives a one-GPU-a-host group an
 * eighth), replicated over the group's hosts.  So a DP group of one GPU
 * per host prices the network and a TP group inside a host prices NVLink,
 * with the existing collective model (cost/collective.h) and its
 * calibration.  Building costs one collective-model build per group kind,
 * whatever the number of hosts (cp_coll_build_hosts).
 *
 * The expert-parallel group also gets its all-to-all's model (alltoall.h),
 * on the same one-host and two-host machines.
 *
 * Ownership: cp_groups owns its topologies and models (cp_groups_free)
 * and borrows the machine.
 */
#ifndef CP_LLM_GROUPS_H
#define CP_LLM_GROUPS_H

#include <pthread.h>

#include "cost/collective.h"
#include "cost/pool.h"
#include "llm/ops.h"

/* The machine of one group shape: its host, window and collective model. */
struct cp_a2a;

typedef struct cp_group_model {
    cp_group_shape shape;
    int active;           /* the group has two or more GPUs */
    cp_topo *host;        /* owned: the group's GPUs and NIC share on one host */
    cp_topo *window;      /* owned: host replicated twice when the group spans hosts */
    cp_coll coll;         /* the group's collective model */
    int have_coll;
    double nic_share;     /* the NIC rate each member GPU gets, GB/s (0 inside a host) */
    cp_pool pool;         /* the group's collectives through the machine's CXL pool, its
                             devices and ports shared as every group of every host shares them */
    int have_pool;
    pthread_mutex_t pool_mu; /* cp_pool_time_us uses the model's scratch */
    double memo[16][3];   /* the last (op, bytes, us) the pool priced: a layout's buckets
                             are mostly one size */
    int nmemo;
    int machine_hosts;    /* the hosts of the machine it was built for (the pool's sharing) */
    struct cp_a2a *a2a;   /* owned: the all-to-all of a group of this shape when it served
                             as an EP group (built once, alltoall.h), or NULL */
} cp_group_model;

/* Group machines kept across layouts (a search prices thousands of layouts
 * made of a few dozen group shapes): keyed by the shape's local GPUs,
 * hosts and the NIC rate override.  Owned entries; not thread-safe. */
typedef struct cp_group_cache {
    cp_group_model **m;   /* owned, n of them, each allocated alone (its address stays) */
    double *net;          /* the --net-gbs each was built with */
    int n, cap;
} cp_group_cache;

void cp_group_cache_free(cp_group_cache *c);

typedef struct cp_groups {
    const cp_topo *machine;   /* borrowed */
    const cp_topo *base;      /* borrowed: the host the machine replicates (or the machine) */
    cp_group_shape shape[CP_G_KINDS];
    int active[CP_G_KINDS];   /* the kind has a group of two or more GPUs */
    cp_group_model *own[CP_G_KINDS]; /* owned: the models built for this layout alone */
    cp_group_model *use[CP_G_KINDS]; /* the model each kind prices with: its own, an
                                        earlier kind's of the same shape, or a cache's */
    struct cp_a2a *a2a;       /* the EP group's all-to-all (alltoall.h), NULL without expert
                                 parallelism: borrowed from its group model */
} cp_groups;

/* Build every group of layout l (resolved) on machine t (a single host, or
 * a --hosts replica of one).  net_gbs > 0 replaces every NIC's line rate
 * (--net-gbs).  Groups of the same shape share one model; with a cache,
 * shapes it holds are borrowed from it and new ones added to it (the cache
 * must then outlive G).  CP_EINPUT naming the topology when a group's GPUs
 * cannot reach each other. */
int cp_groups_build(cp_groups *G, const cp_topo *t, const cp_layout *l, double net_gbs,
                    cp_group_cache *cache, cp_err *e);

/* The same for the kinds in `mask` only (bit 1 << kind); the others price
 * nothing (a search's lower bound needs only the TP and CP groups, whose
 * shapes few layouts do not share). */
int cp_groups_build_kinds(cp_groups *G, const cp_topo *t, const cp_layout *l, double net_gbs,
                          cp_group_cache *cache, unsigned mask, cp_err *e);

void cp_groups_free(cp_groups *G);

/* The machine of group kind k of layout l (resolved) on machine t: the
 * group's GPUs of one host with their share of its NICs, the CXL pool's
 * ports and devices divided as every group of the machine shares them
 * (eq. L8), replicated over the hosts the group spans (one host: not
 * replicated).  What `plan` with a layout plans on and `simulate` replays
 * on.  CP_EINPUT for a group of one GPU, one spread unevenly, or one whose
 * GPUs cannot reach each other; *out owned by the caller. */
int cp_groups_machine(const cp_topo *t, const cp_layout *l, cp_group_kind k, double net_gbs,
                      cp_topo **out, cp_err *e);

/* Time in us of collective `op` (AR, RS, AG; P2P: a send of `bytes` between
 * the pair, as a two-rank broadcast) on a `bytes` buffer in group k,
 * algorithm `alg` or, with CP_ALGS, what NCCL's tuner picks (*used when
 * not NULL).  0 for a group of one; negative when alg cannot run. */
double cp_groups_us(const cp_groups *G, cp_group_kind k, cp_comm_kind op, double bytes,
                    cp_coll_alg alg, cp_coll_alg *used);

/* Time in us of `op` (AR, RS, AG) on a `bytes` buffer in group k through
 * the machine's CXL pool (eq. L8); negative when the machine has none, 0
 * for a group of one.  Thread-safe. */
double cp_groups_pool_us(const cp_groups *G, cp_group_kind k, cp_comm_kind op, double bytes);

/* The collective model of group k (NULL for a group of one GPU), and its
 * machine. */
const cp_coll *cp_groups_coll(const cp_groups *G, cp_group_kind k);
const cp_group_model *cp_groups_model(const cp_groups *G, cp_group_kind k);

#endif
