/*
 * hf_internal.h - what the files of `import hf-config` share (hf_config.h
 * is the public side): the families and architectures, the dimensions read
 * from a config, and the sticky-error builder the emitters write through.
 *
 *   hf_config.c    the driver: model types, architectures, the model's
 *                  transformer block, name and note, the output object
 *   hf_read.c      reading config.json, every value at its position
 *   hf_build.c     the builder: layers, tensors, FLOPs
 *   hf_emit.c      BERT, GPT-2 and the Llama-style blocks (modeling_bert,
 *                  _gpt2, _llama, _mistral, _qwen2, _qwen3, _gemma,
 *                  _nemotron.py)
 *   hf_emit_moe.c  the mixture-of-experts and latent-attention blocks
 *                  (modeling_mixtral, _qwen2_moe, _qwen3_moe, _deepseek_v3,
 *                  _gpt_oss.py)
 */
#ifndef CP_HF_INTERNAL_H
#define CP_HF_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "core/err.h"
#include "core/jsondoc.h"
#include "model/model.h"

/* Sanity bounds on config values: above them a value is refused as a typing
 * mistake.  Published models stay far below (vocabularies up to about 256 k
 * tokens, hidden sizes up to about 25 k, 126 blocks, contexts up to 10^6,
 * 384 routed experts); the bounds also keep every 2-D tensor within the
 * loader's 2^40 elements (2^24 x 2^16) and every product below in 64 bits. */
#define HF_MAX_VOCAB ((int64_t)1 << 24)
#define HF_MAX_HIDDEN ((int64_t)1 << 16)
#define HF_MAX_INNER ((int64_t)1 << 24)  /* intermediate size, heads x head_dim */
#define HF_MAX_POS ((int64_t)1 << 24)
#define HF_MAX_LAYERS 1024
#define HF_MAX_TYPES ((int64_t)1 << 16)  /* BERT token types (2 in every release) */
#define HF_MAX_EXPERTS 1024              /* routed experts (DeepSeek-V3 256, Kimi K2 384) */

/* At most this many tensors in one conversion: DeepSeek-V3 has 45,395, the
 * largest published MoE (Kimi K2, 61 blocks x 384 experts x 3) about 70,000;
 * 2^18 leaves room and keeps a conversion under a second and a few hundred
 * MB, far below the loader's CP_MAX_TENSORS. */
#define HF_MAX_TENSORS 262144

/* The model loader's limit on one layer's forward FLOPs per sample
 * (src/load/model_load.c): a layer above it is refused here, with the
 * config's position, rather than by the loader after conversion. */
#define HF_MAX_LAYER_FLOPS 1e20

/* Longest tensor or layer name we build, and longest block path within it
 * ("model.layers.1023.mlp.experts.1023"): the longest real name is under
 * 80 bytes. */
#define HF_NAME_BYTES 160
#define HF_BLOCK_BYTES 64

enum hf_family {
    FAM_BERT,
    FAM_GPT2,
    FAM_LLAMA,    /* llama, mistral, qwen2, qwen3, gemma, nemotron: one dense block shape */
    FAM_MIXTRAL,  /* block_sparse_moe with per-expert w1, w2, w3 */
    FAM_QWEN_MOE, /* qwen2_moe (shared expert and its gate), qwen3_moe */
    FAM_DEEPSEEK, /* deepseek_v3: latent attention, shared experts, first dense blocks */
    FAM_GPT_OSS   /* gpt_oss: fused expert tensors with biases, sinks, alternating windows */
};

/* What sits on top of the base model. */
enum hf_head {
    HEAD_NONE,     /* the base model alone (GPT2Model, LlamaModel) */
    HEAD_POOLER,   /* BertModel: the pooler over the first token */
    HEAD_PRETRAIN, /* BertForPreTraining: pooler, masked-LM and next-sentence heads */
    HEAD_MLM,      /* BertForMaskedLM: the masked-LM head, no pooler */
    HEAD_LM        /* a causal LM head (lm_head) */
};

typedef struct hf_arch {
    const char *name;   /* the class name, as in "architectures" */
    const char *prefix; /* the base model's attribute in the head model, with a dot */
    int fam;            /* enum hf_family */
    int head;           /* enum hf_head */
} hf_arch;

/* How a model type reads sliding-window attention. */
enum hf_window {
    WIN_NONE,   /* the modeling file has none (Llama, Gemma 1, Nemotron, DeepSeek-V3) */
    WIN_ALL,    /* sliding_window (int or null) on every block (Mistral, Mixtral) */
    WIN_QWEN,   /* use_sliding_window must be false (Qwen2/3: full attention as released) */
    WIN_LAYERS  /* sliding_window on the blocks layer_types names (GPT-OSS) */
};

/* A model_type: its family, the architecture used when the file names none,
 * the default sequence length, what its config class defaults
 * tie_word_embeddings to, which bias keys its modeling file reads, and the
 * rest of the block it always has.  The table is hf_config.c's. */
typedef struct hf_type {
    const char *type;
    int fam;
    const char *arch;
    int64_t seq;
    int tied;           /* tie_word_embeddings default */
    int qkv_bias;       /* q, k, v always biased, o not (modeling_qwen2.py) */
    int attn_bias_key;  /* reads attention_bias (q, k, v and o biases) */
    int attn_bias_dflt; /* its default */
    int mlp_bias_key;   /* reads mlp_bias */
    int qk_norm;        /* per-head RMSNorm of queries and keys (Qwen3) */
    int norm;           /* cp_xf_norm */
    const char *act;    /* hidden_act default; NULL: the MLP kind is fixed by the family */
    int window;         /* enum hf_window */
} hf_type;

/* The dimensions of one config, in the names of modeling_*.py. */
typedef struct hf_dims {
    const hf_arch *arch;
    const hf_type *type;
    const char *model_type;  /* borrowed from the document */
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, inner, positions, type_vocab;
    int tied;                /* tie_word_embeddings */
    int attn_bias, mlp_bias; /* attention_bias, mlp_bias */
    int qkv_bias;            /* q, k and v projections biased, o not (Qwen2) */
    int qk_norm;             /* Qwen3's q_norm, k_norm */
    int sinks;               /* GPT-OSS's per-head sink logits */
    int mlp;                 /* cp_xf_mlp */
    int64_t window, window_every; /* sliding-window attention; 0: none */
    /* mixture of experts (experts 0: dense) */
    int64_t experts, top_k, moe_inner, shared, shared_inner, dense_layers, every;
    int shared_gate, router_sigmoid, router_bias, expert_bias;
    int64_t mtp_layers;      /* DeepSeek's multi-token-prediction blocks, left out */
    /* multi-head latent attention (kv_lora 0: none) */
    int64_t q_lora, kv_lora, qk_nope, qk_rope, v_dim;
    int64_t seq;             /* tokens per sample */
    const char *hidden_key;  /* the family's key names, for messages */
    const char *pos_key;
    const char *storage;     /* a quantized checkpoint's format ("fp8", "mxfp4"), or NULL */
    int64_t max_tensors;     /* the most tensors a conversion may make (cp_hf_opts) */
} hf_dims;

/* ------------------------------------------------------------------------ */
/* Reading (hf_read.c): each CP_OK or CP_EINPUT at the offending value.      */

int hf_read_bert(const cp_jdoc *d, cp_err *e, hf_dims *c);
int hf_read_gpt2(const cp_jdoc *d, cp_err *e, hf_dims *c);
/* The decoder families: the Llama keys, the MLP kind, biases, windows, and
 * the family's experts and latent attention. */
int hf_read_decoder(const cp_jdoc *d, cp_err *e, hf_dims *c);

/* The block as the model file describes it (docs/formats.md, "Transformer"):
 * lm = 1 when an LM or masked-LM head computes logits. */
void hf_xformer(const hf_dims *c, int lm, cp_xformer *x);

/* ------------------------------------------------------------------------ */
/* Building (hf_build.c)                                                     */

/* The layers and tensors being built.  After the first failure every call
 * is a no-op and `rc` holds the failure, so the emitters read as straight
 * lists of modules, like the __init__ methods they mirror. */
typedef struct hf_build {
    const cp_jdoc *d;   /* the config, for positioned errors */
    cp_err *e;
    const char *blame;  /* key blamed for a layer over the loader's limit */
    json_t *layers;     /* owned */
    json_t *tensors;    /* owned */
    int layer;          /* index of the layer being filled */
    int rc;             /* CP_OK, or the first failure */
    double s;           /* tokens per sample */
} hf_build;

void hf_oom(hf_build *b);
/* Start a layer (a module in forward order) with its forward FLOPs per sample. */
void hf_layer(hf_build *b, double flops, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A tensor of shape [d0], [d0, d1] or [d0, d1, d2] (trailing zeros: fewer
 * dimensions) in the current layer. */
void hf_tensor(hf_build *b, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* nn.Linear(in, out): weight [out, in], then bias [out] when it has one. */
void hf_linear(hf_build *b, const char *module, int64_t in, int64_t out, int bias);
/* GPT-2's Conv1D(nf = out, nx = in): weight [in, out] (transposed), bias [out]. */
void hf_conv1d(hf_build *b, const char *module, int64_t in, int64_t out);
/* LayerNorm (weight and bias) or RMSNorm (weight only) over n features. */
void hf_norm(hf_build *b, const char *module, int64_t n, int bias);
/* "a.b" into buf (HF_NAME_BYTES): a module's path from its block's. */
const char *hf_sub(char *buf, const char *a, const char *b);
/* Forward FLOPs per sample of a block (docs/import.md, eq. H1): 2 x matmul
 * weight elements x s tokens, plus Q K^T over qk_width and A V over
 * v_width, each query attending to `keys` tokens (s, or a sliding window). */
double hf_block_flops(double s, double matmul_elems, double keys, double qk_width,
                      double v_width);
/* Tokens a query attends to in block i: s, or the window on windowed blocks. */
double hf_keys(const hf_dims *c, double s, int64_t i);

/* ------------------------------------------------------------------------ */
/* Emitting (hf_emit.c, hf_emit_moe.c): the tensors and layers of one model. */

void hf_emit_bert(hf_build *b, const hf_dims *c);
void hf_emit_gpt2(hf_build *b, const hf_dims *c);
/* Every decoder family: embed_tokens, the blocks, the final norm, lm_head. */
void hf_emit_decoder(hf_build *b, const hf_dims *c);
/* One block i of a mixture-of-experts or latent-attention family, under
 * the block path `blk` (hf_emit_moe.c). */
void hf_emit_moe_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i);
/* The q, k, v, o projections (and the per-head norms) of a Llama-style
 * attention under `blk`, for both files. */
void hf_llama_attention(hf_build *b, const hf_dims *c, const char *blk);
/* A gated (gate_proj, up_proj, down_proj) or plain (up_proj, down_proj) MLP
 * of inner size f under `module`. */
void hf_llama_mlp(hf_build *b, const hf_dims *c, const char *module, int64_t f, int bias);

#endif
