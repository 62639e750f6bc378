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
 * All fits minimise squared relative error; the launch cost is held fixed
 * (a CUDA kernel launch, multiplied by the GPUs one thread drives, which the
 * table's header gives).  Three rounds let the binding set settle.
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
    double *pred_us;             /* [nrows] predictions after the fit, owned */
    cp_proto *proto;             /* [nrows] protocol of each prediction, owned */
} cp_fit;

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
