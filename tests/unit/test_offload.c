/*
 * test_offload.c - the memory tiers of large-model layouts (src/llm/
 * offload.c, docs/model.md eq. T1-T3): the pool tier's rates and capacity
 * from its ports and devices shared by every GPU of every host, the
 * optimizer step offloaded as its closed form, and the tiers' capacity
 * deciding whether a layout that offloads fits.
 */
#include "testutil.h"

#include "llm/iteration.h"
#include "llm/offload.h"
#include "load/load.h"

/* Two GPUs of 100 GB on NVLink, each on a PCIe switch (16 GB/s), a socket
 * that sums at 10 GB/s holding `%s` GB of DRAM, and a pool two hosts
 * share: one switch, two devices of 20 GB/s each way and 64 GB, a 16 GB/s
 * port from the socket. */
static const char host_json[] =
    "{\"name\": \"toy-host\", \"nodes\": ["
    "{\"id\": \"gpu0\", \"kind\": \"gpu\", \"model\": \"A100-toy\", \"mem_gbs\": 100, "
    "\"capacity_gb\": 100, \"tflops\": 1, \"tflops_fp16\": 1},"
    "{\"id\": \"gpu1\", \"kind\": \"gpu\", \"model\": \"A100-toy\", \"mem_gbs\": 100, "
    "\"capacity_gb\": 100, \"tflops\": 1, \"tflops_fp16\": 1},"
    "{\"id\": \"sw\", \"kind\": \"pcie_switch\"},"
    "{\"id\": \"cpu0\", \"kind\": \"cpu\", \"reduce_gbs\": 10, \"capacity_gb\": %s},"
    "{\"id\": \"nic0\", \"kind\": \"nic\", \"net_gbs\": 12.5, \"net_latency_us\": 2}],"
    "\"links\": ["
    "{\"a\": \"gpu0\", \"b\": \"gpu1\", \"kind\": \"nvlink\", \"gbs\": 25, \"latency_us\": 1},"
    "{\"a\": \"gpu0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"gpu1\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"nic0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"cpu0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1}],"
    "\"pool\": {\"switches\": 1, \"devices_per_switch\": 2,"
    " \"device\": {\"model\": \"toy-cxl\", \"read_gbs\": 20, \"write_gbs\": 20, "
    "\"capacity_gb\": 64},"
    " \"device_link\": {\"gbs\": 20, \"latency_us\": 0.1},"
    " \"ports\": [{\"node\": \"cpu0\", \"switch\": 0, \"gbs\": 16, \"latency_us\": 0.1}]}}";

static cp_topo *host(const char *dram_gb)
{
    char text[4096], *path;
    cp_topo *t = NULL;
    cp_err e;
    snprintf(text, sizeof text, host_json, dram_gb);
    path = write_temp(text);
    assert_non_null(path);
    cp_err_clear(&e);
    if (cp_topo_load(path, &t, &e) != CP_OK)
        fail_msg("%s", e.msg);
    unlink(path);
    free(path);
    return t;
}

/* A GPT of 4 blocks: h 64, 4 heads, MLP 256, sequence 32, vocabulary 512,
 * learned positions, tied head.  Parameters by hand: a block's attention
 * 4 h^2 + 4 h = 16,640, MLP 2 x 64 x 256 + 256 + 64 = 33,088, two
 * LayerNorms 4 h = 256: 49,984; x 4 = 199,936; embeddings 512 x 64 +
 * 32 x 64 = 34,816; the final LayerNorm 128: 234,880. */
static cp_xformer model(void)
{
    cp_xformer x = {.layers = 4, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn = 256,
                    .seq = 32, .vocab = 512, .max_pos = 32, .mlp = CP_MLP_GELU,
                    .pos = CP_POS_LEARNED, .norm = CP_NORM_LAYER, .tied = 1,
                    .window_every = 1, .qkv_bias = 1, .o_bias = 1, .mlp_bias = 1};
    return x;
}

/* The pool seen by one GPU when both hosts use it (eq. T3): the socket's
 * 16 GB/s port shared by the host's 2 GPUs, 8 GB/s; the devices' 2 x 20
 * GB/s each way over the 4 GPUs, 10; the GPU's own link 16: 8 GB/s each
 * way.  The step streams through the port (16) or the host's share of the
 * devices ((40 + 40) / 2 = 40): 16.  Capacity 2 x 64 GB over 2 hosts: 64
 * a host.  Host DRAM: the socket's 48 GB. */
static void test_tier_rates(void **state)
{
    cp_topo *t = host("48");
    cp_tiers T;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_tiers_build(t, 2, &T, &e), CP_OK);
    assert_true(T.t[CP_TIER_POOL].available);
    assert_near(T.t[CP_TIER_POOL].d2h_gbs, 8, 1e-12);
    assert_near(T.t[CP_TIER_POOL].h2d_gbs, 8, 1e-12);
    assert_near(T.t[CP_TIER_POOL].step_gbs, 16, 1e-12);
    assert_near(T.t[CP_TIER_POOL].capacity_gb, 64, 1e-12);
    assert_true(T.t[CP_TIER_HOST].available);
    assert_near(T.t[CP_TIER_HOST].capacity_gb, 48, 1e-12);
    cp_topo_free(t);
}

/* Eq. T1: the gradient shard out (P x 2 bytes at d2h), the step on the
 * tier's stream (P x per_host x 28 bytes), the 16-bit weights back (P x
 * 2 at h2d), each copy paying the tier's latency.  P = 1e6, 2 GPUs a
 * host, on the pool above (latency 0.1 us, the port's):
 *   out 0.1 + 2e6 / 8e3 = 250.1 us; step 2 x 28e6 / 16e3 = 3500 us;
 *   back 0.1 + 250 = 250.1 us: 4000.2 us = 4.0002 ms. */
static void test_offload_step(void **state)
{
    cp_topo *t = host("48");
    cp_tiers T;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_tiers_build(t, 2, &T, &e), CP_OK);
    assert_near(T.t[CP_TIER_POOL].lat_us, 0.1, 1e-12);
    assert_near(cp_offload_opt_ms(&T.t[CP_TIER_POOL], 1e6, 2, 2), 4.0002, 1e-9);
    T.t[CP_TIER_POOL].available = 0;
    assert_true(cp_offload_opt_ms(&T.t[CP_TIER_POOL], 1e6, 2, 2) < 0);
    cp_topo_free(t);
}

/* The tiers' capacity decides: TP 1, PP 1, DP 4 (two hosts of 2), the
 * distributed optimizer offloaded to host DRAM.  Each GPU holds 12 bytes
 * of master weights and Adam moments for a quarter of the 234,880
 * parameters: 704,640 bytes offloaded, 1,409,280 a host.  A socket of
 * 0.0014 GB cannot hold them; one of 0.0015 GB can; offloaded to the pool
 * (64 GB a host) they fit either way. */
static void test_capacity_decides(void **state)
{
    cp_xformer x = model();
    const char *dram[2] = {"0.0014", "0.0015"};
    int k, tier;
    int64_t total, active;
    (void)state;
    cp_xf_params(&x, &total, &active);
    assert_int_equal(total, 234880);
    for (tier = CP_LAYOUT_TIER_HOST; tier <= CP_LAYOUT_TIER_POOL; tier++)
        for (k = 0; k < 2; k++) {
            cp_topo *t = host(dram[k]);
            cp_tiers T;
            cp_layout l;
            cp_groups G;
            cp_llm_opts o;
            cp_llm_result r;
            cp_gpu g;
            cp_err e;
            cp_err_clear(&e);
            assert_int_equal(cp_gpu_from_topo(t, &g, &e), CP_OK);
            assert_int_equal(cp_tiers_build(t, 2, &T, &e), CP_OK);
            cp_layout_default(&l);
            l.gbs = 8, l.zero = 1, l.offload_opt = tier;
            assert_int_equal(cp_layout_resolve(&l, &x, 4, 2, &e), CP_OK);
            assert_int_equal(cp_groups_build(&G, t, &l, 0, NULL, &e), CP_OK);
            memset(&o, 0, sizeof o);
            o.dp_alg = CP_ALGS;
            o.tiers = &T;
            assert_int_equal(cp_llm_predict(&x, &l, &g, &G, &o, &r, &e), CP_OK);
            assert_near(r.mem.offloaded, 12.0 * 234880 / 4, 1e-6);
            assert_int_equal(r.fits, tier == CP_LAYOUT_TIER_POOL || k == 1);
            cp_llm_result_free(&r);
            cp_groups_free(&G);
            cp_topo_free(t);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tier_rates),
        cmocka_unit_test(test_offload_step),
        cmocka_unit_test(test_capacity_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
