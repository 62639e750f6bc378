/*
 * pool.c - `pool` routes: the GPUs all-reduce through the memory of the
 * route's pool devices, with one-sided MPI-3 RMA (docs/runtime.md).
 *
 * Every device rank exposes two windows (MPI_Win_allocate, collective once
 * per run, sized for the largest pool route it serves): the pool region
 * (floats) and the doorbells (ints, one per route and host slot).  Every
 * rank holds a passive-target MPI_Win_lock_all epoch on both for the whole
 * run, so no device takes part in any call: the devices are memory.
 *
 * A route's range (n elements) has one slot per host (the plan's
 * pool.hosts); slot h is cut into chunks of the plan's chunk_bytes (at the
 * run's scale); chunk k of every slot lives on the route's device k mod D,
 * at (h J + k / D) x chunk in that device's region (J: the route's chunks
 * per device).  A host of L GPUs publishes its sum of the range: when L > 1
 * its GPUs first reduce-scatter inside the host (ring), and GPU l writes
 * the piece it then holds (piece (l + 1) mod L of the range).  A GPU:
 *   1. MPI_Put of its piece into its host's slot, MPI_Win_flush_all (the
 *      bytes are in the devices' memory);
 *   2. rings the doorbell: MPI_Accumulate(+1, MPI_SUM) on its host's flag
 *      of this route, at the route's first device, and flushes;
 *   3. waits until every host's flag reaches L x (passes of this route so
 *      far) (MPI_Fetch_and_op MPI_NO_OP + flush, polling; the watchdog
 *      ends a wait that never finishes);
 *   4. MPI_Get of its piece from every slot, flush, and sums them in host
 *      order 0, 1, ... (a fixed order; the values are small integers, so
 *      any order would give the same bits);
 *   5. all-gathers the pieces inside the host (ring) when L > 1;
 *   6. an MPI_Barrier over the GPUs, so that nobody overwrites a slot
 *      (the next pass or another route) while someone still reads it.
 * The doorbells count up and are never reset, so they need no second
 * round trip; with the barrier, a flag at L x passes can only be this
 * pass's.
 */
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

struct run_pool {
    MPI_Win data, bell;
    float *mem;           /* this rank's region (device ranks) */
    int *flags;           /* [nr * H]: route k, host h at k * hmax + h */
    int hmax;             /* largest slot count of any pool route; 0: no windows */
    int locked;           /* both windows created and in the lock_all epoch */
    long *passes;         /* [nr]: passes of each route on this rank */
};

/* Chunks of a slot of n elements in units of ch: how many, and per device. */
static int64_t nchunks(const run_route *rt)
{
    return (rt->n + rt->chunk - 1) / rt->chunk;
}

static int64_t per_device(const run_route *rt)
{
    return (nchunks(rt) + rt->ndev - 1) / rt->ndev;
}

int run_pool_open(run_ctx *c)
{
    const run_layout *L = c->L;
    struct run_pool *P = calloc(1, sizeof *P);
    int64_t need = 0;
    size_t k;
    int d, rc;
    if (!P)
        return MPI_ERR_NO_MEM;
    c->pool = P;
    P->data = P->bell = MPI_WIN_NULL;
    for (k = 0; k < L->nr; k++) {
        const run_route *rt = &L->r[k];
        if (rt->kind != RUN_POOL)
            continue;
        if ((int)rt->r.npool_slots > P->hmax)
            P->hmax = (int)rt->r.npool_slots;
        for (d = 0; d < rt->ndev; d++)
            if (rt->dev[d] == c->rank && rt->n > 0 &&
                per_device(rt) * rt->chunk * (int64_t)rt->r.npool_slots > need)
                need = per_device(rt) * rt->chunk * (int64_t)rt->r.npool_slots;
    }
    P->passes = calloc(L->nr + 1, sizeof *P->passes);
    if (!P->passes)
        return MPI_ERR_NO_MEM;
    if (P->hmax == 0)
        return MPI_SUCCESS; /* no pool route (the same on every rank): no windows */
    rc = MPI_Win_allocate((MPI_Aint)need * (MPI_Aint)sizeof(float), sizeof(float),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &P->mem, &P->data);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_allocate(c->rank >= L->gpus ? (MPI_Aint)(L->nr * (size_t)P->hmax *
                                                               sizeof(int)) : 0,
                              sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &P->flags, &P->bell);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank >= L->gpus)
        memset(P->flags, 0, L->nr * (size_t)P->hmax * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD); /* flags are zero before anyone rings */
    MPI_Win_lock_all(0, P->data);
    MPI_Win_lock_all(0, P->bell);
    P->locked = 1;
    return MPI_SUCCESS;
}

void run_pool_close(run_ctx *c)
{
    struct run_pool *P = c->pool;
    if (!P)
        return;
    if (P->locked) {
        MPI_Win_unlock_all(P->data);
        MPI_Win_unlock_all(P->bell);
    }
    if (P->data != MPI_WIN_NULL)
        MPI_Win_free(&P->data);
    if (P->bell != MPI_WIN_NULL)
        MPI_Win_free(&P->bell);
    free(P->passes);
    free(P);
    c->pool = NULL;
}

/* Elements [lo, hi) of host h's slot: one Put or Get per chunk touched,
 * local side at loc[0 .. hi - lo).  get: read, else write. */
static int move(run_ctx *c, const run_route *rt, int h, int64_t lo, int64_t hi, float *loc,
                int get)
{
    int64_t J = per_device(rt), x = lo;
    int rc = MPI_SUCCESS;
    while (x < hi && rc == MPI_SUCCESS) {
        int64_t k = x / rt->chunk, end = (k + 1) * rt->chunk < hi ? (k + 1) * rt->chunk : hi;
        int target = rt->dev[k % rt->ndev];
        MPI_Aint disp = (MPI_Aint)(((int64_t)h * J + k / rt->ndev) * rt->chunk + x % rt->chunk);
        if (get)
            rc = MPI_Get(loc + (x - lo), (int)(end - x), MPI_FLOAT, target, disp,
                         (int)(end - x), MPI_FLOAT, c->pool->data);
        else
            rc = MPI_Put(loc + (x - lo), (int)(end - x), MPI_FLOAT, target, disp,
                         (int)(end - x), MPI_FLOAT, c->pool->data);
        if (!get)
            c->sent_bytes += (end - x) * 4;
        x = end;
    }
    return rc == MPI_SUCCESS ? MPI_Win_flush_all(c->pool->data) : rc;
}

/* Ring this host's doorbell, then wait for every host's to reach want. */
static int doorbells(run_ctx *c, const run_route *rt, int host, int H, int want)
{
    struct run_pool *P = c->pool;
    MPI_Aint base = (MPI_Aint)((size_t)(rt - c->L->r) * (size_t)P->hmax);
    int one = 1, h, rc;
    rc = MPI_Accumulate(&one, 1, MPI_INT, rt->dev[0], base + host, 1, MPI_INT, MPI_SUM, P->bell);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(rt->dev[0], P->bell);
    for (h = 0; h < H && rc == MPI_SUCCESS; h++) {
        int v = 0, dummy = 0;
        do {
            rc = MPI_Fetch_and_op(&dummy, &v, MPI_INT, rt->dev[0], base + h, MPI_NO_OP, P->bell);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_flush(rt->dev[0], P->bell);
        } while (rc == MPI_SUCCESS && v < want);
    }
    return rc;
}

/* The GPU's side; buf is the route's range (rt->n elements). */
static int gpu_side(run_ctx *c, const run_route *rt, float *buf)
{
    int H = (int)rt->r.npool_slots, Lh = c->L->gpus / H, host = c->rank / Lh;
    int l = c->rank % Lh, q = (l + 1) % Lh, h, rc = MPI_SUCCESS, *members = NULL;
    int64_t lo = rt->n * q / Lh, hi = rt->n * (q + 1) / Lh, i;
    long pass = ++c->pool->passes[rt - c->L->r];
    float *acc = c->scratch;
    if (Lh > 1) {
        if (!(members = malloc((size_t)Lh * sizeof *members)))
            return MPI_ERR_NO_MEM;
        for (i = 0; i < Lh; i++)
            members[i] = host * Lh + (int)i;
        rc = run_ring_reduce_scatter(c, members, Lh, l, buf, rt->n, 0);
    }
    if (rc == MPI_SUCCESS)
        rc = move(c, rt, host, lo, hi, buf + lo, 0);
    if (rc == MPI_SUCCESS)
        rc = doorbells(c, rt, host, H, (int)(pass * Lh));
    for (i = lo; i < hi; i++)
        buf[i] = 0;
    for (h = 0; h < H && rc == MPI_SUCCESS; h++) {
        rc = move(c, rt, h, lo, hi, acc, 1);
        for (i = 0; rc == MPI_SUCCESS && i < hi - lo; i++)
            buf[lo + i] += acc[i];
    }
    if (rc == MPI_SUCCESS && Lh > 1)
        rc = run_ring_all_gather(c, members, Lh, l, buf, rt->n, 0);
    if (rc == MPI_SUCCESS)
        rc = MPI_Barrier(c->gpu_comm);
    free(members);
    return rc;
}

int run_pool(run_ctx *c, const run_route *rt, float *buf)
{
    if (rt->n == 0 || !buf)
        return MPI_SUCCESS; /* devices are memory: they take part in no call */
    return gpu_side(c, rt, buf + rt->off);
}
