/*
 * layout.c - the plan at coarse-run's scale: element counts of buckets and
 * tensors, each route's element range and device ranks, and the values the
 * GPUs start from (see run.h).
 *
 * Scaling: tensor t of n_t elements (its bytes over the plan's element size)
 * gets max(1, round(n_t / K)) elements, and tensors stay in buffer order.  A
 * route boundary at byte x inside tensor t maps to the tensor's scaled start
 * plus round((x - offset_t) / elem / K), capped at the tensor's end, so the
 * routes still tile the scaled bucket in the same order (a monotone map of
 * the boundaries; a route can shrink to 0 elements and then moves nothing).
 * Values are fp32 whatever the plan's dtype: the executor checks routing,
 * and small integers sum exactly in fp32 in any order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

static const char *const kind_names[RUN_KINDS] = {"allreduce", "proxy-bw", "proxy-lat",
                                                  "proxy-ring", "ps", "pool"};

int run_fail(run_err *e, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* clang 14's va_list checker: the false positive src/core/err.c explains */
    vsnprintf(e->msg, sizeof e->msg, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(ap);
    e->status = status;
    return status;
}

const char *run_kind_name(run_kind k)
{
    return (unsigned)k < RUN_KINDS ? kind_names[k] : "?";
}

static int kind_of(const char *name)
{
    int k;
    for (k = 0; k < RUN_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

/* Bytes per gradient element of the plan (fp32 when it does not say). */
static int elem_bytes(const cpl_plan *p)
{
    const char *d = cpl_dtype(p);
    return d && (strcmp(d, "fp16") == 0 || strcmp(d, "bf16") == 0) ? 2 : 4;
}

/* Values in -5 .. 5: with at most 2^20 GPUs (the loader's limit) every
 * partial sum stays below 2^24 in magnitude, where fp32 holds integers
 * exactly, so every order of summation gives the same bits. */
float run_value(int gpu, size_t bucket, int64_t i)
{
    return (float)((int)(((int64_t)gpu * 7 + (int64_t)bucket * 3 + i) % 11) - 5);
}

void run_fill(const run_layout *L, int gpu, size_t bucket, float *buf)
{
    int64_t i;
    for (i = 0; i < L->b[bucket].nelem; i++)
        buf[i] = run_value(gpu, bucket, i);
}

/* Scaled element count of a tensor of `bytes`. */
static int64_t scaled(int64_t bytes, int elem, int64_t scale)
{
    int64_t n = bytes / elem, s = (n + scale / 2) / scale;
    return s < 1 ? 1 : s;
}

/* Scaled position of byte x of bucket b (tensors of the plan, starts in
 * L->b[b].tstart). */
static int64_t map_byte(const cpl_plan *p, const run_layout *L, size_t b, int64_t x, int elem)
{
    const run_bucket *rb = &L->b[b];
    size_t t;
    for (t = 0; t < rb->ntensors; t++) {
        cpl_tensor ten;
        int64_t in, len = rb->tstart[t + 1] - rb->tstart[t];
        cpl_get_tensor(p, b, t, &ten);
        if (x >= ten.offset + ten.bytes)
            continue;
        in = ((x - ten.offset) / elem + L->scale / 2) / L->scale;
        return rb->tstart[t] + (in < len ? in : len);
    }
    return rb->nelem;
}

static int build_buckets(const cpl_plan *p, run_layout *L, int elem, run_err *e)
{
    size_t b, t;
    for (b = 0; b < L->nb; b++) {
        cpl_bucket bk;
        run_bucket *rb = &L->b[b];
        cpl_get_bucket(p, b, &bk);
        rb->ntensors = bk.ntensors;
        rb->tstart = malloc((bk.ntensors + 1) * sizeof *rb->tstart);
        if (!rb->tstart)
            return run_fail(e, 1, "out of memory");
        rb->tstart[0] = 0;
        for (t = 0; t < bk.ntensors; t++) {
            cpl_tensor ten;
            cpl_get_tensor(p, b, t, &ten);
            rb->tstart[t + 1] = rb->tstart[t] + scaled(ten.bytes, elem, L->scale);
        }
        rb->nelem = rb->tstart[bk.ntensors];
        if (rb->nelem > L->max_elems)
            L->max_elems = rb->nelem;
        if (rb->nelem > (int64_t)1 << 31)
            return run_fail(e, 2, "bucket %zu has %lld elements at --scale "
                            "%lld, more than MPI counts reach: use a larger --scale", b,
                            (long long)rb->nelem, (long long)L->scale);
    }
    return 0;
}

/* One route: kind, element range, device ranks. */
static int build_route(const cpl_plan *p, run_layout *L, size_t b, size_t k, int elem,
                       run_err *e)
{
    cpl_route r;
    run_route *rt;
    int kind, d;
    cpl_get_route(p, b, k, &r);
    rt = &L->r[r.order];
    kind = kind_of(r.kind);
    if (kind < 0)
        return run_fail(e, 2, "bucket %zu route %zu: route kind \"%s\" is not "
                        "one coarse-run executes", b, k, r.kind);
    rt->bucket = b;
    rt->index = k;
    rt->r = r;
    rt->kind = (run_kind)kind;
    rt->off = map_byte(p, L, b, r.offset, elem);
    rt->n = map_byte(p, L, b, r.offset + r.bytes, elem) - rt->off;
    rt->ndev = (int)r.ndevices;
    rt->dev = malloc((r.ndevices + 1) * sizeof *rt->dev);
    if (!rt->dev)
        return run_fail(e, 1, "out of memory");
    for (d = 0; d < rt->ndev; d++)
        rt->dev[d] = L->gpus + cpl_route_device_index(p, b, k, (size_t)d);
    if (kind != RUN_ALLREDUCE && rt->ndev == 0)
        return run_fail(e, 2, "bucket %zu route %zu: a %s route needs "
                        "devices", b, k, r.kind);
    if (kind == RUN_POOL) {
        if (r.npool_slots == 0 || L->gpus % (int)r.npool_slots != 0)
            return run_fail(e, 2, "bucket %zu route %zu: a pool route with %zu host slots "
                            "over %d GPUs (the slots must divide the GPUs)", b, k,
                            r.npool_slots, L->gpus);
        if (r.pool_chunk_bytes <= 0)
            return run_fail(e, 2, "bucket %zu route %zu: pool chunk_bytes %lld is not "
                            "positive", b, k, (long long)r.pool_chunk_bytes);
        rt->chunk = (r.pool_chunk_bytes / elem + L->scale / 2) / L->scale;
        if (rt->chunk < 1)
            rt->chunk = 1;
    }
    return 0;
}

/* What each device is, from the routes that name it (the plan calls only
 * memory devices that reduce "proxies"; a pool's cards and the parameter
 * servers' sockets are not): proxy before pool device before socket, for a
 * device some edited plan names in routes of several kinds. */
static int count_roles(run_layout *L)
{
    int *role = calloc((size_t)L->ndev + 1, sizeof *role), d;
    size_t k;
    if (!role)
        return -1;
    for (k = 0; k < L->nr; k++) {
        const run_route *rt = &L->r[k];
        int r = rt->kind == RUN_PS ? 1 : rt->kind == RUN_POOL ? 2 : 3;
        for (d = 0; d < rt->ndev; d++)
            if (rt->dev[d] - L->gpus >= 0 && rt->dev[d] - L->gpus < L->ndev &&
                role[rt->dev[d] - L->gpus] < r)
                role[rt->dev[d] - L->gpus] = r;
    }
    for (d = 0; d < L->ndev; d++) {
        L->nsocket += role[d] == 1;
        L->npool += role[d] == 2;
        L->nproxy += role[d] == 3;
    }
    free(role);
    return 0;
}

int run_layout_build(const cpl_plan *p, int64_t scale, run_layout *L, run_err *e)
{
    size_t b, k;
    int elem = elem_bytes(p), g, rc;
    memset(L, 0, sizeof *L);
    L->gpus = cpl_gpu_count(p);
    L->hosts = cpl_host_count(p);
    L->ndev = (int)cpl_device_count(p);
    L->nranks = L->gpus + L->ndev;
    L->scale = scale;
    L->nb = cpl_bucket_count(p);
    L->b = calloc(L->nb + 1, sizeof *L->b);
    L->home = malloc(((size_t)L->gpus + 1) * sizeof *L->home);
    for (b = 0; b < L->nb; b++) {
        cpl_bucket bk;
        cpl_get_bucket(p, b, &bk);
        L->nr += bk.nroutes;
    }
    L->r = calloc(L->nr + 1, sizeof *L->r);
    if (!L->b || !L->home || !L->r)
        return run_fail(e, 1, "out of memory");
    for (g = 0; g < L->gpus; g++) {
        int h = cpl_ring_home(p, g);
        L->home[g] = h < 0 ? -1 : L->gpus + h;
    }
    if ((rc = build_buckets(p, L, elem, e)))
        return rc;
    for (b = 0; b < L->nb; b++) {
        cpl_bucket bk;
        cpl_get_bucket(p, b, &bk);
        for (k = 0; k < bk.nroutes; k++)
            if ((rc = build_route(p, L, b, k, elem, e)))
                return rc;
    }
    if (count_roles(L))
        return run_fail(e, 1, "out of memory");
    return 0;
}

void run_devices_text(const run_layout *L, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (L->nproxy)
        len += (size_t)snprintf(buf + len, cap - len, "%d %s", L->nproxy,
                                L->nproxy == 1 ? "proxy" : "proxies");
    if (L->npool && len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "%s%d pool memory device%s",
                                len ? " + " : "", L->npool, L->npool == 1 ? "" : "s");
    if (L->nsocket && len < cap)
        snprintf(buf + len, cap - len, "%s%d CPU socket%s", len ? " + " : "", L->nsocket,
                 L->nsocket == 1 ? "" : "s");
}

void run_layout_free(run_layout *L)
{
    size_t i;
    for (i = 0; L->b && i < L->nb; i++)
        free(L->b[i].tstart);
    for (i = 0; L->r && i < L->nr; i++)
        free(L->r[i].dev);
    free(L->b);
    free(L->r);
    free(L->home);
    memset(L, 0, sizeof *L);
}
