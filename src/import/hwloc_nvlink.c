/*
 * hwloc_nvlink.c - the NVLinks of an hwloc topology (see hwloc.h).
 *
 * hwloc knows NVLinks only through NVML: an "NVLinkBandwidth" distances
 * matrix between GPU OS devices (and CPUs or NVSwitches they link to), in
 * MB/s.  When the file has one, each nonzero pair becomes an nvlink link.
 * Otherwise the NVSwitch PCI devices hwloc lists (DGX-2, HGX boards) say
 * that an NVSwitch fabric exists but not how it is wired: the importer
 * assumes the NVIDIA board designs (every GPU spreads its NVLinks evenly
 * over the switches of its board; two boards are joined switch to switch,
 * non-blocking) and says so in the note.  Without either, GPUs are joined
 * by PCIe only.
 */
#include <stdio.h>
#include <string.h>

#include "import/hwloc.h"
#include "import/hwloc_impl.h"

int cp_hw_add_nvswitch(cp_hw *m, hwloc_obj_t pci)
{
    if (m->nnvsw >= CP_HW_MAX)
        return cp_fail_at(m->e, CP_EINPUT, m->path, 0, 0, NULL, "more than %d NVSwitches",
                          CP_HW_MAX);
    m->nvsw[m->nnvsw] = pci;
    m->nvsw_cpu[m->nnvsw] = m->cur_cpu;
    m->nvsw_node[m->nnvsw] = 0;
    m->nnvsw++;
    return CP_OK;
}

/* The node id of NVSwitch k (of the switch standing for it: merge_boards),
 * writing its node the first time. */
static int nvswitch_id(cp_hw *m, int k, char *id, size_t size)
{
    char model[64];
    k = m->nvsw_rep[k];
    snprintf(id, size, "nvsw%d", k);
    if (m->nvsw_node[k])
        return CP_OK;
    m->nvsw_node[k] = 1;
    if (m->nvsw_boards > 1)
        snprintf(model, sizeof model, "NVSwitch x%d (one per board, trunked)", m->nvsw_boards);
    else
        snprintf(model, sizeof model, "NVSwitch");
    return cp_hw_add_node(m, id, "nvswitch", model, NULL);
}

/* The node id for an object of the NVLinkBandwidth matrix: a GPU (its OS
 * device or PCI device), an NVSwitch, or a socket; 0 when none of those. */
static int matrix_id(cp_hw *m, hwloc_obj_t obj, char *id, size_t size)
{
    int k;
    if (obj->type == HWLOC_OBJ_OS_DEVICE)
        obj = obj->parent;
    for (k = 0; k < m->ngpu; k++)
        if (m->gpu[k].obj == obj) {
            snprintf(id, size, "gpu%d", k);
            return 1;
        }
    for (k = 0; k < m->nnvsw; k++)
        if (m->nvsw[k] == obj)
            return nvswitch_id(m, k, id, size) == CP_OK;
    for (k = 0; k < m->ncpu; k++)
        if (m->cpu[k] == obj) {
            snprintf(id, size, "cpu%d", k);
            return 1;
        }
    return 0;
}

/* One nvlink link per nonzero pair of the matrix (the larger of the two
 * directions; MB/s / 1000 = GB/s per direction), once per pair of nodes. */
static int from_matrix(cp_hw *m, const struct hwloc_distances_s *d)
{
    unsigned i, j, n = d->nbobjs;
    int rc;
    cp_hw_note(m, "NVLinks are hwloc's NVLinkBandwidth matrix (NVML), MB/s / 1000 per direction");
    if (m->o->nvlink_gbs > 0)
        cp_hw_note(m, "--nvlink-gbs is not used: the file gives the NVLink bandwidths");
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            hwloc_uint64_t v = d->values[i * n + j] > d->values[j * n + i] ? d->values[i * n + j]
                                                                           : d->values[j * n + i];
            char a[32], b[32];
            if (v == 0 || v > 100000000ULL) /* above 100 TB/s: not a link */
                continue;
            if (!matrix_id(m, d->objs[i], a, sizeof a) || !matrix_id(m, d->objs[j], b, sizeof b)) {
                cp_hw_note(m, "NVLinkBandwidth entries for objects that are not GPUs, NVSwitches "
                              "or sockets were left out");
                continue;
            }
            if (strcmp(a, b) == 0)
                continue;
            if ((rc = cp_hw_add_link(m, a, b, "nvlink", (double)v / 1000.0, CP_HW_LAT_NVLINK)))
                return rc;
        }
    return CP_OK;
}

/* NVLinks per GPU and GB/s per link for GPU g; CP_EINPUT when unknown. */
static int gpu_nvlinks(cp_hw *m, int g, int nsw, int *links, double *gbs)
{
    const cp_hw_gen *gen = m->gpu[g].gen;
    *gbs = m->o->nvlink_gbs > 0 ? m->o->nvlink_gbs : gen ? gen->nvlink_gbs : 0;
    if (!(*gbs > 0))
        return cp_fail_at(m->e, CP_EINPUT, m->path, 0, 0, NULL,
                          "the file lists NVSwitches but GPU %d's NVLink rate is unknown: "
                          "give --gpu p100|v100|a100|h100 or --nvlink-gbs X", g);
    if (gen)
        *links = gen->links;
    else {
        *links = nsw;
        cp_hw_note(m, "GPUs of no known generation were given one NVLink to each NVSwitch");
    }
    return CP_OK;
}

/* The NVLinks of GPU g to the switches of its board (sw[0..nsw)). */
static int gpu_to_board(cp_hw *m, int g, const int *sw, int nsw)
{
    char gid[32], sid[32];
    int k, rc, links = 0;
    double gbs;
    if ((rc = gpu_nvlinks(m, g, nsw, &links, &gbs)))
        return rc;
    snprintf(gid, sizeof gid, "gpu%d", g);
    for (k = 0; k < nsw; k++) {
        int n = links / nsw + (k < links % nsw);
        if (n == 0)
            continue;
        if ((rc = nvswitch_id(m, sw[k], sid, sizeof sid)) ||
            (rc = cp_hw_add_link(m, gid, sid, "nvlink", n * gbs, CP_HW_LAT_NVLINK)))
            return rc;
    }
    return CP_OK;
}

/* The switches of socket c (every socket: c < 0) in walk order. */
static int switches_of(const cp_hw *m, int c, int *sw)
{
    int k, n = 0;
    for (k = 0; k < m->nnvsw; k++)
        if (c < 0 || m->nvsw_cpu[k] == c)
            sw[n++] = k;
    return n;
}

/* 1 when every socket with GPUs has NVSwitches and every NVSwitch sits on
 * a socket with GPUs: the DGX-2's two boards, one per socket. */
static int boards_by_socket(const cp_hw *m)
{
    int c, k, g;
    if (m->ncpu < 2)
        return 0;
    for (c = 0; c < m->ncpu; c++) {
        int has_gpu = 0, has_sw = 0;
        for (g = 0; g < m->ngpu; g++)
            has_gpu |= m->gpu[g].cpu == c;
        for (k = 0; k < m->nnvsw; k++)
            has_sw |= m->nvsw_cpu[k] == c;
        if (has_gpu != has_sw)
            return 0;
    }
    return 1;
}

/* The NVSwitch fabric hwloc does not wire: each GPU to the switches of
 * its board (its socket's, when boards_by_socket; else all of them). */
static int fabric(cp_hw *m)
{
    int sw[CP_HW_MAX];
    int c, g, rc, by_socket = boards_by_socket(m);
    for (g = 0; g < m->ngpu; g++) {
        c = by_socket ? m->gpu[g].cpu : -1;
        if ((rc = gpu_to_board(m, g, sw, switches_of(m, c, sw))))
            return rc;
    }
    if (by_socket)
        cp_hw_note(m, "the GPUs and NVSwitches under one socket form a board (the DGX-2 design)");
    return CP_OK;
}

/* Boards joined switch to switch, which neither NVML's matrix (GPU ports
 * only) nor the PCI tree shows.  When the NVSwitches sit under two or more
 * sockets, the same number under each, switch k of every board is joined
 * to switch k of the others by a trunk as wide as its GPU ports (the
 * DGX-2: 8 GPU ports and 8 trunk NVLinks per switch).  A non-blocking trunk
 * makes the pair one switch as far as bandwidth goes, and NCCL treats the
 * NVSwitches as one fabric: one node stands for switch k of every board,
 * so that every GPU reaches every other through the switches it shares
 * (docs/collectives.md, routes). */
static void merge_boards(cp_hw *m)
{
    int first[CP_HW_MAX] = {0}; /* the first board's switch of each rank */
    int c, k, n0 = 0, boards = 0, first_cpu = -1;
    for (k = 0; k < m->nnvsw; k++)
        m->nvsw_rep[k] = k;
    m->nvsw_boards = 1;
    for (c = 0; c < m->ncpu; c++) { /* boards, and the same count on each */
        int n = 0;
        for (k = 0; k < m->nnvsw; k++)
            n += m->nvsw_cpu[k] == c;
        if (n == 0)
            continue;
        if (boards++ == 0) {
            n0 = n;
            first_cpu = c;
        } else if (n != n0) {
            return; /* boards unlike: no trunk assumed, each switch its own node */
        }
    }
    if (boards < 2)
        return;
    for (c = first_cpu; c < m->ncpu; c++) {
        int rank = 0;
        for (k = 0; k < m->nnvsw; k++) {
            if (m->nvsw_cpu[k] != c)
                continue;
            if (c == first_cpu)
                first[rank] = k;
            m->nvsw_rep[k] = first[rank++];
        }
    }
    m->nvsw_boards = boards;
    cp_hw_note(m, "NVSwitches under different sockets are on different boards, joined switch "
                  "k to switch k by a non-blocking trunk (the DGX-2: 8 NVLinks of 25 GB/s); "
                  "one nvswitch node stands for switch k of every board");
}

int cp_hw_nvlinks(cp_hw *m)
{
    struct hwloc_distances_s *d[8];
    unsigned nr = 8, k;
    int g, rc = CP_OK, sxm = 0;
    if (m->ngpu == 0) {
        if (m->nnvsw)
            cp_hw_note(m, "NVSwitches without GPUs were left out");
        return CP_OK;
    }
    merge_boards(m);
    if (hwloc_distances_get_by_name(m->topo, "NVLinkBandwidth", &nr, d, 0) == 0 && nr > 0) {
        rc = from_matrix(m, d[0]);
        for (k = 0; k < nr; k++)
            hwloc_distances_release(m->topo, d[k]);
        return rc;
    }
    if (m->nnvsw > 0) {
        cp_hw_note(m, "hwloc lists the NVSwitches but not their NVLinks: every GPU spreads its "
                      "NVLinks (by its generation: P100 4, V100 6, A100 12, H100 18) evenly "
                      "over the NVSwitches of its board, at the generation's rate per link or "
                      "--nvlink-gbs");
        return fabric(m);
    }
    for (g = 0; g < m->ngpu; g++)
        sxm |= m->gpu[g].sxm;
    if (sxm && m->ngpu > 1)
        cp_hw_note(m, "the file has no NVLinkBandwidth matrix and no NVSwitch: the SXM GPUs are "
                      "joined by PCIe only; add their NVLinks by hand");
    return rc;
}
