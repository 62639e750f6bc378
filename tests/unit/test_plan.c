/*
 * test_plan.c - the COARSE planner: a split with a closed form, the
 * anti-local case, every shipped memory-device machine with every shipped
 * model, the plan file round trip, the runtime loader's checks, and the
 * deadlock check.
 */
#include "testutil.h"

#include "load/load.h"
#include "out/plan_write.h"
#include "plan/deadlock.h"
#include "plan/families.h"
#include "plan/planner.h"
#include "runtime/planfile.h"

#define MIB 1048576
#define TINY 1e-6 /* us: a hop latency too small to matter */

/* One tensor of `numel` fp32 elements in one layer. */
static cp_model *one_tensor_model(int64_t numel)
{
    cp_model *m = calloc(1, sizeof *m);
    cp_err e;
    m->name = strdup("one");
    m->dtype = CP_FP32;
    m->ntensors = m->nlayers = 1;
    m->tensors = calloc(1, sizeof *m->tensors);
    m->layers = calloc(1, sizeof *m->layers);
    m->tensors[0].name = strdup("w");
    m->tensors[0].numel = numel;
    m->layers[0].fwd_ms = m->layers[0].bwd_ms = -1;
    m->split = CP_SPLIT_PARAMS;
    assert_int_equal(cp_model_finish(m, &e), CP_OK);
    return m;
}

static int node(cp_topo *t, const char *id, cp_node_kind k, double reduce)
{
    int v = cp_topo_add_node(t, id, k, 0);
    t->nodes[v].reduce_gbs = reduce;
    return v;
}

static int build_plan(const cp_model *m, const cp_topo *t, double compute_ms, cp_plan_mode mode,
                      cp_predictor *pr, cp_plan *p)
{
    cp_plan_opts o;
    cp_err e;
    int rc;
    cp_plan_opts_default(&o);
    o.pred.compute_ms = compute_ms;
    o.mode = mode;
    rc = cp_predictor_init(pr, m, t, &o.pred, &e);
    if (rc)
        fail_msg("predictor: %s", e.msg);
    rc = cp_plan_build(pr, &o, p, &e);
    if (rc)
        fail_msg("plan: %s", e.msg);
    return rc;
}

/* Two GPUs joined by a 30 GB/s NVLink, both on a PCIe switch (12 GB/s
 * each) with one memory device on a 20 GB/s CXL link (reduces at 100).
 *   AllReduce of two GPUs: the ring uses the NVLink both ways, 2(n-1)/n = 1
 *     byte per byte: 30 GB/s of bucket bytes;
 *   proxy: each GPU pushes and pulls its share; the device link carries
 *     both GPUs' pushes: min(12, 20 / 2, 100 / 2) = 10 GB/s.
 * They use different links, so they run at once; one bucket of 64 MiB ready
 * at the end of backward (30 ms, nothing to overlap) splits as 30 : 10, both
 * finishing after 64 MiB / 40 GB/s = 67108864 / 40e9 s = 1.6777216 ms.
 * 64 MiB in 512 KiB shards = 128 shards, 96 : 32 exactly. */
static void test_closed_form_split(void **state)
{
    cp_model *m = one_tensor_model(16 * MIB);
    cp_topo *t = cp_topo_new("pair-proxy");
    cp_predictor pr;
    cp_plan p;
    cp_err e;
    int g0, g1, sw, mem;
    (void)state;
    g0 = node(t, "g0", CP_GPU, 0);
    g1 = node(t, "g1", CP_GPU, 0);
    sw = node(t, "sw", CP_PCIE_SWITCH, 0);
    mem = node(t, "mem", CP_MEMDEV, 100);
    cp_topo_add_link(t, g0, g1, CP_NVLINK, 30, 0, TINY);
    cp_topo_add_link(t, g0, sw, CP_PCIE, 12, 0, TINY);
    cp_topo_add_link(t, g1, sw, CP_PCIE, 12, 0, TINY);
    cp_topo_add_link(t, mem, sw, CP_CXL, 20, 0, TINY);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    build_plan(m, t, 30, CP_PLAN_COARSE, &pr, &p);
    assert_near(p.fams.f[CP_FAM_PROXY_BW].gbs, 10.0, 1e-9);
    assert_int_not_equal(p.fams.f[CP_FAM_ALLREDUCE].group, p.fams.f[CP_FAM_PROXY_BW].group);
    assert_int_equal(p.nb, 1);
    assert_near(p.b[0].x[CP_FAM_ALLREDUCE], 0.75, 1e-6); /* 30 / (30 + 10) */
    assert_near(p.lp_iteration_ms, 30 + 1.6777216, 1e-5);
    assert_near(p.iteration_ms, 30 + 1.6777216, 1e-4);
    assert_int_equal(p.fam_bytes[CP_FAM_ALLREDUCE], 48.0 * MIB); /* 96 shards of 512 KiB */
    assert_true(p.iteration_ms <= p.allreduce_ms); /* all-AllReduce: 64 MiB / 30 = 2.24 ms */
    assert_near(p.allreduce_ms, 30 + 67108864 / 30e6, 1e-4);
    /* sensitivity: z = S / (B1 + B2), dz/dB1 = -S / (B1 + B2)^2 =
     * -67108864 / 40^2 / 1e6 ms per GB/s = -0.041943 ms; the ring binds both
     * NVLink directions with dual 1, so each reports 0.041943 ms saved */
    assert_true(p.nbind >= 1);
    assert_true(p.bind[0].res < 2 * t->nlinks && t->links[p.bind[0].res >> 1].kind == CP_NVLINK);
    assert_near(p.bind[0].save_ms, 67108864 / 1600e6, 1e-5);
    cp_plan_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Anti-locality: two GPUs on switch sw0 (32 GB/s links); device A sits in
 * the same switch behind a 9 GB/s link, device B at the CPU behind 16 GB/s
 * (the switch's uplink is 32).  Each device serves both GPUs, so its link
 * carries two pushes per byte:  A: 9 / 2 = 4.5 GB/s, B: min(16, 32) / 2 = 8.
 * The throughput mix uses both, 4.5 + 8 = 12.5 GB/s: the remote device
 * takes 8 / 12.5 = 64% of the bytes, the local one 36%; the latency route
 * picks the local one (two hops, not three). */
static void test_anti_local(void **state)
{
    cp_model *m = one_tensor_model(64 * MIB);
    cp_topo *t = cp_topo_new("anti-local");
    cp_predictor pr;
    cp_plan p;
    cp_err e;
    const cp_family *bw;
    int g0, g1, sw, cpu, a, b, k;
    double share_a = 0, share_b = 0;
    (void)state;
    g0 = node(t, "g0", CP_GPU, 0);
    g1 = node(t, "g1", CP_GPU, 0);
    sw = node(t, "sw0", CP_PCIE_SWITCH, 0);
    cpu = node(t, "cpu0", CP_CPU, 0);
    a = node(t, "memA", CP_MEMDEV, 100);
    b = node(t, "memB", CP_MEMDEV, 100);
    cp_topo_add_link(t, g0, sw, CP_PCIE, 32, 0, 1);
    cp_topo_add_link(t, g1, sw, CP_PCIE, 32, 0, 1);
    cp_topo_add_link(t, sw, cpu, CP_PCIE, 32, 0, 1);
    cp_topo_add_link(t, a, sw, CP_CXL, 9, 0, 1);
    cp_topo_add_link(t, b, cpu, CP_CXL, 16, 0, 1);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    build_plan(m, t, 30, CP_PLAN_PROXY, &pr, &p);
    bw = &p.fams.f[CP_FAM_PROXY_BW];
    assert_near(bw->gbs, 12.5, 1e-9);
    for (k = 0; k < bw->ndev; k++) {
        if (bw->dev[k] == a)
            share_a = bw->share[k];
        if (bw->dev[k] == b)
            share_b = bw->share[k];
    }
    assert_near(share_b, 0.64, 1e-9);
    assert_near(share_a, 0.36, 1e-9);
    assert_int_equal(p.fams.f[CP_FAM_PROXY_LAT].dev[0], a);
    /* the one big bucket goes through the bandwidth route, mostly to B */
    assert_true(p.b[0].x[CP_FAM_PROXY_BW] > 0.99);
    cp_plan_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* A plan through the writer and back through the runtime loader. */
static void round_trip(const cp_plan *p, const char *mpath, const char *tpath)
{
    cp_plan_inputs in = {mpath, tpath, 1, 2};
    json_t *j = cp_plan_to_json(p, &in);
    char *text, *path;
    cpl_plan *lp;
    cp_err e;
    assert_non_null(j);
    text = json_dumps(j, JSON_INDENT(1));
    json_decref(j);
    path = write_temp(text);
    free(text);
    assert_int_equal(cp_plan_check_waits(p, &e), CP_OK);
    if (cp_planfile_load(path, &lp, &e) != CP_OK)
        fail_msg("%s: reloading the plan: %s: %s", mpath, e.where, e.msg);
    assert_int_equal(cpl_bucket_count(lp), (size_t)p->nb);
    assert_int_equal(cpl_tensor_count(lp), (size_t)p->model->ntensors);
    if (p->fams.f[CP_FAM_PROXY_RING].available && cpl_route_count(lp) > 0) {
        /* each GPU's proxy-ring device survives the trip; on the DGX-1 by
         * hand: GPUs 2k and 2k+1 share PCIe switch swk with memk, so GPU g
         * pushes to mem(g/2) (topologies/dgx1-v100-cxl.json, links) */
        int g;
        for (g = 0; g < p->topo->ngpus; g++) {
            int h = cpl_ring_home(lp, g);
            char want[16];
            const char *name = p->topo->nodes[p->fams.f[CP_FAM_PROXY_RING].client_dev[g]].id;
            if (h >= 0)
                assert_string_equal(cpl_device_name(lp, (size_t)h), name);
            snprintf(want, sizeof want, "mem%d", g / 2);
            if (strcmp(p->topo->name, "dgx1-v100-cxl") == 0)
                assert_string_equal(name, want);
        }
    }
    cpl_close(lp);
    drop_temp(path);
}

/* Acceptance (issue 5): on every shipped memory-device topology with every
 * shipped model, plan succeeds, the file loads back, coarse is never slower
 * than the best of ring and tree, and the LP-free bound is never beaten. */
static void test_shipped_machines(void **state)
{
    static const char *const topos[] = {"dgx1-v100-cxl", "dgx1-p100-cxl",
                                        "aws-p3.16xlarge-cxl", "pcie-t4-cxl"};
    static const char *const models[] = {"resnet50", "vgg16", "bert-base", "bert-large", "gpt2",
                                         "gpt2-medium"};
    static const double compute[] = {30, 300}; /* communication-bound and compute-bound */
    size_t i, j, c;
    (void)state;
    for (i = 0; i < sizeof topos / sizeof topos[0]; i++)
        for (j = 0; j < sizeof models / sizeof models[0]; j++)
            for (c = 0; c < 2; c++) {
                char mp[128], tp[128];
                cp_model *m;
                cp_topo *t;
                cp_predictor pr;
                cp_plan p;
                cp_prediction ring, tree;
                cp_err e;
                snprintf(mp, sizeof mp, "models/%s.json", models[j]);
                snprintf(tp, sizeof tp, "topologies/%s.json", topos[i]);
                assert_int_equal(cp_model_load(mp, &m, &e), CP_OK);
                assert_int_equal(cp_topo_load(tp, &t, &e), CP_OK);
                build_plan(m, t, compute[c], CP_PLAN_COARSE, &pr, &p);
                assert_int_equal(cp_predict(&pr, CP_S_RING, &p.opts.pred, 0, &ring, &e), CP_OK);
                assert_int_equal(cp_predict(&pr, CP_S_TREE, &p.opts.pred, 0, &tree, &e), CP_OK);
                if (p.iteration_ms > fmin(ring.iteration_ms, tree.iteration_ms) + 1e-9)
                    fail_msg("%s on %s: coarse %.4f ms > ring %.4f / tree %.4f", models[j],
                             topos[i], p.iteration_ms, ring.iteration_ms, tree.iteration_ms);
                assert_true(p.iteration_ms >= p.lower_bound_ms - 1e-9);
                assert_true(p.iteration_ms >= p.compute_ms - 1e-9);
                round_trip(&p, mp, tp);
                cp_plan_free(&p);
                cp_predictor_free(&pr);
                cp_topo_free(t);
                cp_model_free(m);
            }
}

/* A plan for gpt2 verified against resnet50's tensors names the first. */
static void test_loader_rejects_wrong_model(void **state)
{
    cp_model *m, *other;
    cp_topo *t;
    cp_predictor pr;
    cp_plan p;
    cp_err e;
    cp_plan_inputs in = {"models/gpt2.json", "topologies/dgx1-v100-cxl.json", 1, 2};
    json_t *j;
    char *text, *path, err[600];
    const char **names;
    int64_t *bytes;
    cpl_plan *lp;
    int i;
    (void)state;
    assert_int_equal(cp_model_load("models/gpt2.json", &m, &e), CP_OK);
    assert_int_equal(cp_model_load("models/resnet50.json", &other, &e), CP_OK);
    assert_int_equal(cp_topo_load("topologies/dgx1-v100-cxl.json", &t, &e), CP_OK);
    build_plan(m, t, 100, CP_PLAN_COARSE, &pr, &p);
    j = cp_plan_to_json(&p, &in);
    text = json_dumps(j, 0);
    json_decref(j);
    path = write_temp(text);
    free(text);
    assert_int_equal(cpl_open(path, &lp, err, sizeof err), 0);
    {   /* a data-parallel plan has no layout section (plan-format.md) */
        cpl_layout L;
        assert_int_equal(cpl_get_layout(lp, &L), -1);
    }
    names = malloc((size_t)other->ntensors * sizeof *names);
    bytes = malloc((size_t)other->ntensors * sizeof *bytes);
    for (i = 0; i < other->ntensors; i++) {
        names[i] = other->tensors[i].name;
        bytes[i] = other->tensors[i].numel * 4;
    }
    /* resnet50's first tensor is conv1.weight, which a gpt2 plan lacks */
    assert_int_equal(cpl_verify(lp, (size_t)other->ntensors, names, bytes, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"conv1.weight\""));
    /* and the right model passes */
    free(names);
    free(bytes);
    names = malloc((size_t)m->ntensors * sizeof *names);
    bytes = malloc((size_t)m->ntensors * sizeof *bytes);
    for (i = 0; i < m->ntensors; i++) {
        names[i] = m->tensors[i].name;
        bytes[i] = m->tensors[i].numel * 4;
    }
    assert_int_equal(cpl_verify(lp, (size_t)m->ntensors, names, bytes, err, sizeof err), 0);
    bytes[3] += 4; /* one tensor one element bigger: named */
    assert_int_equal(cpl_verify(lp, (size_t)m->ntensors, names, bytes, err, sizeof err), -1);
    assert_non_null(strstr(err, m->tensors[3].name));
    free(names);
    free(bytes);
    cpl_close(lp);
    drop_temp(path);
    cp_plan_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
    cp_model_free(other);
}

/* Participant 0 does 0 then 1; participant 1 does 1 then 0: each waits for
 * the other (the classic head-of-line deadlock).  Same orders: none. */
static void test_deadlock_check(void **state)
{
    static const int a[] = {0, 1}, b[] = {1, 0}, c[] = {0, 1};
    const int *bad[] = {a, b}, *good[] = {a, c};
    static const int len[] = {2, 2};
    cp_err e;
    (void)state;
    assert_int_equal(cp_check_waits(2, bad, len, 2, NULL, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "deadlock"));
    assert_int_equal(cp_check_waits(2, good, len, 2, NULL, &e), CP_OK);
}

/* The loader refuses plans whose structure is wrong, with a position. */
static void test_loader_rejects_bad_files(void **state)
{
    static const char head[] =
        "{\"format\": \"coarse-plan/1\", \"model\": {\"name\": \"m\", \"tensors\": 1},\n"
        "\"topology\": {\"name\": \"t\", \"gpus\": 2},\n\"buckets\": [{\"id\": 0, \"bytes\": 8, "
        "\"ready_ms\": 1,\n\"tensors\": [{\"name\": \"w\", \"offset\": 0, \"bytes\": 8}],\n"
        "\"routes\": [";
    const struct {
        const char *routes, *needle;
    } cases[] = {
        {"{\"order\": 0, \"kind\": \"allreduce\", \"algorithm\": \"ring\", \"devices\": [], "
         "\"offset\": 0, \"bytes\": 4, \"shards\": 1}]}]}",
         "routes cover 4 of the bucket's 8 bytes"},
        {"{\"order\": 0, \"kind\": \"allreduce\", \"algorithm\": \"ring\", \"devices\": [], "
         "\"offset\": 0, \"bytes\": 4, \"shards\": 1},\n{\"order\": 0, \"kind\": \"proxy-bw\", "
         "\"algorithm\": \"proxy-bw\", \"devices\": [\"mem0\"], \"offset\": 4, \"bytes\": 4, "
         "\"shards\": 1}]}]}",
         "used twice"},
        {"{\"order\": 0, \"kind\": \"teleport\", \"algorithm\": \"x\", \"devices\": [], "
         "\"offset\": 0, \"bytes\": 8, \"shards\": 1}]}]}",
         "unknown value \"teleport\""},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048], *path;
        cpl_plan *p;
        cp_err e;
        snprintf(text, sizeof text, "%s%s", head, cases[i].routes);
        path = write_temp(text);
        assert_int_equal(cp_planfile_load(path, &p, &e), CP_EINPUT);
        if (!strstr(e.msg, cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].needle);
        drop_temp(path);
    }
    {
        char *path = write_temp("{\"format\": \"coarse-plan/9\"}");
        cpl_plan *p;
        cp_err e;
        assert_int_equal(cp_planfile_load(path, &p, &e), CP_EINPUT);
        assert_non_null(strstr(e.msg, "unsupported plan format"));
        drop_temp(path);
    }
}

/* The participants a runtime gives ranks to (coarse_plan.h): the proxies
 * that some route names, in the plan's order, then the other devices in
 * order of first mention.  By hand, for the plan below: mem0 and mem1 are
 * proxies named by routes, mem2 is a proxy no route names (no rank), cpu1
 * then cpu0 come from the ps route: [mem0, mem1, cpu1, cpu0].  GPUs 0, 1
 * push to mem0 in proxy-ring, GPUs 2, 3 to mem1. */
static void test_loader_participants(void **state)
{
    static const char head[] =
        "{\"format\": \"coarse-plan/1\", \"model\": {\"name\": \"m\", \"tensors\": 1, "
        "\"dtype\": \"fp16\"},\n\"topology\": {\"name\": \"t\", \"gpus\": 4, \"hosts\": %d},\n"
        "\"proxies\": [{\"device\": \"mem0\", \"clients\": [\"gpu0\"], \"ring_clients\": [0, 1]},"
        " {\"device\": \"mem1\", \"ring_clients\": [2, %s]}, {\"device\": \"mem2\"}],\n"
        "\"buckets\": [{\"id\": 0, \"bytes\": 12, \"ready_ms\": 1,\n"
        "\"tensors\": [{\"name\": \"w\", \"offset\": 0, \"bytes\": 12}],\n\"routes\": [\n"
        "{\"order\": 0, \"kind\": \"ps\", \"algorithm\": \"ps\", \"devices\": [\"cpu1\", \"cpu0\"], "
        "\"offset\": 0, \"bytes\": 4, \"shards\": 2},\n"
        "{\"order\": 1, \"kind\": \"proxy-ring\", \"algorithm\": \"proxy-ring\", \"devices\": "
        "[\"mem1\", \"mem0\"], \"offset\": 4, \"bytes\": 4, \"shards\": 1},\n"
        "{\"order\": 2, \"kind\": \"proxy-bw\", \"algorithm\": \"proxy-bw\", \"devices\": "
        "[\"mem0\"], \"offset\": 8, \"bytes\": 4, \"shards\": 1}]}]}\n";
    const struct {
        int hosts;
        const char *last, *needle; /* NULL: loads */
    } cases[] = {
        {2, "3", NULL},
        {2, "4", "ring_clients: expected GPU indices 0 to 3"},
        {2, "1", "ring_clients: GPU 1 pushes to two devices"},
        {3, "3", "4 GPUs do not divide among 3 hosts"},
    };
    static const char *const want[] = {"mem0", "mem1", "cpu1", "cpu0"};
    size_t i, d;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[4096], *path;
        cpl_plan *p = NULL;
        cp_err e;
        snprintf(text, sizeof text, head, cases[i].hosts, cases[i].last);
        path = write_temp(text);
        if (cases[i].needle) {
            assert_int_equal(cp_planfile_load(path, &p, &e), CP_EINPUT);
            if (!strstr(e.msg, cases[i].needle))
                fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].needle);
            drop_temp(path);
            continue;
        }
        if (cp_planfile_load(path, &p, &e) != CP_OK)
            fail_msg("%s", e.msg);
        assert_int_equal(cpl_host_count(p), 2);
        assert_string_equal(cpl_dtype(p), "fp16");
        assert_int_equal(cpl_device_count(p), 4);
        for (d = 0; d < 4; d++)
            assert_string_equal(cpl_device_name(p, d), want[d]);
        assert_null(cpl_device_name(p, 4));
        assert_int_equal(cpl_route_device_index(p, 0, 0, 0), 2); /* cpu1 */
        assert_int_equal(cpl_route_device_index(p, 0, 0, 1), 3); /* cpu0 */
        assert_int_equal(cpl_route_device_index(p, 0, 1, 0), 1); /* mem1 */
        assert_int_equal(cpl_route_device_index(p, 0, 1, 2), -1);
        assert_int_equal(cpl_ring_home(p, 0), 0);
        assert_int_equal(cpl_ring_home(p, 1), 0);
        assert_int_equal(cpl_ring_home(p, 3), 1);
        assert_int_equal(cpl_ring_home(p, 4), -1);
        cpl_close(p);
        drop_temp(path);
    }
}

/* Load a pattern puts on resource r (0 when it does not touch it). */
static double pattern_use(const cp_pattern *p, int r)
{
    int k;
    for (k = 0; k < p->nuse; k++)
        if (p->arc[k] == r)
            return p->use[k];
    return 0;
}

/* The ps footprint of three DGX-1 V100 hosts computed by symmetry from a
 * two-host window against the one routed pair by pair (the same machine
 * without its replica record).  Equal-width routes may pick other NICs, so
 * what must agree is what leaves and enters each host over the network, the
 * packed rate, and the sums.  By hand: each of the 3 x 2 = 6 sockets sums
 * what 24 GPUs push, 1/6 of every byte each: 24 / 6 = 4 bytes per byte. */
static void test_ps_footprint_symmetry(void **state)
{
    cp_topo *t, *flat;
    cp_coll c;
    cp_families sym, pairs;
    cp_err e;
    int k, h, ncpu = 0;
    (void)state;
    assert_int_equal(cp_topo_load_hosts("topologies/dgx1-v100.json", 3, &t, &e), CP_OK);
    assert_non_null(t->rep_base);
    flat = cp_topo_clone(t);
    assert_non_null(flat);
    cp_topo_free(flat->rep_base); /* forget the replica: every pair routed */
    flat->rep_base = NULL;
    flat->rep_hosts = 0;
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    assert_int_equal(cp_families_build(t, &c, &sym, &e), CP_OK);
    assert_int_equal(cp_families_build(flat, &c, &pairs, &e), CP_OK);
    assert_true(sym.f[CP_FAM_PS].available);
    for (h = 0; h < 3; h++) {
        double out_s = 0, out_p = 0, in_s = 0, in_p = 0;
        for (k = 0; k < t->nlinks; k++)
            if (t->links[k].kind == CP_NET && t->nodes[t->links[k].a].host == h) {
                out_s += pattern_use(&sym.f[CP_FAM_PS].load, 2 * k);
                out_p += pattern_use(&pairs.f[CP_FAM_PS].load, 2 * k);
                in_s += pattern_use(&sym.f[CP_FAM_PS].load, 2 * k + 1);
                in_p += pattern_use(&pairs.f[CP_FAM_PS].load, 2 * k + 1);
            }
        assert_true(out_s > 0);
        assert_near(out_s, out_p, 1e-9);
        assert_near(in_s, in_p, 1e-9);
    }
    for (k = 0; k < t->nnodes; k++)
        if (t->nodes[k].kind == CP_CPU) {
            assert_near(pattern_use(&sym.f[CP_FAM_PS].load, 2 * t->nlinks + k), 4.0, 1e-12);
            assert_near(pattern_use(&pairs.f[CP_FAM_PS].load, 2 * t->nlinks + k), 4.0, 1e-12);
            ncpu++;
        }
    assert_int_equal(ncpu, 6);
    assert_near(sym.f[CP_FAM_PS].gbs, pairs.f[CP_FAM_PS].gbs, 1e-9);
    cp_families_free(&sym);
    cp_families_free(&pairs);
    cp_coll_free(&c);
    cp_topo_free(flat);
    cp_topo_free(t);
}

/* The planner sees what predict sees: four accumulated micro-batches of
 * 100 ms and DDP's copies into the buckets (--bucket-view: none back).  By
 * hand: gpt2 has 124,439,808 parameters, 497,759,232 bytes of fp32
 * gradients; one pass at the V100's 900 GB/s reads and writes them:
 * 2 x 497,759,232 / 900e6 = 1.10613163 ms.  Compute 4 x 100 + 1.10613163;
 * with a copy back, 1.10613163 more. */
static void test_plan_accumulation(void **state)
{
    cp_model *m;
    cp_topo *t;
    cp_predictor pr;
    cp_plan_opts o;
    cp_plan p;
    cp_err e;
    int view;
    (void)state;
    assert_int_equal(cp_model_load("models/gpt2.json", &m, &e), CP_OK);
    assert_int_equal(cp_topo_load("topologies/dgx1-v100-cxl.json", &t, &e), CP_OK);
    for (view = 1; view >= 0; view--) {
        cp_plan_opts_default(&o);
        o.pred.compute_ms = 100;
        o.pred.accum_steps = 4;
        o.pred.bucket_view = view;
        assert_int_equal(cp_predictor_init(&pr, m, t, &o.pred, &e), CP_OK);
        assert_int_equal(cp_plan_build(&pr, &o, &p, &e), CP_OK);
        assert_near(p.compute_ms, 401.10613163 + (view ? 0 : 1.10613163), 1e-7);
        assert_true(p.iteration_ms >= p.compute_ms - 1e-9);
        assert_true(p.iteration_ms >= p.lower_bound_ms - 1e-9);
        cp_plan_free(&p);
        cp_predictor_free(&pr);
    }
    cp_topo_free(t);
    cp_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_form_split),
        cmocka_unit_test(test_anti_local),
        cmocka_unit_test(test_shipped_machines),
        cmocka_unit_test(test_loader_rejects_wrong_model),
        cmocka_unit_test(test_deadlock_check),
        cmocka_unit_test(test_loader_rejects_bad_files),
        cmocka_unit_test(test_loader_participants),
        cmocka_unit_test(test_ps_footprint_symmetry),
        cmocka_unit_test(test_plan_accumulation),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
