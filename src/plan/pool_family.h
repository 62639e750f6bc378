/*
 * pool_family.h - the planner's `pool` route family: a bucket's bytes
 * all-reduced through the machine's shared CXL pool (cost/pool.h), on
 * hosts of several GPUs in the hierarchical form (reduce-scatter inside
 * each host, the pool across hosts, all-gather inside: docs/pool.md eq.
 * PL7), so that the LP can split each bucket between the network's
 * collectives and the pool (docs/planner.md, "Across hosts").
 */
#ifndef CP_POOL_FAMILY_H
#define CP_POOL_FAMILY_H

#include "plan/families.h"

/* Fill fs->f[CP_FAM_POOL] (available only with a pool and several GPUs):
 * its rate and latency from the pool model's line between 64 MiB and
 * 1 GiB, its per-byte loads on the pool's links (`load`: CP_NRES scratch),
 * the pool's devices; builds fs->pool (owned by fs). */
int cp_pool_family_build(const cp_topo *t, const cp_coll *c, cp_families *fs, double *load,
                         cp_err *e);

/* Time in us of the pool family on a bucket of `bytes`: the pool model's. */
double cp_pool_family_time_us(const cp_families *fs, double bytes);

#endif
