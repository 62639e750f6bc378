/*
 * run.h - coarse-run, the Open MPI executor of plan files: what its parts
 * share (docs/runtime.md).
 *
 * One MPI rank per participant of the plan: ranks 0 .. G-1 are the GPUs
 * (host-major, as the plan numbers them), ranks G .. G+D-1 the devices
 * (cpl_device_count: the proxies, then CPU sockets and pool memory devices).  Every GPU fills each
 * bucket's flat buffer with small integers (layout.c), every rank walks the
 * routes in the plan's global order and takes part in those that name it
 * (the GPUs are in every route), each route executed by the function of
 * its kind (allreduce.c, star.c, proxy_ring.c, pool.c); then check.c compares every
 * GPU's buffers with MPI_Allreduce of the same initial values, bit for bit.
 * The values are small integers, so every summation order gives the same
 * fp32 result and any difference is a routing error, not rounding.
 *
 * coarse-run links with libcoarseplan.a and MPI only (no GLPK, no planner).
 * Nothing below coarse_run.c prints or exits, except the watchdog's signal
 * handler (watchdog.c), which must.
 *
 * Ownership: run_layout_build fills a run_layout that run_layout_free
 * releases; the executors borrow everything they are given.
 */
#ifndef CP_RUN_H
#define CP_RUN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "coarse_plan.h"

/* Route kinds the executor knows, in the order its report lists them. */
typedef enum run_kind {
    RUN_ALLREDUCE, RUN_PROXY_BW, RUN_PROXY_LAT, RUN_PROXY_RING, RUN_PS, RUN_POOL, RUN_KINDS
} run_kind;

/* An error message for rank 0 to print; status 1 (internal) or 2 (input). */
typedef struct run_err {
    int status;
    char msg[512];
} run_err;

/* One bucket at the executor's scale: elements (fp32), not bytes. */
typedef struct run_bucket {
    int64_t nelem;      /* flat buffer length, elements */
    int64_t *tstart;    /* [ntensors + 1]: first element of each tensor; tstart[nt] = nelem */
    size_t ntensors;
} run_bucket;

/* One route of the plan, resolved for execution. */
typedef struct run_route {
    size_t bucket, index; /* where it is in the plan */
    cpl_route r;          /* as the plan gives it */
    run_kind kind;
    int64_t off, n;       /* element range [off, off + n) of the scaled bucket */
    int ndev;
    int *dev;             /* [ndev]: world ranks of the route's devices */
    int64_t chunk;        /* pool routes: the interleaving unit at scale, elements (>= 1) */
} run_route;

typedef struct run_layout {
    int gpus, hosts, ndev, nranks;
    /* the devices by what they are: proxies (named by a proxy-* route),
     * the pool's memory devices (by a pool route), CPU sockets (by ps) */
    int nproxy, npool, nsocket;
    int64_t scale;        /* --scale K: tensor elements divided by K */
    size_t nb, nr;
    run_bucket *b;        /* [nb] */
    run_route *r;         /* [nr], in the plan's global order */
    int *home;            /* [gpus]: proxy-ring home device's world rank, or -1 */
    int64_t max_elems;    /* largest bucket */
} run_layout;

/* The executor's state on one rank. */
typedef struct run_ctx {
    const cpl_plan *plan;
    const run_layout *L;
    int rank;
    MPI_Comm gpu_comm;    /* the GPU ranks; MPI_COMM_NULL on device ranks */
    float *scratch;       /* scratch_elems floats for receives */
    int64_t scratch_elems;
    int64_t sent_bytes;   /* bytes this rank has sent, running total */
    int fallback;         /* set when an allreduce route used MPI_Allreduce */
    int tag_ub;           /* MPI_TAG_UB: star.c tags each shard's messages with its index */
    struct run_pool *pool; /* pool.c's windows, between run_pool_open and run_pool_close */
} run_ctx;

/* layout.c ---------------------------------------------------------------- */

/* Fill e; returns status. */
int run_fail(run_err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Resolve the plan at scale K (>= 1): bucket and tensor element counts,
 * each route's element range and device ranks, proxy-ring homes. */
int run_layout_build(const cpl_plan *p, int64_t scale, run_layout *L, run_err *e);
void run_layout_free(run_layout *L);

/* "4 proxies", "6 pool memory devices + 3 CPU sockets": L's devices by
 * what they are, for the report; "" when there are none. */
void run_devices_text(const run_layout *L, char *buf, size_t cap);

/* The initial value of element i of bucket b on GPU g: a small integer. */
float run_value(int gpu, size_t bucket, int64_t i);

/* Fill GPU g's buffer of bucket b (L->b[b].nelem floats). */
void run_fill(const run_layout *L, int gpu, size_t bucket, float *buf);

/* Name of a kind, as in the plan. */
const char *run_kind_name(run_kind k);

/* The executors: route rt on this rank, buf the GPU's bucket buffer (NULL
 * on device ranks).  MPI_SUCCESS or an MPI error code. ------------------- */

int run_allreduce(run_ctx *c, const run_route *rt, float *buf);   /* allreduce.c */
int run_star(run_ctx *c, const run_route *rt, float *buf);        /* star.c: proxy-bw, proxy-lat, ps */
int run_proxy_ring(run_ctx *c, const run_route *rt, float *buf);  /* proxy_ring.c */
int run_pool(run_ctx *c, const run_route *rt, float *buf);        /* pool.c */

/* pool.c's RMA windows on the device ranks, collective over MPI_COMM_WORLD
 * (every rank, before the first route and after the last). */
int run_pool_open(run_ctx *c);
void run_pool_close(run_ctx *c);

/* Whether the allreduce executor mimics this algorithm in point-to-point
 * (else it calls MPI_Allreduce on the GPUs). */
int run_allreduce_mimics(const char *algorithm);

/* Ring primitives over `m` world ranks members[0..m-1], this rank at
 * position `me`, on buf[0..n), shared by allreduce.c and proxy_ring.c.
 * After the reduce-scatter, position p holds the sum of chunk (p + 1) % m
 * (chunk k = [k n / m, (k + 1) n / m)); the all-gather spreads those. */
int run_ring_reduce_scatter(run_ctx *c, const int *members, int m, int me, float *buf,
                            int64_t n, int tag);
int run_ring_all_gather(run_ctx *c, const int *members, int m, int me, float *buf,
                        int64_t n, int tag);

/* check.c ----------------------------------------------------------------- */

/* First difference between GPU g's buffers and the reference. */
typedef struct run_mismatch {
    int found;
    int gpu;
    size_t bucket, tensor;
    int64_t element;      /* within the tensor */
    float expected, got;
} run_mismatch;

/* Compare every GPU's buffers (bufs[b]) with MPI_Allreduce of the initial
 * values on the GPU communicator; on rank 0, *m is the first mismatch of
 * the lowest GPU that has one.  Collective over MPI_COMM_WORLD. */
int run_check(run_ctx *c, float *const *bufs, run_mismatch *m);

/* watchdog.c -------------------------------------------------------------- */

/* Abort this rank after `seconds` (0: never) with the last route it was in. */
void run_watchdog_start(int rank, double seconds);
/* Record that this rank is now in route rt (not NULL). */
void run_watchdog_at(const cpl_plan *p, const run_route *rt);
void run_watchdog_stop(void);

#endif
