/*
 * hf_read.c - reading a Hugging Face config.json for `import hf-config`
 * (hf_internal.h; the keys and their defaults: docs/import.md).
 *
 * Every value that sets a dimension is checked where it stands (type,
 * range) and against the others it must agree with (heads and key/value
 * heads, experts and experts per token, aliases of one field that disagree,
 * the sizes the model loader will hold the result to), so that a config
 * either converts into a model the loader accepts or is refused at the
 * line and column of the value at fault.  Keys that change no tensor
 * (dropout, RoPE scaling, generation settings) are ignored; keys that would
 * add parameters or attention patterns we do not model are refused.
 */
#include <stdio.h>
#include <string.h>

#include "import/hf_internal.h"

/* ------------------------------------------------------------------------ */
/* One value                                                                 */

/* A required dimension: an integer in [1, hi], refused at its position. */
static int dim(const cp_jdoc *d, cp_err *e, const char *key, int64_t hi, int64_t *out)
{
    return cp_jget_int(d, e, d->root, "", key, CP_REQ, 1, hi, out);
}

/* An optional count in [lo, hi]: absent or null (as transformers writes
 * None) means `dflt`. */
static int opt_count(const cp_jdoc *d, cp_err *e, const char *key, int64_t lo, int64_t hi,
                     int64_t dflt, int64_t *out)
{
    const json_t *v = json_object_get(d->root, key);
    *out = dflt;
    if (!v || json_is_null(v))
        return CP_OK;
    return cp_jget_int(d, e, d->root, "", key, 0, lo, hi, out);
}

/* An optional dimension in [1, hi]; absent or null means `dflt`. */
static int opt_dim(const cp_jdoc *d, cp_err *e, const char *key, int64_t hi, int64_t dflt,
                   int64_t *out)
{
    return opt_count(d, e, key, 1, hi, dflt, out);
}

/* An optional true/false setting; absent or null means `dflt`. */
static int flag(const cp_jdoc *d, cp_err *e, const char *key, int dflt, int *out)
{
    const json_t *v = json_object_get(d->root, key);
    *out = dflt;
    if (!v || json_is_null(v))
        return CP_OK;
    return cp_jget_bool(d, e, d->root, "", key, 0, out);
}

/* An optional string; absent or null leaves *out as it is. */
static int opt_str(const cp_jdoc *d, cp_err *e, const char *key, const char **out)
{
    const json_t *v = json_object_get(d->root, key);
    if (!v || json_is_null(v))
        return CP_OK;
    return cp_jget_str(d, e, d->root, "", key, 0, 64, out);
}

/* A setting that would add parameters we do not model must be absent or
 * false: converting without them would undercount silently. */
static int refuse_true(const cp_jdoc *d, cp_err *e, const char *key, const char *what)
{
    int on;
    int rc = flag(d, e, key, 0, &on);
    if (rc == CP_OK && on)
        rc = cp_jdoc_fail(d, e, d->root, key, "",
                          "%s is not supported (its parameters are not modelled); "
                          "expected false or no key", what);
    return rc;
}

/* One field under several names (GPT-OSS writes experts_per_token and
 * num_experts_per_tok): the first present is the value, every other present
 * one must agree with it.  Required: one of them must be there. */
static int aliased(const cp_jdoc *d, cp_err *e, const char *const *keys, int64_t hi,
                   int64_t *out)
{
    const char *first = NULL;
    int64_t v;
    int k, rc;
    for (k = 0; keys[k]; k++) {
        const json_t *j = json_object_get(d->root, keys[k]);
        if (!j || json_is_null(j))
            continue;
        if ((rc = dim(d, e, keys[k], hi, &v)))
            return rc;
        if (!first) {
            first = keys[k];
            *out = v;
        } else if (v != *out) {
            return cp_jdoc_fail(d, e, d->root, keys[k], "",
                                "the expert fields disagree: %s is %lld but %s is %lld",
                                keys[k], (long long)v, first, (long long)*out);
        }
    }
    return first ? CP_OK : dim(d, e, keys[0], hi, out); /* "missing required key" */
}

/* Every head gets hidden / heads dimensions, so heads must divide hidden. */
static int heads_divide(const cp_jdoc *d, cp_err *e, const hf_dims *c, const char *heads_key)
{
    if (c->hidden % c->heads == 0)
        return CP_OK;
    return cp_jdoc_fail(d, e, d->root, heads_key, "",
                        "%lld heads do not divide %s %lld (each head takes %s / %s "
                        "dimensions)", (long long)c->heads, c->hidden_key,
                        (long long)c->hidden, c->hidden_key, heads_key);
}

/* ------------------------------------------------------------------------ */
/* BERT and GPT-2                                                            */

/* BertConfig: the keys modeling_bert.py reads for shapes. */
int hf_read_bert(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    c->hidden_key = "hidden_size";
    c->pos_key = "max_position_embeddings";
    c->mlp = CP_MLP_GELU;
    if ((rc = dim(d, e, "vocab_size", HF_MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "hidden_size", HF_MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "num_hidden_layers", HF_MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "num_attention_heads", HF_MAX_HIDDEN, &c->heads)) ||
        (rc = dim(d, e, "intermediate_size", HF_MAX_INNER, &c->inner)) ||
        (rc = dim(d, e, "max_position_embeddings", HF_MAX_POS, &c->positions)) ||
        (rc = opt_dim(d, e, "type_vocab_size", HF_MAX_TYPES, 2, &c->type_vocab)) ||
        (rc = flag(d, e, "tie_word_embeddings", 1, &c->tied)) ||
        (rc = refuse_true(d, e, "add_cross_attention", "cross-attention (a BERT decoder)")))
        return rc;
    c->kv_heads = c->heads;
    if ((rc = heads_divide(d, e, c, "num_attention_heads")))
        return rc;
    c->head_dim = c->hidden / c->heads;
    return CP_OK;
}

/* GPT2Config: n_embd, n_layer, n_head, n_positions; n_inner null means
 * 4 x n_embd; the LM head is tied to wte unless tie_word_embeddings is false. */
int hf_read_gpt2(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    c->hidden_key = "n_embd";
    c->pos_key = "n_positions";
    c->mlp = CP_MLP_GELU;
    if ((rc = dim(d, e, "vocab_size", HF_MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "n_embd", HF_MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "n_layer", HF_MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "n_head", HF_MAX_HIDDEN, &c->heads)) ||
        (rc = dim(d, e, "n_positions", HF_MAX_POS, &c->positions)) ||
        (rc = opt_dim(d, e, "n_inner", HF_MAX_INNER, 4 * c->hidden, &c->inner)) ||
        (rc = flag(d, e, "tie_word_embeddings", 1, &c->tied)) ||
        (rc = refuse_true(d, e, "add_cross_attention", "cross-attention")))
        return rc;
    c->kv_heads = c->heads;
    if ((rc = heads_divide(d, e, c, "n_head")))
        return rc;
    c->head_dim = c->hidden / c->heads;
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* The decoder families                                                      */

/* The keys every Llama-style config has (LlamaConfig and its descendants):
 * grouped-query attention through num_key_value_heads (default
 * num_attention_heads, as transformers does), head_dim (default hidden /
 * heads; latent attention sets its own), and the biases the family's
 * modeling file reads. */
static int read_llama_keys(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    const hf_type *t = c->type;
    const json_t *hd = json_object_get(d->root, "head_dim");
    int rc, explicit_hd = hd && !json_is_null(hd) && c->type->fam != FAM_DEEPSEEK;
    c->hidden_key = "hidden_size";
    c->pos_key = "max_position_embeddings";
    if ((rc = dim(d, e, "vocab_size", HF_MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "hidden_size", HF_MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "intermediate_size", HF_MAX_INNER, &c->inner)) ||
        (rc = dim(d, e, "num_hidden_layers", HF_MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "num_attention_heads", HF_MAX_HIDDEN, &c->heads)) ||
        (rc = opt_dim(d, e, "num_key_value_heads", HF_MAX_HIDDEN, c->heads, &c->kv_heads)) ||
        (rc = dim(d, e, "max_position_embeddings", HF_MAX_POS, &c->positions)) ||
        (rc = flag(d, e, "tie_word_embeddings", t->tied, &c->tied)) ||
        (t->attn_bias_key && (rc = flag(d, e, "attention_bias", t->attn_bias_dflt,
                                        &c->attn_bias))) ||
        (t->mlp_bias_key && (rc = flag(d, e, "mlp_bias", 0, &c->mlp_bias))))
        return rc;
    if (c->heads > c->hidden) /* the model file's bound (docs/formats.md) */
        return cp_jdoc_fail(d, e, d->root, "num_attention_heads", "",
                            "%lld heads for hidden_size %lld: more heads than hidden "
                            "dimensions", (long long)c->heads, (long long)c->hidden);
    if (c->type->fam == FAM_DEEPSEEK) /* latent attention: every head its own (hf_read_mla) */
        return CP_OK;
    if (!explicit_hd && (rc = heads_divide(d, e, c, "num_attention_heads")))
        return rc;
    if ((rc = opt_dim(d, e, "head_dim", HF_MAX_HIDDEN, c->hidden / c->heads, &c->head_dim)))
        return rc;
    if (c->heads % c->kv_heads != 0)
        return cp_jdoc_fail(d, e, d->root, "num_key_value_heads", "",
                            "%lld key/value heads do not divide num_attention_heads %lld "
                            "(each key/value head serves an equal group of query heads)",
                            (long long)c->kv_heads, (long long)c->heads);
    if (c->heads * c->head_dim > HF_MAX_INNER)
        return cp_jdoc_fail(d, e, d->root, explicit_hd ? "head_dim" : "num_attention_heads",
                            "", "num_attention_heads x head_dim = %lld is over the sanity "
                            "limit of %lld", (long long)(c->heads * c->head_dim),
                            (long long)HF_MAX_INNER);
    return CP_OK;
}

/* The MLP's activation: a gated MLP (the Llama family's gate_proj) takes
 * SiLU (SwiGLU) or a GELU (GeGLU, Gemma); Nemotron's plain up/down MLP takes
 * squared ReLU or a GELU.  Gemma reads hidden_activation before hidden_act. */
static int read_act(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    static const char *const gelus[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast",
                                        "gelu_python", "gelu_accurate", NULL};
    const char *act = c->type->act, *key = "hidden_act";
    int plain = c->type->norm == CP_NORM_LAYER, k, rc; /* Nemotron: plain MLP, LayerNorm */
    const json_t *ha = json_object_get(d->root, "hidden_activation");
    if (!act) { /* GPT-OSS: its experts' own clamped SwiGLU, whatever hidden_act says */
        c->mlp = CP_MLP_SWIGLU;
        return CP_OK;
    }
    if (ha && !json_is_null(ha))
        key = "hidden_activation";
    if ((rc = opt_str(d, e, key, &act)))
        return rc;
    for (k = 0; gelus[k]; k++)
        if (strcmp(act, gelus[k]) == 0) {
            c->mlp = plain ? CP_MLP_GELU : CP_MLP_GEGLU;
            return CP_OK;
        }
    if (!plain && (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)) {
        c->mlp = CP_MLP_SWIGLU;
        return CP_OK;
    }
    if (plain && strcmp(act, "relu2") == 0) {
        c->mlp = CP_MLP_RELU2;
        return CP_OK;
    }
    return cp_jdoc_fail(d, e, d->root, key, "",
                        "\"%s\" is not a modelled activation for %s (expected %s or a gelu)",
                        act, c->model_type, plain ? "relu2" : "silu");
}

/* GPT-OSS's layer_types: the sliding blocks must be 0, k, 2k, ... (or
 * none, or all), which the model file's sliding_window.every describes.
 * Absent: GptOssConfig's default, sliding on the even blocks. */
static int read_layer_types(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    const json_t *lt = NULL;
    unsigned char sliding[HF_MAX_LAYERS];
    int64_t i, n, first = -1, second = -1;
    int rc;
    c->window_every = 2;
    if ((rc = cp_jget_array(d, e, d->root, "", "layer_types", 0, &lt)) || !lt)
        return rc;
    if ((n = (int64_t)json_array_size(lt)) != c->layers)
        return cp_jdoc_fail(d, e, d->root, "layer_types", "",
                            "%lld entries for num_hidden_layers %lld", (long long)n,
                            (long long)c->layers);
    for (i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(lt, i));
        if (!s || (strcmp(s, "sliding_attention") != 0 && strcmp(s, "full_attention") != 0)) {
            char where[64];
            snprintf(where, sizeof where, "layer_types[%lld]", (long long)i);
            return cp_jdoc_fail(d, e, json_array_get(lt, i), NULL, where,
                                "expected \"sliding_attention\" or \"full_attention\"");
        }
        sliding[i] = strcmp(s, "sliding_attention") == 0;
        if (sliding[i] && first >= 0 && second < 0)
            second = i;
        if (sliding[i] && first < 0)
            first = i;
    }
    if (first < 0) { /* full attention throughout */
        c->window = 0;
        c->window_every = 1;
        return CP_OK;
    }
    c->window_every = second > 0 ? second : n; /* one sliding block: block 0 alone */
    for (i = 0; i < n; i++)
        if (sliding[i] != (i % c->window_every == 0)) {
            char where[64];
            snprintf(where, sizeof where, "layer_types[%lld]", (long long)i);
            return cp_jdoc_fail(d, e, json_array_get(lt, i), NULL, where,
                                "the sliding blocks must be 0, k, 2k, ... (what the model "
                                "file's sliding_window.every describes)");
        }
    return CP_OK;
}

/* Sliding-window attention as the model type reads it. */
static int read_window(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int on, rc;
    c->window = 0;
    c->window_every = 1;
    switch (c->type->window) {
    case WIN_ALL:
        return opt_count(d, e, "sliding_window", 1, HF_MAX_POS, 0, &c->window);
    case WIN_QWEN:
        if ((rc = flag(d, e, "use_sliding_window", 0, &on)) || !on)
            return rc;
        return cp_jdoc_fail(d, e, d->root, "use_sliding_window", "",
                            "sliding windows on the blocks from max_window_layers on are not "
                            "modelled (the released models attend fully); expected false");
    case WIN_LAYERS:
        if ((rc = opt_dim(d, e, "sliding_window", HF_MAX_POS, 128, &c->window)))
            return rc;
        return read_layer_types(d, e, c);
    default:
        return CP_OK;
    }
}

/* Experts and experts per token under the family's names, top_k no more
 * than the experts. */
static int read_experts(const cp_jdoc *d, cp_err *e, hf_dims *c, const char *const *experts,
                        const char *const *top_k)
{
    int rc;
    if ((rc = aliased(d, e, experts, HF_MAX_EXPERTS, &c->experts)) ||
        (rc = aliased(d, e, top_k, HF_MAX_EXPERTS, &c->top_k)))
        return rc;
    if (c->top_k <= c->experts)
        return CP_OK;
    return cp_jdoc_fail(d, e, d->root, top_k[0], "",
                        "the expert fields disagree: %s %lld is more than the %lld experts "
                        "(%s)", top_k[0], (long long)c->top_k, (long long)c->experts,
                        experts[0]);
}

/* MixtralConfig: num_local_experts of intermediate_size, num_experts_per_tok. */
static int read_mixtral(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    static const char *const ex[] = {"num_local_experts", NULL};
    static const char *const tk[] = {"num_experts_per_tok", NULL};
    c->moe_inner = c->inner;
    return read_experts(d, e, c, ex, tk);
}

/* Qwen's mlp_only_layers: empty, or the first k blocks (then dense_layers
 * k, with decoder_sparse_step 1 so that the two numberings agree). */
static int read_mlp_only(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    const json_t *a = NULL;
    size_t i;
    int rc;
    if ((rc = cp_jget_array(d, e, d->root, "", "mlp_only_layers", 0, &a)) || !a)
        return rc;
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) != (json_int_t)i || c->every != 1) {
            char where[64];
            snprintf(where, sizeof where, "mlp_only_layers[%zu]", i);
            return cp_jdoc_fail(d, e, v, NULL, where,
                                "dense blocks other than the first ones (0, 1, ... with "
                                "decoder_sparse_step 1) are not modelled; expected %zu", i);
        }
    }
    c->dense_layers = (int64_t)json_array_size(a);
    return CP_OK;
}

/* Qwen2MoeConfig / Qwen3MoeConfig: num_experts of moe_intermediate_size,
 * num_experts_per_tok, a MoE block every decoder_sparse_step blocks;
 * Qwen2-MoE adds one gated shared expert of shared_expert_intermediate_size. */
static int read_qwen_moe(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    static const char *const ex[] = {"num_experts", NULL};
    static const char *const tk[] = {"num_experts_per_tok", NULL};
    int rc;
    if ((rc = read_experts(d, e, c, ex, tk)) ||
        (rc = dim(d, e, "moe_intermediate_size", HF_MAX_INNER, &c->moe_inner)) ||
        (rc = opt_dim(d, e, "decoder_sparse_step", c->layers, 1, &c->every)) ||
        (rc = read_mlp_only(d, e, c)))
        return rc;
    if (strcmp(c->model_type, "qwen2_moe") == 0) {
        if ((rc = dim(d, e, "shared_expert_intermediate_size", HF_MAX_INNER, &c->shared_inner)))
            return rc;
        c->shared = 1;
        c->shared_gate = 1;
    }
    return CP_OK;
}

/* DeepSeek-V3's routing: n_group groups of experts of which topk_group are
 * searched; the experts per token must fit in them. */
static int read_groups(const cp_jdoc *d, cp_err *e, const hf_dims *c)
{
    int64_t groups, topk_group;
    int rc;
    if ((rc = opt_dim(d, e, "n_group", c->experts, 1, &groups)) ||
        (rc = opt_dim(d, e, "topk_group", HF_MAX_EXPERTS, groups, &topk_group)))
        return rc;
    if (c->experts % groups)
        return cp_jdoc_fail(d, e, d->root, "n_group", "",
                            "the expert fields disagree: %lld groups do not divide the %lld "
                            "routed experts", (long long)groups, (long long)c->experts);
    if (topk_group > groups)
        return cp_jdoc_fail(d, e, d->root, "topk_group", "",
                            "the expert fields disagree: topk_group %lld is more than the "
                            "%lld groups (n_group)", (long long)topk_group, (long long)groups);
    if (c->top_k > topk_group * (c->experts / groups))
        return cp_jdoc_fail(d, e, d->root, "num_experts_per_tok", "",
                            "the expert fields disagree: %lld experts per token from %lld "
                            "groups of %lld", (long long)c->top_k, (long long)topk_group,
                            (long long)(c->experts / groups));
    return CP_OK;
}

/* DeepseekV3Config's experts: n_routed_experts of moe_intermediate_size,
 * n_shared_experts of it together, the first first_k_dense_replace blocks
 * dense, a MoE block on every later one (moe_layer_freq 1), the router's
 * scoring function and, with topk_method noaux_tc, its correction bias. */
static int read_deepseek_moe(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    static const char *const ex[] = {"n_routed_experts", NULL};
    static const char *const tk[] = {"num_experts_per_tok", NULL};
    const char *score = "sigmoid", *method = "noaux_tc";
    int64_t freq;
    int rc;
    if ((rc = read_experts(d, e, c, ex, tk)) || (rc = read_groups(d, e, c)) ||
        (rc = dim(d, e, "moe_intermediate_size", HF_MAX_INNER, &c->moe_inner)) ||
        (rc = opt_count(d, e, "n_shared_experts", 0, 64, 0, &c->shared)) ||
        (rc = opt_count(d, e, "first_k_dense_replace", 0, HF_MAX_LAYERS, 0, &c->dense_layers)) ||
        (rc = opt_dim(d, e, "moe_layer_freq", HF_MAX_LAYERS, 1, &freq)) ||
        (rc = opt_str(d, e, "scoring_func", &score)) ||
        (rc = opt_str(d, e, "topk_method", &method)) ||
        (rc = opt_count(d, e, "num_nextn_predict_layers", 0, 64, 0, &c->mtp_layers)))
        return rc;
    if (freq != 1)
        return cp_jdoc_fail(d, e, d->root, "moe_layer_freq", "",
                            "a MoE block every %lld blocks is not modelled (DeepSeek-V2 and V3 "
                            "use 1); expected 1", (long long)freq);
    if (strcmp(score, "sigmoid") != 0 && strcmp(score, "softmax") != 0)
        return cp_jdoc_fail(d, e, d->root, "scoring_func", "",
                            "\"%s\": expected \"sigmoid\" or \"softmax\"", score);
    if (strcmp(method, "noaux_tc") != 0 && strcmp(method, "greedy") != 0 &&
        strcmp(method, "group_limited_greedy") != 0)
        return cp_jdoc_fail(d, e, d->root, "topk_method", "",
                            "\"%s\": expected \"noaux_tc\", \"greedy\" or "
                            "\"group_limited_greedy\"", method);
    if (c->dense_layers >= c->layers)
        return cp_jdoc_fail(d, e, d->root, "first_k_dense_replace", "",
                            "the expert fields disagree: %lld dense blocks leave none of the "
                            "%lld for the experts", (long long)c->dense_layers,
                            (long long)c->layers);
    c->router_sigmoid = strcmp(score, "sigmoid") == 0;
    c->router_bias = strcmp(method, "noaux_tc") == 0;
    c->shared_inner = c->shared * c->moe_inner;
    return CP_OK;
}

/* Multi-head latent attention (DeepseekV3Config): q_lora_rank (null: one
 * query projection), kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
 * v_head_dim; every head has its own keys and values after the
 * up-projection, so key/value heads are the heads. */
static int read_mla(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    if ((rc = opt_count(d, e, "q_lora_rank", 1, HF_MAX_HIDDEN, 0, &c->q_lora)) ||
        (rc = dim(d, e, "kv_lora_rank", HF_MAX_HIDDEN, &c->kv_lora)) ||
        (rc = dim(d, e, "qk_nope_head_dim", HF_MAX_HIDDEN, &c->qk_nope)) ||
        (rc = dim(d, e, "qk_rope_head_dim", HF_MAX_HIDDEN, &c->qk_rope)) ||
        (rc = dim(d, e, "v_head_dim", HF_MAX_HIDDEN, &c->v_dim)) ||
        (rc = refuse_true(d, e, "attention_bias", "attention_bias with latent attention")))
        return rc;
    c->kv_heads = c->heads;
    c->head_dim = c->qk_nope + c->qk_rope;
    if (c->heads * (c->qk_nope + (c->qk_rope > c->v_dim ? c->qk_rope : c->v_dim)) >
        HF_MAX_INNER)
        return cp_jdoc_fail(d, e, d->root, "num_attention_heads", "",
                            "num_attention_heads x the head widths is over the sanity limit "
                            "of %lld", (long long)HF_MAX_INNER);
    return CP_OK;
}

/* GptOssConfig: num_local_experts of intermediate_size, experts per token
 * (num_experts_per_tok, and experts_per_token as the released files also
 * write it), biased experts and router, sink logits. */
static int read_gpt_oss(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    static const char *const ex[] = {"num_local_experts", NULL};
    static const char *const tk[] = {"num_experts_per_tok", "experts_per_token", NULL};
    c->moe_inner = c->inner;
    c->sinks = c->router_bias = c->expert_bias = 1;
    return read_experts(d, e, c, ex, tk);
}

/* The checkpoint's storage format (DeepSeek-V3's fp8 blocks, GPT-OSS's
 * mxfp4 experts): it changes no parameter count, only the note says so. */
static int read_storage(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    const json_t *q = json_object_get(d->root, "quantization_config");
    const json_t *m = json_is_object(q) ? json_object_get(q, "quant_method") : NULL;
    (void)e;
    if (json_is_string(m) && json_string_length(m) > 0 && json_string_length(m) < 32)
        c->storage = json_string_value(m);
    return CP_OK;
}

/* What the model loader will hold the result to, with the config's
 * positions: tensors per conversion, elements per tensor (GPT-OSS's fused
 * expert tensors), parameters per model, a MoE block at all. */
static int check_sizes(const cp_jdoc *d, cp_err *e, const hf_dims *c)
{
    const char *ex = c->type->fam == FAM_DEEPSEEK ? "n_routed_experts"
                     : c->type->fam == FAM_QWEN_MOE ? "num_experts" : "num_local_experts";
    double per_block = 16 + (c->type->fam == FAM_GPT_OSS ? 0 : 3 * (double)c->experts);
    cp_xformer x;
    memset(&x, 0, sizeof x);
    if ((double)c->layers * per_block > (double)c->max_tensors)
        return cp_jdoc_fail(d, e, d->root, c->experts ? ex : "num_hidden_layers", "",
                            "%lld experts in %lld blocks make over %lld tensors, the "
                            "converter's limit", (long long)c->experts, (long long)c->layers,
                            (long long)c->max_tensors);
    if ((double)c->experts * (double)c->hidden * 2 * (double)c->moe_inner >
        (double)CP_MAX_NUMEL)
        return cp_jdoc_fail(d, e, d->root, "intermediate_size", "",
                            "the experts' fused gate_up_proj would have over 2^40 elements");
    if (c->experts > 0 && c->dense_layers + c->every > c->layers)
        return cp_jdoc_fail(d, e, d->root, "decoder_sparse_step", "",
                            "the expert fields disagree: a MoE block every %lld blocks after "
                            "%lld dense ones (mlp_only_layers) puts none in %lld layers",
                            (long long)c->every, (long long)c->dense_layers,
                            (long long)c->layers);
    hf_xformer(c, 1, &x);
    if (cp_xf_param_bound(&x) > CP_XF_MAX_PARAMS)
        return cp_jdoc_fail(d, e, d->root, c->hidden_key, "",
                            "the model would have %.4g parameters, over the sanity limit of "
                            "2^50", cp_xf_param_bound(&x));
    return CP_OK;
}

int hf_read_decoder(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    c->qkv_bias = c->type->qkv_bias;
    c->qk_norm = c->type->qk_norm;
    c->every = 1;
    if ((rc = read_llama_keys(d, e, c)) || (rc = read_act(d, e, c)) ||
        (rc = read_window(d, e, c)) || (rc = read_storage(d, e, c)))
        return rc;
    switch (c->type->fam) {
    case FAM_MIXTRAL: rc = read_mixtral(d, e, c); break;
    case FAM_QWEN_MOE: rc = read_qwen_moe(d, e, c); break;
    case FAM_DEEPSEEK:
        if ((rc = read_mla(d, e, c)) == CP_OK)
            rc = read_deepseek_moe(d, e, c);
        break;
    case FAM_GPT_OSS: rc = read_gpt_oss(d, e, c); break;
    default: break;
    }
    return rc ? rc : check_sizes(d, e, c);
}

/* ------------------------------------------------------------------------ */
/* The block the model file describes                                        */

void hf_xformer(const hf_dims *c, int lm, cp_xformer *x)
{
    int old = c->type->fam == FAM_BERT || c->type->fam == FAM_GPT2;
    memset(x, 0, sizeof *x);
    x->layers = c->layers;
    x->hidden = c->hidden;
    x->heads = c->heads;
    x->kv_heads = c->kv_heads;
    x->head_dim = c->head_dim;
    x->ffn = c->inner;
    x->seq = c->seq;
    x->vocab = lm ? c->vocab : 0;
    x->pos = old ? CP_POS_LEARNED : CP_POS_ROPE;
    x->max_pos = old ? c->positions : 0;
    x->mlp = (cp_xf_mlp)c->mlp;
    x->norm = (cp_xf_norm)c->type->norm;
    x->swiglu = cp_xf_gated(x);
    x->tied = lm && c->tied;
    x->qkv_bias = old || c->qkv_bias || c->attn_bias;
    x->o_bias = old || c->attn_bias;
    x->mlp_bias = old || c->mlp_bias;
    x->qk_norm = c->qk_norm;
    x->window = c->window;
    x->window_every = c->window_every > 0 ? c->window_every : 1;
    x->attn_sinks = c->sinks;
    x->dropout = old ? 0.1 : 0; /* BERT's and GPT-2's configs' default; none since */
    x->moe.experts = c->experts;
    x->moe.top_k = c->top_k;
    x->moe.ffn = c->moe_inner;
    x->moe.shared_experts = c->shared;
    x->moe.shared_ffn = c->shared_inner;
    x->moe.dense_layers = c->dense_layers;
    x->moe.every = c->experts > 0 ? c->every : 0;
    x->moe.router_sigmoid = c->router_sigmoid;
    x->moe.expert_bias = c->expert_bias;
    x->moe.router_bias = c->router_bias;
    x->moe.shared_gate = c->shared_gate;
    x->mla.q_lora_rank = c->q_lora;
    x->mla.kv_lora_rank = c->kv_lora;
    x->mla.qk_nope_dim = c->qk_nope;
    x->mla.qk_rope_dim = c->qk_rope;
    x->mla.v_head_dim = c->v_dim;
}
