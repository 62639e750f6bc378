/*
 * svg.h - charts as standalone SVG files: grouped bars for the reports, and
 * a timeline (Gantt chart) of one iteration.
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
    const char *note;            /* a line under the chart (what it leaves out), or NULL */
} cp_bars;

/* The width of `s` in px at font size `size_px` in DejaVu Sans (the
 * sans-serif rsvg-convert uses on Debian; browsers' are narrower): what the
 * charts place their text by, and what tests/cli/svg.sh checks them with. */
double cp_svg_text_px(const char *s, double size_px);

/* Write the chart; 0, or -1 when writing failed. */
int cp_svg_bars(const cp_bars *c, FILE *f);

/* One bar of a timeline: [start, end] in ms, a colour from the legend, and
 * the text shown when the pointer rests on it. */
typedef struct cp_gantt_bar {
    double start, end;
    int colour;                  /* index into cp_gantt.legend */
    const char *tip;
} cp_gantt_bar;

/* A row of bars (a stream: compute, communication). */
typedef struct cp_gantt_lane {
    const char *label;
    const cp_gantt_bar *bar;
    int nbar;
} cp_gantt_lane;

typedef struct cp_gantt {
    const char *title;
    int nlane;
    const cp_gantt_lane *lane;
    int nlegend;                 /* at most 8 */
    const char *const *legend;   /* what each colour means */
    double end;                  /* the time axis runs from 0 to here (ms) */
} cp_gantt;

/* Write the timeline; 0, or -1 when writing failed. */
int cp_svg_gantt(const cp_gantt *g, FILE *f);

#endif
