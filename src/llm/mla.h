/*
 * mla.h - multi-head latent attention (DeepSeek-V2 and V3), the attention
 * half of a block as Megatron-Core's MLASelfAttention runs it with tensor
 * and sequence parallelism (docs/model.md eq. E13):
 *
 *     norm1  q_down [q_norm AG] q_up   kv_down [kv_norm AG] kv_up
 *     rope  attention(d = nope + rope, dv = v)  proj [RS]  residual
 *
 * The down projections are replicated on every TP rank and run on the
 * rank's own sequence shard; the compressed latents (q_lora_rank and
 * kv_lora_rank + the shared rotary key, far narrower than h) are what the
 * TP group all-gathers; the up projections and the output projection are
 * split over TP by heads.  Selective recomputation rebuilds the up
 * projections and attention's core from the kept latents (Megatron's
 * recompute_modules mla_up_proj and core_attn).
 *
 * Counting only, as ops.h; no allocation.
 */
#ifndef CP_LLM_MLA_H
#define CP_LLM_MLA_H

#include "llm/ops.h"

/* 1 when the model's attention is latent (kv_lora_rank > 0). */
int cp_mla_on(const cp_xformer *x);

/* The attention half of a block (norm1 .. residual1), forward and
 * backward, appended to `out`. */
void cp_mla_attn_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_mla_attn_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);

/* The attention's parameters (projections and the latents' norms; not
 * norm1), elements, whole model. */
double cp_mla_params(const cp_xformer *x);

/* Activation bytes the attention half keeps for backward for one
 * micro-batch on one GPU under recomputation rc (eq. E11). */
double cp_mla_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc);

/* Megatron's model FLOPs of the attention of one block per token (its
 * num_floating_point_operations for multi-latent attention: projections
 * and the core, forward and backward), causal attention at half the
 * scores when causal_half. */
double cp_mla_flops_per_token(const cp_xformer *x, int64_t seq, int causal_half);

#endif
