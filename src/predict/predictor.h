/*
 * predictor.h - what every framework's timeline shares (predict.h for DDP,
 * Horovod and MirroredStrategy, sharded.h for ZeRO and FSDP): the
 * strategies and frameworks, the options, the predictor built once per
 * model and machine (compute timeline, collective model, gradient copies,
 * tensor parallelism), the time of one collective under a strategy, and
 * the prediction record with its runs and compute spans.
 *
 * It knows no framework's timeline: predict.c and sharded.c build on it and
 * it includes neither (tools/include-cycles.sh keeps it so).
 *
 * Ownership: a cp_predictor borrows the model and topology and owns what it
 * builds from them; cp_prediction owns its run list and spans.
 */
#ifndef CP_PREDICTOR_H
#define CP_PREDICTOR_H

#include "cost/collective.h"
#include "predict/timeline.h"

/* Inside src/predict, what a runner returns when the strategy cannot run an
 * operation here (cp_predict then reports it unavailable, with its reason).
 * It is none of the cp_status codes: CP_EINTERNAL is 1, which the runners
 * once used for this too, so that running out of memory read as "strategy
 * not available" with an empty reason (issue 24, item 5). */
#define CP_UNAVAILABLE 3

typedef enum cp_strategy {
    CP_S_RING, CP_S_TREE, CP_S_AUTO, CP_S_HIER, CP_S_COLLNET, CP_S_PS, CP_S_PROXY, CP_S_COARSE,
    CP_S_BEST,
    CP_S_MPI,        /* MPI AllReduce staged through host memory (cost/mpi.h) */
    CP_S_COARSE_MPI, /* the COARSE planner with MPI as its GPU-side family */
    CP_S_POOL,       /* every byte through the shared CXL pool (pool_strategy.h) */
    CP_STRATEGIES
} cp_strategy;

/* DDP, Horovod and TensorFlow's MirroredStrategy all-reduce gradients
 * (predict.h); ZeRO-1, ZeRO-2, FSDP and ZeRO-3 shard them (sharded.h). */
typedef enum cp_framework {
    CP_FW_DDP, CP_FW_HOROVOD, CP_FW_ZERO2, CP_FW_FSDP, CP_FW_ZERO3, CP_FW_MIRRORED, CP_FW_ZERO1
} cp_framework;

/* 1 for the frameworks that reduce-scatter gradients and gather parameters. */
static inline int cp_framework_sharded(cp_framework f)
{
    return f == CP_FW_ZERO1 || f == CP_FW_ZERO2 || f == CP_FW_FSDP || f == CP_FW_ZERO3;
}

/* 1 for DeepSpeed's stages 1 and 2, which keep every parameter and gather
 * them after the step. */
static inline int cp_framework_zero12(cp_framework f)
{
    return f == CP_FW_ZERO1 || f == CP_FW_ZERO2;
}

/* 1 for DeepSpeed's stages (reduce buckets, optimizer offload). */
static inline int cp_framework_deepspeed(cp_framework f)
{
    return cp_framework_zero12(f) || f == CP_FW_ZERO3;
}

const char *cp_strategy_name(cp_strategy s);
const char *cp_framework_name(cp_framework f); /* as --framework takes it: "ddp", ... */
int cp_strategy_parse(const char *name, cp_strategy *out); /* 0 or -1 */

typedef struct cp_predict_opts {
    double compute_ms;       /* measured one-GPU iteration; <= 0: the model's own */
    cp_framework framework;
    double bucket_mb;        /* DDP bucket_cap_mb, MiB (default 25); ZeRO-2 and ZeRO-3
                                reduce buckets, ZeRO-2's all-gather buckets (<= 0:
                                DeepSpeed's 5e8 elements) */
    double first_bucket_mb;  /* DDP first bucket, MiB (default 1) */
    double apex_elems;       /* apex DDP message_size, gradient elements; > 0: every DDP
                                bucket, the first too, closes at that many elements
                                (cp_ddp_caps); 0: bucket_mb and first_bucket_mb */
    double fusion_mb;        /* Horovod fusion threshold, MiB (default 64) */
    double cycle_ms;         /* Horovod cycle time, ms (default 5) */
    int grad_bytes;          /* gradient element size; 0 = the model's dtype */
    double mfu;              /* model FLOPs utilisation for estimated compute (default 0.5) */
    double compute_scale;    /* multiply compute by this (what-if: mixed precision); 1 */
    int accum_steps;         /* micro-batches per optimizer step (DDP no_sync, Horovod
                                backward_passes_per_step); 1 */
    int bucket_view;         /* DDP gradient_as_bucket_view: no copy back after the
                                all-reduce; 0 (PyTorch's default) */
    double jitter;           /* coefficient of variation of one GPU's compute time from
                                step to step (stragglers, eq. P9); 0 */
    int comm_hook;           /* DDP communication hook: 0 none; 2 fp16_compress_hook or
                                bf16_compress_hook (buckets cast to 2-byte floats, eq. P10) */
    double fsdp_wrap_mb;     /* FSDP units (eq. Z2): 0 (default) or CP_WRAP_BLOCK one per
                                block, as transformer_auto_wrap_policy; CP_WRAP_LAYER one
                                per model layer; > 0 consecutive layers until this many
                                MiB, as size_based_auto_wrap_policy */
    int fsdp_sharding;       /* FSDP sharding_strategy: 0 FULL_SHARD, or CP_SHARD_* bits
                                (eq. Z3) */
    int optimizer;           /* CP_OPT_ADAM (default) or CP_OPT_SGD: the optimizer states
                                of the memory figure (memory.h) */
    double activation_gb;    /* activations of one micro-batch on one GPU, GB, as the
                                user measured them; 0: estimated from the model's
                                transformer dimensions when it gives them (memory.h) */
    int recompute;           /* activation checkpointing of every block (eq. M2); 0 */
    int flash_attn;          /* attention that keeps no s x s scores (FlashAttention,
                                PyTorch's fused SDPA) (eq. M2); 0 */
    int act_bytes;           /* activation element size of that estimate (autocast over
                                fp32 weights: 2); 0: the model's dtype */
    int offload;             /* CP_OFFLOAD_CPU: DeepSpeed offload_optimizer to the CPU
                                (ZeRO-1, -2, -3; eq. Z6); CP_OFFLOAD_POOL: optimizer
                                states (and under ZeRO-3 and FSDP parameter shards) in
                                the shared CXL pool (docs/pool.md, eq. PL8); 0 none */
    double batch_scale;      /* the per-GPU batch as a multiple of the one the compute
                                time was measured at: forward and backward grow with
                                it, the optimizer step does not; <= 0 or 1: as
                                measured */
} cp_predict_opts;

/* cp_predict_opts.offload. */
#define CP_OFFLOAD_CPU 1
#define CP_OFFLOAD_POOL 2

/* Optimizers, for their states (eq. M1). */
#define CP_OPT_ADAM 0
#define CP_OPT_SGD 1

/* fsdp_sharding bits: SHARD_GRAD_OP keeps the parameters gathered for
 * forward until backward ends (no gathers in backward); HYBRID_SHARD shards
 * inside each host and all-reduces every shard with its peers on the other
 * hosts.  Both: _HYBRID_SHARD_ZERO2.  CP_SHARD_FULL says FULL_SHARD was
 * asked for (the same as 0). */
#define CP_SHARD_GRAD_OP 1
#define CP_SHARD_HYBRID 2
#define CP_SHARD_FULL 4

/* fsdp_wrap_mb policies that are not sizes (0, the default, is a block a
 * unit too; CP_WRAP_BLOCK says it was asked for). */
#define CP_WRAP_LAYER (-1.0)
#define CP_WRAP_BLOCK (-2.0)

/* MiB, as PyTorch's bucket_cap_mb, Horovod's fusion threshold and the
 * options in MiB count. */
#define CP_MIB 1048576.0

/* DeepSpeed's reduce_bucket_size and allgather_bucket_size default, in
 * elements (deepspeed/runtime/zero/config.py). */
#define CP_ZERO_BUCKET_ELEMS 5e8

/* Defaults: DDP, 25 MiB buckets, 1 MiB first bucket, Horovod 64 MiB / 5 ms,
 * no gradient accumulation, gradients copied into and out of DDP buckets. */
void cp_predict_opts_default(cp_predict_opts *o);

/* One bucket (DDP) or fused buffer (Horovod) as it ran. */
typedef struct cp_bucket_run {
    double bytes;
    int ntensors;
    double ready_ms, start_ms, finish_ms;
    const char *how;         /* algorithm or route used ("ring", "nvls", "ps", ...) */
    const char *proto;       /* NCCL protocol ("LL", "Simple"), "-" when not an NCCL call */
} cp_bucket_run;

/* A stretch of the compute stream as it ran (for timeline charts). */
typedef enum cp_span_kind {
    CP_SPAN_MICRO,     /* earlier micro-batches of an accumulated step (DDP, Horovod) */
    CP_SPAN_FORWARD,
    CP_SPAN_BACKWARD,  /* sharded frameworks: waits for gathers included */
    CP_SPAN_PACK,      /* MirroredStrategy's concatenation of the gradients into one pack */
    CP_SPAN_COPY,      /* DDP's copy of the reduced buckets back into the gradients */
    CP_SPAN_OPTIMIZER,
    CP_SPAN_KINDS
} cp_span_kind;

typedef struct cp_span {
    double start_ms, end_ms;
    cp_span_kind kind;
} cp_span;

const char *cp_span_name(cp_span_kind k); /* "forward", "backward", ... */

typedef struct cp_prediction {
    cp_strategy strategy;
    int available;
    char why_not[200];
    double iteration_ms, compute_ms, comm_ms, exposed_ms;
    cp_bucket_run *runs;     /* owned */
    int nruns;
    cp_span *spans;          /* owned; kept with the runs (keep_runs) */
    int nspans, span_cap;
} cp_prediction;

void cp_prediction_free(cp_prediction *p);

/* Record an operation of the communication stream (ready, started and
 * finished at those times, `how` and `proto` static strings) when the
 * prediction keeps its runs: 0, or -1 when out->runs holds `cap` already. */
int cp_prediction_run(cp_prediction *out, int cap, double bytes, int nt, double ready,
                      double start, double finish, const char *how, const char *proto);

/* Record a compute span [start, end] of kind k when the prediction keeps
 * its runs (out->runs set), nothing otherwise; empty spans are skipped.
 * 0, or -1 when out of memory. */
int cp_prediction_span(cp_prediction *out, double start, double end, cp_span_kind k);


/* What is built once per model and machine and reused for every strategy
 * and every bucket size. */
typedef struct cp_predictor {
    const cp_model *model;   /* borrowed */
    const cp_topo *topo;     /* borrowed */
    cp_coll coll;            /* collective model of the whole machine */
    cp_compute comp;
    int elem_bytes;
    int have_coll;
    double mem_gbs;          /* GPU device memory GB/s for gradient copies; 0: not charged */
    double single_ms;        /* one micro-batch on one GPU: forward + backward + optimizer */
    double copy_ms;          /* DDP or MirroredStrategy gradient copies added to
                                compute (eqs. P7, P11) */
    double copy_out_ms;      /* of which the copy back after the last bucket (the
                                split of the reduced pack) */
    double pack_ms;          /* of which MirroredStrategy's concatenation into the pack,
                                after backward (eq. P11) */
    double straggle_ms;      /* added by waiting for the slowest GPU (eq. P9) */
    const char *compute_source; /* "measured", "model" or "estimated" (eq. P0) */
    struct cp_pool *pool;    /* the shared CXL pool's model, or NULL (pool_strategy.h) */
    int have_pool;           /* 1: pool is owned */
    int pool_params;         /* --offload pool under ZeRO-3 or FSDP: every all-gather
                                first pulls each GPU's parameter shard from the pool */
} cp_predictor;

/* The compute spans of a DDP or Horovod iteration (or a plan's, which
 * buckets as DDP does) that ended at out->iteration_ms: earlier
 * micro-batches, forward, backward, then the copy back and the optimizer
 * at the end.  0, or -1 when out of memory. */
int cp_prediction_ddp_spans(const cp_predictor *p, cp_prediction *out);

/* Eq. P0: one iteration's compute estimated from the model's FLOPs, its
 * per-GPU batch and the GPU's peak: (1 + bwd_fwd_ratio) x FLOPs x batch /
 * (peak x mfu), the peak being tflops_fp16 for an fp16 or bf16 model (when
 * the GPU gives it) and tflops otherwise.  0 when the model has no FLOPs or
 * batch or the GPUs no peak. */
double cp_compute_estimate_ms(const cp_model *m, const cp_topo *t, double mfu);

/* Expected maximum of n independent standard normal variables (0 for
 * n <= 1): how many standard deviations the slowest of n GPUs lags. */
double cp_expected_max_normal(int n);

/* Build the predictor of model m on machine t under options o: CP_OK, or
 * CP_EINPUT when the model gives no compute time (no file named: the model
 * struct does not know its path, the caller does) or the machine is beyond
 * the collective model (the topology's file named). */
int cp_predictor_init(cp_predictor *p, const cp_model *m, const cp_topo *t,
                      const cp_predict_opts *o, cp_err *e);
/* The same, borrowing `like`'s collective model instead of building it
 * again (like: a predictor of the same topology, which must outlive p;
 * NULL builds it): the model does not depend on the framework or the
 * compute, so comparing frameworks builds it once. */
int cp_predictor_init_like(cp_predictor *p, const cp_model *m, const cp_topo *t,
                           const cp_predict_opts *o, const cp_predictor *like, cp_err *e);

void cp_predictor_free(cp_predictor *p);

/* Time in ms of one collective `op` of `bytes` (the whole buffer) under
 * strategy s: its algorithm (ring, tree, hier, ps), what NCCL would pick
 * (auto), or the fastest (best); negative when s cannot run it here.  *alg
 * is the algorithm used, CP_ALGS when none was needed (one GPU); *proto
 * names its protocol for the timeline ("-" when not NCCL's). */
double cp_strategy_coll_ms(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                           cp_coll_alg *alg, const char **proto);

/* The collective algorithm strategy s runs every bucket with (ring, tree,
 * hier, collnet, ps); CP_ALGS when it is not one algorithm (auto and best
 * choose per size, proxy and coarse are routes). */
cp_coll_alg cp_strategy_alg(cp_strategy s);

#endif
