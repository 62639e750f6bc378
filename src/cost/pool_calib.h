/*
 * pool_calib.h - fitting calibration.pool (the busier copy-engine stream's
 * rate and the fixed cost of one of its copies) to a measured
 * nccl-tests-layout table of one operation run through a CXL pool
 * (docs/pool.md, "Defaults and calibration").
 */
#ifndef CP_POOL_CALIB_H
#define CP_POOL_CALIB_H

#include "cost/pool.h"
#include "load/nccltests.h"

typedef struct cp_pool_fit {
    cp_xop op;
    int read_side;          /* 1: the pulling stream (copy_read_gbs, chunk_read_us) was
                             * fitted, 0: the publishing one (copy_gbs, chunk_us) */
    int rate_fitted;        /* 0: every copy's path (a link, the device) is slower than
                             * the engine: its rate cannot be seen and is kept */
    cp_pool_res bind;       /* what binds the largest size after the fit */
    double rate_before, rate_after;   /* GB/s */
    double chunk_before, chunk_after; /* us */
    double rms_error;       /* root mean square relative error after the fit */
    double *pred_us;        /* [nrows] predictions after the fit, owned */
} cp_pool_fit;

/* Fit t->calib.pool (modified in place) to `tab` for `op`; `c` (borrowed,
 * may be NULL: every operation flat) the network's model of t, for the
 * in-host phases on hosts of several GPUs (eq. PL7).  CP_EINPUT when the
 * topology has no pool or the table has fewer than two rows. */
int cp_pool_calibrate(cp_topo *t, const cp_coll *c, const cp_nccl_table *tab, cp_xop op,
                      cp_pool_fit *f, cp_err *e);

void cp_pool_fit_free(cp_pool_fit *f);

#endif
