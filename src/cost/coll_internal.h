/*
 * coll_internal.h - what the collective model's algorithm families share
 * (private to src/cost/: collective.c and the family files include it).
 *
 * cp_coll_build (collective.c) fills one coll_build context: the window
 * topology (the machine, or two of its hosts), each window host's GPUs and
 * NICs, the routes among host 0's GPUs and each GPU's nearest NICs
 * (coll_ctx.c).  It then runs the family builders of its table in order;
 * each fills the cp_alg_cost entries of its algorithm and leaves in the
 * context what later families reuse:
 *
 *     rings.c   ring search and packing (b->rings, b->ringpat, b->intra),
 *               the ring algorithm on one host and across hosts
 *     tree.c    NCCL's tree (chains of the packed rings, double binary
 *               tree across hosts)
 *     hier.c    the ring of peers across hosts (b->peers) and the
 *               hierarchical AllReduce built on it
 *     nvls.c    NVLS in-switch reduction and CollNet in-network reduction
 *     ps.c      the parameter server in CPU memory and the host-copy rates
 *               of optimizer offload
 *
 * A builder returns CP_OK (also when its algorithm does not apply: it then
 * says why in why_not, through coll_unavailable) or an error filled in b->e.
 *
 * Ownership: everything the context points to is the context's, released
 * by coll_build_free, except c (the model being built) and e (borrowed).
 */
#ifndef CP_COLL_INTERNAL_H
#define CP_COLL_INTERNAL_H

#include <string.h>

#include "cost/pack.h"
#include "paths/route.h"

/* The public types by their tags: collective.c includes this header, so it
 * does not include collective.h (tools/include-cycles.sh); the family files
 * include both. */
struct cp_coll;
struct cp_phase;

typedef struct coll_build {
    struct cp_coll *c;    /* the model being built */
    const cp_topo *win;   /* window topology: the machine, or two of its hosts */
    cp_topo *win_owned;   /* set when we made the window */
    int H, Hw, n, N;      /* real hosts, window hosts, GPUs per host, ranks */
    int H_given;          /* > 0: the window stands for this many hosts (cp_coll_build_hosts) */
    int *g;               /* [Hw * n] node id of rank k on window host h */
    int *nic;             /* [Hw * nn] node id of NIC i on window host h */
    int nn;               /* NICs per host */
    int *near_off;        /* [n + 1] rank k's nearest NICs: near[near_off[k] ..] */
    int *near;            /* NIC indices (0 .. nn-1) of equal best route bandwidth */
    cp_route *R;          /* [n * n] routes among host 0's GPUs */
    int *rings;           /* [nrings * n] candidate ring orders (ranks) */
    int nrings;
    cp_pattern *ringpat;  /* [nrings] one-host ring patterns */
    cp_packing intra;     /* packing of one-host rings */
    double intra_lat;     /* traversal latency of the slowest used ring */
    cp_packing peers;     /* several hosts: the ring of peers across hosts (hier.c) ... */
    double peer_hop_us;   /* ... the latency of its slowest hop ... */
    double peer_simple_us; /* ... and Simple's per-step cost on it */
    double *load;         /* scratch per-arc vector */
    cp_err *e;
} coll_build;

/* ---------------------------------------------------------------- context (coll_ctx.c) */

static inline int coll_oom(coll_build *b)
{
    return cp_fail(b->e, CP_EINTERNAL, "out of memory");
}

/* The route from rank `from` to rank `to` of host 0 (gbs 0: none). */
static inline const cp_route *coll_r0(const coll_build *b, int from, int to)
{
    return &b->R[from * b->n + to];
}

static inline void coll_clear_load(coll_build *b)
{
    memset(b->load, 0, (size_t)2 * b->win->nlinks * sizeof *b->load);
}

/* Add the route between two nodes (any hosts of the window) to the load;
 * returns its hop latency, -1 when there is no route, -2 out of memory. */
static inline double coll_add_route(coll_build *b, int from, int to, double scale)
{
    return cp_route_load(b->win, from, to, scale, b->load);
}

int coll_make_window(coll_build *b, const cp_topo *t);
int coll_collect_gpus(coll_build *b, const cp_topo *t);
int coll_build_routes(coll_build *b);
int coll_find_near_nics(coll_build *b);
void coll_build_free(coll_build *b);

/* The route from GPU e of host hf through its NIC a to NIC c and GPU s of
 * host ht, added to the load; its latency, -1 without a route, -2 out of
 * memory. */
double coll_add_inter(coll_build *b, int hf, int e, int a, int ht, int s, int c, double scale);
int coll_make_pattern(coll_build *b, const int *order, int len, double lat, cp_pattern *p);
void coll_chain_of(const coll_build *b, const int *order, int j, int *chain);
double coll_chain_lat(const coll_build *b, const int *chain, int n);
void coll_free_patterns(cp_pattern *p, int n);
int coll_nic_choices(const coll_build *b, int k, const int **list, int *count);

double coll_simple_step(const coll_build *b, const cp_pattern *p, int npat,
                        const cp_packing *pk);
void coll_set_phase(struct cp_phase *ph, const char *label, double lat, double simple,
                    double factor, double bw, int steps, const cp_packing *pk);
/* alg: a cp_coll_alg; every operation of it not available gets `why`. */
void coll_unavailable(struct cp_coll *c, int alg, const char *why);

/* ---------------------------------------------------------------- families, in build order */

int coll_ring_build(coll_build *b);        /* rings.c: first, every later family reuses its rings */
int coll_tree_build(coll_build *b);        /* tree.c */
int coll_peers_build(coll_build *b);       /* hier.c: b->peers, before nvls, hier and collnet */
int coll_nvls_build(coll_build *b);        /* nvls.c */
int coll_hier_build(coll_build *b);        /* hier.c */
int coll_collnet_build(coll_build *b);     /* nvls.c */
int coll_ps_build(coll_build *b);          /* ps.c */
int coll_host_memory_build(coll_build *b); /* ps.c: cp_coll.d2h_gbs ... */
int coll_ll128_build(coll_build *b);       /* ll128.c: on the phases of ring and tree */
int coll_nccl_size_build(coll_build *b);   /* nccl_size.c: last, NCCL's sizing of each call */

#endif
