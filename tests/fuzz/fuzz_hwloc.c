/*
 * fuzz_hwloc.c - libFuzzer target: hwloc XML (cp_import_hwloc), as
 * `coarse-plan import hwloc FILE.xml` reads it: expat first (positions,
 * the <topology> root), then libhwloc through hwloc_topology_set_xmlbuffer
 * and the importer's walk of hwloc's objects (src/import/hwloc*.c).
 *
 * The input's length picks the options, so that both the error for an
 * NVSwitch fabric without a rate and the conversions with one are reached:
 * odd lengths give --gpu a100, and lengths with bit 1 set refuse a machine
 * without GPUs as the command does (need_gpu).  What converts goes through
 * the topology loader as `import` does (fuzz_import.h); a conversion without
 * GPUs (need_gpu unset), which the loader refuses, must say so in its note.
 */
#include "fuzz_import.h"
#include "import/hwloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_hwloc_opts o;
    json_t *root = NULL;
    char *text;
    cp_err e;
    int rc;

    cp_hwloc_opts_default(&o);
    if (size & 1)
        o.gpu = "a100";
    o.need_gpu = (size & 2) != 0;
    text = fuzz_text(data, size);
    cp_err_clear(&e);
    rc = cp_import_hwloc("fuzz-topo.xml", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    free(text);
    if (!root)
        return 0;
    if (cp_hwloc_count_gpus(root) == 0)
        FUZZ_REQUIRE(!o.need_gpu && strstr(json_string_value(json_object_get(root, "note")),
                            "no GPUs were found") != NULL);
    else
        fuzz_load_import(root);
    json_decref(root);
    return 0;
}
