/*
 * fuzz_import.h - what the importer targets (fuzz_ncclxml.c, fuzz_smi.c)
 * share: the converted JSON goes through the topology loader as `coarse-plan
 * import` sends it, and what loads must keep the link invariants an
 * importer can break (fuzz_topo.c has the full list): links between
 * distinct existing nodes, rates and latencies in range, every GPU reaching
 * every other.  Header-only, as fuzz.h.
 */
#ifndef CP_FUZZ_IMPORT_H
#define CP_FUZZ_IMPORT_H

#include <jansson.h>
#include <math.h>

#include "fuzz.h"
#include "load/load.h"

static inline void fuzz_check_import(const cp_topo *t)
{
    int i, peer, via;
    FUZZ_REQUIRE(t->ngpus >= 1 && cp_topo_unreachable_gpu(t, &peer, &via) == -1);
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        FUZZ_REQUIRE(l->a != l->b && l->a >= 0 && l->b >= 0);
        FUZZ_REQUIRE(l->a < t->nnodes && l->b < t->nnodes);
        FUZZ_REQUIRE(l->gbs[0] > 0 && l->gbs[1] > 0 && isfinite(l->gbs[0]));
        FUZZ_REQUIRE(l->lat_us > 0 && isfinite(l->lat_us));
    }
}

/* The converted JSON (borrowed) through the loader; the loader may refuse
 * it (import says "not usable", exit 2) but the JSON itself is always well
 * formed. */
static inline void fuzz_load_import(const json_t *root)
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
        fuzz_check_import(t);
        cp_topo_free(t);
    }
    cp_jdoc_free(&d);
    free(json);
}

#endif
