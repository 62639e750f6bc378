/*
 * p2p.h - the network's side of the operations NCCL builds from
 * point-to-point sends (Gather, Scatter, AlltoAll, as nccl-tests runs them
 * with ncclSend/ncclRecv) and of Reduce (NCCL's ring), so that the pool
 * (pool.h) can be compared with the network size by size (docs/pool.md,
 * "The network's side").
 *
 * Every pair's bytes take the widest route between the two GPUs (the
 * route NCCL's p2p transport would take); all pairs send at once, so the
 * time is the call's launch, the slowest pair's latency, and the most
 * loaded arc's bytes over its effective rate.
 *
 * Ownership: a cp_p2p owns its arrays (cp_p2p_free) and borrows the
 * topology.
 */
#ifndef CP_P2P_H
#define CP_P2P_H

#include "cost/pool.h"

typedef struct cp_p2p {
    const cp_topo *topo;  /* borrowed */
    int nranks;
    int *route_off;       /* [n * n + 1]: arcs of the route from GPU i to GPU j ... */
    int *route_arc;       /* ... at route_arc[route_off[i * n + j] ..) */
    double *lat_us;       /* [n * n] latency of that route: hardware + the slowest kind's
                           * step_us + simple_us (p2p runs NCCL's Simple protocol) */
    double *load;         /* [arcs] scratch */
    double launch_us;
} cp_p2p;

int cp_p2p_build(const cp_topo *t, cp_p2p *p, cp_err *e);
void cp_p2p_free(cp_p2p *p);

/* Time in us of Gather, Scatter or AlltoAll on `bytes` (nccl-tests' size:
 * the whole gathered or scattered buffer, each pair's piece bytes / n),
 * root rank 0; *bind_arc (when not NULL) the most loaded arc, -1 none.
 * Negative for other operations.  Not thread-safe (scratch). */
double cp_p2p_time_us(cp_p2p *p, cp_xop op, double bytes, int *bind_arc);

/* The network's time of any of the eight operations: NCCL's four through
 * the collective model (its tuner's choice, *alg), Reduce as NCCL's ring
 * (a chain like Broadcast's, in reverse: cp_coll's Broadcast ring), the
 * others through p2p.  Negative when unavailable. */
double cp_net_time_us(const cp_coll *c, cp_p2p *p, cp_xop op, double bytes, const char **alg);

#endif
