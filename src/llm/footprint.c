/*
 * footprint.c - device memory per GPU of a layout (see footprint.h;
 * docs/model.md eq. M3-M6).
 *
 * Notation as ops.c: T = b s / c tokens on a GPU, T' = T / t under
 * sequence parallelism (T without), per-GPU heads a and g, head width d,
 * MLP width f (all / t), E = 2 bytes an activation, e = 1 for a tensor
 * Transformer Engine keeps in FP8 (else E), dropout masks 1 byte.
 */
#include <string.h>

#include "llm/footprint.h"
#include "llm/moe.h"

/* Blocks on stage r, over its chunks. */
static double stage_blocks(const cp_layout *l, int r)
{
    double n = 0;
    int c;
    for (c = 0; c < l->vp; c++)
        n += (double)cp_layout_chunk_layers(l, c * l->pp + r);
    return n;
}

double cp_stage_params(const cp_xformer *x, const cp_layout *l, int r)
{
    double p = stage_blocks(l, r) * cp_block_params(x);
    if (cp_moe_special(x)) { /* blocks that differ: each its own (moe.h) */
        double dense, expert;
        cp_moe_stage_params(x, l, r, &dense, &expert);
        p = dense + expert;
    }
    if (r == 0)
        p += cp_embed_params(x);
    if (r == l->pp - 1) {
        p += cp_head_params(x);
        if (x->tied && l->pp > 1) /* the last stage's copy of the tied matrix */
            p += (double)x->vocab * (double)x->hidden;
    }
    return p;
}

/* Attention's half of a dense block (norm1 .. residual1). */
static double attn_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc)
{
    double t = l->tp, b = l->mbs, s = (double)(l->seq > 0 ? l->seq : x->seq), c = l->cp;
    double T = b * s / c, Tsp = l->sp > 0 ? T / t : T, h = (double)x->hidden;
    double a = (double)x->heads / t, g = x->kv_heads >= l->tp ? (double)x->kv_heads / t : 1;
    double d = (double)cp_xf_head_dim(x), E = 2;
    double e = l->precision == CP_PREC_FP8 ? 1 : E, drop = x->dropout > 0 ? 1 : 0;
    double kept, core;
    kept = Tsp * h * E            /* norm1's input */
           + Tsp * h * e          /* its output, the QKV GEMM's input (sharded under SP) */
           + T * (a + 2 * g) * d * E /* Q, K and V */
           + T * a * d * e        /* the attention output, the projection's input */
           + Tsp * h * drop;      /* the mask after the projection */
    if (l->attn == CP_ATTN_FLASH)
        core = T * a * 4;         /* the log-sum-exp per head and query, fp32 */
    else                          /* softmax output, dropout output and mask over the scores */
        core = b * a * (s / c) * s * (E + drop * (E + 1));
    if (rc == CP_RC_SELECTIVE)    /* attention's core is rebuilt in backward */
        core = 0;
    return kept + core;
}

/* The dense MLP's half (norm2 .. residual2). */
static double mlp_act_bytes(const cp_xformer *x, const cp_layout *l)
{
    double t = l->tp, b = l->mbs, s = (double)(l->seq > 0 ? l->seq : x->seq), c = l->cp;
    double T = b * s / c, Tsp = l->sp > 0 ? T / t : T, h = (double)x->hidden;
    double f = (double)x->ffn / t, E = 2;
    double e = l->precision == CP_PREC_FP8 ? 1 : E, drop = x->dropout > 0 ? 1 : 0;
    return Tsp * h * E            /* norm2's input */
           + Tsp * h * e          /* fc1's input */
           + T * f * E * (cp_xf_gated(x) ? 2 : 1) /* fc1's output, the activation's input */
           + T * f * e            /* the activation's output, fc2's input */
           + Tsp * h * drop;      /* the mask after fc2 */
}

/* A mixture-of-experts or latent-attention model's block (eq. E11): its
 * attention's half, and the larger of its routed and dense MLPs. */
static double special_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc)
{
    double attn = cp_mla_on(x) ? cp_mla_act_bytes(x, l, rc) : attn_act_bytes(x, l, rc);
    double mlp = cp_moe_mlp_act_bytes(x, l, rc), dense;
    cp_xformer d;
    cp_moe_dense_view(x, &d);
    dense = x->moe.dense_layers > 0 || x->moe.every > 1 || !cp_moe_on(x) ?
            mlp_act_bytes(&d, l) : 0;
    return attn + (mlp > dense ? mlp : dense);
}

double cp_block_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc)
{
    double t = l->tp, b = l->mbs, s = (double)(l->seq > 0 ? l->seq : x->seq), c = l->cp;
    double T = b * s / c, Tsp = l->sp > 0 ? T / t : T, h = (double)x->hidden;
    if (rc == CP_RC_FULL) /* only each block's input is kept */
        return Tsp * h * 2;
    if (cp_moe_special(x))
        return special_act_bytes(x, l, rc);
    return attn_act_bytes(x, l, rc) + mlp_act_bytes(x, l);
}

int cp_inflight_chunks(const cp_layout *l, int r)
{
    int p = l->pp, v = l->vp, m = l->micro;
    int w = v > 1 ? (p - r - 1) * 2 + (v - 1) * p : p - r - 1;
    int n = w + 1;
    return n < m * v ? n : m * v;
}

/* The model states of `P` parameters per GPU, `gemm` of them GEMM
 * weights, sharded over the n GPUs of their data-parallel group, `blk`
 * one block's (eq. M4): 16-bit weights (and FP8 copies of the GEMM
 * weights), gradients in the reduction type, fp32 master weights and Adam
 * moments (12 bytes), each divided as the framework shards it. */
static void add_states(const cp_layout *l, double P, double gemm, double n, double blk,
                       cp_llm_mem *o)
{
    double gb = l->grad_fp32 ? 4 : 2, w = P * 2, g = P * gb, opt = P * 12;
    /* FP8 GEMM weights: Transformer Engine caches an FP8 copy and its
     * transpose beside the 16-bit weight (2 more bytes), or with FP8
     * parameters keeps the FP8 weight and its transpose alone (2 bytes in
     * place of 2) */
    if (l->precision == CP_PREC_FP8 && !l->fp8_params)
        w += 2.0 * gemm;
    if (l->zero >= 1)
        opt /= n;
    if (l->offload_opt) { /* the states live in the tier (eq. T1) */
        o->offloaded += opt;
        opt = 0;
    }
    if (l->zero >= 2)
        g /= n;
    if (l->zero >= 3) {
        /* sharded weights; FSDP and ZeRO-3 gather two blocks at a time
         * (prefetch) and hold one block's unsharded gradient */
        w /= n;
        o->buffers += 2 * blk * 2 + blk * gb;
    }
    o->weights += w;
    o->grads += g;
    o->optim += opt;
}

/* The model states of stage r per GPU over the n = dp cp GPUs of the
 * data-parallel group; a mixture of experts' experts over EP x ETP, their
 * states over the expert data-parallel group (eq. E10). */
static void states(const cp_xformer *x, const cp_layout *l, int r, cp_llm_mem *o)
{
    double P = cp_stage_params(x, l, r) / l->tp, n = (double)l->dp * l->cp;
    double nb = stage_blocks(l, r), dense = nb * cp_block_params(x), expert = 0, blk, px;
    if (cp_moe_special(x))
        cp_moe_stage_params(x, l, r, &dense, &expert);
    blk = (dense + expert) / (nb > 0 ? nb : 1) / l->tp;
    o->weights = o->grads = o->optim = o->buffers = 0;
    add_states(l, P - expert / l->tp, dense / l->tp, n, blk, o);
    if (expert > 0) {
        px = expert / ((double)l->ep * cp_layout_etp(l));
        add_states(l, px, px, l->edp > 0 ? l->edp : 1, blk, o);
    }
}

/* The LM head's buffers on the last stage for the one micro-batch it runs
 * at a time: the 16-bit logits, the fp32 softmax cross-entropy keeps, and
 * the logits' gradient. */
static double logits_bytes(const cp_xformer *x, const cp_layout *l)
{
    double s = (double)(l->seq > 0 ? l->seq : x->seq);
    double T = l->mbs * s / l->cp, V = (double)x->vocab / l->tp;
    return x->vocab > 0 ? T * V * (2 + 4 + 2) : 0;
}

void cp_llm_memory(const cp_xformer *x, const cp_layout *l, cp_recompute rc, cp_llm_mem *out)
{
    double s = (double)(l->seq > 0 ? l->seq : x->seq), h = (double)x->hidden;
    double T = l->mbs * s / l->cp, Tsp = l->sp > 0 ? T / l->tp : T;
    double per_layer = cp_block_act_bytes(x, l, rc), full = cp_block_act_bytes(x, l, CP_RC_NONE);
    int r;
    memset(out, 0, sizeof *out);
    out->total = -1;
    /* the first stage (the most in flight, the embedding), the second (the
     * most of the stages of whole chunks when the ends count as layers) and
     * the last (the head and logits): every other stage holds what the
     * second does with fewer micro-batches in flight */
    for (r = 0; r < l->pp; r = r == 1 && l->pp > 3 ? l->pp - 1 : r + 1) {
        cp_llm_mem m;
        int k = cp_inflight_chunks(l, r);
        memset(&m, 0, sizeof m);
        states(x, l, r, &m);
        m.per_layer_act = per_layer;
        m.inflight = k;
        {   /* chunks hold recomputed blocks' inputs and the others' whole */
            double n = (double)l->layers_per_chunk;
            double nrc = rc == CP_RC_FULL && l->recompute_layers > 0 &&
                                 l->recompute_layers < n ? l->recompute_layers : n;
            double chunk = rc == CP_RC_FULL ? nrc * per_layer + (n - nrc) * full
                                            : n * per_layer;
            m.activations = (double)k * chunk;
        }
        if (rc == CP_RC_FULL) /* one block rebuilt at a time in backward */
            m.activations += full;
        if (l->offload_act) { /* moved out as made: two blocks' worth stay (eq. T2) */
            m.offloaded += m.activations;
            m.offloaded_act = m.activations;
            m.activations = 2 * per_layer;
        }
        if (r == 0) /* the embedding's output and dropout mask */
            m.activations += (double)k * Tsp * h * 3;
        if (r == l->pp - 1)
            m.logits = logits_bytes(x, l);
        m.buffers += cp_moe_dispatch_bytes(x, l); /* eq. E10 */
        /* the allocator's slack on what changes every micro-batch, then the
         * runtime's fixed reserve */
        m.reserve = CP_RUNTIME_RESERVE_BYTES +
                    CP_FRAGMENTATION * (m.activations + m.logits + m.buffers);
        m.total = m.weights + m.grads + m.optim + m.activations + m.logits + m.buffers + m.reserve;
        m.stage = r;
        if (m.total > out->total)
            *out = m;
    }
}
