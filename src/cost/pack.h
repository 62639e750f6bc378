/*
 * pack.h - packing communication patterns onto link capacities.
 *
 * A pattern is one channel of a collective algorithm: a ring of GPUs, a
 * chain, a tree with its network attachments.  Running it at a rate of x GB/s
 * puts use[a] x x GB/s on each arc a it touches (use counts how many of the
 * pattern's hops cross the arc, weighted by route shares).  Packing chooses
 * rates for all candidate patterns to maximise their sum without exceeding
 * any arc's effective capacity: an LP, solved with GLPK (lp.h), in the spirit
 * of Blink's spanning-tree packing.  NCCL instead searches for a few rings
 * greedily and gives each the same bandwidth; docs/collectives.md compares.
 *
 * The LP's duals name the binding arcs: one more GB/s on arc a raises the
 * packed rate by dual[a] GB/s.
 *
 * Ownership: patterns own their arrays (one block, from `use`); cp_pattern_free
 * releases one.
 * A cp_packing owns its arrays; cp_packing_free releases them.
 */
#ifndef CP_PACK_H
#define CP_PACK_H

#include "paths/route.h"

typedef struct cp_pattern {
    int nuse;          /* arcs touched */
    int *arc;          /* arc ids, distinct */
    double *use;       /* load per unit rate on each */
    int ngpus;         /* GPUs in visiting order (rings, chains) */
    int *gpu;          /* node ids */
    double lat_us;     /* latency of one traversal of the pattern (sum of hop latencies) */
} cp_pattern;

/* Resources a pattern may load: arcs 0 .. 2 nlinks - 1 (link directions),
 * then one per node, 2 nlinks + v, for node v's reduction rate (memory
 * devices, CPUs, NVSwitches summing incoming data at reduce_gbs). */
#define CP_NRES(t) (2 * (t)->nlinks + (t)->nnodes)

/* Capacity of a resource in GB/s: effective link bandwidth, or reduce_gbs. */
double cp_res_cap(const cp_topo *t, int res);

/* Release a pattern's arrays (not the struct). */
void cp_pattern_free(cp_pattern *p);

/* Build a pattern from per-arc loads (dense vector over 2 x nlinks arcs,
 * zero entries skipped) and a GPU order (copied). */
int cp_pattern_from_load(const cp_topo *t, const double *load, const int *gpus, int ngpus,
                         double lat_us, cp_pattern *p);

/* The same over the first `nres` resources of `load` (up to CP_NRES). */
int cp_pattern_from_res(const cp_topo *t, const double *load, int nres, const int *gpus,
                        int ngpus, double lat_us, cp_pattern *p);

typedef struct cp_packing {
    int npat;          /* patterns offered */
    double *rate;      /* [npat] GB/s given to each */
    double total;      /* sum of rates */
    int nbind;         /* resources whose capacity binds */
    int *bind_arc;     /* their ids (arcs, or 2 nlinks + node for reducers) */
    double *bind_dual; /* GB/s of total rate per GB/s of extra capacity */
    int lp_iterations; /* simplex iterations (0 when solved in closed form) */
} cp_packing;

/* Pack `n` patterns.  One pattern is solved in closed form (the tightest
 * arc); several go to the LP.  CP_EINPUT when no pattern can run (all rates
 * zero), CP_EINTERNAL on solver failure. */
int cp_pack(const cp_topo *t, const cp_pattern *pats, int n, cp_packing *out, cp_err *e);

void cp_packing_free(cp_packing *pk);

#endif
