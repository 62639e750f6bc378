/*
 * svg.h - a grouped bar chart as a standalone SVG file, for the reports.
 *
 * Plain SVG 1.1 with no scripts or external resources, so that it renders
 * in a browser, in GitHub's file view and in any vector editor.  Output is
 * deterministic (fixed-precision coordinates), so a regenerated report only
 * differs where its numbers do.
 */
#ifndef CP_SVG_H
#define CP_SVG_H

#include <stdio.h>

typedef struct cp_bars {
    const char *title;
    const char *ylabel;
    int ncat;                    /* groups along the x axis */
    const char *const *cat;      /* their labels */
    int nser;                    /* bars per group */
    const char *const *ser;      /* series labels (legend) */
    const double *val;           /* [cat * nser + ser]; negative: no bar */
    double ref;                  /* draw a dashed line at this value (e.g. 1.0); <= 0 none */
} cp_bars;

/* Write the chart; 0, or -1 when writing failed. */
int cp_svg_bars(const cp_bars *c, FILE *f);

#endif
