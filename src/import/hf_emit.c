/*
 * hf_emit.c - the tensors and layers of BERT, GPT-2 and the dense decoder
 * families for `import hf-config` (hf_internal.h), mirroring the __init__
 * methods of modeling_bert.py, modeling_gpt2.py and modeling_llama.py (with
 * its descendants: modeling_mistral, _qwen2, _qwen3, _gemma, _nemotron.py)
 * line by line, so that a reader can hold the two side by side.  The
 * decoder skeleton (embeddings, blocks, final norm, LM head) is shared with
 * the mixture-of-experts families, whose blocks are in hf_emit_moe.c.
 * Cost: linear in the number of tensors.
 */
#include <stdio.h>

#include "import/hf_internal.h"

/* ------------------------------------------------------------------------ */
/* BERT (modeling_bert.py)                                                   */

/* BertEmbeddings: word, position and token-type tables, then LayerNorm. */
static void bert_embeddings(hf_build *b, const hf_dims *c, const char *p)
{
    char mod[HF_BLOCK_BYTES], m[HF_NAME_BYTES];
    snprintf(mod, sizeof mod, "%sembeddings", p);
    hf_layer(b, 0, "%s", mod);
    hf_tensor(b, c->vocab, c->hidden, 0, "%s.word_embeddings.weight", mod);
    hf_tensor(b, c->positions, c->hidden, 0, "%s.position_embeddings.weight", mod);
    hf_tensor(b, c->type_vocab, c->hidden, 0, "%s.token_type_embeddings.weight", mod);
    hf_norm(b, hf_sub(m, mod, "LayerNorm"), c->hidden, 1);
}

/* BertLayer: self-attention (query, key, value), its output dense and
 * LayerNorm, the intermediate dense, the output dense and LayerNorm. */
static void bert_block(hf_build *b, const hf_dims *c, const char *p, int i)
{
    static const char *const qkvo[] = {"attention.self.query", "attention.self.key",
                                       "attention.self.value", "attention.output.dense"};
    int64_t h = c->hidden, f = c->inner;
    double s = b->s;
    char blk[HF_BLOCK_BYTES], m[HF_NAME_BYTES];
    size_t k;
    snprintf(blk, sizeof blk, "%sencoder.layer.%d", p, i);
    hf_layer(b, hf_block_flops(s, (double)(4 * h * h + 2 * h * f), s, (double)h, (double)h),
             "%s", blk);
    for (k = 0; k < 4; k++)
        hf_linear(b, hf_sub(m, blk, qkvo[k]), h, h, 1);
    hf_norm(b, hf_sub(m, blk, "attention.output.LayerNorm"), h, 1);
    hf_linear(b, hf_sub(m, blk, "intermediate.dense"), h, f, 1);
    hf_linear(b, hf_sub(m, blk, "output.dense"), f, h, 1);
    hf_norm(b, hf_sub(m, blk, "output.LayerNorm"), h, 1);
}

/* BertPooler: one dense layer on the first token ([CLS]) only. */
static void bert_pooler(hf_build *b, const hf_dims *c, const char *p)
{
    hf_layer(b, 2.0 * (double)(c->hidden * c->hidden), "%spooler", p);
    hf_tensor(b, c->hidden, c->hidden, 0, "%spooler.dense.weight", p);
    hf_tensor(b, c->hidden, 0, 0, "%spooler.dense.bias", p);
}

/* BertLMPredictionHead: its own `bias` is registered before `transform`
 * (named_parameters yields a module's parameters before its children's);
 * the decoder's weight is the word embedding unless untied, and its bias
 * is that same `bias`.  The decoder runs over every position. */
static void bert_mlm_head(hf_build *b, const hf_dims *c)
{
    double s = b->s, h = (double)c->hidden, v = (double)c->vocab;
    hf_layer(b, 2 * s * h * h + 2 * s * h * v, "cls.predictions");
    hf_tensor(b, c->vocab, 0, 0, "cls.predictions.bias");
    hf_linear(b, "cls.predictions.transform.dense", c->hidden, c->hidden, 1);
    hf_norm(b, "cls.predictions.transform.LayerNorm", c->hidden, 1);
    if (!c->tied)
        hf_tensor(b, c->vocab, c->hidden, 0, "cls.predictions.decoder.weight");
}

void hf_emit_bert(hf_build *b, const hf_dims *c)
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
        hf_layer(b, 2.0 * 2.0 * (double)c->hidden, "cls.seq_relationship");
        hf_linear(b, "cls.seq_relationship", c->hidden, 2, 1);
    }
}

/* ------------------------------------------------------------------------ */
/* GPT-2 (modeling_gpt2.py)                                                  */

/* GPT2Block: ln_1, attn.c_attn (q, k, v at once), attn.c_proj, ln_2,
 * mlp.c_fc, mlp.c_proj; Conv1D weights are [in, out]. */
static void gpt2_block(hf_build *b, const hf_dims *c, const char *p, int i)
{
    int64_t h = c->hidden, f = c->inner;
    double s = b->s;
    char blk[HF_BLOCK_BYTES], m[HF_NAME_BYTES];
    snprintf(blk, sizeof blk, "%sh.%d", p, i);
    hf_layer(b, hf_block_flops(s, (double)(4 * h * h + 2 * h * f), s, (double)h, (double)h),
             "%s", blk);
    hf_norm(b, hf_sub(m, blk, "ln_1"), h, 1);
    hf_conv1d(b, hf_sub(m, blk, "attn.c_attn"), h, 3 * h);
    hf_conv1d(b, hf_sub(m, blk, "attn.c_proj"), h, h);
    hf_norm(b, hf_sub(m, blk, "ln_2"), h, 1);
    hf_conv1d(b, hf_sub(m, blk, "mlp.c_fc"), h, f);
    hf_conv1d(b, hf_sub(m, blk, "mlp.c_proj"), f, h);
}

/* GPT2Model has no embeddings module: the first layer is named after its
 * two tables.  The LM head's weight is wte's unless untied; its compute is
 * a layer of its own either way. */
void hf_emit_gpt2(hf_build *b, const hf_dims *c)
{
    const char *p = c->arch->prefix;
    char m[HF_NAME_BYTES];
    int i;
    hf_layer(b, 0, "%swte+wpe", p);
    hf_tensor(b, c->vocab, c->hidden, 0, "%swte.weight", p);
    hf_tensor(b, c->positions, c->hidden, 0, "%swpe.weight", p);
    for (i = 0; i < (int)c->layers; i++)
        gpt2_block(b, c, p, i);
    snprintf(m, sizeof m, "%sln_f", p);
    hf_layer(b, 0, "%s", m);
    hf_norm(b, m, c->hidden, 1);
    if (c->arch->head == HEAD_LM) {
        hf_layer(b, 2 * b->s * (double)c->hidden * (double)c->vocab, "lm_head");
        if (!c->tied)
            hf_tensor(b, c->vocab, c->hidden, 0, "lm_head.weight");
    }
}

/* ------------------------------------------------------------------------ */
/* The Llama-style decoders (modeling_llama.py and its descendants)          */

/* LlamaAttention: q_proj, k_proj, v_proj, o_proj (biases with
 * attention_bias; Qwen2's q, k, v always); Qwen3Attention then registers
 * q_norm and k_norm, RMSNorm over one head's width. */
void hf_llama_attention(hf_build *b, const hf_dims *c, const char *blk)
{
    int64_t h = c->hidden, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    int qkv = c->attn_bias || c->qkv_bias;
    char m[HF_NAME_BYTES];
    hf_linear(b, hf_sub(m, blk, "self_attn.q_proj"), h, q, qkv);
    hf_linear(b, hf_sub(m, blk, "self_attn.k_proj"), h, kv, qkv);
    hf_linear(b, hf_sub(m, blk, "self_attn.v_proj"), h, kv, qkv);
    hf_linear(b, hf_sub(m, blk, "self_attn.o_proj"), q, h, c->attn_bias);
    if (c->qk_norm) {
        hf_norm(b, hf_sub(m, blk, "self_attn.q_norm"), c->head_dim, 0);
        hf_norm(b, hf_sub(m, blk, "self_attn.k_norm"), c->head_dim, 0);
    }
}

/* LlamaMLP: gate_proj, up_proj, down_proj; NemotronMLP: up_proj, down_proj
 * (a plain MLP, squared ReLU between). */
void hf_llama_mlp(hf_build *b, const hf_dims *c, const char *module, int64_t f, int bias)
{
    char m[HF_NAME_BYTES];
    if (c->mlp == CP_MLP_SWIGLU || c->mlp == CP_MLP_GEGLU)
        hf_linear(b, hf_sub(m, module, "gate_proj"), c->hidden, f, bias);
    hf_linear(b, hf_sub(m, module, "up_proj"), c->hidden, f, bias);
    hf_linear(b, hf_sub(m, module, "down_proj"), f, c->hidden, bias);
}

/* Matmul weight elements of a Llama-style attention: q and o h x H d, k and
 * v h x K d. */
static double llama_attn_weights(const hf_dims *c)
{
    double h = (double)c->hidden, d = (double)c->head_dim;
    return 2 * h * (double)c->heads * d + 2 * h * (double)c->kv_heads * d;
}

/* LlamaDecoderLayer registers self_attn, mlp, input_layernorm,
 * post_attention_layernorm, in that order (forward runs the first norm
 * first; registration order is what named_parameters and DDP see).
 * Nemotron's norms are LayerNorm1P: a weight and a bias. */
static void llama_block(hf_build *b, const hf_dims *c, const char *blk, int64_t i)
{
    double mats = c->mlp == CP_MLP_SWIGLU || c->mlp == CP_MLP_GEGLU ? 3 : 2;
    double w = llama_attn_weights(c) + mats * (double)c->hidden * (double)c->inner;
    double width = (double)(c->heads * c->head_dim);
    int ln = c->type->norm == CP_NORM_LAYER;
    char m[HF_NAME_BYTES];
    hf_layer(b, hf_block_flops(b->s, w, hf_keys(c, b->s, i), width, width), "%s", blk);
    hf_llama_attention(b, c, blk);
    hf_llama_mlp(b, c, hf_sub(m, blk, "mlp"), c->inner, c->mlp_bias);
    hf_norm(b, hf_sub(m, blk, "input_layernorm"), c->hidden, ln);
    hf_norm(b, hf_sub(m, blk, "post_attention_layernorm"), c->hidden, ln);
}

/* LlamaModel: embed_tokens, layers, norm; LlamaForCausalLM adds lm_head
 * unless tied (its compute is a layer of its own either way).  Every
 * decoder family has this skeleton. */
void hf_emit_decoder(hf_build *b, const hf_dims *c)
{
    const char *p = c->arch->prefix;
    char m[HF_NAME_BYTES], blk[HF_BLOCK_BYTES];
    int64_t i;
    snprintf(m, sizeof m, "%sembed_tokens", p);
    hf_layer(b, 0, "%s", m);
    hf_tensor(b, c->vocab, c->hidden, 0, "%s.weight", m);
    for (i = 0; i < c->layers; i++) {
        snprintf(blk, sizeof blk, "%slayers.%lld", p, (long long)i);
        if (c->type->fam == FAM_LLAMA)
            llama_block(b, c, blk, i);
        else
            hf_emit_moe_block(b, c, blk, i);
    }
    snprintf(m, sizeof m, "%snorm", p);
    hf_layer(b, 0, "%s", m);
    hf_norm(b, m, c->hidden, c->type->norm == CP_NORM_LAYER);
    if (c->arch->head == HEAD_LM) {
        hf_layer(b, 2 * b->s * (double)c->hidden * (double)c->vocab, "lm_head");
        if (!c->tied)
            hf_tensor(b, c->vocab, c->hidden, 0, "lm_head.weight");
    }
}
