/*
 * allreduce.c - `allreduce` routes: the GPUs sum the route's range among
 * themselves with the route's algorithm, written in MPI point-to-point so
 * that the bytes take the paths the algorithm gives them (docs/runtime.md):
 *
 *   ring  reduce-scatter then all-gather around the GPUs (MPI_Sendrecv),
 *         m - 1 steps each, chunk k = [k n / m, (k + 1) n / m);
 *   tree  a binary tree (GPU g's children 2g + 1, 2g + 2): sums go up to
 *         GPU 0, the result comes back down;
 *   nvls  in-switch reduction: every GPU of a host sends its range to the
 *         switch's stand-in (the host's first GPU), which sums and sends the
 *         result back; on several hosts the stand-ins ring-all-reduce first;
 *   hier  intra-host reduce-scatter, all-reduce of each GPU's chunk among the
 *         GPUs of the same local index on every host, intra-host all-gather.
 *
 * Any other algorithm (collnet) is MPI_Allreduce on the GPU communicator,
 * and the report says so.  A route of S shards runs shard after shard (a
 * runtime pipelines them; the sums are the same).  Device ranks take no
 * part.  The ring primitives are shared with proxy_ring.c.
 */
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

static const char *const mimicked[] = {"ring", "tree", "nvls", "hier", NULL};

int run_allreduce_mimics(const char *algorithm)
{
    int k;
    for (k = 0; mimicked[k]; k++)
        if (strcmp(algorithm, mimicked[k]) == 0)
            return 1;
    return 0;
}

static int64_t chunk_lo(int64_t n, int m, int k)
{
    return n * k / m;
}

static void add(float *dst, const float *src, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++)
        dst[i] += src[i];
}

/* Chunk k of buf[0..n) among m: start and length. */
static void chunk(int64_t n, int m, int k, int64_t *lo, int *len)
{
    k = ((k % m) + m) % m;
    *lo = chunk_lo(n, m, k);
    *len = (int)(chunk_lo(n, m, k + 1) - *lo);
}

int run_ring_reduce_scatter(run_ctx *c, const int *members, int m, int me, float *buf,
                            int64_t n, int tag)
{
    int s, rc = MPI_SUCCESS, right = members[(me + 1) % m], left = members[(me + m - 1) % m];
    for (s = 0; s < m - 1 && rc == MPI_SUCCESS; s++) {
        int64_t slo, rlo;
        int slen, rlen;
        chunk(n, m, me - s, &slo, &slen);
        chunk(n, m, me - s - 1, &rlo, &rlen);
        rc = MPI_Sendrecv(buf + slo, slen, MPI_FLOAT, right, tag, c->scratch, rlen, MPI_FLOAT,
                          left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        add(buf + rlo, c->scratch, rlen);
        c->sent_bytes += (int64_t)slen * 4;
    }
    return rc;
}

int run_ring_all_gather(run_ctx *c, const int *members, int m, int me, float *buf, int64_t n,
                        int tag)
{
    int s, rc = MPI_SUCCESS, right = members[(me + 1) % m], left = members[(me + m - 1) % m];
    for (s = 0; s < m - 1 && rc == MPI_SUCCESS; s++) {
        int64_t slo, rlo;
        int slen, rlen;
        chunk(n, m, me + 1 - s, &slo, &slen);
        chunk(n, m, me - s, &rlo, &rlen);
        rc = MPI_Sendrecv(buf + slo, slen, MPI_FLOAT, right, tag, buf + rlo, rlen, MPI_FLOAT,
                          left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        c->sent_bytes += (int64_t)slen * 4;
    }
    return rc;
}

static int ring(run_ctx *c, const int *members, int m, int me, float *buf, int64_t n, int tag)
{
    int rc = run_ring_reduce_scatter(c, members, m, me, buf, n, tag);
    return rc == MPI_SUCCESS ? run_ring_all_gather(c, members, m, me, buf, n, tag) : rc;
}

/* Binary tree over GPUs 0 .. G-1: reduce to 0, broadcast back. */
static int tree(run_ctx *c, int G, float *buf, int64_t n, int tag)
{
    int g = c->rank, k, rc = MPI_SUCCESS;
    for (k = 1; k <= 2 && rc == MPI_SUCCESS; k++)
        if (2 * g + k < G) {
            rc = MPI_Recv(c->scratch, (int)n, MPI_FLOAT, 2 * g + k, tag, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
            add(buf, c->scratch, n);
        }
    if (rc == MPI_SUCCESS && g > 0) {
        rc = MPI_Sendrecv(buf, (int)n, MPI_FLOAT, (g - 1) / 2, tag, buf, (int)n, MPI_FLOAT,
                          (g - 1) / 2, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        c->sent_bytes += n * 4;
    }
    for (k = 1; k <= 2 && rc == MPI_SUCCESS; k++)
        if (2 * g + k < G) {
            rc = MPI_Send(buf, (int)n, MPI_FLOAT, 2 * g + k, tag, MPI_COMM_WORLD);
            c->sent_bytes += n * 4;
        }
    return rc;
}

/* In-switch reduction: the host's first GPU stands in for its switch;
 * members: scratch of G ints. */
static int nvls(run_ctx *c, int *members, float *buf, int64_t n, int tag)
{
    const run_layout *L = c->L;
    int per = L->gpus / L->hosts, host = c->rank / per, lead = host * per, k, rc = MPI_SUCCESS;
    if (c->rank != lead) {
        rc = MPI_Sendrecv(buf, (int)n, MPI_FLOAT, lead, tag, buf, (int)n, MPI_FLOAT, lead, tag,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        c->sent_bytes += n * 4;
        return rc;
    }
    for (k = 1; k < per && rc == MPI_SUCCESS; k++) {
        rc = MPI_Recv(c->scratch, (int)n, MPI_FLOAT, lead + k, tag, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
        add(buf, c->scratch, n);
    }
    for (k = 0; k < L->hosts; k++)
        members[k] = k * per;
    if (rc == MPI_SUCCESS && L->hosts > 1)
        rc = ring(c, members, L->hosts, host, buf, n, tag);
    for (k = 1; k < per && rc == MPI_SUCCESS; k++) {
        rc = MPI_Send(buf, (int)n, MPI_FLOAT, lead + k, tag, MPI_COMM_WORLD);
        c->sent_bytes += n * 4;
    }
    return rc;
}

/* Hierarchical: reduce-scatter in the host, all-reduce across hosts of
 * the chunk this GPU holds, all-gather in the host. */
static int hier(run_ctx *c, int *members, float *buf, int64_t n, int tag)
{
    const run_layout *L = c->L;
    int per = L->gpus / L->hosts, host = c->rank / per, p = c->rank % per, h, rc;
    int64_t lo;
    int len;
    for (h = 0; h < per; h++)
        members[h] = host * per + h;
    rc = run_ring_reduce_scatter(c, members, per, p, buf, n, tag);
    chunk(n, per, p + 1, &lo, &len);
    for (h = 0; h < L->hosts; h++)
        members[h] = h * per + p;
    if (rc == MPI_SUCCESS && L->hosts > 1)
        rc = ring(c, members, L->hosts, host, buf + lo, len, tag);
    for (h = 0; h < per; h++)
        members[h] = host * per + h;
    return rc == MPI_SUCCESS ? run_ring_all_gather(c, members, per, p, buf, n, tag) : rc;
}

/* One shard [0, n) of the route with its algorithm; members: scratch of
 * G ints. */
static int one_shard(run_ctx *c, const run_route *rt, int *members, float *buf, int64_t n,
                     int tag)
{
    const char *alg = rt->r.algorithm;
    int g, G = c->L->gpus;
    if (strcmp(alg, "tree") == 0)
        return tree(c, G, buf, n, tag);
    if (strcmp(alg, "nvls") == 0)
        return nvls(c, members, buf, n, tag);
    if (strcmp(alg, "hier") == 0)
        return hier(c, members, buf, n, tag);
    for (g = 0; g < G; g++)
        members[g] = g;
    return ring(c, members, G, c->rank, buf, n, tag);
}

int run_allreduce(run_ctx *c, const run_route *rt, float *buf)
{
    int s, S = rt->r.shards, rc = MPI_SUCCESS, tag = rt->r.order % 32767;
    int *members;
    if (!buf || c->L->gpus < 2 || rt->n == 0)
        return MPI_SUCCESS;
    if (!run_allreduce_mimics(rt->r.algorithm)) {
        c->fallback = 1;
        c->sent_bytes += rt->n * 4;
        return MPI_Allreduce(MPI_IN_PLACE, buf + rt->off, (int)rt->n, MPI_FLOAT, MPI_SUM,
                             c->gpu_comm);
    }
    members = malloc((size_t)c->L->gpus * sizeof *members);
    if (!members)
        return MPI_ERR_NO_MEM;
    for (s = 0; s < S && rc == MPI_SUCCESS; s++) {
        int64_t lo = rt->n * s / S, hi = rt->n * (s + 1) / S;
        if (hi > lo)
            rc = one_shard(c, rt, members, buf + rt->off + lo, hi - lo, tag);
    }
    free(members);
    return rc;
}
