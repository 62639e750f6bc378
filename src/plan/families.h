/*
 * families.h - the ways a gradient byte can be synchronised on a machine
 * with memory devices, each reduced to a cost line and a resource footprint.
 *
 * A family is one kind of route, already optimised on its own:
 *   allreduce   AllReduce among the GPUs: the fastest of NCCL's ring, tree,
 *               NVLS and the hierarchical scheme for the bucket's size
 *               (collective.h);
 *   proxy-bw    push-reduce-pull through memory devices, the bucket sharded
 *               across them in the proportions that maximise throughput (a
 *               packing LP over one route per device: every GPU pushes its
 *               shard to the device, the device sums, every GPU pulls);
 *               remote devices win when the bus is anti-local;
 *   proxy-lat   the same through the one device with the lowest latency:
 *               what small, latency-bound buckets want (COARSE's LatProxy);
 *   proxy-ring  decentralised: every GPU pushes to its nearest device, the
 *               devices all-reduce among themselves over two rings running
 *               in opposite directions, every GPU pulls from its device;
 *   ps          the parameter server in CPU memory (collective.h, eq. C10).
 * Each has a time for a whole bucket T_f(S) = lat + S / rate (allreduce:
 * the collective model's own), the per-byte load it puts on every link
 * direction and reducer (for --explain and to find which families compete
 * for the same links), and a sharing group: two families that would
 * together overload some link or reducer when both run at full speed share a
 * group and are scheduled one after another; groups run concurrently
 * (docs/planner.md).
 *
 * Memory-device families need one host; on several hosts they are marked
 * unavailable with the reason.
 *
 * Ownership: cp_families owns everything in it; cp_families_free releases.
 */
#ifndef CP_FAMILIES_H
#define CP_FAMILIES_H

#include "cost/collective.h"
#include "cost/pack.h"
#include "cost/pool.h"

typedef enum cp_fam_kind {
    CP_FAM_ALLREDUCE, CP_FAM_PROXY_BW, CP_FAM_PROXY_LAT, CP_FAM_PROXY_RING, CP_FAM_PS,
    CP_FAM_POOL,    /* through the shared CXL pool (pool_family.c) */
    CP_FAMS
} cp_fam_kind;

/* Most memory devices a family can spread over. */
#define CP_FAM_MAX_DEV 64

typedef struct cp_family {
    cp_fam_kind kind;
    int available;
    char why_not[160];
    double gbs;            /* bucket bytes per second when running alone, GB/s */
    double lat_us;         /* per bucket: launch + push/pull hops (not allreduce) */
    int ndev;              /* memory devices (or CPU sockets) used */
    int dev[CP_FAM_MAX_DEV];      /* their node ids */
    double share[CP_FAM_MAX_DEV]; /* fraction of the family's bytes on each */
    int *client_dev;       /* proxy-ring: [gpu rank] node id of its device; else NULL */
    cp_pattern load;       /* resource loads per GB/s of bucket bytes */
    cp_packing pk;         /* binding resources and their duals (GB/s per GB/s) */
    int group;             /* sharing group, 0 .. ngroups-1 */
} cp_family;

typedef struct cp_families {
    const cp_topo *topo;   /* borrowed */
    const cp_coll *coll;   /* borrowed: the machine's collective model */
    cp_family f[CP_FAMS];
    int ngroups;
    int nmemdev;           /* memory devices that can reduce */
    cp_pool *pool;         /* owned: the CXL pool's model for the pool family, or NULL */
    int gpu_mpi;           /* 1: the allreduce family is MPI's, staged through host
                              memory (cp_families_use_mpi); 0: NCCL's */
} cp_families;

const char *cp_fam_name(cp_fam_kind k);

/* Build every family for topology t with its collective model c. */
int cp_families_build(const cp_topo *t, const cp_coll *c, cp_families *fs, cp_err *e);
void cp_families_free(cp_families *fs);

/* Make the allreduce family MPI AllReduce staged through host memory
 * (gpu_mpi.c): its time from the collective model's cp_mpi, its footprint
 * every GPU's PCIe path to its socket and back; unavailable with the
 * reason when the machine has no host memory path.  Regroups.  CP_OK or
 * CP_EINTERNAL. */
int cp_families_use_mpi(cp_families *fs, cp_err *e);

/* The `pool` route family (pool_family.c): a bucket's bytes all-reduced
 * through the machine's shared CXL pool (cost/pool.h), on hosts of several
 * GPUs in the hierarchical form (reduce-scatter inside each host, the pool
 * across hosts, all-gather inside: docs/pool.md eq. PL7), so that the LP
 * can split each bucket between the network's collectives and the pool
 * (docs/planner.md, "Across hosts").
 *
 * Fill fs->f[CP_FAM_POOL] (available only with a pool and several GPUs):
 * its rate and latency from the pool model's line between 64 MiB and
 * 1 GiB, its per-byte loads on the pool's links (`load`: CP_NRES scratch),
 * the pool's devices; builds fs->pool (owned by fs). */
int cp_pool_family_build(const cp_topo *t, const cp_coll *c, cp_families *fs, double *load,
                         cp_err *e);

/* Time in us of the pool family on a bucket of `bytes`: the pool model's. */
double cp_pool_family_time_us(const cp_families *fs, double bytes);

/* --gpu-collective: "nccl" -> 0, "mpi" -> 1 in *gpu_mpi; 0, or -1 for any
 * other name. */
int cp_gpu_collective_parse(const char *name, int *gpu_mpi);

/* Recompute the sharing groups after a family changed. */
void cp_families_regroup(cp_families *fs);

/* Per-byte loads (CP_NRES entries) of the route that serves every GPU
 * through one device `dev` (push, sum, pull), and its hop latency; 0, or -1
 * when a GPU cannot reach the device. */
int cp_device_load(const cp_topo *t, int dev, double *load, double *lat_us);

/* Time in us for family k to synchronise a whole bucket of `bytes`;
 * negative when unavailable.  *how names the algorithm or route. */
double cp_family_time_us(const cp_families *fs, cp_fam_kind k, double bytes,
                         const char **how);

#endif
