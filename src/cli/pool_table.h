/*
 * pool_table.h - `collective -a pool` and `-o reduce|gather|scatter|alltoall`
 * (pool_table.c), called by cmd_collective.c with its parsed options.
 */
#ifndef CP_POOL_TABLE_H
#define CP_POOL_TABLE_H

#include <stdint.h>

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

#endif
