/*
 * model.h - a neural network as data-parallel training sees it: the ordered
 * list of trainable tensors whose gradients must be synchronised, the layers
 * they belong to, and how long each layer takes to compute.
 *
 * Tensors are in registration (forward) order; `layer` is the index of the
 * layer that owns the tensor, and layers are in forward execution order, so
 * backward produces gradients for layer L-1 first and layer 0 last.  Layers
 * may own no tensors (pooling, attention scores): they still take time.
 *
 * Ownership: a cp_model owns every string and array inside it; cp_model_free
 * releases them all.  The loader is in load/model_load.c; nothing here reads
 * files.
 */
#ifndef CP_MODEL_H
#define CP_MODEL_H

#include <stdint.h>

#include "core/err.h"

/* At most this many tensor dimensions: 8 covers every layer type we know of
 * (conv3d weights have 5). */
#define CP_MAX_DIMS 8

/* At most this many tensors: the largest shipped case is gpt2 repeated 100x
 * (14,800); 2 million is two orders beyond any real checkpoint and keeps the
 * per-tensor arrays under a few hundred MB. */
#define CP_MAX_TENSORS 2000000

/* Largest element count of one tensor, 2^40 (1.1e12): four terabytes of fp32,
 * beyond any device memory, and small enough that numel x 8 bytes x 2^20
 * GPUs cannot overflow 64 bits. */
#define CP_MAX_NUMEL ((int64_t)1 << 40)

typedef enum cp_dtype { CP_FP32, CP_FP16, CP_BF16 } cp_dtype;

/* How iteration_ms is divided over layers when per-layer times are absent. */
typedef enum cp_split { CP_SPLIT_AUTO, CP_SPLIT_FLOPS, CP_SPLIT_PARAMS } cp_split;

typedef struct cp_tensor {
    char *name;                   /* owned */
    int64_t numel;                /* elements, > 0 */
    int ndim;                     /* 0 when given as numel only */
    int64_t shape[CP_MAX_DIMS];   /* dimensions, when ndim > 0 */
    int layer;                    /* index into cp_model.layers */
} cp_tensor;

typedef struct cp_layer {
    char *name;       /* owned; never NULL after loading ("layer7" by default) */
    double fwd_ms;    /* forward time of one iteration on one GPU, < 0 unknown */
    double bwd_ms;    /* backward time, < 0 unknown */
    double flops;     /* relative forward cost (FLOPs per sample), 0 unknown */
    int64_t params;   /* elements in the tensors this layer owns (derived) */
} cp_layer;

/* The MLP of a transformer block: GELU (GPT-2, BERT, GPT-3), gated SiLU
 * (Llama, Mistral, Qwen), gated GELU (Gemma), squared ReLU (Nemotron-4).
 * The gated ones have three matrices (gate, up, down), the others two. */
typedef enum cp_xf_mlp { CP_MLP_GELU, CP_MLP_SWIGLU, CP_MLP_GEGLU, CP_MLP_RELU2 } cp_xf_mlp;

/* Positions: a learned table of max_positions rows (GPT-2, BERT), rotary
 * (Llama and after: no parameters), ALiBi (no parameters), none. */
typedef enum cp_xf_pos { CP_POS_LEARNED, CP_POS_ROPE, CP_POS_ALIBI, CP_POS_NONE } cp_xf_pos;

/* Norms: LayerNorm (weight and bias, mean and variance) or RMSNorm (weight). */
typedef enum cp_xf_norm { CP_NORM_LAYER, CP_NORM_RMS } cp_xf_norm;

/* A mixture-of-experts MLP (issue 23): experts == 0 means a dense model. */
typedef struct cp_xf_moe {
    int64_t experts;        /* routed experts per MoE layer */
    int64_t top_k;          /* experts each token is routed to */
    int64_t ffn;            /* inner size of one routed expert */
    int64_t shared_experts; /* experts every token goes through (DeepSeek, Qwen2-MoE) */
    int64_t shared_ffn;     /* inner size of all shared experts together */
    int64_t dense_layers;   /* the first blocks with a dense MLP instead (DeepSeek-V3: 3) */
    int64_t dense_ffn;      /* their inner size (0: cp_xformer.ffn) */
    int64_t every;          /* a MoE MLP every this many blocks (Qwen2-MoE's
                               decoder_sparse_step; 1 in most), counted after dense_layers */
    int router_sigmoid;     /* 1: sigmoid scores (DeepSeek-V3), 0: softmax */
    int expert_bias;        /* 1: expert matrices carry biases (GPT-OSS) */
    int router_bias;        /* 1: the router has one bias per expert (GPT-OSS's linear
                               bias, DeepSeek-V3's e_score_correction_bias) */
    int shared_gate;        /* 1: a sigmoid gate of h weights scales the shared experts'
                               output (Qwen2-MoE's shared_expert_gate) */
} cp_xf_moe;

/* Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values
 * through low-rank projections; kv_lora_rank == 0 means ordinary attention. */
typedef struct cp_xf_mla {
    int64_t q_lora_rank;    /* 0: queries projected directly from h */
    int64_t kv_lora_rank;   /* compressed key/value width */
    int64_t qk_nope_dim;    /* per-head query/key width without rotary */
    int64_t qk_rope_dim;    /* per-head rotary width (shared key part) */
    int64_t v_head_dim;     /* per-head value width */
} cp_xf_mla;

/* A transformer's architecture, enough to derive every GEMM of a block with
 * its shape, FLOPs and bytes, the activation sizes and the parameter count
 * (docs/formats.md, "transformer"; docs/model.md eq. M2 and the large-model
 * equations); layers 0 when the model file gives none. */
typedef struct cp_xformer {
    int64_t layers;    /* blocks */
    int64_t hidden;    /* h */
    int64_t heads;     /* a, attention (query) heads */
    int64_t kv_heads;  /* key/value heads (grouped-query attention), <= heads */
    int64_t head_dim;  /* d, width of one head; a x d may differ from h (Gemma-7B:
                          16 x 256 = 4096 against h = 3072) */
    int64_t ffn;       /* MLP inner size f (4h in BERT and GPT-2) */
    int64_t seq;       /* tokens per sample s */
    int64_t vocab;     /* V when an LM head computes logits over the vocabulary, else 0 */
    int64_t max_pos;   /* rows of a learned position table (GPT-2: 1024), else 0 */
    cp_xf_mlp mlp;
    cp_xf_pos pos;
    cp_xf_norm norm;
    int swiglu;        /* 1 when the MLP is gated (SwiGLU or GeGLU): three matrices and
                          four kept activations of s x f (eq. M2); derived from mlp */
    int tied;          /* the LM head reuses the input embedding (GPT-2, Gemma) */
    int qkv_bias;      /* the q, k and v projections carry biases (GPT-2, Qwen2) */
    int o_bias;        /* the output projection carries a bias (GPT-2) */
    int mlp_bias;      /* the MLP matrices carry biases (GPT-2, Nemotron: no) */
    int qk_norm;       /* per-head RMSNorm of queries and keys (Qwen3, OLMo-2) */
    int64_t window;    /* sliding-window attention width in tokens, 0: full */
    int64_t window_every; /* the window applies to every this many blocks, the others
                             attend fully (GPT-OSS: 2, alternating); 1: all.  Block i
                             (from 0) slides when i % window_every == 0 */
    int attn_sinks;    /* one learned sink logit per query head (GPT-OSS) */
    double dropout;    /* dropout probability (masks are kept when > 0) */
    cp_xf_moe moe;
    cp_xf_mla mla;
} cp_xformer;

/* 1 for the gated MLPs (three matrices). */
static inline int cp_xf_gated(const cp_xformer *x)
{
    return x->mlp == CP_MLP_SWIGLU || x->mlp == CP_MLP_GEGLU;
}

/* The width of one head: head_dim, or h / a when the file gives none. */
static inline int64_t cp_xf_head_dim(const cp_xformer *x)
{
    return x->head_dim > 0 ? x->head_dim : x->hidden / (x->heads > 0 ? x->heads : 1);
}

/* 1 when block i (from 0) has a mixture-of-experts MLP: a MoE model, past
 * the dense_layers, and the moe.every-th block counted from there (block
 * dense_layers + every - 1 first: Qwen2-MoE's (i + 1) % decoder_sparse_step
 * == 0 when there are no dense layers).  model/xformer.c. */
int cp_xf_moe_block(const cp_xformer *x, int64_t i);

/* Parameters of the decoder language model the block describes
 * (docs/formats.md, "Parameters of the transformer block"): the token
 * embedding (vocab x h, when vocab > 0), a learned position table, every
 * block, the final norm and the LM head unless tied.  *active counts what
 * one token passes through: the same, with top_k of the routed experts of
 * each MoE block instead of all of them (embeddings included).  Either
 * pointer may be NULL.  model/xformer.c. */
void cp_xf_params(const cp_xformer *x, int64_t *total, int64_t *active);

/* At most 2^50 (1.1e15) parameters in a transformer block's description, a
 * thousand times the largest published model: every count and the bytes of
 * one copy of them stay in 64 bits.  The loaders refuse more. */
#define CP_XF_MAX_PARAMS 1125899906842624.0

/* cp_xf_params' total as a double, without overflow for any block the
 * loader's per-field bounds allow: what the loaders hold against
 * CP_XF_MAX_PARAMS before anything adds parameters in 64 bits. */
double cp_xf_param_bound(const cp_xformer *x);

typedef struct cp_model {
    char *name;            /* owned */
    cp_dtype dtype;        /* gradient element type */
    cp_tensor *tensors;    /* owned, ntensors of them, forward order */
    int ntensors;
    cp_layer *layers;      /* owned, nlayers of them, forward order */
    int nlayers;
    int64_t params;        /* sum of numel (derived) */
    double iteration_ms;   /* measured single-GPU iteration time, 0 unknown */
    double bwd_fwd_ratio;  /* backward time / forward time, default 2 */
    double optimizer_ms;   /* part of iteration_ms spent in the optimizer step */
    cp_split split;        /* how iteration_ms is split over layers */
    int batch;             /* per-GPU batch size, 0 unknown (informational) */
    cp_xformer xf;         /* transformer dimensions, xf.layers 0 when not given */
} cp_model;

/* Bytes of one element of `t`: 4 for fp32, 2 for fp16 and bf16. */
int cp_dtype_bytes(cp_dtype t);

/* "fp32", "fp16", "bf16". */
const char *cp_dtype_name(cp_dtype t);

/* Gradient bytes of the whole model (params x element size). */
int64_t cp_model_grad_bytes(const cp_model *m);

/* Release everything the model owns, and the model itself.  NULL is a no-op. */
void cp_model_free(cp_model *m);

/* Fill derived fields (layer params, model params, default layer names) and
 * check cross-field rules that do not need the file: every tensor's layer
 * exists, timings are all-or-nothing.  Used by the loader and by code that
 * builds models in memory.  CP_EINPUT with e->where naming the field. */
int cp_model_finish(cp_model *m, cp_err *e);

/* A deep copy of `m` with its tensor list repeated `times` times (layers
 * too, names suffixed "#k"): the scaling benchmark's synthetic model.  NULL
 * when out of memory or when the copy would pass CP_MAX_TENSORS tensors or
 * layers. */
cp_model *cp_model_repeat(const cp_model *m, int times);

#endif
