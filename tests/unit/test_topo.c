/*
 * test_topo.c - the topology loader, replication over hosts, and the
 * widest-route search, on small graphs whose answers are worked by hand.
 */
#include "testutil.h"

#include "load/load.h"
#include "paths/paths.h"
#include "cli/summary.h"

/* The worked example of docs/formats.md. */
static const char two_v100[] =
    "{\n"
    "  \"name\": \"two-v100\",\n"
    "  \"nodes\": [\n"
    "    {\"id\": \"gpu0\", \"kind\": \"gpu\"},\n"
    "    {\"id\": \"gpu1\", \"kind\": \"gpu\"},\n"
    "    {\"id\": \"sw0\", \"kind\": \"pcie_switch\"}\n"
    "  ],\n"
    "  \"links\": [\n"
    "    {\"a\": \"gpu0\", \"b\": \"gpu1\", \"kind\": \"nvlink\", \"gbs\": 25, \"latency_us\": 0.7},\n"
    "    {\"a\": \"gpu0\", \"b\": \"sw0\", \"kind\": \"pcie\", \"gbs\": 12, \"latency_us\": 0.5},\n"
    "    {\"a\": \"gpu1\", \"b\": \"sw0\", \"kind\": \"pcie\", \"gbs\": 12, \"latency_us\": 0.5}\n"
    "  ]\n"
    "}\n";

static int load(const char *text, cp_topo **t, cp_err *e)
{
    char *path = write_temp(text);
    int rc;
    assert_non_null(path);
    rc = cp_topo_load(path, t, e);
    drop_temp(path);
    return rc;
}

static void test_worked_example(void **state)
{
    cp_topo *t;
    cp_err e;
    cp_reach r;
    int g0, g1, arc;
    (void)state;
    assert_int_equal(load(two_v100, &t, &e), CP_OK);
    assert_int_equal(t->ngpus, 2);
    assert_int_equal(t->nhosts, 1);
    assert_int_equal(t->nlinks, 3);
    assert_int_equal(t->links[1].src_line, 10); /* second link object is on line 10 */
    g0 = cp_topo_find(t, "gpu0");
    g1 = cp_topo_find(t, "gpu1");
    assert_int_equal(cp_reach_from(t, g0, &r, &e), CP_OK);
    /* best route: the NVLink, 25 GB/s, one hop, 0.7 us */
    assert_near(r.bott[g1], 25.0, 0);
    assert_near(r.lat_us[g1], 0.7, 1e-12);
    assert_int_equal(r.hops[g1], 1);
    arc = cp_reach_bottleneck_arc(t, &r, g1);
    assert_int_equal(arc >> 1, 0);
    cp_reach_free(&r);
    cp_topo_free(t);
}

/* Without the NVLink the route goes through the switch: bottleneck 12 GB/s
 * (min of 12, 12), two hops, 0.5 + 0.5 = 1.0 us. */
static void test_route_through_switch(void **state)
{
    cp_topo *t = cp_topo_new("sw");
    cp_err e;
    cp_reach r;
    int g0, g1, sw;
    (void)state;
    g0 = cp_topo_add_node(t, "gpu0", CP_GPU, 0);
    g1 = cp_topo_add_node(t, "gpu1", CP_GPU, 0);
    sw = cp_topo_add_node(t, "sw0", CP_PCIE_SWITCH, 0);
    cp_topo_add_link(t, g0, sw, CP_PCIE, 16, 0, 0.5);
    cp_topo_add_link(t, g1, sw, CP_PCIE, 12, 0, 0.5);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    assert_int_equal(cp_reach_from(t, g0, &r, &e), CP_OK);
    assert_near(r.bott[g1], 12.0, 0);
    assert_near(r.lat_us[g1], 1.0, 1e-12);
    assert_int_equal(r.hops[g1], 2);
    cp_reach_free(&r);
    cp_topo_free(t);
}

/* Routes never pass through a GPU: gpu0 - gpu1 - gpu2 by NVLink leaves gpu0
 * and gpu2 unconnected for point-to-point purposes (bott 0), and the
 * connectivity check says so (issue 24, item 8: on main it searched the
 * plain graph and called this chain connected): gpu2 cannot reach gpu0
 * (the later GPU of the pair is blamed), and the node in the way is gpu1. */
static void test_no_transit_through_gpu(void **state)
{
    cp_topo *t = cp_topo_new("chain");
    cp_err e;
    cp_reach r;
    int a, b, c, peer, via;
    (void)state;
    a = cp_topo_add_node(t, "gpu0", CP_GPU, 0);
    b = cp_topo_add_node(t, "gpu1", CP_GPU, 0);
    c = cp_topo_add_node(t, "gpu2", CP_GPU, 0);
    cp_topo_add_link(t, a, b, CP_NVLINK, 25, 0, 0.7);
    cp_topo_add_link(t, b, c, CP_NVLINK, 25, 0, 0.7);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), c);
    assert_int_equal(peer, a);
    assert_int_equal(via, b);
    assert_int_equal(cp_topo_blocking_node(t, c, a), b);
    assert_int_equal(cp_reach_from(t, a, &r, &e), CP_OK);
    assert_near(r.bott[c], 0.0, 0);
    assert_int_equal(cp_reach_bottleneck_arc(t, &r, c), -1);
    cp_reach_free(&r);
    cp_topo_free(t);
}

/* A machine of `n` GPUs, links given as pairs of node indices into
 * `kinds` (GPUs are the nodes of kind CP_GPU, in order). */
static cp_topo *build(const cp_node_kind *kinds, int nnodes, const int (*ln)[2], int nl)
{
    cp_topo *t = cp_topo_new("t");
    cp_err e;
    char id[16];
    int i;
    for (i = 0; i < nnodes; i++) {
        snprintf(id, sizeof id, "n%d", i);
        cp_topo_add_node(t, id, kinds[i], 0);
    }
    for (i = 0; i < nl; i++)
        cp_topo_add_link(t, ln[i][0], ln[i][1], CP_PCIE, 12, 0, 0.5);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    return t;
}

/* Issue 24, item 8: the GPUs must connect without passing through a GPU
 * or a memory device, and no GPU may be one the others reach a GPU only
 * through (a cut vertex of the neighbour graph: no ring passes it twice).
 * Each case is small enough to check by hand: G = gpu, S = PCIe switch,
 * C = cpu, M = memory device; node numbers in the comments. */
static void test_gpu_connectivity(void **state)
{
    const cp_node_kind two_sw[] = {CP_GPU, CP_GPU, CP_GPU, CP_GPU, CP_PCIE_SWITCH,
                                   CP_PCIE_SWITCH, CP_CPU};
    const int two_sw_l[][2] = {{0, 4}, {1, 4}, {2, 5}, {3, 5}, {4, 6}, {5, 6}};
    const cp_node_kind square[] = {CP_GPU, CP_GPU, CP_GPU, CP_GPU};
    const int square_l[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    const cp_node_kind out[] = {CP_GPU, CP_GPU, CP_GPU, CP_GPU, CP_PCIE_SWITCH};
    const int out_l[][2] = {{0, 4}, {1, 4}, {2, 4}, {3, 0}, {3, 1}};
    const cp_node_kind split[] = {CP_GPU, CP_GPU, CP_GPU, CP_PCIE_SWITCH, CP_PCIE_SWITCH};
    const int split_l[][2] = {{0, 3}, {1, 3}, {1, 4}, {2, 4}, {0, 2}};
    const cp_node_kind bow[] = {CP_GPU, CP_GPU, CP_GPU, CP_GPU, CP_GPU};
    const int bow_l[][2] = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 2}};
    const cp_node_kind mem[] = {CP_GPU, CP_MEMDEV, CP_GPU};
    const int mem_l[][2] = {{0, 1}, {1, 2}};
    cp_topo *t;
    int peer, via;
    (void)state;
    /* two switches under one CPU: one transit component touches all 4 */
    t = build(two_sw, 7, two_sw_l, 6);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), -1);
    cp_topo_free(t);
    /* a ring of NVLinks, no transit node: 0 and 2 are no neighbours, but no
     * GPU is a cut vertex and the ring 0-1-2-3 exists */
    t = build(square, 4, square_l, 4);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), -1);
    cp_topo_free(t);
    /* GPUs 0-2 on switch 4, GPU 3 linked to GPUs 0 and 1: 3 and 2 are no
     * neighbours, yet the ring 3-0-2-1-3 exists and no GPU is a cut */
    t = build(out, 5, out_l, 5);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), -1);
    cp_topo_free(t);
    /* switch 3 joins GPUs 0, 1; switch 4 joins 1, 2; an NVLink 0-2: a
     * triangle of neighbours, though no component touches all three */
    t = build(split, 5, split_l, 5);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), -1);
    cp_topo_free(t);
    /* without the NVLink 0-2, GPU 2 reaches GPU 0 only through GPU 1 */
    t = build(split, 5, split_l, 4);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), 2);
    assert_int_equal(peer, 0);
    assert_int_equal(via, 1);
    cp_topo_free(t);
    /* two NVLink triangles sharing GPU 2 (a bow tie): every GPU has two
     * neighbours, but 3 and 4 reach 0 and 1 only through 2; the search from
     * GPU 0 finishes 4 then 3 and blames 3, the first GPU of the far side */
    t = build(bow, 5, bow_l, 6);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), 3);
    assert_int_equal(peer, 0);
    assert_int_equal(via, 2);
    cp_topo_free(t);
    /* two GPUs joined only through a memory device: an endpoint, not a hop;
     * GPU 2 is not reached, and the node in the way is the device */
    t = build(mem, 3, mem_l, 2);
    assert_int_equal(cp_topo_unreachable_gpu(t, &peer, &via), 2);
    assert_int_equal(peer, 0);
    assert_int_equal(via, 1);
    cp_topo_free(t);
}

/* Issue 24, item 8: `info -t` printed one row per GPU only when the GPU's
 * narrowest route existed, so on gpu0 - gpu1 - gpu2 (NVLinks, built in
 * memory: the loader now refuses it) it showed gpu1's row alone.  Every GPU
 * gets a row: gpu1 reaches both others over one 25 GB/s link ("1 hop"),
 * gpu0 and gpu2 have no route to each other. */
static void test_info_rows(void **state)
{
    cp_topo *t = cp_topo_new("chain");
    cp_err e;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int a, b, c;
    (void)state;
    a = cp_topo_add_node(t, "gpu0", CP_GPU, 0);
    b = cp_topo_add_node(t, "gpu1", CP_GPU, 0);
    c = cp_topo_add_node(t, "gpu2", CP_GPU, 0);
    cp_topo_add_link(t, a, b, CP_NVLINK, 25, 0, 0.7);
    cp_topo_add_link(t, b, c, CP_NVLINK, 25, 0, 0.7);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    assert_non_null(f = open_memstream(&buf, &len));
    assert_int_equal(cli_info_topo(t, f, &e), CP_OK);
    fclose(f);
    assert_non_null(strstr(buf, "  gpu0       to gpu2       no route"));
    assert_non_null(strstr(buf, "  gpu1       to gpu0         25.00 GB/s  nvlink gpu1 -> gpu0  "
                                "(1 hop, 0.70 us)"));
    assert_non_null(strstr(buf, "  gpu2       to gpu0       no route"));
    free(buf);
    cp_topo_free(t);
}

/* Asymmetric directions: gbs 10 a->b, 4 b->a. */
static void test_directions(void **state)
{
    cp_topo *t;
    cp_err e;
    cp_reach r;
    (void)state;
    assert_int_equal(load("{\"name\":\"d\",\"nodes\":[{\"id\":\"g0\",\"kind\":\"gpu\"},"
                          "{\"id\":\"g1\",\"kind\":\"gpu\"}],\"links\":[{\"a\":\"g0\",\"b\":\"g1\","
                          "\"kind\":\"pcie\",\"gbs\":10,\"gbs_ba\":4,\"latency_us\":1}]}",
                          &t, &e),
                     CP_OK);
    assert_int_equal(cp_reach_from(t, 1, &r, &e), CP_OK);
    assert_near(r.bott[0], 4.0, 0);
    cp_reach_free(&r);
    assert_int_equal(cp_reach_from(t, 0, &r, &e), CP_OK);
    assert_near(r.bott[1], 10.0, 0);
    cp_reach_free(&r);
    cp_topo_free(t);
}

static void expect_reject(const char *text, const char *needle, int line)
{
    cp_topo *t = NULL;
    cp_err e;
    assert_int_equal(load(text, &t, &e), CP_EINPUT);
    assert_null(t);
    if (!strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s'", e.msg, needle);
    if (line > 0)
        assert_int_equal(e.line, line);
}

#define NODES2 "\"nodes\":[{\"id\":\"g0\",\"kind\":\"gpu\"},\n{\"id\":\"g1\",\"kind\":\"gpu\"}]"

static void test_rejections(void **state)
{
    (void)state;
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g9\",\"kind\":\"pcie\",\"gbs\":1,\"latency_us\":1}]}",
                  "no node with id \"g9\"", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"gbs\":-25,\"latency_us\":1}]}",
                  "got -25", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"b\":\"g1\",\"kind\":\"pcie\",\"gbs\":1,\"latency_us\":1}]}",
                  "missing required key \"a\"", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"gbs\":1,\"latency_us\":0}]}",
                  "one-way latency", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"gbs\":2e5,\"latency_us\":1}]}",
                  "sanity limit", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g0\",\"kind\":\"pcie\",\"gbs\":1,\"latency_us\":1}]}",
                  "to itself", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[\n"
                  "{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"wire\",\"gbs\":1,\"latency_us\":1}]}",
                  "unknown value \"wire\"", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[]}",
                  "gpu \"g1\" cannot reach gpu \"g0\"", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g0\",\"kind\":\"gpu\"},\n"
                  "{\"id\":\"g0\",\"kind\":\"cpu\"}],\"links\":[]}",
                  "duplicate node id \"g0\"", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g0\",\"kind\":\"tpu\"}],\"links\":[]}",
                  "unknown value \"tpu\"", 1);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"c\",\"kind\":\"cpu\"}],\"links\":[]}",
                  "no GPU", 1);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g\",\"kind\":\"gpu\"},\n"
                  "{\"id\":\"n\",\"kind\":\"nic\"}],\"links\":[]}",
                  "missing required key \"net_gbs\"", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g\",\"kind\":\"gpu\",\"net_gbs\":3}],"
                  "\"links\":[]}",
                  "for nic nodes only", 1);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g\",\"kind\":\"gpu\"},\n"
                  "{\"id\":\"s\",\"kind\":\"pcie_switch\",\"reduce_gbs\":3}],\"links\":[]}",
                  "cannot reduce", 2);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[],\n\"calibration\":{\"nvlink\":"
                  "{\"bw_eff\":1.5}}}",
                  "fraction in (0, 1]", 3);
    expect_reject("{\"name\":\"x\"," NODES2 ",\"links\":[],\"extra\":1}", "unknown key \"extra\"",
                  0);
    /* the GPU's FP8 peak and SM count: GPUs only, positive, bounded (1e5
     * TFLOP/s; 1024 SMs, against a count of cores) */
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g\",\"kind\":\"gpu\"},\n"
                  "{\"id\":\"c\",\"kind\":\"cpu\",\"tflops_fp8\":1979}],\"links\":[]}",
                  "tflops_fp8 is for gpu nodes only", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[{\"id\":\"g\",\"kind\":\"gpu\"},\n"
                  "{\"id\":\"c\",\"kind\":\"cpu\",\"sms\":132}],\"links\":[]}",
                  "sms is for gpu nodes only", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[\n{\"id\":\"g\",\"kind\":\"gpu\",\"tflops_fp8\":0}],"
                  "\"links\":[]}",
                  "peak dense FP8 TFLOP/s", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[\n{\"id\":\"g\",\"kind\":\"gpu\",\"sms\":16896}],"
                  "\"links\":[]}",
                  "expected an integer from 1 to 1024, got 16896", 2);
    expect_reject("{\"name\":\"x\",\"nodes\":[\n{\"id\":\"g\",\"kind\":\"gpu\",\"sms\":132.5}],"
                  "\"links\":[]}",
                  "got 132.5", 2);
}

/* A GPU's FP8 peak and SM count as given; absent, both 0 (no FP8 tensor
 * cores, SMs unknown). */
static void test_gpu_fp8_sms(void **state)
{
    cp_topo *t;
    cp_err e;
    (void)state;
    assert_int_equal(load("{\"name\":\"x\",\"nodes\":[{\"id\":\"g0\",\"kind\":\"gpu\","
                          "\"tflops_fp8\":1979,\"sms\":132},{\"id\":\"g1\",\"kind\":\"gpu\"}],"
                          "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"nvlink\",\"gbs\":1,"
                          "\"latency_us\":1}]}", &t, &e), CP_OK);
    assert_near(t->nodes[0].tflops_fp8, 1979, 0);
    assert_int_equal(t->nodes[0].sms, 132);
    assert_near(t->nodes[1].tflops_fp8, 0, 0);
    assert_int_equal(t->nodes[1].sms, 0);
    cp_topo_free(t);
}

/* The GPU NVLink bandwidth of `gpu`: the sum over its nvlink links, GB/s
 * per direction. */
static double nvlink_gbs_of(const cp_topo *t, int gpu)
{
    double sum = 0;
    int i;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == CP_NVLINK && (t->links[i].a == gpu || t->links[i].b == gpu))
            sum += t->links[i].gbs[0];
    return sum;
}

/* The two large-model machines (docs/topologies.md): the Selene node and
 * the HGX H200, every GPU figure from its datasheet. */
static void test_shipped_a100_80g_h200(void **state)
{
    cp_topo *t;
    cp_err e;
    int g, i, nics = 0;
    (void)state;
    assert_int_equal(cp_topo_load("topologies/dgx-a100-80g.json", &t, &e), CP_OK);
    assert_int_equal(t->ngpus, 8);
    g = t->gpus[0];
    assert_near(t->nodes[g].mem_gbs, 2039, 0);       /* A100 80GB HBM2e, datasheet */
    assert_near(t->nodes[g].tflops_fp16, 312, 0);    /* BF16 dense */
    assert_near(t->nodes[g].tflops_fp8, 0, 0);       /* Ampere: no FP8 tensor cores */
    assert_int_equal(t->nodes[g].sms, 108);
    assert_near(t->nodes[g].capacity_gb, 85.9, 0);   /* 81,920 MiB x 2^20 / 1e9 = 85.90 */
    /* 12 NVLink 3 x 25 GB/s = 300 GB/s per direction per GPU, over 6 chips */
    assert_near(nvlink_gbs_of(t, g), 300, 1e-9);
    assert_int_equal(cp_topo_count(t, CP_NVSWITCH), 6);
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_NIC) {
            nics++;
            assert_near(t->nodes[i].net_gbs, 25, 0); /* 200 Gb/s HDR / 8 */
        }
    assert_int_equal(nics, 8);
    assert_near(t->calib.kind[CP_NVLINK].bw_eff, 0.8, 0); /* dgx-a100's block: NCCL's 20.0 of 25 */
    cp_topo_free(t);

    assert_int_equal(cp_topo_load("topologies/hgx-h200.json", &t, &e), CP_OK);
    g = t->gpus[0];
    assert_near(t->nodes[g].mem_gbs, 4800, 0);       /* HBM3e 4.8 TB/s */
    assert_near(t->nodes[g].tflops_fp16, 989, 0);    /* the H100's peaks */
    assert_near(t->nodes[g].tflops_fp8, 1979, 0);
    assert_int_equal(t->nodes[g].sms, 132);
    assert_near(t->nodes[g].capacity_gb, 150.76, 0); /* 143,771 MiB */
    /* 18 NVLink 4 x 25 = 450 GB/s per direction per GPU (4 + 5 + 5 + 4) */
    assert_near(nvlink_gbs_of(t, g), 450, 1e-9);
    for (i = 0, nics = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_NIC) {
            nics++;
            assert_near(t->nodes[i].net_gbs, 50, 0); /* 400 Gb/s NDR / 8 */
        }
    assert_int_equal(nics, 8);
    cp_topo_free(t);
}

/* Two hosts of (2 GPUs + 1 NIC on a switch): nodes 2 x 4 + 1 switch = 9;
 * links 2 x (3 + 1 NIC uplink) = 8. */
static void test_replicate(void **state)
{
    cp_topo *t, *r;
    cp_err e;
    cp_reach reach;
    int a, b;
    (void)state;
    assert_int_equal(load("{\"name\":\"h\",\"nodes\":[{\"id\":\"g0\",\"kind\":\"gpu\"},"
                          "{\"id\":\"g1\",\"kind\":\"gpu\"},{\"id\":\"s\",\"kind\":\"pcie_switch\"},"
                          "{\"id\":\"n\",\"kind\":\"nic\",\"net_gbs\":12.5,\"net_latency_us\":2}],"
                          "\"links\":["
                          "{\"a\":\"g0\",\"b\":\"s\",\"kind\":\"pcie\",\"gbs\":12,\"latency_us\":0.5},"
                          "{\"a\":\"g1\",\"b\":\"s\",\"kind\":\"pcie\",\"gbs\":12,\"latency_us\":0.5},"
                          "{\"a\":\"n\",\"b\":\"s\",\"kind\":\"pcie\",\"gbs\":12,\"latency_us\":0.5}]}",
                          &t, &e),
                     CP_OK);
    assert_int_equal(cp_topo_replicate(t, 2, &r, &e), CP_OK);
    assert_int_equal(r->nnodes, 9);
    assert_int_equal(r->nlinks, 8);
    assert_int_equal(r->ngpus, 4);
    assert_int_equal(r->nhosts, 2);
    a = cp_topo_find(r, "h0/g0");
    b = cp_topo_find(r, "h1/g0");
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(cp_reach_from(r, a, &reach, &e), CP_OK);
    /* g0 -> s -> n -> netsw -> n' -> s' -> g0': min(12, 12, 12.5, 12.5, 12, 12) = 12;
     * latency 0.5 + 0.5 + (2 NIC-to-NIC, split 1 + 1) + 0.5 + 0.5 = 4 us over 6 hops */
    assert_near(reach.bott[b], 12.0, 0);
    assert_near(reach.lat_us[b], 4.0, 1e-12);
    assert_int_equal(reach.hops[b], 6);
    cp_reach_free(&reach);
    /* replicating a multi-host topology is refused */
    {
        cp_topo *rr;
        assert_int_equal(cp_topo_replicate(r, 2, &rr, &e), CP_EINPUT);
    }
    cp_topo_free(r);
    cp_topo_free(t);
}

static void test_replicate_needs_nic(void **state)
{
    cp_topo *t, *r;
    cp_err e;
    (void)state;
    assert_int_equal(load(two_v100, &t, &e), CP_OK);
    assert_int_equal(cp_topo_replicate(t, 2, &r, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "needs a NIC"));
    cp_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_route_through_switch),
        cmocka_unit_test(test_no_transit_through_gpu),
        cmocka_unit_test(test_gpu_connectivity),
        cmocka_unit_test(test_info_rows),
        cmocka_unit_test(test_directions),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_gpu_fp8_sms),
        cmocka_unit_test(test_shipped_a100_80g_h200),
        cmocka_unit_test(test_replicate),
        cmocka_unit_test(test_replicate_needs_nic),
    };
    return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
