/*
 * pool.h - collectives through a CXL memory pool shared by several hosts,
 * as such a pool runs them (docs/pool.md).
 *
 * Writers publish chunks into device memory by DMA through their host (one
 * GPU copy engine per direction), a doorbell per chunk says a chunk is
 * ready, readers pull it.  Reductions are done by the GPUs on what they
 * pulled (every rank reads every contribution), or on the devices when every
 * device of the pool reduces (`reduce_gbs`).  Chunks are interleaved over
 * the devices in software, so each rank's bytes spread evenly over them.
 * The time of an operation on S bytes is
 *
 *     T = launch + fill + max( copy engines, links, devices, device reduction )
 *
 * each term the bytes that resource carries over its rate (the copy
 * engines' also pay a fixed cost per chunk), fill the first chunk's
 * publication and doorbell before readers can start (a two-stage pipeline,
 * eq. PL1-PL6 in docs/pool.md).  The largest term is the *binding
 * resource*, which --explain names.
 *
 * The operations are NCCL's four, whose ids equal cp_coll_op's, and the
 * four nccl-tests also measures: Reduce, Gather, Scatter, AlltoAll.
 *
 * Hosts of several GPUs (given the network's model, cp_coll) run AllReduce,
 * ReduceScatter and AllGather hierarchically, as NCCL's and Horovod's
 * hierarchical forms do: a reduce-scatter inside every host over its own
 * fabric, the pool among each GPU's peers on the other hosts (all peer
 * groups at once, 1/G of the bytes each), an all-gather inside every host
 * (eq. PL7).  The other operations run flat, every GPU a rank of the pool.
 *
 * Ownership: a cp_pool owns its arrays (cp_pool_free) and borrows the
 * topology, which must outlive it.
 */
#ifndef CP_POOL_H
#define CP_POOL_H

#include "cost/collective.h"

typedef enum cp_xop {
    CP_XOP_ALLREDUCE = CP_OP_ALLREDUCE,
    CP_XOP_REDUCESCATTER = CP_OP_REDUCESCATTER,
    CP_XOP_ALLGATHER = CP_OP_ALLGATHER,
    CP_XOP_BROADCAST = CP_OP_BROADCAST,
    CP_XOP_REDUCE = CP_OPS,
    CP_XOP_GATHER,
    CP_XOP_SCATTER,
    CP_XOP_ALLTOALL,
    CP_XOPS
} cp_xop;

/* "allreduce", ..., "reduce", "gather", "scatter", "alltoall". */
const char *cp_xop_name(cp_xop op);

/* nccl-tests' bus-bandwidth factor: cp_coll_busbw_factor for NCCL's four;
 * reduce 1, gather, scatter and alltoall (n-1)/n. */
double cp_xop_busbw_factor(cp_xop op, int nranks);

/* Default bytes per pipelined chunk when calibration.pool gives none:
 * 4 MiB, an ASSUMPTION (docs/pool.md, "Defaults"). */
#define CP_POOL_CHUNK_BYTES 4194304.0

/* The resources an operation through the pool can be bound by. */
typedef enum cp_pool_res {
    CP_PRES_COPY_WRITE, /* a GPU's copy engine publishing (device-bound DMA) */
    CP_PRES_COPY_READ,  /* a GPU's copy engine pulling */
    CP_PRES_LINK,       /* a link direction: the GPU's, the host's port, a switch port */
    CP_PRES_DEVICE,     /* a device's memory (read, write or combined rate) */
    CP_PRES_REDUCE,     /* a device's near-memory reduction */
    CP_PRES_KINDS
} cp_pool_res;

/* Why an operation takes the time it takes. */
typedef struct cp_pool_why {
    double launch_us;              /* one call's fixed cost */
    double fill_us;                /* first chunk published + doorbell */
    double res_us[CP_PRES_KINDS];  /* each resource's time (0: unused) */
    int res_where[CP_PRES_KINDS];  /* its worst instance: GPU node (copy engines), arc
                                    * (links), device node (device, reduce); -1 none */
    cp_pool_res bind;              /* the largest */
    double chunk_us;               /* the fixed cost per chunk */
    long long chunks;              /* chunks on the busiest copy-engine stream */
    int device_reduces;            /* 1: the devices sum; 0: the GPUs do */
    double intra_us;               /* hierarchical: the in-host phases' time (0: flat) */
} cp_pool_why;

typedef struct cp_pool {
    const cp_topo *topo;   /* borrowed */
    int nranks, nhosts;    /* GPUs taking part (all of the topology), hosts */
    int ndev;              /* pool devices */
    int *dev;              /* [ndev] node index of each device, owned */
    int *route_off;        /* [nranks * ndev + 1]: arcs of GPU r's route to device d */
    int *route_arc;        /* ... at route_arc[route_off[r * ndev + d] ..), GPU to device */
    double *copy_gbs;      /* [nranks] one copy engine's rate publishing, ... */
    double *copy_read_gbs; /* [nranks] ... and pulling, GB/s */
    double *load;          /* [arcs] scratch for cp_pool_time_us, owned */
    double chunk_bytes;    /* bytes per chunk */
    double chunk_us;       /* fixed cost per chunk */
    double doorbell_us;    /* a doorbell: writer's flush, reader's re-read */
    double launch_us;      /* one call's fixed cost */
    double path_lat_us;    /* slowest GPU-to-device route's latency */
    int device_reduces;    /* every device has reduce_gbs */
    const cp_coll *coll;   /* borrowed, or NULL: the in-host phases (eq. PL7) */
    int per_host;          /* GPUs per host when the hierarchical form applies, else 0 */
} cp_pool;

/* 1 when the topology has a pool (a cxl_switch). */
int cp_pool_present(const cp_topo *t);

/* Build the model: routes from every GPU to every device of the pool,
 * copy-engine rates, chunk costs (calibration.pool or the defaults).
 * `c` (may be NULL: every operation flat) is the network's model of the
 * same topology, borrowed, for the in-host phases of the hierarchical form.
 * CP_EINPUT when the topology has no pool, or when a GPU cannot reach it
 * through its own host. */
int cp_pool_build(const cp_topo *t, const cp_coll *c, cp_pool *p, cp_err *e);

void cp_pool_free(cp_pool *p);

/* Predicted time in us of `op` on `bytes` (nccl-tests' size: the buffer of
 * AllReduce, Broadcast and Reduce, the whole gathered or scattered buffer
 * otherwise); *why (when not NULL) gets the breakdown.  Not thread-safe:
 * it uses the pool's scratch. */
double cp_pool_time_us(cp_pool *p, cp_xop op, double bytes, cp_pool_why *why);

/* Eq. PL8: time in us of every GPU pulling `rd` and publishing `wr` bytes
 * of its own (no exchange: offloaded optimizer states and parameter
 * shards), spread over the devices, both streams at once; no doorbell.
 * *why when not NULL.  Not thread-safe. */
double cp_pool_copy_us(cp_pool *p, double rd, double wr, cp_pool_why *why);

/* "copy engine (write)", "copy engine (read)", "link", "device",
 * "device reduction". */
const char *cp_pool_res_name(cp_pool_res r);

/* What a link arc of the pool is: "switch port" (switch to device), "host
 * link" (host to switch) or "GPU link" (inside the host). */
const char *cp_pool_arc_role(const cp_topo *t, int arc);

#endif
