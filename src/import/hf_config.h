/*
 * hf_config.h - converting a Hugging Face `config.json` into coarse-plan
 * model JSON: the trainable tensors a transformers model of that
 * configuration registers, with the names and shapes PyTorch reports,
 * grouped into layers with their forward FLOPs.
 *
 * Why: the gradient tensors are what data-parallel training synchronises,
 * and a config.json is all one needs to know them; no checkpoint has to be
 * downloaded.  The result is the same schema the shipped models use
 * (docs/formats.md), so everything downstream (predict, plan, compare)
 * takes it as it is.
 *
 * Families (docs/import.md has the exact mapping and the formulas):
 *   bert     BertModel, BertForPreTraining, BertForMaskedLM
 *   gpt2     GPT2LMHeadModel (lm_head tied to wte: counted once), GPT2Model
 *   llama    LlamaForCausalLM, LlamaModel; model_types mistral, qwen2, qwen3
 *            (query/key norms), gemma (GeGLU) and nemotron (squared ReLU,
 *            LayerNorm1P) have the same block: grouped-query attention
 *            through num_key_value_heads, lm_head unless tie_word_embeddings
 *   mixtral, qwen2_moe, qwen3_moe, deepseek_v3 (latent attention, shared
 *            experts, first dense blocks), gpt_oss (sinks, fused biased
 *            experts, alternating sliding windows): mixtures of experts
 * The output carries the model's "transformer" block (docs/formats.md),
 * every field written out.
 * The architecture is architectures[0] of the file unless opts->arch says
 * otherwise.  Tensors come in registration order (what named_parameters()
 * yields, tied weights once); layers are the embedding block, each
 * transformer block, the final norm and each head, in forward order.  FLOPs
 * per sample: 2 x (matmul weight elements) x tokens, plus 4 x seq^2 x width
 * per block for the attention scores and context; lookups, biases and norms
 * count 0.
 *
 * Keys that set a dimension are required and checked (positive integers in
 * range, heads dividing the hidden size, expert fields that agree); keys
 * that would add parameters or attention patterns we do not model
 * (cross-attention, Qwen's windows from max_window_layers on) are refused;
 * every other key is ignored, since config files carry dozens of training
 * and generation settings.
 * Errors are CP_EINPUT with the line and column of the offending value.
 */
#ifndef CP_HF_CONFIG_H
#define CP_HF_CONFIG_H

#include <jansson.h>
#include <stdint.h>

#include "core/err.h"

typedef struct cp_hf_opts {
    const char *name;   /* model name; NULL: the last part of "_name_or_path",
                         * else the file's base name */
    int64_t seq_len;    /* tokens per sample; 0: bert 128, gpt2 1024, the decoder
                         * families 2048, each capped at the model's maximum
                         * positions */
    int64_t batch;      /* per-GPU batch written as compute.batch (default 1) */
    const char *dtype;  /* gradient dtype: "fp32" (default), "fp16", "bf16" */
    const char *arch;   /* architecture overriding architectures[0]; NULL: the file's */
    int64_t max_tensors; /* refuse a conversion of more tensors (0: the converter's
                          * limit, 262,144); a caller converting many configs (the
                          * fuzzer) caps its work with it */
} cp_hf_opts;

/* Fill the defaults above. */
void cp_hf_opts_default(cp_hf_opts *o);

/* Convert the JSON text of `path` (len bytes, NUL-terminated) into a model
 * JSON object (*out, new reference; NULL on error).  CP_EINPUT with the
 * position of what cannot be converted, CP_EINTERNAL when out of memory. */
int cp_import_hf_config(const char *path, const char *text, size_t len,
                        const cp_hf_opts *o, json_t **out, cp_err *e);

#endif
