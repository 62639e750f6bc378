/*
 * proxy_ring.c - `proxy-ring` routes, COARSE's decentralised proxies
 * (docs/runtime.md): every GPU pushes the range to its own device (the
 * plan's proxies[].ring_clients; when the plan does not say, GPU g of G
 * uses the route's device floor(g D / G)), each device sums its clients'
 * pushes from one queue per client, the devices all-reduce among
 * themselves over two rings running in opposite directions (the first half
 * of the range forward in the route's device order, the second half
 * backward, so both directions of every link carry traffic), and every GPU
 * pulls the result from its device.  Shards run one after another.
 */
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

/* World rank of GPU g's device in this route. */
static int home_of(const run_ctx *c, const run_route *rt, int g)
{
    int d, h = c->L->home[g];
    for (d = 0; d < rt->ndev; d++)
        if (rt->dev[d] == h)
            return h;
    return rt->dev[(int64_t)g * rt->ndev / c->L->gpus];
}

/* Sum the pushes of this device's clients into acc[0..n), any order. */
static int gather_clients(run_ctx *c, const run_route *rt, float *acc, int n, int tag,
                          int *clients, int *nc)
{
    int g, k, rc = MPI_SUCCESS;
    float *inbox;
    MPI_Request *req;
    *nc = 0;
    for (g = 0; g < c->L->gpus; g++)
        if (home_of(c, rt, g) == c->rank)
            clients[(*nc)++] = g;
    inbox = malloc(((size_t)*nc * (size_t)n + 1) * sizeof *inbox);
    req = malloc(((size_t)*nc + 1) * sizeof(MPI_Request));
    if (!inbox || !req)
        rc = MPI_ERR_NO_MEM;
    for (k = 0; rc == MPI_SUCCESS && k < *nc; k++)
        MPI_Irecv(inbox + (size_t)k * (size_t)n, n, MPI_FLOAT, clients[k], tag, MPI_COMM_WORLD,
                  &req[k]);
    for (g = 0; rc == MPI_SUCCESS && g < *nc; g++) {
        int idx, i;
        rc = MPI_Waitany(*nc, req, &idx, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED)
            break;
        for (i = 0; i < n; i++)
            acc[i] += inbox[(size_t)idx * (size_t)n + (size_t)i];
    }
    free(inbox);
    free(req);
    return rc;
}

/* The device's part of one shard of n elements. */
static int device_shard(run_ctx *c, const run_route *rt, int me, int *members, int *clients,
                        int n, int tag)
{
    int D = rt->ndev, nc = 0, k, half = n / 2, rc;
    float *acc = calloc((size_t)n + 1, sizeof *acc);
    MPI_Request *req;
    if (!acc)
        return MPI_ERR_NO_MEM;
    rc = gather_clients(c, rt, acc, n, tag, clients, &nc);
    /* ring A forward over the first half, ring B backward over the second */
    for (k = 0; k < D; k++)
        members[k] = rt->dev[k];
    if (rc == MPI_SUCCESS)
        rc = run_ring_reduce_scatter(c, members, D, me, acc, half, tag);
    if (rc == MPI_SUCCESS)
        rc = run_ring_all_gather(c, members, D, me, acc, half, tag);
    for (k = 0; k < D; k++)
        members[k] = rt->dev[D - 1 - k];
    if (rc == MPI_SUCCESS)
        rc = run_ring_reduce_scatter(c, members, D, D - 1 - me, acc + half, n - half, tag);
    if (rc == MPI_SUCCESS)
        rc = run_ring_all_gather(c, members, D, D - 1 - me, acc + half, n - half, tag);
    req = malloc(((size_t)nc + 1) * sizeof(MPI_Request));
    if (rc == MPI_SUCCESS && !req)
        rc = MPI_ERR_NO_MEM;
    for (k = 0; rc == MPI_SUCCESS && k < nc; k++)
        MPI_Isend(acc, n, MPI_FLOAT, clients[k], tag, MPI_COMM_WORLD, &req[k]);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall(nc, req, MPI_STATUSES_IGNORE);
        c->sent_bytes += (int64_t)n * 4 * nc;
    }
    free(req);
    free(acc);
    return rc;
}

int run_proxy_ring(run_ctx *c, const run_route *rt, float *buf)
{
    int S = rt->r.shards, s, me = -1, d, rc = MPI_SUCCESS, *members, *clients;
    if (rt->n == 0)
        return MPI_SUCCESS;
    for (d = 0; d < rt->ndev; d++)
        if (rt->dev[d] == c->rank)
            me = d;
    if (!buf && me < 0)
        return MPI_SUCCESS;
    members = malloc(((size_t)rt->ndev + 1) * sizeof *members);
    clients = malloc(((size_t)c->L->gpus + 1) * sizeof *clients);
    if (!members || !clients)
        rc = MPI_ERR_NO_MEM;
    for (s = 0; s < S && rc == MPI_SUCCESS; s++) {
        int64_t lo = rt->n * s / S;
        int len = (int)(rt->n * (s + 1) / S - lo);
        if (len == 0)
            continue;
        if (buf) {
            int h = home_of(c, rt, c->rank);
            rc = MPI_Sendrecv(buf + rt->off + lo, len, MPI_FLOAT, h, s, c->scratch, len,
                              MPI_FLOAT, h, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                memcpy(buf + rt->off + lo, c->scratch, (size_t)len * sizeof *buf);
            c->sent_bytes += (int64_t)len * 4;
        } else {
            rc = device_shard(c, rt, me, members, clients, len, s);
        }
    }
    free(members);
    free(clients);
    return rc;
}
