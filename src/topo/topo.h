/*
 * topo.h - the system model: a machine (or several) as a graph of devices
 * joined by full-duplex links.
 *
 * Nodes are GPUs, CPU sockets, PCIe switches, NVSwitches, NICs, network
 * switches, memory devices (CXL-class expanders that can reduce gradients
 * near memory) and CXL switches.  A CXL switch and the memory devices
 * behind it form a *pool* shared by every host linked to the switch; its
 * nodes belong to no host (host -1).  A link joins two nodes and carries `gbs[0]` GB/s
 * (1e9 bytes/s) from a to b and `gbs[1]` from b to a at the same time, with a
 * one-way latency.  Each direction of a link is an *arc*: arc 2k is link k
 * a->b, arc 2k+1 is b->a; the planner's capacity rows are per arc.
 *
 * Ownership: a cp_topo owns all its strings and arrays.  Build one with
 * cp_topo_new / _add_node / _add_link / _index, or load one with
 * cp_topo_load (load/load.h).  Nothing here reads files or prints.
 */
#ifndef CP_TOPO_H
#define CP_TOPO_H

#include "core/err.h"

/* Limits, refused before allocating.  The largest case we plan for is 1024
 * hosts of 8 GPUs (8,192 GPUs, about 40,000 nodes); these leave 25x room. */
#define CP_MAX_NODES (1 << 20)
#define CP_MAX_LINKS (1 << 21)
#define CP_MAX_GPUS (1 << 18)
#define CP_MAX_HOSTS 16384

typedef enum cp_node_kind {
    CP_GPU, CP_CPU, CP_PCIE_SWITCH, CP_NVSWITCH, CP_NIC, CP_NET_SWITCH, CP_MEMDEV,
    CP_CXL_SWITCH, CP_NODE_KINDS
} cp_node_kind;

typedef enum cp_link_kind {
    CP_NVLINK, CP_PCIE, CP_CXL, CP_SOCKET, CP_NET, CP_LINK_KINDS
} cp_link_kind;

typedef struct cp_node {
    char *id;           /* unique name, owned */
    cp_node_kind kind;
    int host;           /* which server (0-based); -1 for fabric switches and pool nodes
                         * (CXL switches and the memory devices behind them) */
    char *model;        /* free-text part name ("V100-SXM2-16GB"), owned, may be NULL */
    double reduce_gbs;  /* GB/s of incoming data it can sum; 0 = cannot reduce */
    double mem_gbs;     /* internal memory bandwidth, read+write combined; 0 unknown */
    double capacity_gb; /* memory capacity, GB; 0 unknown */
    double net_gbs;     /* NICs: network port speed per direction, GB/s */
    double net_lat_us;  /* NICs: one-way latency through the fabric, us */
    double tflops;      /* GPUs: peak dense FP32 TFLOP/s (datasheet); 0 unknown */
    double tflops_fp16; /* GPUs: peak dense FP16/BF16 TFLOP/s, tensor cores where the part
                           has them (datasheet); 0 unknown */
    double tflops_fp8;  /* GPUs: peak dense FP8 TFLOP/s (Hopper and later, datasheet);
                           0: the part has no FP8 tensor cores */
    int sms;            /* GPUs: streaming multiprocessors (datasheet), for GEMM wave
                           quantisation (docs/model.md); 0 unknown */
    double read_gbs;    /* memory devices: GB/s the device's memory serves to reads, */
    double write_gbs;   /* ... and absorbs from writes (mem_gbs caps both together); 0 unknown */
    double access_lat_us; /* memory devices: load latency at the device, us; 0 unknown */
    int src_line;       /* line in the topology file, 0 if built in memory */
} cp_node;

typedef struct cp_link {
    int a, b;           /* node indices */
    cp_link_kind kind;
    double gbs[2];      /* GB/s per direction: [0] a->b, [1] b->a */
    double lat_us;      /* one-way latency, us */
    int src_line;       /* line in the topology file, 0 if built in memory */
} cp_link;

/* Per link-kind calibration from measured collectives (docs/calibration.md):
 * what fraction of the nominal bandwidth a collective achieves, the software
 * latency each step across such a link adds, and what NCCL's Simple protocol
 * adds to a step on top of that (docs/collectives.md, "Protocols"). */
/* Bounds a calibration must respect, shared by the loader and the fit: a
 * collective achieving under 0.1% of nominal bandwidth was fitted to the
 * wrong machine (the floor also keeps gbs x bw_eff, at least 1e-6 GB/s, far
 * from underflow), and no software step takes a second. */
#define CP_MIN_BW_EFF 1e-3
#define CP_MAX_STEP_US 1e6

typedef struct cp_calib_kind {
    double bw_eff;      /* achieved / nominal bandwidth, (0, 1]; 1 when uncalibrated */
    double step_us;     /* extra latency per algorithm step over this link kind, us */
    double simple_us;   /* Simple protocol's further latency per step, us; 0 when
                         * uncalibrated (then LL never wins: it has half the bandwidth) */
    double ll_eff;      /* LL's achieved / nominal bandwidth over such links, (0, 1]; 0:
                         * bw_eff x CP_LL_EFF, half of Simple's (the protocol's payload) */
} cp_calib_kind;

/* How GPUs move data through a CXL pool (docs/pool.md): one copy engine
 * per direction per GPU, each copy (cudaMemcpyAsync on registered memory)
 * to or from one device, a piece of data split into a number of chunks
 * that pipeline, each copy paying a fixed cost.  Zeros (and negative
 * costs) mean "derive from the topology" (docs/pool.md, "Defaults"). */
typedef struct cp_calib_pool {
    double copy_gbs;      /* one copy engine publishing (GPU to memory), GB/s; 0: the GPU's
                           * own link */
    double copy_read_gbs; /* one copy engine pulling (memory to GPU), GB/s; 0: copy_gbs */
    double duplex;        /* share of its rate the pulling engine keeps while the publishing
                           * one runs, (0, 1]; 0: 1 (no loss) */
    int chunks;           /* chunks each piece of a message is split into; 0: CP_POOL_CHUNKS */
    double chunk_us;      /* fixed cost of one publishing copy, us; < 0: launch_us + the
                           * doorbell */
    double chunk_read_us; /* fixed cost of one pulling copy, us; < 0: chunk_us */
    double small_copy_bytes; /* copies under this many bytes ... */
    double small_copy_us;    /* ... take this long instead, us; 0 bytes: no such cliff */
} cp_calib_pool;

typedef struct cp_calib {
    cp_calib_kind kind[CP_LINK_KINDS];
    cp_calib_pool pool;
    double launch_us;   /* fixed cost of one collective call (kernel launch, setup), us */
    double nvls_eff;    /* NVLS: achieved / effective NVLink rate of its multimem loads and
                         * stores, (0, 1]; 1 when uncalibrated (docs/calibration.md) */
    char net_fabric[16]; /* the named network calibration (topo/fabrics.h) the file gave,
                          * "" when none; its numbers are in kind[CP_NET] */
    int given;          /* 1 when the topology file carried a calibration block */
} cp_calib;

typedef struct cp_topo {
    char *name;         /* owned */
    char *src_path;     /* file it came from, owned, NULL if built in memory */
    cp_node *nodes;     /* owned */
    int nnodes, cap_nodes;
    cp_link *links;     /* owned */
    int nlinks, cap_links;
    cp_calib calib;
    double fabric_reduce_gbs; /* in-network reduction (SHARP) of the switch that --hosts
                               * joins hosts by, GB/s of incoming data; 0: none */
    double fabric_taper;      /* oversubscription of that network: each host's uplink
                               * carries its NICs' rate / taper; <= 1: non-blocking */
    /* filled by cp_topo_index: */
    int *gpus;          /* node indices of the GPUs, in file order */
    int ngpus;
    int nhosts;         /* 1 + the largest host number of any GPU */
    int *adj_off;       /* arcs leaving node v: adj_arc[adj_off[v] .. adj_off[v+1]) */
    int *adj_arc;
    /* set by cp_topo_replicate: */
    int rep_hosts;      /* number of copies, 0 when not a replica */
    struct cp_topo *rep_base; /* owned copy of the single-host source, or NULL */
} cp_topo;

/* Arc helpers: arc 2k+d is link k in direction d (0: a->b, 1: b->a). */
static inline int cp_arc_tail(const cp_topo *t, int arc)
{
    const cp_link *l = &t->links[arc >> 1];
    return (arc & 1) ? l->b : l->a;
}
static inline int cp_arc_head(const cp_topo *t, int arc)
{
    const cp_link *l = &t->links[arc >> 1];
    return (arc & 1) ? l->a : l->b;
}
static inline double cp_arc_gbs(const cp_topo *t, int arc)
{
    return t->links[arc >> 1].gbs[arc & 1];
}

/* Names used in files and output ("gpu", "pcie_switch"; "nvlink", "socket"). */
const char *cp_node_kind_name(cp_node_kind k);
const char *cp_link_kind_name(cp_link_kind k);

/* A new empty topology (NULL when out of memory); calibration defaults to
 * bw_eff 1, no extra latency. */
cp_topo *cp_topo_new(const char *name);

/* Free the topology and everything it owns.  NULL is a no-op. */
void cp_topo_free(cp_topo *t);

/* Append a node; returns its index, or -1 when out of memory or over the
 * limit.  The id is copied. */
int cp_topo_add_node(cp_topo *t, const char *id, cp_node_kind kind, int host);

/* Append a link; returns its index, or -1 when out of memory or over the
 * limit.  gbs_ba <= 0 means "same as gbs_ab". */
int cp_topo_add_link(cp_topo *t, int a, int b, cp_link_kind kind, double gbs_ab,
                     double gbs_ba, double lat_us);

/* Build the adjacency and the GPU list after the last add.  CP_EINPUT when
 * there is no GPU. */
int cp_topo_index(cp_topo *t, cp_err *e);

/* 1 when data may pass through node kind `k` on the way to somewhere else:
 * switches, CPU sockets and NICs; never a GPU, a memory device (endpoints)
 * or a CXL switch (it joins hosts to memory, not to each other).
 * connected.c. */
int cp_is_transit(cp_node_kind k);

/* A GPU that cannot reach some other GPU the way routes go (over a link
 * between them, or through transit nodes alone) except through a third
 * GPU, which then is a cut vertex no ring can pass twice; or that cannot
 * reach it at all.  Returns that GPU (-1 when there is none, -2 when out of
 * memory), the GPU it cannot reach in *peer, and in *via the GPU in the way
 * (for a GPU not reached at all: the GPU or memory device on the shortest
 * chain of links, cp_topo_blocking_node, -1 when there is no chain).
 * Needs cp_topo_index.  connected.c. */
int cp_topo_unreachable_gpu(const cp_topo *t, int *peer, int *via);

/* Why `from` cannot reach `to`: the node nearest `from` that is not a
 * transit kind on a shortest chain of links between them (a GPU or a
 * memory device the route would have to pass through); -1 when no chain of
 * links joins them at all, -2 when out of memory.  For messages.
 * connected.c. */
int cp_topo_blocking_node(const cp_topo *t, int from, int to);

/* A deep copy (indexed), or NULL when out of memory. */
cp_topo *cp_topo_clone(const cp_topo *src);

/* Multiply the bandwidth of every link of `kind` by f > 0, both directions
 * (what-if questions: "a network twice as fast").  For kind CP_NET the
 * NICs' port speeds too, and a replica's single-host base alike, so that
 * models built from either see the same machine. */
void cp_topo_scale_kind(cp_topo *t, cp_link_kind kind, double f);

/* Node index of `id`, or -1.  Linear: for lookups outside loading. */
int cp_topo_find(const cp_topo *t, const char *id);

/* Number of nodes of a kind. */
int cp_topo_count(const cp_topo *t, cp_node_kind k);

/* A new topology made of `nhosts` copies of the single-host `src`, every
 * copy's NICs joined to one non-blocking network switch by a net link of the
 * NIC's speed and half its NIC-to-NIC latency (two such links per crossing).  Ids become "h<k>/<id>".  CP_EINPUT when src
 * already has several hosts or has no NIC. */
int cp_topo_replicate(const cp_topo *src, int nhosts, cp_topo **out, cp_err *e);

/* The machine with only the first `per_host` GPUs (in file order) of each
 * host, as CUDA_VISIBLE_DEVICES=0..per_host-1 leaves a job: the other GPUs
 * and their links are dropped, everything else kept; named "NAME Ngpu".
 * CP_EINPUT when a host has fewer GPUs, or when what is left cannot reach
 * itself; *out is new (cp_topo_free). */
int cp_topo_subset(const cp_topo *src, int per_host, cp_topo **out, cp_err *e);

/* A copy of src named `name` holding only the nodes with keep[i] != 0 and
 * the links between them; a kept NIC's net_gbs is multiplied by
 * nic_scale[i] (NULL: unchanged).  Used to price a communication group on
 * its own GPUs and its share of the NICs (llm/groups.c).  Reachability is
 * the caller's to check.  CP_OK with *out owned by the caller. */
int cp_topo_pick(const cp_topo *src, const int *keep, const double *nic_scale, const char *name,
                 cp_topo **out, cp_err *e);

#endif
