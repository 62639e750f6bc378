/*
 * test_hf_config.c - the Hugging Face config importer: parameter totals
 * derived by hand beside each assertion (the published counts where there
 * are any), the reference CSVs row by row (name, shape, numel) when
 * ../shared/data is present, layer FLOPs of tiny configs by hand, and every
 * refusal with its line and column.
 *
 * The configs are our own files under tests/data/good/hf/ (the public
 * values of each model's config.json) and tests/data/bad/hf/.  Every
 * conversion goes through the model loader, as `import` does.
 */
#include "testutil.h"

#include "core/fileio.h"
#include "import/hf_config.h"
#include "load/load.h"

#define GOOD "tests/data/good/hf/"
#define BAD "tests/data/bad/hf/"

/* Convert `text` as if read from `path` and load the result as a model.
 * Returns the importer's status; *m is NULL unless it is CP_OK. */
static int convert_text(const char *path, const char *text, const cp_hf_opts *o,
                        cp_model **m, cp_err *e)
{
    json_t *root = NULL;
    char *json;
    cp_jdoc d;
    int rc;
    *m = NULL;
    cp_err_clear(e);
    rc = cp_import_hf_config(path, text, strlen(text), o, &root, e);
    if (rc != CP_OK) {
        assert_null(root);
        return rc;
    }
    assert_non_null(json = json_dumps(root, JSON_REAL_PRECISION(12)));
    json_decref(root);
    assert_int_equal(cp_jdoc_load_text(&d, path, json, strlen(json), e), CP_OK);
    if (cp_model_load_doc(&d, m, e) != CP_OK)
        fail_msg("the converted model does not load: %s: %s", e->where, e->msg);
    cp_jdoc_free(&d);
    free(json);
    return CP_OK;
}

/* Convert a config file; returns the status. */
static int convert_file(const char *path, const cp_hf_opts *o, cp_model **m, cp_err *e)
{
    char *text;
    size_t len;
    int rc;
    assert_int_equal(cp_read_file(path, &text, &len, e), CP_OK);
    rc = convert_text(path, text, o, m, e);
    free(text);
    return rc;
}

/* Convert a good config (with --arch when arch is not NULL); must succeed. */
static cp_model *good(const char *file, const char *arch)
{
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    cp_hf_opts_default(&o);
    o.arch = arch;
    if (convert_file(file, &o, &m, &e) != CP_OK)
        fail_msg("%s: %d:%d: %s", file, e.line, e.col, e.msg);
    return m;
}

/* Index of the tensor called `name`, or -1. */
static int tensor_index(const cp_model *m, const char *name)
{
    int i;
    for (i = 0; i < m->ntensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return i;
    return -1;
}

/* Index of the layer called `name`, or -1. */
static int layer_index(const cp_model *m, const char *name)
{
    int i;
    for (i = 0; i < m->nlayers; i++)
        if (strcmp(m->layers[i].name, name) == 0)
            return i;
    return -1;
}

/* Every tensor equals the CSV row at its index: name, shape ("768x3072"),
 * numel; and there are as many tensors as rows. */
static void compare_with_csv(const cp_model *m, const char *csv)
{
    char line[512];
    int i = 0;
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char name[256], shape[128], *dim, *save = NULL;
        long long numel;
        int idx, k = 0;
        if (sscanf(line, "%d,%255[^,],%127[^,],%lld", &idx, name, shape, &numel) != 4)
            fail_msg("%s: cannot parse '%s'", csv, line);
        assert_int_equal(idx, i);
        if (i >= m->ntensors)
            fail_msg("%s: row %d (%s) has no tensor", csv, i, name);
        assert_string_equal(m->tensors[i].name, name);
        assert_int_equal(m->tensors[i].numel, numel);
        for (dim = strtok_r(shape, "x", &save); dim; dim = strtok_r(NULL, "x", &save), k++) {
            assert_true(k < m->tensors[i].ndim);
            assert_int_equal(m->tensors[i].shape[k], atoll(dim));
        }
        assert_int_equal(k, m->tensors[i].ndim);
        i++;
    }
    assert_int_equal(i, m->ntensors);
    fclose(f);
}

/* The CSV comparison, or a note that the reference data is absent. */
static void check_csv(const cp_model *m, const char *csv)
{
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): %s not compared\n", csv);
        return;
    }
    compare_with_csv(m, csv);
}

/* ------------------------------------------------------------------------ */
/* BERT                                                                      */

/* bert-base-uncased as BertModel (its file says BertForMaskedLM; --arch). */
static void test_bert_base_model(void **state)
{
    cp_model *m = good(GOOD "bert-base-uncased.json", "BertModel");
    (void)state;
    /* embeddings (30522 + 512 + 2) x 768 + LayerNorm 2 x 768
     * + 12 x (q, k, v, o: 4 x 768^2 + 4 x 768; LayerNorm 2 x 768;
     *         intermediate 768 x 3072 + 3072; output 3072 x 768 + 768; LayerNorm 2 x 768)
     * + pooler 768^2 + 768 = 109,482,240 (Hugging Face's BertModel count) */
    assert_int_equal(m->params, (30522 + 512 + 2) * 768 + 2 * 768 +
                                    12 * (4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 +
                                          768 + 4 * 768) +
                                    768 * 768 + 768);
    assert_int_equal(m->params, 109482240);
    /* 5 embedding tensors, 16 per block, 2 in the pooler */
    assert_int_equal(m->ntensors, 5 + 12 * 16 + 2);
    /* embeddings, 12 blocks, pooler */
    assert_int_equal(m->nlayers, 14);
    assert_string_equal(m->layers[13].name, "pooler");
    assert_string_equal(m->name, "bert-base-uncased"); /* the file's base name */
    check_csv(m, SHARED_DATA "/models/bert-base-uncased_BertModel.csv");
    cp_model_free(m);
}

/* The file's own architecture, BertForMaskedLM: no pooler; the masked-LM
 * head's bias registered before its transform; decoder tied. */
static void test_bert_base_masked_lm(void **state)
{
    cp_model *m = good(GOOD "bert-base-uncased.json", NULL);
    int i;
    (void)state;
    /* BertModel - pooler (768^2 + 768) + cls.predictions.bias 30522
     * + transform dense 768^2 + 768 + transform LayerNorm 2 x 768
     * = 109,482,240 - 590,592 + 30,522 + 590,592 + 1,536 = 109,514,298 */
    assert_int_equal(m->params, 109482240 - 590592 + 30522 + 590592 + 1536);
    assert_int_equal(m->ntensors, 199 - 2 + 5);
    assert_int_equal(tensor_index(m, "bert.pooler.dense.weight"), -1);
    i = tensor_index(m, "cls.predictions.bias");
    assert_int_equal(i, 197); /* right after the 197 tensors of bert.* */
    assert_int_equal(m->tensors[i].numel, 30522);
    assert_string_equal(m->tensors[i + 1].name, "cls.predictions.transform.dense.weight");
    assert_string_equal(m->tensors[m->ntensors - 1].name,
                        "cls.predictions.transform.LayerNorm.bias");
    assert_int_equal(tensor_index(m, "cls.predictions.decoder.weight"), -1); /* tied */
    cp_model_free(m);
}

/* bert-large-uncased, BertForPreTraining (the file's architecture). */
static void test_bert_large_pretraining(void **state)
{
    cp_model *m = good(GOOD "bert-large-uncased.json", NULL);
    (void)state;
    /* BertModel 335,141,888 + cls.predictions.bias 30522 + transform dense
     * 1024^2 + 1024 + transform LayerNorm 2 x 1024 + seq_relationship
     * 2 x 1024 + 2 = 335,141,888 + 30,522 + 1,049,600 + 2,048 + 2,050 */
    assert_int_equal(m->params, 335141888 + 30522 + 1049600 + 2048 + 2050);
    assert_int_equal(m->params, 336226108);
    assert_int_equal(m->ntensors, 398);
    /* embeddings, 24 blocks, pooler, cls.predictions, cls.seq_relationship */
    assert_int_equal(m->nlayers, 28);
    assert_string_equal(m->layers[27].name, "cls.seq_relationship");
    check_csv(m, SHARED_DATA "/models/bert-large-uncased_BertForPreTraining.csv");
    cp_model_free(m);
}

static void test_bert_large_model(void **state)
{
    cp_model *m = good(GOOD "bert-large-uncased.json", "BertModel");
    (void)state;
    /* (30522 + 512 + 2) x 1024 + 2 x 1024
     * + 24 x (4 x 1024^2 + 4 x 1024 + 2 x 1024 x 4096 + 4096 + 1024 + 4 x 1024)
     * + 1024^2 + 1024 = 335,141,888 (KerasNLP bert_large_en_uncased) */
    assert_int_equal(m->params, (30522 + 512 + 2) * 1024 + 2 * 1024 +
                                    24 * (4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 +
                                          4096 + 1024 + 4 * 1024) +
                                    1024 * 1024 + 1024);
    assert_int_equal(m->params, 335141888);
    check_csv(m, SHARED_DATA "/models/bert-large-uncased_BertModel.csv");
    cp_model_free(m);
}

/* NVIDIA DeepLearningExamples pads the vocabulary to 30528 (a multiple of 8). */
static void test_bert_large_nvidia_dle(void **state)
{
    cp_model *m = good(GOOD "bert-large-nvidia-dle.json", NULL);
    (void)state;
    /* 6 more word embeddings (6 x 1024) and 6 more output biases:
     * 336,226,108 + 6,144 + 6 = 336,232,258 */
    assert_int_equal(m->params, 336226108 + 6 * 1024 + 6);
    check_csv(m, SHARED_DATA "/models/bert-large_NVIDIA-DLE_vocab30528_BertForPreTraining.csv");
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* GPT-2                                                                     */

static void test_gpt2(void **state)
{
    cp_model *m = good(GOOD "gpt2.json", NULL);
    int lm;
    (void)state;
    /* wte 50257 x 768 + wpe 1024 x 768
     * + 12 x (ln_1 2 x 768; c_attn 768 x 2304 + 2304; c_proj 768^2 + 768;
     *         ln_2 2 x 768; c_fc 768 x 3072 + 3072; c_proj 3072 x 768 + 768)
     * + ln_f 2 x 768; lm_head tied to wte: not counted again
     * = 124,439,808 (Hugging Face's GPT2LMHeadModel count) */
    assert_int_equal(m->params, (50257 + 1024) * 768 +
                                    12 * (2 * 768 + 768 * 2304 + 2304 + 768 * 768 + 768 +
                                          2 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768) +
                                    2 * 768);
    assert_int_equal(m->params, 124439808);
    /* the tied head owns no tensor but is a layer with the projection's
     * compute: 2 x 1024 tokens x 768 x 50257 = 79,047,426,048 */
    lm = layer_index(m, "lm_head");
    assert_int_equal(lm, m->nlayers - 1);
    assert_int_equal(m->layers[lm].params, 0);
    assert_near(m->layers[lm].flops, 79047426048.0, 0);
    /* Conv1D weights are [in, out]: c_attn 768 x 2304 */
    assert_int_equal(m->tensors[4].shape[0], 768);
    assert_int_equal(m->tensors[4].shape[1], 2304);
    check_csv(m, SHARED_DATA "/models/gpt2_124M_GPT2LMHeadModel.csv");
    cp_model_free(m);
}

/* gpt2-medium: "n_inner": null means 4 x n_embd. */
static void test_gpt2_medium(void **state)
{
    cp_model *m = good(GOOD "gpt2-medium.json", NULL);
    (void)state;
    /* (50257 + 1024) x 1024 + 24 x (2 x 1024 + 1024 x 3072 + 3072 + 1024^2
     * + 1024 + 2 x 1024 + 1024 x 4096 + 4096 + 4096 x 1024 + 1024) + 2 x 1024 */
    assert_int_equal(m->params, (50257 + 1024) * 1024 +
                                    24 * (2 * 1024 + 1024 * 3072 + 3072 + 1024 * 1024 + 1024 +
                                          2 * 1024 + 1024 * 4096 + 4096 + 4096 * 1024 + 1024) +
                                    2 * 1024);
    assert_int_equal(m->params, 354823168);
    assert_int_equal(m->tensors[tensor_index(m, "transformer.h.0.mlp.c_fc.weight")].shape[1],
                     4096);
    check_csv(m, SHARED_DATA "/models/gpt2-medium_345M_GPT2LMHeadModel.csv");
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* Llama and Mistral                                                         */

static void test_llama2_7b(void **state)
{
    cp_model *m = good(GOOD "llama-2-7b.json", NULL);
    int i;
    (void)state;
    /* embed_tokens and the untied lm_head, 32000 x 4096 each
     * + 32 x (q, k, v, o 4 x 4096^2; gate, up, down 3 x 4096 x 11008;
     *         two RMSNorm weights 2 x 4096)
     * + final norm 4096 = 6,738,415,616 (the published Llama-2-7B count) */
    assert_int_equal(m->params, 32000LL * 4096 * 2 +
                                    32LL * (4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096) +
                                    4096);
    assert_int_equal(m->params, 6738415616LL);
    assert_string_equal(m->name, "Llama-2-7b-hf"); /* the last part of _name_or_path */
    /* embed_tokens, 9 per block, norm, lm_head */
    assert_int_equal(m->ntensors, 1 + 32 * 9 + 1 + 1);
    assert_int_equal(m->nlayers, 1 + 32 + 1 + 1);
    /* registration order inside a block: self_attn, mlp, then the two norms */
    assert_string_equal(m->tensors[1].name, "model.layers.0.self_attn.q_proj.weight");
    assert_string_equal(m->tensors[8].name, "model.layers.0.input_layernorm.weight");
    assert_string_equal(m->tensors[9].name, "model.layers.0.post_attention_layernorm.weight");
    i = m->ntensors - 1;
    assert_string_equal(m->tensors[i].name, "lm_head.weight");
    assert_int_equal(m->tensors[i].layer, m->nlayers - 1);
    /* default sequence: min(2048, max_position_embeddings 4096) = 2048;
     * block: 2 x 2048 x (4 x 4096^2 + 3 x 4096 x 11008) + 4 x 2048^2 x 4096
     * = 897,648,164,864 */
    assert_near(m->layers[1].flops, 897648164864.0, 0);
    assert_int_equal(m->batch, 1);     /* default --batch */
    assert_int_equal(m->dtype, CP_FP32); /* default --dtype */
    cp_model_free(m);
}

/* Mistral-7B: grouped-query attention, 8 key/value heads of 32. */
static void test_mistral_gqa(void **state)
{
    cp_model *m = good(GOOD "mistral-7b-v0.1.json", NULL);
    int k;
    (void)state;
    /* head_dim = 4096 / 32 = 128; k_proj and v_proj: 8 x 128 = 1024 rows
     * embed + lm_head 2 x 32000 x 4096
     * + 32 x (q, o 2 x 4096^2; k, v 2 x 1024 x 4096; gate, up, down
     *         3 x 4096 x 14336; norms 2 x 4096) + 4096
     * = 262,144,000 + 32 x 218,112,000 + 4,096 = 7,241,732,096
     *   (the published Mistral-7B-v0.1 count) */
    assert_int_equal(m->params, 32000LL * 4096 * 2 +
                                    32LL * (2LL * 4096 * 4096 + 2LL * 1024 * 4096 +
                                            3LL * 4096 * 14336 + 2 * 4096) +
                                    4096);
    assert_int_equal(m->params, 7241732096LL);
    k = tensor_index(m, "model.layers.0.self_attn.k_proj.weight");
    assert_int_equal(m->tensors[k].shape[0], 1024);
    assert_int_equal(m->tensors[k].shape[1], 4096);
    cp_model_free(m);
}

/* Qwen2 (modeling_qwen2.py): a Llama block whose q, k and v projections
 * carry biases and whose o projection does not. */
static void test_qwen2(void **state)
{
    cp_model *m = good(GOOD "qwen2-7b.json", NULL);
    int k;
    (void)state;
    /* h 3584, 28 heads of 128, 4 key/value heads (k, v: 512 rows),
     * f 18944, V 152064, untied:
     * embed + lm_head 2 x 152064 x 3584 = 1,089,994,752
     * + 28 x (q 3584^2 + 3584; k, v 2 x (512 x 3584 + 512); o 3584^2;
     *         gate, up, down 3 x 3584 x 18944; norms 2 x 3584)
     *   = 28 x 233,057,792 = 6,525,618,176
     * + final norm 3584 = 7,615,616,512 (the published Qwen2-7B count) */
    assert_int_equal(m->params, 152064LL * 3584 * 2 +
                                    28LL * (3584LL * 3584 + 3584 + 2 * (512LL * 3584 + 512) +
                                            3584LL * 3584 + 3LL * 3584 * 18944 + 2 * 3584) +
                                    3584);
    assert_int_equal(m->params, 7615616512LL);
    /* embed, 12 per block (q, k, v weights and biases; o; gate, up, down;
     * two norms), norm, lm_head */
    assert_int_equal(m->ntensors, 1 + 28 * 12 + 1 + 1);
    k = tensor_index(m, "model.layers.0.self_attn.k_proj.bias");
    assert_int_equal(m->tensors[k].numel, 512);
    assert_int_equal(tensor_index(m, "model.layers.0.self_attn.o_proj.bias"), -1);
    assert_int_equal(m->xf.kv_heads, 4);
    assert_int_equal(m->xf.swiglu, 1);
    cp_model_free(m);
    /* Qwen2-0.5B, tied: 151936 x 896 + 24 x (896^2 + 896 + 2 x (128 x 896
     * + 128) + 896^2 + 3 x 896 x 4864 + 2 x 896) + 896 = 136,134,656 +
     * 24 x 14,912,384 + 896 = 494,032,768 (the published count) */
    m = good(GOOD "qwen2-0.5b.json", NULL);
    assert_int_equal(m->params, 494032768LL);
    assert_int_equal(m->ntensors, 1 + 24 * 12 + 1);
    cp_model_free(m);
}

/* Gemma: a Llama block with head_dim 256 whatever the hidden size, and the
 * embeddings tied unless the config says otherwise (GemmaConfig's default,
 * which its config.json leaves out). */
static void test_gemma(void **state)
{
    cp_model *m = good(GOOD "gemma-2b.json", NULL);
    (void)state;
    /* h 2048, 8 heads of 256 (q: 2048 rows), 1 key/value head (256 rows),
     * f 16384, V 256000, tied:
     * embed 256000 x 2048 = 524,288,000
     * + 18 x (q, o 2 x 2048^2; k, v 2 x 256 x 2048; gate, up, down
     *         3 x 2048 x 16384; norms 2 x 2048) = 18 x 110,104,576
     * + 2048 = 2,506,172,416 (the published Gemma-2B count) */
    assert_int_equal(m->params, 256000LL * 2048 +
                                    18LL * (2LL * 2048 * 2048 + 2LL * 256 * 2048 +
                                            3LL * 2048 * 16384 + 2 * 2048) +
                                    2048);
    assert_int_equal(m->params, 2506172416LL);
    assert_int_equal(m->ntensors, 1 + 18 * 9 + 1); /* no lm_head: tied */
    cp_model_free(m);
    /* Gemma-7B: h 3072, 16 heads of 256 (q, k, v: 4096 rows; o: 3072 x
     * 4096), f 24576: 256000 x 3072 + 28 x (4 x 4096 x 3072 + 3 x 3072 x
     * 24576 + 2 x 3072) + 3072 = 8,537,680,896 (the published count) */
    m = good(GOOD "gemma-7b.json", NULL);
    assert_int_equal(m->params, 256000LL * 3072 +
                                    28LL * (4LL * 4096 * 3072 + 3LL * 3072 * 24576 + 2 * 3072) +
                                    3072);
    assert_int_equal(m->params, 8537680896LL);
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* FLOPs, options and variants on tiny configs                               */

/* A tiny Llama with GQA and tied embeddings, at --seq-len 4. */
static const char tiny_llama[] =
    "{\"model_type\": \"llama\", \"vocab_size\": 10, \"hidden_size\": 8,\n"
    " \"intermediate_size\": 12, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,\n"
    " \"num_key_value_heads\": 1, \"max_position_embeddings\": 16,\n"
    " \"tie_word_embeddings\": true}\n";

static void test_tiny_llama_flops(void **state)
{
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 4;
    o.batch = 3;
    o.dtype = "bf16";
    assert_int_equal(convert_text("tiny.json", tiny_llama, &o, &m, &e), CP_OK);
    /* head_dim 8 / 2 = 4; q 2 x 4 = 8 wide, k and v 1 x 4 = 4 wide.
     * Block matmul weights: q 8x8 64, k 4x8 32, v 32, o 64, gate 12x8 96,
     * up 96, down 96 = 480.  FLOPs = 2 x 480 x 4 tokens (3,840)
     * + 4 x 4^2 x 8 attention (512) = 4,352 */
    assert_int_equal(m->nlayers, 4); /* embed_tokens, layers.0, norm, lm_head */
    assert_near(m->layers[0].flops, 0, 0);
    assert_near(m->layers[1].flops, 4352, 0);
    assert_near(m->layers[2].flops, 0, 0);
    /* lm_head: 2 x 4 x 8 x 10 = 640; tied: no tensor of its own */
    assert_near(m->layers[3].flops, 640, 0);
    assert_int_equal(m->layers[3].params, 0);
    assert_int_equal(tensor_index(m, "lm_head.weight"), -1);
    /* embed 10 x 8 = 80, block 480 + 2 x 8 = 496, norm 8: 584 */
    assert_int_equal(m->params, 80 + 480 + 16 + 8);
    assert_int_equal(m->tensors[tensor_index(m, "model.layers.0.self_attn.k_proj.weight")]
                         .shape[0], 4);
    assert_int_equal(m->batch, 3);
    assert_int_equal(m->dtype, CP_BF16);
    cp_model_free(m);
}

/* A tiny BERT for pre-training at --seq-len 3: every layer by hand. */
static const char tiny_bert[] =
    "{\"model_type\": \"bert\", \"architectures\": [\"BertForPreTraining\"],\n"
    " \"vocab_size\": 6, \"hidden_size\": 4, \"num_hidden_layers\": 1,\n"
    " \"num_attention_heads\": 2, \"intermediate_size\": 8,\n"
    " \"max_position_embeddings\": 8}\n";

static void test_tiny_bert_flops(void **state)
{
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 3;
    assert_int_equal(convert_text("tiny.json", tiny_bert, &o, &m, &e), CP_OK);
    assert_int_equal(m->nlayers, 5);
    assert_string_equal(m->layers[1].name, "bert.encoder.layer.0");
    /* block: matmul weights 4 x 4^2 + 2 x 4 x 8 = 128; 2 x 128 x 3 = 768,
     * attention 4 x 3^2 x 4 = 144: 912 */
    assert_near(m->layers[1].flops, 912, 0);
    /* pooler on the first token: 2 x 4 x 4 = 32 */
    assert_near(m->layers[2].flops, 32, 0);
    /* cls.predictions over 3 tokens: transform 2 x 3 x 4 x 4 = 96,
     * tied decoder 2 x 3 x 4 x 6 = 144: 240 */
    assert_near(m->layers[3].flops, 240, 0);
    /* cls.seq_relationship on the pooled token: 2 x 4 x 2 = 16 */
    assert_near(m->layers[4].flops, 16, 0);
    cp_model_free(m);
}

/* Defaults: BERT 128 tokens, capped at max_position_embeddings. */
static void test_default_sequence(void **state)
{
    static const char short_bert[] =
        "{\"model_type\": \"bert\", \"vocab_size\": 6, \"hidden_size\": 4,\n"
        " \"num_hidden_layers\": 1, \"num_attention_heads\": 1,\n"
        " \"intermediate_size\": 8, \"max_position_embeddings\": 64}\n";
    cp_hf_opts o;
    cp_model *m = good(GOOD "bert-base-uncased.json", "BertModel");
    cp_err e;
    (void)state;
    /* 2 x 128 x (4 x 768^2 + 2 x 768 x 3072) + 4 x 128^2 x 768
     * = 1,811,939,328 + 50,331,648 = 1,862,270,976 */
    assert_near(m->layers[1].flops, 1862270976.0, 0);
    cp_model_free(m);
    cp_hf_opts_default(&o);
    assert_int_equal(convert_text("short.json", short_bert, &o, &m, &e), CP_OK);
    /* 64 positions: s = 64; 2 x 64 x 128 + 4 x 64^2 x 4 = 16,384 + 65,536 */
    assert_near(m->layers[1].flops, 16384 + 65536, 0);
    assert_string_equal(m->layers[0].name, "embeddings"); /* no architectures: BertModel */
    cp_model_free(m);
}

/* Untied output projections and Llama's optional biases: the extra tensors
 * where transformers registers them. */
static void test_untied_and_biases(void **state)
{
    static const char gpt2[] =
        "{\"model_type\": \"gpt2\", \"vocab_size\": 10, \"n_embd\": 4, \"n_layer\": 1,\n"
        " \"n_head\": 2, \"n_positions\": 8, \"n_inner\": 6, \"tie_word_embeddings\": false}\n";
    static const char llama[] =
        "{\"model_type\": \"llama\", \"vocab_size\": 10, \"hidden_size\": 4,\n"
        " \"intermediate_size\": 6, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,\n"
        " \"max_position_embeddings\": 8, \"head_dim\": 3, \"attention_bias\": true,\n"
        " \"mlp_bias\": true, \"architectures\": [\"LlamaModel\"]}\n";
    static const char mlm[] =
        "{\"model_type\": \"bert\", \"architectures\": [\"BertForMaskedLM\"],\n"
        " \"vocab_size\": 6, \"hidden_size\": 4, \"num_hidden_layers\": 1,\n"
        " \"num_attention_heads\": 2, \"intermediate_size\": 8,\n"
        " \"max_position_embeddings\": 8, \"tie_word_embeddings\": false}\n";
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    int i;
    (void)state;
    cp_hf_opts_default(&o);
    assert_int_equal(convert_text("g.json", gpt2, &o, &m, &e), CP_OK);
    i = m->ntensors - 1;
    assert_string_equal(m->tensors[i].name, "lm_head.weight"); /* untied: last */
    assert_int_equal(m->tensors[i].numel, 10 * 4);
    /* n_inner 6: c_fc 4 x 6 */
    assert_int_equal(m->tensors[tensor_index(m, "transformer.h.0.mlp.c_fc.weight")].shape[1], 6);
    cp_model_free(m);

    assert_int_equal(convert_text("l.json", llama, &o, &m, &e), CP_OK);
    /* LlamaModel: no "model." prefix, no lm_head; head_dim 3 given, so q is
     * 2 x 3 = 6 wide although hidden is 4 */
    assert_string_equal(m->tensors[0].name, "embed_tokens.weight");
    assert_string_equal(m->tensors[1].name, "layers.0.self_attn.q_proj.weight");
    assert_string_equal(m->tensors[2].name, "layers.0.self_attn.q_proj.bias");
    assert_int_equal(m->tensors[2].numel, 6);
    assert_string_equal(m->tensors[8].name, "layers.0.self_attn.o_proj.bias");
    assert_int_equal(m->tensors[8].numel, 4);
    assert_string_equal(m->tensors[10].name, "layers.0.mlp.gate_proj.bias");
    assert_int_equal(layer_index(m, "lm_head"), -1);
    /* embed 40; q 24+6, k 24+6, v 24+6, o 24+4; gate, up 2 x (24+6),
     * down 24+4; norms 2 x 4; final norm 4 */
    assert_int_equal(m->params, 40 + 30 * 3 + 28 + 30 * 2 + 28 + 8 + 4);
    cp_model_free(m);

    assert_int_equal(convert_text("b.json", mlm, &o, &m, &e), CP_OK);
    i = m->ntensors - 1; /* the untied decoder comes after the transform */
    assert_string_equal(m->tensors[i].name, "cls.predictions.decoder.weight");
    assert_int_equal(m->tensors[i].numel, 6 * 4);
    cp_model_free(m);
}

/* --name, and _name_or_path with a trailing slash. */
static void test_names(void **state)
{
    static const char text[] =
        "{\"_name_or_path\": \"./org/tiny-bert/\", \"model_type\": \"bert\",\n"
        " \"vocab_size\": 6, \"hidden_size\": 4, \"num_hidden_layers\": 1,\n"
        " \"num_attention_heads\": 1, \"intermediate_size\": 8,\n"
        " \"max_position_embeddings\": 8}\n";
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    assert_int_equal(convert_text("dir/config.json", text, &o, &m, &e), CP_OK);
    assert_string_equal(m->name, "tiny-bert");
    cp_model_free(m);
    o.name = "mine";
    assert_int_equal(convert_text("dir/config.json", text, &o, &m, &e), CP_OK);
    assert_string_equal(m->name, "mine");
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* Refusals, with their position                                             */

/* Convert `file` with `o` (defaults when NULL): CP_EINPUT at line:col with
 * `needle` in the message. */
static void refused(const char *file, const cp_hf_opts *o, int line, int col,
                    const char *needle)
{
    cp_hf_opts dflt;
    cp_model *m;
    cp_err e;
    cp_hf_opts_default(&dflt);
    assert_int_equal(convert_file(file, o ? o : &dflt, &m, &e), CP_EINPUT);
    assert_null(m);
    if (!strstr(e.msg, needle))
        fail_msg("%s: '%s' lacks '%s'", file, e.msg, needle);
    assert_string_equal(e.file, file);
    if (e.line != line || e.col != col)
        fail_msg("%s: error at %d:%d, expected %d:%d", file, e.line, e.col, line, col);
}

static void test_refusals(void **state)
{
    cp_hf_opts o;
    (void)state;
    /* a missing key is reported at the object that lacks it */
    refused(BAD "missing-hidden-size.json", NULL, 1, 1, "missing required key \"hidden_size\"");
    refused(BAD "missing-model-type.json", NULL, 1, 1, "missing required key \"model_type\"");
    /* line 3 is `  "hidden_size": -768,`: the value starts at column 18 */
    refused(BAD "negative-hidden-size.json", NULL, 3, 18,
            "expected an integer from 1 to 65536, got -768");
    refused(BAD "hidden-size-not-integer.json", NULL, 3, 18, "got 768.0");
    /* line 6, `  "model_type": "t5",`: column 17 */
    refused(BAD "unknown-model-type.json", NULL, 6, 17,
            "\"t5\" is not supported (supported: bert, gpt2, llama, mistral, qwen2, gemma)");
    /* line 7, `  "num_attention_heads": 7,`: column 26 */
    refused(BAD "heads-do-not-divide-hidden.json", NULL, 7, 26,
            "7 heads do not divide hidden_size 768");
    /* line 9, `  "num_key_value_heads": 5,`: column 26 */
    refused(BAD "kv-heads-do-not-divide-heads.json", NULL, 9, 26,
            "5 key/value heads do not divide num_attention_heads 32");
    /* line 2, `  "architectures": ["...` : the string at column 21 */
    refused(BAD "architecture-unsupported.json", NULL, 2, 21,
            "\"BertForSequenceClassification\" is not a supported architecture for "
            "model_type bert");
    refused(BAD "architecture-of-another-family.json", NULL, 2, 21, "\"GPT2LMHeadModel\"");
    refused(BAD "layers-over-limit.json", NULL, 8, 24, "from 1 to 1024, got 1025");
    refused(BAD "cross-attention.json", NULL, 10, 26, "cross-attention");
    refused(BAD "tie-not-boolean.json", NULL, 10, 26, "expected true or false, got \"yes\"");
    refused(BAD "gpt2-n-inner-zero.json", NULL, 5, 14, "got 0");
    refused(BAD "top-level-array.json", NULL, 1, 1, "expected a JSON object");

    cp_hf_opts_default(&o);
    /* --seq-len beyond the model: blamed on max_position_embeddings (line 13,
     * `  "max_position_embeddings": 512,`, column 30) */
    o.seq_len = 513;
    refused(GOOD "bert-base-uncased.json", &o, 13, 30,
            "--seq-len 513 is longer than max_position_embeddings 512");
    /* --arch of another family: about the option, no position */
    cp_hf_opts_default(&o);
    o.arch = "GPT2Model";
    refused(GOOD "bert-base-uncased.json", &o, 0, 0,
            "--arch GPT2Model: not a supported architecture for model_type bert");
}

/* A layer over the loader's 1e20 FLOPs is refused before conversion, at
 * the hidden size: 2^16 wide, 2^24 intermediate, 2^24 tokens gives a block
 * of 2 x 2^24 x 3 x 2^16 x 2^24 = 1.1e20 in the MLP alone. */
static void test_flops_limit(void **state)
{
    static const char huge[] =
        "{\"model_type\": \"llama\", \"vocab_size\": 1,\n"
        " \"hidden_size\": 65536, \"intermediate_size\": 16777216,\n"
        " \"num_hidden_layers\": 1, \"num_attention_heads\": 1,\n"
        " \"max_position_embeddings\": 16777216}\n";
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 1 << 24;
    assert_int_equal(convert_text("huge.json", huge, &o, &m, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "layer model.layers.0 would take"));
    assert_int_equal(e.line, 2); /* "hidden_size": 65536 */
    assert_int_equal(e.col, 17);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bert_base_model),
        cmocka_unit_test(test_bert_base_masked_lm),
        cmocka_unit_test(test_bert_large_pretraining),
        cmocka_unit_test(test_bert_large_model),
        cmocka_unit_test(test_bert_large_nvidia_dle),
        cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_gpt2_medium),
        cmocka_unit_test(test_llama2_7b),
        cmocka_unit_test(test_mistral_gqa), cmocka_unit_test(test_qwen2),
        cmocka_unit_test(test_gemma),
        cmocka_unit_test(test_tiny_llama_flops),
        cmocka_unit_test(test_tiny_bert_flops),
        cmocka_unit_test(test_default_sequence),
        cmocka_unit_test(test_untied_and_biases),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_flops_limit),
    };
    return cmocka_run_group_tests_name("hf_config", tests, NULL, NULL);
}
