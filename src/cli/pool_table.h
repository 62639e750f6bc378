/*
 * pool_table.h - `collective -a pool` and `-o reduce|gather|scatter|alltoall`
 * (pool_table.c), called by cmd_collective.c with its parsed options.
 */
#ifndef CP_POOL_TABLE_H
#define CP_POOL_TABLE_H

#include <stdint.h>

#include <jansson.h>

#include "cost/pool_calib.h"
#include "predict/memory.h"
#include "predict/predict.h"

typedef struct cli_xopts {
    const char *topo;
    int hosts, gpus, gpt;
    int op;               /* a cp_xop */
    int pool;             /* 1: -a pool */
    int ring;             /* 1: -a ring with -o reduce */
    int json, explain;
    int64_t minb, maxb;
    long factor;
    int typesize;
} cli_xopts;

/* Run the command; the exit status (errors already reported). */
int cli_xcollective(const cli_xopts *o);

/* predict --what-if on a machine with a pool (nothing otherwise): the
 * largest operation of `s`'s run through the pool against the network
 * (auto), the resource that binds the pool, and the iteration of strategy
 * pool with its copy engines, its devices and its links twice as fast. */
int cli_pool_whatif(const cp_model *m, const cp_topo *t, const cp_predict_opts *po,
                    cp_err *e);

/* predict with --offload pool (nothing otherwise): what the pool holds per
 * GPU and in all, against the pool's capacity, and the model states per
 * GPU without the offload, whether they fit. */
int cli_pool_memory_note(const cp_predictor *pr, const cp_predict_opts *o, const cp_mem *mem,
                         cp_err *e);

/* What binds the pool at the largest operation of the pool strategy's run
 * under `o` ("copy engine (read)", "host link", "device", ...), "" when the
 * strategy cannot run here; a static string. */
int cli_pool_binding(const cp_predictor *pr, const cp_predict_opts *o, const char **name,
                     cp_err *e);

/* "22.5 GB/s (switch port cxlsw -> mem0)": the rate of GPU 0's copy to
 * device 0, publishing (write 1) or pulling, and what limits it (the
 * copy engine, a link direction, the device's memory). */
void cli_pool_copy_limit(const cp_pool *p, int write, char *buf, size_t cap);

/* calibrate -a pool: add calibration.pool to a calibration block `obj` when
 * any of its figures is set. */
void cli_pool_calib_json(json_t *obj, const cp_calib_pool *p);

/* calibrate -a pool: print the fit and every row (or JSON with `json`). */
int cli_print_pool_fit(const cp_topo *t, const cp_nccl_table *tab, const cp_pool_fit *f,
                       const char *table, int json, cp_err *e);

#endif
