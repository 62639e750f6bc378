/*
 * hf_config.c - Hugging Face config.json to coarse-plan model JSON (see
 * hf_config.h; the mapping and the formulas are in docs/import.md).
 *
 * Three steps: read the family's dimensions from the config (read_bert,
 * read_gpt2, read_llama: every value checked, errors at its position), pick
 * the architecture (architectures[0] or --arch), then emit the tensors and
 * layers the transformers module of that architecture registers.  The
 * emitters mirror the __init__ methods of modeling_bert.py,
 * modeling_gpt2.py and modeling_llama.py line by line, so that a reader can
 * hold the two side by side; tests/unit/test_hf_config.c checks them
 * against the per-tensor CSVs in ../shared/data/models/.  Cost: linear in
 * the number of tensors (16 per block at most).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/hf_config.h"
#include "core/fileio.h"
#include "core/jsondoc.h"
#include "model/model.h"

/* Sanity bounds on config values: above them a value is refused as a typing
 * mistake.  Published models stay far below (vocabularies up to about 256 k
 * tokens, hidden sizes up to about 25 k, 126 blocks, contexts up to 10^6);
 * the bounds also keep every 2-D tensor within the loader's 2^40 elements
 * (2^24 x 2^16) and every product below in 64 bits. */
#define MAX_VOCAB ((int64_t)1 << 24)
#define MAX_HIDDEN ((int64_t)1 << 16)
#define MAX_INNER ((int64_t)1 << 24)  /* intermediate size, heads x head_dim */
#define MAX_POS ((int64_t)1 << 24)
#define MAX_LAYERS 1024
#define MAX_TYPES ((int64_t)1 << 16)  /* BERT token types (2 in every release) */
_Static_assert(MAX_VOCAB * MAX_HIDDEN <= CP_MAX_NUMEL && MAX_INNER * MAX_HIDDEN <= CP_MAX_NUMEL,
               "every tensor the bounds allow must be one the model loader accepts");

/* The model loader's limit on one layer's forward FLOPs per sample
 * (src/load/model_load.c): a layer above it is refused here, with the
 * config's position, rather than by the loader after conversion. */
#define MAX_LAYER_FLOPS 1e20

/* Longest tensor or layer name we build, and longest block path within it
 * ("bert.encoder.layer.1023"): the longest real name is under 70 bytes. */
#define NAME_BYTES 160
#define BLOCK_BYTES 64

/* Longest model name the loader accepts (model_load.c NAME_MAX_BYTES). */
#define MODEL_NAME_BYTES 512

enum family { FAM_BERT, FAM_GPT2, FAM_LLAMA };

/* What sits on top of the base model. */
enum head {
    HEAD_NONE,     /* the base model alone (GPT2Model, LlamaModel) */
    HEAD_POOLER,   /* BertModel: the pooler over the first token */
    HEAD_PRETRAIN, /* BertForPreTraining: pooler, masked-LM and next-sentence heads */
    HEAD_MLM,      /* BertForMaskedLM: the masked-LM head, no pooler */
    HEAD_LM        /* a causal LM head (lm_head) */
};

typedef struct hf_arch {
    const char *name;   /* the class name, as in "architectures" */
    const char *prefix; /* the base model's attribute in the head model, with a dot */
    int fam;            /* enum family */
    int head;           /* enum head */
} hf_arch;

static const hf_arch archs[] = {
    {"BertModel", "", FAM_BERT, HEAD_POOLER},
    {"BertForPreTraining", "bert.", FAM_BERT, HEAD_PRETRAIN},
    {"BertForMaskedLM", "bert.", FAM_BERT, HEAD_MLM},
    {"GPT2LMHeadModel", "transformer.", FAM_GPT2, HEAD_LM},
    {"GPT2Model", "", FAM_GPT2, HEAD_NONE},
    {"LlamaForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"LlamaModel", "", FAM_LLAMA, HEAD_NONE},
    {"MistralForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"MistralModel", "", FAM_LLAMA, HEAD_NONE},
    {"Qwen2ForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"Qwen2Model", "", FAM_LLAMA, HEAD_NONE},
    {"GemmaForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"GemmaModel", "", FAM_LLAMA, HEAD_NONE},
};
#define NARCHS (sizeof archs / sizeof archs[0])

/* model_type values, their family, the architecture used when the file
 * names none, and the default sequence length: BERT 128 (phase-1
 * pre-training, as the shipped models), GPT-2 1024 (its context), Llama 2048
 * (a common pre-training length; Llama 2's 4096 and Mistral's 32768 are
 * longer than data-parallel training steps usually are).  For the Llama
 * family, what its config class defaults tie_word_embeddings to (Gemma's
 * ties) and whether the q, k and v projections always carry biases
 * (modeling_qwen2.py: bias=True, o_proj none). */
static const struct {
    const char *type;
    int fam;
    const char *arch;
    int64_t seq;
    int tied, qkv_bias;
} types[] = {
    {"bert", FAM_BERT, "BertModel", 128, 1, 0},
    {"gpt2", FAM_GPT2, "GPT2LMHeadModel", 1024, 1, 0},
    {"llama", FAM_LLAMA, "LlamaForCausalLM", 2048, 0, 0},
    {"mistral", FAM_LLAMA, "MistralForCausalLM", 2048, 0, 0},
    {"qwen2", FAM_LLAMA, "Qwen2ForCausalLM", 2048, 0, 1},
    {"gemma", FAM_LLAMA, "GemmaForCausalLM", 2048, 1, 0},
};
#define NTYPES (sizeof types / sizeof types[0])

/* The dimensions of one config, in the names of modeling_*.py. */
typedef struct hf_dims {
    const hf_arch *arch;
    const char *model_type;  /* borrowed from the document */
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, inner, positions, type_vocab;
    int tied;                /* tie_word_embeddings */
    int attn_bias, mlp_bias; /* Llama's attention_bias, mlp_bias */
    int qkv_bias;            /* Qwen2: q, k and v projections biased, o not */
    int64_t seq;             /* tokens per sample */
    const char *hidden_key;  /* the family's key names, for messages */
    const char *pos_key;
} hf_dims;

/* ------------------------------------------------------------------------ */
/* Reading the config                                                        */

/* A required dimension: an integer in [1, hi], refused at its position. */
static int dim(const cp_jdoc *d, cp_err *e, const char *key, int64_t hi, int64_t *out)
{
    return cp_jget_int(d, e, d->root, "", key, CP_REQ, 1, hi, out);
}

/* An optional dimension: absent or null (as transformers writes None)
 * means `dflt`. */
static int opt_dim(const cp_jdoc *d, cp_err *e, const char *key, int64_t hi, int64_t dflt,
                   int64_t *out)
{
    const json_t *v = json_object_get(d->root, key);
    *out = dflt;
    if (!v || json_is_null(v))
        return CP_OK;
    return cp_jget_int(d, e, d->root, "", key, 0, 1, hi, out);
}

/* An optional true/false setting; absent or null means `dflt`.  jsondoc has
 * no boolean getter because no coarse-plan file has booleans. */
static int flag(const cp_jdoc *d, cp_err *e, const char *key, int dflt, int *out)
{
    const json_t *v = json_object_get(d->root, key);
    char got[80];
    *out = dflt;
    if (!v || json_is_null(v))
        return CP_OK;
    if (!json_is_boolean(v)) {
        cp_jshow(v, got, sizeof got);
        return cp_jdoc_fail(d, e, d->root, key, "", "expected true or false, got %s", got);
    }
    *out = json_is_true(v);
    return CP_OK;
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

/* BertConfig: the keys modeling_bert.py reads for shapes. */
static int read_bert(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    c->hidden_key = "hidden_size";
    c->pos_key = "max_position_embeddings";
    if ((rc = dim(d, e, "vocab_size", MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "hidden_size", MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "num_hidden_layers", MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "num_attention_heads", MAX_HIDDEN, &c->heads)) ||
        (rc = dim(d, e, "intermediate_size", MAX_INNER, &c->inner)) ||
        (rc = dim(d, e, "max_position_embeddings", MAX_POS, &c->positions)) ||
        (rc = opt_dim(d, e, "type_vocab_size", MAX_TYPES, 2, &c->type_vocab)) ||
        (rc = flag(d, e, "tie_word_embeddings", 1, &c->tied)) ||
        (rc = refuse_true(d, e, "add_cross_attention", "cross-attention (a BERT decoder)")))
        return rc;
    return heads_divide(d, e, c, "num_attention_heads");
}

/* GPT2Config: n_embd, n_layer, n_head, n_positions; n_inner null means
 * 4 x n_embd; the LM head is tied to wte unless tie_word_embeddings is false. */
static int read_gpt2(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc;
    c->hidden_key = "n_embd";
    c->pos_key = "n_positions";
    if ((rc = dim(d, e, "vocab_size", MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "n_embd", MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "n_layer", MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "n_head", MAX_HIDDEN, &c->heads)) ||
        (rc = dim(d, e, "n_positions", MAX_POS, &c->positions)) ||
        (rc = opt_dim(d, e, "n_inner", MAX_INNER, 4 * c->hidden, &c->inner)) ||
        (rc = flag(d, e, "tie_word_embeddings", 1, &c->tied)) ||
        (rc = refuse_true(d, e, "add_cross_attention", "cross-attention")))
        return rc;
    return heads_divide(d, e, c, "n_head");
}

/* LlamaConfig / MistralConfig: grouped-query attention through
 * num_key_value_heads (default: num_attention_heads, as transformers does),
 * head_dim (default hidden / heads), optional biases, untied by default. */
static int read_llama(const cp_jdoc *d, cp_err *e, hf_dims *c)
{
    int rc, explicit_hd;
    const json_t *hd;
    c->hidden_key = "hidden_size";
    c->pos_key = "max_position_embeddings";
    if ((rc = dim(d, e, "vocab_size", MAX_VOCAB, &c->vocab)) ||
        (rc = dim(d, e, "hidden_size", MAX_HIDDEN, &c->hidden)) ||
        (rc = dim(d, e, "intermediate_size", MAX_INNER, &c->inner)) ||
        (rc = dim(d, e, "num_hidden_layers", MAX_LAYERS, &c->layers)) ||
        (rc = dim(d, e, "num_attention_heads", MAX_HIDDEN, &c->heads)) ||
        (rc = opt_dim(d, e, "num_key_value_heads", MAX_HIDDEN, c->heads, &c->kv_heads)) ||
        (rc = dim(d, e, "max_position_embeddings", MAX_POS, &c->positions)) ||
        (rc = flag(d, e, "tie_word_embeddings", c->tied, &c->tied)) || /* types[] default */
        (rc = flag(d, e, "attention_bias", 0, &c->attn_bias)) ||
        (rc = flag(d, e, "mlp_bias", 0, &c->mlp_bias)))
        return rc;
    hd = json_object_get(d->root, "head_dim");
    explicit_hd = hd && !json_is_null(hd);
    if (!explicit_hd && (rc = heads_divide(d, e, c, "num_attention_heads")))
        return rc;
    if ((rc = opt_dim(d, e, "head_dim", MAX_HIDDEN, c->hidden / c->heads, &c->head_dim)))
        return rc;
    if (c->heads % c->kv_heads != 0)
        return cp_jdoc_fail(d, e, d->root, "num_key_value_heads", "",
                            "%lld key/value heads do not divide num_attention_heads %lld "
                            "(each key/value head serves an equal group of query heads)",
                            (long long)c->kv_heads, (long long)c->heads);
    if (c->heads * c->head_dim > MAX_INNER)
        return cp_jdoc_fail(d, e, d->root, explicit_hd ? "head_dim" : "num_attention_heads",
                            "", "num_attention_heads x head_dim = %lld is over the sanity "
                            "limit of %lld", (long long)(c->heads * c->head_dim),
                            (long long)MAX_INNER);
    return CP_OK;
}

/* "BertModel, BertForPreTraining, ..." for one family, for messages. */
static void arch_names(int fam, char *buf, size_t cap)
{
    size_t i, used = 0;
    buf[0] = '\0';
    for (i = 0; i < NARCHS; i++) {
        if (archs[i].fam == fam && used < cap)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
                                     archs[i].name);
    }
}

static const hf_arch *find_arch(const char *name, int fam)
{
    size_t i;
    for (i = 0; i < NARCHS; i++)
        if (archs[i].fam == fam && strcmp(archs[i].name, name) == 0)
            return &archs[i];
    return NULL;
}

/* The architecture: --arch, else architectures[0], else the family's
 * default.  An architecture of another family or one we do not build is
 * refused, naming the ones we do. */
static int pick_arch(const cp_jdoc *d, cp_err *e, const cp_hf_opts *o, int t, hf_dims *c)
{
    const json_t *list = json_object_get(d->root, "architectures"), *first;
    char names[256], got[80];
    int fam = types[t].fam;
    arch_names(fam, names, sizeof names);
    if (o->arch) {
        if ((c->arch = find_arch(o->arch, fam)))
            return CP_OK;
        return cp_fail_at(e, CP_EINPUT, d->path, 0, 0, NULL,
                          "--arch %s: not a supported architecture for model_type %s "
                          "(supported: %s)", o->arch, c->model_type, names);
    }
    if (!list || json_is_null(list) || (json_is_array(list) && json_array_size(list) == 0)) {
        c->arch = find_arch(types[t].arch, fam);
        return CP_OK;
    }
    if (!json_is_array(list)) {
        cp_jshow(list, got, sizeof got);
        return cp_jdoc_fail(d, e, d->root, "architectures", "",
                            "expected an array of class names, got %s", got);
    }
    first = json_array_get(list, 0);
    if (json_is_string(first) && (c->arch = find_arch(json_string_value(first), fam)))
        return CP_OK;
    cp_jshow(first, got, sizeof got);
    return cp_jdoc_fail(d, e, first, NULL, "architectures[0]",
                        "%s is not a supported architecture for model_type %s (supported: "
                        "%s; --arch picks one)", got, c->model_type, names);
}

/* model_type, the family's dimensions, the architecture and the sequence. */
static int read_config(const cp_jdoc *d, const cp_hf_opts *o, hf_dims *c, cp_err *e)
{
    size_t t;
    int rc = cp_jget_str(d, e, d->root, "", "model_type", CP_REQ, 64, &c->model_type);
    if (rc)
        return rc;
    for (t = 0; t < NTYPES; t++)
        if (strcmp(types[t].type, c->model_type) == 0)
            break;
    if (t == NTYPES)
        return cp_jdoc_fail(d, e, d->root, "model_type", "",
                            "\"%s\" is not supported (supported: bert, gpt2, llama, "
                            "mistral, qwen2, gemma)", c->model_type);
    c->tied = types[t].tied;
    c->qkv_bias = types[t].qkv_bias;
    switch (types[t].fam) {
    case FAM_BERT: rc = read_bert(d, e, c); break;
    case FAM_GPT2: rc = read_gpt2(d, e, c); break;
    default: rc = read_llama(d, e, c); break;
    }
    if (rc || (rc = pick_arch(d, e, o, (int)t, c)))
        return rc;
    if (o->seq_len > c->positions)
        return cp_jdoc_fail(d, e, d->root, c->pos_key, "",
                            "--seq-len %lld is longer than %s %lld, the longest sequence "
                            "the model takes", (long long)o->seq_len, c->pos_key,
                            (long long)c->positions);
    c->seq = o->seq_len > 0 ? o->seq_len : types[t].seq;
    if (c->seq > c->positions)
        c->seq = c->positions;
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Building the model: a sticky-error builder                                */

/* The layers and tensors being built.  After the first failure every call
 * is a no-op and `rc` holds the failure, so the emitters below read as
 * straight lists of modules, like the __init__ methods they mirror. */
typedef struct build {
    const cp_jdoc *d;   /* the config, for positioned errors */
    cp_err *e;
    const char *blame;  /* key blamed for a layer over the loader's limit */
    json_t *layers;     /* owned */
    json_t *tensors;    /* owned */
    int layer;          /* index of the layer being filled */
    int rc;             /* CP_OK, or the first failure */
    double s;           /* tokens per sample */
} build;

static void oom(build *b)
{
    if (b->rc == CP_OK)
        b->rc = cp_fail(b->e, CP_EINTERNAL, "out of memory");
}

/* FLOPs as a JSON number: an integer while exact (below 2^53), as the
 * shipped models write them. */
static json_t *flops_json(double f)
{
    return f < 9007199254740992.0 ? json_integer((json_int_t)f) : json_real(f);
}

/* Start a layer (a module in forward order) with its forward FLOPs per sample. */
__attribute__((format(printf, 3, 4)))
static void add_layer(build *b, double flops, const char *fmt, ...)
{
    char name[NAME_BYTES];
    json_t *l;
    va_list ap;
    if (b->rc)
        return;
    va_start(ap, fmt);
    /* clang 14's va_list checker, run on several files in one process (as
     * tools/lint.sh does), forgets the va_start above: a false positive,
     * the same as in core/err.c. */
    vsnprintf(name, sizeof name, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(ap);
    if (flops > MAX_LAYER_FLOPS) {
        b->rc = cp_jdoc_fail(b->d, b->e, b->d->root, b->blame, "",
                             "layer %s would take %.3g forward FLOPs per sample, over the "
                             "limit of %g: use a shorter --seq-len", name, flops,
                             MAX_LAYER_FLOPS);
        return;
    }
    l = json_object();
    if (!l || json_object_set_new(l, "name", json_string(name)) ||
        json_object_set_new(l, "flops", flops_json(flops)) ||
        json_array_append_new(b->layers, l)) {
        oom(b);
        return;
    }
    b->layer = (int)json_array_size(b->layers) - 1;
}

/* A tensor of shape [d0] (d1 == 0) or [d0, d1] in the current layer. */
__attribute__((format(printf, 4, 5)))
static void add_tensor(build *b, int64_t d0, int64_t d1, const char *fmt, ...)
{
    char name[NAME_BYTES];
    json_t *t, *shape;
    va_list ap;
    if (b->rc)
        return;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(ap);
    t = json_object();
    shape = json_array();
    if (!t || !shape || json_object_set_new(t, "name", json_string(name)) ||
        json_array_append_new(shape, json_integer(d0)) ||
        (d1 && json_array_append_new(shape, json_integer(d1)))) {
        json_decref(t);
        json_decref(shape);
        oom(b);
        return;
    }
    if (json_object_set_new(t, "shape", shape) ||
        json_object_set_new(t, "layer", json_integer(b->layer)) ||
        json_array_append_new(b->tensors, t))
        oom(b);
}

/* nn.Linear(in, out): weight [out, in], then bias [out] when it has one. */
static void linear(build *b, const char *module, int64_t in, int64_t out, int bias)
{
    add_tensor(b, out, in, "%s.weight", module);
    if (bias)
        add_tensor(b, out, 0, "%s.bias", module);
}

/* GPT-2's Conv1D(nf = out, nx = in): weight [in, out] (transposed), bias [out]. */
static void conv1d(build *b, const char *module, int64_t in, int64_t out)
{
    add_tensor(b, in, out, "%s.weight", module);
    add_tensor(b, out, 0, "%s.bias", module);
}

/* LayerNorm (weight and bias) or RMSNorm (weight only) over n features. */
static void norm(build *b, const char *module, int64_t n, int bias)
{
    add_tensor(b, n, 0, "%s.weight", module);
    if (bias)
        add_tensor(b, n, 0, "%s.bias", module);
}

/* "a.b" into buf: a module's path from its block's. */
static const char *sub(char *buf, const char *a, const char *b)
{
    snprintf(buf, NAME_BYTES, "%s.%s", a, b);
    return buf;
}

/* Forward FLOPs per sample of a transformer block: 2 x matmul weight
 * elements x s tokens, plus Q K^T and A V over `width` = heads x head_dim,
 * 2 s^2 width each (docs/import.md, eq. H1). */
static double block_flops(double s, double matmul_elems, double width)
{
    return 2 * matmul_elems * s + 4 * s * s * width;
}

/* ------------------------------------------------------------------------ */
/* BERT (modeling_bert.py)                                                   */

/* BertEmbeddings: word, position and token-type tables, then LayerNorm. */
static void bert_embeddings(build *b, const hf_dims *c, const char *p)
{
    char mod[BLOCK_BYTES], m[NAME_BYTES];
    snprintf(mod, sizeof mod, "%sembeddings", p);
    add_layer(b, 0, "%s", mod);
    add_tensor(b, c->vocab, c->hidden, "%s.word_embeddings.weight", mod);
    add_tensor(b, c->positions, c->hidden, "%s.position_embeddings.weight", mod);
    add_tensor(b, c->type_vocab, c->hidden, "%s.token_type_embeddings.weight", mod);
    norm(b, sub(m, mod, "LayerNorm"), c->hidden, 1);
}

/* BertLayer: self-attention (query, key, value), its output dense and
 * LayerNorm, the intermediate dense, the output dense and LayerNorm. */
static void bert_block(build *b, const hf_dims *c, const char *p, int i)
{
    static const char *const qkvo[] = {"attention.self.query", "attention.self.key",
                                       "attention.self.value", "attention.output.dense"};
    int64_t h = c->hidden, f = c->inner;
    char blk[BLOCK_BYTES], m[NAME_BYTES];
    size_t k;
    snprintf(blk, sizeof blk, "%sencoder.layer.%d", p, i);
    add_layer(b, block_flops(b->s, (double)(4 * h * h + 2 * h * f), (double)h), "%s", blk);
    for (k = 0; k < 4; k++)
        linear(b, sub(m, blk, qkvo[k]), h, h, 1);
    norm(b, sub(m, blk, "attention.output.LayerNorm"), h, 1);
    linear(b, sub(m, blk, "intermediate.dense"), h, f, 1);
    linear(b, sub(m, blk, "output.dense"), f, h, 1);
    norm(b, sub(m, blk, "output.LayerNorm"), h, 1);
}

/* BertPooler: one dense layer on the first token ([CLS]) only. */
static void bert_pooler(build *b, const hf_dims *c, const char *p)
{
    add_layer(b, 2.0 * (double)(c->hidden * c->hidden), "%spooler", p);
    add_tensor(b, c->hidden, c->hidden, "%spooler.dense.weight", p);
    add_tensor(b, c->hidden, 0, "%spooler.dense.bias", p);
}

/* BertLMPredictionHead: its own `bias` is registered before `transform`
 * (named_parameters yields a module's parameters before its children's);
 * the decoder's weight is the word embedding unless untied, and its bias
 * is that same `bias`.  The decoder runs over every position. */
static void bert_mlm_head(build *b, const hf_dims *c)
{
    double s = b->s, h = (double)c->hidden, v = (double)c->vocab;
    add_layer(b, 2 * s * h * h + 2 * s * h * v, "cls.predictions");
    add_tensor(b, c->vocab, 0, "cls.predictions.bias");
    linear(b, "cls.predictions.transform.dense", c->hidden, c->hidden, 1);
    norm(b, "cls.predictions.transform.LayerNorm", c->hidden, 1);
    if (!c->tied)
        add_tensor(b, c->vocab, c->hidden, "cls.predictions.decoder.weight");
}

static void emit_bert(build *b, const hf_dims *c)
{
    const char *p = c->arch->prefix;
    int i;
    bert_embeddings(b, c, p);
    for (i = 0; i < (int)c->layers; i++)
        bert_block(b, c, p, i);
    if (c->arch->head != HEAD_MLM)
        bert_pooler(b, c, p);
    if (c->arch->head == HEAD_PRETRAIN || c->arch->head == HEAD_MLM)
        bert_mlm_head(b, c);
    if (c->arch->head == HEAD_PRETRAIN) { /* next-sentence prediction on the pooled token */
        add_layer(b, 2.0 * 2.0 * (double)c->hidden, "cls.seq_relationship");
        linear(b, "cls.seq_relationship", c->hidden, 2, 1);
    }
}

/* ------------------------------------------------------------------------ */
/* GPT-2 (modeling_gpt2.py)                                                  */

/* GPT2Block: ln_1, attn.c_attn (q, k, v at once), attn.c_proj, ln_2,
 * mlp.c_fc, mlp.c_proj; Conv1D weights are [in, out]. */
static void gpt2_block(build *b, const hf_dims *c, const char *p, int i)
{
    int64_t h = c->hidden, f = c->inner;
    char blk[BLOCK_BYTES], m[NAME_BYTES];
    snprintf(blk, sizeof blk, "%sh.%d", p, i);
    add_layer(b, block_flops(b->s, (double)(4 * h * h + 2 * h * f), (double)h), "%s", blk);
    norm(b, sub(m, blk, "ln_1"), h, 1);
    conv1d(b, sub(m, blk, "attn.c_attn"), h, 3 * h);
    conv1d(b, sub(m, blk, "attn.c_proj"), h, h);
    norm(b, sub(m, blk, "ln_2"), h, 1);
    conv1d(b, sub(m, blk, "mlp.c_fc"), h, f);
    conv1d(b, sub(m, blk, "mlp.c_proj"), f, h);
}

/* GPT2Model has no embeddings module: the first layer is named after its
 * two tables.  The LM head's weight is wte's unless untied; its compute is
 * a layer of its own either way. */
static void emit_gpt2(build *b, const hf_dims *c)
{
    const char *p = c->arch->prefix;
    char m[NAME_BYTES];
    int i;
    add_layer(b, 0, "%swte+wpe", p);
    add_tensor(b, c->vocab, c->hidden, "%swte.weight", p);
    add_tensor(b, c->positions, c->hidden, "%swpe.weight", p);
    for (i = 0; i < (int)c->layers; i++)
        gpt2_block(b, c, p, i);
    snprintf(m, sizeof m, "%sln_f", p);
    add_layer(b, 0, "%s", m);
    norm(b, m, c->hidden, 1);
    if (c->arch->head == HEAD_LM) {
        add_layer(b, 2 * b->s * (double)c->hidden * (double)c->vocab, "lm_head");
        if (!c->tied)
            add_tensor(b, c->vocab, c->hidden, "lm_head.weight");
    }
}

/* ------------------------------------------------------------------------ */
/* Llama and Mistral (modeling_llama.py, modeling_mistral.py)                */

/* LlamaDecoderLayer registers self_attn, mlp, input_layernorm,
 * post_attention_layernorm, in that order (forward runs the first norm
 * first; registration order is what named_parameters and DDP see). */
static void llama_block(build *b, const hf_dims *c, const char *p, int i)
{
    int64_t h = c->hidden, f = c->inner;
    int64_t q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    char blk[BLOCK_BYTES], m[NAME_BYTES];
    snprintf(blk, sizeof blk, "%slayers.%d", p, i);
    add_layer(b, block_flops(b->s, (double)(2 * h * q + 2 * h * kv + 3 * h * f), (double)q),
              "%s", blk);
    linear(b, sub(m, blk, "self_attn.q_proj"), h, q, c->attn_bias || c->qkv_bias);
    linear(b, sub(m, blk, "self_attn.k_proj"), h, kv, c->attn_bias || c->qkv_bias);
    linear(b, sub(m, blk, "self_attn.v_proj"), h, kv, c->attn_bias || c->qkv_bias);
    linear(b, sub(m, blk, "self_attn.o_proj"), q, h, c->attn_bias);
    linear(b, sub(m, blk, "mlp.gate_proj"), h, f, c->mlp_bias);
    linear(b, sub(m, blk, "mlp.up_proj"), h, f, c->mlp_bias);
    linear(b, sub(m, blk, "mlp.down_proj"), f, h, c->mlp_bias);
    norm(b, sub(m, blk, "input_layernorm"), h, 0);
    norm(b, sub(m, blk, "post_attention_layernorm"), h, 0);
}

static void emit_llama(build *b, const hf_dims *c)
{
    const char *p = c->arch->prefix;
    char m[NAME_BYTES];
    int i;
    snprintf(m, sizeof m, "%sembed_tokens", p);
    add_layer(b, 0, "%s", m);
    add_tensor(b, c->vocab, c->hidden, "%s.weight", m);
    for (i = 0; i < (int)c->layers; i++)
        llama_block(b, c, p, i);
    snprintf(m, sizeof m, "%snorm", p);
    add_layer(b, 0, "%s", m);
    norm(b, m, c->hidden, 0);
    if (c->arch->head == HEAD_LM) {
        add_layer(b, 2 * b->s * (double)c->hidden * (double)c->vocab, "lm_head");
        if (!c->tied)
            add_tensor(b, c->vocab, c->hidden, "lm_head.weight");
    }
}

/* ------------------------------------------------------------------------ */
/* The model object                                                          */

/* The model's name: --name, else the last part of _name_or_path (what
 * save_pretrained records), else the file's base name. */
static int model_name(const cp_jdoc *d, const cp_hf_opts *o, json_t **out, cp_err *e)
{
    char name[MODEL_NAME_BYTES + 2];
    const json_t *np = json_object_get(d->root, "_name_or_path");
    name[0] = '\0';
    if (o->name)
        snprintf(name, sizeof name, "%s", o->name);
    else if (json_is_string(np))
        cp_base_name(json_string_value(np), 0, name, sizeof name);
    if (!o->name && !name[0]) /* no _name_or_path, or only slashes */
        cp_base_name(d->path, 1, name, sizeof name);
    if (!name[0] || strlen(name) > MODEL_NAME_BYTES)
        return cp_fail_at(e, CP_EINPUT, d->path, 0, 0, NULL,
                          "the model name \"%.60s\" is empty or over %d bytes: give "
                          "another --name", name, MODEL_NAME_BYTES);
    if (!(*out = json_string(name)))
        return cp_fail_at(e, CP_EINPUT, d->path, 0, 0, NULL,
                          "the model name \"%.60s\" is not valid UTF-8: give --name", name);
    return CP_OK;
}

/* What the conversion assumed, for the output's note. */
static json_t *model_note(const cp_jdoc *d, const hf_dims *c)
{
    char text[1024];
    int lm = c->arch->head == HEAD_LM || c->arch->head == HEAD_MLM ||
             c->arch->head == HEAD_PRETRAIN;
    json_t *n;
    snprintf(text, sizeof text,
             "Hugging Face %s (model_type %s) from %s by coarse-plan import hf-config "
             "(docs/import.md); sequence %lld tokens; layer flops per sample = 2 x matmul "
             "weights x tokens + 4 x sequence^2 x attention width per block%s",
             c->arch->name, c->model_type, d->path, (long long)c->seq,
             !lm ? "" : c->tied ? "; output projection tied to the token embedding: "
                                  "counted once, its compute in the head layer"
                                : "; output projection untied: a tensor of its own");
    n = json_string(text);
    return n ? n : json_string("Hugging Face config converted by coarse-plan import "
                               "hf-config (docs/import.md)");
}

/* The dimensions of the activation estimate (docs/model.md, eq. M2): an LM
 * or masked-LM head computes logits over the vocabulary; BERT and GPT-2
 * train with dropout 0.1 (their configs' default), Llama and Mistral with
 * none and a gated SiLU MLP. */
static json_t *transformer(const hf_dims *c)
{
    int lm = c->arch->head == HEAD_LM || c->arch->head == HEAD_MLM ||
             c->arch->head == HEAD_PRETRAIN, llama = c->arch->fam == FAM_LLAMA;
    json_t *x = json_object();
    if (x && (json_object_set_new(x, "layers", json_integer(c->layers)) ||
              json_object_set_new(x, "hidden", json_integer(c->hidden)) ||
              json_object_set_new(x, "heads", json_integer(c->heads)) ||
              json_object_set_new(x, "kv_heads", json_integer(llama ? c->kv_heads : c->heads)) ||
              json_object_set_new(x, "ffn", json_integer(c->inner)) ||
              json_object_set_new(x, "seq", json_integer(c->seq)) ||
              (lm && json_object_set_new(x, "vocab", json_integer(c->vocab))) ||
              json_object_set_new(x, "mlp", json_string(llama ? "swiglu" : "gelu")) ||
              json_object_set_new(x, "dropout", json_real(llama ? 0 : 0.1)))) {
        json_decref(x);
        return NULL;
    }
    return x;
}

/* name, note, dtype, compute, transformer, layers, tensors: the shipped
 * models' order. */
static int assemble(const cp_jdoc *d, const cp_hf_opts *o, const hf_dims *c, build *b,
                    json_t **out, cp_err *e)
{
    json_t *root = json_object(), *name = NULL, *compute = json_object();
    int rc = model_name(d, o, &name, e);
    if (rc == CP_OK && (!root || !compute ||
                        json_object_set_new(root, "name", name) ||
                        json_object_set_new(root, "note", model_note(d, c)) ||
                        json_object_set_new(root, "dtype", json_string(o->dtype)) ||
                        json_object_set_new(compute, "batch", json_integer(o->batch)) ||
                        json_object_set(root, "compute", compute) ||
                        json_object_set_new(root, "transformer", transformer(c)) ||
                        json_object_set(root, "layers", b->layers) ||
                        json_object_set(root, "tensors", b->tensors)))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    json_decref(compute);
    if (rc) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return CP_OK;
}

void cp_hf_opts_default(cp_hf_opts *o)
{
    o->name = NULL;
    o->seq_len = 0;
    o->batch = 1;
    o->dtype = "fp32";
    o->arch = NULL;
}

int cp_import_hf_config(const char *path, const char *text, size_t len,
                        const cp_hf_opts *o, json_t **out, cp_err *e)
{
    cp_jdoc d;
    hf_dims c;
    build b;
    int rc;
    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&b, 0, sizeof b);
    rc = cp_jdoc_load_text(&d, path, text, len, e);
    if (rc == CP_OK)
        rc = read_config(&d, o, &c, e);
    if (rc == CP_OK) {
        b.d = &d;
        b.e = e;
        b.blame = c.hidden_key;
        b.s = (double)c.seq;
        b.layers = json_array();
        b.tensors = json_array();
        if (!b.layers || !b.tensors)
            oom(&b);
        if (c.arch->fam == FAM_BERT)
            emit_bert(&b, &c);
        else if (c.arch->fam == FAM_GPT2)
            emit_gpt2(&b, &c);
        else
            emit_llama(&b, &c);
        rc = b.rc ? b.rc : assemble(&d, o, &c, &b, out, e);
    }
    json_decref(b.layers);
    json_decref(b.tensors);
    cp_jdoc_free(&d);
    return rc;
}
