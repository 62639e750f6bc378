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

/* The CSV comparison; without the reference data the test is reported
 * SKIPPED (cmocka's skip() leaves it), not passed.  skip() leaves the
 * test there, so the model is freed first: the caller's free is not
 * reached (a leak under ASan without ../shared). */
static void check_csv(cp_model *m, const char *csv)
{
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): %s not compared\n", csv);
        cp_model_free(m);
        skip();
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

/* The block's own count (model/xformer.c) must equal the tensor list's:
 * the importer and the large-model stage describe the same model. */
static void same_as_block(const cp_model *m, int64_t *active)
{
    int64_t total;
    cp_xf_params(&m->xf, &total, active);
    assert_int_equal(total, m->params);
}

/* ------------------------------------------------------------------------ */
/* Llama 3 and 3.1, Qwen3, Nemotron-4                                        */

/* Llama-3-8B and Llama-3.1-405B: the Llama block at two sizes; 3.1's
 * rope_scaling (llama3) adds no parameter. */
static void test_llama3(void **state)
{
    cp_model *m = good(GOOD "llama-3-8b.json", NULL);
    (void)state;
    /* V 128256, h 4096, 32 blocks, 32 heads of 128, 8 key/value heads (k, v:
     * 1024 rows), f 14336, untied:
     * 2 x 128256 x 4096 + 32 x (2 x 4096^2 + 2 x 1024 x 4096 + 3 x 4096 x 14336
     * + 2 x 4096) + 4096 = 8,030,261,248 (Meta's Llama-3-8B, the
     * safetensors count on meta-llama/Meta-Llama-3-8B) */
    assert_int_equal(m->params, 2LL * 128256 * 4096 +
                                    32LL * (2LL * 4096 * 4096 + 2LL * 1024 * 4096 +
                                            3LL * 4096 * 14336 + 2 * 4096) +
                                    4096);
    assert_int_equal(m->params, 8030261248LL);
    assert_int_equal(m->ntensors, 1 + 32 * 9 + 1 + 1);
    assert_int_equal(m->xf.mlp, CP_MLP_SWIGLU);
    assert_int_equal(m->xf.norm, CP_NORM_RMS);
    assert_int_equal(m->xf.pos, CP_POS_ROPE);
    assert_int_equal(m->xf.head_dim, 128);
    assert_int_equal(m->xf.tied, 0);
    same_as_block(m, NULL);
    cp_model_free(m);
    /* h 16384, 126 blocks, 128 heads of 128, 8 key/value heads, f 53248:
     * 2 x 128256 x 16384 + 126 x (2 x 16384^2 + 2 x 1024 x 16384 + 3 x 16384
     * x 53248 + 2 x 16384) + 16384 = 4,202,692,608 + 126 x 3,187,703,808 +
     * 16,384 = 405,853,388,800 (meta-llama/Llama-3.1-405B, "406B") */
    m = good(GOOD "llama-3.1-405b.json", NULL);
    assert_int_equal(m->params, 2LL * 128256 * 16384 +
                                    126LL * (2LL * 16384 * 16384 + 2LL * 1024 * 16384 +
                                             3LL * 16384 * 53248 + 2 * 16384) +
                                    16384);
    assert_int_equal(m->params, 405853388800LL);
    assert_int_equal(m->ntensors, 1 + 126 * 9 + 2);
    same_as_block(m, NULL);
    cp_model_free(m);
}

/* Qwen3-8B: head_dim given (128), RMSNorm of one head's width on queries
 * and keys (q_norm, k_norm, after o_proj), no biases. */
static void test_qwen3(void **state)
{
    cp_model *m = good(GOOD "qwen3-8b.json", NULL);
    int k;
    (void)state;
    /* V 151936, h 4096, 36 blocks, 32 heads of 128, 8 key/value heads, f
     * 12288, untied: 2 x 151936 x 4096 + 36 x (2 x 4096^2 + 2 x 1024 x 4096 +
     * 3 x 4096 x 12288 + 2 x 4096 + 2 x 128) + 4096 = 1,244,659,712 + 36 x
     * 192,946,432 + 4,096 = 8,190,735,360 (Qwen/Qwen3-8B: "8.2B", 6.95B
     * without the two embeddings: 6,946,075,648) */
    assert_int_equal(m->params, 2LL * 151936 * 4096 +
                                    36LL * (2LL * 4096 * 4096 + 2LL * 1024 * 4096 +
                                            3LL * 4096 * 12288 + 2 * 4096 + 2 * 128) +
                                    4096);
    assert_int_equal(m->params, 8190735360LL);
    assert_int_equal(m->params - 2LL * 151936 * 4096, 6946075648LL);
    assert_int_equal(m->ntensors, 1 + 36 * 11 + 2);
    k = tensor_index(m, "model.layers.0.self_attn.q_norm.weight");
    assert_int_equal(k, 5); /* after q, k, v, o */
    assert_int_equal(m->tensors[k].numel, 128);
    assert_string_equal(m->tensors[6].name, "model.layers.0.self_attn.k_norm.weight");
    assert_int_equal(m->xf.qk_norm, 1);
    same_as_block(m, NULL);
    cp_model_free(m);
}

/* Nemotron-4-340B: squared-ReLU MLP without a gate (up_proj, down_proj),
 * LayerNorm1P norms with weight and bias, no biases on the projections. */
static void test_nemotron(void **state)
{
    cp_model *m = good(GOOD "nemotron-4-340b.json", NULL);
    (void)state;
    /* V 256000, h 18432, 96 blocks, 96 heads of 192, 8 key/value heads (k,
     * v: 1536 rows), f 73728, untied:
     * embeddings 2 x 256000 x 18432 = 9,437,184,000 ("9.4 billion embedding
     * parameters", Nemotron-4 340B technical report)
     * + 96 x (2 x 18432^2 + 2 x 1536 x 18432 + 2 x 18432 x 73728 + 2 x 2 x
     *        18432) = 96 x 3,454,083,072 = 331,591,974,912
     * + final norm 2 x 18432: 341,029,195,776 ("331.6 billion non-embedding"
     * with the final norm: 331,592,011,776) */
    assert_int_equal(m->params, 2LL * 256000 * 18432 +
                                    96LL * (2LL * 18432 * 18432 + 2LL * 1536 * 18432 +
                                            2LL * 18432 * 73728 + 4 * 18432) +
                                    2 * 18432);
    assert_int_equal(m->params, 341029195776LL);
    assert_int_equal(m->ntensors, 1 + 96 * 10 + 2 + 1);
    assert_int_equal(tensor_index(m, "model.layers.0.mlp.gate_proj.weight"), -1);
    assert_int_equal(tensor_index(m, "model.layers.0.mlp.up_proj.weight"), 5);
    assert_string_equal(m->tensors[8].name, "model.layers.0.input_layernorm.bias");
    assert_int_equal(m->xf.mlp, CP_MLP_RELU2);
    assert_int_equal(m->xf.norm, CP_NORM_LAYER);
    assert_int_equal(m->xf.swiglu, 0);
    same_as_block(m, NULL);
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* Mixtures of experts                                                       */

/* Mixtral-8x7B: 8 experts of 14336 (w1, w2, w3), 2 per token, a router
 * Linear(4096, 8) per block. */
static void test_mixtral(void **state)
{
    cp_model *m = good(GOOD "mixtral-8x7b.json", NULL);
    int64_t active;
    (void)state;
    /* attention 2 x 4096^2 + 2 x 1024 x 4096 = 41,943,040; router 8 x 4096;
     * experts 8 x 3 x 4096 x 14336 = 1,409,286,144; norms 2 x 4096:
     * 2 x 32000 x 4096 + 32 x 1,451,270,144 + 4096 = 46,702,792,704
     * (Mistral AI: "46.7B total parameters") */
    assert_int_equal(m->params, 2LL * 32000 * 4096 +
                                    32LL * (2LL * 4096 * 4096 + 2LL * 1024 * 4096 + 8 * 4096 +
                                            8LL * 3 * 4096 * 14336 + 2 * 4096) +
                                    4096);
    assert_int_equal(m->params, 46702792704LL);
    /* active: 2 of the 8 experts: 46,702,792,704 - 32 x 6 x 3 x 4096 x 14336
     * = 12,879,925,248 ("12.9B parameters per token") */
    same_as_block(m, &active);
    assert_int_equal(active, 46702792704LL - 32LL * 6 * 3 * 4096 * 14336);
    assert_int_equal(active, 12879925248LL);
    assert_int_equal(m->ntensors, 1 + 32 * (4 + 1 + 8 * 3 + 2) + 2);
    assert_string_equal(m->tensors[5].name, "model.layers.0.block_sparse_moe.gate.weight");
    assert_string_equal(m->tensors[6].name, "model.layers.0.block_sparse_moe.experts.0.w1.weight");
    assert_int_equal(m->tensors[7].shape[0], 4096); /* w2 [h, f] */
    assert_int_equal(m->tensors[7].shape[1], 14336);
    assert_int_equal(m->xf.moe.experts, 8);
    assert_int_equal(m->xf.moe.top_k, 2);
    assert_int_equal(m->xf.moe.ffn, 14336);
    /* block FLOPs at 2048 tokens: active matmul weights 41,943,040 + 32,768 +
     * 2 x 3 x 4096 x 14336 = 394,297,344; 2 x 2048 x that + 4 x 2048^2 x 4096
     * = 1,615,041,921,024 + 68,719,476,736 = 1,683,761,397,760 */
    assert_near(m->layers[1].flops, 1683761397760.0, 0);
    cp_model_free(m);
}

/* Qwen1.5-MoE-A2.7B (model_type qwen2_moe): 60 experts of 1408, 4 per
 * token, one shared expert of 5632 with its sigmoid gate Linear(h, 1), q, k,
 * v biases. */
static void test_qwen2_moe(void **state)
{
    cp_model *m = good(GOOD "qwen1.5-moe-a2.7b.json", NULL);
    int64_t active;
    (void)state;
    /* attention 3 x (2048^2 + 2048) + 2048^2 = 16,783,360; router 60 x 2048;
     * experts 60 x 3 x 2048 x 1408 = 519,045,120; shared 3 x 2048 x 5632 =
     * 34,603,008 and its gate 2048; norms 2 x 2048: 570,560,512 a block;
     * 2 x 151936 x 2048 + 24 x 570,560,512 + 2048 = 14,315,784,192 (Qwen:
     * "14.3B parameters in total") */
    assert_int_equal(m->params, 2LL * 151936 * 2048 +
                                    24LL * (3LL * (2048 * 2048 + 2048) + 2048LL * 2048 +
                                            60 * 2048 + 60LL * 3 * 2048 * 1408 +
                                            3LL * 2048 * 5632 + 2048 + 2 * 2048) +
                                    2048);
    assert_int_equal(m->params, 14315784192LL);
    /* active: 4 of 60: minus 24 x 56 x 3 x 2048 x 1408 = 2,689,173,504
     * ("2.7B activated parameters") */
    same_as_block(m, &active);
    assert_int_equal(active, 14315784192LL - 24LL * 56 * 3 * 2048 * 1408);
    assert_int_equal(active, 2689173504LL);
    assert_int_equal(tensor_index(m, "model.layers.0.mlp.shared_expert_gate.weight"),
                     1 + 7 + 1 + 60 * 3 + 3);
    assert_int_equal(m->xf.moe.shared_experts, 1);
    assert_int_equal(m->xf.moe.shared_ffn, 5632);
    assert_int_equal(m->xf.moe.shared_gate, 1);
    cp_model_free(m);
}

/* Qwen3-30B-A3B and Qwen3-235B-A22B (qwen3_moe): 128 experts, 8 per token,
 * no shared expert, Qwen3's query/key norms. */
static void test_qwen3_moe(void **state)
{
    cp_model *m = good(GOOD "qwen3-30b-a3b.json", NULL);
    int64_t active;
    (void)state;
    /* h 2048, 48 blocks, 32 heads of 128 (q: 4096 rows), 4 key/value heads
     * (512 rows), experts of 768:
     * attention 2 x 2048 x 4096 + 2 x 512 x 2048 + 2 x 128 = 18,874,624;
     * router 128 x 2048 = 262,144; experts 128 x 3 x 2048 x 768 =
     * 603,979,776; norms 4096: 623,120,640 a block;
     * 2 x 151936 x 2048 + 48 x 623,120,640 + 2048 = 30,532,122,624
     * (Qwen/Qwen3-30B-A3B: "30.5B in total", 29.9B without embeddings) */
    assert_int_equal(m->params, 2LL * 151936 * 2048 +
                                    48LL * (2LL * 2048 * 4096 + 2LL * 512 * 2048 + 2 * 128 +
                                            128 * 2048 + 128LL * 3 * 2048 * 768 + 2 * 2048) +
                                    2048);
    assert_int_equal(m->params, 30532122624LL);
    /* active: minus 48 x 120 x 3 x 2048 x 768 = 3,353,032,704 ("3.3B
     * activated") */
    same_as_block(m, &active);
    assert_int_equal(active, 30532122624LL - 48LL * 120 * 3 * 2048 * 768);
    assert_int_equal(active, 3353032704LL);
    assert_int_equal(m->ntensors, 1 + 48 * (4 + 2 + 1 + 128 * 3 + 2) + 2);
    cp_model_free(m);
    /* h 4096, 94 blocks, 64 heads of 128 (8192 rows), 4 key/value heads,
     * experts of 1536: attention 2 x 4096 x 8192 + 2 x 512 x 4096 + 256 =
     * 71,303,424; router 524,288; experts 128 x 3 x 4096 x 1536 =
     * 2,415,919,104; norms 8192: 2,487,755,008 a block;
     * 2 x 151936 x 4096 + 94 x that + 4096 = 235,093,634,560
     * (Qwen/Qwen3-235B-A22B: "235B in total"); active minus 94 x 120 x 3 x
     * 4096 x 1536 = 22,190,763,520 ("22B activated") */
    m = good(GOOD "qwen3-235b-a22b.json", NULL);
    assert_int_equal(m->params, 2LL * 151936 * 4096 +
                                    94LL * (2LL * 4096 * 8192 + 2LL * 512 * 4096 + 256 +
                                            128 * 4096 + 128LL * 3 * 4096 * 1536 + 2 * 4096) +
                                    4096);
    assert_int_equal(m->params, 235093634560LL);
    same_as_block(m, &active);
    assert_int_equal(active, 235093634560LL - 94LL * 120 * 3 * 4096 * 1536);
    assert_int_equal(active, 22190763520LL);
    cp_model_free(m);
}

/* DeepSeek-V3: latent attention, 3 dense blocks, then 58 MoE blocks of 256
 * routed experts (8 per token, sigmoid router with its correction bias) and
 * one shared expert; the multi-token-prediction block left out. */
static void test_deepseek_v3(void **state)
{
    cp_model *m = good(GOOD "deepseek-v3.json", NULL);
    int64_t active, attn, dense, moe, embed = 129280LL * 7168;
    (void)state;
    /* latent attention, h 7168, 128 heads: q_a 7168 x 1536, its norm 1536,
     * q_b 1536 x 128 x (128 + 64); kv_a 7168 x (512 + 64), its norm 512,
     * kv_b 512 x 128 x (128 + 128); o 128 x 128 x 7168 = 187,107,328 */
    attn = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * 576 + 512 +
           512LL * 128 * 256 + 128LL * 128 * 7168;
    assert_int_equal(attn, 187107328LL);
    /* a dense block: attention, 3 x 7168 x 18432, norms 2 x 7168 */
    dense = attn + 3LL * 7168 * 18432 + 2 * 7168;
    /* a MoE block: 256 routed experts of 3 x 7168 x 2048, router 256 x 7168
     * and its 256 biases, one shared expert of 2048, norms */
    moe = attn + 256LL * 3 * 7168 * 2048 + 256LL * 7168 + 256 + 3LL * 7168 * 2048 + 2 * 7168;
    /* 2 x 129280 x 7168 + 3 dense + 58 MoE + 7168 = 671,026,419,200
     * (DeepSeek-V3 technical report: "671B total parameters"; the 685B of
     * the Hugging Face checkpoint add the 14B MTP module) */
    assert_int_equal(m->params, 2 * embed + 3 * dense + 58 * moe + 7168);
    assert_int_equal(m->params, 671026419200LL);
    /* active: 8 of 256 routed experts: 37,552,297,472; the report's "37B
     * activated for each token" counts to its rounding either this or the
     * same without the input embedding, 36,625,618,432 (both within 1.5%) */
    same_as_block(m, &active);
    assert_int_equal(active, 671026419200LL - 58LL * 248 * 3 * 7168 * 2048);
    assert_int_equal(active, 37552297472LL);
    assert_true(fabs((double)active - 37e9) < 0.015 * 37e9);
    assert_true(fabs((double)(active - embed) - 37e9) < 0.015 * 37e9);
    /* 1 + 3 x 12 + 58 x (7 + 256 x 3 + 2 + 3 + 2) + 2 */
    assert_int_equal(m->ntensors, 1 + 3 * 12 + 58 * 782 + 2);
    assert_string_equal(m->tensors[1].name, "model.layers.0.self_attn.q_a_proj.weight");
    assert_int_equal(tensor_index(m, "model.layers.2.mlp.gate.weight"), -1); /* dense */
    assert_int_equal(tensor_index(m, "model.layers.3.mlp.gate.e_score_correction_bias"),
                     1 + 3 * 12 + 7 + 256 * 3 + 1);
    assert_int_equal(m->xf.mla.kv_lora_rank, 512);
    assert_int_equal(m->xf.head_dim, 192);
    assert_int_equal(m->xf.kv_heads, 128);
    assert_int_equal(m->xf.moe.dense_layers, 3);
    assert_int_equal(m->xf.moe.router_sigmoid, 1);
    assert_int_equal(m->xf.moe.router_bias, 1);
    assert_int_equal(m->xf.moe.shared_ffn, 2048);
    assert_int_equal(cp_xf_moe_block(&m->xf, 2), 0);
    assert_int_equal(cp_xf_moe_block(&m->xf, 3), 1);
    cp_model_free(m);
}

/* GPT-OSS-120B and 20B: biased attention with sink logits, alternating
 * 128-token windows, fused expert tensors with biases, a biased router;
 * MXFP4 storage does not change the count. */
static void test_gpt_oss(void **state)
{
    cp_model *m = good(GOOD "gpt-oss-120b.json", NULL);
    int64_t active, attn, expert, unembed = 201088LL * 2880;
    int k;
    (void)state;
    /* h 2880, 64 heads of 64 (4096), 8 key/value heads (512): q 2880 x 4096
     * + 4096, k and v 2880 x 512 + 512, o 4096 x 2880 + 2880, sinks 64 =
     * 26,550,144; one expert: 2880 x 5760 + 5760 + 2880 x 2880 + 2880 =
     * 24,891,840 */
    attn = 2880LL * 4096 + 4096 + 2 * (2880LL * 512 + 512) + 4096LL * 2880 + 2880 + 64;
    expert = 2880LL * 5760 + 5760 + 2880LL * 2880 + 2880;
    assert_int_equal(attn, 26550144);
    /* 36 x (attention + router 128 x 2880 + 128 + 128 experts + norms 5760)
     * + 2 x 201088 x 2880 + 2880 = 116,829,156,672 (OpenAI's gpt-oss model
     * card: 116.83B total) */
    assert_int_equal(m->params, 36 * (attn + 128LL * 2880 + 128 + 128 * expert + 5760) +
                                    2 * unembed + 2880);
    assert_int_equal(m->params, 116829156672LL);
    /* active, 4 experts of 128: 5,711,982,912; the card's 5.13B counts the
     * unembedding but not the embedding lookup: 5,132,849,472 */
    same_as_block(m, &active);
    assert_int_equal(active, 116829156672LL - 36LL * 124 * expert);
    assert_int_equal(active - unembed, 5132849472LL);
    assert_int_equal(m->ntensors, 1 + 36 * 17 + 2);
    k = tensor_index(m, "model.layers.0.mlp.experts.gate_up_proj");
    assert_int_equal(m->tensors[k].ndim, 3);
    assert_int_equal(m->tensors[k].shape[0], 128);
    assert_int_equal(m->tensors[k].shape[1], 2880);
    assert_int_equal(m->tensors[k].shape[2], 5760);
    assert_string_equal(m->tensors[9].name, "model.layers.0.self_attn.sinks");
    assert_int_equal(m->xf.window, 128);
    assert_int_equal(m->xf.window_every, 2);
    assert_int_equal(m->xf.attn_sinks, 1);
    assert_int_equal(m->xf.moe.expert_bias, 1);
    /* block 0 slides, block 1 attends fully: at 2048 tokens the attention
     * term is 2 x 2048 x 128 x (4096 + 4096) against 2 x 2048^2 x 8192 */
    assert_near(m->layers[2].flops - m->layers[1].flops,
                2.0 * 2048 * (2048 - 128) * 8192, 0);
    cp_model_free(m);
    /* 24 blocks of 32 experts: 24 x (attention + 32 x 2880 + 32 + 32 experts
     * + 5760) + 2 x 201088 x 2880 + 2880 = 20,914,757,184 (the card: 20.91B);
     * active without the embedding: 24 x (attention + router 92,192 + 4
     * experts 99,567,360 + 5,760) + 579,133,440 + 2,880 = 3,608,307,264
     * (3.61B) */
    m = good(GOOD "gpt-oss-20b.json", NULL);
    assert_int_equal(m->params, 24 * (attn + 32LL * 2880 + 32 + 32 * expert + 5760) +
                                    2 * unembed + 2880);
    assert_int_equal(m->params, 20914757184LL);
    same_as_block(m, &active);
    assert_int_equal(active - unembed, 3608307264LL);
    cp_model_free(m);
}

/* A tiny Qwen2-MoE with a MoE block every second block (decoder_sparse_step
 * 2: block 0 dense, block 1 MoE), every number by hand at --seq-len 4. */
static void test_tiny_moe_flops(void **state)
{
    static const char tiny[] =
        "{\"model_type\": \"qwen2_moe\", \"vocab_size\": 10, \"hidden_size\": 8,\n"
        " \"intermediate_size\": 12, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,\n"
        " \"max_position_embeddings\": 16, \"num_experts\": 4, \"num_experts_per_tok\": 2,\n"
        " \"moe_intermediate_size\": 6, \"shared_expert_intermediate_size\": 5,\n"
        " \"decoder_sparse_step\": 2}\n";
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    int64_t active;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 4;
    assert_int_equal(convert_text("tiny.json", tiny, &o, &m, &e), CP_OK);
    /* block 0 dense ((0 + 1) % 2 != 0): attention 4 x 64 = 256 and the
     * 3 x 8 x 12 = 288 MLP: 2 x 544 x 4 + 4 x 4^2 x 8 = 4,352 + 512 */
    assert_near(m->layers[1].flops, 2.0 * 544 * 4 + 4 * 16 * 8, 0);
    /* block 1 MoE: attention 256, router 4 x 8 = 32, 2 experts of 3 x 8 x 6
     * = 288, the shared expert 3 x 8 x 5 = 120 and its gate 8: 704 */
    assert_near(m->layers[2].flops, 2.0 * 704 * 4 + 4 * 16 * 8, 0);
    /* parameters: embed and head 2 x 80; block 0: q, k, v 3 x (64 + 8), o 64,
     * MLP 288, norms 16 = 584; block 1: 280 + router 32 + 4 x 144 + shared
     * 120 + gate 8 + norms 16 = 1,032; final norm 8: 1,784 */
    assert_int_equal(m->params, 160 + 584 + 1032 + 8);
    /* active: 2 of the 4 experts: minus 2 x 144 */
    same_as_block(m, &active);
    assert_int_equal(active, 160 + 584 + 1032 + 8 - 2 * 144);
    cp_model_free(m);
}

/* A tiny DeepSeek with q_lora_rank null (one q_proj) and one dense block:
 * latent attention's FLOPs by hand. */
static void test_tiny_mla_flops(void **state)
{
    static const char tiny[] =
        "{\"model_type\": \"deepseek_v3\", \"vocab_size\": 10, \"hidden_size\": 8,\n"
        " \"intermediate_size\": 12, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,\n"
        " \"max_position_embeddings\": 16, \"n_routed_experts\": 4,\n"
        " \"num_experts_per_tok\": 1, \"moe_intermediate_size\": 3, \"n_shared_experts\": 1,\n"
        " \"first_k_dense_replace\": 1, \"q_lora_rank\": null, \"kv_lora_rank\": 4,\n"
        " \"qk_nope_head_dim\": 2, \"qk_rope_head_dim\": 1, \"v_head_dim\": 2,\n"
        " \"topk_method\": \"greedy\", \"scoring_func\": \"softmax\"}\n";
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 4;
    assert_int_equal(convert_text("tiny.json", tiny, &o, &m, &e), CP_OK);
    /* attention: q_proj 8 x 2 x 3 = 48, kv_a 8 x (4 + 1) = 40, kv_b 4 x 2 x
     * (2 + 2) = 32, o 2 x 2 x 8 = 32: 152 matmul weights; scores over 2 x 3
     * = 6, values over 2 x 2 = 4.  Block 0 dense, MLP 3 x 8 x 12 = 288:
     * 2 x 440 x 4 + 2 x 4 x 4 x (6 + 4) = 3,520 + 320 */
    assert_near(m->layers[1].flops, 3520 + 320, 0);
    assert_string_equal(m->tensors[1].name, "model.layers.0.self_attn.q_proj.weight");
    assert_int_equal(m->tensors[1].shape[0], 6);
    /* block 1: router 32, one routed expert 72 and the shared one 72: 2 x
     * (152 + 176) x 4 + 320 */
    assert_near(m->layers[2].flops, 2.0 * 328 * 4 + 320, 0);
    assert_int_equal(m->xf.moe.router_bias, 0); /* greedy: no correction bias */
    assert_int_equal(tensor_index(m, "model.layers.1.mlp.gate.e_score_correction_bias"), -1);
    same_as_block(m, NULL);
    cp_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* FLOPs, options and variants on tiny configs                               */

/* The small variants in tests/data/good/hf/: Qwen2-MoE's mlp_only_layers
 * [0] (block 0 dense), Qwen3-MoE's decoder_sparse_step 2 with tied
 * embeddings, Nemotron with every bias, GPT-OSS's fused experts; each block
 * counts what its tensors hold. */
static void test_small_variants(void **state)
{
    cp_model *m = good(GOOD "tiny-qwen2-moe.json", NULL);
    (void)state;
    assert_int_equal(m->xf.moe.dense_layers, 1);
    assert_int_equal(cp_xf_moe_block(&m->xf, 0), 0);
    /* block 0's dense MLP of intermediate_size 32: gate_proj [32, 16] */
    assert_int_equal(m->tensors[tensor_index(m, "model.layers.0.mlp.gate_proj.weight")].shape[0],
                     32);
    assert_int_equal(tensor_index(m, "model.layers.0.mlp.gate.weight"), -1);
    assert_true(tensor_index(m, "model.layers.1.mlp.shared_expert_gate.weight") > 0);
    same_as_block(m, NULL);
    cp_model_free(m);
    m = good(GOOD "tiny-qwen3-moe.json", NULL);
    /* (i + 1) % 2 == 0: block 1 only */
    assert_int_equal(cp_xf_moe_block(&m->xf, 0), 0);
    assert_int_equal(cp_xf_moe_block(&m->xf, 1), 1);
    assert_int_equal(m->xf.moe.every, 2);
    assert_int_equal(m->xf.tied, 1);
    assert_int_equal(tensor_index(m, "lm_head.weight"), -1);
    same_as_block(m, NULL);
    cp_model_free(m);
    m = good(GOOD "tiny-nemotron.json", NULL);
    /* q, k, v, o with biases, up and down with biases, two LayerNorms with
     * bias: 8 + 4 + 4 tensors a block; embed, 2 blocks, norm (2), lm_head */
    assert_int_equal(m->ntensors, 1 + 2 * 16 + 2 + 1);
    assert_int_equal(m->xf.o_bias, 1);
    assert_int_equal(m->xf.mlp_bias, 1);
    same_as_block(m, NULL);
    cp_model_free(m);
    m = good(GOOD "tiny-gpt-oss.json", NULL);
    assert_int_equal(m->xf.window_every, 2);
    same_as_block(m, NULL);
    cp_model_free(m);
}

/* Sliding windows: Mistral's on every block (a query attends to the window
 * when it is shorter than the sequence); GPT-OSS's layer_types, sliding at
 * 0 and 3 of 4 blocks (every 3), or nowhere. */
static void test_windows(void **state)
{
    static const char mistral[] =
        "{\"model_type\": \"mistral\", \"vocab_size\": 10, \"hidden_size\": 8,\n"
        " \"intermediate_size\": 12, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,\n"
        " \"max_position_embeddings\": 16, \"sliding_window\": 2}\n";
    static const char oss[] =
        "{\"model_type\": \"gpt_oss\", \"vocab_size\": 10, \"hidden_size\": 8,\n"
        " \"intermediate_size\": 4, \"num_hidden_layers\": 4, \"num_attention_heads\": 2,\n"
        " \"head_dim\": 4, \"max_position_embeddings\": 16, \"num_local_experts\": 2,\n"
        " \"num_experts_per_tok\": 1, \"sliding_window\": 2, \"layer_types\": [%s]}\n";
    char text[1024];
    cp_hf_opts o;
    cp_model *m;
    cp_err e;
    (void)state;
    cp_hf_opts_default(&o);
    o.seq_len = 4;
    assert_int_equal(convert_text("m.json", mistral, &o, &m, &e), CP_OK);
    /* 2 x 480 x 4 + 2 x 4 tokens x 2 keys x (8 + 8) = 3,840 + 256 (the tiny
     * Llama block of test_tiny_llama_flops without GQA: q, k, v, o 4 x 64,
     * MLP 288: 544; 2 x 544 x 4 = 4,352) */
    assert_near(m->layers[1].flops, 2.0 * 544 * 4 + 2 * 4 * 2 * 16, 0);
    assert_int_equal(m->xf.window, 2);
    assert_int_equal(m->xf.window_every, 1);
    cp_model_free(m);
    snprintf(text, sizeof text, oss, "\"sliding_attention\", \"full_attention\", "
             "\"full_attention\", \"sliding_attention\"");
    assert_int_equal(convert_text("o.json", text, &o, &m, &e), CP_OK);
    assert_int_equal(m->xf.window_every, 3);
    /* blocks 0 and 3 attend to 2 keys, 1 and 2 to all 4: the difference is
     * 2 x 4 x (4 - 2) x (8 + 8) = 256 */
    assert_near(m->layers[2].flops - m->layers[1].flops, 256, 0);
    assert_near(m->layers[4].flops, m->layers[1].flops, 0);
    cp_model_free(m);
    snprintf(text, sizeof text, oss, "\"full_attention\", \"full_attention\", "
             "\"full_attention\", \"full_attention\"");
    assert_int_equal(convert_text("o.json", text, &o, &m, &e), CP_OK);
    assert_int_equal(m->xf.window, 0);
    cp_model_free(m);
}

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
            "\"t5\" is not supported (supported: bert, gpt2, llama, mistral, qwen2, qwen3, "
            "gemma, nemotron, mixtral, qwen2_moe, qwen3_moe, deepseek_v3, gpt_oss)");
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
    /* the expert fields: line 14, `  "experts_per_token": 4,`, column 24:
     * GPT-OSS's two names for one number disagree */
    refused(BAD "experts-disagree.json", NULL, 14, 24,
            "the expert fields disagree: experts_per_token is 4 but num_experts_per_tok is 2");
    /* line 12, `  "num_experts_per_tok": 10`, column 26 */
    refused(BAD "top-k-over-experts.json", NULL, 12, 26,
            "num_experts_per_tok 10 is more than the 8 experts (num_local_experts)");
    /* line 11, `  "n_group": 3,`, column 14: 16 experts in 3 groups */
    refused(BAD "expert-groups-disagree.json", NULL, 11, 14,
            "3 groups do not divide the 16 routed experts");
    /* line 15, the fourth entry at column 19: sliding at 0, 2, 3 */
    refused(BAD "layer-types-not-periodic.json", NULL, 15, 19,
            "the sliding blocks must be 0, k, 2k");
    refused(BAD "qwen-sliding-window.json", NULL, 9, 25, "from max_window_layers on are not modelled");
    refused(BAD "activation-unknown.json", NULL, 9, 17,
            "\"relu\" is not a modelled activation for llama");

    cp_hf_opts_default(&o);
    /* --seq-len beyond the model: blamed on max_position_embeddings (line 13,
     * `  "max_position_embeddings": 512,`, column 30) */
    o.seq_len = 513;
    refused(GOOD "bert-base-uncased.json", &o, 13, 30,
            "--seq-len 513 is longer than max_position_embeddings 512");
    /* the converter's tensor cap (the fuzzer's 4096): DeepSeek-V3's 61 x (16
     * + 3 x 256) tensors are over it, blamed on n_routed_experts (line 23,
     * `  "n_routed_experts": 256,`, column 23) */
    cp_hf_opts_default(&o);
    o.max_tensors = 4096;
    refused(GOOD "deepseek-v3.json", &o, 23, 23, "make over 4096 tensors");
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
        cmocka_unit_test(test_llama3),
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_nemotron),
        cmocka_unit_test(test_mixtral),
        cmocka_unit_test(test_qwen2_moe),
        cmocka_unit_test(test_qwen3_moe),
        cmocka_unit_test(test_deepseek_v3),
        cmocka_unit_test(test_gpt_oss),
        cmocka_unit_test(test_tiny_moe_flops),
        cmocka_unit_test(test_tiny_mla_flops),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_small_variants),
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
