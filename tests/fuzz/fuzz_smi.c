/*
 * fuzz_smi.c - libFuzzer target: `nvidia-smi topo -m` matrices
 * (cp_import_smi_topo), as `coarse-plan import smi-topo` reads them.
 *
 * The first input byte picks the options, so that both the error for NV
 * cells without a rate and the conversions with one are reached: bit 0
 * gives --gpu (v100, or h100 when bit 1 is set too: 6 or 18 NVLinks per
 * GPU, so the NVSwitch rule fires at different counts); the rest of the
 * input is the matrix.  What converts goes through the topology loader as
 * `import` does, and must keep the link invariants an importer can break
 * (fuzz_ncclxml.c has the same check): links between distinct existing
 * nodes, rates and latencies in range, every GPU reaching every other.
 */
#include <jansson.h>
#include <math.h>

#include "fuzz.h"
#include "import/smi_topo.h"
#include "load/load.h"

static void check_import(const cp_topo *t)
{
    int i;
    FUZZ_REQUIRE(t->ngpus >= 1 && cp_topo_unreachable_gpu(t) == -1);
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        FUZZ_REQUIRE(l->a != l->b && l->a >= 0 && l->b >= 0);
        FUZZ_REQUIRE(l->a < t->nnodes && l->b < t->nnodes);
        FUZZ_REQUIRE(l->gbs[0] > 0 && l->gbs[1] > 0 && isfinite(l->gbs[0]));
        FUZZ_REQUIRE(l->lat_us > 0 && isfinite(l->lat_us));
    }
}

/* The converted JSON through the loader; the loader may refuse it (import
 * says "not usable", exit 2) but the JSON itself is always well formed. */
static void load_import(json_t *root)
{
    char *json = json_dumps(root, JSON_REAL_PRECISION(12));
    cp_jdoc d;
    cp_topo *t = NULL;
    cp_err e;
    int rc;
    FUZZ_REQUIRE(json != NULL);
    cp_err_clear(&e);
    rc = cp_jdoc_load_text(&d, "fuzz-import.json", json, strlen(json), &e);
    FUZZ_REQUIRE(rc == CP_OK);
    rc = cp_topo_load_doc(&d, &t, &e);
    fuzz_check_status(rc, &e);
    if (t) {
        check_import(t);
        cp_topo_free(t);
    }
    cp_jdoc_free(&d);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_smi_opts o;
    json_t *root = NULL;
    char *text;
    cp_err e;
    int rc;

    if (size == 0)
        return 0;
    cp_smi_opts_default(&o);
    if (data[0] & 1)
        o.gpu = data[0] & 2 ? "h100" : "v100";
    data++;
    size--;
    /* the importer takes NUL-terminated text, as cp_read_file gives it */
    text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    cp_err_clear(&e);
    rc = cp_import_smi_topo("fuzz-topo.txt", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    free(text);
    if (root) {
        load_import(root);
        json_decref(root);
    }
    return 0;
}
