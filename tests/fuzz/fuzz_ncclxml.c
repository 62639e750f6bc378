/*
 * fuzz_ncclxml.c - libFuzzer target: NCCL topology XML (cp_import_nccl_topo,
 * on top of the XML subset reader), as `coarse-plan import` reads it.
 *
 * The importer promises a topology JSON object; `import` then validates it
 * through the topology loader, as this target does.  A conversion that
 * loads must keep the topology invariants (fuzz_topo.c has the full list;
 * the ones checked here are those an importer can break: links between
 * distinct existing nodes, bandwidths and latencies in range, every GPU
 * reaching every other).
 */
#include <jansson.h>
#include <math.h>

#include "fuzz.h"
#include "import/nccl_topo.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_import_opts o;
    json_t *root = NULL;
    char *text, *json;
    cp_err e;
    int rc;

    /* the importer takes NUL-terminated text, as cp_read_file gives it */
    text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    cp_import_opts_default(&o);
    cp_err_clear(&e);
    rc = cp_import_nccl_topo("fuzz-topo.xml", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    free(text);
    if (!root)
        return 0;
    json = json_dumps(root, JSON_REAL_PRECISION(12));
    FUZZ_REQUIRE(json != NULL);
    json_decref(root);
    {
        cp_jdoc d;
        cp_topo *t = NULL;
        cp_err_clear(&e);
        rc = cp_jdoc_load_text(&d, "fuzz-import.json", json, strlen(json), &e);
        /* the importer's JSON is well formed; the loader may still refuse
         * what it says (import reports that as "not usable", exit 2) */
        FUZZ_REQUIRE(rc == CP_OK);
        rc = cp_topo_load_doc(&d, &t, &e);
        fuzz_check_status(rc, &e);
        if (t) {
            check_import(t);
            cp_topo_free(t);
        }
        cp_jdoc_free(&d);
    }
    free(json);
    return 0;
}
