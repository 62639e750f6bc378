/*
 * test_import.c - the XML reader (libexpat) and the NCCL topology importer, on small
 * hand-written files (expected values derived beside each assertion) and on
 * the reference dumps when they are present.
 */
#include "testutil.h"

#include "import/gpu_memory.h"
#include "import/nccl_topo.h"
#include "import/xml.h"
#include "core/fileio.h"
#include "load/load.h"

static void test_xml_basics(void **state)
{
    const char *text = "<?xml version=\"1.0\"?>\n<!-- a comment -->\n<a x='1 &amp; 2'>\n"
                       "  <b y=\"&lt;3\"/>\n  text is ignored\n  <c><d/></c>\n</a>\n";
    cp_xml *root;
    cp_err e;
    (void)state;
    assert_int_equal(cp_xml_parse("t.xml", text, strlen(text), &root, &e), CP_OK);
    assert_string_equal(root->name, "a");
    assert_string_equal(cp_xml_attr(root, "x"), "1 & 2");
    assert_int_equal(root->nkid, 2);
    assert_string_equal(cp_xml_attr(root->kid[0], "y"), "<3");
    assert_int_equal(root->kid[0]->line, 4); /* <b .../> is on line 4, column 3 */
    assert_int_equal(root->kid[0]->col, 3);
    assert_int_equal(root->kid[1]->nkid, 1);
    assert_null(cp_xml_attr(root, "nope"));
    cp_xml_free(root);
}

/* What expat adds over the replaced reader: character references and a
 * declared Latin-1 encoding, both decoded to UTF-8 ("&#65;" is 'A'; Latin-1
 * 0xE9 is U+00E9, UTF-8 0xC3 0xA9). */
static void test_xml_expat(void **state)
{
    const char *text = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"
                       "<a x='&#65;&#x42;' y='caf\xe9'/>\n";
    cp_xml *root;
    cp_err e;
    (void)state;
    assert_int_equal(cp_xml_parse("t.xml", text, strlen(text), &root, &e), CP_OK);
    assert_string_equal(cp_xml_attr(root, "x"), "AB");
    assert_string_equal(cp_xml_attr(root, "y"), "caf\xc3\xa9");
    assert_int_equal(root->line, 2); /* the element starts line 2 */
    cp_xml_free(root);
}

static void expect_xml_error(const char *text, const char *needle, int line)
{
    cp_xml *root;
    cp_err e;
    assert_int_equal(cp_xml_parse("t.xml", text, strlen(text), &root, &e), CP_EINPUT);
    assert_null(root);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' lacks '%s'", e.msg, needle);
    assert_int_equal(e.line, line);
}

static void test_xml_errors(void **state)
{
    (void)state;
    expect_xml_error("<a>\n<b>\n</a>", "end tag does not match", 3);
    expect_xml_error("<a x=1/>", "quoted attribute value", 1);
    expect_xml_error("<a>\n  <b/>", "missing end tag", 2);
    expect_xml_error("<a/><b/>", "content after the root element", 1);
    expect_xml_error("<a x='&bogus;'/>", "unknown entity", 1);
    expect_xml_error("<!DOCTYPE a><a/>", "DTDs", 1);
    expect_xml_error("", "no element", 1);
    expect_xml_error("<cpu numaid=\"0\"\n numaid=\"1\"/>", "repeated attribute", 2);
    /* a DOCTYPE is refused before its entities are read: no expansion */
    expect_xml_error("<!DOCTYPE a [<!ENTITY x \"y\">]>\n<a v='&x;'/>", "DTDs", 1);
    expect_xml_error("<a>\n<![CDATA[x]]></a>", "CDATA", 2);
    expect_xml_error("<a>\n<b x='1'>\n", "missing end tag for: b", 3); /* at the end */
}

/* Two Intel Skylake sockets (modelid 85: NCCL charges 10 GB/s), a Gen4 x16
 * switch (16 x 16 GT/s x 3/32 = 24 GB/s) under socket 0 with two A100s
 * (sm 80) and a 200 Gb/s NIC (200000 Mb/s / 8000 = 25 GB/s), the GPUs
 * joined by 12 NVLinks (12 x 25 = 300 GB/s), and GPU 1 listing an NVLink to
 * itself, which must be dropped. */
static const char small[] =
    "<system version=\"1\">\n"
    " <cpu numaid=\"0\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n"
    "  <pci busid=\"0000:01:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "   <pci busid=\"0000:02:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "    <gpu dev=\"0\" sm=\"80\" rank=\"0\"><nvlink target=\"0000:03:00.0\" count=\"12\"/></gpu>\n"
    "   </pci>\n"
    "   <pci busid=\"0000:03:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "    <gpu dev=\"1\" sm=\"80\" rank=\"1\"><nvlink target=\"0000:02:00.0\" count=\"12\"/>"
    "<nvlink target=\"0000:03:00.0\" count=\"12\"/></gpu>\n"
    "   </pci>\n"
    "   <pci busid=\"0000:04:00.0\" class=\"0x020700\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "    <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" latency=\"0.000000\"/></nic>\n"
    "   </pci>\n"
    "  </pci>\n"
    " </cpu>\n"
    " <cpu numaid=\"1\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\"/>\n"
    "</system>\n";

/* The link between two node ids, or NULL. */
static const json_t *link_between(const json_t *topo, const char *a, const char *b)
{
    size_t i;
    const json_t *links = json_object_get(topo, "links");
    for (i = 0; i < json_array_size(links); i++) {
        const json_t *l = json_array_get(links, i);
        const char *x = json_string_value(json_object_get(l, "a"));
        const char *y = json_string_value(json_object_get(l, "b"));
        if ((!strcmp(x, a) && !strcmp(y, b)) || (!strcmp(x, b) && !strcmp(y, a)))
            return l;
    }
    return NULL;
}

/* The node with id `id`, or NULL. */
static const json_t *node_of(const json_t *topo, const char *id)
{
    size_t i;
    const json_t *nodes = json_object_get(topo, "nodes");
    for (i = 0; i < json_array_size(nodes); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(nodes, i), "id")), id))
            return json_array_get(nodes, i);
    return NULL;
}

static double gbs_of(const json_t *l)
{
    return json_number_value(json_object_get(l, "gbs"));
}

/* Nodes of `kind` in an imported topology (any kind when NULL, counting
 * those with reduce_gbs when `reducing`). */
static int count_nodes(const json_t *t, const char *kind, int reducing)
{
    const json_t *nodes = json_object_get(t, "nodes");
    size_t i;
    int n = 0;
    for (i = 0; i < json_array_size(nodes); i++) {
        const json_t *x = json_array_get(nodes, i);
        if ((!kind || !strcmp(json_string_value(json_object_get(x, "kind")), kind)) &&
            (!reducing || json_object_get(x, "reduce_gbs")))
            n++;
    }
    return n;
}

/* NVLink links in an imported topology, and the GB/s of those from node a
 * (summed into *from_a when not NULL). */
static int count_nvlinks(const json_t *t, const char *a, double *from_a)
{
    const json_t *links = json_object_get(t, "links");
    size_t i;
    int n = 0;
    if (from_a)
        *from_a = 0;
    for (i = 0; i < json_array_size(links); i++) {
        const json_t *l = json_array_get(links, i);
        if (strcmp(json_string_value(json_object_get(l, "kind")), "nvlink") != 0)
            continue;
        n++;
        if (from_a && !strcmp(json_string_value(json_object_get(l, "a")), a))
            *from_a += gbs_of(l);
    }
    return n;
}

static void test_import_small(void **state)
{
    cp_import_opts o;
    json_t *t;
    cp_err e;
    const json_t *l;
    (void)state;
    cp_import_opts_default(&o);
    o.name = "small";
    assert_int_equal(cp_import_nccl_topo("small.xml", small, strlen(small), &o, &t, &e), CP_OK);
    assert_non_null(l = link_between(t, "gpu0", "gpu1"));
    assert_near(gbs_of(l), 300, 1e-9);
    assert_non_null(l = link_between(t, "sw0", "cpu0"));
    assert_near(gbs_of(l), 24, 1e-9);
    assert_non_null(l = link_between(t, "cpu0", "cpu1"));
    assert_near(gbs_of(l), 10, 1e-9);
    assert_non_null(l = link_between(t, "nic0", "sw0"));
    assert_near(json_number_value(json_object_get(json_array_get(json_object_get(t, "nodes"), 4),
                                                  "net_gbs")), 25, 1e-9);
    assert_null(link_between(t, "gpu1", "gpu1"));
    /* exactly one NVLink: gpu0 and gpu1 each list the other; added once */
    {
        size_t i, nv = 0;
        const json_t *links = json_object_get(t, "links");
        for (i = 0; i < json_array_size(links); i++)
            nv += strcmp(json_string_value(json_object_get(json_array_get(links, i), "kind")),
                         "nvlink") == 0;
        assert_int_equal(nv, 1);
    }
    assert_non_null(strstr(json_string_value(json_object_get(t, "note")), "to itself"));
    json_decref(t);
}

/* A bridge that reports 2.5 GT/s x1 (a hypervisor's virtual switch) takes
 * its child's rate: a Gen5 x16 GPU, 16 x 32 x 3/32 = 48 GB/s. */
static void test_virtual_bridge(void **state)
{
    static const char text[] =
        "<system><cpu numaid=\"0\" vendor=\"AuthenticAMD\">"
        "<pci busid=\"a\" class=\"0x060400\" link_speed=\"2.5 GT/s PCIe\" link_width=\"1\">"
        "<pci busid=\"b\" class=\"0x030200\" vendor=\"0x10de\" link_speed=\"32.0 GT/s PCIe\" "
        "link_width=\"16\"/></pci></cpu></system>";
    cp_import_opts o;
    json_t *t;
    cp_err e;
    (void)state;
    cp_import_opts_default(&o);
    assert_int_equal(cp_import_nccl_topo("v.xml", text, strlen(text), &o, &t, &e), CP_OK);
    assert_near(gbs_of(link_between(t, "sw0", "cpu0")), 48, 1e-9);
    assert_near(gbs_of(link_between(t, "gpu0", "sw0")), 48, 1e-9);
    json_decref(t);
}

static void test_import_errors(void **state)
{
    cp_import_opts o;
    json_t *t;
    cp_err e;
    const char *graph = "<graphs>\n</graphs>\n", *nogpu = "<system>\n<cpu numaid=\"0\"/>\n</system>";
    (void)state;
    cp_import_opts_default(&o);
    assert_int_equal(cp_import_nccl_topo("g.xml", graph, strlen(graph), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "found <graphs>"));
    assert_int_equal(cp_import_nccl_topo("n.xml", nogpu, strlen(nogpu), &o, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "no GPU"));
}

/* Numeric attributes are whole numbers in range, refused with the element's
 * position otherwise (atoi would have read "8O" as 8 and "abc" as 0). */
static void test_import_bad_numbers(void **state)
{
    static const char *const bad[][2] = {
        {"<system>\n<cpu modelid=\"8O\"/>\n</system>", "modelid"},
        {"<system><cpu>\n<pci class=\"0x030200\" busid=\"1\"><gpu sm=\"abc\"/></pci>"
         "</cpu></system>", "sm"},
        {"<system><cpu>\n<pci class=\"0x030200\" busid=\"1\"><gpu sm=\"99999999999\"/>"
         "</pci></cpu></system>", "sm"},
        {"<system><cpu><pci class=\"0x030200\" busid=\"1\"><gpu sm=\"80\">\n"
         "<nvlink target=\"2\" count=\"0\"/></gpu></pci></cpu></system>", "count"},
    };
    cp_import_opts o;
    json_t *t;
    cp_err e;
    size_t k;
    (void)state;
    cp_import_opts_default(&o);
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(cp_import_nccl_topo("b.xml", bad[k][0], strlen(bad[k][0]), &o, &t, &e),
                         CP_EINPUT);
        assert_non_null(strstr(e.msg, bad[k][1]));
        assert_non_null(strstr(e.msg, "expected a whole number"));
        assert_int_equal(e.line, 2); /* every bad element starts on line 2 */
    }
}

/* Import ../shared/data/topologies/NAME with options o.  Without the
 * reference data the calling test is reported SKIPPED (skip() leaves it). */
static json_t *import_shared(const char *name, const cp_import_opts *o)
{
    char path[512], *text;
    size_t len;
    json_t *t;
    cp_err e;
    if (!have_shared_data()) {
        print_message("reference data absent: %s not imported\n", name);
        skip();
        return NULL;
    }
    snprintf(path, sizeof path, "%s/topologies/%s", SHARED_DATA, name);
    assert_int_equal(cp_read_file(path, &text, &len, &e), CP_OK);
    assert_int_equal(cp_import_nccl_topo(path, text, len, o, &t, &e), CP_OK);
    free(text);
    return t;
}

/* The IBM Cloud H100 dump: 8 GPUs, each with NVLinks 5/5/4/4 to four
 * NVSwitches: 18 links x 25 = 450 GB/s per GPU; 8 NICs at 200 Gb/s. */
static void test_reference_dump(void **state)
{
    cp_import_opts o;
    json_t *t;
    double gpu0;
    (void)state;
    cp_import_opts_default(&o);
    if (!(t = import_shared("ibm-cloud-gx3d-8xh100-topo.xml", &o)))
        return;
    count_nvlinks(t, "gpu0", &gpu0);
    assert_int_equal(count_nodes(t, "gpu", 0), 8);
    assert_int_equal(count_nodes(t, "nvswitch", 0), 4);
    assert_int_equal(count_nodes(t, "nic", 0), 8);
    assert_near(gpu0, 450, 1e-9);
    /* PCI device 0x2330, H100-SXM5-80GB: FP8 1,979 dense (datasheet), 132 SMs */
    assert_near(json_number_value(json_object_get(node_of(t, "gpu0"), "tflops_fp8")), 1979, 0);
    assert_int_equal(json_integer_value(json_object_get(node_of(t, "gpu0"), "sms")), 132);
    json_decref(t);
}

/* The AWS p4d hint: eight PCI device 0x20b0 (A100-SXM4-40GB) and no
 * NVLink.  The HGX A100 board's fabric is added: 6 NVSwitch chips, each GPU
 * 2 NVLinks x 25 = 50 GB/s to each, 300 GB/s per GPU; no in-switch
 * reduction (gen 2).  --no-fabric leaves no NVLink at all. */
static void test_hint_fabric(void **state)
{
    cp_import_opts o;
    json_t *t;
    double gpu0;
    (void)state;
    cp_import_opts_default(&o);
    if (!(t = import_shared("aws-p4d-24xl-topo.xml", &o)))
        return;
    assert_int_equal(count_nodes(t, "nvswitch", 0), 6);
    assert_int_equal(count_nvlinks(t, "gpu0", &gpu0), 48); /* 8 GPUs x 6 chips */
    assert_near(gpu0, 300, 1e-9);
    assert_int_equal(count_nodes(t, NULL, 1), 0);
    assert_non_null(strstr(json_string_value(json_object_get(t, "note")), "HGX A100"));
    /* 0x20b0, A100-SXM4-40GB: 108 SMs, no FP8 tensor cores (no tflops_fp8) */
    assert_int_equal(json_integer_value(json_object_get(node_of(t, "gpu0"), "sms")), 108);
    assert_null(json_object_get(node_of(t, "gpu0"), "tflops_fp8"));
    json_decref(t);
    o.no_fabric = 1;
    t = import_shared("aws-p4d-24xl-topo.xml", &o);
    assert_int_equal(count_nvlinks(t, "gpu0", NULL), 0);
    assert_non_null(strstr(json_string_value(json_object_get(t, "note")), "PCIe only"));
    json_decref(t);
}

/* Eight H100-SXM5 (PCI device 0x2330) in a hint with no NVLink: the HGX
 * H100 fabric, 4 chips with 4/5/5/4 NVLinks of 25 GB/s from every GPU
 * (450 GB/s), each reducing (NVLS) at 8 GPUs x its links x 25: 800, 1000,
 * 1000, 800 GB/s.  Seven such GPUs are no known board: PCIe only. */
static void test_hint_fabric_h100(void **state)
{
    static const double reduce[] = {800, 1000, 1000, 800};
    char xml[4096];
    size_t i, len = 0;
    int g, ngpu, k;
    cp_import_opts o;
    json_t *t;
    cp_err e;
    (void)state;
    cp_import_opts_default(&o);
    for (ngpu = 8; ngpu >= 7; ngpu--) {
        double gpu0;
        len = (size_t)snprintf(xml, sizeof xml, "<system version=\"1\">\n <cpu numaid=\"0\">\n");
        for (g = 0; g < ngpu; g++)
            len += (size_t)snprintf(xml + len, sizeof xml - len,
                                    "  <pci busid=\"0000:%02x:00.0\" class=\"0x030200\" "
                                    "device=\"0x2330\" link_speed=\"32.0 GT/s PCIe\" "
                                    "link_width=\"16\"/>\n", g + 1);
        len += (size_t)snprintf(xml + len, sizeof xml - len, " </cpu>\n</system>\n");
        assert_int_equal(cp_import_nccl_topo("h100.xml", xml, len, &o, &t, &e), CP_OK);
        for (i = 0, k = 0; i < json_array_size(json_object_get(t, "nodes")); i++) {
            const json_t *n = json_array_get(json_object_get(t, "nodes"), i);
            if (strcmp(json_string_value(json_object_get(n, "kind")), "nvswitch") != 0)
                continue;
            assert_true(k < 4);
            assert_near(json_number_value(json_object_get(n, "reduce_gbs")), reduce[k], 1e-9);
            k++;
        }
        count_nvlinks(t, "gpu0", &gpu0);
        assert_int_equal(k, ngpu == 8 ? 4 : 0);
        assert_near(gpu0, ngpu == 8 ? 450 : 0, 1e-9);
        json_decref(t);
    }
}

/* Issue 24, item 12: an imported GPU's memory (import/gpu_memory.c).  By
 * hand: a "N GB" part is N GiB, N x 1.073741824 GB, rounded to 0.01
 * (32 GB: 34.359738368 -> 34.36; 24 GB: 25.769803776 -> 25.77), except the
 * parts nvidia-smi reports below that: H100 80 GB 81,559 MiB x 1.048576e-3
 * = 85.52, T4 16 GB 15,360 MiB = 16.11.  Generation defaults: P100 and
 * V100 16 GB (17.18, the DGX-1's parts), A100 40 GB (42.95). */
static void test_gpu_memory(void **state)
{
    const char *src = NULL;
    (void)state;
    assert_near(cp_gpu_name_memory_gb("V100-SXM2-32GB"), 34.36, 1e-12);
    assert_near(cp_gpu_name_memory_gb("Tesla V100-SXM3-32GB-H"), 34.36, 1e-12);
    assert_near(cp_gpu_name_memory_gb("RTX-3090-24GB"), 25.77, 1e-12);
    assert_near(cp_gpu_name_memory_gb("H100-SXM5-80GB"), 85.52, 1e-12);
    assert_near(cp_gpu_name_memory_gb("A100-SXM4-80GB"), 85.90, 1e-12); /* 81,920 MiB */
    assert_near(cp_gpu_name_memory_gb("T4-16GB"), 16.11, 1e-12);
    assert_near(cp_gpu_name_memory_gb("V100-SXM2"), 0, 0); /* no size in the name */
    assert_near(cp_gpu_name_memory_gb(NULL), 0, 0);
    assert_near(cp_gpu_default_memory_gb("V100"), 17.18, 1e-12);
    assert_near(cp_gpu_default_memory_gb("P100"), 17.18, 1e-12);
    assert_near(cp_gpu_default_memory_gb("A100"), 42.95, 1e-12);
    assert_near(cp_gpu_default_memory_gb("H100"), 85.52, 1e-12);
    assert_near(cp_gpu_default_memory_gb("MI250"), 0, 0);
    /* precedence: --gpu-memory-gb, then the name, then the generation */
    assert_near(cp_gpu_memory_gb(40, "V100-SXM2-32GB", "V100", &src), 40, 0);
    assert_string_equal(src, "--gpu-memory-gb");
    assert_near(cp_gpu_memory_gb(0, "V100-SXM2-32GB", "V100", &src), 34.36, 1e-12);
    assert_near(cp_gpu_memory_gb(0, "V100-SXM2", "V100", &src), 17.18, 1e-12);
    assert_string_equal(src, "the default part of its generation");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xml_basics),    cmocka_unit_test(test_xml_expat),    cmocka_unit_test(test_xml_errors),
        cmocka_unit_test(test_import_small),  cmocka_unit_test(test_virtual_bridge),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_import_bad_numbers), cmocka_unit_test(test_reference_dump),
        cmocka_unit_test(test_hint_fabric),
        cmocka_unit_test(test_gpu_memory),
        cmocka_unit_test(test_hint_fabric_h100),
    };
    return cmocka_run_group_tests_name("import", tests, NULL, NULL);
}
