/*
 * fuzz_model.c - libFuzzer target: model JSON (cp_jdoc_load_text +
 * cp_model_load_doc), as `check` and `info -m` read it.
 *
 * After a successful load the model's invariants are checked (every tensor
 * has a positive element count under the limit and a layer that exists,
 * the derived parameter totals add up, timings are all-or-nothing), the
 * `info -m` printers run into /dev/null, and a small model is repeated
 * three times as the scaling benchmark does.
 */
#include <jansson.h>
#include <math.h>

#include "cli/summary.h"
#include "fuzz.h"
#include "load/load.h"
#include "predict/memory.h"

/* Repeat only models this small: the copy is the point, not its size. */
#define REPEAT_MAX_TENSORS 2000

static void check_model(const cp_model *m)
{
    int64_t sum = 0, layer_sum = 0;
    int i, timed = 0;
    FUZZ_REQUIRE(m->name && m->ntensors >= 1 && m->ntensors <= CP_MAX_TENSORS);
    FUZZ_REQUIRE(m->nlayers >= 1 && m->nlayers <= CP_MAX_TENSORS);
    for (i = 0; i < m->ntensors; i++) {
        const cp_tensor *t = &m->tensors[i];
        FUZZ_REQUIRE(t->name && t->name[0]);
        FUZZ_REQUIRE(t->numel >= 1 && t->numel <= CP_MAX_NUMEL);
        FUZZ_REQUIRE(t->layer >= 0 && t->layer < m->nlayers);
        FUZZ_REQUIRE(t->ndim >= 0 && t->ndim <= CP_MAX_DIMS);
        sum += t->numel;
    }
    for (i = 0; i < m->nlayers; i++) {
        const cp_layer *l = &m->layers[i];
        FUZZ_REQUIRE(l->name != NULL);
        FUZZ_REQUIRE(l->flops >= 0 && isfinite(l->flops));
        FUZZ_REQUIRE(isfinite(l->fwd_ms) && isfinite(l->bwd_ms));
        layer_sum += l->params;
        if (l->fwd_ms > 0) {
            FUZZ_REQUIRE(l->bwd_ms > 0);
            timed++;
        }
    }
    FUZZ_REQUIRE(timed == 0 || timed == m->nlayers);
    FUZZ_REQUIRE(sum == m->params && layer_sum == m->params);
    FUZZ_REQUIRE(cp_model_grad_bytes(m) == m->params * cp_dtype_bytes(m->dtype));
    FUZZ_REQUIRE(m->iteration_ms >= 0 && m->optimizer_ms >= 0 && m->bwd_fwd_ratio > 0);
    FUZZ_REQUIRE(isfinite(m->iteration_ms) && isfinite(m->bwd_fwd_ratio));
    FUZZ_REQUIRE(m->iteration_ms == 0 || m->optimizer_ms < m->iteration_ms);
    if (m->xf.layers > 0) { /* eq. M2: finite, and recomputation never keeps more */
        double kept = cp_activation_bytes(m, 0, 1, 0, 0), recomputed = cp_activation_bytes(m, 0, 1, 1, 0);
        FUZZ_REQUIRE(m->batch > 0 && m->xf.heads % m->xf.kv_heads == 0);
        FUZZ_REQUIRE(isfinite(kept) && kept > 0 && recomputed > 0 && recomputed <= kept);
        FUZZ_REQUIRE(isfinite(cp_activation_bytes(m, 2, 1, 1, 1)));
    }
}

static void use_model(const cp_model *m)
{
    FILE *sink = fuzz_sink();
    char *s;
    json_t *j = cli_model_json(m);
    FUZZ_REQUIRE(j != NULL);
    s = json_dumps(j, JSON_REAL_PRECISION(12));
    FUZZ_REQUIRE(s != NULL);
    free(s);
    json_decref(j);
    cli_summary_model(m, sink);
    cli_info_model(m, sink);
    if (m->ntensors <= REPEAT_MAX_TENSORS) {
        cp_model *r = cp_model_repeat(m, 3);
        if (m->nlayers > CP_MAX_TENSORS / 3) { /* the copy would pass the limit */
            FUZZ_REQUIRE(r == NULL);
            return;
        }
        FUZZ_REQUIRE(r != NULL);
        FUZZ_REQUIRE(r->ntensors == 3 * m->ntensors && r->params == 3 * m->params);
        check_model(r);
        cp_model_free(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_jdoc d;
    cp_model *m = NULL;
    cp_err e;
    int rc;

    cp_err_clear(&e);
    rc = cp_jdoc_load_text(&d, "fuzz-model.json", (const char *)data, size, &e);
    if (rc == CP_OK) {
        (void)cp_detect_kind(&d);
        rc = cp_model_load_doc(&d, &m, &e);
        FUZZ_REQUIRE((rc == CP_OK) == (m != NULL));
    }
    fuzz_check_status(rc, &e);
    if (m) {
        check_model(m);
        use_model(m);
        cp_model_free(m);
    }
    cp_jdoc_free(&d);
    return 0;
}
