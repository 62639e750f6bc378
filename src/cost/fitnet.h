/*
 * fitnet.h - the two hand-held fits of docs/calibration.md redone by code:
 * `nvls_eff` (H100 NVLS, the one-node rows of the p5 nccl-tests table) and
 * the `efa-2024` network fabric (its bw_eff and simple_us, the two-node
 * rows).  `make calibration` prints them (tools/fit-net.c) and
 * tests/unit/test_calibrate.c refits them from the rows and compares with
 * what is shipped.
 */
#ifndef CP_FITNET_H
#define CP_FITNET_H

#include "core/err.h"
#include "topo/topo.h"

/* One all_reduce_perf row: size in bytes, out-of-place time in us. */
typedef struct cp_fitnet_row {
    double bytes, us;
} cp_fitnet_row;

/* The rows of `nodes` nodes of a p5-style CSV (`nodes,bytes,time_us,
 * busbw_gbs`, '#' comments) into *rows (malloc'd, *n of them). */
int cp_fitnet_load(const char *path, int nodes, cp_fitnet_row **rows, int *n, cp_err *e);

/* nvls_eff: the minimax fit (least worst relative error) of NVLS
 * AllReduce on one host of t (its other calibration kept) to the rows;
 * *worst the largest |predicted / measured - 1|. */
int cp_fitnet_nvls_eff(cp_topo *t, const cp_fitnet_row *rows, int n, double *eff, double *worst,
                       cp_err *e);

/* The network of t over `hosts` hosts: bw_eff the largest row's algorithm
 * bandwidth over the host's NIC line rate, rounded up to 0.01 (a bound: the
 * in-host NVLS binds there); then simple_us, the minimax fit of the
 * default algorithm's AllReduce to every row with that bw_eff and t's
 * step_us.  *worst as above. */
int cp_fitnet_net(cp_topo *t, int hosts, const cp_fitnet_row *rows, int n, double *bw_eff,
                  double *simple_us, double *worst, cp_err *e);

#endif
