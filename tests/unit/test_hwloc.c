/*
 * test_hwloc.c - the hwloc importer (src/import/hwloc*.c) on the four
 * hwloc test-suite files in ../shared/data/topologies/hwloc/ and on small
 * files written here.  Every expected count is read off the XML by hand
 * (the comment beside it says where); rates follow the importer's rule,
 * hwloc GB/s x (3/32) / (128/130 / 8) = x 0.76171875 (docs/import.md).
 */
#include "testutil.h"

#include "core/fileio.h"
#include "import/hwloc.h"
#include "load/load.h"

#define HWLOC_DIR SHARED_DATA "/topologies/hwloc/"

/* Nodes of `kind` (any when NULL). */
static int nodes_of(const json_t *t, const char *kind)
{
    const json_t *n;
    size_t i;
    int count = 0;
    json_array_foreach(json_object_get(t, "nodes"), i, n)
        count += !kind || strcmp(json_string_value(json_object_get(n, "kind")), kind) == 0;
    return count;
}

/* Links of `kind` whose gbs is within 5e-5 of gbs (any rate when gbs < 0). */
static int links_of(const json_t *t, const char *kind, double gbs)
{
    const json_t *l;
    size_t i;
    int count = 0;
    json_array_foreach(json_object_get(t, "links"), i, l) {
        double g = json_real_value(json_object_get(l, "gbs"));
        count += strcmp(json_string_value(json_object_get(l, "kind")), kind) == 0 &&
                 (gbs < 0 || fabs(g - gbs) < 5e-5);
    }
    return count;
}

/* Sum of the gbs of the `kind` links touching node id. */
static double gbs_at(const json_t *t, const char *id, const char *kind)
{
    const json_t *l;
    size_t i;
    double sum = 0;
    json_array_foreach(json_object_get(t, "links"), i, l)
        if (strcmp(json_string_value(json_object_get(l, "kind")), kind) == 0 &&
            (strcmp(json_string_value(json_object_get(l, "a")), id) == 0 ||
             strcmp(json_string_value(json_object_get(l, "b")), id) == 0))
            sum += json_real_value(json_object_get(l, "gbs"));
    return sum;
}

static const char *note_of(const json_t *t)
{
    return json_string_value(json_object_get(t, "note"));
}

/* Import one file of HWLOC_DIR; o NULL: defaults.  Without the shared data
 * the calling test is reported SKIPPED (skip() leaves it). */
static json_t *import_file(const char *name, const cp_hwloc_opts *o)
{
    char path[512], *text;
    size_t len;
    json_t *t = NULL;
    cp_hwloc_opts d;
    cp_err e;
    if (!have_shared_data()) {
        print_message("reference data absent: %s not imported\n", name);
        skip();
        return NULL;
    }
    cp_hwloc_opts_default(&d);
    snprintf(path, sizeof path, "%s%s", HWLOC_DIR, name);
    assert_int_equal(cp_read_file(path, &text, &len, &e), CP_OK);
    if (cp_import_hwloc(path, text, len, o ? o : &d, &t, &e) != CP_OK)
        fail_msg("%s: %s", name, e.msg);
    free(text);
    return t;
}

/* The topology loader accepts the converted JSON (what import writes). */
static void assert_loads(const json_t *t)
{
    char *json = json_dumps(t, JSON_REAL_PRECISION(12));
    cp_jdoc d;
    cp_topo *topo = NULL;
    cp_err e;
    assert_int_equal(cp_jdoc_load_text(&d, "t.json", json, strlen(json), &e), CP_OK);
    if (cp_topo_load_doc(&d, &topo, &e) != CP_OK)
        fail_msg("loader: %s", e.msg);
    cp_topo_free(topo);
    cp_jdoc_free(&d);
    free(json);
}

/* nvidiaDGX2.xml: 2 Packages (Xeon Platinum 8174, CPUModelNumber 85:
 * NCCL's Skylake 10 GB/s); 16 PCIDev of class 0302 [10de:1db8], each with an
 * NVML OS device "Tesla V100-SXM3-32GB-H"; 12 PCIDev with subtype NVSwitch,
 * 6 under each Package; no class 02xx device.  Each Package has two
 * HostBridges; under each, the root port leads to a PLX 9781 upstream port
 * with two branches that hold GPUs, each branch a second PLX with two GPUs:
 * 3 switches per HostBridge, 12 in all.  Every bridge and GPU on those paths
 * reports 15.753846 GB/s (Gen3 x16): 12.0 GB/s, on 16 GPU links and 12
 * switch uplinks = 28 PCIe links.  The NVLinkBandwidth matrix (28 objects:
 * 16 NVML devices, 12 NVSwitches) gives 25000 MB/s from each GPU to each of
 * the 6 switches of its socket: 16 x 6 = 96 NVLinks of 25 GB/s, 150 GB/s per
 * GPU; the two boards' switch k are one node: 6 nvswitch nodes. */
static void test_dgx2(void **state)
{
    json_t *t;
    (void)state;
    if (!(t = import_file("nvidiaDGX2.xml", NULL)))
        return;
    assert_int_equal(nodes_of(t, "gpu"), 16);
    assert_int_equal(nodes_of(t, "cpu"), 2);
    assert_int_equal(nodes_of(t, "pcie_switch"), 12);
    assert_int_equal(nodes_of(t, "nvswitch"), 6); /* 12 chips, two per node */
    assert_int_equal(nodes_of(t, "nic"), 0);
    assert_int_equal(nodes_of(t, "memdev"), 0);
    assert_int_equal(links_of(t, "nvlink", 25.0), 96);
    assert_int_equal(links_of(t, "nvlink", -1), 96);
    assert_int_equal(links_of(t, "pcie", 12.0), 28);
    assert_int_equal(links_of(t, "pcie", -1), 28);
    assert_int_equal(links_of(t, "socket", 10.0), 1);
    assert_true(fabs(gbs_at(t, "gpu0", "nvlink") - 150.0) < 1e-9); /* 6 x 25 */
    assert_true(fabs(gbs_at(t, "gpu15", "nvlink") - 150.0) < 1e-9);
    assert_true(fabs(gbs_at(t, "nvsw0", "nvlink") - 400.0) < 1e-9); /* 16 GPUs x 25 */
    assert_non_null(strstr(note_of(t), "non-blocking trunk"));
    /* V100-SXM3: the V100 generation, SXM: 80 SMs, no FP8 */
    {
        const json_t *nodes = json_object_get(t, "nodes"), *g = NULL;
        size_t i;
        for (i = 0; i < json_array_size(nodes) && !g; i++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(nodes, i), "id")),
                        "gpu0"))
                g = json_array_get(nodes, i);
        assert_non_null(g);
        assert_int_equal(json_integer_value(json_object_get(g, "sms")), 80);
        assert_null(json_object_get(g, "tflops_fp8"));
    }
    assert_non_null(strstr(note_of(t), "hwloc 3.x"));
    assert_loads(t);
    json_decref(t);
}

/* cxlmem+dax.v3.xml: one Package; PCIDev class 0502 [8086:0d93] at
 * 11:00.0, 12:00.0, 15:00.0, 16:00.0 with CXLMem OS devices mem2
 * (CXLRAMSize 262144KiB), mem0 (CXLPMEMSize 262144KiB), mem3 (RAM 262144KiB)
 * and mem1 (RAM and PMEM 262144KiB each): 262144 x 1024 = 268435456 bytes =
 * 0.268435456 GB, twice that for the last.  The bridges: 0d:00.0 has two
 * branches holding CXL devices (0e:00.0 and 0e:01.0), and 0f:00.0 and
 * 13:00.0 two devices each: 3 switches.  One network device (class 0200
 * [8086:10d3]), no GPU (the 0300 device is QEMU's 1234:1111 display).  All
 * rates are 0.25 GB/s (Gen1 x1): 0.25 x 0.76171875 = 0.19043 -> 0.1904 on
 * 4 cxl links and on the NIC's and 3 switches' 4 PCIe links. */
static void test_cxl(void **state)
{
    const json_t *n;
    json_t *t;
    size_t i;
    double cap[4];
    int k = 0;
    (void)state;
    if (!(t = import_file("cxlmem+dax.v3.xml", NULL)))
        return;
    assert_int_equal(nodes_of(t, "memdev"), 4);
    assert_int_equal(nodes_of(t, "gpu"), 0);
    assert_int_equal(nodes_of(t, "cpu"), 1);
    assert_int_equal(nodes_of(t, "nic"), 1);
    assert_int_equal(nodes_of(t, "pcie_switch"), 3);
    assert_int_equal(links_of(t, "cxl", 0.1904), 4);
    assert_int_equal(links_of(t, "pcie", 0.1904), 4);
    json_array_foreach(json_object_get(t, "nodes"), i, n)
        if (strcmp(json_string_value(json_object_get(n, "kind")), "memdev") == 0)
            cap[k++] = json_real_value(json_object_get(n, "capacity_gb"));
    assert_true(fabs(cap[0] - 0.268435456) < 1e-12); /* 11:00.0, mem2 */
    assert_true(fabs(cap[1] - 0.268435456) < 1e-12); /* 12:00.0, mem0 */
    assert_true(fabs(cap[2] - 0.268435456) < 1e-12); /* 15:00.0, mem3 */
    assert_true(fabs(cap[3] - 0.536870912) < 1e-12); /* 16:00.0, mem1: RAM + PMEM */
    assert_non_null(strstr(note_of(t), "no GPUs were found"));
    json_decref(t);
}

/* Issue 24, item 9: `import hwloc` of a machine without GPUs wrote a
 * topology every command then refused, and exited 0.  The command sets
 * need_gpu: the CXL host file is refused with exit 2 at its <topology>
 * element (line 3, column 1: the file's third line is `<topology
 * version="3.0">`), the message counting what it found (1 socket, 1 NIC,
 * 4 CXL memory devices, as test_cxl reads them off the XML). */
static void test_no_gpu_refused(void **state)
{
    char path[512], *text;
    size_t len;
    json_t *t = NULL;
    cp_hwloc_opts o;
    cp_err e;
    (void)state;
    if (!have_shared_data())
        skip(); /* reported SKIPPED: the file is in ../shared/data */
    cp_hwloc_opts_default(&o);
    o.need_gpu = 1;
    snprintf(path, sizeof path, "%s%s", HWLOC_DIR, "cxlmem+dax.v3.xml");
    assert_int_equal(cp_read_file(path, &text, &len, &e), CP_OK);
    assert_int_equal(cp_import_hwloc(path, text, len, &o, &t, &e), CP_EINPUT);
    assert_null(t);
    assert_string_equal(e.file, path);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.col, 1);
    assert_non_null(strstr(e.msg, "no GPU"));
    assert_non_null(strstr(e.msg, "1 socket, 1 NIC, 4 CXL memory devices"));
    free(text);
}

/* power8gpudistances.xml: 2 Packages; 4 PCIDev class 0302 [10de:15f9] with
 * CUDA, OpenCL and NVML OS devices "Tesla P100-SXM2-16GB", each behind its
 * own root port (one device below: no switch) of 7.876923 GB/s (Gen3 x8)
 * while the GPU says 15.753846: the slower, 7.876923 x 0.76171875 = 6.0.
 * The NVLinkBandwidth matrix (6 objects: nvml0-3 and the 2 Packages) has
 * 40000 MB/s between GPU0-GPU1, GPU2-GPU3, GPU0/1-Package 0 and
 * GPU2/3-Package 1: 6 NVLinks of 40 GB/s, 80 GB/s per GPU. */
static void test_power8(void **state)
{
    json_t *t;
    (void)state;
    if (!(t = import_file("power8gpudistances.xml", NULL)))
        return;
    assert_int_equal(nodes_of(t, "gpu"), 4);
    assert_int_equal(nodes_of(t, "cpu"), 2);
    assert_int_equal(nodes_of(t, "pcie_switch"), 0);
    assert_int_equal(nodes_of(t, "nvswitch"), 0);
    assert_int_equal(nodes_of(t, "nic"), 0);
    assert_int_equal(links_of(t, "nvlink", 40.0), 6);
    assert_int_equal(links_of(t, "pcie", 6.0), 4);
    assert_true(fabs(gbs_at(t, "gpu0", "nvlink") - 80.0) < 1e-9);
    assert_true(fabs(gbs_at(t, "cpu0", "nvlink") - 80.0) < 1e-9); /* GPU0 and GPU1 */
    assert_non_null(strstr(note_of(t), "NVLinkBandwidth"));
    assert_true(fabs(json_real_value(json_object_get(json_array_get(json_object_get(t, "nodes"),
                                                                    2), "capacity_gb")) -
                     17.071734784) < 1e-12); /* nodes: cpu0, cpu1, then gpu0 */
    assert_loads(t);
    json_decref(t);
}

/* 96em64t-4n4d3ca2co-pci.xml: 4 NUMA Groups of 4 Packages (16); under each
 * Group one HostBridge whose 1c.0 root port holds a dual-port Broadcom
 * BCM5709 (class 0200, two functions): 4 switches, 8 NICs; the SAS, IDE
 * and ES1000 display devices are left out; no GPU.  The file has no link
 * speeds: every PCIe link is 24 GB/s, 8 NIC + 4 uplinks = 12.  Sockets:
 * 16 x 15 / 2 = 120 links of 10 GB/s. */
static void test_96em64t(void **state)
{
    json_t *t;
    (void)state;
    if (!(t = import_file("96em64t-4n4d3ca2co-pci.xml", NULL)))
        return;
    assert_int_equal(nodes_of(t, "cpu"), 16);
    assert_int_equal(nodes_of(t, "nic"), 8);
    assert_int_equal(nodes_of(t, "pcie_switch"), 4);
    assert_int_equal(nodes_of(t, "gpu"), 0);
    assert_int_equal(links_of(t, "pcie", 24.0), 12);
    assert_int_equal(links_of(t, "socket", 10.0), 120);
    assert_non_null(strstr(note_of(t), "no GPUs were found"));
    json_decref(t);
}

/* A hand-written hwloc 2.0 file: one socket; a bridge of 31.507692 GB/s
 * (Gen4 x16) with 8 NVIDIA 3D devices [10de:20b0] (no OS devices, so no
 * GPUModel) and a bridge with 6 NVIDIA class-0680 devices (NVSwitches).
 * Unnamed GPUs, so --gpu a100: 12 NVLinks per GPU over 6 switches = 2 each,
 * 2 x 25 = 50 GB/s: 48 NVLinks; PCIe 31.507692 x 0.76171875 = 24.0 on 8 GPU
 * links and the switch uplink. */
static char *hgx_file(size_t *len)
{
    static const char cs[] = "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
                             "complete_nodeset=\"0x1\"";
    char *x = malloc(8192);
    size_t n = 0;
    int k;
    n += (size_t)snprintf(x + n, 8192 - n,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" %s "
        "allowed_cpuset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
        "<object type=\"Package\" os_index=\"0\" %s gp_index=\"2\">\n"
        "<object type=\"NUMANode\" os_index=\"0\" %s gp_index=\"3\" local_memory=\"1000000000\"/>\n"
        "<object type=\"Core\" os_index=\"0\" %s gp_index=\"4\"><object type=\"PU\" "
        "os_index=\"0\" %s gp_index=\"5\"/></object>\n"
        "<object type=\"Bridge\" gp_index=\"10\" bridge_type=\"0-1\" depth=\"0\" "
        "bridge_pci=\"0000:[00-20]\">\n<object type=\"Bridge\" gp_index=\"11\" "
        "bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[01-10]\" pci_busid=\"0000:00:01.0\" "
        "pci_type=\"0604 [1000:c010] [0000:0000] 00 00\" pci_link_speed=\"31.507692\">\n",
        cs, cs, cs, cs, cs);
    for (k = 0; k < 8; k++)
        n += (size_t)snprintf(x + n, 8192 - n, "<object type=\"PCIDev\" gp_index=\"%d\" "
                              "pci_busid=\"0000:%02x:00.0\" pci_type=\"0302 [10de:20b0] "
                              "[0000:0000] a1 00\" pci_link_speed=\"31.507692\"/>\n", 20 + k, 1 + k);
    n += (size_t)snprintf(x + n, 8192 - n, "</object>\n<object type=\"Bridge\" gp_index=\"12\" "
                          "bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[11-20]\" "
                          "pci_busid=\"0000:00:02.0\" pci_type=\"0604 [1000:c010] [0000:0000] "
                          "00 00\" pci_link_speed=\"1.0\">\n");
    for (k = 0; k < 6; k++)
        n += (size_t)snprintf(x + n, 8192 - n, "<object type=\"PCIDev\" gp_index=\"%d\" "
                              "pci_busid=\"0000:%02x:00.0\" pci_type=\"0680 [10de:1af1] "
                              "[0000:0000] a1 00\" pci_link_speed=\"1.0\"/>\n", 40 + k, 0x11 + k);
    n += (size_t)snprintf(x + n, 8192 - n,
                          "</object>\n</object>\n</object>\n</object>\n</topology>\n");
    *len = n;
    return x;
}

static void test_nvswitch_fabric(void **state)
{
    cp_hwloc_opts o;
    size_t len;
    char *x = hgx_file(&len);
    json_t *t = NULL;
    cp_err e;
    (void)state;
    cp_hwloc_opts_default(&o);
    /* no generation: the fabric's NVLink rate is unknown */
    assert_int_equal(cp_import_hwloc("hgx.xml", x, len, &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--gpu"));
    assert_null(t);
    o.gpu = "a100";
    assert_int_equal(cp_import_hwloc("hgx.xml", x, len, &o, &t, &e), CP_OK);
    assert_int_equal(nodes_of(t, "gpu"), 8);
    assert_int_equal(nodes_of(t, "nvswitch"), 6);
    assert_int_equal(nodes_of(t, "pcie_switch"), 1);
    assert_int_equal(links_of(t, "nvlink", 50.0), 48);
    assert_int_equal(links_of(t, "pcie", 24.0), 9);
    assert_true(fabs(gbs_at(t, "gpu3", "nvlink") - 300.0) < 1e-9); /* 12 x 25 */
    assert_loads(t);
    json_decref(t);
    o.nvlink_gbs = 20; /* --nvlink-gbs: 2 links x 20 */
    assert_int_equal(cp_import_hwloc("hgx.xml", x, len, &o, &t, &e), CP_OK);
    assert_int_equal(links_of(t, "nvlink", 40.0), 48);
    json_decref(t);
    free(x);
}

/* Not well formed, not hwloc, not loadable: CP_EINPUT with a position. */
static void test_errors(void **state)
{
    static const char nccl[] = "<system version=\"1\">\n<cpu/>\n</system>\n";
    static const char cut[] = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
                              "<object type=\"Machine\" cpuset=\"0x1";
    static const char bogus[] = "<topology version=\"2.0\">\n<object type=\"Bogus\" cpuset=\"0x1\" "
                                "complete_cpuset=\"0x1\" nodeset=\"0x1\" "
                                "complete_nodeset=\"0x1\"/>\n</topology>\n";
    static const char nosets[] = "<topology version=\"2.0\">\n<object type=\"Machine\">\n"
                                 "<object type=\"NUMANode\" cpuset=\"0x1\"/>\n</object>\n"
                                 "</topology>\n";
    static const char internal_dtd[] = "<!DOCTYPE topology [<!ENTITY a \"b\">]>\n<topology/>\n";
    cp_hwloc_opts o;
    json_t *t = NULL;
    cp_err e;
    (void)state;
    cp_hwloc_opts_default(&o);
    assert_int_equal(cp_import_hwloc("n.xml", nccl, strlen(nccl), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "expected an hwloc topology"));
    assert_int_equal(e.line, 1); /* the root element */
    assert_int_equal(cp_import_hwloc("c.xml", cut, strlen(cut), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "unterminated attribute value"));
    assert_int_equal(e.line, 3); /* the end of the text, inside the value */
    assert_int_equal(cp_import_hwloc("b.xml", bogus, strlen(bogus), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "libhwloc could not load"));
    assert_int_equal(e.line, 1);
    /* the Machine lacks all four sets: refused at it (line 2) before libhwloc */
    assert_int_equal(cp_import_hwloc("s.xml", nosets, strlen(nosets), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "no cpuset"));
    assert_int_equal(e.line, 2);
    assert_int_equal(cp_import_hwloc("d.xml", internal_dtd, strlen(internal_dtd), &o, &t, &e),
                     CP_EINPUT);
    assert_non_null(strstr(e.msg, "DTDs"));
    assert_null(t);
    assert_true(cp_hwloc_gpu_known("h100"));
    assert_false(cp_hwloc_gpu_known("t4"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgx2),   cmocka_unit_test(test_cxl),
        cmocka_unit_test(test_power8), cmocka_unit_test(test_96em64t),
        cmocka_unit_test(test_no_gpu_refused),
        cmocka_unit_test(test_nvswitch_fabric), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
