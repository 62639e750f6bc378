/*
 * hf_emit_moe.c - the blocks of the mixture-of-experts and latent-attention
 * families for `import hf-config` (hf_internal.h), mirroring the __init__
 * methods of modeling_mixtral.py, modeling_qwen2_moe.py,
 * modeling_qwen3_moe.py, DeepSeek's modeling_deepseek.py (the code the
 * DeepSeek-V3 checkpoint ships, whose tensor names it stores) and
 * modeling_gpt_oss.py.  A block's FLOPs count what one token runs through
 * (eq. H1 with W the active matmul weights: the router, top_k routed
 * experts, the shared ones).  Cost: linear in the tensors (3 per expert).
 */
#include <stdio.h>

#include "import/hf_internal.h"

/* Matmul weights of one gated expert of inner size f: gate, up, down. */
static double expert_weights(const hf_dims *c, int64_t f)
{
    return 3 * (double)c->hidden * (double)f;
}

/* Llama-style attention's matmul weights: q and o h x H d, k and v h x K d. */
static double attn_weights(const hf_dims *c)
{
    double h = (double)c->hidden, d = (double)c->head_dim;
    return 2 * h * (double)c->heads * d + 2 * h * (double)c->kv_heads * d;
}

/* The two norms every block ends with (RMSNorm in all these families). */
static void block_norms(hf_build *b, const hf_dims *c, const char *blk)
{
    char m[HF_NAME_BYTES];
    hf_norm(b, hf_sub(m, blk, "input_layernorm"), c->hidden, 0);
    hf_norm(b, hf_sub(m, blk, "post_attention_layernorm"), c->hidden, 0);
}

/* ------------------------------------------------------------------------ */
/* Mixtral (modeling_mixtral.py)                                             */

/* MixtralDecoderLayer: self_attn, block_sparse_moe (gate: Linear(h, E),
 * then experts: MixtralBlockSparseTop2MLP with w1 [f, h], w2 [h, f], w3
 * [f, h]), the two norms. */
static void mixtral_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    double w = attn_weights(c) + (double)(c->experts * c->hidden) +
               (double)c->top_k * expert_weights(c, c->moe_inner);
    double width = (double)(c->heads * c->head_dim);
    char m[HF_NAME_BYTES], ex[HF_NAME_BYTES];
    int64_t j;
    hf_layer(b, hf_block_flops(b->s, w, hf_keys(c, b->s, i), width, width), "%s", blk);
    hf_llama_attention(b, c, blk);
    hf_linear(b, hf_sub(m, blk, "block_sparse_moe.gate"), c->hidden, c->experts, 0);
    for (j = 0; j < c->experts; j++) {
        snprintf(ex, sizeof ex, "%s.block_sparse_moe.experts.%lld", blk, (long long)j);
        hf_linear(b, hf_sub(m, ex, "w1"), c->hidden, c->moe_inner, 0);
        hf_linear(b, hf_sub(m, ex, "w2"), c->moe_inner, c->hidden, 0);
        hf_linear(b, hf_sub(m, ex, "w3"), c->hidden, c->moe_inner, 0);
    }
    block_norms(b, c, blk);
}

/* ------------------------------------------------------------------------ */
/* Qwen2-MoE and Qwen3-MoE (modeling_qwen2_moe.py, modeling_qwen3_moe.py)    */

/* A Qwen MoE decoder layer: self_attn (Qwen3: with q_norm, k_norm), then
 * mlp: on the MoE blocks a SparseMoeBlock (gate: Linear(h, E); experts, each
 * gate_proj, up_proj, down_proj of moe_intermediate_size; Qwen2-MoE's
 * shared_expert of shared_expert_intermediate_size and shared_expert_gate:
 * Linear(h, 1)), on the others a dense MLP of intermediate_size; the two
 * norms. */
static void qwen_moe_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    int moe = i >= c->dense_layers && (i - c->dense_layers + 1) % c->every == 0;
    double width = (double)(c->heads * c->head_dim), w = attn_weights(c);
    char m[HF_NAME_BYTES], ex[HF_NAME_BYTES];
    int64_t j;
    if (moe)
        w += (double)(c->experts * c->hidden) + (double)c->top_k * expert_weights(c, c->moe_inner) +
             (c->shared ? expert_weights(c, c->shared_inner) + (double)c->hidden : 0);
    else
        w += expert_weights(c, c->inner);
    hf_layer(b, hf_block_flops(b->s, w, hf_keys(c, b->s, i), width, width), "%s", blk);
    hf_llama_attention(b, c, blk);
    if (!moe) {
        hf_llama_mlp(b, c, hf_sub(m, blk, "mlp"), c->inner, 0);
    } else {
        hf_linear(b, hf_sub(m, blk, "mlp.gate"), c->hidden, c->experts, 0);
        for (j = 0; j < c->experts; j++) {
            snprintf(ex, sizeof ex, "%s.mlp.experts.%lld", blk, (long long)j);
            hf_llama_mlp(b, c, ex, c->moe_inner, 0);
        }
        if (c->shared) {
            hf_llama_mlp(b, c, hf_sub(m, blk, "mlp.shared_expert"), c->shared_inner, 0);
            hf_linear(b, hf_sub(m, blk, "mlp.shared_expert_gate"), c->hidden, 1, 0);
        }
    }
    block_norms(b, c, blk);
}

/* ------------------------------------------------------------------------ */
/* DeepSeek-V3 (modeling_deepseek.py)                                        */

/* DeepseekV3Attention: q_a_proj, q_a_layernorm, q_b_proj (or q_proj when
 * q_lora_rank is null), kv_a_proj_with_mqa (the compressed keys and values
 * and the shared rotary key), kv_a_layernorm, kv_b_proj (per head: the
 * non-rotary key and the value), o_proj; no biases (attention_bias false). */
static void mla_attention(hf_build *b, const hf_dims *c, const char *blk)
{
    int64_t h = c->hidden, H = c->heads, qk = c->qk_nope + c->qk_rope;
    char m[HF_NAME_BYTES];
    if (c->q_lora > 0) {
        hf_linear(b, hf_sub(m, blk, "self_attn.q_a_proj"), h, c->q_lora, 0);
        hf_norm(b, hf_sub(m, blk, "self_attn.q_a_layernorm"), c->q_lora, 0);
        hf_linear(b, hf_sub(m, blk, "self_attn.q_b_proj"), c->q_lora, H * qk, 0);
    } else {
        hf_linear(b, hf_sub(m, blk, "self_attn.q_proj"), h, H * qk, 0);
    }
    hf_linear(b, hf_sub(m, blk, "self_attn.kv_a_proj_with_mqa"), h, c->kv_lora + c->qk_rope, 0);
    hf_norm(b, hf_sub(m, blk, "self_attn.kv_a_layernorm"), c->kv_lora, 0);
    hf_linear(b, hf_sub(m, blk, "self_attn.kv_b_proj"), c->kv_lora, H * (c->qk_nope + c->v_dim),
              0);
    hf_linear(b, hf_sub(m, blk, "self_attn.o_proj"), H * c->v_dim, h, 0);
}

/* The matmul weights of that attention, for the layer's FLOPs (the layer
 * is started before its tensors). */
static double mla_weights(const hf_dims *c)
{
    double h = (double)c->hidden, H = (double)c->heads, qk = (double)(c->qk_nope + c->qk_rope);
    double q = c->q_lora > 0 ? h * (double)c->q_lora + (double)c->q_lora * H * qk : h * H * qk;
    return q + h * (double)(c->kv_lora + c->qk_rope) +
           (double)c->kv_lora * H * (double)(c->qk_nope + c->v_dim) + H * (double)c->v_dim * h;
}

/* DeepseekV3DecoderLayer: self_attn, mlp, the two norms.  The mlp is dense
 * (DeepseekV3MLP of intermediate_size) on the first first_k_dense_replace
 * blocks, else DeepseekV3MoE: experts (each gate_proj, up_proj, down_proj
 * of moe_intermediate_size), gate (MoEGate: weight [E, h], and with
 * topk_method noaux_tc its e_score_correction_bias [E]), shared_experts (one
 * MLP of n_shared_experts x moe_intermediate_size). */
static void deepseek_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    int moe = i >= c->dense_layers;
    double H = (double)c->heads, w = mla_weights(c);
    char m[HF_NAME_BYTES], ex[HF_NAME_BYTES];
    int64_t j;
    w += moe ? (double)(c->experts * c->hidden) + (double)c->top_k * expert_weights(c, c->moe_inner) +
                   (c->shared ? expert_weights(c, c->shared_inner) : 0)
             : expert_weights(c, c->inner);
    hf_layer(b, hf_block_flops(b->s, w, hf_keys(c, b->s, i), H * (double)(c->qk_nope + c->qk_rope),
                               H * (double)c->v_dim), "%s", blk);
    mla_attention(b, c, blk);
    if (!moe) {
        hf_llama_mlp(b, c, hf_sub(m, blk, "mlp"), c->inner, 0);
    } else {
        for (j = 0; j < c->experts; j++) {
            snprintf(ex, sizeof ex, "%s.mlp.experts.%lld", blk, (long long)j);
            hf_llama_mlp(b, c, ex, c->moe_inner, 0);
        }
        hf_tensor(b, c->experts, c->hidden, 0, "%s.mlp.gate.weight", blk);
        if (c->router_bias)
            hf_tensor(b, c->experts, 0, 0, "%s.mlp.gate.e_score_correction_bias", blk);
        if (c->shared)
            hf_llama_mlp(b, c, hf_sub(m, blk, "mlp.shared_experts"), c->shared_inner, 0);
    }
    block_norms(b, c, blk);
}

/* ------------------------------------------------------------------------ */
/* GPT-OSS (modeling_gpt_oss.py)                                             */

/* GptOssDecoderLayer: self_attn (q, k, v, o with attention_bias, then
 * sinks [H]), mlp (router: weight [E, h] and bias [E]; experts:
 * gate_up_proj [E, h, 2f], gate_up_proj_bias [E, 2f], down_proj [E, f, h],
 * down_proj_bias [E, h]), the two norms.  The released checkpoints store
 * the experts in 4-bit MXFP4: a storage format, the parameters are these. */
static void gpt_oss_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    int64_t h = c->hidden, E = c->experts, f = c->moe_inner;
    double w = attn_weights(c) + (double)(E * h) + (double)c->top_k * expert_weights(c, f);
    double width = (double)(c->heads * c->head_dim);
    char m[HF_NAME_BYTES];
    hf_layer(b, hf_block_flops(b->s, w, hf_keys(c, b->s, i), width, width), "%s", blk);
    hf_llama_attention(b, c, blk);
    hf_tensor(b, c->heads, 0, 0, "%s.self_attn.sinks", blk);
    hf_linear(b, hf_sub(m, blk, "mlp.router"), h, E, 1);
    hf_tensor(b, E, h, 2 * f, "%s.mlp.experts.gate_up_proj", blk);
    hf_tensor(b, E, 2 * f, 0, "%s.mlp.experts.gate_up_proj_bias", blk);
    hf_tensor(b, E, f, h, "%s.mlp.experts.down_proj", blk);
    hf_tensor(b, E, h, 0, "%s.mlp.experts.down_proj_bias", blk);
    block_norms(b, c, blk);
}

void hf_emit_moe_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    switch (c->type->fam) {
    case FAM_MIXTRAL: mixtral_block(b, c, blk, i); break;
    case FAM_QWEN_MOE: qwen_moe_block(b, c, blk, i); break;
    case FAM_DEEPSEEK: deepseek_block(b, c, blk, i); break;
    default: gpt_oss_block(b, c, blk, i); break;
    }
}
