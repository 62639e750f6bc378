/*
 * progress.h - the one-line progress meter of long commands (compare,
 * predict --scaling / --sweep-bucket, plan, calibrate): "WHAT: DONE/TOTAL
 * (PCT%)  RATE/s  ETA T" on standard error, redrawn in place at most ten
 * times a second, erased when the work ends.  Drawn only when standard
 * error is a terminal and --quiet was not given: redirected runs print
 * nothing extra, so their output is byte-identical.
 */
#ifndef CP_CLI_PROGRESS_H
#define CP_CLI_PROGRESS_H

#include <stdio.h>

#include "cli/opt.h"
#include "core/progress.h"

typedef struct cli_meter {
    const char *what;   /* the label, borrowed ("compare") */
    long done, total;
    double t0_s;        /* when it started (cp_now_s) */
    double drawn_s;     /* when it was last drawn; < 0 never */
    int on;             /* drawing: stderr is a terminal and not --quiet */
} cli_meter;

/* --quiet: no meter for the rest of the process. */
void cli_meter_quiet(void);

/* --quiet in an option table (cli_meter_quiet() when given; takes no
 * argument).  CLI_QUIET_OPTION(help) is its table line. */
int cli_quiet_option(const char *cmd, char *arg, void *value);
#define CLI_QUIET_OPTION(h) OPT_CALLBACK(0, "quiet", NULL, NULL, cli_quiet_option, h)

/* Start a meter of `total` steps (at least 1). */
void cli_meter_start(cli_meter *m, const char *what, long total);

/* `done` steps finished: redraw when a tenth of a second has passed since
 * the last drawing, or on the first and the last step. */
void cli_meter_step(cli_meter *m, long done);

/* Erase the meter's line (a no-op when it never drew). */
void cli_meter_end(cli_meter *m);

/* A cp_progress that steps m (for loops below the cli; their own total
 * replaces m's). */
cp_progress cli_meter_progress(cli_meter *m);

/* Rows of a doubling series 1, 2, 4, .., n (n itself last): what
 * predict --scaling prints per axis. */
long cli_meter_doubling(long n);

#endif
