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
 * (fuzz_import.h).
 */
#include "fuzz_import.h"
#include "import/smi_topo.h"

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
    text = fuzz_text(data, size);
    cp_err_clear(&e);
    rc = cp_import_smi_topo("fuzz-topo.txt", text, size, &o, &root, &e);
    FUZZ_REQUIRE((rc == CP_OK) == (root != NULL));
    fuzz_check_status(rc, &e);
    free(text);
    if (root) {
        fuzz_load_import(root);
        json_decref(root);
    }
    return 0;
}
