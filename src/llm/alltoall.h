/*
 * alltoall.h - the expert-parallel all-to-all of a mixture-of-experts
 * layout (dispatch and combine), priced on the links the EP group really
 * crosses (docs/model.md eq. E7, E8).
 *
 * Every pair of the group's GPUs sends its piece at once over the widest
 * route between them (NCCL's point-to-point transport, cost/p2p.h): NVLink
 * inside a host, PCIe, the NIC and the network between hosts.  A group of
 * H hosts of G GPUs is priced on a window of two hosts (the group's host,
 * its NIC share, replicated twice: groups.h), where each GPU has G peers
 * across the network against (H - 1) G in the group: the arcs' loads from
 * pairs across hosts are scaled by H - 1, those inside a host are not, so
 * every NIC carries what it carries in the whole group.  The time is the
 * call's launch, the slowest pair's latency and the most loaded arc's bytes
 * over its rate (eq. E7).
 *
 * Where the group's hosts share a CXL pool, the all-to-all can instead go
 * through the pool as the pool runs it (cost/pool.h, every GPU publishing
 * its pieces and pulling the others'), priced on the group's H hosts
 * sharing the pool (eq. E8).
 *
 * Ownership: a cp_a2a owns its route tables, its H-host pool machine and
 * the pool's model (cp_a2a_free); it borrows the group's host and window
 * topologies, which must outlive it.
 */
#ifndef CP_LLM_ALLTOALL_H
#define CP_LLM_ALLTOALL_H

#include <pthread.h>

#include "cost/p2p.h"

/* What an all-to-all's time comes from: the path, the binding resource
 * ("nvlink", "pcie", "network", or a pool resource), in us. */
typedef struct cp_a2a_why {
    const char *path;     /* "nvlink" (one host), "network", "pool" */
    const char *bind;     /* the binding link kind or pool resource */
    double launch_us, lat_us, wire_us;
} cp_a2a_why;

/* One priced all-to-all, remembered: the search asks the same sizes of
 * every layout that shares a micro-batch and a model. */
typedef struct cp_a2a_memo {
    int pool;              /* 1: cp_a2a_pool_us(a = bytes); 0: cp_a2a_net_us(a = same, b = cross) */
    double a, b, us;
    cp_a2a_why why;
} cp_a2a_memo;

enum { CP_A2A_MEMO = 16 };

typedef struct cp_a2a {
    int hosts, local;      /* the group: `hosts` hosts of `local` GPUs */
    const cp_topo *net;    /* borrowed: the two-host window, or the host when hosts == 1 */
    cp_p2p p2p;            /* routes among net's GPUs */
    double *load;          /* [arcs] scratch */
    int have_pool;
    cp_topo *pool_topo;    /* owned: the group host replicated over `hosts` (the pool shared) */
    cp_pool pool;
    pthread_mutex_t mu;    /* the scratch, the pool's and the memo: one a2a serves every pricing thread */
    int have_mu;
    cp_a2a_memo memo[CP_A2A_MEMO]; /* the last answers, a ring */
    int nmemo;             /* answers ever stored; the next goes to nmemo % CP_A2A_MEMO */
} cp_a2a;

/* Build the all-to-all of a group of `hosts` hosts of `local` GPUs: host
 * is the group's one-host machine, window its two-host replica (NULL when
 * hosts == 1).  The pool is modelled when the host has one and the group
 * spans hosts.  CP_EINTERNAL out of memory; CP_EINPUT when routes fail. */
int cp_a2a_build(cp_a2a *a, const cp_topo *host, const cp_topo *window, int hosts, int local,
                 cp_err *e);

void cp_a2a_free(cp_a2a *a);

/* Time in us of an all-to-all over the links (eq. E7) in which every GPU
 * sends `same` bytes to each other GPU of its host and `cross` bytes to
 * each GPU of each other host; *why when not NULL.  Thread-safe (the
 * scratch is taken under a->mu). */
double cp_a2a_net_us(cp_a2a *a, double same, double cross, cp_a2a_why *why);

/* Time in us of an all-to-all of `bytes` a GPU (nccl-tests' size: its
 * whole send buffer, bytes / n to each rank) through the pool (eq. E8);
 * negative when the group has no pool.  *why when not NULL. */
double cp_a2a_pool_us(cp_a2a *a, double bytes, cp_a2a_why *why);

#endif
