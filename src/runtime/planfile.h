/*
 * planfile.h - the plan-file loader behind include/coarse_plan.h, with the
 * project's error record so that `coarse-plan check` can report positions.
 *
 * Validation (docs/plan-format.md): the format version, strict keys, byte
 * ranges (tensors tile each bucket from offset 0; routes tile it too),
 * positive shards, known route kinds, tensor names unique and as many as the
 * plan says, route orders a permutation of 0 .. routes-1, and the wait-for
 * graph of GPUs and devices acyclic (deadlock.h).
 */
#ifndef CP_PLANFILE_H
#define CP_PLANFILE_H

#include "coarse_plan.h"
#include "core/jsondoc.h"

/* Load and validate the plan in document d (which the plan takes over:
 * d is emptied).  On error *out is NULL and e says where. */
int cp_planfile_load_doc(cp_jdoc *d, cpl_plan **out, cp_err *e);

/* Read, parse and load `path`. */
int cp_planfile_load(const char *path, cpl_plan **out, cp_err *e);

/* Internal accessors for the simulator (not part of the public API). */
double cp_planfile_compute_ms(const cpl_plan *p);       /* predicted.compute_ms */
double cp_planfile_tail_ms(const cpl_plan *p);          /* predicted.tail_ms, 0 if absent */
double cp_planfile_need_ms(const cpl_plan *p, size_t bucket);
const char *cp_planfile_topo_file(const cpl_plan *p);   /* topology.file, or NULL */
const char *cp_planfile_topo_hash(const cpl_plan *p);   /* topology.hash, or NULL */

/* Totals for a summary line. */
size_t cpl_route_count(const cpl_plan *p);
size_t cpl_tensor_count(const cpl_plan *p);

#endif
