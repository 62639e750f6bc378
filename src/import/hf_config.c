/*
 * hf_config.c - Hugging Face config.json to coarse-plan model JSON (see
 * hf_config.h; the mapping and the formulas are in docs/import.md).
 *
 * Three steps: read the family's dimensions from the config (hf_read.c:
 * every value checked, errors at its position), pick the architecture
 * (architectures[0] or --arch), then emit the tensors and layers the
 * transformers module of that architecture registers (hf_emit.c,
 * hf_emit_moe.c, mirroring the modeling_*.py files line by line), and write
 * them with the model's "transformer" block, its name and a note of what
 * was assumed.  tests/unit/test_hf_config.c checks the tensors against the
 * per-tensor CSVs in ../shared/data/models/ and the totals against the
 * published counts.  Cost: linear in the number of tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/hf_config.h"
#include "core/fileio.h"
#include "import/hf_internal.h"

/* Longest model name the loader accepts (model_load.c NAME_MAX_BYTES). */
#define MODEL_NAME_BYTES 512

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
    {"Qwen3ForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"Qwen3Model", "", FAM_LLAMA, HEAD_NONE},
    {"GemmaForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"GemmaModel", "", FAM_LLAMA, HEAD_NONE},
    {"NemotronForCausalLM", "model.", FAM_LLAMA, HEAD_LM},
    {"NemotronModel", "", FAM_LLAMA, HEAD_NONE},
    {"MixtralForCausalLM", "model.", FAM_MIXTRAL, HEAD_LM},
    {"MixtralModel", "", FAM_MIXTRAL, HEAD_NONE},
    {"Qwen2MoeForCausalLM", "model.", FAM_QWEN_MOE, HEAD_LM},
    {"Qwen2MoeModel", "", FAM_QWEN_MOE, HEAD_NONE},
    {"Qwen3MoeForCausalLM", "model.", FAM_QWEN_MOE, HEAD_LM},
    {"Qwen3MoeModel", "", FAM_QWEN_MOE, HEAD_NONE},
    {"DeepseekV3ForCausalLM", "model.", FAM_DEEPSEEK, HEAD_LM},
    {"DeepseekV3Model", "", FAM_DEEPSEEK, HEAD_NONE},
    {"GptOssForCausalLM", "model.", FAM_GPT_OSS, HEAD_LM},
    {"GptOssModel", "", FAM_GPT_OSS, HEAD_NONE},
};
#define NARCHS (sizeof archs / sizeof archs[0])

/* model_type values (hf_type in hf_internal.h).  Default sequence: BERT 128
 * (phase-1 pre-training, as the shipped models), GPT-2 1024 (its context),
 * the decoders 2048 (a common pre-training length; longer contexts are
 * --seq-len).  Defaults of tie_word_embeddings as the config classes have
 * them (Gemma and the BERT and GPT-2 heads tie); the bias keys each
 * modeling file reads (Qwen2 and Qwen2-MoE bias q, k, v always and o never;
 * Mixtral and Qwen2-MoE read neither key; GPT-OSS's attention_bias defaults
 * to true); Qwen3's query/key norms; Nemotron's LayerNorm (LayerNorm1P,
 * with bias) and plain squared-ReLU MLP; the hidden_act each defaults to;
 * how each reads sliding windows. */
static const hf_type types[] = {
    {"bert", FAM_BERT, "BertModel", 128, 1, 0, 0, 0, 0, 0, CP_NORM_LAYER, NULL, WIN_NONE},
    {"gpt2", FAM_GPT2, "GPT2LMHeadModel", 1024, 1, 0, 0, 0, 0, 0, CP_NORM_LAYER, NULL, WIN_NONE},
    {"llama", FAM_LLAMA, "LlamaForCausalLM", 2048, 0, 0, 1, 0, 1, 0, CP_NORM_RMS, "silu",
     WIN_NONE},
    {"mistral", FAM_LLAMA, "MistralForCausalLM", 2048, 0, 0, 1, 0, 1, 0, CP_NORM_RMS, "silu",
     WIN_ALL},
    {"qwen2", FAM_LLAMA, "Qwen2ForCausalLM", 2048, 0, 1, 1, 0, 1, 0, CP_NORM_RMS, "silu",
     WIN_QWEN},
    {"qwen3", FAM_LLAMA, "Qwen3ForCausalLM", 2048, 0, 0, 1, 0, 0, 1, CP_NORM_RMS, "silu",
     WIN_QWEN},
    {"gemma", FAM_LLAMA, "GemmaForCausalLM", 2048, 1, 0, 1, 0, 1, 0, CP_NORM_RMS,
     "gelu_pytorch_tanh", WIN_NONE},
    {"nemotron", FAM_LLAMA, "NemotronForCausalLM", 2048, 0, 0, 1, 0, 1, 0, CP_NORM_LAYER,
     "relu2", WIN_NONE},
    {"mixtral", FAM_MIXTRAL, "MixtralForCausalLM", 2048, 0, 0, 0, 0, 0, 0, CP_NORM_RMS, "silu",
     WIN_ALL},
    {"qwen2_moe", FAM_QWEN_MOE, "Qwen2MoeForCausalLM", 2048, 0, 1, 0, 0, 0, 0, CP_NORM_RMS,
     "silu", WIN_QWEN},
    {"qwen3_moe", FAM_QWEN_MOE, "Qwen3MoeForCausalLM", 2048, 0, 0, 1, 0, 0, 1, CP_NORM_RMS,
     "silu", WIN_QWEN},
    {"deepseek_v3", FAM_DEEPSEEK, "DeepseekV3ForCausalLM", 2048, 0, 0, 0, 0, 0, 0, CP_NORM_RMS,
     "silu", WIN_NONE},
    {"gpt_oss", FAM_GPT_OSS, "GptOssForCausalLM", 2048, 0, 0, 1, 1, 0, 0, CP_NORM_RMS, NULL,
     WIN_LAYERS},
};
#define NTYPES (sizeof types / sizeof types[0])

/* ------------------------------------------------------------------------ */
/* Model type and architecture                                               */

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
static int pick_arch(const cp_jdoc *d, cp_err *e, const cp_hf_opts *o, hf_dims *c)
{
    const json_t *list = json_object_get(d->root, "architectures"), *first;
    char names[512], got[80];
    int fam = c->type->fam;
    arch_names(fam, names, sizeof names);
    if (o->arch) {
        if ((c->arch = find_arch(o->arch, fam)))
            return CP_OK;
        return cp_fail_at(e, CP_EINPUT, d->path, 0, 0, NULL,
                          "--arch %s: not a supported architecture for model_type %s "
                          "(supported: %s)", o->arch, c->model_type, names);
    }
    if (!list || json_is_null(list) || (json_is_array(list) && json_array_size(list) == 0)) {
        c->arch = find_arch(c->type->arch, fam);
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
                            "\"%s\" is not supported (supported: bert, gpt2, llama, mistral, "
                            "qwen2, qwen3, gemma, nemotron, mixtral, qwen2_moe, qwen3_moe, "
                            "deepseek_v3, gpt_oss)", c->model_type);
    c->type = &types[t];
    c->tied = types[t].tied;
    c->max_tensors = o->max_tensors > 0 && o->max_tensors < HF_MAX_TENSORS ? o->max_tensors
                                                                           : HF_MAX_TENSORS;
    switch (types[t].fam) {
    case FAM_BERT: rc = hf_read_bert(d, e, c); break;
    case FAM_GPT2: rc = hf_read_gpt2(d, e, c); break;
    default: rc = hf_read_decoder(d, e, c); break;
    }
    if (rc || (rc = pick_arch(d, e, o, c)))
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
/* The model object                                                          */

/* 1 when an LM or masked-LM head computes logits over the vocabulary. */
static int has_lm(const hf_dims *c)
{
    return c->arch->head == HEAD_LM || c->arch->head == HEAD_MLM ||
           c->arch->head == HEAD_PRETRAIN;
}

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

/* What the conversion assumed, for the output's note: the FLOPs rule, the
 * tied head, and per family what is left out or is only a storage format. */
static json_t *model_note(const cp_jdoc *d, const hf_dims *c)
{
    char text[1536], extra[512] = "";
    size_t u = 0;
    json_t *n;
    if (c->mtp_layers > 0)
        u += (size_t)snprintf(extra + u, sizeof extra - u,
                              "; the %lld multi-token-prediction block(s) "
                              "(num_nextn_predict_layers) are left out: they are not part "
                              "of the main model's published total",
                              (long long)c->mtp_layers);
    if (c->storage && u < sizeof extra)
        u += (size_t)snprintf(extra + u, sizeof extra - u,
                              "; the checkpoint stores weights as %s (quantization_config): a "
                              "storage format, the parameters are counted as they are "
                              "trained", c->storage);
    if (c->router_bias && c->type->fam == FAM_DEEPSEEK && u < sizeof extra)
        snprintf(extra + u, sizeof extra - u,
                 "; each MoE block's gate.e_score_correction_bias is listed as "
                 "modeling_deepseek.py registers it, though no gradient updates it");
    snprintf(text, sizeof text,
             "Hugging Face %s (model_type %s) from %s by coarse-plan import hf-config "
             "(docs/import.md); sequence %lld tokens; layer flops per sample = 2 x matmul "
             "weights (a MoE block's active ones) x tokens + 2 x sequence x attended tokens x "
             "(query/key + value widths) per block%s%s",
             c->arch->name, c->model_type, d->path, (long long)c->seq,
             !has_lm(c) ? "" : c->tied ? "; output projection tied to the token embedding: "
                                         "counted once, its compute in the head layer"
                                       : "; output projection untied: a tensor of its own",
             extra);
    n = json_string(text);
    return n ? n : json_string("Hugging Face config converted by coarse-plan import "
                               "hf-config (docs/import.md)");
}

/* Set key to a new value; 1 when out of memory (the value is released). */
static int put(json_t *o, const char *key, json_t *v)
{
    return !v || json_object_set_new(o, key, v);
}

/* The "moe" object of the block (docs/formats.md). */
static json_t *moe_json(const cp_xf_moe *q)
{
    json_t *o = json_object();
    if (!o || put(o, "experts", json_integer(q->experts)) ||
        put(o, "top_k", json_integer(q->top_k)) || put(o, "ffn", json_integer(q->ffn)) ||
        (q->shared_experts > 0 &&
         (put(o, "shared_experts", json_integer(q->shared_experts)) ||
          put(o, "shared_ffn", json_integer(q->shared_ffn)) ||
          put(o, "shared_gate", json_boolean(q->shared_gate)))) ||
        (q->dense_layers > 0 && put(o, "dense_layers", json_integer(q->dense_layers))) ||
        put(o, "every", json_integer(q->every)) ||
        put(o, "router", json_string(q->router_sigmoid ? "sigmoid" : "softmax")) ||
        put(o, "router_bias", json_boolean(q->router_bias)) ||
        put(o, "expert_bias", json_boolean(q->expert_bias))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The "mla" object of the block. */
static json_t *mla_json(const cp_xf_mla *a)
{
    json_t *o = json_object();
    if (!o || put(o, "q_lora_rank", json_integer(a->q_lora_rank)) ||
        put(o, "kv_lora_rank", json_integer(a->kv_lora_rank)) ||
        put(o, "qk_nope_dim", json_integer(a->qk_nope_dim)) ||
        put(o, "qk_rope_dim", json_integer(a->qk_rope_dim)) ||
        put(o, "v_head_dim", json_integer(a->v_head_dim))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The "sliding_window" object of the block. */
static json_t *window_json(const cp_xformer *x)
{
    json_t *o = json_object();
    if (!o || put(o, "window", json_integer(x->window)) ||
        put(o, "every", json_integer(x->window_every))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The "transformer" block (docs/formats.md): the architecture as the
 * large-model stage and eq. M2 read it, every field written out. */
static json_t *transformer(const hf_dims *c)
{
    static const char *const mlp[] = {"gelu", "swiglu", "geglu", "relu2"};
    static const char *const pos[] = {"learned", "rope", "alibi", "none"};
    cp_xformer x;
    json_t *o = json_object();
    hf_xformer(c, has_lm(c), &x);
    if (!o || put(o, "layers", json_integer(x.layers)) ||
        put(o, "hidden", json_integer(x.hidden)) || put(o, "heads", json_integer(x.heads)) ||
        put(o, "kv_heads", json_integer(x.kv_heads)) ||
        put(o, "head_dim", json_integer(x.head_dim)) || put(o, "ffn", json_integer(x.ffn)) ||
        put(o, "seq", json_integer(x.seq)) ||
        (x.vocab > 0 && put(o, "vocab", json_integer(x.vocab))) ||
        put(o, "mlp", json_string(mlp[x.mlp])) ||
        put(o, "norm", json_string(x.norm == CP_NORM_RMS ? "rmsnorm" : "layernorm")) ||
        put(o, "position", json_string(pos[x.pos])) ||
        (x.max_pos > 0 && put(o, "max_positions", json_integer(x.max_pos))) ||
        (x.vocab > 0 && put(o, "tied", json_boolean(x.tied))) ||
        put(o, "qkv_bias", json_boolean(x.qkv_bias)) || put(o, "o_bias", json_boolean(x.o_bias)) ||
        put(o, "mlp_bias", json_boolean(x.mlp_bias)) ||
        put(o, "qk_norm", json_boolean(x.qk_norm)) ||
        put(o, "attn_sinks", json_boolean(x.attn_sinks)) ||
        put(o, "dropout", json_real(x.dropout)) ||
        (x.window > 0 && put(o, "sliding_window", window_json(&x))) ||
        (x.moe.experts > 0 && put(o, "moe", moe_json(&x.moe))) ||
        (x.mla.kv_lora_rank > 0 && put(o, "mla", mla_json(&x.mla)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* name, note, dtype, compute, transformer, layers, tensors: the shipped
 * models' order. */
static int assemble(const cp_jdoc *d, const cp_hf_opts *o, const hf_dims *c, hf_build *b,
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
                        put(root, "transformer", transformer(c)) ||
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
    o->max_tensors = 0;
}

int cp_import_hf_config(const char *path, const char *text, size_t len,
                        const cp_hf_opts *o, json_t **out, cp_err *e)
{
    cp_jdoc d;
    hf_dims c;
    hf_build b;
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
            hf_oom(&b);
        if (c.type->fam == FAM_BERT)
            hf_emit_bert(&b, &c);
        else if (c.type->fam == FAM_GPT2)
            hf_emit_gpt2(&b, &c);
        else
            hf_emit_decoder(&b, &c);
        rc = b.rc ? b.rc : assemble(&d, o, &c, &b, out, e);
    }
    json_decref(b.layers);
    json_decref(b.tensors);
    cp_jdoc_free(&d);
    return rc;
}
