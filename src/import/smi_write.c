/*
 * smi_write.c - stages 5 and 6 of import smi-topo (smi_internal.h,
 * docs/import.md): one link per NV cell, or one nvswitch node when a GPU
 * shows more NVLinks than its generation has (NVSwitch systems print NV#
 * between every pair); the PCIe switches of the tree; then the nodes and
 * links of the topology JSON, and the notes on the rates and layout
 * assumed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "import/smi_internal.h"
#include "import/smi_topo.h"

/* ------------------------------------------------------------------------ */
/* 5, 6. Nodes and links                                                     */

static int add_node(smi *m, const char *id, const char *kind, json_t *extra)
{
    json_t *n = json_object();
    if (!n)
        return smi_oom(m);
    json_object_set_new(n, "id", json_string(id));
    json_object_set_new(n, "kind", json_string(kind));
    if (extra)
        json_object_update(n, extra);
    json_decref(extra);
    return json_array_append_new(m->nodes, n) ? smi_oom(m) : CP_OK;
}

static int add_link(smi *m, const char *a, const char *b, const char *kind, double gbs,
                    double lat)
{
    json_t *l = json_object();
    if (!l)
        return smi_oom(m);
    json_object_set_new(l, "a", json_string(a));
    json_object_set_new(l, "b", json_string(b));
    json_object_set_new(l, "kind", json_string(kind));
    json_object_set_new(l, "gbs", json_real(cp_round(gbs, 4)));
    json_object_set_new(l, "latency_us", json_real(lat));
    return json_array_append_new(m->links, l) ? smi_oom(m) : CP_OK;
}

/* Node id of device i: gpuK or nicK. */
static void dev_id(const smi *m, int i, char *buf, size_t cap)
{
    if (i < m->ngpu)
        snprintf(buf, cap, "gpu%d", i);
    else
        snprintf(buf, cap, "nic%d", i - m->ngpu);
}

/* Switch numbering: a leaf switch per PIX group of two or more devices,
 * then an upstream switch per PXB group holding two or more PIX groups
 * (or lone devices), each in the order of its first device. */
typedef struct tree {
    int *leaf; /* per device that roots a PIX group: its switch number, else -1 */
    int *up;   /* per device that roots a PXB group: its upstream switch number, else -1 */
    int nsw;
} tree;

static int count_switches(smi *m, tree *t)
{
    int i, j, *size = calloc((size_t)m->ndev, sizeof *size);
    t->leaf = calloc((size_t)m->ndev, sizeof *t->leaf);
    t->up = calloc((size_t)m->ndev, sizeof *t->up);
    t->nsw = 0;
    if (!size || !t->leaf || !t->up) {
        free(size);
        return smi_oom(m);
    }
    for (i = 0; i < m->ndev; i++) {
        size[m->pix[i]]++;
        t->leaf[i] = t->up[i] = -1;
    }
    for (i = 0; i < m->ndev; i++)
        if (m->pix[i] == i && size[i] >= 2)
            t->leaf[i] = t->nsw++;
    for (i = 0; i < m->ndev; i++) {
        int units = 0;
        if (m->pxb[i] != i)
            continue;
        for (j = i; j < m->ndev; j++)
            units += m->pxb[j] == i && m->pix[j] == j;
        if (units >= 2)
            t->up[i] = t->nsw++;
    }
    free(size);
    return CP_OK;
}

/* The node a device (or its PIX group's switch, when leaf_up) hangs from:
 * its leaf switch, its upstream switch, or its socket's CPU. */
static void parent_of(const smi *m, const tree *t, int i, int leaf_up, char *buf, size_t cap)
{
    if (!leaf_up && t->leaf[m->pix[i]] >= 0)
        snprintf(buf, cap, "sw%d", t->leaf[m->pix[i]]);
    else if (t->up[m->pxb[i]] >= 0)
        snprintf(buf, cap, "sw%d", t->up[m->pxb[i]]);
    else
        snprintf(buf, cap, "cpu%d", m->sock[i]);
}

/* CPU and PCIe switch nodes. */
static int add_hubs(smi *m, const tree *t)
{
    char id[32];
    int rc, s;
    for (s = 0; s < m->nsock; s++) {
        snprintf(id, sizeof id, "cpu%d", s);
        if ((rc = add_node(m, id, "cpu", NULL)))
            return rc;
    }
    for (s = 0; s < t->nsw; s++) {
        snprintf(id, sizeof id, "sw%d", s);
        if ((rc = add_node(m, id, "pcie_switch", NULL)))
            return rc;
    }
    return CP_OK;
}

/* GPU and NIC nodes.  With --gpu a GPU gets its part and peak FP32 rate:
 * the SXM part when the matrix shows NVLink, else the PCIe card. */
static int add_endpoints(smi *m)
{
    char id[32];
    int i, rc;
    for (i = 0; i < m->ndev; i++) {
        json_t *x = json_object();
        if (!x)
            return smi_oom(m);
        if (i < m->ngpu && m->gen) {
            int sxm = m->any_nv;
            json_object_set_new(x, "model", json_string(sxm ? m->gen->sxm : m->gen->pcie));
            json_object_set_new(x, "tflops",
                                json_real(sxm ? m->gen->sxm_tflops : m->gen->pcie_tflops));
            json_object_set_new(x, "tflops_fp16",
                                json_real(sxm ? m->gen->sxm_fp16 : m->gen->pcie_fp16));
            if ((sxm ? m->gen->sxm_fp8 : m->gen->pcie_fp8) > 0)
                json_object_set_new(x, "tflops_fp8",
                                    json_real(sxm ? m->gen->sxm_fp8 : m->gen->pcie_fp8));
            json_object_set_new(x, "sms", json_integer(sxm ? m->gen->sxm_sms : m->gen->pcie_sms));
            json_object_set_new(x, "mem_gbs",
                                json_real(sxm ? m->gen->sxm_mem_gbs : m->gen->pcie_mem_gbs));
        }
        if (i < m->ngpu && m->capacity_gb > 0)
            json_object_set_new(x, "capacity_gb", json_real(m->capacity_gb));
        if (i >= m->ngpu) {
            json_object_set_new(x, "model", json_string(m->dev[i].model));
            json_object_set_new(x, "net_gbs", json_real(cp_round(m->o->base.net_gbs, 4)));
            json_object_set_new(x, "net_latency_us", json_real(m->o->base.net_lat_us));
        }
        dev_id(m, i, id, sizeof id);
        if ((rc = add_node(m, id, i < m->ngpu ? "gpu" : "nic", x)))
            return rc;
    }
    return CP_OK;
}

/* NVLink groups: GPUs joined by NV cells, directly or not. */
typedef struct nvgroups {
    int *root; /* per GPU: the first GPU of its group */
    int *sw;   /* per group root: 1 + its nvswitch number, or 0 for point-to-point links */
    int nsw;
} nvgroups;

/* Which groups need a switch: some GPU shows more NVLinks than its
 * generation has, and every pair of the group shows NV#, as nvidia-smi
 * prints NVSwitch systems (NV12 between all eight GPUs of a DGX A100,
 * though each has 12 links in all).  Point-to-point links there would
 * give a GPU seven times the bandwidth it has. */
static void nvswitch_groups(smi *m, nvgroups *g)
{
    int i, j, links = m->gen ? m->gen->links : MAX_LINKS_ANY;
    char buf[512];
    for (i = 0; i < m->ngpu; i++)
        g->root[i] = i;
    for (i = 0; i < m->ngpu; i++)
        for (j = 0; j < i; j++)
            if (smi_at(m, i, j)->rel == R_NV)
                smi_unite(g->root, i, j);
    for (i = 0; i < m->ngpu; i++) {
        g->root[i] = smi_find(g->root, i);
        g->sw[i] = 0;
    }
    for (i = 0; i < m->ngpu; i++) {
        int sum = 0, complete = 1;
        for (j = 0; j < m->ngpu; j++) {
            sum += smi_at(m, i, j)->nv;
            if (j != i && g->root[j] == g->root[i] && smi_at(m, i, j)->rel != R_NV)
                complete = 0;
        }
        if (sum <= links)
            continue;
        if (complete)
            g->sw[g->root[i]] = 1;
        else {
            snprintf(buf, sizeof buf, "GPU%d shows %d NVLinks, more than a GPU has (%s: %d), but not "
                     "NV# to every GPU it reaches: kept as point-to-point links", i, sum,
                     m->gen ? m->gen->label : "any GPU", links);
            smi_note(m, buf);
        }
    }
    g->nsw = 0;
    for (i = 0; i < m->ngpu; i++)
        if (g->root[i] == i && g->sw[i])
            g->sw[i] = ++g->nsw;
    if (g->nsw > 0) {
        snprintf(buf, sizeof buf, "GPUs showing NV# to every GPU of their group and more "
                 "NVLinks in all than a GPU has (%s: %d) reach each other through one nvswitch node "
                 "standing for the NVSwitch chips, each on a link of the largest NV# in its "
                 "row; no NVSwitch reduction (add reduce_gbs by hand for NVLS)",
                 m->gen ? m->gen->label : "any GPU", links);
        smi_note(m, buf);
    }
}

/* The most NVLinks GPU i shows to one peer: its ports into the fabric. */
static int max_nv(const smi *m, int i)
{
    int j, best = 0;
    for (j = 0; j < m->ngpu; j++)
        if (smi_at(m, i, j)->nv > best)
            best = smi_at(m, i, j)->nv;
    return best;
}

static int add_nvswitches(smi *m, const nvgroups *g)
{
    char id[32];
    int k, rc;
    for (k = 0; k < g->nsw; k++) {
        snprintf(id, sizeof id, "nvsw%d", k);
        if ((rc = add_node(m, id, "nvswitch", NULL)))
            return rc;
    }
    return CP_OK;
}

/* One link per NV cell (added once, from the lower GPU), or one link from
 * each GPU of a switched group to its nvswitch. */
static int add_nvlinks(smi *m, const nvgroups *g)
{
    int i, j, rc = CP_OK;
    char a[32], b[32];
    for (i = 0; i < m->ngpu && rc == CP_OK; i++) {
        snprintf(a, sizeof a, "gpu%d", i);
        if (g->sw[g->root[i]]) {
            snprintf(b, sizeof b, "nvsw%d", g->sw[g->root[i]] - 1);
            rc = add_link(m, a, b, "nvlink", max_nv(m, i) * m->nv_gbs, LAT_NVLINK);
            continue;
        }
        for (j = i + 1; j < m->ngpu && rc == CP_OK; j++)
            if (smi_at(m, i, j)->rel == R_NV) {
                snprintf(b, sizeof b, "gpu%d", j);
                rc = add_link(m, a, b, "nvlink", smi_at(m, i, j)->nv * m->nv_gbs, LAT_NVLINK);
            }
    }
    return rc;
}

static int add_pcie(smi *m, const tree *t)
{
    char a[32], b[32];
    int i, j, rc = CP_OK;
    for (i = 0; i < m->ndev && rc == CP_OK; i++) { /* endpoints */
        dev_id(m, i, a, sizeof a);
        parent_of(m, t, i, 0, b, sizeof b);
        rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
    }
    for (i = 0; i < m->ndev && rc == CP_OK; i++) /* leaf switch uplinks */
        if (t->leaf[i] >= 0) {
            snprintf(a, sizeof a, "sw%d", t->leaf[i]);
            parent_of(m, t, i, 1, b, sizeof b);
            rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
        }
    for (i = 0; i < m->ndev && rc == CP_OK; i++) /* upstream switch uplinks */
        if (t->up[i] >= 0) {
            snprintf(a, sizeof a, "sw%d", t->up[i]);
            snprintf(b, sizeof b, "cpu%d", m->sock[i]);
            rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
        }
    for (i = 0; i < m->nsock && rc == CP_OK; i++)
        for (j = i + 1; j < m->nsock && rc == CP_OK; j++) {
            snprintf(a, sizeof a, "cpu%d", i);
            snprintf(b, sizeof b, "cpu%d", j);
            rc = add_link(m, a, b, "socket", SOCKET_GBS, LAT_SOCKET);
        }
    return rc;
}

/* Where the rates and the GPU part came from. */
static void rate_notes(smi *m)
{
    char buf[512];
    if (m->any_nv) {
        if (m->o->nvlink_gbs > 0)
            snprintf(buf, sizeof buf, "NV# = # x %g GB/s per direction (--nvlink-gbs)", m->nv_gbs);
        else
            snprintf(buf, sizeof buf, "NV# = # x %g GB/s per direction (nominal %s NVLink, "
                     "--gpu %s)", m->nv_gbs, m->gen->label, m->gen->name);
        smi_note(m, buf);
    }
    if (m->o->pcie_gbs > 0)
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (--pcie-gbs)", m->pcie_gbs);
    else if (m->gen)
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (%s as NCCL computes it, --gpu %s)",
                 m->pcie_gbs, m->gen->pcie_what, m->gen->name);
    else
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (Gen3 x16 as NCCL computes it; "
                 "--gpu or --pcie-gbs to change)", m->pcie_gbs);
    smi_note(m, buf);
    if (m->gen) {
        snprintf(buf, sizeof buf, "GPUs taken as %s (%s; --gpu %s), tflops, tflops_fp16, "
                 "tflops_fp8 (Hopper), sms and mem_gbs from its datasheet",
                 m->any_nv ? m->gen->sxm : m->gen->pcie,
                 m->any_nv ? "the matrix shows NVLink" : "no NVLink in the matrix", m->gen->name);
        smi_note(m, buf);
    }
    if (m->capacity_gb > 0) {
        snprintf(buf, sizeof buf, "GPU memory %g GB per GPU (capacity_gb) from %s",
                 m->capacity_gb, m->capacity_source);
        smi_note(m, buf);
    } else
        smi_note(m, "GPU memory unknown (no --gpu, no --gpu-memory-gb): predict cannot say "
                    "whether the model fits");
}

/* What the layout took for granted: devices on a CPU, flat PXB trees, the
 * socket rate, the NIC figures. */
static void layout_notes(smi *m, const tree *t)
{
    char buf[512];
    int i, direct = 0, upstream = 0;
    for (i = 0; i < m->ndev; i++) {
        direct += t->leaf[m->pix[i]] < 0 && t->up[m->pxb[i]] < 0;
        upstream += t->up[i] >= 0;
    }
    if (direct)
        smi_note(m, "devices under no common switch with another (PHB, NODE, or NVLink only) hang "
                    "straight off their socket's CPU; host bridges are not modelled");
    if (upstream)
        smi_note(m, "each PXB group is one upstream switch over its PIX switches and lone devices, "
                    "whatever its depth");
    if (m->nsock > 1) {
        snprintf(buf, sizeof buf, "the matrix names no CPU: socket links %g GB/s (NCCL's "
                 "Skylake figure, as import nccl-topo gives an unknown CPU)", SOCKET_GBS);
        smi_note(m, buf);
    }
    if (m->ndev > m->ngpu) {
        snprintf(buf, sizeof buf, "NICs at --net-gbs %g GB/s and --net-latency-us %g",
                 m->o->base.net_gbs, m->o->base.net_lat_us);
        smi_note(m, buf);
    }
}

/* Stages 5 and 6.  Nodes go out as cpus, PCIe switches, nvswitches, GPUs,
 * NICs; links as NVLinks, PCIe (endpoints, then switch uplinks), sockets. */
int smi_write(smi *m)
{
    tree t = {NULL, NULL, 0};
    nvgroups g = {NULL, NULL, 0};
    int rc;
    if ((rc = count_switches(m, &t)))
        goto done;
    m->nodes = json_array();
    m->links = json_array();
    g.root = calloc((size_t)m->ngpu + 1, sizeof *g.root);
    g.sw = calloc((size_t)m->ngpu + 1, sizeof *g.sw);
    if (!m->nodes || !m->links || !g.root || !g.sw) {
        rc = smi_oom(m);
        goto done;
    }
    rate_notes(m);
    layout_notes(m, &t);
    nvswitch_groups(m, &g);
    if ((rc = add_hubs(m, &t)) || (rc = add_nvswitches(m, &g)) || (rc = add_endpoints(m)) ||
        (rc = add_nvlinks(m, &g)))
        goto done;
    rc = add_pcie(m, &t);
done:
    free(t.leaf);
    free(t.up);
    free(g.root);
    free(g.sw);
    return rc;
}
