/*
 * fuzz_ncclxml.c - libFuzzer target: NCCL topology XML (cp_import_nccl_topo,
 * on top of libexpat and src/import/xml.c's handlers and error positions),
 * as `coarse-plan import` reads it.
 *
 * The importer promises a topology JSON object; `import` then validates it
 * through the topology loader, as this target does (fuzz_import.h), and
 * a conversion that loads must keep the invariants an importer can break.
 */
#include "fuzz_import.h"
#include "import/nccl_topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_import_opts o;
    json_t *root = NULL;
    char *text;
    cp_err e;
    int rc;

    text = fuzz_text(data, size);
    cp_import_opts_default(&o);
    cp_err_clear(&e);
    rc = cp_import_nccl_topo("fuzz-topo.xml", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    free(text);
    if (!root)
        return 0;
    fuzz_load_import(root);
    json_decref(root);
    return 0;
}
