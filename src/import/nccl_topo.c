/*
 * nccl_topo.c - NCCL topology XML to coarse-plan JSON (see nccl_topo.h and
 * docs/import.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/units.h"
#include "import/gpu_memory.h"
#include "import/nccl_topo.h"
#include "import/xml.h"

/* Hop latencies, the same conventions as the shipped topologies
 * (docs/topologies.md): NVLink 0.7, PCIe 0.5, socket 0.3 us. */
#define LAT_NVLINK 0.7
#define LAT_PCIE 0.5
#define LAT_SOCKET 0.3

/* A PCIe link whose rate the file does not give: Gen4 x16, 24 GB/s. */
#define PCIE_UNKNOWN_GBS 24.0

/* Most busids we map (GPUs and NVLink targets). */
#define MAX_BUS 1024

typedef struct imp {
    const char *path;
    const cp_import_opts *o;
    json_t *nodes, *links;
    char notes[1024];
    int ncpu, nsw, ngpu, nnic, nnvsw;
    char *bus[MAX_BUS];     /* busid of each GPU / NVSwitch (borrowed from the tree) */
    char *bus_id[MAX_BUS];  /* its node id (owned) */
    int bus_sm[MAX_BUS];
    const cp_xml *bus_gpu[MAX_BUS]; /* the <gpu> element, for its NVLinks */
    const char *bus_model[MAX_BUS]; /* the GPU's part name (static), NULL if unknown */
    int nbus;
    cp_err *e;
} imp;

/* Known GPUs by PCI device id: part name, peak dense FP32, FP16/BF16
 * (tensor core) and FP8 TFLOP/s, device memory bandwidth in GB/s (NVIDIA
 * datasheets; 0: not published for the part, or no FP8 tensor cores) and
 * streaming multiprocessors (architecture whitepapers and datasheets: P100
 * 56, V100 80, T4 40, A100 108, A10 72, RTX 3090 82, H100 SXM5 132, PCIe
 * 114; 0: not published, the A10G). */
static const struct {
    const char *dev, *model;
    double tflops, tflops_fp16, mem_gbs, tflops_fp8;
    int sms;
} gpus[] = {
    {"0x15f8", "P100-PCIE-16GB", 9.3, 18.7, 732, 0, 56},
    {"0x15f9", "P100-SXM2-16GB", 10.6, 21.2, 732, 0, 56},
    {"0x1db1", "V100-SXM2-16GB", 15.7, 125, 900, 0, 80},
    {"0x1db5", "V100-SXM2-32GB", 15.7, 125, 900, 0, 80},
    {"0x1db4", "V100-PCIE-16GB", 14.0, 112, 900, 0, 80},
    {"0x1db6", "V100-PCIE-32GB", 14.0, 112, 900, 0, 80},
    {"0x1eb8", "T4-16GB", 8.1, 65, 320, 0, 40},
    {"0x20b0", "A100-SXM4-40GB", 19.5, 312, 1555, 0, 108},
    {"0x20b2", "A100-SXM4-80GB", 19.5, 312, 2039, 0, 108},
    {"0x20b5", "A100-PCIE-80GB", 19.5, 312, 1935, 0, 108},
    {"0x2236", "A10-24GB", 31.2, 125, 600, 0, 72},
    {"0x2237", "A10G-24GB", 31.2, 0, 600, 0, 0},
    {"0x2204", "RTX-3090-24GB", 35.6, 0, 936, 0, 82},
    {"0x2330", "H100-SXM5-80GB", 67.0, 989, 3350, 1979, 132},
    {"0x2331", "H100-PCIE-80GB", 51.0, 756, 2000, 1513, 114},
};

static void note(imp *m, const char *text)
{
    if (strstr(m->notes, text))
        return;
    if (strlen(m->notes) + strlen(text) + 3 < sizeof m->notes)
        snprintf(m->notes + strlen(m->notes), sizeof m->notes - strlen(m->notes), "%s%s",
                 m->notes[0] ? "; " : "", text);
}

/* A GPU's capacity_gb: --gpu-memory-gb, else the size in its part name (the
 * PCI device id named it), noted; none for a part the table does not know
 * (predict then says the memory is unknown). */
static int gpu_capacity(imp *m, const char *model, json_t *extra)
{
    const char *source;
    char buf[160];
    double gb = cp_gpu_memory_gb(m->o->gpu_memory_gb, model, model, &source);
    if (!(gb > 0)) {
        note(m, "GPUs of a PCI device id the importer does not know carry no capacity_gb: "
                "give --gpu-memory-gb");
        return CP_OK;
    }
    if (json_object_set_new(extra, "capacity_gb", json_real(gb)))
        return cp_fail(m->e, CP_EINTERNAL, "out of memory");
    snprintf(buf, sizeof buf, "GPU memory (capacity_gb) from %s", source);
    note(m, buf);
    return CP_OK;
}

static int fail_at(imp *m, const cp_xml *x, const char *fmt, const char *arg)
{
    return cp_fail_at(m->e, CP_EINPUT, m->path, x->line, x->col, NULL, fmt, arg);
}

static int starts(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Integer attribute `name` of x within [lo, hi]: *out = dflt when absent;
 * anything else (not a whole decimal number, out of range) is refused with
 * the element's position, as the JSON loaders refuse a bad field. */
static int attr_int(imp *m, const cp_xml *x, const char *name, long lo, long hi, int dflt,
                    int *out)
{
    const char *v = cp_xml_attr(x, name);
    char *end;
    long n;
    *out = dflt;
    if (!v)
        return CP_OK;
    errno = 0;
    n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || n < lo || n > hi)
        return cp_fail_at(m->e, CP_EINPUT, m->path, x->line, x->col, NULL,
                          "<%s %s=\"%.40s\">: expected a whole number from %ld to %ld",
                          x->name, name, v, lo, hi);
    *out = (int)n;
    return CP_OK;
}

/* GB/s per direction of a PCIe link from its speed ("8 GT/s", "16.0 GT/s
 * PCIe") and width: width x GT/s x 3/32, which is NCCL's effective rate
 * (Gen3 x16 12, Gen4 x16 24, Gen5 x16 48).  0 when not given or virtual
 * (2.5 GT/s x1 or width 0 are what hypervisors' bridges report). */
static double pcie_gbs(const cp_xml *x)
{
    const char *sp = cp_xml_attr(x, "link_speed"), *wd = cp_xml_attr(x, "link_width");
    double speed = sp ? strtod(sp, NULL) : 0, width = wd ? strtod(wd, NULL) : 0;
    if (!(speed > 2.5) || !(width >= 2) || width > 32 || speed > 256)
        return 0;
    return width * speed * 3.0 / 32.0;
}

static int add_node(imp *m, const char *id, const char *kind, const char *model,
                    json_t *extra)
{
    json_t *n = json_object();
    json_object_set_new(n, "id", json_string(id));
    json_object_set_new(n, "kind", json_string(kind));
    if (model)
        json_object_set_new(n, "model", json_string(model));
    if (extra)
        json_object_update(n, extra);
    json_decref(extra);
    return json_array_append_new(m->nodes, n) ? cp_fail(m->e, CP_EINTERNAL, "out of memory")
                                              : CP_OK;
}

static int add_link(imp *m, const char *a, const char *b, const char *kind, double gbs,
                    double lat)
{
    json_t *l = json_object();
    json_object_set_new(l, "a", json_string(a));
    json_object_set_new(l, "b", json_string(b));
    json_object_set_new(l, "kind", json_string(kind));
    json_object_set_new(l, "gbs", json_real(cp_round(gbs, 4)));
    json_object_set_new(l, "latency_us", json_real(lat));
    return json_array_append_new(m->links, l) ? cp_fail(m->e, CP_EINTERNAL, "out of memory")
                                              : CP_OK;
}

/* NVLink GB/s per link per direction for a compute capability: P100 (6.x)
 * 20, V100/A100/H100 (7.x-9.x) 25, Blackwell (10.x) 50 (spec sheets). */
static double nvlink_per_link(int sm)
{
    return sm < 70 ? 20 : sm < 100 ? 25 : 50;
}

static int walk_pci(imp *m, const cp_xml *x, const char *parent, double *up_gbs);

/* One nic node (model may be NULL) with its port speed and latency, on a
 * PCIe link of link_gbs to parent. */
static int add_nic(imp *m, const char *model, double net_gbs, double net_lat_us,
                   const char *parent, double link_gbs)
{
    char id[32];
    json_t *extra = json_object();
    int rc;
    if (!extra)
        return cp_fail(m->e, CP_EINTERNAL, "out of memory");
    snprintf(id, sizeof id, "nic%d", m->nnic++);
    json_object_set_new(extra, "net_gbs", json_real(cp_round(net_gbs, 4)));
    json_object_set_new(extra, "net_latency_us", json_real(net_lat_us));
    if ((rc = add_node(m, id, "nic", model, extra)))
        return rc;
    return add_link(m, id, parent, "pcie", link_gbs, LAT_PCIE);
}

/* <nic><net speed latency .../></nic>: one nic node per net. */
static int add_nics(imp *m, const cp_xml *nic, const char *parent, double link_gbs)
{
    int k, rc;
    for (k = 0; k < nic->nkid; k++) {
        const cp_xml *net = nic->kid[k];
        const char *sp = cp_xml_attr(net, "speed"), *lat = cp_xml_attr(net, "latency");
        double gbs = sp ? strtod(sp, NULL) / 8000.0 : 0, l = lat ? strtod(lat, NULL) : 0;
        if (strcmp(net->name, "net") != 0)
            continue;
        if (!(gbs > 0) || gbs > 1e4) {
            gbs = m->o->net_gbs;
            note(m, "a NIC without a speed was given --net-gbs");
        }
        if (!(l > 0) || l > 1e5) {
            l = m->o->net_lat_us;
            note(m, "NIC latency not in the file: --net-latency-us assumed");
        }
        if ((rc = add_nic(m, cp_xml_attr(net, "name"), gbs, l, parent, link_gbs)))
            return rc;
    }
    return CP_OK;
}

/* A GPU: record its busid for the NVLink pass. */
static int add_gpu(imp *m, const cp_xml *pci, const cp_xml *g, const char *parent, double gbs)
{
    const char *dev = cp_xml_attr(pci, "device");
    const char *model = NULL;
    json_t *extra;
    char id[32];
    size_t k;
    int rc, sm = 0;
    if (g && (rc = attr_int(m, g, "sm", 10, 200, 0, &sm)))
        return rc;
    if (!(extra = json_object()))
        return cp_fail(m->e, CP_EINTERNAL, "out of memory");
    for (k = 0; dev && k < sizeof gpus / sizeof gpus[0]; k++)
        if (strcmp(dev, gpus[k].dev) == 0) {
            model = gpus[k].model;
            json_object_set_new(extra, "tflops", json_real(gpus[k].tflops));
            if (gpus[k].tflops_fp16 > 0)
                json_object_set_new(extra, "tflops_fp16", json_real(gpus[k].tflops_fp16));
            json_object_set_new(extra, "mem_gbs", json_real(gpus[k].mem_gbs));
            if (gpus[k].tflops_fp8 > 0)
                json_object_set_new(extra, "tflops_fp8", json_real(gpus[k].tflops_fp8));
            if (gpus[k].sms > 0)
                json_object_set_new(extra, "sms", json_integer(gpus[k].sms));
        }
    if ((rc = gpu_capacity(m, model, extra)))
        return rc;
    snprintf(id, sizeof id, "gpu%d", m->ngpu++);
    if ((rc = add_node(m, id, "gpu", model, extra)) ||
        (rc = add_link(m, id, parent, "pcie", gbs, LAT_PCIE)))
        return rc;
    if (m->nbus >= MAX_BUS)
        return fail_at(m, pci, "more than %s GPUs and NVLink targets", "1024");
    m->bus[m->nbus] = (char *)cp_xml_attr(pci, "busid");
    m->bus_id[m->nbus] = strdup(id);
    m->bus_sm[m->nbus] = sm ? sm : (model && strstr(model, "P100") ? 60 : 80);
    m->bus_gpu[m->nbus] = g;
    m->bus_model[m->nbus] = model;
    if (!m->bus_id[m->nbus])
        return cp_fail(m->e, CP_EINTERNAL, "out of memory");
    m->nbus++;
    return CP_OK;
}

static const cp_xml *child(const cp_xml *x, const char *name)
{
    int k;
    for (k = 0; k < x->nkid; k++)
        if (strcmp(x->kid[k]->name, name) == 0)
            return x->kid[k];
    return NULL;
}

/* The rate of the link above a pci element: its own, else (a virtual
 * bridge) the best of its children's, else Gen4 x16. */
static double link_rate(imp *m, const cp_xml *x, double kids_best)
{
    double g = pcie_gbs(x);
    const char *sp = cp_xml_attr(x, "link_speed");
    double speed = sp ? strtod(sp, NULL) : 0;
    if (g > 0)
        return g;
    if (kids_best <= 0 && speed > 2.5 && speed <= 256) {
        note(m, "PCIe endpoints with a speed but no width are taken as x16");
        return 16 * speed * 3.0 / 32.0;
    }
    if (kids_best > 0) {
        note(m, "virtual PCIe bridges (2.5 GT/s x1 or width 0) take their children's rate");
        return kids_best;
    }
    note(m, "PCIe links without a usable speed and width are taken as Gen4 x16 (24 GB/s)");
    return PCIE_UNKNOWN_GBS;
}

static int walk_switch(imp *m, const cp_xml *x, const char *parent, double *up_gbs)
{
    char id[32];
    double best = 0;
    int k, rc, link;
    snprintf(id, sizeof id, "sw%d", m->nsw++);
    if ((rc = add_node(m, id, "pcie_switch", NULL, NULL)))
        return rc;
    link = (int)json_array_size(m->links);
    if ((rc = add_link(m, id, parent, "pcie", 0, LAT_PCIE)))
        return rc;
    for (k = 0; k < x->nkid; k++) {
        double g = 0;
        if (strcmp(x->kid[k]->name, "pci") == 0 && (rc = walk_pci(m, x->kid[k], id, &g)))
            return rc;
        if (g > best)
            best = g;
    }
    *up_gbs = link_rate(m, x, best);
    /* the uplink was added before the children knew their rates */
    json_object_set_new(json_array_get(m->links, (size_t)link), "gbs",
                        json_real(cp_round(*up_gbs, 4)));
    return CP_OK;
}

/* One <pci> element below `parent`. */
static int walk_pci(imp *m, const cp_xml *x, const char *parent, double *up_gbs)
{
    const char *cls = cp_xml_attr(x, "class"), *vendor = cp_xml_attr(x, "vendor");
    const cp_xml *g = child(x, "gpu"), *nic = child(x, "nic");
    *up_gbs = 0;
    if (starts(cls, "0x0604"))
        return walk_switch(m, x, parent, up_gbs);
    if (g || ((starts(cls, "0x0302") || starts(cls, "0x0300")) &&
              (!vendor || strcmp(vendor, "0x10de") == 0))) {
        *up_gbs = link_rate(m, x, 0);
        return add_gpu(m, x, g, parent, *up_gbs);
    }
    if (nic) {
        *up_gbs = link_rate(m, x, 0);
        return add_nics(m, nic, parent, *up_gbs);
    }
    if (starts(cls, "0x0200") || starts(cls, "0x0207")) {
        *up_gbs = link_rate(m, x, 0);
        note(m, "NICs listed only by PCI class were given --net-gbs and --net-latency-us");
        return add_nic(m, NULL, m->o->net_gbs, m->o->net_lat_us, parent, *up_gbs);
    }
    note(m, "PCI devices that are neither bridges, GPUs nor NICs were left out");
    return CP_OK;
}

/* NCCL's socket-link bandwidth (src/graph/topo.h): Intel Broadwell 6,
 * Skylake and later 10, Sapphire Rapids 22, Emerald Rapids 40; AMD 16. */
static int socket_gbs(imp *m, const cp_xml *cpu, double *gbs)
{
    const char *vendor = cp_xml_attr(cpu, "vendor");
    int mid, rc = attr_int(m, cpu, "modelid", 0, 1 << 20, 0, &mid);
    if (rc)
        return rc;
    if (vendor && strstr(vendor, "AMD"))
        *gbs = 16;
    else if (mid == 79 || mid == 86)
        *gbs = 6;
    else if (mid == 143)
        *gbs = 22;
    else if (mid == 207)
        *gbs = 40;
    else
        *gbs = 10;
    return CP_OK;
}

static int walk_cpus(imp *m, const cp_xml *sys)
{
    int k, j, rc;
    double sock = 10;
    for (k = 0; k < sys->nkid; k++) {
        const cp_xml *cpu = sys->kid[k];
        char id[32];
        if (strcmp(cpu->name, "cpu") != 0)
            continue;
        snprintf(id, sizeof id, "cpu%d", m->ncpu++);
        if ((rc = socket_gbs(m, cpu, &sock)) ||
            (rc = add_node(m, id, "cpu", cp_xml_attr(cpu, "vendor"), NULL)))
            return rc;
        for (j = 0; j < cpu->nkid; j++) {
            const cp_xml *x = cpu->kid[j];
            double g;
            if (strcmp(x->name, "pci") == 0)
                rc = walk_pci(m, x, id, &g);
            else if (strcmp(x->name, "nic") == 0) {
                note(m, "NICs attached straight to a CPU were given a Gen4 x16 link (24 GB/s)");
                rc = add_nics(m, x, id, PCIE_UNKNOWN_GBS);
            } else
                rc = CP_OK;
            if (rc)
                return rc;
        }
    }
    if (m->ncpu == 0)
        return fail_at(m, sys, "no <cpu> element in %s", "<system>");
    for (k = 0; k < m->ncpu; k++)
        for (j = k + 1; j < m->ncpu; j++) {
            char a[32], b[32];
            snprintf(a, sizeof a, "cpu%d", k);
            snprintf(b, sizeof b, "cpu%d", j);
            if ((rc = add_link(m, a, b, "socket", sock, LAT_SOCKET)))
                return rc;
        }
    return CP_OK;
}

static int find_bus(const imp *m, const char *busid)
{
    int k;
    for (k = 0; busid && k < m->nbus; k++)
        if (m->bus[k] && strcasecmp(m->bus[k], busid) == 0)
            return k;
    return -1;
}

/* HGX 8-GPU baseboards: every SXM GPU of the board joins every NVSwitch
 * chip by `links[k]` NVLinks of 25 GB/s (NVIDIA's specifications; the
 * shipped dgx-a100 and hgx-h100 topologies, docs/topologies.md).  Gen-3
 * chips reduce in the switch (NVLS) at the line rate of their GPU ports. */
static const struct board {
    const char *part;     /* prefix of the GPUs' model */
    int nsw, links[6];
    const char *sw_model;
    int nvls;
} boards[] = {
    {"A100-SXM4", 6, {2, 2, 2, 2, 2, 2}, "NVSwitch gen 2", 0},
    {"H100-SXM5", 4, {4, 5, 5, 4}, "NVSwitch gen 3", 1},
};

/* A hint file (no NVLink) whose GPUs are all one SXM part on an 8-GPU HGX
 * board: add the board's NVSwitch fabric, which NCCL would find through the
 * driver; otherwise note that the GPUs are joined by PCIe only. */
static int add_baseboard(imp *m)
{
    size_t b;
    int g, k, rc;
    for (b = 0; b < sizeof boards / sizeof boards[0]; b++) {
        const struct board *bd = &boards[b];
        int all = m->ngpu == 8 && !m->o->no_fabric;
        for (g = 0; all && g < m->nbus; g++)
            all = m->bus_model[g] && strncmp(m->bus_model[g], bd->part, strlen(bd->part)) == 0;
        if (!all)
            continue;
        for (k = 0; k < bd->nsw; k++) {
            json_t *extra = json_object();
            char id[32];
            snprintf(id, sizeof id, "nvsw%d", m->nnvsw++);
            if (bd->nvls)
                json_object_set_new(extra, "reduce_gbs", json_real(8 * bd->links[k] * 25.0));
            if ((rc = add_node(m, id, "nvswitch", bd->sw_model, extra)))
                return rc;
            for (g = 0; g < m->nbus; g++)
                if ((rc = add_link(m, m->bus_id[g], id, "nvlink", bd->links[k] * 25.0,
                                   LAT_NVLINK)))
                    return rc;
        }
        note(m, bd->nvls ? "the file lists no NVLink (a hint file: NCCL learns NVLink from the "
                           "driver); its eight H100-SXM5 GPUs sit on an HGX H100 board, so its "
                           "fabric was added: 4 NVSwitch gen 3 chips, 4/5/5/4 NVLinks of 25 "
                           "GB/s from every GPU, NVLS at the ports' line rate "
                           "(--no-fabric leaves PCIe only)"
                         : "the file lists no NVLink (a hint file: NCCL learns NVLink from the "
                           "driver); its eight A100-SXM4 GPUs sit on an HGX A100 board, so its "
                           "fabric was added: 6 NVSwitch gen 2 chips, 2 NVLinks of 25 GB/s from "
                           "every GPU to each (--no-fabric leaves PCIe only)");
        return CP_OK;
    }
    note(m, "the file lists no NVLink (a hint file?): GPUs are joined by PCIe only; add "
            "NVLinks by hand if the machine has them");
    return CP_OK;
}

/* NVLinks, once every GPU is known: to a GPU, or to an NVSwitch per
 * distinct target. */
static int walk_nvlinks(imp *m)
{
    int g, k, rc, ngpubus = m->nbus, any = 0;
    for (g = 0; g < ngpubus; g++) {
        const cp_xml *gx = m->bus_gpu[g];
        for (k = 0; gx && k < gx->nkid; k++) {
            const cp_xml *nv = gx->kid[k];
            const char *target = cp_xml_attr(nv, "target");
            int t, c;
            double gbs;
            if (strcmp(nv->name, "nvlink") != 0)
                continue;
            if ((rc = attr_int(m, nv, "count", 1, 64, 1, &c)))
                return rc;
            gbs = c * nvlink_per_link(m->bus_sm[g]);
            t = find_bus(m, target);
            if (t == g || (target && m->bus[g] && strcasecmp(target, m->bus[g]) == 0)) {
                note(m, "an NVLink from a GPU to itself (a vendor tuning hack) was dropped");
                continue;
            }
            any = 1;
            if (t >= 0 && t < ngpubus) { /* GPU to GPU: add once, from the lower index */
                if (t > g && (rc = add_link(m, m->bus_id[g], m->bus_id[t], "nvlink", gbs,
                                            LAT_NVLINK)))
                    return rc;
                continue;
            }
            if (t < 0) { /* a new NVSwitch */
                char id[32];
                if (m->nbus >= MAX_BUS)
                    return fail_at(m, nv, "more than %s NVLink targets", "1024");
                snprintf(id, sizeof id, "nvsw%d", m->nnvsw++);
                if ((rc = add_node(m, id, "nvswitch", NULL, NULL)))
                    return rc;
                t = m->nbus++; /* counted first: cp_import_nccl_topo frees bus_id[0 .. nbus) */
                m->bus[t] = (char *)target;
                if (!(m->bus_id[t] = strdup(id)))
                    return cp_fail(m->e, CP_EINTERNAL, "out of memory");
            }
            /* bus_id[t] belongs to m (freed by cp_import_nccl_topo on every path);
             * the analyzer reports it leaked on this return */
            /* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
            if ((rc = add_link(m, m->bus_id[g], m->bus_id[t], "nvlink", gbs, LAT_NVLINK)))
                return rc;
        }
    }
    if (!any && m->ngpu > 1)
        return add_baseboard(m);
    return CP_OK;
}

void cp_import_opts_default(cp_import_opts *o)
{
    o->name = NULL;
    o->net_gbs = 12.5;   /* 100 Gb/s */
    o->net_lat_us = 1.5; /* InfiniBand port to port through one switch */
    o->no_fabric = 0;
    o->gpu_memory_gb = 0;
}


int cp_import_nccl_topo(const char *path, const char *text, size_t len,
                        const cp_import_opts *o, json_t **out, cp_err *e)
{
    cp_xml *root = NULL;
    imp m;
    int rc, k;
    char name[256], full[1400];
    *out = NULL;
    memset(&m, 0, sizeof m);
    m.path = path;
    m.o = o;
    m.e = e;
    if ((rc = cp_xml_parse(path, text, len, &root, e)))
        return rc;
    if (strcmp(root->name, "system") != 0) {
        rc = fail_at(&m, root, "expected an NCCL topology (<system>), found <%s>", root->name);
        cp_xml_free(root);
        return rc;
    }
    m.nodes = json_array();
    m.links = json_array();
    rc = walk_cpus(&m, root);
    if (rc == CP_OK)
        rc = walk_nvlinks(&m);
    if (rc == CP_OK && m.ngpu == 0)
        rc = fail_at(&m, root, "no GPU found in %s (no <gpu> and no PCI display class)", path);
    if (rc == CP_OK) {
        json_t *t = json_object();
        if (o->name)
            snprintf(name, sizeof name, "%s", o->name);
        else
            cp_base_name(path, 1, name, sizeof name);
        snprintf(full, sizeof full, "imported from %s by coarse-plan import nccl-topo (docs/"
                 "import.md)%s%s", path, m.notes[0] ? ". Assumed: " : "", m.notes);
        json_object_set_new(t, "name", json_string(name));
        json_object_set_new(t, "note", json_string(full));
        json_object_set_new(t, "nodes", m.nodes);
        json_object_set_new(t, "links", m.links);
        *out = t;
    } else {
        json_decref(m.nodes);
        json_decref(m.links);
    }
    for (k = 0; k < m.nbus; k++)
        free(m.bus_id[k]);
    cp_xml_free(root);
    return rc;
}
