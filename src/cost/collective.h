/*
 * collective.h - predicted time of NCCL-style collectives on a topology.
 *
 * For each operation (AllReduce, ReduceScatter, AllGather, Broadcast) and
 * algorithm (ring, tree, NVLS in-switch reduction, hierarchical multi-host,
 * a parameter server in CPU memory and CollNet in-network reduction for
 * AllReduce)
 * the model is a sum of at most three phases, each an alpha-beta term:
 *
 *     T(S) = launch + sum over phases ( lat_us + factor x S / bw )
 *
 * once per NCCL protocol (docs/collectives.md eq. C11): Simple adds its
 * per-step cost (simple_us) to every phase; LL adds none but carries four
 * bytes of flag with every four of data, so it runs at half the bandwidth.
 * An algorithm's time is that of the faster protocol, as NCCL's tuner picks.
 *
 * where lat_us is the latency of the phase's steps (hardware latency of
 * every hop plus the calibrated software cost per step, docs/collectives.md
 * eq. C1-C8), factor is the bytes each channel carries per byte of buffer
 * (2(n-1)/n for a ring AllReduce), and bw is the packed bandwidth of the
 * phase's channels (pack.h), which knows which links bind.
 *
 * Building the model (cp_coll_build) searches rings, packs channels and does
 * every route computation once; evaluating a size is then O(1), so a sweep
 * over 30 sizes on 1,024 GPUs costs one build.  Multi-host machines made by
 * --hosts are modelled on a two-host window: with a non-blocking network
 * every host boundary looks the same, so the packed rates of two hosts hold
 * for any number; step counts use the real number of GPUs.
 *
 * Ownership: a cp_coll owns its arrays; cp_coll_free releases them.  It
 * borrows the topology, which must outlive it.
 */
#ifndef CP_COLLECTIVE_H
#define CP_COLLECTIVE_H

#include "cost/mpi.h"
#include "cost/nccl_rules.h"
#include "topo/topo.h"

typedef enum cp_coll_op {
    CP_OP_ALLREDUCE, CP_OP_REDUCESCATTER, CP_OP_ALLGATHER, CP_OP_BROADCAST, CP_OPS
} cp_coll_op;

typedef enum cp_coll_alg {
    CP_ALG_RING, CP_ALG_TREE, CP_ALG_NVLS, CP_ALG_HIER, CP_ALG_PS, CP_ALG_COLLNET, CP_ALGS
} cp_coll_alg;

/* NCCL's protocols as the model knows them.  LL: 8-byte stores of 4 bytes of
 * data and a 4-byte flag, no handshake per step.  Simple: full bandwidth, a
 * handshake and a fence per step.  LL128 (NCCL 2.5 and later, where NCCL's
 * rules enable it: ll128.c): 128-byte lines of 120 bytes of data and an
 * 8-byte flag, a lighter step than Simple's (docs/collectives.md eq. C11). */
typedef enum cp_proto { CP_PROTO_LL, CP_PROTO_SIMPLE, CP_PROTO_LL128, CP_PROTOS } cp_proto;

/* LL's payload per byte on the wire. */
#define CP_LL_EFF 0.5
/* LL128's: 15 data words of every 16 (NCCL_LL128_DATAELEMS, TUNING-FACTS A4). */
#define CP_LL128_EFF (120.0 / 128.0)

/* Arcs a phase is limited by, most binding first (for --explain). */
#define CP_COLL_MAX_BIND 6

typedef struct cp_phase {
    const char *label;   /* "ring", "intra-host reduce-scatter", ... */
    double lat_us;       /* latency of all its steps (under LL) */
    double simple_us;    /* what Simple adds: steps x the slowest kind's simple_us */
    double factor;       /* bytes per channel per byte of buffer */
    double bw_gbs;       /* packed bandwidth of its channels */
    double ll128_us;     /* what LL128 adds to lat_us: its base and per-step cost (ll128.c) */
    int steps;           /* algorithm steps (for the latency story) */
    int nchannels;       /* channels the packing used */
    /* NCCL's sizing of a call (nccl_rules.h; docs/collectives.md, "Channels
     * per size"), set by nccl_size.c on the phases NCCL runs as rings and
     * trees: */
    double ll_bw_gbs;    /* LL's payload bandwidth with every channel (bw_gbs x CP_LL_EFF,
                          * the network's ll_eff where it binds, capped at NCCL's llMaxBw) */
    int nc_max;          /* NCCL's channels for it (comm->nChannels); 0: no per-size
                          * reduction (NVLS, CollNet, the parameter server) */
    double chan_bytes[3]; /* per protocol (cp_proto order): bytes a channel needs, below
                           * which NCCL drops channels */
    double ll_cap_gbs;   /* NCCL's llMaxBw on it (rings), 0: none */
    double ll_raw_gbs;   /* LL's rate before that cap (half the packed rate, or ll_eff's) */
    double ll_ch_gbs;    /* LL's rate per channel: NCCL's one-host llMaxBw over its one-host
                          * channels, the CTA's own limit; 0: none */
    int ll_net;          /* 1: it crosses the network, whose ll_eff sets LL's rate */
    int nbind;
    int bind_arc[CP_COLL_MAX_BIND];
    double bind_dual[CP_COLL_MAX_BIND];
} cp_phase;

typedef struct cp_alg_cost {
    int available;        /* 0 when this machine cannot run it */
    int ll;               /* 1 when it may run LL (NCCL's ring and tree; not NVLS,
                           * which is Simple only, nor the parameter server) */
    int ll128;            /* 1 when NCCL's rules enable LL128 for it (ll128.c) */
    int pipelined;        /* 1: one kernel streams chunks through three phases, the
                           * first and last on the hosts' links, the middle on the
                           * network, so the middle overlaps them (NVLS and CollNet
                           * across hosts, eq. C12); 0: phases run one after another */
    double pipe_factor;   /* pipelined: bytes per byte the first and last phases put
                           * on a GPU's busiest link direction together ... */
    double pipe_bw;       /* ... at this bandwidth (GB/s) */
    char why_not[160];    /* reason, when not available */
    int nphases;
    cp_phase phase[3];
} cp_alg_cost;

typedef struct cp_coll {
    const cp_topo *topo;  /* borrowed */
    int nranks;           /* GPUs taking part (all GPUs of the topology) */
    int nhosts;           /* hosts */
    int per_host;         /* GPUs per host */
    double launch_us;     /* cost of one call: calibration launch_us */
    double issue_us;      /* back-to-back calls cannot come faster than one thread issues
                           * them: launch_us x GPUs per thread (nccl-tests -g) */
    int nccl_cc;          /* least compute capability x 10 of the GPUs (0 unknown) */
    int nccl_channels;    /* NCCL's channels across the machine (nccl_rules.h) */
    int nccl_channels_host; /* ... and inside one host */
    cp_nccl_topo nccl;    /* what NCCL's search sees of the machine, for its tuner's choice
                           * between ring and tree across hosts (cp_coll_best) */
    cp_alg_cost cost[CP_OPS][CP_ALGS];
    int ring_candidates;  /* rings offered to the packing LP (for explain/bench) */
    int no_ll128;         /* set by the caller: never pick LL128 (NCCL_PROTO=^LL128, or a
                           * table taken before NCCL 2.5); 0 after cp_coll_build */
    cp_topo *window;      /* owned two-host window of a large replica, else NULL */
    cp_phase peers_tree;  /* several hosts: the all-reduce of every GPU's 1/n shard among
                           * its peers as a double binary tree (cp_coll_peers_us); the
                           * ring of peers is hier's phase 1 */
    double *ring_use;     /* one host: [arc] GB/s on each arc per GB/s of packed ring
                           * bandwidth (owned), for the simulator; NULL otherwise */
    double ring_lat_us;   /* one host: one traversal of the slowest packed ring, n hops of
                           * route latency and calibrated step (for the simulator) */
    /* Host memory for optimizer offload (ZeRO-Offload): every GPU of a host
     * copying to (d2h) or from (h2d) its nearest CPU socket at once, GB/s
     * each and the slowest route's latency; the sockets' streaming rate,
     * 3 x reduce_gbs summed over the host's sockets (reduce_gbs counts
     * three bytes moved per byte summed).  0 when no socket gives
     * reduce_gbs. */
    double d2h_gbs, h2d_gbs, host_lat_us, host_mem_gbs;
    cp_mpi mpi;           /* MPI AllReduce staged through host memory (mpi.h) */
} cp_coll;

/* The topology that the arc ids in the phases refer to (the window, or the
 * machine itself). */
static inline const cp_topo *cp_coll_arcs(const cp_coll *c)
{
    return c->window ? c->window : c->topo;
}

const char *cp_coll_op_name(cp_coll_op op);        /* "allreduce", ... */
const char *cp_coll_alg_name(cp_coll_alg alg); /* "ring", "tree", "nvls", "hier", "ps", "collnet" */

/* nccl-tests bus-bandwidth factor: 2(n-1)/n, (n-1)/n, (n-1)/n, 1. */
double cp_coll_busbw_factor(cp_coll_op op, int nranks);

/* Build the model.  gpus_per_thread is nccl-tests' -g (kernel launches are
 * serialised within a thread); 1 for frameworks with one process per GPU. */
int cp_coll_build(const cp_topo *t, int gpus_per_thread, cp_coll *c, cp_err *e);

/* The model of `nhosts` copies of one host without building them: `window`
 * is that host replicated twice (cp_topo_replicate, 2), or the host itself
 * when nhosts is 1; only the step counts see nhosts.  Costs one build of
 * the window whatever nhosts is (the large-model layouts price groups that
 * span thousands of hosts this way).  The window must outlive c. */
int cp_coll_build_hosts(const cp_topo *window, int nhosts, int gpus_per_thread, cp_coll *c,
                        cp_err *e);

void cp_coll_free(cp_coll *c);

const char *cp_proto_name(cp_proto p);              /* "LL", "Simple", "LL128" */

/* A phase's LL bandwidth from its bw_gbs, its cap and the network's
 * calibration `net` (nccl_size.c; calibrate re-derives it after scaling
 * bw_gbs). */
void cp_coll_phase_ll(cp_phase *ph, const cp_calib_kind *net);

/* Predicted time in us of `op` on `bytes` with `alg` and protocol `p`; a
 * negative value when the algorithm is not available for this operation or
 * cannot run that protocol. */
double cp_coll_proto_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                             double bytes);

/* NCCL's own estimate of that time (its tuner's view: every channel, no
 * buffer stall, no issue bound), by which it chooses; negative as above. */
double cp_coll_proto_est_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                            double bytes);

/* Predicted time in us of `op` on `bytes` with `alg` under the protocol
 * NCCL's tuner picks (the least estimate, cp_coll_proto_est_us), its id to
 * *proto when not NULL; a negative value when the algorithm is not
 * available for this operation. */
double cp_coll_time_proto_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes,
                             cp_proto *proto);

/* Time in us of phase k of `alg`'s AllReduce run alone as one call on a
 * `bytes` buffer: launch + the phase under the faster protocol `alg` may
 * run (*proto when not NULL); negative when unavailable.  Hybrid sharding
 * (FSDP HYBRID_SHARD) runs pieces of the hierarchical scheme as separate
 * calls: phase 0 of hier (ring) or nvls (several hosts) is a reduce-scatter
 * inside every host, phase 2 an all-gather inside every host, and hier's
 * phase 1 the all-reduce of every GPU's 1/n shard with its peers on the
 * other hosts, all n peer groups at once. */
double cp_coll_phase_us(const cp_coll *c, cp_coll_alg alg, int k, double bytes,
                        cp_proto *proto);

/* Time in us of the all-reduce of every GPU's 1/n shard of a `bytes`
 * buffer with its peers, the GPUs of the same local rank on the other
 * hosts, all n peer groups at once (hybrid sharding's replica all-reduce):
 * the ring of peers (hier's phase 1), or when `tree_ok` the faster of it
 * and a double binary tree among the peers (eq. C6 with one GPU a host:
 * 2 ceil(log2 H) hops instead of 2(H-1), two network bytes per byte), as
 * NCCL's tuner picks.  *proto and *tree (1 when the tree won) when not
 * NULL; negative with one host. */
double cp_coll_peers_us(const cp_coll *c, double bytes, int tree_ok, cp_proto *proto,
                        int *tree);

/* The same without the protocol. */
double cp_coll_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes);

/* The fastest available algorithm for `op` at `bytes` among those NCCL's
 * tuner chooses from (ring, tree across hosts, NVLS, CollNet where the
 * network reduces): what NCCL would pick.  Between the ring and the tree
 * across hosts NCCL's own estimates decide (cp_nccl_tuner_us: its
 * per-channel caps, not the trees' traffic, docs/collectives.md "Two
 * hosts"); the others by the model's estimates.
 * hier (Horovod-style hierarchical) is not NCCL's and must be asked for.
 * Its time goes to *us. */
cp_coll_alg cp_coll_best(const cp_coll *c, cp_coll_op op, double bytes, double *us);

/* The same among the algorithms that can run protocol `proto` (a cp_proto;
 * negative: either, the faster), as NCCL_PROTO restricts the tuner. */
cp_coll_alg cp_coll_best_proto(const cp_coll *c, cp_coll_op op, double bytes, int proto,
                               double *us);

/* For --explain: which protocol is fastest over which sizes (1 B .. 64 GB,
 * by octaves), e.g. "LL up to 1 MB, LL128 up to 32 MB, Simple above"
 * (ll128.c). */
void cp_coll_proto_ranges(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, char *buf,
                          size_t len);

#endif
