/*
 * pool_table.h - `collective -a pool` and `-o reduce|gather|scatter|alltoall`
 * (pool_table.c), called by cmd_collective.c with its parsed options.
 */
#ifndef CP_POOL_TABLE_H
#define CP_POOL_TABLE_H

#include <stdint.h>

#include <jansson.h>

#include "cost/pool_calib.h"

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

/* calibrate -a pool: add calibration.pool to a calibration block `obj` when
 * any of its figures is set. */
void cli_pool_calib_json(json_t *obj, const cp_calib_pool *p);

/* calibrate -a pool: print the fit and every row (or JSON with `json`). */
int cli_print_pool_fit(const cp_topo *t, const cp_nccl_table *tab, const cp_pool_fit *f,
                       const char *table, int json, cp_err *e);

#endif
