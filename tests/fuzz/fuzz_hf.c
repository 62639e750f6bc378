/*
 * fuzz_hf.c - libFuzzer target: Hugging Face config.json
 * (cp_import_hf_config), as `coarse-plan import hf-config` reads it.
 *
 * The importer bounds every dimension so that what it converts is a model
 * the loader accepts (docs/import.md); this target holds it to that: a
 * conversion that succeeds must load, with the model invariants of
 * fuzz_model.c that an importer can break (positive element counts under
 * the limit, layers that exist, finite FLOPs, parameter sums), and every
 * tensor name unique (the loader checks that too), and for a decoder LM
 * the parameters its transformer block implies equal the tensors' sum.  Each input is tried
 * with the defaults and with --seq-len 1, so that the capped and the
 * shortest sequence both run.
 */
#include <jansson.h>
#include <math.h>

#include "fuzz.h"
#include "import/hf_config.h"
#include "load/load.h"

/* The published MoE configs among the seeds (DeepSeek-V3: 45,395 tensors)
 * take seconds each under the sanitizers; above this many tensors a config
 * is refused by the reading code (which is what runs on every input)
 * instead of converted, so the fuzzer keeps its pace.  Mutations that shrink
 * the experts or blocks still convert. */
#define FUZZ_MAX_TENSORS 4096

static void check_model(const cp_model *m)
{
    int64_t sum = 0;
    int i;
    FUZZ_REQUIRE(m->ntensors >= 1 && m->nlayers >= 2);
    for (i = 0; i < m->ntensors; i++) {
        const cp_tensor *t = &m->tensors[i];
        FUZZ_REQUIRE(t->numel >= 1 && t->numel <= CP_MAX_NUMEL);
        FUZZ_REQUIRE(t->layer >= 0 && t->layer < m->nlayers);
        FUZZ_REQUIRE(i == 0 || t->layer >= m->tensors[i - 1].layer);
        sum += t->numel;
    }
    for (i = 0; i < m->nlayers; i++)
        FUZZ_REQUIRE(m->layers[i].flops >= 0 && isfinite(m->layers[i].flops));
    FUZZ_REQUIRE(sum == m->params && m->batch == 1);
    /* a decoder LM (not BERT, whose block does not describe its token types,
     * pooler and masked-LM head): the block counts the same parameters */
    if (m->xf.vocab > 0 && !strstr(m->tensors[0].name, "word_embeddings")) {
        int64_t total, active;
        cp_xf_params(&m->xf, &total, &active);
        FUZZ_REQUIRE(total == m->params && active <= total && active > 0);
    }
}

static void run(const char *text, size_t size, int64_t seq_len)
{
    cp_hf_opts o;
    json_t *root = NULL;
    char *json;
    cp_jdoc d;
    cp_model *m = NULL;
    cp_err e;
    int rc;

    cp_hf_opts_default(&o);
    o.seq_len = seq_len;
    o.max_tensors = FUZZ_MAX_TENSORS;
    cp_err_clear(&e);
    rc = cp_import_hf_config("fuzz-config.json", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    if (!root)
        return;
    json = json_dumps(root, JSON_REAL_PRECISION(12));
    FUZZ_REQUIRE(json != NULL);
    json_decref(root);
    cp_err_clear(&e);
    FUZZ_REQUIRE(cp_jdoc_load_text(&d, "fuzz-import.json", json, strlen(json), &e) == CP_OK);
    rc = cp_model_load_doc(&d, &m, &e);
    if (rc != CP_OK)
        fprintf(stderr, "the converted model does not load: %s: %s\n", e.where, e.msg);
    FUZZ_REQUIRE(rc == CP_OK); /* what converts, loads */
    check_model(m);
    cp_model_free(m);
    cp_jdoc_free(&d);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    run(text, size, 0);
    run(text, size, 1);
    free(text);
    return 0;
}
