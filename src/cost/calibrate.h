/*
 * calibrate.h - fitting a topology's calibration block to a measured
 * nccl-tests table.
 *
 * Three numbers are fitted, each for one link kind (docs/calibration.md):
 *   bw_eff of the kind whose links bind the algorithm's bandwidth, and
 *   simple_us (NCCL Simple protocol's cost per step) of the kind whose steps
 *     are slowest (the network across hosts, else the binding kind), from
 *     one line through the largest sizes (the top six octaves of the table);
 *   step_us of that kind from the smallest sizes (times within 20% of the
 *     table's minimum), where NCCL runs LL.
 * These line fits minimise squared relative error; three rounds let the
 * binding set settle.  They start the refinement: the whole model (NCCL's
 * channels per size, its protocol choice, LL's stall and cap, the issue
 * bound) against every row from 1 KB, minimising the largest relative error
 * plus the root-mean-square one over the same parameters, with, when one
 * thread drives several GPUs (the table's header), the launch cost (which
 * bounds how fast the calls come), and across hosts the network's LL
 * efficiency ll_eff.
 */
#ifndef CP_CALIBRATE_H
#define CP_CALIBRATE_H

#include "core/progress.h"
#include "cost/collective.h"
#include "load/nccltests.h"

typedef struct cp_fit {
    cp_coll_alg alg;             /* algorithm fitted */
    cp_link_kind bw_kind;        /* kind whose bw_eff was fitted */
    double bw_eff_before, bw_eff_after;
    int bw_clamped;              /* the fit asked for more than nominal */
    cp_link_kind lat_kind;       /* kind whose step_us was fitted */
    double step_before, step_after;
    int step_clamped;            /* the fit asked for a negative step */
    double simple_before, simple_after; /* lat_kind's simple_us */
    int simple_clamped;          /* the fit asked for a negative Simple step */
    int simple_below_other;      /* another kind's simple_us is larger and sets the pace */
    int simple_fitted;           /* 0: one size in the top octaves, simple_us kept */
    int nbw_rows, nlat_rows;     /* rows used for each fit */
    /* the refinement over every row from CP_FIT_MIN_BYTES (docs/calibration.md) */
    int fit_launch;              /* launch_us fitted (several GPUs per thread: the issue bound) */
    double launch_before, launch_after;
    int fit_ll;                  /* the network's ll_eff fitted (several hosts) */
    double ll_before, ll_after;
    int nfit_rows;               /* rows the refinement weighs */
    double max_err, median_err;  /* |relative error| over them, after */
    double *pred_us;             /* [nrows] predictions after the fit, owned */
    cp_proto *proto;             /* [nrows] protocol of each prediction, owned */
} cp_fit;

/* Rows the refinement weighs: from 1 KB up (the acceptance of issue 25:
 * below it every table is flat, the launch and the first step). */
#define CP_FIT_MIN_BYTES 1024.0

/* Fit t->calib (modified in place) to `tab` for `op` with `alg` (ring when
 * negative).  CP_EINPUT when the table cannot constrain the model. */
int cp_calibrate(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, int alg, cp_fit *fit,
                 cp_err *e);

/* cp_calibrate, telling `progress` (may be NULL) each of its steps done:
 * the three fitting rounds and the predictions of the table's rows. */
int cp_calibrate_progress(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, int alg,
                          cp_fit *fit, const cp_progress *progress, cp_err *e);

void cp_fit_free(cp_fit *f);

#endif
