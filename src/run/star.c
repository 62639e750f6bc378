/*
 * star.c - `proxy-bw`, `proxy-lat` and `ps` routes: push, sum at the
 * device, pull (docs/runtime.md).
 *
 * The route's range is cut into its S equal shards; shard s belongs to the
 * route's device s mod D (proxy-lat names one device; ps names the CPU
 * sockets, which act as the parameter servers).  Every GPU pushes each
 * shard to its device and pulls the sum back.  A device keeps one queue per
 * client: it posts a receive for every (client, shard) at once and sums
 * whichever push arrives first (MPI_Waitany), never blocking on one
 * client's lateness (the plan's "queues": "per-client"); when all G pushes
 * of a shard are in, it sends the sum to every GPU.  Everything is
 * non-blocking, so no order of arrivals can deadlock.
 *
 * Message tags are the shard index: a pair (GPU, device) exchanges at most
 * one push and one pull per shard of a route, and a rank ends a route only
 * when all of its messages are done, so no two routes' messages can meet.
 */
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

/* Shard s of n elements in S: [lo, lo + len). */
static void shard(int64_t n, int S, int s, int64_t *lo, int *len)
{
    *lo = n * s / S;
    *len = (int)(n * (s + 1) / S - *lo);
}

/* The GPU's side: push every shard, pull every sum (into scratch, since the
 * buffer is still being sent), then copy the sums in. */
static int gpu_side(run_ctx *c, const run_route *rt, float *buf)
{
    int S = rt->r.shards, D = rt->ndev, s, k = 0, rc;
    float *in = c->scratch;
    MPI_Request *req = malloc(2 * (size_t)S * sizeof(MPI_Request));
    if (!req)
        return MPI_ERR_NO_MEM;
    for (s = 0; s < S; s++) {
        int64_t lo;
        int len;
        shard(rt->n, S, s, &lo, &len);
        if (len == 0)
            continue;
        MPI_Isend(buf + lo, len, MPI_FLOAT, rt->dev[s % D], s, MPI_COMM_WORLD, &req[k++]);
        MPI_Irecv(in + lo, len, MPI_FLOAT, rt->dev[s % D], s, MPI_COMM_WORLD, &req[k++]);
        c->sent_bytes += (int64_t)len * 4;
    }
    rc = MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS)
        memcpy(buf, in, (size_t)rt->n * sizeof *buf);
    free(req);
    return rc;
}

/* The device's side for its shards (those s with s mod D == me). */
static int device_side(run_ctx *c, const run_route *rt, int me)
{
    int S = rt->r.shards, D = rt->ndev, G = c->L->gpus, s, g, nmine = 0, nrecv = 0, nsend = 0;
    int rc = MPI_SUCCESS, *left = NULL, *slot_shard = NULL;
    int64_t total = 0;
    float *acc = NULL, *inbox = NULL;
    MPI_Request *rreq = NULL, *sreq = NULL;
    int64_t *where = calloc((size_t)S + 1, sizeof *where);
    for (s = me; s < S; s += D) {
        int64_t lo;
        int len;
        shard(rt->n, S, s, &lo, &len);
        where[s] = total;
        total += len;
        nmine++;
    }
    acc = calloc((size_t)total + 1, sizeof *acc);
    inbox = malloc(((size_t)total * (size_t)G + 1) * sizeof *inbox);
    left = calloc((size_t)S + 1, sizeof *left);
    slot_shard = malloc(((size_t)nmine * (size_t)G + 1) * sizeof *slot_shard);
    rreq = malloc(((size_t)nmine * (size_t)G + 1) * sizeof(MPI_Request));
    sreq = malloc(((size_t)nmine * (size_t)G + 1) * sizeof(MPI_Request));
    if (!where || !acc || !inbox || !left || !slot_shard || !rreq || !sreq)
        rc = MPI_ERR_NO_MEM;
    for (s = me; rc == MPI_SUCCESS && s < S; s += D) {
        int64_t lo;
        int len;
        shard(rt->n, S, s, &lo, &len);
        if (len == 0)
            continue;
        left[s] = G;
        for (g = 0; g < G; g++) {
            slot_shard[nrecv] = s;
            MPI_Irecv(inbox + where[s] * G + (int64_t)g * len, len, MPI_FLOAT, g, s,
                      MPI_COMM_WORLD, &rreq[nrecv++]);
        }
    }
    /* one queue per client: sum whichever push is in first */
    for (g = 0; rc == MPI_SUCCESS && g < nrecv; g++) {
        int idx, i;
        int64_t lo;
        int len;
        MPI_Status st;
        rc = MPI_Waitany(nrecv, rreq, &idx, &st);
        if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED)
            break;
        s = slot_shard[idx];
        shard(rt->n, S, s, &lo, &len);
        for (i = 0; i < len; i++)
            acc[where[s] + i] += inbox[where[s] * G + (int64_t)st.MPI_SOURCE * len + i];
        if (--left[s] == 0) {
            int q;
            for (q = 0; q < G; q++)
                MPI_Isend(acc + where[s], len, MPI_FLOAT, q, s, MPI_COMM_WORLD, &sreq[nsend++]);
            c->sent_bytes += (int64_t)len * 4 * G;
        }
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(nsend, sreq, MPI_STATUSES_IGNORE);
    free(where);
    free(acc);
    free(inbox);
    free(left);
    free(slot_shard);
    free(rreq);
    free(sreq);
    return rc;
}

int run_star(run_ctx *c, const run_route *rt, float *buf)
{
    int d;
    if (rt->n == 0)
        return MPI_SUCCESS;
    if (buf)
        return gpu_side(c, rt, buf + rt->off);
    for (d = 0; d < rt->ndev; d++)
        if (rt->dev[d] == c->rank)
            return device_side(c, rt, d);
    return MPI_SUCCESS;
}
