/*
 * nccl_tuner.h - the collective model's choices as rules for NCCL's example
 * tuner plugin (`NCCL_TUNER_PLUGIN`, `NCCL_TUNER_CONFIG_FILE`; format in
 * docs/nccl-tuner.md and ../shared/data/nccl-tests/NOTES.md):
 *
 *     collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks
 *
 * For each collective the model covers (allreduce, reducescatter, allgather,
 * broadcast), the size ranges over which the model's best NCCL algorithm
 * and protocol stay the same (cp_coll_best, then the faster protocol), as
 * inclusive [min_bytes, max_bytes] ranges that tile 0 .. 2^64 - 1, each with
 * the channel count its packing used (never -1: the example would fall back
 * to one channel) and the machine's nodes and ranks.
 *
 * Ownership: cp_tuner_rules fills an array the caller frees with free().
 */
#ifndef CP_NCCL_TUNER_H
#define CP_NCCL_TUNER_H

#include <stdint.h>

#include "core/err.h"
#include "cost/collective.h"

typedef struct cp_tuner_rule {
    cp_coll_op op;
    uint64_t min_bytes, max_bytes; /* inclusive */
    cp_coll_alg alg;
    cp_proto proto;
    int channels;
} cp_tuner_rule;

/* NCCL's names: "allreduce" ...; "ring", "tree", "nvls", "nvls_tree",
 * "collnet_direct"; "ll", "simple". */
const char *cp_tuner_alg_name(const cp_coll *c, cp_coll_alg alg);
const char *cp_tuner_proto_name(cp_proto p);

/* The rules of every collective with an available NCCL algorithm, in op
 * order then size order; *out is new (free()), *n its length. */
int cp_tuner_rules(const cp_coll *c, cp_tuner_rule **out, int *n, cp_err *e);

/* Write the configuration to `path` atomically ("-": standard output),
 * with a comment header naming the topology and its calibration; *nrules
 * gets the number of rules when not NULL. */
int cp_tuner_write(const cp_coll *c, const char *path, int *nrules, cp_err *e);

#endif
