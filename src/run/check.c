/*
 * check.c - the bit-exact check: after the plan has run, every GPU's
 * buffers must hold, bit for bit, what MPI_Allreduce of the same initial
 * buffers over the GPUs gives (see run.h for why exactness is the right
 * test).  Each GPU finds its first differing element; rank 0 gathers them
 * and keeps the lowest GPU's, with the bucket, tensor and element.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

/* Tensor of element i of bucket b, and i's index within it. */
static void locate(const run_bucket *rb, int64_t i, size_t *tensor, int64_t *elem)
{
    size_t t = 0;
    while (t + 1 < rb->ntensors && rb->tstart[t + 1] <= i)
        t++;
    *tensor = t;
    *elem = i - rb->tstart[t];
}

/* The same bits (not the same value: -0 and +0 differ, NaNs may match). */
static int same_bits(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* This GPU's first mismatch, into m. */
static int check_gpu(run_ctx *c, float *const *bufs, run_mismatch *m)
{
    const run_layout *L = c->L;
    size_t b;
    int rc = MPI_SUCCESS;
    for (b = 0; b < L->nb && rc == MPI_SUCCESS; b++) {
        int64_t i, n = L->b[b].nelem;
        run_fill(L, c->rank, b, c->scratch);
        rc = MPI_Allreduce(MPI_IN_PLACE, c->scratch, (int)n, MPI_FLOAT, MPI_SUM, c->gpu_comm);
        if (rc != MPI_SUCCESS || m->found)
            continue;
        for (i = 0; i < n && same_bits(c->scratch[i], bufs[b][i]); i++)
            ;
        if (i == n)
            continue;
        m->found = 1;
        m->gpu = c->rank;
        m->bucket = b;
        locate(&L->b[b], i, &m->tensor, &m->element);
        m->expected = c->scratch[i];
        m->got = bufs[b][i];
    }
    return rc;
}

int run_check(run_ctx *c, float *const *bufs, run_mismatch *m)
{
    double mine[7] = {0}, *all = NULL;
    int r, rc = MPI_SUCCESS, nranks = c->L->nranks;
    memset(m, 0, sizeof *m);
    if (c->gpu_comm != MPI_COMM_NULL)
        rc = check_gpu(c, bufs, m);
    mine[0] = m->found;
    mine[1] = m->gpu;
    mine[2] = (double)m->bucket;
    mine[3] = (double)m->tensor;
    mine[4] = (double)m->element;
    mine[5] = m->expected;
    mine[6] = m->got;
    if (c->rank == 0 && !(all = malloc((size_t)nranks * sizeof mine)))
        return MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Gather(mine, 7, MPI_DOUBLE, all, 7, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (c->rank == 0 && rc == MPI_SUCCESS) {
        memset(m, 0, sizeof *m);
        for (r = 0; r < nranks && !m->found; r++)
            if (all[(size_t)7 * r] != 0) {
                m->found = 1;
                m->gpu = (int)all[(size_t)7 * r + 1];
                m->bucket = (size_t)all[(size_t)7 * r + 2];
                m->tensor = (size_t)all[(size_t)7 * r + 3];
                m->element = (int64_t)all[(size_t)7 * r + 4];
                m->expected = (float)all[(size_t)7 * r + 5];
                m->got = (float)all[(size_t)7 * r + 6];
            }
    }
    free(all);
    return rc;
}
