/*
 * progress.c - the progress meter of progress.h.
 *
 * One line on standard error, rewritten in place with a carriage return
 * and erased with "\r\033[K" (erase to the end of the line, which every
 * terminal emulator in use understands) when the work ends.  The rate is
 * steps per second since the start and the ETA (total - done) / rate: a
 * plain average, since the steps of one command cost about the same.
 * Whether to draw is decided once per meter: isatty(stderr) and no
 * --quiet.  Redirected standard error, pipes and files never see it.
 */
#include <stdio.h>
#include <unistd.h>

#include "cli/progress.h"
#include "core/err.h"
#include "core/units.h"

/* Redraws at most this often: fast enough to look live, rare enough that
 * a command with a million small steps spends no time drawing. */
#define REDRAW_S 0.1

static int quiet;

void cli_meter_quiet(void)
{
    quiet = 1;
}

int cli_quiet_option(const char *cmd, char *arg, void *value)
{
    (void)cmd;
    (void)arg;
    (void)value;
    cli_meter_quiet();
    return CP_OK;
}

void cli_meter_start(cli_meter *m, const char *what, long total)
{
    m->what = what;
    m->done = 0;
    m->total = total > 0 ? total : 1;
    m->t0_s = cp_now_s();
    m->drawn_s = -1;
    m->on = !quiet && isatty(fileno(stderr));
}

/* A duration as "42s", "3m05s" or "2h07m". */
static void format_s(double s, char *out, size_t len)
{
    long t = (long)(s + 0.5);
    if (t < 60)
        snprintf(out, len, "%lds", t);
    else if (t < 3600)
        snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

static void draw(cli_meter *m, double now_s)
{
    double el = now_s - m->t0_s, rate = el > 0 ? (double)m->done / el : 0;
    char eta[32] = "?";
    if (rate > 0)
        format_s((double)(m->total - m->done) / rate, eta, sizeof eta);
    fprintf(stderr, "\r%s: %ld/%ld (%ld%%)  %.1f/s  ETA %s\033[K", m->what, m->done, m->total,
            m->total > 0 ? m->done * 100 / m->total : 0, rate, eta);
    fflush(stderr);
    m->drawn_s = now_s;
}

void cli_meter_step(cli_meter *m, long done)
{
    double now_s;
    if (!m->on)
        return;
    m->done = done < 0 ? 0 : done > m->total ? m->total : done;
    now_s = cp_now_s();
    if (m->drawn_s < 0 || m->done == m->total || now_s - m->drawn_s >= REDRAW_S)
        draw(m, now_s);
}

void cli_meter_end(cli_meter *m)
{
    if (m->on && m->drawn_s >= 0) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    m->on = 0;
}

/* cp_progress_fn over a cli_meter: the loop's total is the meter's. */
static void on_progress(void *ctx, long done, long total)
{
    cli_meter *m = ctx;
    if (total > 0)
        m->total = total;
    cli_meter_step(m, done);
}

cp_progress cli_meter_progress(cli_meter *m)
{
    cp_progress p;
    p.fn = on_progress;
    p.ctx = m;
    return p;
}

long cli_meter_doubling(long n)
{
    long rows = 1, v = 1;
    while (v < n) {
        v = v * 2 < n ? v * 2 : n;
        rows++;
    }
    return rows;
}
