/*
 * xformer.c - what a transformer block description (cp_xformer, model.h)
 * implies without any file: which blocks have a mixture-of-experts MLP,
 * and how many parameters the model has in all and per token.
 *
 * The counts mirror the modules Hugging Face's modeling_*.py files register
 * (docs/formats.md, "Parameters of the transformer block", has the formula
 * term by term); `import hf-config` writes the same tensors one by one, and
 * tests/unit/test_hf_config.c checks that both agree with each other and
 * with the published totals.  Cost: O(layers).
 */
#include "model/model.h"

int cp_xf_moe_block(const cp_xformer *x, int64_t i)
{
    int64_t every = x->moe.every > 0 ? x->moe.every : 1;
    if (x->moe.experts <= 0 || i < x->moe.dense_layers)
        return 0;
    return (i - x->moe.dense_layers + 1) % every == 0;
}

/* The sums below run in doubles: every term is an integer, and the
 * loaders keep the total under CP_XF_MAX_PARAMS (2^50), where doubles are
 * exact, so the result converts to int64_t without loss; above it
 * cp_xf_param_bound still gives the right magnitude without overflow. */

/* A norm over n features: LayerNorm has a weight and a bias, RMSNorm a
 * weight. */
static double norm_params(const cp_xformer *x, double n)
{
    return x->norm == CP_NORM_LAYER ? 2 * n : n;
}

/* One MLP of inner size f: gate (when gated), up and down matrices, and
 * with `bias` a bias on each (the gate's and up's f each, the down's h). */
static double mlp_params(const cp_xformer *x, double f, int bias)
{
    double h = (double)x->hidden, mats = cp_xf_gated(x) ? 3 : 2;
    return mats * h * f + (bias ? (mats - 1) * f + h : 0);
}

/* Attention of one block: multi-head latent attention (DeepSeek: the query
 * down-projection, its norm and up-projection, or one query projection; the
 * joint key/value down-projection with the shared rotary key, its norm, the
 * key/value up-projection; the output projection), else the q, k, v and o
 * projections with their biases and the per-head query and key norms; the
 * sink logits either way. */
static double attn_params(const cp_xformer *x)
{
    double h = (double)x->hidden, H = (double)x->heads, d = (double)cp_xf_head_dim(x);
    double q = H * d, kv = (double)x->kv_heads * d, p;
    if (x->mla.kv_lora_rank > 0) {
        const cp_xf_mla *a = &x->mla;
        double qr = (double)a->q_lora_rank, kr = (double)a->kv_lora_rank;
        double qk = (double)(a->qk_nope_dim + a->qk_rope_dim), v = (double)a->v_head_dim;
        p = qr > 0 ? h * qr + norm_params(x, qr) + qr * H * qk : h * H * qk;
        p += h * (kr + (double)a->qk_rope_dim) + norm_params(x, kr);
        p += kr * H * ((double)a->qk_nope_dim + v);
        return p + H * v * h + (x->attn_sinks ? H : 0);
    }
    p = h * q + 2 * h * kv + q * h;
    p += (x->qkv_bias ? q + 2 * kv : 0) + (x->o_bias ? h : 0);
    p += x->qk_norm ? 2 * d : 0; /* one RMSNorm weight of head_dim each (Qwen3) */
    return p + (x->attn_sinks ? H : 0);
}

/* The routed experts (`routed` of them counted), router and shared experts
 * of one MoE block. */
static double moe_params(const cp_xformer *x, double routed)
{
    const cp_xf_moe *m = &x->moe;
    double E = (double)m->experts, h = (double)x->hidden;
    double p = routed * mlp_params(x, (double)m->ffn, m->expert_bias);
    p += E * h + (m->router_bias ? E : 0);
    if (m->shared_experts > 0)
        p += mlp_params(x, (double)m->shared_ffn, x->mlp_bias) + (m->shared_gate ? h : 0);
    return p;
}

/* Total (active 0) or per-token (active 1) parameters. */
static double params(const cp_xformer *x, int active)
{
    double h = (double)x->hidden, V = (double)x->vocab, sum;
    double dense_ffn = (double)(x->moe.dense_ffn > 0 ? x->moe.dense_ffn : x->ffn);
    int64_t i;
    sum = V * h + (x->pos == CP_POS_LEARNED ? (double)x->max_pos * h : 0) +
          norm_params(x, h) + (x->tied ? 0 : V * h);
    for (i = 0; i < x->layers; i++) {
        sum += attn_params(x) + 2 * norm_params(x, h);
        if (cp_xf_moe_block(x, i))
            sum += moe_params(x, (double)(active ? x->moe.top_k : x->moe.experts));
        else
            sum += mlp_params(x, i < x->moe.dense_layers ? dense_ffn : (double)x->ffn,
                              x->mlp_bias);
    }
    return sum;
}

double cp_xf_param_bound(const cp_xformer *x)
{
    return params(x, 0);
}

void cp_xf_params(const cp_xformer *x, int64_t *total, int64_t *active)
{
    if (total)
        *total = (int64_t)params(x, 0);
    if (active)
        *active = (int64_t)params(x, 1);
}
