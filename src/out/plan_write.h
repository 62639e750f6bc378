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

/* Input files as the plan records them. */
typedef struct cp_plan_inputs {
    const char *model_path, *topo_path;
    unsigned long long model_hash, topo_hash; /* cp_hash64 of the file contents */
} cp_plan_inputs;

/* The plan as a JSON object (new reference), or NULL when out of memory. */
json_t *cp_plan_to_json(const cp_plan *p, const cp_plan_inputs *in);

/* Check that the plan's processing orders cannot deadlock (deadlock.h). */
int cp_plan_check_waits(const cp_plan *p, cp_err *e);

#endif
