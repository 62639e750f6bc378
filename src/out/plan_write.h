/*
 * plan_write.h - the versioned plan file ("format": "coarse-plan/1") a
 * runtime loads (docs/plan-format.md).
 *
 * The plan records where it came from (input names and content hashes), the
 * predicted times, the split layer, and for every bucket its tensors (name,
 * byte offset, length) and routes (kind, algorithm, devices, byte range,
 * shards, global order).  Every GPU and proxy processes routes in increasing
 * `order`; proxies keep one queue per client.
 */
#ifndef CP_PLAN_WRITE_H
#define CP_PLAN_WRITE_H

#include <jansson.h>
#include <stdio.h>

#include "plan/planner.h"

/* The large-model layout a plan was made for (`plan --tp ...`): the plan
 * synchronises one pipeline stage's gradients over that stage's
 * data-parallel group (docs/plan-format.md, "layout"). */
typedef struct cp_plan_layout {
    const char *framework;      /* "megatron", "fsdp", "deepspeed" */
    int tp, pp, vp, cp, dp, mbs, gbs;
    long long seq;
    int stage;                  /* the stage planned */
    const char *group;          /* "dp" or "dp-cp": the group that synchronises it */
    int group_gpus, group_hosts;
    long long params;           /* the stage's parameters on one GPU */
    double bucket_params;       /* one full gradient bucket, parameters */
    double net_gbs;             /* --net-gbs given, 0 when not */
    double iteration_ms;        /* predict's iteration of the layout (strategy auto) */
} cp_plan_layout;

/* Input files as the plan records them. */
typedef struct cp_plan_inputs {
    const char *model_path, *topo_path;
    unsigned long long model_hash, topo_hash; /* cp_hash64 of the file contents */
    const cp_plan_layout *layout;              /* NULL: a data-parallel plan */
} cp_plan_inputs;

/* The plan as a JSON object (new reference), or NULL when out of memory. */
json_t *cp_plan_to_json(const cp_plan *p, const cp_plan_inputs *in);

/* Check that the plan's processing orders cannot deadlock (deadlock.h). */
int cp_plan_check_waits(const cp_plan *p, cp_err *e);

#endif
