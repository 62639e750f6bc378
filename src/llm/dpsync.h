/*
 * dpsync.h - a pipeline stage's data-parallel synchronisation and optimizer
 * step as each framework runs them (docs/model.md eq. D1-D4):
 *
 * - megatron: gradients in buckets of max(40 M, 1 M x dp) parameters
 *   (Megatron-Core's DistributedDataParallel), reduce-scattered (the
 *   distributed optimizer) or all-reduced over the data x context group as
 *   the last micro-batch's backward of each chunk completes them
 *   (overlap_grad_reduce); the optimizer steps its shard; the updated
 *   parameters are all-gathered, overlapped with the next forward except
 *   the first bucket (overlap_param_gather);
 * - deepspeed: ZeRO-1 reduces after the whole backward (no overlap), steps
 *   the shard and gathers the parameters, none of it hidden; ZeRO-2 and -3
 *   reduce-scatter every micro-batch (and ZeRO-3 gathers every micro-batch);
 * - fsdp (FSDP2, ZeRO-3): every micro-batch gathers each chunk's
 *   parameters before its forward and reduce-scatters its gradients after
 *   its backward, prefetched on a second stream; what does not fit under
 *   the chunk's compute is exposed.
 *
 * The collectives run on the stage's data-parallel group (groups.h) with
 * the algorithm asked for (NCCL's choice by default).
 */
#ifndef CP_LLM_DPSYNC_H
#define CP_LLM_DPSYNC_H

#include "llm/gpu.h"
#include "llm/groups.h"
#include "llm/offload.h"

typedef struct cp_dp_in {
    const cp_layout *l;
    const cp_groups *G;
    const cp_gpu *g;
    cp_coll_alg alg;             /* CP_ALGS: NCCL's choice per size */
    double params;               /* the stage's parameters on one GPU (after TP) */
    double stage_end_ms;         /* the schedule's end of this stage */
    const double *last_bwd_start_ms; /* [vp]: the last micro-batch's backward of each chunk */
    const double *last_bwd_end_ms;
    const cp_tiers *tiers;       /* the memory tiers (offload), or NULL */
    int pool;                    /* cp_llm_opts.dp_pool */
    int expert;                  /* 1: the experts' gradients, on the expert data-parallel
                                    group (l->dp then stands for its size, l->cp 1) */
} cp_dp_in;

typedef struct cp_dp_out {
    double grads_done_ms;        /* every gradient reduced */
    double optimizer_ms;         /* the step on this GPU's shard, norm and zeroing */
    double gather_exposed_ms;    /* parameter all-gathers the next forward waits for */
    double comm_ms;              /* every DP collective of the iteration */
    const char *alg;             /* the algorithm of the largest bucket */
    const char *expert_alg;      /* the experts' gradients' (moe.h), NULL without experts */
    int buckets, pool_buckets;   /* reduced once an iteration, and of them reduced or
                                  * gathered through the pool (auto decides each) */
} cp_dp_out;

/* Per micro-batch, per chunk: the ZeRO-3/FSDP gathers and ZeRO-2/3/FSDP
 * reduce-scatters that run beside that chunk's compute (0 for the
 * frameworks that synchronise once per iteration). */
double cp_dp_per_micro_ms(const cp_layout *l, const cp_groups *G, cp_coll_alg alg, int pool,
                          double chunk_params);

void cp_dp_sync(const cp_dp_in *in, cp_dp_out *out);

/* The group a layout's gradients synchronise on: data x context under
 * Megatron (gradients are averaged over both), the same group otherwise;
 * with `expert`, the experts' gradients' expert data-parallel group. */
cp_group_kind cp_dp_group(const cp_layout *l, int expert);

/* The optimizer step of a GPU holding `params` (after TP), ms (eq. D4). */
double cp_dp_optimizer_ms(const cp_layout *l, const cp_gpu *g, double params);

/* The same where the optimizer is offloaded (eq. T1): copies out, the
 * step on the tier's side, copies back; negative when the tier is absent. */
double cp_dp_offload_step_ms(const cp_layout *l, const cp_gpu *g, const cp_tiers *t,
                             double params);

#endif
