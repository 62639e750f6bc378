/*
 * coarse_plan.h - loading coarse-plan plan files from a training runtime.
 *
 * A runtime (a PyTorch DDP communication hook, a Horovod backend, an MPI
 * program) opens the plan that `coarse-plan plan` wrote, verifies it against
 * the model it is about to train, and walks the buckets: which tensors each
 * bucket holds (name, byte offset, length, in a flat buffer) and how each
 * byte range of it is synchronised (route kind, algorithm, devices, shards,
 * and the global order every GPU and proxy must follow).
 *
 * Link with libcoarseplan.a and -ljansson.  The library needs neither GLPK
 * nor the planner.  Format: docs/plan-format.md ("format": "coarse-plan/1",
 * and "coarse-plan/2" for plans with routes through a shared CXL pool).
 *
 * Errors: functions returning int give 0 on success and -1 on failure; when
 * an `err` buffer is passed, it receives one line: "FILE:LINE:COL: what is
 * wrong" for a bad file, or the first difference for a model mismatch.
 * A mismatch is always an error: there is no silent fallback.
 *
 * Ownership: cpl_open returns a new plan the caller releases with cpl_close
 * (NULL is a no-op).  Strings returned by the accessors are borrowed from
 * the plan and valid until cpl_close.
 */
#ifndef COARSE_PLAN_H
#define COARSE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CPL_FORMAT "coarse-plan/1"
#define CPL_FORMAT_POOL "coarse-plan/2"

typedef struct cpl_plan cpl_plan;

typedef struct cpl_bucket {
    size_t id;          /* position, 0-based; also the processing order of buckets */
    int64_t bytes;      /* flat buffer size */
    double ready_ms;    /* predicted: when backward has produced every tensor in it */
    size_t ntensors;
    size_t nroutes;
} cpl_bucket;

typedef struct cpl_tensor {
    const char *name;   /* parameter name as the framework registers it */
    int64_t offset;     /* byte offset in the bucket's flat buffer */
    int64_t bytes;      /* gradient bytes */
} cpl_tensor;

typedef struct cpl_route {
    int order;             /* global order: process routes by increasing order */
    const char *kind;      /* "allreduce", "proxy-bw", "proxy-lat", "proxy-ring", "ps",
                            * "pool" (format 2) */
    const char *algorithm; /* e.g. "ring", "nvls", "proxy-bw" */
    int64_t offset;        /* byte range [offset, offset + bytes) of the bucket */
    int64_t bytes;
    int shards;            /* equal shards the range is cut into */
    size_t ndevices;       /* memory devices or CPU sockets involved (0: GPUs only) */
    size_t npool_slots;    /* "pool" routes: one slot per host (cpl_get_pool_slot); else 0 */
    int64_t pool_chunk_bytes; /* "pool" routes: interleaving unit over the devices */
} cpl_route;

/* Where a host publishes its contribution to a "pool" route: bytes at
 * [offset, offset + bytes) of the pool's shared region, interleaved over
 * the route's devices in pool_chunk_bytes units (chunk k on device k mod
 * ndevices); it reads every other host's slot. */
typedef struct cpl_pool_slot {
    int host;
    int64_t offset;
    int64_t bytes;
} cpl_pool_slot;

/* Open and validate a plan: structure, byte ranges, orders (deadlock-free). */
int cpl_open(const char *path, cpl_plan **out, char *err, size_t errlen);
void cpl_close(cpl_plan *p);

const char *cpl_model_name(const cpl_plan *p);
const char *cpl_topology_name(const cpl_plan *p);
int cpl_gpu_count(const cpl_plan *p);
int cpl_split_layer(const cpl_plan *p);
double cpl_predicted_iteration_ms(const cpl_plan *p);

/* Check that the plan is for these tensors: the same names with the same
 * gradient bytes, in registration order (ntensors of them).  On mismatch,
 * err names the first difference. */
int cpl_verify(const cpl_plan *p, size_t ntensors, const char *const *names,
               const int64_t *bytes, char *err, size_t errlen);

size_t cpl_bucket_count(const cpl_plan *p);
int cpl_get_bucket(const cpl_plan *p, size_t bucket, cpl_bucket *out);
int cpl_get_tensor(const cpl_plan *p, size_t bucket, size_t k, cpl_tensor *out);
int cpl_get_route(const cpl_plan *p, size_t bucket, size_t k, cpl_route *out);

/* Name of device d of a route, or NULL when out of range. */
const char *cpl_route_device(const cpl_plan *p, size_t bucket, size_t route, size_t d);

/* The planner's predicted start and finish of a route, ms from the start
 * of the iteration (0 when the plan does not say); -1 when out of range. */
int cpl_route_times(const cpl_plan *p, size_t bucket, size_t route, double *start_ms,
                    double *finish_ms);

/* topology.hosts (1 when the plan does not say); GPUs are host-major, as
 * many on each host. */
int cpl_host_count(const cpl_plan *p);
/* model.dtype ("fp32", "fp16", "bf16"), or NULL when the plan does not say. */
const char *cpl_dtype(const cpl_plan *p);

/* The participants besides the GPUs: every device some route names, the
 * plan's `proxies` first in their order, then the others (CPU sockets, a
 * pool's memory devices) in order of first mention.  A runtime with one process per participant
 * gives GPU g rank g and device d rank cpl_gpu_count() + d. */
size_t cpl_device_count(const cpl_plan *p);
const char *cpl_device_name(const cpl_plan *p, size_t d); /* NULL when out of range */
/* Participant index (as above) of device d of a route, or -1. */
int cpl_route_device_index(const cpl_plan *p, size_t bucket, size_t route, size_t d);
/* proxy-ring: the participant device GPU `gpu` pushes to (the plan's
 * `proxies[].ring_clients`), or -1 when the plan does not say. */
int cpl_ring_home(const cpl_plan *p, int gpu);

/* The large-model layout of a plan made with `plan --tp ...` (its "layout"
 * object): the plan synchronises stage `stage`'s gradients over one
 * data-parallel group of `group_gpus` GPUs on `group_hosts` hosts (the
 * plan's GPUs).  net_gbs: the NIC rate the plan was made with, 0 the
 * topology's own. */
typedef struct cpl_layout {
    int tp, pp, vp, cp, dp, mbs, gbs;
    long long seq;
    int stage;
    int group_gpus, group_hosts;
    long long stage_params;
    double net_gbs;
} cpl_layout;

/* 0 and *out when the plan has a layout; -1 for a data-parallel plan. */
int cpl_get_layout(const cpl_plan *p, cpl_layout *out);

/* Slot k of a "pool" route (0 .. npool_slots - 1); -1 when out of range. */
int cpl_get_pool_slot(const cpl_plan *p, size_t bucket, size_t route, size_t k,
                      cpl_pool_slot *out);

#ifdef __cplusplus
}
#endif

#endif
