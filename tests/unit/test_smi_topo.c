/*
 * test_smi_topo.c - the nvidia-smi topo -m importer: the reference matrices
 * (read in place when ../shared/data is present), the small matrices of
 * tests/data/good/smi/, and parse errors with their exact positions.
 * Every expected number is derived beside its assertion, from the matrix
 * text and the rates docs/import.md gives (--gpu v100: 25 GB/s per NVLink,
 * 12 GB/s PCIe; a100: 25 and 24).
 */
#include "testutil.h"

#include "core/fileio.h"
#include "cost/collective.h"
#include "import/smi_topo.h"
#include "load/load.h"

#define DGX1 SHARED_DATA "/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt"
#define ONEFLOW SHARED_DATA "/topologies/oneflow-dlperf-8xV100_nvidia-smi-topo-m.txt"
#define KONNASE SHARED_DATA "/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static json_t *import_text(const char *path, const char *text, const char *gpu, cp_err *e,
                           int *rc)
{
    cp_smi_opts o;
    json_t *t = NULL;
    cp_smi_opts_default(&o);
    o.gpu = gpu;
    *rc = cp_import_smi_topo(path, text, strlen(text), &o, &t, e);
    return t;
}

/* Import a file that must convert. */
static json_t *import_file(const char *path, const cp_smi_opts *o)
{
    char *text;
    size_t len;
    cp_err e;
    json_t *t = NULL;
    assert_int_equal(cp_read_file(path, &text, &len, &e), CP_OK);
    if (cp_import_smi_topo(path, text, len, o, &t, &e) != CP_OK)
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    free(text);
    return t;
}

static json_t *import_gpu(const char *path, const char *gpu)
{
    cp_smi_opts o;
    cp_smi_opts_default(&o);
    o.gpu = gpu;
    return import_file(path, &o);
}

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int count_nodes(const json_t *t, const char *kind)
{
    size_t i;
    int n = 0;
    const json_t *nodes = json_object_get(t, "nodes");
    for (i = 0; i < json_array_size(nodes); i++)
        n += strcmp(str(json_array_get(nodes, i), "kind"), kind) == 0;
    return n;
}

static const json_t *node(const json_t *t, const char *id)
{
    size_t i;
    const json_t *nodes = json_object_get(t, "nodes");
    for (i = 0; i < json_array_size(nodes); i++)
        if (strcmp(str(json_array_get(nodes, i), "id"), id) == 0)
            return json_array_get(nodes, i);
    return NULL;
}

/* The link between two node ids (either order), or NULL. */
static const json_t *link_between(const json_t *t, const char *a, const char *b)
{
    size_t i;
    const json_t *links = json_object_get(t, "links");
    for (i = 0; i < json_array_size(links); i++) {
        const json_t *l = json_array_get(links, i);
        const char *x = str(l, "a"), *y = str(l, "b");
        if ((!strcmp(x, a) && !strcmp(y, b)) || (!strcmp(x, b) && !strcmp(y, a)))
            return l;
    }
    return NULL;
}

static double gbs(const json_t *l)
{
    assert_non_null(l);
    return json_number_value(json_object_get(l, "gbs"));
}

/* How many links of `kind` have exactly `g` GB/s; and their total. */
static int count_links(const json_t *t, const char *kind, double g, double *total)
{
    size_t i;
    int n = 0;
    const json_t *links = json_object_get(t, "links");
    if (total)
        *total = 0;
    for (i = 0; i < json_array_size(links); i++) {
        const json_t *l = json_array_get(links, i);
        if (strcmp(str(l, "kind"), kind) != 0)
            continue;
        if (total)
            *total += gbs(l);
        n += g <= 0 || fabs(gbs(l) - g) < 1e-9;
    }
    return n;
}

/* NVLink GB/s of one node, summed over its links. */
static double nvlink_of(const json_t *t, const char *id)
{
    size_t i;
    double s = 0;
    const json_t *links = json_object_get(t, "links");
    for (i = 0; i < json_array_size(links); i++) {
        const json_t *l = json_array_get(links, i);
        if (!strcmp(str(l, "kind"), "nvlink") && (!strcmp(str(l, "a"), id) || !strcmp(str(l, "b"), id)))
            s += gbs(l);
    }
    return s;
}

/* The JSON through the topology loader, as `import` validates it. */
static cp_topo *load(json_t *root)
{
    char *json = json_dumps(root, JSON_REAL_PRECISION(12));
    cp_jdoc d;
    cp_topo *t = NULL;
    cp_err e;
    assert_non_null(json);
    assert_int_equal(cp_jdoc_load_text(&d, "imported.json", json, strlen(json), &e), CP_OK);
    if (cp_topo_load_doc(&d, &t, &e) != CP_OK)
        fail_msg("loader refused the import: %s", e.msg);
    cp_jdoc_free(&d);
    free(json);
    return t;
}

/* The ring AllReduce's packed bandwidth (GB/s, calibrated) of a topology. */
static double ring_bw(const cp_topo *t)
{
    cp_coll c;
    cp_err e;
    double bw;
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    bw = c.cost[CP_OP_ALLREDUCE][CP_ALG_RING].phase[0].bw_gbs;
    cp_coll_free(&c);
    return bw;
}

static int skip_without_data(void)
{
    if (have_shared_data())
        return 0;
    print_message("reference data absent (" SHARED_DATA "): reference matrices not run\n");
    skip(); /* reported SKIPPED, not passed */
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The reference matrices                                                    */

/* DGX-1 (msccl-tools): reading the matrix by hand, the NV1 pairs are 0-1,
 * 0-2, 1-3, 2-6, 3-7, 4-5, 4-6, 5-7 (8) and the NV2 pairs 0-3, 0-4, 1-2,
 * 1-5, 2-3, 4-7, 5-6, 6-7 (8): 8 x 25 + 8 x 50 = 600 GB/s in all, and
 * every GPU has 6 bricks, 6 x 25 = 150.  PIX groups: {GPU0, GPU1, mlx5_0},
 * {GPU2, GPU3, mlx5_1}, {GPU4, GPU5, mlx5_2}, {GPU6, GPU7, mlx5_3}: four
 * switches; CPU Affinity 0-19,40-59 vs 20-39,60-79: two sockets. */
static void test_dgx1_counts(void **state)
{
    json_t *t;
    double total;
    int g;
    (void)state;
    if (skip_without_data())
        return;
    t = import_gpu(DGX1, "v100");
    assert_int_equal(count_nodes(t, "gpu"), 8);
    assert_int_equal(count_nodes(t, "nic"), 4);
    assert_int_equal(count_nodes(t, "cpu"), 2);
    assert_int_equal(count_nodes(t, "pcie_switch"), 4);
    assert_int_equal(count_nodes(t, "nvswitch"), 0); /* 6 links per GPU: what a V100 has */
    assert_int_equal(count_links(t, "nvlink", 25, NULL), 8);
    assert_int_equal(count_links(t, "nvlink", 50, NULL), 8);
    assert_int_equal(count_links(t, "nvlink", 0, &total), 16);
    assert_near(total, 600, 1e-9);
    for (g = 0; g < 8; g++) {
        char id[16];
        snprintf(id, sizeof id, "gpu%d", g);
        assert_near(nvlink_of(t, id), 150, 1e-9);
    }
    assert_near(gbs(link_between(t, "gpu0", "gpu3")), 50, 1e-9); /* NV2 */
    assert_null(link_between(t, "gpu0", "gpu5"));                 /* SYS */
    /* header order mlx5_0, mlx5_2, mlx5_1, mlx5_3 -> nic0..nic3; mlx5_2 is
     * PIX with GPU4 and GPU5, which PIX groups put under the third switch */
    assert_string_equal(str(node(t, "nic1"), "model"), "mlx5_2");
    assert_non_null(link_between(t, "nic1", "sw2"));
    assert_non_null(link_between(t, "gpu4", "sw2"));
    assert_non_null(link_between(t, "sw2", "cpu1"));
    assert_near(gbs(link_between(t, "gpu0", "sw0")), 12, 1e-9); /* Gen3 x16 for V100 */
    assert_near(gbs(link_between(t, "cpu0", "cpu1")), 10, 1e-9); /* unknown CPU: NCCL's 10 */
    assert_non_null(strstr(str(t, "note"), "CPU Affinity"));
    json_decref(t);
}

/* The imported DGX-1, given the shipped file's calibration (as
 * --calibration topologies/dgx1-v100.json does), predicts the same ring
 * AllReduce as the hand-built topologies/dgx1-v100.json at every size.
 * By hand: the cube-mesh packs rings on all six bricks of each GPU, 150
 * GB/s nominal (test_collective.c), x bw_eff; at 1 GiB,
 * T = launch + 1.75 x (8 x 0.7 us) + 1.75 x S / B, and busbw = 1.75 S / T
 * lies within 0.2% of B (S / B = 9035 us against 15 us of latency). */
static void test_dgx1_ring_matches_shipped(void **state)
{
    json_t *imp;
    cp_topo *a, *b;
    cp_coll ca, cb;
    cp_jdoc d;
    cp_err e;
    double s, eff, bw, busbw;
    (void)state;
    if (skip_without_data())
        return;
    imp = import_gpu(DGX1, "v100");
    assert_int_equal(cp_jdoc_load(&d, "topologies/dgx1-v100.json", &e), CP_OK);
    json_object_set(imp, "calibration", json_object_get(d.root, "calibration"));
    cp_jdoc_free(&d);
    a = load(imp);
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &b, &e), CP_OK);
    eff = b->calib.kind[CP_NVLINK].bw_eff;
    bw = 150 * eff;
    assert_near(ring_bw(a), bw, 1e-6);
    assert_near(ring_bw(b), bw, 1e-6);
    assert_int_equal(cp_coll_build(a, 1, &ca, &e), CP_OK);
    assert_int_equal(cp_coll_build(b, 1, &cb, &e), CP_OK);
    for (s = 8; s <= 1073741824.0; s *= 8) {
        double ta = cp_coll_time_us(&ca, CP_OP_ALLREDUCE, CP_ALG_RING, s);
        double tb = cp_coll_time_us(&cb, CP_OP_ALLREDUCE, CP_ALG_RING, s);
        assert_near(ta, tb, 1e-9 * tb);
    }
    s = 1073741824.0;
    busbw = s / (cp_coll_time_us(&ca, CP_OP_ALLREDUCE, CP_ALG_RING, s) * 1e3) *
            cp_coll_busbw_factor(CP_OP_ALLREDUCE, 8);
    /* bandwidth term 1.75 x 2^30 B / (bw x 1e3) = 14,315 us at bw 131.27; the
     * latency is at most the fitted Volta launch 6.171 + 14 steps x (0.7 us
     * of hop + the fitted step 1.547 + Simple's 3.909): 92.35 us, so busbw
     * >= 14315 / 14407.4 = 0.99359 of bw */
    assert_true(busbw <= bw);
    assert_true(busbw >= 0.9935 * bw);
    cp_coll_free(&ca);
    cp_coll_free(&cb);
    cp_topo_free(a);
    cp_topo_free(b);
    json_decref(imp);
}

/* oneflow DLPerf node: mlx5_0 is PIX with GPU2 and GPU3 (one switch, on
 * socket 0 by the CPU affinity 0-11,24-35) and NODE with GPU0 and GPU1,
 * which then share that socket but no switch: straight on cpu0.  GPU4-7
 * (12-23,36-47) are on cpu1.  Same NVLink pattern as the DGX-1. */
static void test_oneflow_nic_socket(void **state)
{
    json_t *t;
    const json_t *l;
    (void)state;
    if (skip_without_data())
        return;
    t = import_gpu(ONEFLOW, "v100");
    assert_int_equal(count_nodes(t, "nic"), 1);
    assert_int_equal(count_nodes(t, "cpu"), 2);
    assert_int_equal(count_nodes(t, "pcie_switch"), 1);
    assert_non_null(link_between(t, "nic0", "sw0"));
    assert_non_null(link_between(t, "gpu2", "sw0"));
    assert_non_null(link_between(t, "gpu3", "sw0"));
    assert_non_null(link_between(t, "sw0", "cpu0"));
    assert_non_null(link_between(t, "gpu0", "cpu0"));
    assert_non_null(link_between(t, "gpu1", "cpu0"));
    assert_non_null(link_between(t, "gpu4", "cpu1"));
    assert_non_null(l = link_between(t, "gpu7", "cpu1"));
    assert_near(gbs(l), 12, 1e-9);
    assert_near(nvlink_of(t, "gpu5"), 150, 1e-9); /* NV2 to 1 and 6, NV1 to 4 and 7 */
    assert_non_null(strstr(str(t, "note"), "straight off their socket's CPU"));
    json_decref(t);
}

/* konnase: the matrix sits in an nccl-tests log after a shell prompt and
 * Chinese text, and the Legend and the test output follow it.  Every GPU's
 * CPU Affinity is 0-95 although SYS cells separate GPU0 from GPU4, 5 and 7:
 * the column is ignored (and the note says so).  The SYS cells split the
 * GPUs into {0,1,2,3} and {4,5,6,7}.  NV1 pairs by hand: 0-1, 0-2, 1-3,
 * 2-4, 3-5, 4-6, 5-7, 6-7; NV2: 0-3, 0-6, 1-2, 1-7, 2-3, 4-5, 4-7, 5-6:
 * the DGX-1 cube-mesh renumbered, so the same 150 GB/s ring. */
static void test_konnase_embedded(void **state)
{
    json_t *t;
    cp_topo *topo;
    int g;
    (void)state;
    if (skip_without_data())
        return;
    t = import_gpu(KONNASE, "v100");
    assert_int_equal(count_nodes(t, "gpu"), 8);
    assert_int_equal(count_nodes(t, "nic"), 0);
    assert_int_equal(count_nodes(t, "cpu"), 2);
    assert_int_equal(count_links(t, "nvlink", 25, NULL), 8);
    assert_int_equal(count_links(t, "nvlink", 50, NULL), 8);
    assert_near(gbs(link_between(t, "gpu0", "gpu6")), 50, 1e-9);
    assert_null(link_between(t, "gpu0", "gpu4"));
    for (g = 0; g < 8; g++) {
        char id[16], cpu[16];
        snprintf(id, sizeof id, "gpu%d", g);
        snprintf(cpu, sizeof cpu, "cpu%d", g / 4);
        assert_non_null(link_between(t, id, cpu));
    }
    assert_non_null(strstr(str(t, "note"), "CPU Affinity column disagrees"));
    topo = load(t);
    assert_near(ring_bw(topo), 150, 1e-6); /* uncalibrated: bw_eff 1 */
    cp_topo_free(topo);
    json_decref(t);
}

/* ------------------------------------------------------------------------ */
/* Our own matrices (tests/data/good/smi/)                                   */

/* Four A100s showing NV12 to each other: 3 x 12 = 36 NVLinks per GPU, but
 * an A100 has 12, so the links go through one nvswitch node, each GPU on
 * one link of 12 x 25 = 300 GB/s (not 3 x 300).  NUMA Affinity 0 / 1 gives
 * two sockets; NIC0 is PXB with GPU0 and GPU1: one upstream switch holding
 * the three (no PIX cell, so no leaf switch); NIC names from the NIC Legend.
 * PCIe Gen4 x16 for --gpu a100: 24 GB/s. */
static void test_a100_nvswitch(void **state)
{
    json_t *t = import_gpu("tests/data/good/smi/a100-4gpu-nv12-nics.txt", "a100");
    int g;
    (void)state;
    assert_int_equal(count_nodes(t, "nvswitch"), 1);
    assert_int_equal(count_links(t, "nvlink", 300, NULL), 4);
    assert_int_equal(count_links(t, "nvlink", 0, NULL), 4);
    for (g = 0; g < 4; g++) {
        char id[16];
        snprintf(id, sizeof id, "gpu%d", g);
        assert_near(gbs(link_between(t, id, "nvsw0")), 300, 1e-9);
        assert_string_equal(str(node(t, id), "model"), "A100-SXM4");
        /* --gpu a100: 108 SMs (A100 whitepaper), no FP8 tensor cores */
        assert_int_equal(json_integer_value(json_object_get(node(t, id), "sms")), 108);
        assert_null(json_object_get(node(t, id), "tflops_fp8"));
    }
    assert_null(link_between(t, "gpu0", "gpu1"));
    assert_int_equal(count_nodes(t, "cpu"), 2);
    assert_int_equal(count_nodes(t, "pcie_switch"), 2);
    assert_non_null(link_between(t, "gpu0", "sw0"));
    assert_non_null(link_between(t, "gpu1", "sw0"));
    assert_non_null(link_between(t, "nic0", "sw0"));
    assert_non_null(link_between(t, "sw0", "cpu0"));
    assert_non_null(link_between(t, "sw1", "cpu1"));
    assert_non_null(link_between(t, "nic1", "sw1"));
    assert_string_equal(str(node(t, "nic0"), "model"), "mlx5_0");
    assert_string_equal(str(node(t, "nic1"), "model"), "mlx5_1");
    assert_near(gbs(link_between(t, "nic0", "sw0")), 24, 1e-9);
    assert_near(json_number_value(json_object_get(node(t, "nic0"), "net_gbs")), 12.5, 1e-9);
    assert_non_null(strstr(str(t, "note"), "NUMA Affinity"));
    assert_non_null(strstr(str(t, "note"), "nvswitch"));
    json_decref(t);
}

/* Two A100s with NV12 (a bridged pair): 12 links, as many as an A100 has,
 * so one direct link of 12 x 25 = 300 GB/s and no switch.  The same
 * matrix with --nvlink-gbs 20 (NCCL's effective rate) gives 240. */
static void test_nv12_pair_is_direct(void **state)
{
    static const char text[] = "\tGPU0\tGPU1\tCPU Affinity\n"
                               "GPU0\t X \tNV12\t0-7\n"
                               "GPU1\tNV12\t X \t0-7\n";
    cp_smi_opts o;
    json_t *t;
    cp_err e;
    int rc;
    (void)state;
    t = import_text("pair.txt", text, "a100", &e, &rc);
    assert_int_equal(rc, CP_OK);
    assert_int_equal(count_nodes(t, "nvswitch"), 0);
    assert_near(gbs(link_between(t, "gpu0", "gpu1")), 300, 1e-9);
    json_decref(t);
    cp_smi_opts_default(&o);
    o.gpu = "a100";
    o.nvlink_gbs = 20;
    o.pcie_gbs = 16;
    assert_int_equal(cp_import_smi_topo("pair.txt", text, strlen(text), &o, &t, &e), CP_OK);
    assert_near(gbs(link_between(t, "gpu0", "gpu1")), 240, 1e-9); /* 12 x 20 */
    assert_near(gbs(link_between(t, "gpu0", "cpu0")), 16, 1e-9);  /* --pcie-gbs wins */
    assert_non_null(strstr(str(t, "note"), "--nvlink-gbs"));
    json_decref(t);
}

/* A PCIe box: GPU0/1 PIX (sw0), GPU2/3 PIX (sw1), PXB across: one upstream
 * switch sw2 over sw0 and sw1, on cpu0; GPU4/5 NODE on cpu1 (CPU affinity
 * 16-31), each straight on the CPU; SYS between.  No NV cell, so no --gpu:
 * Gen3 x16, 12 GB/s. */
static void test_pcie_tree(void **state)
{
    cp_smi_opts o;
    json_t *t;
    cp_topo *topo;
    (void)state;
    cp_smi_opts_default(&o);
    t = import_file("tests/data/good/smi/pcie-6gpu-pix-pxb-node-sys.txt", &o);
    assert_int_equal(count_nodes(t, "pcie_switch"), 3);
    assert_int_equal(count_nodes(t, "cpu"), 2);
    assert_int_equal(count_links(t, "nvlink", 0, NULL), 0);
    assert_non_null(link_between(t, "gpu0", "sw0"));
    assert_non_null(link_between(t, "gpu1", "sw0"));
    assert_non_null(link_between(t, "gpu2", "sw1"));
    assert_non_null(link_between(t, "gpu3", "sw1"));
    assert_non_null(link_between(t, "sw0", "sw2"));
    assert_non_null(link_between(t, "sw1", "sw2"));
    assert_non_null(link_between(t, "sw2", "cpu0"));
    assert_non_null(link_between(t, "gpu4", "cpu1"));
    assert_non_null(link_between(t, "gpu5", "cpu1"));
    assert_null(link_between(t, "sw0", "cpu0"));
    assert_int_equal(count_links(t, "pcie", 12, NULL), 9); /* 6 GPUs + 3 switch uplinks */
    assert_near(gbs(link_between(t, "cpu0", "cpu1")), 10, 1e-9);
    assert_null(json_object_get(node(t, "gpu0"), "model")); /* no --gpu: no part named */
    topo = load(t);
    assert_int_equal(topo->ngpus, 6);
    cp_topo_free(topo);
    json_decref(t);
}

/* The header underlined with ANSI escapes, CRLF line ends, a NIC column
 * named as a device: the NIC shares GPU0/1's switch (PIX). */
static void test_ansi_crlf_nic(void **state)
{
    cp_smi_opts o;
    json_t *t;
    (void)state;
    cp_smi_opts_default(&o);
    t = import_file("tests/data/good/smi/pcie-4gpu-nic-ansi-crlf.txt", &o);
    assert_int_equal(count_nodes(t, "gpu"), 4);
    assert_int_equal(count_nodes(t, "cpu"), 1);
    assert_int_equal(count_links(t, "socket", 0, NULL), 0);
    assert_non_null(link_between(t, "nic0", "sw0"));
    assert_non_null(link_between(t, "gpu1", "sw0"));
    assert_non_null(link_between(t, "gpu2", "sw1"));
    assert_string_equal(str(node(t, "nic0"), "model"), "mlx5_0");
    json_decref(t);
}

/* Spaces instead of tabs (matrices pasted into web pages), after a prompt. */
static void test_spaces_and_prompt(void **state)
{
    static const char text[] = "$ nvidia-smi topo -m\n"
                               "        GPU0    GPU1    CPU Affinity\n"
                               "GPU0     X      PIX     0-3\n"
                               "GPU1    PIX      X      0-3\n"
                               "\n"
                               "Legend:\n"
                               "  X    = Self\n";
    json_t *t;
    cp_err e;
    int rc;
    (void)state;
    t = import_text("spaces.txt", text, NULL, &e, &rc);
    assert_int_equal(rc, CP_OK);
    assert_int_equal(count_nodes(t, "pcie_switch"), 1);
    assert_string_equal(str(t, "name"), "spaces");
    json_decref(t);
}

/* ------------------------------------------------------------------------ */
/* Errors, with positions counted by hand (tabs are one column)              */

static void expect_error(const char *text, const char *gpu, int line, int col,
                         const char *needle)
{
    json_t *t;
    cp_err e;
    int rc;
    cp_err_clear(&e);
    t = import_text("m.txt", text, gpu, &e, &rc);
    assert_int_equal(rc, CP_EINPUT);
    assert_null(t);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' lacks '%s'", e.msg, needle);
    assert_string_equal(e.file, "m.txt");
    assert_int_equal(e.line, line);
    assert_int_equal(e.col, col);
}

static void test_errors(void **state)
{
    (void)state;
    /* line 3 "GPU1<TAB>SYS": SYS at column 6; line 2 "GPU0<TAB> X <TAB>NV2":
     * NV2 at column 10 */
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tSYS\t X \n", "v100", 3, 6,
                 "GPU1 -> GPU0 is SYS, but GPU0 -> GPU1 (line 2, column 10) is NV2");
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tPCI\nGPU1\tPCI\t X \n", NULL, 2, 10,
                 "unknown cell 'PCI'");
    /* no row for GPU1: its header column, line 1 "<TAB>GPU0<TAB>GPU1", col 7 */
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\n", NULL, 1, 7, "GPU1: no row for this column");
    /* a short row: after "PIX" (columns 6-8) of line 3 */
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\n", NULL, 3, 9,
                 "row GPU1 has 1 cell, the header lists 2 devices");
    expect_error("hello\nworld\n", NULL, 0, 0, "no nvidia-smi topo -m matrix found");
    /* NV cells and neither --gpu nor --nvlink-gbs: the first NV cell */
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n", NULL, 2, 10,
                 "give --gpu p100|v100|a100|h100 or --nvlink-gbs X");
    /* GPU0-GPU1 and GPU1-GPU2 PIX put all three under one switch; GPU0 ->
     * GPU2 PHB (line 2, column 14) cannot be */
    expect_error("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPIX\tPHB\nGPU1\tPIX\t X \tPIX\n"
                 "GPU2\tPHB\tPIX\t X \n", NULL, 2, 14, "no PCIe tree fits every cell");
    expect_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\tPIX\n", NULL, 3, 10,
                 "expected X on the diagonal");
    expect_error("\tGPU0\tmlx5_0\nGPU0\t X \tNV1\nmlx5_0\tNV1\t X \n", "v100", 2, 10,
                 "NVLink joins GPUs only");
    expect_error("\tGPU0\tGPU2\nGPU0\t X \tPIX\nGPU2\tPIX\t X \n", NULL, 1, 7,
                 "expected the column GPU1, found 'GPU2'");
}

/* The caret display gets the offending line. */
static void test_error_source_line(void **state)
{
    json_t *t;
    cp_err e;
    int rc;
    (void)state;
    t = import_text("m.txt", "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tSYS\t X \n", "v100", &e, &rc);
    assert_null(t);
    assert_string_equal(e.src_line, "GPU1\tSYS\t X ");
}

static void test_bad_gpu(void **state)
{
    json_t *t;
    cp_err e;
    int rc;
    (void)state;
    assert_true(cp_smi_gpu_known("h100"));
    assert_false(cp_smi_gpu_known("t4"));
    t = import_text("m.txt", "\tGPU0\nGPU0\t X \n", "t4", &e, &rc);
    assert_int_equal(rc, CP_EINPUT);
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgx1_counts),        cmocka_unit_test(test_dgx1_ring_matches_shipped),
        cmocka_unit_test(test_oneflow_nic_socket), cmocka_unit_test(test_konnase_embedded),
        cmocka_unit_test(test_a100_nvswitch),      cmocka_unit_test(test_nv12_pair_is_direct),
        cmocka_unit_test(test_pcie_tree),          cmocka_unit_test(test_ansi_crlf_nic),
        cmocka_unit_test(test_spaces_and_prompt),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_error_source_line),  cmocka_unit_test(test_bad_gpu),
    };
    return cmocka_run_group_tests_name("smi_topo", tests, NULL, NULL);
}
