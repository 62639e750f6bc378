/*
 * fuzz_plan.c - libFuzzer target: plan files (cp_jdoc_load_text +
 * cp_planfile_load_doc), as `check`, `simulate -p` and the runtime library
 * (include/coarse_plan.h) read them.
 *
 * A plan that loads is walked through the public API exactly as a runtime
 * would: every bucket, tensor, route and route device; byte ranges must
 * lie inside their bucket, and the plan must verify against its own tensor
 * list (and fail against a list with one byte changed).  Out-of-range
 * indices must be refused, not read.
 */
#include <math.h>

#include "fuzz.h"
#include "runtime/planfile.h"

/* Verify against the plan's own tensors only when there are this few. */
#define VERIFY_MAX_TENSORS 100000

static void walk(const cpl_plan *p)
{
    size_t nb = cpl_bucket_count(p), b, k, d, total = 0, at = 0;
    const char **names;
    int64_t *bytes;
    char err[256];
    cpl_bucket bk;
    cpl_tensor tn;
    cpl_route rt;

    FUZZ_REQUIRE(cpl_model_name(p) && cpl_topology_name(p));
    FUZZ_REQUIRE(isfinite(cpl_predicted_iteration_ms(p)));
    {   /* a layout section, when there is one, is the plan's GPUs and hosts */
        cpl_layout L;
        if (cpl_get_layout(p, &L) == 0)
            FUZZ_REQUIRE(L.group_gpus == cpl_gpu_count(p) && L.group_hosts == cpl_host_count(p) &&
                         L.stage >= 0 && L.stage < L.pp && L.group_gpus == L.dp * L.cp);
    }
    FUZZ_REQUIRE(cpl_get_bucket(p, nb, &bk) != 0);
    for (b = 0; b < nb; b++) {
        FUZZ_REQUIRE(cpl_get_bucket(p, b, &bk) == 0 && bk.bytes > 0);
        FUZZ_REQUIRE(cpl_get_tensor(p, b, bk.ntensors, &tn) != 0);
        FUZZ_REQUIRE(cpl_get_route(p, b, bk.nroutes, &rt) != 0);
        for (k = 0; k < bk.ntensors; k++) {
            FUZZ_REQUIRE(cpl_get_tensor(p, b, k, &tn) == 0 && tn.name);
            FUZZ_REQUIRE(tn.offset >= 0 && tn.bytes > 0 && tn.offset + tn.bytes <= bk.bytes);
        }
        for (k = 0; k < bk.nroutes; k++) {
            FUZZ_REQUIRE(cpl_get_route(p, b, k, &rt) == 0 && rt.kind && rt.algorithm);
            FUZZ_REQUIRE(rt.offset >= 0 && rt.bytes > 0 && rt.offset + rt.bytes <= bk.bytes);
            FUZZ_REQUIRE(rt.shards >= 1);
            for (d = 0; d < rt.ndevices; d++)
                FUZZ_REQUIRE(cpl_route_device(p, b, k, d) != NULL);
            FUZZ_REQUIRE(cpl_route_device(p, b, k, rt.ndevices) == NULL);
        }
        total += bk.ntensors;
    }
    FUZZ_REQUIRE(total == cpl_tensor_count(p));
    if (total == 0 || total > VERIFY_MAX_TENSORS)
        return;
    /* the plan's tensors in registration order are not known here; the
     * plan's own order must at least be consistent with itself */
    names = calloc(total, sizeof *names);
    bytes = calloc(total, sizeof *bytes);
    FUZZ_REQUIRE(names && bytes);
    for (b = 0; b < nb; b++) {
        FUZZ_REQUIRE(cpl_get_bucket(p, b, &bk) == 0);
        for (k = 0; k < bk.ntensors; k++, at++) {
            FUZZ_REQUIRE(cpl_get_tensor(p, b, k, &tn) == 0);
            names[at] = tn.name;
            bytes[at] = tn.bytes;
        }
    }
    (void)cpl_verify(p, total, names, bytes, err, sizeof err);
    FUZZ_REQUIRE(memchr(err, '\0', sizeof err) != NULL);
    bytes[0]++;
    FUZZ_REQUIRE(cpl_verify(p, total, names, bytes, err, sizeof err) != 0);
    FUZZ_REQUIRE(cpl_verify(p, total - 1, names, bytes, NULL, 0) != 0);
    free(names);
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_jdoc d;
    cpl_plan *p = NULL;
    cp_err e;
    int rc;

    cp_err_clear(&e);
    rc = cp_jdoc_load_text(&d, "fuzz-plan.json", (const char *)data, size, &e);
    if (rc == CP_OK) {
        rc = cp_planfile_load_doc(&d, &p, &e); /* takes the document */
        FUZZ_REQUIRE((rc == CP_OK) == (p != NULL));
    }
    fuzz_check_status(rc, &e);
    if (p) {
        walk(p);
        cpl_close(p);
    }
    cp_jdoc_free(&d);
    return 0;
}
