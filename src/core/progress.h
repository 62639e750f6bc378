/*
 * progress.h - how a long loop below the cli says how far it has got.
 *
 * Nothing below main prints (docs/architecture.md), so a loop that can run
 * for seconds (the planner's LP windows, the calibration rounds) takes a
 * cp_progress: a function pointer and its context, supplied by the cli,
 * which draws the meter (src/cli/progress.c).  A NULL function means no one
 * is listening.  Header-only.
 */
#ifndef CP_PROGRESS_H
#define CP_PROGRESS_H

/* Called with the work done so far and the whole, in the loop's own units
 * (buckets, rounds, rows); total >= 1, done in [0, total]. */
typedef void (*cp_progress_fn)(void *ctx, long done, long total);

typedef struct cp_progress {
    cp_progress_fn fn; /* NULL: nothing reported */
    void *ctx;         /* passed back to fn, borrowed */
} cp_progress;

static inline void cp_progress_report(const cp_progress *p, long done, long total)
{
    if (p && p->fn)
        p->fn(p->ctx, done, total);
}

#endif
