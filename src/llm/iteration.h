/*
 * iteration.h - one training iteration of a large-model layout: every
 * block's kernels and tensor/context-parallel collectives per micro-batch
 * (ops.h, gpu.h, groups.h), each pipeline stage's chunks laid out by the
 * schedule (schedule.h), the data-parallel synchronisation and optimizer
 * step of each stage as its framework runs them (dpsync.h), and the memory
 * each GPU needs (footprint.h); `auto` recomputation picks the least that
 * fits (docs/model.md, "Large-model layouts").
 *
 * Ownership: cp_llm_result owns its schedule events (cp_llm_result_free).
 */
#ifndef CP_LLM_ITERATION_H
#define CP_LLM_ITERATION_H

#include "llm/footprint.h"
#include "llm/offload.h"
#include "llm/gpu.h"
#include "llm/groups.h"
#include "llm/schedule.h"

/* The terms of an iteration on its slowest stage, ms; they add up to
 * iteration_ms. */
typedef struct cp_llm_breakdown {
    double compute;    /* kernels of forward and backward (GEMMs, attention, memory-bound) */
    double recompute;  /* kernels run again in backward (selective or full recomputation) */
    double host;       /* waiting for the host to launch kernels (small layers) */
    double tp;         /* tensor-parallel collectives not hidden under GEMMs */
    double cp;         /* context-parallel KV exchange not hidden under attention */
    double ep;         /* expert-parallel all-to-alls (and ETP collectives) not hidden */
    double pp;         /* held by blocking pipeline sends */
    double bubble;     /* idle: pipeline fill and drain, waiting for neighbours */
    double dp;         /* data-parallel synchronisation not hidden under backward/forward */
    double optimizer;  /* the optimizer step, gradient norm and zeroing (or offloaded: its
                          copies and the tier's step, eq. T1) */
    double offload;    /* activation offload's copies beyond the compute they overlap */
} cp_llm_breakdown;

typedef struct cp_llm_opts {
    cp_coll_alg dp_alg;   /* data-parallel collectives' algorithm; CP_ALGS: NCCL's choice */
    int keep_events;      /* keep the schedule's events for a timeline */
    const cp_tiers *tiers; /* the machine's memory tiers, for a layout that offloads */
    int dp_pool;          /* data-parallel collectives through the CXL pool: 0 never (the
                             network), 1 always, 2 whichever is faster for each bucket */
} cp_llm_opts;

typedef struct cp_llm_result {
    cp_recompute recompute;      /* what ran (auto resolved) */
    int recompute_layers;        /* full recomputation of this many blocks a chunk; 0 all */
    double iteration_ms;
    double tokens_per_s_per_gpu;
    double model_tflops_per_gpu; /* Megatron's model FLOPs / time / GPUs */
    double mfu;                  /* of the precision's dense peak */
    cp_llm_breakdown b;
    cp_llm_mem mem;
    int fits;
    int stage;                   /* the slowest stage, whose terms b are */
    const char *bound;           /* the largest term's name */
    const char *dp_alg;          /* the data-parallel collectives' algorithm */
    const char *dp_expert_alg;   /* the experts' gradients' (their own group), or NULL */
    int dp_buckets;              /* the slowest stage's gradient buckets (and experts') */
    int dp_pool_buckets;         /* of them reduced through the pool */
    double fwd_ms, bwd_ms;       /* one micro-batch through the slowest stage */
    double tp_comm_ms;           /* all TP collective time of an iteration (exposed or not) */
    double dp_comm_ms;           /* all DP collective time of an iteration */
    double ep_comm_ms;           /* all expert-parallel collective time (exposed or not) */
    double a2a_ms;               /* one all-to-all (dispatch or combine) of a routed block */
    const char *a2a_path;        /* its path: "nvlink", "network", "pool" (static), or NULL */
    const char *a2a_bind;        /* what binds it: a link kind or a pool resource (static) */
    cp_sched_out sched;          /* keep_events: the schedule with its events */
    int have_sched;
    double *dp_end_ms;           /* keep_events: [pp] when each stage's gradients are reduced */
    double *step_end_ms;         /* keep_events: [pp] ... its optimizer step and gathers done */
    double *ep_fwd_ms;           /* keep_events: [pp vp] the exposed expert all-to-alls of one
                                    micro-batch's forward through chunk c of stage r, [r vp + c] */
    double *ep_bwd_ms;           /* ... and of its backward (recomputation included) */
} cp_llm_result;

/* Predict one iteration of layout l (resolved by cp_layout_resolve, its
 * groups built by cp_groups_build) of model x on GPUs g.  CP_EINPUT for a
 * layout the schedule cannot run; CP_EINTERNAL out of memory.  When
 * l->recompute is CP_RC_AUTO the least recomputation that fits is used
 * (full when none fits, fits 0). */
int cp_llm_predict(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                   const cp_groups *G, const cp_llm_opts *o, cp_llm_result *out, cp_err *e);

void cp_llm_result_free(cp_llm_result *r);

/* The recomputation layout l runs with: its own, or under CP_RC_AUTO the
 * least that fits (setting l->recompute_layers for partial full
 * recomputation; eq. M5). */
cp_recompute cp_llm_resolve_recompute(const cp_xformer *x, cp_layout *l, const cp_gpu *g);

/* The per-block pass prices the bound shares among layouts that differ
 * only in their pipeline, sharding and tiers: one search keeps one
 * (cp_llm_bound_memo_new), owned by it and freed with
 * cp_llm_bound_memo_free.  Not for threads. */
typedef struct cp_llm_bound_memo cp_llm_bound_memo;

cp_llm_bound_memo *cp_llm_bound_memo_new(void);
void cp_llm_bound_memo_free(cp_llm_bound_memo *m);

/* A lower bound on cp_llm_predict's iteration for layout l, from its
 * kernels and, when tp_cp is given (groups built for the TP and CP kinds
 * only), their TP and CP collectives: the last stage's work plus the first
 * micro-batch's way to it and the last one's way back, plus its optimizer
 * step (search.c prunes with it).  memo (may be NULL) remembers the
 * passes by the block's degrees, recomputation and group models. */
double cp_llm_lower_bound_ms(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                             const cp_groups *tp_cp, const cp_tiers *tiers,
                             cp_llm_bound_memo *memo);

/* One transformer block's forward and backward (recomputation included)
 * for one micro-batch on one GPU, ms: what Korthikanti et al.'s Table 4
 * measures. */
void cp_llm_block_ms(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                     const cp_groups *G, cp_recompute rc, double *fwd_ms, double *bwd_ms);

/* The name of a breakdown term, in the order of cp_llm_breakdown's fields
 * ("compute", "recompute", ...); and the term itself by index. */
#define CP_LLM_TERMS 11
const char *cp_llm_term_name(int i);
double cp_llm_term(const cp_llm_breakdown *b, int i);

#endif
