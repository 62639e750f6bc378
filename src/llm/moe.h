/*
 * moe.h - mixture-of-experts blocks in a large-model layout (docs/model.md,
 * "Mixture of experts", eq. E1-E12): which blocks route their tokens to
 * experts, the kernels and collectives of such a block for one micro-batch
 * on one GPU as Megatron-Core's MoELayer runs them, its parameters and
 * activations, the expert all-to-all's time on the EP group, and the
 * data-parallel synchronisation of the experts' gradients over the expert
 * data-parallel group.
 *
 * A routed MLP, forward (backward in reverse, each GEMM as its data and
 * weight gradients, each all-to-all again):
 *
 *     norm2  router  top-k  permute  A2A [ETP AG] sort
 *     grouped fc1  act  grouped fc2  unsort [ETP RS] A2A  unpermute
 *     shared experts ([TP AG] fc1 act fc2 [TP RS])  residual
 *
 * Tokens (eq. E2): each GPU routes its T' = b s / (c t) tokens (sequence
 * parallel) to k experts each, R = T' k copies; the experts are spread E/EP
 * to a GPU; after the all-to-all and the ETP all-gather a GPU holds
 * R_l = R ETP imbalance copies, R_l / (E/EP) for each of its experts.
 * The first dense_layers blocks (and, with `every` > 1, the blocks between
 * MoE blocks) keep a dense MLP of dense_ffn (or ffn).
 *
 * Counting only, except cp_moe_a2a_us (which prices on the groups) and
 * cp_moe_dp_sync; no allocation.
 */
#ifndef CP_LLM_MOE_H
#define CP_LLM_MOE_H

#include "llm/alltoall.h"
#include "llm/dpsync.h"
#include "llm/groups.h"
#include "llm/mla.h"

/* 1 when the model has experts. */
int cp_moe_on(const cp_xformer *x);

/* 1 when the model's blocks are built here (experts or latent attention),
 * not by ops.c's dense block. */
int cp_moe_special(const cp_xformer *x);

/* 1 when block i (0-based) routes to experts: i >= dense_layers and
 * (i - dense_layers + 1) a multiple of `every` (Hugging Face's
 * decoder_sparse_step rule). */
int cp_moe_block_is_moe(const cp_xformer *x, int64_t i);

/* The model as its dense blocks see it: no experts, the MLP dense_ffn wide
 * (ffn when dense_ffn is 0). */
void cp_moe_dense_view(const cp_xformer *x, cp_xformer *dense);

/* Dense and MoE blocks of global model chunk G (0 .. pp vp - 1). */
void cp_moe_chunk_blocks(const cp_xformer *x, const cp_layout *l, int G, int64_t *dense,
                         int64_t *moe);

/* One block's forward or backward (moe: a routed block; else the dense
 * MLP of cp_moe_dense_view), attention standard or latent, into `out`. */
void cp_moe_block_fwd(const cp_xformer *x, const cp_layout *l, int moe, cp_steps *out);
void cp_moe_block_bwd(const cp_xformer *x, const cp_layout *l, int moe, cp_steps *out);

/* The tokens of a routed block for one micro-batch on one GPU (eq. E2). */
typedef struct cp_moe_tokens {
    double local_experts;  /* E / EP */
    double routed;         /* R = T' k: copies this GPU sends and gets back */
    double held;           /* R_l = R ETP imbalance: copies its experts compute on */
    double per_expert;     /* R_l / local_experts: the grouped GEMMs' m */
    double a2a_bytes;      /* R h x 2 bytes: one all-to-all's buffer per GPU */
} cp_moe_tokens;

void cp_moe_tokens_of(const cp_xformer *x, const cp_layout *l, cp_moe_tokens *t);

/* The fraction of routed tokens a destination with `held` of the `experts`
 * experts gets at least one copy of, each token choosing k distinct
 * experts uniformly (balanced routing): 1 - C(E - held, k) / C(E, k)
 * (eq. E6). */
double cp_moe_reach(double experts, double held, double k);

/* Time in us of one all-to-all (dispatch or combine) of `bytes` per GPU
 * (cp_moe_tokens.a2a_bytes) on the layout's EP group, by its dispatcher
 * and path, NCCL's at the GPU generation's a2a_eff of the links' rates,
 * times the imbalance (eq. E6-E8, E12); *why when not NULL. */
double cp_moe_a2a_us(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                     const cp_groups *G, double bytes, cp_a2a_why *why);

/* Parameters (elements, whole model) of block i; *expert (when not NULL)
 * gets the part that lives with the experts (the routed experts' matrices
 * and biases), divided over EP x ETP. */
double cp_moe_block_params(const cp_xformer *x, int64_t i, double *expert);

/* The model's parameters and (when not NULL) those one token uses: the
 * routed experts' k of E, every shared and dense one, embedding and head. */
double cp_moe_model_params(const cp_xformer *x, double *active);

/* The blocks' parameters of stage r (whole model), apart from the
 * experts' (*expert); the embedding and the head are not counted. */
void cp_moe_stage_params(const cp_xformer *x, const cp_layout *l, int r, double *dense,
                         double *expert);

/* Activation bytes a routed MLP half keeps for backward for one
 * micro-batch on one GPU under recomputation rc (eq. E11); and the
 * all-to-all's buffers alive during one routed MLP (eq. E10). */
double cp_moe_mlp_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc);
double cp_moe_dispatch_bytes(const cp_xformer *x, const cp_layout *l);

/* Megatron's model FLOPs of one sequence, forward and backward, for an
 * MoE or latent-attention model (the routed experts' k of E, shared and
 * dense MLPs, the attention's projections and core, the logits; the
 * router not counted, as Megatron does not). */
double cp_moe_flops_per_seq(const cp_xformer *x, int64_t seq, int causal_half);

/* Stage r's data-parallel synchronisation split as Megatron-Core runs it
 * (eq. E10): the dense parameters over the data x context group, the
 * experts' over the expert data-parallel group, one after the other; `in`
 * as for cp_dp_sync, its params the stage's per GPU as cp_stage_params /
 * TP counts them (the experts among them). */
void cp_moe_dp_sync(const cp_xformer *x, const cp_layout *l, int r, const cp_dp_in *in,
                    cp_dp_out *out);

#endif
