/*
 * pool.h - collectives through a CXL memory pool shared by several hosts,
 * as GPUs really reach such a pool (docs/pool.md).
 *
 * A GPU moves data to and from the pool with cudaMemcpyAsync on registered
 * host memory: its copy engines (one per direction), each copy to or from
 * one device (the cards have no hardware interleaving), at most the rate
 * of the slowest thing on the copy's path (the engine, the GPU's link, its
 * host's port to the switch, the switch's port to the device, the device's
 * memory), each copy paying a fixed cost.  Writers publish every piece of
 * their data split into a number of chunks, a doorbell per chunk says it is
 * ready, readers pull it; publishing and pulling pipeline chunk by chunk.
 * Reductions are done by the GPUs on what they pulled (every rank reads
 * every contribution), or on the devices when every device of the pool
 * reduces (`reduce_gbs`).  One pipeline step moves one chunk of every
 * piece; the time of an operation on S bytes is
 *
 *     T = launch + doorbell + one step of the faster stream + chunks x step
 *
 * where a step takes as long as the busiest resource needs for its share
 * of the step: each GPU's publishing and pulling streams (their copies one
 * after another), its two engines together (the pull's loss while both run),
 * every link direction (all the copies crossing it), every device (eq.
 * PL1-PL6 in docs/pool.md).  That resource is the *binding resource*,
 * which --explain names.  AllReduce is priced two ways, as CCCL runs it
 * (every rank pulls every contribution) and as a reduce-scatter followed
 * by an all-gather through the pool; the faster is reported.
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

/* Default number of chunks each piece of a message is split into when
 * calibration.pool gives none: CCCL splits a message into a number of
 * chunks, 4 or 8 best at 1 GB; 8 is the one of the two this model's own
 * costs favour there (docs/pool.md, "Defaults"). */
#define CP_POOL_CHUNKS 8

/* The resources an operation through the pool can be bound by. */
typedef enum cp_pool_res {
    CP_PRES_COPY_WRITE, /* a GPU's publishing stream: its copies, one after another */
    CP_PRES_COPY_READ,  /* a GPU's pulling stream */
    CP_PRES_DUPLEX,     /* a GPU's two copy engines at once: the pull's loss */
    CP_PRES_LINK,       /* a link direction: the GPU's, the host's port, a switch port */
    CP_PRES_DEVICE,     /* a device's memory (read, write or combined rate) */
    CP_PRES_REDUCE,     /* a device's near-memory reduction */
    CP_PRES_KINDS
} cp_pool_res;

/* One call through the pool: what each resource needs, summed over the
 * pipeline's steps. */
typedef struct cp_pool_call {
    int op;                        /* the cp_xop this call runs in the pool */
    double us;                     /* launch + fill + steps x step */
    double launch_us;              /* the call's fixed cost */
    double fill_us;                /* the doorbell and one step of the faster stream */
    double step_us;                /* one pipeline step: the busiest resource's share */
    double res_us[CP_PRES_KINDS];  /* each resource's time over all steps (0: unused) */
    int res_where[CP_PRES_KINDS];  /* its worst instance: GPU node (copy engines), arc
                                    * (links), device node (device, reduce); -1 none */
    cp_pool_res bind;              /* the largest */
    int steps;                     /* pipeline steps: the chunks of each piece */
    int fanout;                    /* readers pulling one chunk from one device at once */
    long long copies;              /* copies on the busiest copy-engine stream */
    double copy_bytes;             /* bytes of each of them */
    double copy_us;                /* fixed cost of each of them */
} cp_pool_call;

/* Why an operation takes the time it takes. */
typedef struct cp_pool_why {
    cp_pool_call call[2];          /* the pool's calls: one, or RS and AG (AllReduce) */
    int ncalls;
    double pool_us;                /* the calls' time together */
    double launch_us;              /* the calls' launches, fills and resources summed, */
    double fill_us;                /* the binding resource the largest of the sums */
    double res_us[CP_PRES_KINDS];
    int res_where[CP_PRES_KINDS];  /* of the longer call */
    cp_pool_res bind;
    long long chunks;              /* copies on the busiest copy-engine stream, summed */
    double chunk_us;               /* fixed cost of each (the longer call's) */
    int device_reduces;            /* 1: the devices sum; 0: the GPUs do */
    double intra_us;               /* hierarchical: the in-host phases' time (0: flat) */
    int rsag;                      /* AllReduce: 1 when reduce-scatter + all-gather is
                                    * the faster form (and the one reported) */
    double direct_us, rsag_us;     /* AllReduce: both forms' pool parts; 0 otherwise */
} cp_pool_why;

typedef struct cp_pool {
    const cp_topo *topo;   /* borrowed */
    int nranks, nhosts;    /* GPUs taking part (all of the topology), hosts */
    int ndev;              /* pool devices */
    int *dev;              /* [ndev] node index of each device, owned */
    int *route_off;        /* [nranks * ndev + 1]: arcs of GPU r's route to device d */
    int *route_arc;        /* ... at route_arc[route_off[r * ndev + d] ..), GPU to device */
    double *path_w_gbs;    /* [nranks * ndev] a copy's path from GPU r to device d: its
                            * slowest link direction and the device's write rate, GB/s */
    double *path_r_gbs;    /* ... the reverse, with the device's read rate */
    double *copy_gbs;      /* [nranks] one copy engine's rate publishing, ... */
    double *copy_read_gbs; /* [nranks] ... and pulling, GB/s */
    double *load;          /* [arcs] bytes on each arc over the last operation timed */
    double *scratch;       /* [3 x arcs] owned, for cp_pool_time_us */
    int chunks;            /* chunks each piece is split into */
    double chunk_us;       /* fixed cost of one publishing copy */
    double chunk_read_us;  /* ... of one pulling copy */
    double duplex;         /* share of its rate the pull keeps while publishing runs */
    double small_bytes;    /* copies under this many bytes ... */
    double small_us;       /* ... take this long (0 bytes: never) */
    double doorbell_us;    /* a doorbell: writer's flag, reader's poll */
    double launch_us;      /* one call's fixed cost */
    double path_lat_us;    /* slowest GPU-to-device route's latency */
    int device_reduces;    /* every device has reduce_gbs */
    const cp_coll *coll;   /* borrowed, or NULL: the in-host phases (eq. PL7) */
    int per_host;          /* GPUs per host when the hierarchical form applies, else 0 */
} cp_pool;

/* 1 when the topology has a pool (a cxl_switch). */
int cp_pool_present(const cp_topo *t);

/* Build the model: routes from every GPU to every device of the pool and
 * each route's rate, copy-engine rates, chunk counts and costs
 * (calibration.pool or the defaults).
 * `c` (may be NULL: every operation flat) is the network's model of the
 * same topology, borrowed, for the in-host phases of the hierarchical form.
 * CP_EINPUT when the topology has no pool, or when a GPU cannot reach it
 * through its own host. */
int cp_pool_build(const cp_topo *t, const cp_coll *c, cp_pool *p, cp_err *e);

void cp_pool_free(cp_pool *p);

/* Predicted time in us of `op` on `bytes` (nccl-tests' size: the buffer of
 * AllReduce, Broadcast and Reduce, the whole gathered or scattered buffer
 * otherwise); *why (when not NULL) gets the breakdown, p->load the bytes
 * on each arc.  Not thread-safe: it uses the pool's scratch. */
double cp_pool_time_us(cp_pool *p, cp_xop op, double bytes, cp_pool_why *why);

/* Eq. PL8: time in us of every GPU pulling `rd` and publishing `wr` bytes
 * of its own (no exchange: offloaded optimizer states and parameter
 * shards), in the pool's chunks spread over the devices, both streams at
 * once; no doorbell, no fill.  *why when not NULL.  Not thread-safe. */
double cp_pool_copy_us(cp_pool *p, double rd, double wr, cp_pool_why *why);

/* What limits one copy between GPU rank g and device d (index into
 * p->dev), publishing (write 1) or pulling: its rate in GB/s into *gbs;
 * returns the arc of the slowest link direction when that is it, -1 when
 * the copy engine is, -2 when the device's memory is. */
int cp_pool_copy_limit(const cp_pool *p, int g, int d, int write, double *gbs);

/* Bytes of one chunk of a rank's piece of an AllReduce of `bytes` (the
 * unit a plan's pool routes interleave over the devices). */
double cp_pool_chunk_bytes(const cp_pool *p, double bytes);

/* "copy engine (write)", "copy engine (read)", "copy engines (both ways)",
 * "link", "device", "device reduction". */
const char *cp_pool_res_name(cp_pool_res r);

/* What a link arc of the pool is: "switch port" (switch to device), "host
 * link" (host to switch) or "GPU link" (inside the host). */
const char *cp_pool_arc_role(const cp_topo *t, int arc);

#endif
