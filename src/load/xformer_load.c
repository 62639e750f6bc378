/*
 * xformer_load.c - the model file's "transformer" block (docs/formats.md,
 * "Transformer"): a transformer's architecture, from which the large-model
 * stage derives every GEMM, the activation sizes and the parameters, and
 * eq. M2 the data-parallel activation estimate.
 *
 * Three steps: the dimensions and switches one by one (each refused at its
 * line and column: type, range), the three optional objects (sliding
 * window, mixture of experts, latent attention), then the cross-field rules
 * that make a block describable at all (heads and key/value heads, a
 * learned table and the sequence, the expert fields, the latent widths),
 * each refused naming the numbers.  Defaults keep the files written before
 * these fields existed meaning what they meant: the MLP decides the norm
 * and the biases (a GELU block is GPT-2's and BERT's, with LayerNorm and
 * biases everywhere; a gated or squared-ReLU one has none), the positions
 * are learned when the file gives the table's rows and rotary otherwise.
 */
#include "load/xformer_load.h"

/* Bounds, refused as typing mistakes beyond them.  Published models stay
 * far below (hidden 25 k, 126 blocks, FFN 74 k, vocabulary 256 k, 384
 * experts, contexts of 10^6); with them s x b x f and a x s^2 x b stay
 * finite in doubles, and the parameter count is held to CP_XF_MAX_PARAMS
 * (model.h) below. */
#define MAX_LAYERS 100000
#define MAX_HIDDEN ((int64_t)1 << 20)
#define MAX_INNER ((int64_t)1 << 24)  /* FFN, sequence, vocabulary, positions, window */
#define MAX_HEAD_DIM ((int64_t)1 << 16)
#define MAX_EXPERTS ((int64_t)1 << 16)
#define MAX_RANK ((int64_t)1 << 20)   /* latent-attention ranks and widths */

static const char *const xf_keys[] = {
    "layers",   "hidden", "heads",    "kv_heads",      "head_dim",  "ffn",
    "mlp",      "norm",   "position", "max_positions", "seq",       "vocab",
    "tied",     "qkv_bias", "o_bias", "mlp_bias",      "qk_norm",   "attn_sinks",
    "dropout",  "sliding_window", "moe", "mla", NULL};
static const char *const window_keys[] = {"window", "every", NULL};
static const char *const moe_keys[] = {"experts",      "top_k",       "ffn",
                                       "shared_experts", "shared_ffn", "shared_gate",
                                       "dense_layers", "dense_ffn",   "every",
                                       "router",       "router_bias", "expert_bias", NULL};
static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_dim",
                                       "qk_rope_dim", "v_head_dim", NULL};
static const char *const mlp_names[] = {"gelu", "swiglu", "geglu", "relu2", NULL};
static const char *const norm_names[] = {"layernorm", "rmsnorm", NULL};
static const char *const pos_names[] = {"learned", "rope", "alibi", "none", NULL};
static const char *const router_names[] = {"softmax", "sigmoid", NULL};

#define WHERE "transformer"

/* The sizes every block has; heads no more than the hidden size, key/value
 * heads no more than the heads. */
static int read_dims(const cp_jdoc *d, cp_err *e, const json_t *o, cp_xformer *x)
{
    int rc;
    if ((rc = cp_jget_int(d, e, o, WHERE, "layers", CP_REQ, 1, MAX_LAYERS, &x->layers)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "hidden", CP_REQ, 1, MAX_HIDDEN, &x->hidden)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "heads", CP_REQ, 1, x->hidden, &x->heads)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "head_dim", 0, 1, MAX_HEAD_DIM, &x->head_dim)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "ffn", CP_REQ, 1, MAX_INNER, &x->ffn)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "seq", CP_REQ, 1, MAX_INNER, &x->seq)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "vocab", 0, 1, MAX_INNER, &x->vocab)) ||
        (rc = cp_jget_int(d, e, o, WHERE, "max_positions", 0, 1, MAX_INNER, &x->max_pos)) ||
        (rc = cp_jget_num_range(d, e, o, WHERE, "dropout", CP_NONNEG, 0, 0.99,
                                "a probability in [0, 0.99]", &x->dropout)))
        return rc;
    x->kv_heads = x->heads;
    return cp_jget_int(d, e, o, WHERE, "kv_heads", 0, 1, x->heads, &x->kv_heads);
}

/* The kinds (MLP, norm, positions) and the switches, with the defaults the
 * MLP implies. */
static int read_kinds(const cp_jdoc *d, cp_err *e, const json_t *o, cp_xformer *x)
{
    int mlp = CP_MLP_GELU, norm, pos, gelu, rc;
    if ((rc = cp_jget_enum(d, e, o, WHERE, "mlp", 0, mlp_names, NULL, &mlp)))
        return rc;
    x->mlp = (cp_xf_mlp)mlp;
    x->swiglu = cp_xf_gated(x);
    gelu = x->mlp == CP_MLP_GELU;
    norm = x->swiglu ? CP_NORM_RMS : CP_NORM_LAYER;
    pos = x->max_pos > 0 ? CP_POS_LEARNED : CP_POS_ROPE;
    x->qkv_bias = x->o_bias = x->mlp_bias = gelu;
    if ((rc = cp_jget_enum(d, e, o, WHERE, "norm", 0, norm_names, NULL, &norm)) ||
        (rc = cp_jget_enum(d, e, o, WHERE, "position", 0, pos_names, NULL, &pos)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "tied", 0, &x->tied)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "qkv_bias", 0, &x->qkv_bias)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "o_bias", 0, &x->o_bias)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "mlp_bias", 0, &x->mlp_bias)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "qk_norm", 0, &x->qk_norm)) ||
        (rc = cp_jget_bool(d, e, o, WHERE, "attn_sinks", 0, &x->attn_sinks)))
        return rc;
    x->norm = (cp_xf_norm)norm;
    x->pos = (cp_xf_pos)pos;
    return CP_OK;
}

/* "sliding_window": {"window": tokens, "every": blocks}. */
static int read_window(const cp_jdoc *d, cp_err *e, const json_t *o, cp_xformer *x)
{
    const json_t *w = NULL;
    const char *where = WHERE ".sliding_window";
    int rc;
    x->window = 0;
    x->window_every = 1;
    if ((rc = cp_jget_object(d, e, o, WHERE, "sliding_window", 0, &w)) || !w)
        return rc;
    if ((rc = cp_jdoc_check_keys(d, e, w, where, window_keys)) ||
        (rc = cp_jget_int(d, e, w, where, "window", CP_REQ, 1, MAX_INNER, &x->window)) ||
        (rc = cp_jget_int(d, e, w, where, "every", 0, 1, x->layers, &x->window_every)))
        return rc;
    return CP_OK;
}

/* "moe": each field at its position; the rules between them in
 * check_moe. */
static int read_moe(const cp_jdoc *d, cp_err *e, const json_t *m, cp_xformer *x)
{
    const char *where = WHERE ".moe";
    cp_xf_moe *q = &x->moe;
    int router = 0, rc;
    q->every = 1;
    if ((rc = cp_jdoc_check_keys(d, e, m, where, moe_keys)) ||
        (rc = cp_jget_int(d, e, m, where, "experts", CP_REQ, 1, MAX_EXPERTS, &q->experts)) ||
        (rc = cp_jget_int(d, e, m, where, "top_k", CP_REQ, 1, MAX_EXPERTS, &q->top_k)) ||
        (rc = cp_jget_int(d, e, m, where, "ffn", CP_REQ, 1, MAX_INNER, &q->ffn)) ||
        (rc = cp_jget_int(d, e, m, where, "shared_experts", 0, 0, MAX_EXPERTS,
                          &q->shared_experts)) ||
        (rc = cp_jget_int(d, e, m, where, "shared_ffn", 0, 1, MAX_INNER, &q->shared_ffn)) ||
        (rc = cp_jget_bool(d, e, m, where, "shared_gate", 0, &q->shared_gate)) ||
        (rc = cp_jget_int(d, e, m, where, "dense_layers", 0, 0, MAX_LAYERS,
                          &q->dense_layers)) ||
        (rc = cp_jget_int(d, e, m, where, "dense_ffn", 0, 1, MAX_INNER, &q->dense_ffn)) ||
        (rc = cp_jget_int(d, e, m, where, "every", 0, 1, MAX_LAYERS, &q->every)) ||
        (rc = cp_jget_enum(d, e, m, where, "router", 0, router_names, NULL, &router)) ||
        (rc = cp_jget_bool(d, e, m, where, "router_bias", 0, &q->router_bias)) ||
        (rc = cp_jget_bool(d, e, m, where, "expert_bias", 0, &q->expert_bias)))
        return rc;
    q->router_sigmoid = router == 1;
    return CP_OK;
}

/* The expert fields must describe one MoE layout: top_k of the experts, the
 * shared experts' size with them and only with them, dense blocks first
 * and at least one MoE block after them. */
static int check_moe(const cp_jdoc *d, cp_err *e, const json_t *m, const cp_xformer *x)
{
    const char *where = WHERE ".moe";
    const cp_xf_moe *q = &x->moe;
    if (q->top_k > q->experts)
        return cp_jdoc_fail(d, e, m, "top_k", where,
                            "the expert fields disagree: top_k %lld is more than the %lld "
                            "experts", (long long)q->top_k, (long long)q->experts);
    if (q->shared_experts > 0 && q->shared_ffn == 0)
        return cp_jdoc_fail(d, e, m, "shared_experts", where,
                            "the expert fields disagree: %lld shared experts need shared_ffn "
                            "(their inner size together)", (long long)q->shared_experts);
    if (q->shared_experts == 0 && q->shared_ffn > 0)
        return cp_jdoc_fail(d, e, m, "shared_ffn", where,
                            "the expert fields disagree: shared_ffn %lld without shared "
                            "experts (shared_experts is 0)", (long long)q->shared_ffn);
    if (q->shared_experts == 0 && q->shared_gate)
        return cp_jdoc_fail(d, e, m, "shared_gate", where,
                            "the expert fields disagree: a shared_gate without shared experts");
    if (q->dense_layers >= x->layers)
        return cp_jdoc_fail(d, e, m, "dense_layers", where,
                            "the expert fields disagree: %lld dense layers leave no block of "
                            "the %lld for the experts", (long long)q->dense_layers,
                            (long long)x->layers);
    if (q->dense_ffn > 0 && q->dense_layers == 0)
        return cp_jdoc_fail(d, e, m, "dense_ffn", where,
                            "the expert fields disagree: dense_ffn %lld without dense_layers",
                            (long long)q->dense_ffn);
    if (q->dense_layers + q->every > x->layers)
        return cp_jdoc_fail(d, e, m, "every", where,
                            "the expert fields disagree: a MoE block every %lld blocks after "
                            "%lld dense ones puts none in %lld layers", (long long)q->every,
                            (long long)q->dense_layers, (long long)x->layers);
    return CP_OK;
}

/* "mla": the ranks and widths of latent attention, all four widths given
 * and positive together (q_lora_rank 0: queries projected directly). */
static int read_mla(const cp_jdoc *d, cp_err *e, const json_t *a, cp_xformer *x)
{
    const char *where = WHERE ".mla";
    cp_xf_mla *q = &x->mla;
    int rc;
    if ((rc = cp_jdoc_check_keys(d, e, a, where, mla_keys)) ||
        (rc = cp_jget_int(d, e, a, where, "q_lora_rank", 0, 0, MAX_RANK, &q->q_lora_rank)) ||
        (rc = cp_jget_int(d, e, a, where, "kv_lora_rank", CP_REQ, 1, MAX_RANK,
                          &q->kv_lora_rank)) ||
        (rc = cp_jget_int(d, e, a, where, "qk_nope_dim", CP_REQ, 1, MAX_RANK,
                          &q->qk_nope_dim)) ||
        (rc = cp_jget_int(d, e, a, where, "qk_rope_dim", CP_REQ, 1, MAX_RANK,
                          &q->qk_rope_dim)) ||
        (rc = cp_jget_int(d, e, a, where, "v_head_dim", CP_REQ, 1, MAX_RANK, &q->v_head_dim)))
        return rc;
    return CP_OK;
}

/* Latent attention gives every head its own keys and values, of width
 * qk_nope_dim + qk_rope_dim; it has no q/k/v biases or per-head norms we
 * model (DeepSeek's attention_bias is false). */
static int check_mla(const cp_jdoc *d, cp_err *e, const json_t *o, cp_xformer *x)
{
    const cp_xf_mla *q = &x->mla;
    int64_t qk = q->qk_nope_dim + q->qk_rope_dim;
    if (x->kv_heads != x->heads)
        return cp_jdoc_fail(d, e, o, "kv_heads", WHERE,
                            "%lld key/value heads with latent attention (mla), which gives "
                            "each of the %lld heads its own: leave kv_heads out",
                            (long long)x->kv_heads, (long long)x->heads);
    if (x->head_dim > 0 && x->head_dim != qk)
        return cp_jdoc_fail(d, e, o, "head_dim", WHERE,
                            "head_dim %lld is not qk_nope_dim + qk_rope_dim = %lld, the "
                            "query/key width of latent attention", (long long)x->head_dim,
                            (long long)qk);
    if (x->qkv_bias || x->o_bias || x->qk_norm)
        return cp_jdoc_fail(d, e, o, x->qk_norm ? "qk_norm" : x->qkv_bias ? "qkv_bias"
                                                                          : "o_bias",
                            WHERE, "latent attention (mla) with attention biases or query/key "
                            "norms is not modelled: set it false");
    x->head_dim = qk;
    return CP_OK;
}

/* Heads and their width; a learned table and what it holds; the LM head. */
static int check_attention(const cp_jdoc *d, cp_err *e, const json_t *o, cp_xformer *x)
{
    if (x->heads % x->kv_heads)
        return cp_jdoc_fail(d, e, o, "kv_heads", WHERE,
                            "%lld key/value heads do not divide %lld heads (each serves a "
                            "group of query heads)", (long long)x->kv_heads,
                            (long long)x->heads);
    if (x->head_dim == 0 && x->mla.kv_lora_rank == 0 && x->hidden % x->heads)
        return cp_jdoc_fail(d, e, o, "heads", WHERE,
                            "%lld heads do not divide hidden %lld: give head_dim (the width "
                            "of one head)", (long long)x->heads, (long long)x->hidden);
    if (x->pos == CP_POS_LEARNED && x->max_pos == 0)
        return cp_jdoc_fail(d, e, o, "position", WHERE,
                            "learned positions need max_positions (the rows of the table)");
    if (x->pos != CP_POS_LEARNED && x->max_pos > 0)
        return cp_jdoc_fail(d, e, o, "max_positions", WHERE,
                            "max_positions is the row count of a learned position table; "
                            "position \"%s\" has none", pos_names[x->pos]);
    if (x->pos == CP_POS_LEARNED && x->seq > x->max_pos)
        return cp_jdoc_fail(d, e, o, "seq", WHERE,
                            "sequence %lld is longer than the %lld learned positions",
                            (long long)x->seq, (long long)x->max_pos);
    if (x->tied && x->vocab == 0)
        return cp_jdoc_fail(d, e, o, "tied", WHERE,
                            "tied: no LM head to tie (give vocab, or leave tied out)");
    return CP_OK;
}

/* The parameter count against CP_XF_MAX_PARAMS (model.h): below it every
 * count the large-model stage forms from the block is exact in 64 bits. */
static int check_size(const cp_jdoc *d, cp_err *e, const json_t *o, const cp_xformer *x)
{
    double total = cp_xf_param_bound(x);
    if (total <= CP_XF_MAX_PARAMS)
        return CP_OK;
    return cp_jdoc_fail(d, e, o, NULL, WHERE,
                        "the block describes %.4g parameters, over the sanity limit of 2^50 "
                        "(check hidden, ffn, experts and layers)", total);
}

int cp_read_transformer(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_model *m)
{
    cp_xformer *x = &m->xf;
    const json_t *moe = NULL, *mla = NULL;
    int rc;
    if (!obj)
        return CP_OK;
    if ((rc = cp_jdoc_check_keys(d, e, obj, WHERE, xf_keys)) ||
        (rc = read_dims(d, e, obj, x)) || (rc = read_kinds(d, e, obj, x)) ||
        (rc = read_window(d, e, obj, x)) ||
        (rc = cp_jget_object(d, e, obj, WHERE, "moe", 0, &moe)) ||
        (rc = cp_jget_object(d, e, obj, WHERE, "mla", 0, &mla)) ||
        (moe && ((rc = read_moe(d, e, moe, x)) || (rc = check_moe(d, e, moe, x)))) ||
        (mla && ((rc = read_mla(d, e, mla, x)) || (rc = check_mla(d, e, obj, x)))) ||
        (rc = check_attention(d, e, obj, x)))
        return rc;
    return check_size(d, e, obj, x);
}
