/*
 * test_model.c - the model loader: the worked example of docs/formats.md,
 * every rejection rule, the shipped models' published parameter totals, and
 * agreement with the reference CSVs tensor by tensor.
 */
#include "testutil.h"

#include "load/load.h"

/* The worked example of docs/formats.md. */
static const char tiny_mlp[] =
    "{\n"
    "  \"name\": \"tiny-mlp\",\n"
    "  \"dtype\": \"fp32\",\n"
    "  \"layers\": [{\"name\": \"fc1\", \"flops\": 2097152}, {\"name\": \"fc2\", \"flops\": 20480}],\n"
    "  \"tensors\": [\n"
    "    {\"name\": \"fc1.weight\", \"shape\": [1024, 1024], \"layer\": 0},\n"
    "    {\"name\": \"fc1.bias\", \"numel\": 1024, \"layer\": 0},\n"
    "    {\"name\": \"fc2.weight\", \"shape\": [10, 1024], \"layer\": 1},\n"
    "    {\"name\": \"fc2.bias\", \"shape\": [10], \"layer\": 1}\n"
    "  ],\n"
    "  \"compute\": {\"iteration_ms\": 3.0, \"batch\": 64}\n"
    "}\n";

/* Load `text` as a model; returns the status, fills *m and *e. */
static int load(const char *text, cp_model **m, cp_err *e)
{
    char *path = write_temp(text);
    int rc;
    assert_non_null(path);
    rc = cp_model_load(path, m, e);
    drop_temp(path);
    return rc;
}

static void test_worked_example(void **state)
{
    cp_model *m;
    cp_err e;
    (void)state;
    assert_int_equal(load(tiny_mlp, &m, &e), CP_OK);
    assert_string_equal(m->name, "tiny-mlp");
    assert_int_equal(m->ntensors, 4);
    assert_int_equal(m->nlayers, 2);
    /* 1024*1024 + 1024 + 10*1024 + 10 = 1,048,576 + 1,024 + 10,240 + 10 */
    assert_int_equal(m->params, 1059850);
    /* fp32: 4 bytes each */
    assert_int_equal(cp_model_grad_bytes(m), 4239400);
    /* fc1 owns weight + bias = 1,049,600 */
    assert_int_equal(m->layers[0].params, 1049600);
    assert_int_equal(m->split, CP_SPLIT_FLOPS); /* auto: layers carry flops */
    assert_near(m->iteration_ms, 3.0, 0);
    assert_near(m->bwd_fwd_ratio, 2.0, 0); /* default */
    assert_int_equal(m->batch, 64);
    cp_model_free(m);
}

static void test_implicit_layers_and_fp16(void **state)
{
    cp_model *m;
    cp_err e;
    (void)state;
    assert_int_equal(load("{\"name\":\"x\",\"dtype\":\"bf16\",\"tensors\":["
                          "{\"name\":\"a\",\"numel\":3,\"layer\":0},"
                          "{\"name\":\"b\",\"numel\":5,\"layer\":2}]}",
                          &m, &e),
                     CP_OK);
    assert_int_equal(m->nlayers, 3); /* 0 .. max layer 2 */
    assert_int_equal(m->layers[1].params, 0);
    assert_string_equal(m->layers[1].name, "layer1");
    assert_int_equal(cp_model_grad_bytes(m), 16); /* (3 + 5) x 2 bytes */
    assert_int_equal(m->split, CP_SPLIT_PARAMS);
    cp_model_free(m);
}

static void test_per_layer_times(void **state)
{
    cp_model *m;
    cp_err e;
    (void)state;
    assert_int_equal(load("{\"name\":\"x\",\"dtype\":\"fp32\",\"layers\":["
                          "{\"fwd_ms\":1.5},{\"fwd_ms\":2,\"bwd_ms\":7}],\"tensors\":["
                          "{\"name\":\"a\",\"numel\":3,\"layer\":0}],"
                          "\"compute\":{\"bwd_fwd_ratio\":3}}",
                          &m, &e),
                     CP_OK);
    assert_near(m->layers[0].bwd_ms, 4.5, 1e-12); /* 1.5 x ratio 3 */
    assert_near(m->layers[1].bwd_ms, 7.0, 0);     /* given */
    cp_model_free(m);
}

/* Expect rejection with `needle` in the message and the error on `line`. */
static void expect_reject(const char *text, const char *needle, int line)
{
    cp_model *m = NULL;
    cp_err e;
    assert_int_equal(load(text, &m, &e), CP_EINPUT);
    assert_null(m);
    if (!strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s'", e.msg, needle);
    if (line > 0)
        assert_int_equal(e.line, line);
    assert_true(e.file[0] != '\0');
}

static void test_rejections(void **state)
{
    (void)state;
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":[]}", "no tensors", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp64\",\"tensors\":[]}", "unknown value \"fp64\"",
                  1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\n\"tensors\":[\n"
                  "{\"name\":\"a\",\"shape\":[3,0],\"layer\":0}]}",
                  "dimension 1: expected a positive integer, got 0", 3);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":-4,\"layer\":0}]}",
                  "got -4", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"layer\":0}]}",
                  "needs \"shape\"", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"shape\":[2,3],\"numel\":5,\"layer\":0}]}",
                  "does not match", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":[\n"
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0},\n"
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}]}",
                  "duplicate tensor name \"a\" (first at tensors[0])", 3);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0,\"size\":4}]}",
                  "unknown key \"size\"", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"layers\":[{}],\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":1}]}",
                  "layer 1 does not exist", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"layers\":[{\"fwd_ms\":1},\n{}],"
                  "\"tensors\":[{\"name\":\"a\",\"numel\":1,\"layer\":0}]}",
                  "give per-layer times for all layers or for none", 2);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"layers\":[{\"fwd_ms\":1}],"
                  "\"tensors\":[{\"name\":\"a\",\"numel\":1,\"layer\":0}],"
                  "\"compute\":{\"iteration_ms\":5}}",
                  "give one or the other", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}],"
                  "\"compute\":{\"split\":\"flops\"}}",
                  "needs \"flops\"", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"shape\":[1048576,1048576,2],\"layer\":0}]}",
                  "2^40", 1);
    expect_reject("{\"dtype\":\"fp32\",\"tensors\":[]}", "missing required key \"name\"", 1);
    /* the transformer block (eq. M2) */
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},\n"
                  "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":4,\"kv_heads\":3,"
                  "\"ffn\":32,\"seq\":4}}",
                  "3 key/value heads do not divide 4 heads", 2);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},"
                  "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":16,\"ffn\":32,"
                  "\"seq\":4}}",
                  "from 1 to 8, got 16", 1); /* more heads than hidden dimensions */
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},"
                  "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":4,\"ffn\":32,"
                  "\"seq\":4,\"mlp\":\"relu\"}}",
                  "unknown value \"relu\"", 1);
    expect_reject("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                  "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},"
                  "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":4,\"ffn\":32}}",
                  "missing required key \"seq\"", 1);
}

/* The transformer block as read: kv_heads defaults to heads, mlp to GELU,
 * dropout to none, vocab (no LM head) to 0. */
static void test_transformer_block(void **state)
{
    cp_model *m = NULL;
    cp_err e;
    (void)state;
    assert_int_equal(load("{\"name\":\"x\",\"dtype\":\"fp32\",\"tensors\":["
                          "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},"
                          "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":4,\"ffn\":32,"
                          "\"seq\":4}}",
                          &m, &e),
                     CP_OK);
    assert_int_equal(m->xf.layers, 2);
    assert_int_equal(m->xf.kv_heads, 4);
    assert_int_equal(m->xf.vocab, 0);
    assert_int_equal(m->xf.swiglu, 0);
    assert_near(m->xf.dropout, 0, 0);
    cp_model_free(m);
    assert_int_equal(load("{\"name\":\"x\",\"dtype\":\"bf16\",\"tensors\":["
                          "{\"name\":\"a\",\"numel\":1,\"layer\":0}],\"compute\":{\"batch\":2},"
                          "\"transformer\":{\"layers\":2,\"hidden\":8,\"heads\":4,\"kv_heads\":2,"
                          "\"ffn\":32,\"seq\":4,\"vocab\":10,\"mlp\":\"swiglu\",\"dropout\":0.1}}",
                          &m, &e),
                     CP_OK);
    assert_int_equal(m->xf.kv_heads, 2);
    assert_int_equal(m->xf.vocab, 10);
    assert_int_equal(m->xf.swiglu, 1);
    assert_near(m->xf.dropout, 0.1, 0);
    cp_model_free(m);
}

/* A model of one tensor whose transformer block is `block`, on line 2. */
static int load_block(const char *block, cp_model **m, cp_err *e)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"x\",\"dtype\":\"bf16\",\"tensors\":[{\"name\":\"a\",\"numel\":1,"
             "\"layer\":0}],\n\"transformer\":%s}", block);
    return load(text, m, e);
}

/* `block` is refused on line 2 with `needle` in the message. */
static void block_refused(const char *block, const char *needle)
{
    cp_model *m = NULL;
    cp_err e;
    assert_int_equal(load_block(block, &m, &e), CP_EINPUT);
    assert_null(m);
    if (!strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s'", e.msg, needle);
    assert_int_equal(e.line, 2);
}

#define DENSE "\"layers\":4,\"hidden\":64,\"heads\":8,\"ffn\":128,\"seq\":16"

/* Defaults that keep the older files meaning what they meant: a GELU block
 * is GPT-2's (LayerNorm, biases everywhere), positions learned when the
 * table's rows are given and rotary otherwise; a gated block has RMSNorm
 * and no biases; compute.batch is not needed. */
static void test_transformer_defaults(void **state)
{
    cp_model *m = NULL;
    cp_err e;
    (void)state;
    assert_int_equal(load_block("{" DENSE "}", &m, &e), CP_OK);
    assert_int_equal(m->xf.mlp, CP_MLP_GELU);
    assert_int_equal(m->xf.norm, CP_NORM_LAYER);
    assert_int_equal(m->xf.pos, CP_POS_ROPE);
    assert_int_equal(m->xf.qkv_bias + m->xf.o_bias + m->xf.mlp_bias, 3);
    assert_int_equal(m->xf.head_dim, 0);
    assert_int_equal(cp_xf_head_dim(&m->xf), 8); /* 64 / 8 */
    assert_int_equal(m->xf.window_every, 1);
    assert_int_equal(m->xf.moe.experts, 0);
    assert_int_equal(m->batch, 0);
    cp_model_free(m);
    assert_int_equal(load_block("{" DENSE ",\"max_positions\":32}", &m, &e), CP_OK);
    assert_int_equal(m->xf.pos, CP_POS_LEARNED);
    assert_int_equal(m->xf.max_pos, 32);
    cp_model_free(m);
    assert_int_equal(load_block("{" DENSE ",\"mlp\":\"geglu\"}", &m, &e), CP_OK);
    assert_int_equal(m->xf.norm, CP_NORM_RMS);
    assert_int_equal(m->xf.qkv_bias + m->xf.o_bias + m->xf.mlp_bias, 0);
    assert_int_equal(m->xf.swiglu, 1); /* gated */
    cp_model_free(m);
    assert_int_equal(load_block("{" DENSE ",\"mlp\":\"relu2\"}", &m, &e), CP_OK);
    assert_int_equal(m->xf.norm, CP_NORM_LAYER);
    assert_int_equal(m->xf.swiglu, 0);
    assert_int_equal(m->xf.mlp_bias, 0);
    cp_model_free(m);
}

/* Every field as written, and the parameters the block implies:
 * a MoE block with shared experts, first dense blocks and latent attention,
 * counted by hand. */
static void test_transformer_full(void **state)
{
    cp_model *m = NULL;
    cp_err e;
    int64_t total, active, attn, moe, dense;
    (void)state;
    assert_int_equal(
        load_block("{\"layers\":4,\"hidden\":64,\"heads\":4,\"ffn\":128,\"seq\":16,"
                   "\"vocab\":100,\"mlp\":\"swiglu\",\"norm\":\"rmsnorm\",\"position\":\"rope\","
                   "\"tied\":false,\"qkv_bias\":false,\"o_bias\":false,\"mlp_bias\":false,"
                   "\"qk_norm\":false,\"attn_sinks\":true,\"dropout\":0,"
                   "\"sliding_window\":{\"window\":8,\"every\":2},"
                   "\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,\"shared_experts\":1,"
                   "\"shared_ffn\":32,\"shared_gate\":true,\"dense_layers\":1,\"dense_ffn\":96,"
                   "\"every\":1,\"router\":\"sigmoid\",\"router_bias\":true,"
                   "\"expert_bias\":false},"
                   "\"mla\":{\"q_lora_rank\":16,\"kv_lora_rank\":8,\"qk_nope_dim\":8,"
                   "\"qk_rope_dim\":4,\"v_head_dim\":8}}",
                   &m, &e),
        CP_OK);
    assert_int_equal(m->xf.head_dim, 12); /* qk_nope_dim + qk_rope_dim */
    assert_int_equal(m->xf.window, 8);
    assert_int_equal(m->xf.window_every, 2);
    assert_int_equal(m->xf.moe.router_sigmoid, 1);
    assert_int_equal(m->xf.moe.dense_ffn, 96);
    assert_int_equal(cp_xf_moe_block(&m->xf, 0), 0);
    assert_int_equal(cp_xf_moe_block(&m->xf, 1), 1);
    /* latent attention, h 64, 4 heads: q_a 64 x 16, its norm 16, q_b 16 x 4
     * x 12; kv_a 64 x (8 + 4), its norm 8; kv_b 8 x 4 x (8 + 8); o 4 x 8 x
     * 64; sinks 4 */
    attn = 64 * 16 + 16 + 16 * 4 * 12 + 64 * 12 + 8 + 8 * 4 * 16 + 4 * 8 * 64 + 4;
    /* a MoE block: 8 experts of 3 x 64 x 32, router 8 x 64 + 8 biases, the
     * shared expert 3 x 64 x 32 and its gate 64, norms 2 x 64 */
    moe = attn + 8 * 3 * 64 * 32 + 8 * 64 + 8 + 3 * 64 * 32 + 64 + 2 * 64;
    dense = attn + 3 * 64 * 96 + 2 * 64; /* block 0: dense_ffn 96 */
    cp_xf_params(&m->xf, &total, &active);
    /* embedding and untied head 2 x 100 x 64, final norm 64 */
    assert_int_equal(total, 2 * 100 * 64 + 64 + dense + 3 * moe);
    assert_int_equal(active, total - 3 * 6 * 3 * 64 * 32); /* 2 of 8 experts */
    cp_model_free(m);
}

/* Each cross-field rule, refused at line 2 naming the numbers. */
static void test_transformer_rejections(void **state)
{
    (void)state;
    block_refused("{" DENSE ",\"kv_heads\":3}", "3 key/value heads do not divide 8 heads");
    block_refused("{\"layers\":4,\"hidden\":60,\"heads\":8,\"ffn\":128,\"seq\":16}",
                  "8 heads do not divide hidden 60: give head_dim");
    block_refused("{" DENSE ",\"position\":\"learned\"}", "learned positions need max_positions");
    block_refused("{" DENSE ",\"position\":\"rope\",\"max_positions\":32}",
                  "position \"rope\" has none");
    block_refused("{" DENSE ",\"max_positions\":8}", "sequence 16 is longer than the 8 learned");
    block_refused("{" DENSE ",\"tied\":true}", "no LM head to tie");
    block_refused("{" DENSE ",\"qk_norm\":1}", "expected true or false, got 1");
    block_refused("{" DENSE ",\"norm\":\"batchnorm\"}", "unknown value \"batchnorm\"");
    block_refused("{" DENSE ",\"sliding_window\":{\"window\":8,\"every\":5}}",
                  "from 1 to 4, got 5");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":9,\"ffn\":32}}",
                  "the expert fields disagree: top_k 9 is more than the 8 experts");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,\"shared_ffn\":32}}",
                  "shared_ffn 32 without shared experts");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,"
                  "\"shared_experts\":2}}", "2 shared experts need shared_ffn");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,"
                  "\"shared_gate\":true}}", "a shared_gate without shared experts");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,"
                  "\"dense_layers\":4}}", "4 dense layers leave no block of the 4");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,\"dense_ffn\":64}}",
                  "dense_ffn 64 without dense_layers");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,"
                  "\"dense_layers\":2,\"every\":3}}", "every 3 blocks after 2 dense ones");
    block_refused("{" DENSE ",\"moe\":{\"experts\":8,\"top_k\":2,\"ffn\":32,"
                  "\"router\":\"topk\"}}", "unknown value \"topk\"");
    block_refused("{" DENSE ",\"mla\":{\"kv_lora_rank\":8,\"qk_nope_dim\":8,"
                  "\"qk_rope_dim\":4}}", "missing required key \"v_head_dim\"");
    block_refused("{" DENSE ",\"mla\":{\"kv_lora_rank\":8,\"qk_nope_dim\":0,"
                  "\"qk_rope_dim\":4,\"v_head_dim\":8}}", "got 0");
    block_refused("{" DENSE ",\"kv_heads\":2,\"mla\":{\"kv_lora_rank\":8,\"qk_nope_dim\":8,"
                  "\"qk_rope_dim\":4,\"v_head_dim\":8}}", "2 key/value heads with latent");
    block_refused("{" DENSE ",\"head_dim\":16,\"mla\":{\"kv_lora_rank\":8,\"qk_nope_dim\":8,"
                  "\"qk_rope_dim\":4,\"v_head_dim\":8}}",
                  "head_dim 16 is not qk_nope_dim + qk_rope_dim = 12");
    /* 2^20 hidden x 2^24 FFN x 3 x 100,000 blocks: about 5e18 parameters */
    block_refused("{\"layers\":100000,\"hidden\":1048576,\"heads\":8,\"ffn\":16777216,"
                  "\"seq\":16}", "over the sanity limit of 2^50");
}

/* Published totals (torchvision weights meta, Hugging Face model cards):
 * the six numbers issue 2 lists. */
static void test_shipped_model_totals(void **state)
{
    static const struct {
        const char *file;
        int64_t params;
        int tensors;
    } want[] = {
        {"models/resnet50.json", 25557032, 161},   {"models/vgg16.json", 138357544, 32},
        {"models/bert-base.json", 109482240, 199}, {"models/bert-large.json", 335141888, 391},
        {"models/gpt2.json", 124439808, 148},      {"models/gpt2-medium.json", 354823168, 292},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        cp_model *m;
        cp_err e;
        int rc = cp_model_load(want[i].file, &m, &e);
        if (rc)
            fail_msg("%s: %s", want[i].file, e.msg);
        assert_int_equal(m->params, want[i].params);
        assert_int_equal(m->ntensors, want[i].tensors);
        assert_int_equal(cp_model_grad_bytes(m), want[i].params * 4);
        if (m->xf.vocab > 0) { /* GPT-2: the block describes the same model */
            int64_t total;
            cp_xf_params(&m->xf, &total, NULL);
            assert_int_equal(total, want[i].params);
        }
        cp_model_free(m);
    }
}

/* Every tensor of a shipped model equals the CSV row it came from. */
static void compare_with_csv(const char *json, const char *csv)
{
    cp_model *m;
    cp_err e;
    char line[512];
    int i = 0;
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    assert_int_equal(cp_model_load(json, &m, &e), CP_OK);
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char name[256], shape[128];
        long long numel;
        int idx;
        if (sscanf(line, "%d,%255[^,],%127[^,],%lld", &idx, name, shape, &numel) != 4)
            fail_msg("%s: cannot parse '%s'", csv, line);
        assert_true(i < m->ntensors);
        assert_string_equal(m->tensors[i].name, name);
        assert_int_equal(m->tensors[i].numel, numel);
        i++;
    }
    assert_int_equal(i, m->ntensors);
    fclose(f);
    cp_model_free(m);
}

static void test_shipped_models_match_csv(void **state)
{
    (void)state;
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): CSV comparison not run\n");
        skip();
        return;
    }
    compare_with_csv("models/resnet50.json", SHARED_DATA "/models/resnet50_torchvision.csv");
    compare_with_csv("models/vgg16.json", SHARED_DATA "/models/vgg16_torchvision.csv");
    compare_with_csv("models/bert-base.json",
                     SHARED_DATA "/models/bert-base-uncased_BertModel.csv");
    compare_with_csv("models/bert-large.json",
                     SHARED_DATA "/models/bert-large-uncased_BertModel.csv");
    compare_with_csv("models/gpt2.json", SHARED_DATA "/models/gpt2_124M_GPT2LMHeadModel.csv");
    compare_with_csv("models/gpt2-medium.json",
                     SHARED_DATA "/models/gpt2-medium_345M_GPT2LMHeadModel.csv");
}

static void test_repeat(void **state)
{
    cp_model *m, *r;
    cp_err e;
    (void)state;
    assert_int_equal(cp_model_load("models/gpt2.json", &m, &e), CP_OK);
    r = cp_model_repeat(m, 100);
    assert_non_null(r);
    /* 148 tensors x 100 = 14,800 (the scaling case) */
    assert_int_equal(r->ntensors, 14800);
    assert_int_equal(r->params, (int64_t)124439808 * 100);
    assert_string_equal(r->tensors[148].name, "transformer.wte.weight#1");
    cp_model_free(r);
    cp_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_implicit_layers_and_fp16),
        cmocka_unit_test(test_per_layer_times),
        cmocka_unit_test(test_rejections), cmocka_unit_test(test_transformer_block),
        cmocka_unit_test(test_transformer_defaults), cmocka_unit_test(test_transformer_full),
        cmocka_unit_test(test_transformer_rejections),
        cmocka_unit_test(test_shipped_model_totals),
        cmocka_unit_test(test_shipped_models_match_csv),
        cmocka_unit_test(test_repeat),
    };
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
