/*
 * coarse_run.c - `coarse-run`, the driver: options, loading the plan on
 * every rank, agreeing that it can run, the routes in global order, the
 * check and the report (docs/runtime.md).
 *
 *   mpirun -n $(coarse-run --ranks PLAN.json) coarse-run PLAN.json
 *          [--scale K] [--iterations I] [--timeout S] [--json]
 *
 * Refusals happen before any route moves a byte: every rank loads and
 * validates the plan (cpl_open: structure, byte ranges, orders), then one
 * MPI_Allreduce agrees on the worst status, so that every rank exits with
 * it (2) and none is left waiting; the lowest failing rank prints why.
 * Exit 0: bit-exact; 1: a mismatch, an MPI failure or a timeout; 2: bad
 * input or the wrong number of ranks.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/report.h"
#include "run/run.h"

static const char usage[] =
    "usage: coarse-run PLAN.json [--scale K] [--iterations I] [--timeout S] [--json]\n"
    "                  [--fault G]\n"
    "       coarse-run --ranks PLAN.json\n"
    "\n"
    "Execute a coarse-plan plan on MPI ranks that stand for its GPUs (ranks 0 ..\n"
    "G-1) and its devices (the next ranks: proxies, a pool's memory devices, CPU\n"
    "sockets), with real bytes, then\n"
    "check every GPU's buffers bit for bit against MPI_Allreduce.\n"
    "\n"
    "  --scale K        divide every tensor's elements by K (default 1)\n"
    "  --iterations I   run the plan I times; times are per iteration (default 1)\n"
    "  --timeout S      abort after S seconds naming each rank's route (default 60; 0: never)\n"
    "  --json           per-kind and per-route timings as JSON on standard output\n"
    "  --ranks          print the number of ranks the plan needs, without MPI\n"
    "  --fault G        testing: after the routes, add 1 to GPU G's first element of\n"
    "                   the last bucket, to show that the check catches it (exit 1)\n"
    "\n"
    "Run it as mpirun -n $(coarse-run --ranks PLAN.json) coarse-run PLAN.json.\n"
    "Format and semantics: docs/runtime.md.\n";

typedef struct opts {
    const char *plan;
    long scale, iterations, fault; /* fault: --fault G, -1 when none */
    double timeout_s;
    int json, ranks, help;
} opts;

/* A whole number in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, opts *o, run_err *e)
{
    int i;
    memset(o, 0, sizeof *o);
    o->scale = 1;
    o->iterations = 1;
    o->timeout_s = 60;
    o->fault = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            o->help = 1;
        else if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--ranks") == 0)
            o->ranks = 1;
        else if (strcmp(a, "--fault") == 0) {
            if (!v || parse_long(v, 0, 1 << 20, &o->fault))
                return run_fail(e, 2, "--fault: expected a GPU index, got '%s'", v ? v : "nothing");
            i++;
        } else if (strcmp(a, "--scale") == 0 || strcmp(a, "--iterations") == 0 ||
                   strcmp(a, "--timeout") == 0) {
            long hi = a[2] == 's' ? 1L << 30 : a[2] == 'i' ? 100000 : 86400;
            if (!v || parse_long(v, a[2] == 't' ? 0 : 1, hi, &n))
                return run_fail(e, 2, "%s: expected a whole number from %d to %ld, got '%s'", a,
                                a[2] == 't' ? 0 : 1, hi, v ? v : "nothing");
            if (a[2] == 's')
                o->scale = n;
            else if (a[2] == 'i')
                o->iterations = n;
            else
                o->timeout_s = (double)n;
            i++;
        } else if (a[0] == '-' && a[1])
            return run_fail(e, 2, "unknown option '%s' (coarse-run --help)", a);
        else if (o->plan)
            return run_fail(e, 2, "unexpected argument '%s': one plan per run", a);
        else
            o->plan = a;
    }
    if (!o->help && !o->plan)
        return run_fail(e, 2, "no plan given (coarse-run --help)");
    return 0;
}

/* --ranks: the count alone, no MPI. */
static int print_ranks(const opts *o)
{
    cpl_plan *p;
    char err[600];
    if (cpl_open(o->plan, &p, err, sizeof err)) {
        fprintf(stderr, "coarse-run: error: %s\n", err);
        return 2;
    }
    printf("%zu\n", (size_t)cpl_gpu_count(p) + cpl_device_count(p));
    cpl_close(p);
    return 0;
}

/* Every rank's status -> the worst; the lowest rank with that status prints
 * its message. */
static int agree(int rank, int status, const run_err *e)
{
    int worst = 0, first = INT_MAX, me = status ? rank : INT_MAX;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (status && rank == first)
        fprintf(stderr, "coarse-run: error: %s\n", e->msg);
    return worst;
}

/* Load and check the plan; the layout at the run's scale. */
static int setup(const opts *o, int nranks, cpl_plan **p, run_layout *L, run_err *e)
{
    char err[600];
    *p = NULL;
    memset(L, 0, sizeof *L);
    if (cpl_open(o->plan, p, err, sizeof err))
        return run_fail(e, 2, "%s", err);
    if (run_layout_build(*p, o->scale, L, e))
        return e->status;
    if (L->nranks != nranks)
        return run_fail(e, 2, "%s: the plan needs %d ranks (%d GPUs + %d devices), mpirun "
                        "started %d: mpirun -n %d coarse-run %s", o->plan, L->nranks, L->gpus,
                        L->ndev, nranks, L->nranks, o->plan);
    return 0;
}

/* Buffers: each GPU's buckets, and scratch on every rank. */
static int alloc_buffers(run_ctx *c, float ***bufs, run_err *e)
{
    const run_layout *L = c->L;
    size_t b;
    *bufs = calloc(L->nb + 1, sizeof **bufs);
    c->scratch_elems = L->max_elems;
    c->scratch = malloc(((size_t)L->max_elems + 1) * sizeof *c->scratch);
    if (!*bufs || !c->scratch)
        return run_fail(e, 1, "out of memory");
    for (b = 0; c->rank < L->gpus && b < L->nb; b++)
        if (!((*bufs)[b] = malloc(((size_t)L->b[b].nelem + 1) * sizeof ***bufs)))
            return run_fail(e, 1, "out of memory for bucket %zu", b);
    return 0;
}

/* One pass over every route in order; per-route seconds and bytes added
 * to t[] and bytes[]. */
static int run_plan(run_ctx *c, float **bufs, double *t, double *bytes)
{
    const run_layout *L = c->L;
    size_t k;
    int rc = MPI_SUCCESS, d;
    for (k = 0; k < L->nr && rc == MPI_SUCCESS; k++) {
        const run_route *rt = &L->r[k];
        float *buf = c->rank < L->gpus ? bufs[rt->bucket] : NULL;
        int64_t sent0 = c->sent_bytes;
        int in = buf != NULL;
        double t0;
        for (d = 0; d < rt->ndev && !in; d++)
            in = rt->dev[d] == c->rank && rt->kind != RUN_ALLREDUCE;
        if (!in)
            continue;
        run_watchdog_at(c->plan, rt);
        t0 = MPI_Wtime();
        switch (rt->kind) {
        case RUN_ALLREDUCE: rc = run_allreduce(c, rt, buf); break;
        case RUN_PROXY_RING: rc = run_proxy_ring(c, rt, buf); break;
        case RUN_PROXY_BW:
        case RUN_PROXY_LAT:
        case RUN_PS: rc = run_star(c, rt, buf); break;
        case RUN_POOL: rc = run_pool(c, rt, buf); break;
        default: rc = MPI_ERR_OTHER;
        }
        if (buf) /* GPUs: a device waits idle until its GPUs push */
            t[k] += MPI_Wtime() - t0;
        bytes[k] += (double)(c->sent_bytes - sent0);
    }
    return rc;
}

/* Iterations, then the check; rank 0 reports. */
static int execute(const opts *o, run_ctx *c, float **bufs)
{
    const run_layout *L = c->L;
    double *t = calloc(L->nr + 1, sizeof *t), *bytes = calloc(L->nr + 1, sizeof *bytes);
    double *tmax = calloc(L->nr + 1, sizeof *tmax), *bsum = calloc(L->nr + 1, sizeof *bsum);
    double wall = 0, wmax = 0;
    run_mismatch m;
    long it;
    size_t b;
    int rc = MPI_SUCCESS, status = 0, fallback = 0;
    if (!t || !bytes || !tmax || !bsum)
        rc = MPI_ERR_NO_MEM;
    for (it = 0; it < o->iterations && rc == MPI_SUCCESS; it++) {
        double t0;
        for (b = 0; c->rank < L->gpus && b < L->nb; b++)
            run_fill(L, c->rank, b, bufs[b]);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        rc = run_plan(c, bufs, t, bytes);
        wall += MPI_Wtime() - t0;
    }
    if (rc == MPI_SUCCESS && c->rank == o->fault && c->rank < L->gpus && bufs &&
        bufs[L->nb - 1])
        bufs[L->nb - 1][0] += 1; /* --fault: what a lost or doubled byte would do */
    if (rc == MPI_SUCCESS)
        rc = run_check(c, bufs, &m);
    if (rc == MPI_SUCCESS) {
        MPI_Reduce(t, tmax, (int)L->nr, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(bytes, bsum, (int)L->nr, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&wall, &wmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&c->fallback, &fallback, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    }
    if (rc == MPI_SUCCESS && c->rank == 0) {
        run_report rep = {o->plan, c->plan, L, tmax, bsum, wmax, (int)o->iterations, &m};
        status = o->json ? run_report_json(&rep, stdout) : run_report_text(&rep, stdout);
        if (m.found)
            run_report_mismatch(&rep, stderr);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(t);
    free(bytes);
    free(tmax);
    free(bsum);
    return rc != MPI_SUCCESS ? 1 : status;
}

/* star.c tags a shard's messages with its index: the plan's push-pull
 * routes must have no more shards than MPI's largest tag (2^31 - 1 with
 * Open MPI's ob1; UCX gives fewer). */
static int check_tags(run_ctx *c, run_err *e)
{
    void *ub = NULL;
    int flag = 0;
    size_t k;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    c->tag_ub = flag && ub ? *(int *)ub : 32767;
    for (k = 0; k < c->L->nr; k++) {
        const run_route *rt = &c->L->r[k];
        if (rt->kind != RUN_ALLREDUCE && rt->kind != RUN_PROXY_RING && rt->r.shards > c->tag_ub)
            return run_fail(e, 2, "bucket %zu route %zu has %d shards, more than this MPI's "
                            "largest tag (%d)", rt->bucket, rt->index, rt->r.shards, c->tag_ub);
    }
    return 0;
}

static int run(const opts *o, int rank, int nranks)
{
    cpl_plan *p = NULL;
    run_layout L;
    run_err e = {0, ""};
    run_ctx c;
    float **bufs = NULL;
    size_t b;
    int status = setup(o, nranks, &p, &L, &e);
    memset(&c, 0, sizeof c);
    c.plan = p;
    c.L = &L;
    c.rank = rank;
    c.gpu_comm = MPI_COMM_NULL;
    if (status == 0)
        status = alloc_buffers(&c, &bufs, &e);
    if (status == 0)
        status = check_tags(&c, &e);
    if ((status = agree(rank, status, &e)) == 0) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < L.gpus ? 0 : MPI_UNDEFINED, rank, &c.gpu_comm);
        run_watchdog_start(rank, o->timeout_s);
        status = run_pool_open(&c) == MPI_SUCCESS ? execute(o, &c, bufs) : 1;
        run_pool_close(&c);
        run_watchdog_stop();
        if (c.gpu_comm != MPI_COMM_NULL)
            MPI_Comm_free(&c.gpu_comm);
    }
    for (b = 0; bufs && b < L.nb; b++)
        free(bufs[b]);
    free(bufs);
    free(c.scratch);
    run_layout_free(&L);
    cpl_close(p);
    return status;
}

int main(int argc, char **argv)
{
    opts o;
    run_err e = {0, ""};
    int rank = 0, nranks = 1, status = parse_opts(argc, argv, &o, &e);
    if (status == 0 && o.help) {
        fputs(usage, stdout);
        return 0;
    }
    if (status == 0 && o.ranks)
        return print_ranks(&o);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (status) {
        if (rank == 0)
            fprintf(stderr, "coarse-run: error: %s\n", e.msg);
    } else {
        status = run(&o, rank, nranks);
    }
    MPI_Finalize();
    return status;
}
