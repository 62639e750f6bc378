/*
 * smi_topo.c - `nvidia-smi topo -m` matrices to coarse-plan JSON (see
 * smi_topo.h; the mapping and every assumption: docs/import.md): the --gpu
 * table, the options, and the driver that runs the stages in order.
 *
 * Stages, one file each (smi_internal.h):
 *   1. reading (smi_read.c): find the header row (GPU0 followed by the other devices,
 *      anywhere in the file), then one row per device; cells are separated
 *      by tabs or spaces; every cell keeps its line and column;
 *   2. checking the cells (smi_read.c): X on the diagonal only, symmetry, NVLink only
 *      between GPUs, an NVLink rate when NV cells exist;
 *   3. sockets (smi_tree.c): the NUMA/CPU affinity column when it agrees with the cells,
 *      else the cells (PIX/PXB/PHB/NODE: same socket, SYS: different ones,
 *      NV: unknown, placed first-fit);
 *   4. the PCIe tree (smi_tree.c): PIX groups under one switch, PXB groups under a
 *      common upstream switch, everything else on its socket's CPU; then
 *      every cell is checked against the tree, so a matrix no tree explains
 *      is refused at the first cell that disagrees;
 *   5. NVLinks (smi_write.c): one link per NV cell, or one nvswitch node when a GPU shows
 *      more NVLinks than its generation has (NVSwitch systems print NV#
 *      between every pair);
 *   6. writing the nodes and links (smi_write.c).
 * Cost: O(n^2) time and memory in the n devices (at most MAX_DEV).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "import/gpu_memory.h"
#include "import/smi_internal.h"
#include "import/smi_topo.h"

/* What --gpu means: NVLink per link per direction (nominal, the README's
 * bus table: P100 20, V100 25, A100 and H100 25), NVLinks per GPU (P100 4,
 * V100 6, A100 12, H100 18: NVIDIA's specifications), the x16 host link as
 * NCCL computes it (Gen3 12, Gen4 24, Gen5 48), and the SXM and PCIe parts
 * with their peak dense FP32, FP16/BF16 and FP8 TFLOP/s (FP8 on Hopper
 * only: H100 SXM5 1,979, PCIe 1,513) and device-memory GB/s (datasheets;
 * the figures of nccl_topo.c's table; A100 as the 40 GB part), and their
 * SMs (P100 56, V100 80, A100 108, H100 SXM5 132, PCIe 114: architecture
 * whitepapers). */
static const struct smi_gen gens[] = {
    {"p100", "P100", 20, 4, 12, "Gen3 x16", "P100-SXM2", "P100-PCIE", 10.6, 9.3, 732, 732, 21.2,
     18.7, 0, 0, 56, 56},
    {"v100", "V100", 25, 6, 12, "Gen3 x16", "V100-SXM2", "V100-PCIE", 15.7, 14.0, 900, 900, 125,
     112, 0, 0, 80, 80},
    {"a100", "A100", 25, 12, 24, "Gen4 x16", "A100-SXM4", "A100-PCIE", 19.5, 19.5, 1555, 1555,
     312, 312, 0, 0, 108, 108},
    {"h100", "H100", 25, 18, 48, "Gen5 x16", "H100-SXM5", "H100-PCIE", 67.0, 51.0, 3350, 2000,
     989, 756, 1979, 1513, 132, 114},
};

/* ------------------------------------------------------------------------ */
/* Driver                                                                    */

void cp_smi_opts_default(cp_smi_opts *o)
{
    cp_import_opts_default(&o->base);
    o->gpu = NULL;
    o->nvlink_gbs = 0;
    o->pcie_gbs = 0;
}

static const struct smi_gen *find_gen(const char *gpu)
{
    size_t k;
    for (k = 0; gpu && k < sizeof gens / sizeof gens[0]; k++)
        if (strcmp(gpu, gens[k].name) == 0)
            return &gens[k];
    return NULL;
}

int cp_smi_gpu_known(const char *gpu)
{
    return find_gen(gpu) != NULL;
}

/* Stages 2 to 6, once the matrix is read. */
static int convert(smi *m)
{
    int rc;
    if ((rc = smi_check_cells(m)) || (rc = smi_sockets(m)))
        return rc;
    smi_pcie_groups(m);
    if ((rc = smi_check_tree(m)))
        return rc;
    return smi_write(m);
}

static json_t *result(const smi *m)
{
    json_t *t = json_object();
    char name[256], full[2600];
    if (!t)
        return NULL;
    if (m->o->base.name)
        snprintf(name, sizeof name, "%s", m->o->base.name);
    else
        cp_base_name(m->path, 1, name, sizeof name);
    snprintf(full, sizeof full, "imported from %s by coarse-plan import smi-topo (docs/"
             "import.md). Assumed: %s", m->path, m->notes);
    json_object_set_new(t, "name", json_string(name));
    json_object_set_new(t, "note", json_string(full));
    json_object_set_new(t, "nodes", json_incref(m->nodes));
    json_object_set_new(t, "links", json_incref(m->links));
    return t;
}

int cp_import_smi_topo(const char *path, const char *text, size_t len,
                       const cp_smi_opts *o, json_t **out, cp_err *e)
{
    smi m;
    int rc;
    *out = NULL;
    memset(&m, 0, sizeof m);
    m.path = path;
    m.text = text;
    m.len = len;
    m.o = o;
    m.e = e;
    if (o->gpu && !(m.gen = find_gen(o->gpu)))
        return cp_fail(e, CP_EINPUT, "--gpu: expected p100, v100, a100 or h100, got '%s'", o->gpu);
    m.nv_gbs = o->nvlink_gbs > 0 ? o->nvlink_gbs : m.gen ? m.gen->nvlink_gbs : 0;
    m.capacity_gb = cp_gpu_memory_gb(o->base.gpu_memory_gb, NULL, m.gen ? m.gen->label : NULL,
                                     &m.capacity_source); /* the generation's default part */
    m.pcie_gbs = o->pcie_gbs > 0 ? o->pcie_gbs : m.gen ? m.gen->pcie_gbs : PCIE_GEN3_GBS;
    m.tok = malloc(TOK_CAP * sizeof *m.tok);
    m.dev = calloc(MAX_DEV, sizeof *m.dev);
    if (!m.tok || !m.dev)
        rc = smi_oom(&m);
    else
        rc = smi_read_matrix(&m);
    if (rc == CP_OK) {
        m.sock = calloc((size_t)m.ndev, sizeof *m.sock);
        m.pix = calloc((size_t)m.ndev, sizeof *m.pix);
        m.pxb = calloc((size_t)m.ndev, sizeof *m.pxb);
        rc = m.sock && m.pix && m.pxb ? convert(&m) : smi_oom(&m);
    }
    if (rc == CP_OK && !(*out = result(&m)))
        rc = smi_oom(&m);
    json_decref(m.nodes);
    json_decref(m.links);
    free(m.tok);
    free(m.dev);
    free(m.cell);
    free(m.sock);
    free(m.pix);
    free(m.pxb);
    return rc;
}
