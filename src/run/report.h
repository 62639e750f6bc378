/*
 * report.h - what coarse-run prints on rank 0: per route kind the routes,
 * algorithms, bytes moved and time; the bit-exact line or the first
 * mismatch; and, with --json, every route's time (docs/runtime.md).
 */
#ifndef CP_RUN_REPORT_H
#define CP_RUN_REPORT_H

#include <stdio.h>

#include "run/run.h"

typedef struct run_report {
    const char *path;           /* the plan file as given */
    const cpl_plan *plan;
    const run_layout *L;
    const double *route_s;      /* [nr]: seconds per route, max over ranks, all iterations */
    const double *route_bytes;  /* [nr]: bytes sent per route, all ranks, all iterations */
    double wall_s;              /* all iterations, max over ranks */
    int iterations;
    const run_mismatch *m;
} run_report;

/* Return the exit status: 0 bit-exact, 1 mismatch. */
int run_report_text(const run_report *r, FILE *f);
int run_report_json(const run_report *r, FILE *f);
void run_report_mismatch(const run_report *r, FILE *f);

#endif
