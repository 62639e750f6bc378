/*
 * summary.h - one-line and multi-line human summaries of models and
 * topologies, shared by `check` and `info`.
 */
#ifndef CP_SUMMARY_H
#define CP_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "model/model.h"
#include "topo/topo.h"

/* "model NAME: T tensors, P parameters, B of DTYPE gradients\n" */
void cli_summary_model(const cp_model *m, FILE *f);

/* "topology NAME: H hosts, G GPUs, N NICs, M memory devices, L links\n" */
void cli_summary_topo(const cp_topo *t, FILE *f);

/* The `info --json` objects (new references). */
json_t *cli_model_json(const cp_model *m);
json_t *cli_topo_json(const cp_topo *t);

/* A resource of the planner and simulator by name: "nvlink gpu0 -> gpu1"
 * for a link direction, "reducer mem0" for a node's reduction (pack.h). */
void cli_res_name(const cp_topo *t, int res, char *buf, size_t cap);

/* Issue 24, item 12: a topology without a calibration block (what every
 * importer writes unless given --calibration) runs every link at its
 * nominal rate, faster than any measured machine, so every human-readable
 * header says so, with how to calibrate: one line, `prefix` first ("# " in
 * tables).  Nothing for a calibrated topology.  Machine-readable output
 * (--json, --csv) keeps its documented fields. */
void cli_calib_note(const cp_topo *t, const char *prefix, FILE *f);

/* The readable `info` reports. */
void cli_info_model(const cp_model *m, FILE *f);
int cli_info_topo(const cp_topo *t, FILE *f, cp_err *e);

#endif
