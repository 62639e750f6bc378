/*
 * watchdog.c - ending a run that hangs (--timeout S, default 60 s).
 *
 * A plan that deadlocks (or a rank that dies silently) would leave every
 * other rank waiting forever in a receive.  Each rank arms SIGALRM for S
 * seconds; the handler writes which route the rank was in, with write(2)
 * from a line prepared before the route began (nothing in a signal handler
 * may allocate or format), and leaves with _exit(1).  mpirun then ends the
 * other ranks, whose own alarms fire at about the same moment and name
 * their routes too.  This is the one place below the driver that prints and
 * exits, because after a deadlock nothing else can.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "run/run.h"

static char line[320];
static volatile sig_atomic_t line_len;
static int my_rank;

static void on_alarm(int sig)
{
    (void)sig;
    if (line_len > 0 && write(STDERR_FILENO, line, (size_t)line_len) < 0)
        _exit(1);
    _exit(1);
}

/* The length of the prepared line, which snprintf may have cut. */
static void set_len(int n)
{
    line_len = n < 0 ? 0 : n >= (int)sizeof line ? (int)sizeof line - 1 : n;
}

/* Prepare the message for a rank that has entered no route yet. */
static void prepare_idle(void)
{
    line_len = 0;
    set_len(snprintf(line, sizeof line, "coarse-run: error: rank %d timed out before its first "
                     "route\n", my_rank));
}

/* Prepare the message for route rt of plan p, the last the rank entered
 * (it may have finished it and be waiting at the next iteration's start
 * or in the final check). */
static void prepare(const cpl_plan *p, const run_route *rt)
{
    line_len = 0;
    set_len(snprintf(line, sizeof line, "coarse-run: error: rank %d timed out; last route "
                     "entered: bucket %zu route %zu (order %d, %s %s) of %s on %s\n",
                     my_rank, rt->bucket, rt->index, rt->r.order, rt->r.kind, rt->r.algorithm,
                     cpl_model_name(p), cpl_topology_name(p)));
}

void run_watchdog_start(int rank, double seconds)
{
    struct itimerval it;
    struct sigaction sa;
    my_rank = rank;
    prepare_idle();
    if (seconds <= 0)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &it, NULL);
}

void run_watchdog_at(const cpl_plan *p, const run_route *rt)
{
    prepare(p, rt);
}

void run_watchdog_stop(void)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
}
