/*
 * hwloc.c - hwloc topologies to coarse-plan JSON through libhwloc (see
 * hwloc.h and docs/import.md, "hwloc").
 *
 * The file is first read by expat (xml.c) only to place syntax errors and
 * to check that it is an hwloc <topology>: libhwloc reports neither a line
 * nor a column.  libhwloc then loads it (hwloc_topology_set_xmlbuffer) and
 * everything below walks hwloc's objects: Packages, NUMA nodes, and the I/O
 * tree (bridges, PCI devices, OS devices) kept with the KEEP_ALL filter.
 * One pass places the devices and the PCIe links (walk_io), a second adds
 * NVLinks (hwloc_nvlink.c: the NVLinkBandwidth matrix, else the NVSwitch
 * fabric), then the sockets are joined.
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/units.h"
#include "import/gpu_memory.h"
#include "import/hwloc.h"
#include "import/hwloc_impl.h"
#include "import/xml.h"

/* hwloc gives a PCIe link's data rate after line encoding (Gen3 x16:
 * 8 GT/s x 16 x 128/130 / 8 = 15.75 GB/s); coarse-plan, like NCCL and
 * import nccl-topo, prices the rate a transfer reaches, width x GT/s x 3/32
 * (Gen3 x16 12 GB/s).  The ratio (3/32) / (128/130 / 8) = 0.76171875 turns
 * one into the other; for Gen1/2 links (8b/10b) it gives 6% less than NCCL. */
#define HWLOC_TO_NCCL_PCIE (3.0 / 32.0 / (128.0 / 130.0 / 8.0))

/* A PCIe link hwloc gives no rate for: Gen4 x16, 24 GB/s (as nccl-topo). */
#define PCIE_UNKNOWN_GBS 24.0

/* What --gpu, or a GPUModel naming the part, means: NVLink per link per
 * direction and NVLinks per GPU, SXM and PCIe FP32, FP16/BF16 and FP8
 * TFLOP/s, device-memory GB/s and SMs: the figures of smi_topo.c's table
 * (NVIDIA datasheets and whitepapers; A100 as the 40 GB part). */
const cp_hw_gen cp_hw_gens[] = {
    {"p100", "P100", 20, 4, 10.6, 9.3, 21.2, 18.7, 732, 732, 0, 0, 56, 56},
    {"v100", "V100", 25, 6, 15.7, 14.0, 125, 112, 900, 900, 0, 0, 80, 80},
    {"a100", "A100", 25, 12, 19.5, 19.5, 312, 312, 1555, 1555, 0, 0, 108, 108},
    {"h100", "H100", 25, 18, 67.0, 51.0, 989, 756, 3350, 2000, 1979, 1513, 132, 114},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

void cp_hwloc_opts_default(cp_hwloc_opts *o)
{
    cp_import_opts_default(&o->base);
    o->gpu = NULL;
    o->nvlink_gbs = 0;
    o->need_gpu = 0;
}

static const cp_hw_gen *gen_named(const char *gpu)
{
    int k;
    for (k = 0; gpu && cp_hw_gens[k].name; k++)
        if (strcmp(gpu, cp_hw_gens[k].name) == 0)
            return &cp_hw_gens[k];
    return NULL;
}

int cp_hwloc_gpu_known(const char *gpu)
{
    return gen_named(gpu) != NULL;
}

void cp_hw_note(cp_hw *m, const char *text)
{
    size_t used = strlen(m->notes);
    if (strstr(m->notes, text))
        return;
    if (used + strlen(text) + 3 < sizeof m->notes)
        snprintf(m->notes + used, sizeof m->notes - used, "%s%s", used ? "; " : "", text);
}

int cp_hw_add_node(cp_hw *m, const char *id, const char *kind, const char *model,
                   json_t *extra)
{
    json_t *n = json_object();
    json_object_set_new(n, "id", json_string(id));
    json_object_set_new(n, "kind", json_string(kind));
    if (model && *model)
        json_object_set_new(n, "model", json_string(model));
    if (extra)
        json_object_update(n, extra);
    json_decref(extra);
    return json_array_append_new(m->nodes, n) ? cp_fail(m->e, CP_EINTERNAL, "out of memory")
                                              : CP_OK;
}

/* A second link of one kind between the same two nodes (two NVLink
 * matrix entries that land on one merged NVSwitch) is bonded into the
 * first: formats.md wants one link with the summed bandwidth. */
int cp_hw_add_link(cp_hw *m, const char *a, const char *b, const char *kind, double gbs,
                   double lat_us)
{
    json_t *l;
    size_t k;
    json_array_foreach(m->links, k, l) {
        const char *la = json_string_value(json_object_get(l, "a"));
        const char *lb = json_string_value(json_object_get(l, "b"));
        if (strcmp(json_string_value(json_object_get(l, "kind")), kind) == 0 &&
            ((strcmp(la, a) == 0 && strcmp(lb, b) == 0) ||
             (strcmp(la, b) == 0 && strcmp(lb, a) == 0))) {
            double had = json_real_value(json_object_get(l, "gbs"));
            json_object_set_new(l, "gbs", json_real(cp_round(had + gbs, 4)));
            return CP_OK;
        }
    }
    l = json_object();
    json_object_set_new(l, "a", json_string(a));
    json_object_set_new(l, "b", json_string(b));
    json_object_set_new(l, "kind", json_string(kind));
    json_object_set_new(l, "gbs", json_real(cp_round(gbs, 4)));
    json_object_set_new(l, "latency_us", json_real(lat_us));
    return json_array_append_new(m->links, l) ? cp_fail(m->e, CP_EINTERNAL, "out of memory")
                                              : CP_OK;
}

/* ---------------------------------------------------------------- devices */

/* An OS device hwloc attaches to a GPU: by subtype (hwloc 2.x and 3.x
 * both write it) or, for older files, by its name. */
static int gpu_osdev(hwloc_obj_t os)
{
    static const char *const kinds[] = {"CUDA", "NVML", "RSMI", "OpenCL", "LevelZero"};
    static const char *const names[] = {"cuda", "nvml", "rsmi", "opencl", "ze"};
    size_t k;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if ((os->subtype && strcmp(os->subtype, kinds[k]) == 0) ||
            (!os->subtype && os->name && strncmp(os->name, names[k], strlen(names[k])) == 0))
            return 1;
    return 0;
}

/* The kind of a PCI device (a GPU, a NIC, a CXL memory device, an NVSwitch
 * or something left out).  Classes from the PCI code and ID assignment
 * specification: 0x03xx display, 0x02xx network, 0x0502 CXL memory; vendor
 * 0x10de NVIDIA.  The OS devices' kinds are read from their subtype and
 * names, which mean the same in the 2.x and 3.x formats (the numbers of
 * osdev_type do not: 3.x made them bit flags). */
cp_hw_kind cp_hw_classify(hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id, vendor = pci->attr->pcidev.vendor_id;
    hwloc_obj_t os;
    if (pci->subtype && strcmp(pci->subtype, "NVSwitch") == 0)
        return HW_NVSWITCH;
    if (vendor == 0x10de && cls == 0x0680)
        return HW_NVSWITCH;
    for (os = pci->io_first_child; os; os = os->next_sibling) {
        if (os->type == HWLOC_OBJ_OS_DEVICE && gpu_osdev(os))
            return HW_GPU;
        if (os->type == HWLOC_OBJ_OS_DEVICE && os->subtype && strcmp(os->subtype, "CXLMem") == 0)
            return HW_MEMDEV;
    }
    if (cls >> 8 == 0x03 && vendor == 0x10de)
        return HW_GPU;
    if (cls == 0x0502)
        return HW_MEMDEV;
    if (cls >> 8 == 0x02)
        return HW_NIC;
    return HW_OTHER;
}

/* 1 when a GPU, NIC or memory device sits in the I/O subtree of obj. */
static int keeps(hwloc_obj_t obj)
{
    hwloc_obj_t c;
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
        cp_hw_kind k = cp_hw_classify(obj);
        return k == HW_GPU || k == HW_NIC || k == HW_MEMDEV;
    }
    for (c = obj->io_first_child; c; c = c->next_sibling)
        if (keeps(c))
            return 1;
    return 0;
}

/* The hwloc link rate of a bridge or PCI device, GB/s; 0 when not given. */
static double hw_linkspeed(hwloc_obj_t obj)
{
    if (obj->type == HWLOC_OBJ_PCI_DEVICE)
        return obj->attr->pcidev.linkspeed;
    if (obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        return obj->attr->bridge.upstream.pci.linkspeed;
    return 0;
}

/* The slowest known rate along a path (0: none known yet). */
static double slowest(double path, double own)
{
    if (!(own > 0) || own > 1e4)
        return path;
    return path > 0 && path < own ? path : own;
}

/* A path's hwloc rate as the GB/s coarse-plan prices. */
static double link_gbs(cp_hw *m, double hw_gbs)
{
    if (hw_gbs > 0)
        return hw_gbs * HWLOC_TO_NCCL_PCIE;
    cp_hw_note(m, "PCIe links hwloc gives no speed for are taken as Gen4 x16 (24 GB/s)");
    return PCIE_UNKNOWN_GBS;
}

/* Bytes in an hwloc size info ("262144KiB"; hwloc writes KiB). */
static double info_bytes(hwloc_obj_t obj, const char *name)
{
    const char *v = hwloc_obj_get_info_by_name(obj, name);
    char *end;
    double n;
    if (!v)
        return 0;
    n = strtod(v, &end);
    if (!(n > 0) || n > 1e15)
        return 0;
    if (strncmp(end, "KiB", 3) == 0 || strncmp(end, "kB", 2) == 0)
        return n * 1024;
    if (strncmp(end, "MiB", 3) == 0)
        return n * 1024 * 1024;
    if (strncmp(end, "GiB", 3) == 0)
        return n * 1024 * 1024 * 1024;
    return n;
}

/* The GPU's part name: GPUModel of its OS devices, else the PCI device. */
static const char *gpu_model(hwloc_obj_t pci)
{
    hwloc_obj_t os;
    for (os = pci->io_first_child; os; os = os->next_sibling) {
        const char *v = hwloc_obj_get_info_by_name(os, "GPUModel");
        if (v)
            return v;
    }
    return hwloc_obj_get_info_by_name(pci, "PCIDevice");
}

/* Device memory in bytes: CUDAGlobalMemorySize of its CUDA OS device,
 * else OpenCLGlobalMemorySize; 0 when hwloc had neither backend. */
static double gpu_memory_bytes(hwloc_obj_t pci)
{
    hwloc_obj_t os;
    for (os = pci->io_first_child; os; os = os->next_sibling) {
        double b = info_bytes(os, "CUDAGlobalMemorySize");
        if (!(b > 0))
            b = info_bytes(os, "OpenCLGlobalMemorySize");
        if (b > 0)
            return b;
    }
    return 0;
}

/* A GPU's capacity_gb, what predict's model states must fit in:
 * --gpu-memory-gb, else hwloc's figure (bytes > 0), else by its model name
 * or generation (import/gpu_memory.h); noted when it is not hwloc's. */
static void add_capacity(cp_hw *m, const char *model, const cp_hw_gen *g, json_t *extra,
                         double bytes)
{
    const char *source;
    char buf[160];
    double gb;
    if (!(m->o->base.gpu_memory_gb > 0) && bytes > 0) {
        json_object_set_new(extra, "capacity_gb", json_real(cp_round(bytes / 1e9, 9)));
        return;
    }
    gb = cp_gpu_memory_gb(m->o->base.gpu_memory_gb, model, g ? g->label : NULL, &source);
    if (!(gb > 0)) {
        cp_hw_note(m, "GPUs of no known generation carry no capacity_gb: give --gpu or "
                      "--gpu-memory-gb");
        return;
    }
    json_object_set_new(extra, "capacity_gb", json_real(gb));
    snprintf(buf, sizeof buf, "GPU memory (capacity_gb) from %s where hwloc gives none",
             source);
    cp_hw_note(m, buf);
}

static int add_gpu(cp_hw *m, hwloc_obj_t pci, const char *parent, double hw_gbs)
{
    const char *model = gpu_model(pci);
    const cp_hw_gen *g = NULL;
    json_t *extra = json_object();
    char id[32];
    int k, rc, sxm;
    for (k = 0; model && cp_hw_gens[k].name; k++)
        if (strstr(model, cp_hw_gens[k].label))
            g = &cp_hw_gens[k];
    if (!g && (g = gen_named(m->o->gpu)))
        cp_hw_note(m, "GPUs the file does not name were given --gpu");
    if (m->ngpu >= CP_HW_MAX)
        return cp_fail_at(m->e, CP_EINPUT, m->path, 0, 0, NULL, "more than %d GPUs", CP_HW_MAX);
    sxm = g && (!model || strstr(model, "SXM") != NULL);
    if (g) {
        json_object_set_new(extra, "tflops", json_real(sxm ? g->sxm_tflops : g->pcie_tflops));
        json_object_set_new(extra, "tflops_fp16", json_real(sxm ? g->sxm_fp16 : g->pcie_fp16));
        if ((sxm ? g->sxm_fp8 : g->pcie_fp8) > 0)
            json_object_set_new(extra, "tflops_fp8", json_real(sxm ? g->sxm_fp8 : g->pcie_fp8));
        json_object_set_new(extra, "sms", json_integer(sxm ? g->sxm_sms : g->pcie_sms));
        json_object_set_new(extra, "mem_gbs", json_real(sxm ? g->sxm_mem_gbs : g->pcie_mem_gbs));
        cp_hw_note(m, "GPU FLOP/s, SMs and memory bandwidth are the datasheet figures of the "
                      "part's generation (SXM, unless a model name without SXM says PCIe)");
    }
    add_capacity(m, model, g, extra, gpu_memory_bytes(pci));
    snprintf(id, sizeof id, "gpu%d", m->ngpu);
    m->gpu[m->ngpu].obj = pci;
    m->gpu[m->ngpu].gen = g;
    m->gpu[m->ngpu].sxm = sxm;
    m->gpu[m->ngpu].cpu = m->cur_cpu;
    m->ngpu++;
    if ((rc = cp_hw_add_node(m, id, "gpu", model, extra)))
        return rc;
    return cp_hw_add_link(m, id, parent, "pcie", link_gbs(m, hw_gbs), CP_HW_LAT_PCIE);
}

static int add_nic(cp_hw *m, hwloc_obj_t pci, const char *parent, double hw_gbs)
{
    const char *model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
    json_t *extra = json_object();
    char id[32];
    int rc;
    snprintf(id, sizeof id, "nic%d", m->nnic++);
    json_object_set_new(extra, "net_gbs", json_real(m->o->base.net_gbs));
    json_object_set_new(extra, "net_latency_us", json_real(m->o->base.net_lat_us));
    cp_hw_note(m, "hwloc gives no port speed: NICs were given --net-gbs and --net-latency-us");
    if ((rc = cp_hw_add_node(m, id, "nic", model, extra)))
        return rc;
    return cp_hw_add_link(m, id, parent, "pcie", link_gbs(m, hw_gbs), CP_HW_LAT_PCIE);
}

/* A CXL Type-3 memory expander: capacity = its volatile + persistent
 * partitions (CXLRAMSize + CXLPMEMSize of its CXLMem OS devices), on a
 * cxl link at its PCIe rate (CXL runs on the PCIe physical layer). */
static int add_memdev(cp_hw *m, hwloc_obj_t pci, const char *parent, double hw_gbs)
{
    const char *model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
    json_t *extra = json_object();
    double bytes = 0;
    hwloc_obj_t os;
    char id[32];
    int rc;
    for (os = pci->io_first_child; os; os = os->next_sibling)
        bytes += info_bytes(os, "CXLRAMSize") + info_bytes(os, "CXLPMEMSize");
    snprintf(id, sizeof id, "mem%d", m->nmem++);
    if (bytes > 0)
        json_object_set_new(extra, "capacity_gb", json_real(cp_round(bytes / 1e9, 9)));
    else
        cp_hw_note(m, "a CXL memory device without CXLRAMSize/CXLPMEMSize has no capacity");
    cp_hw_note(m, "CXL memory devices have no mem_gbs or reduce_gbs in hwloc: add them by hand "
                  "(docs/formats.md) to let strategies use them");
    if ((rc = cp_hw_add_node(m, id, "memdev", model ? model : "CXL memory device", extra)))
        return rc;
    return cp_hw_add_link(m, id, parent, "cxl", link_gbs(m, hw_gbs), CP_HW_LAT_PCIE);
}

/* One I/O object below `parent` (a node id) reached over links whose
 * slowest hwloc rate is path_gbs.  Bridges with two or more kept devices
 * below become a pcie_switch (it stands for the link they share); others
 * are passed through, their rate kept on the path. */
static int walk_io(cp_hw *m, hwloc_obj_t obj, const char *parent, double path_gbs)
{
    double r = slowest(path_gbs, hw_linkspeed(obj));
    hwloc_obj_t c;
    int rc, kept = 0;
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
        switch (cp_hw_classify(obj)) {
        case HW_GPU: return add_gpu(m, obj, parent, r);
        case HW_NIC: return add_nic(m, obj, parent, r);
        case HW_MEMDEV: return add_memdev(m, obj, parent, r);
        case HW_NVSWITCH: return cp_hw_add_nvswitch(m, obj);
        default:
            cp_hw_note(m, "PCI devices that are neither GPUs, NICs, NVSwitches nor CXL memory "
                          "(storage, display, ...) were left out");
            return CP_OK;
        }
    }
    if (obj->type != HWLOC_OBJ_BRIDGE)
        return CP_OK;
    for (c = obj->io_first_child; c; c = c->next_sibling)
        kept += keeps(c);
    if (kept >= 2 && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
        char id[32];
        snprintf(id, sizeof id, "sw%d", m->nsw++);
        if ((rc = cp_hw_add_node(m, id, "pcie_switch", hwloc_obj_get_info_by_name(obj, "PCIDevice"),
                                 NULL)) ||
            (rc = cp_hw_add_link(m, id, parent, "pcie", link_gbs(m, r), CP_HW_LAT_PCIE)))
            return rc;
        for (c = obj->io_first_child; c; c = c->next_sibling)
            if ((rc = walk_io(m, c, id, 0)))
                return rc;
        return CP_OK;
    }
    for (c = obj->io_first_child; c; c = c->next_sibling) /* a host bridge or one port */
        if ((rc = walk_io(m, c, parent, obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI
                                            ? r : 0)))
            return rc;
    return CP_OK;
}

/* ---------------------------------------------------------------- sockets */

/* NCCL's socket-link bandwidth (src/graph/topo.h, as nccl_topo.c): Intel
 * Broadwell (model 79, 86) 6, Skylake and later 10, Sapphire Rapids (143)
 * 22, Emerald Rapids (207) 40; AMD 16; 10 when hwloc names no CPU. */
static double socket_gbs(hwloc_obj_t pkg)
{
    const char *vendor = hwloc_obj_get_info_by_name(pkg, "CPUVendor");
    const char *model = hwloc_obj_get_info_by_name(pkg, "CPUModelNumber");
    long mid = model ? strtol(model, NULL, 10) : 0;
    if (vendor && strstr(vendor, "AMD"))
        return 16;
    if (mid == 79 || mid == 86)
        return 6;
    return mid == 143 ? 22 : mid == 207 ? 40 : 10;
}

/* The cpu node I/O under obj belongs to: its Package; for I/O hwloc hangs
 * above the sockets (a NUMA group, the machine), the first Package inside
 * that object. */
static int cpu_of(cp_hw *m, hwloc_obj_t obj)
{
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(m->topo, HWLOC_OBJ_PACKAGE, obj);
    int k;
    if (!pkg && obj->type == HWLOC_OBJ_PACKAGE)
        pkg = obj;
    if (!pkg && obj->cpuset) {
        pkg = hwloc_get_next_obj_inside_cpuset_by_type(m->topo, obj->cpuset, HWLOC_OBJ_PACKAGE,
                                                       NULL);
        if (pkg)
            cp_hw_note(m, "I/O hwloc places above the sockets (under a NUMA group or the "
                          "machine) was attached to the first socket inside it");
    }
    for (k = 0; pkg && k < m->ncpu; k++)
        if (m->cpu[k] == pkg)
            return k;
    return 0;
}

/* Every normal object's I/O children, depth first. */
static int walk_normal(cp_hw *m, hwloc_obj_t obj)
{
    hwloc_obj_t c;
    int rc;
    for (c = obj->io_first_child; c; c = c->next_sibling) {
        char id[32];
        m->cur_cpu = cpu_of(m, obj);
        snprintf(id, sizeof id, "cpu%d", m->cur_cpu);
        if ((rc = walk_io(m, c, id, 0)))
            return rc;
    }
    for (c = obj->first_child; c; c = c->next_sibling)
        if ((rc = walk_normal(m, c)))
            return rc;
    return CP_OK;
}

/* One cpu node per Package (one for the machine when hwloc found none),
 * socket links between every pair. */
static int add_cpus(cp_hw *m)
{
    int n = hwloc_get_nbobjs_by_type(m->topo, HWLOC_OBJ_PACKAGE), k, j, rc;
    double gbs = 10;
    if (n > CP_HW_MAX_CPU)
        return cp_fail_at(m->e, CP_EINPUT, m->path, 0, 0, NULL, "more than %d sockets",
                          CP_HW_MAX_CPU);
    if (n <= 0) {
        cp_hw_note(m, "hwloc found no socket (Package): one cpu node stands for the machine");
        m->ncpu = 1;
        m->cpu[0] = NULL;
        return cp_hw_add_node(m, "cpu0", "cpu", NULL, NULL);
    }
    for (k = 0; k < n; k++) {
        char id[32];
        m->cpu[k] = hwloc_get_obj_by_type(m->topo, HWLOC_OBJ_PACKAGE, (unsigned)k);
        gbs = socket_gbs(m->cpu[k]);
        snprintf(id, sizeof id, "cpu%d", k);
        if ((rc = cp_hw_add_node(m, id, "cpu",
                                 hwloc_obj_get_info_by_name(m->cpu[k], "CPUModel"), NULL)))
            return rc;
    }
    m->ncpu = n;
    for (k = 0; k < n; k++)
        for (j = k + 1; j < n; j++) {
            char a[32], b[32];
            snprintf(a, sizeof a, "cpu%d", k);
            snprintf(b, sizeof b, "cpu%d", j);
            if ((rc = cp_hw_add_link(m, a, b, "socket", gbs, CP_HW_LAT_SOCKET)))
                return rc;
        }
    if (n > 1)
        cp_hw_note(m, "every pair of sockets is joined by one socket link at NCCL's rate for the "
                      "CPU model");
    return CP_OK;
}

/* NUMA nodes are not devices in coarse-plan: say what hwloc saw. */
static void note_numa(cp_hw *m)
{
    int n = hwloc_get_nbobjs_by_type(m->topo, HWLOC_OBJ_NUMANODE), k, cpuless = 0;
    double bytes = 0;
    char text[200];
    for (k = 0; k < n; k++) {
        hwloc_obj_t numa = hwloc_get_obj_by_type(m->topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
        bytes += (double)numa->attr->numanode.local_memory;
        cpuless += hwloc_bitmap_iszero(numa->cpuset);
    }
    snprintf(text, sizeof text, "%d NUMA node%s (%.1f GB of host memory) %s here",
             n, n == 1 ? "" : "s", bytes / 1e9, n == 1 ? "is not a device" : "are not devices");
    cp_hw_note(m, text);
    if (cpuless)
        cp_hw_note(m, "NUMA nodes without CPUs (CXL or HBM memory the kernel onlined) are not "
                      "memory devices here; the CXL devices are");
}

/* ---------------------------------------------------------------- driver */

/* "N things" with the plural when N is not 1. */
static const char *counted(char *buf, size_t cap, int n, const char *word)
{
    snprintf(buf, cap, "%d %s%s", n, word, n == 1 ? "" : "s");
    return buf;
}

/* No GPU: no command accepts such a topology (the loader wants a GPU), so
 * the import stops, at the file's <topology> element, saying what it
 * found. */
static int fail_no_gpu(cp_hw *m)
{
    char s[32], n[32], d[48];
    return cp_fail_at(m->e, CP_EINPUT, m->path, m->root_line,
                      m->root_col, NULL,
                      "no GPU found: hwloc lists %s, %s, %s and no GPU; coarse-plan's "
                      "commands need at least one, so nothing is written (docs/import.md, "
                      "hwloc)",
                      counted(s, sizeof s, m->ncpu, "socket"), counted(n, sizeof n, m->nnic, "NIC"),
                      counted(d, sizeof d, m->nmem, "CXL memory device"));
}

/* Walk a loaded topology into *out; `source` says where it came from,
 * `name_from` gives the default name (its base name). */
static int convert(cp_hw *m, const char *source, const char *name_from, json_t **out)
{
    char name[256], full[2600];
    json_t *t;
    int rc;
    m->nodes = json_array();
    m->links = json_array();
    if (!m->nodes || !m->links)
        rc = cp_fail(m->e, CP_EINTERNAL, "out of memory");
    else if ((rc = add_cpus(m)) == CP_OK && (rc = walk_normal(m, hwloc_get_root_obj(m->topo))) ==
             CP_OK)
        rc = cp_hw_nvlinks(m);
    if (rc) {
        json_decref(m->nodes);
        json_decref(m->links);
        return rc;
    }
    note_numa(m);
    if (m->ngpu == 0 && m->o->need_gpu) {
        json_decref(m->nodes);
        json_decref(m->links);
        return fail_no_gpu(m);
    }
    if (m->ngpu == 0)
        cp_hw_note(m, "no GPUs were found: this topology lists the CPUs, PCIe tree, NICs and "
                      "memory devices only, and commands that need a GPU refuse it");
    if (m->o->base.name)
        snprintf(name, sizeof name, "%s", m->o->base.name);
    else
        cp_base_name(name_from, 1, name, sizeof name);
    snprintf(full, sizeof full, "imported from %s by coarse-plan import hwloc (docs/import.md)%s%s",
             source, m->notes[0] ? ". Assumed: " : "", m->notes);
    t = json_object();
    json_object_set_new(t, "name", json_string(name));
    json_object_set_new(t, "note", json_string(full));
    json_object_set_new(t, "nodes", m->nodes);
    json_object_set_new(t, "links", m->links);
    *out = t;
    return CP_OK;
}

static int start(cp_hw *m, const cp_hwloc_opts *o, const char *path, cp_err *e)
{
    memset(m, 0, sizeof *m);
    m->o = o;
    m->e = e;
    m->path = path;
    if (hwloc_topology_init(&m->topo) != 0)
        return cp_fail(e, CP_EINTERNAL, "hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(m->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    return CP_OK;
}

/* The text hwloc is given: the file itself, or, for a 3.x file and a 2.x
 * libhwloc (which refuses versions above 2), a copy whose root says 2.0.
 * The 3.x changes that matter here (osdev_type as bit flags, infos at the
 * top) are read around: OS devices by subtype and name. */
static char *as_hwloc_reads(cp_hw *m, const cp_xml *root, const char *text, size_t len)
{
    const char *v = cp_xml_attr(root, "version");
    char *copy, *at;
    if (!v || strtol(v, NULL, 10) < 3 || HWLOC_API_VERSION >= 0x00030000)
        return NULL;
    if (!(copy = malloc(len + 1)))
        return NULL;
    memcpy(copy, text, len + 1);
    at = strstr(copy, "<topology");
    at = at ? strstr(at, "version=") : NULL;
    if (at && (at[9] == '3' || (at[9] >= '4' && at[9] <= '9'))) {
        at[9] = '2';
        cp_hw_note(m, "the file is hwloc 3.x XML; this libhwloc reads 2.x, so it was loaded as "
                      "2.0 with OS devices recognised by subtype and name");
    }
    return copy;
}

/* libhwloc 2.9 trusts that every object that is not I/O or Misc carries
 * its four sets: a NUMANode without complete_nodeset makes
 * hwloc_topology_load read a NULL bitmap and crash (found by fuzz_hwloc,
 * tests/data/bad/hwloc/numa-without-complete-nodeset.xml).  Every lstopo
 * file writes them, so their absence is refused here, at the element. */
static int check_sets(const char *path, const cp_xml *x, cp_err *e)
{
    static const char *const sets[] = {"cpuset", "complete_cpuset", "nodeset",
                                       "complete_nodeset"};
    static const char *const io[] = {"Bridge", "PCIDev", "OSDev", "Misc"};
    const char *type = cp_xml_attr(x, "type");
    size_t k;
    int i, rc, is_io = 0;
    for (k = 0; type && k < sizeof io / sizeof io[0]; k++)
        is_io |= strcmp(type, io[k]) == 0;
    for (k = 0; strcmp(x->name, "object") == 0 && !is_io && k < sizeof sets / sizeof sets[0]; k++)
        if (!cp_xml_attr(x, sets[k]))
            return cp_fail_at(e, CP_EINPUT, path, x->line, x->col, NULL,
                              "<object type=\"%.40s\">: no %s (hwloc needs cpuset, "
                              "complete_cpuset, nodeset and complete_nodeset on every object "
                              "that is not I/O)", type ? type : "", sets[k]);
    for (i = 0; i < x->nkid; i++)
        if ((rc = check_sets(path, x->kid[i], e)))
            return rc;
    return CP_OK;
}

int cp_import_hwloc(const char *path, const char *text, size_t len, const cp_hwloc_opts *o,
                    json_t **out, cp_err *e)
{
    cp_xml *root = NULL;
    cp_hw m;
    char *copy = NULL;
    int rc;
    *out = NULL;
    if ((rc = cp_xml_parse_ex(path, text, len, CP_XML_EXTERNAL_DOCTYPE, &root, e)))
        return rc;
    if (strcmp(root->name, "topology") != 0) {
        rc = cp_fail_at(e, CP_EINPUT, path, root->line, root->col, NULL,
                        "expected an hwloc topology (<topology>), found <%s>", root->name);
        cp_xml_free(root);
        return rc;
    }
    if ((rc = check_sets(path, root, e))) {
        cp_xml_free(root);
        return rc;
    }
    if ((rc = start(&m, o, path, e))) {
        cp_xml_free(root);
        return rc;
    }
    m.root_line = root->line;
    m.root_col = root->col;
    copy = as_hwloc_reads(&m, root, text, len);
    if (len + 1 > (size_t)0x7fffffff)
        rc = cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "too large for libhwloc (2 GB)");
    else if (hwloc_topology_set_xmlbuffer(m.topo, copy ? copy : text, (int)len + 1) != 0 ||
             hwloc_topology_load(m.topo) != 0)
        rc = cp_fail_at(e, CP_EINPUT, path, root->line, root->col, NULL,
                        "libhwloc could not load this topology (not hwloc XML it can read)");
    else
        rc = convert(&m, path, path, out);
    hwloc_topology_destroy(m.topo);
    free(copy);
    cp_xml_free(root);
    return rc;
}

int cp_import_hwloc_this_machine(const cp_hwloc_opts *o, json_t **out, cp_err *e)
{
    cp_hw m;
    int rc;
    *out = NULL;
    if ((rc = start(&m, o, "this machine", e)))
        return rc;
    /* hwloc's "pci" component (libpciaccess) leaks a block per load on
     * Debian 12 (valgrind); Linux's own sysfs reader finds the same PCI
     * devices and link speeds, so the pci component is left out */
    hwloc_topology_set_components(m.topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    if (hwloc_topology_load(m.topo) != 0)
        rc = cp_fail(e, CP_EINTERNAL, "libhwloc could not read this machine's topology");
    else
        rc = convert(&m, "this machine through libhwloc", "this-machine", out);
    hwloc_topology_destroy(m.topo);
    return rc;
}

int cp_hwloc_count_gpus(const json_t *topo)
{
    const json_t *nodes = json_object_get(topo, "nodes"), *n;
    size_t k;
    int count = 0;
    json_array_foreach(nodes, k, n) {
        const char *kind = json_string_value(json_object_get(n, "kind"));
        count += kind && strcmp(kind, "gpu") == 0;
    }
    return count;
}
