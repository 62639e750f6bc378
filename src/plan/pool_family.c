/*
 * pool_family.c - the `pool` route family of the planner (declared in
 * families.h).  Its time is the pool model's own (not a line: chunk
 * counts step with size); its footprint, for the sharing groups (eq. Q3),
 * the simulator and --explain, is the pool model's arc loads per byte of
 * bucket at a large size, where the fixed costs no longer count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/families.h"

/* Sizes the family's line is taken between: large enough that the pool's
 * fixed costs are a few percent of the bandwidth term on every shipped pod. */
#define LINE_LO_BYTES 67108864.0
#define LINE_HI_BYTES 1073741824.0

double cp_pool_family_time_us(const cp_families *fs, double bytes)
{
    return fs->pool ? cp_pool_time_us(fs->pool, CP_XOP_ALLREDUCE, bytes, NULL) : -1;
}

int cp_pool_family_build(const cp_topo *t, const cp_coll *c, cp_families *fs, double *load,
                         cp_err *e)
{
    cp_family *f = &fs->f[CP_FAM_POOL];
    double lo, hi;
    int k, rc;
    if (!cp_pool_present(t) || t->ngpus < 2) {
        snprintf(f->why_not, sizeof f->why_not, "%s",
                 t->ngpus < 2 ? "one GPU: nothing to synchronise"
                              : "the topology has no CXL pool (no cxl_switch, no pool block)");
        return CP_OK;
    }
    if (!(fs->pool = malloc(sizeof *fs->pool)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = cp_pool_build(t, c, fs->pool, e))) {
        free(fs->pool);
        fs->pool = NULL;
        return rc;
    }
    /* a plan names every device its pool routes interleave over, and the
     * pool model spreads the bytes over all of them: past CP_FAM_MAX_DEV
     * the plan would name fewer than it was priced on (issue 24, item 4) */
    if (fs->pool->ndev > CP_FAM_MAX_DEV) {
        const cp_node *n = &t->nodes[fs->pool->dev[CP_FAM_MAX_DEV]];
        return cp_fail_at(e, CP_EINPUT, t->src_path, n->src_line, 0, NULL,
                          "the CXL pool has %d memory devices (%s is the %dth); a plan "
                          "routes through at most %d: give the pool %d devices or fewer",
                          fs->pool->ndev, n->id, CP_FAM_MAX_DEV + 1, CP_FAM_MAX_DEV,
                          CP_FAM_MAX_DEV);
    }
    lo = cp_pool_time_us(fs->pool, CP_XOP_ALLREDUCE, LINE_LO_BYTES, NULL);
    hi = cp_pool_time_us(fs->pool, CP_XOP_ALLREDUCE, LINE_HI_BYTES, NULL);
    f->gbs = (LINE_HI_BYTES - LINE_LO_BYTES) / ((hi - lo) * 1e3);
    f->lat_us = lo - LINE_LO_BYTES / (f->gbs * 1e3);
    if (f->lat_us < 0)
        f->lat_us = 0;
    /* the loads of the pool's part at the large size, per byte of bucket,
     * times GB/s: GB/s on each arc per GB/s of bucket */
    memset(load, 0, (size_t)CP_NRES(t) * sizeof *load);
    for (k = 0; k < 2 * t->nlinks; k++)
        load[k] = fs->pool->load[k] / LINE_HI_BYTES;
    f->ndev = fs->pool->ndev;
    for (k = 0; k < f->ndev; k++) {
        f->dev[k] = fs->pool->dev[k];
        f->share[k] = 1.0 / fs->pool->ndev;
    }
    f->available = 1;
    return cp_pattern_from_res(t, load, CP_NRES(t), NULL, 0, f->lat_us, &f->load) ? CP_EINTERNAL
                                                                                  : CP_OK;
}
