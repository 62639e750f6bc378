/*
 * test_search.c - the layout search (src/llm/search.c) on a small model and
 * a machine of two hosts of two GPUs: the space counted by hand, pruning
 * that never drops the optimum (the bounded answer equals the exhaustive
 * one, and no layout predict prices beats it), a memory tier without
 * bandwidth never chosen, a pool without capacity changing nothing, and
 * split searches merging into the single-process answer (as MPI ranks do).
 */
#include "testutil.h"

#include "cli/search_report.h"
#include "llm/search.h"
#include "load/load.h"

/* One host: two GPUs on NVLink (25 GB/s), each on a PCIe switch with a
 * 12.5 GB/s NIC, a CPU socket that sums at 10 GB/s (30 GB/s of memory
 * streaming).  1 TFLOP/s 16-bit GPUs of 1 GB: a 4-layer model barely fits. */
static const char host_json[] =
    "{\"name\": \"toy-host\", \"nodes\": ["
    "{\"id\": \"gpu0\", \"kind\": \"gpu\", \"model\": \"A100-toy\", \"mem_gbs\": 100, "
    "\"capacity_gb\": %s, \"tflops\": 1, \"tflops_fp16\": 1},"
    "{\"id\": \"gpu1\", \"kind\": \"gpu\", \"model\": \"A100-toy\", \"mem_gbs\": 100, "
    "\"capacity_gb\": %s, \"tflops\": 1, \"tflops_fp16\": 1},"
    "{\"id\": \"sw\", \"kind\": \"pcie_switch\"},"
    "{\"id\": \"cpu0\", \"kind\": \"cpu\", \"reduce_gbs\": %s},"
    "{\"id\": \"nic0\", \"kind\": \"nic\", \"net_gbs\": 12.5, \"net_latency_us\": 2}],"
    "\"links\": ["
    "{\"a\": \"gpu0\", \"b\": \"gpu1\", \"kind\": \"nvlink\", \"gbs\": 25, \"latency_us\": 1},"
    "{\"a\": \"gpu0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"gpu1\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"nic0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1},"
    "{\"a\": \"cpu0\", \"b\": \"sw\", \"kind\": \"pcie\", \"gbs\": 16, \"latency_us\": 1}]%s}";

/* A pool the two hosts share: one switch, two 20 GB/s devices, a 16 GB/s
 * port from each host's socket; the devices' capacity is the %s (a pool
 * without the key has none). */
static const char pool_json[] =
    ", \"pool\": {\"switches\": 1, \"devices_per_switch\": 2,"
    " \"device\": {\"model\": \"toy-cxl\", \"read_gbs\": 20, \"write_gbs\": 20%s},"
    " \"device_link\": {\"gbs\": 20, \"latency_us\": 0.1},"
    " \"ports\": [{\"node\": \"cpu0\", \"switch\": 0, \"gbs\": 16, \"latency_us\": 0.1}]}";

/* The host with GPUs of `capacity` GB and a socket summing `reduce` GB/s;
 * `pool` is "" (none) or pool_json's text. */
static cp_topo *host_with(const char *capacity, const char *reduce, const char *pool)
{
    char text[8192], *path;
    cp_topo *t = NULL;
    cp_err e;
    snprintf(text, sizeof text, host_json, capacity, capacity, reduce, pool);
    path = write_temp(text);
    assert_non_null(path);
    cp_err_clear(&e);
    if (cp_topo_load(path, &t, &e) != CP_OK)
        fail_msg("%s", e.msg);
    unlink(path);
    free(path);
    return t;
}

static cp_topo *host(const char *capacity, const char *reduce)
{
    return host_with(capacity, reduce, "");
}

/* host() with a pool whose devices hold `device_capacity` (e.g.
 * ", \"capacity_gb\": 64", or "" for none). */
static cp_topo *host_pool(const char *capacity, const char *device_capacity)
{
    char pool[1024];
    snprintf(pool, sizeof pool, pool_json, device_capacity);
    return host_with(capacity, "10", pool);
}

/* A GPT of 4 blocks: h 64, 4 heads, MLP 256, sequence 32, vocabulary 512. */
static cp_xformer model(void)
{
    cp_xformer x = {.layers = 4, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn = 256,
                    .seq = 32, .vocab = 512, .max_pos = 32, .mlp = CP_MLP_GELU,
                    .pos = CP_POS_LEARNED, .norm = CP_NORM_LAYER, .tied = 1,
                    .window_every = 1};
    return x;
}

static void search_pool(const cp_xformer *x, cp_topo *t, int top, int exhaustive, int offload,
                        int pool, int part, int nparts, cp_search_out *out)
{
    cp_search_in in;
    cp_gpu g;
    cp_err e;
    cp_err_clear(&e);
    assert_int_equal(cp_gpu_from_topo(t, &g, &e), CP_OK);
    memset(&in, 0, sizeof in);
    in.x = x, in.host = t, in.g = &g, in.hosts = 2, in.gbs = 8;
    in.precision = CP_PREC_BF16, in.fw = CP_LLM_MEGATRON;
    in.top = top, in.threads = 2, in.part = part, in.nparts = nparts;
    in.exhaustive = exhaustive, in.offload = offload, in.pool = pool;
    if (cp_search_run(&in, out, &e) != CP_OK)
        fail_msg("%s", e.msg);
}

static void search(const cp_xformer *x, cp_topo *t, int top, int exhaustive, int offload,
                   int part, int nparts, cp_search_out *out)
{
    search_pool(x, t, top, exhaustive, offload, 0, part, nparts, out);
}

/* The space by hand, 4 GPUs (2 hosts x 2), global batch 8, megatron with
 * and without the distributed optimizer (2 shardings), micro-batches that
 * divide gbs / dp, chunks of whole blocks (v > 1 needs m a multiple of p):
 *   tp cp pp dp | micro-batch x chunk choices            | x2 shardings
 *   1  1  1  4  | mbs 1, 2                       = 2    | 4
 *   1  1  2  2  | v1: mbs 1, 2, 4; v2: mbs 1, 2  = 5    | 10
 *   1  1  4  1  | mbs 1, 2, 4, 8                 = 4    | 8 (4 zero-0 dominated: dp cp = 1)
 *   1  2  1  2  | mbs 1, 2, 4                    = 3    | 6
 *   1  2  2  1  | v1: 4 mbs; v2: mbs 1, 2, 4     = 7    | 14
 *   1  4  1  1  | 4 mbs                          = 4    | 8
 *   2  1  1  2  | 3 mbs                          = 3    | 6
 *   2  1  2  1  | v1: 4; v2: 3                   = 7    | 14 (7 dominated)
 *   2  2  1  1  | 4 mbs                          = 4    | 8
 * 78 layouts, 11 of them dominated. */
static void test_space_by_hand(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("100", "10");
    cp_search_out s;
    (void)state;
    search(&x, t, 3, 0, 0, 0, 1, &s);
    assert_int_equal(s.considered, 78);
    assert_int_equal(s.dominated, 11);
    assert_int_equal(s.considered - s.dominated,
                     s.pruned_memory + s.pruned_bound + s.priced);
    assert_true(s.nhits == 3);
    cp_search_free(&s);
    cp_topo_free(t);
}

/* Pruning never drops the optimum: the bounded search's best three equal
 * the exhaustive search's, layout and time; on GPUs of 1 GB, where
 * memory decides. */
/* The same space for a mixture of experts of 4 experts (top 2, 128
 * wide): each row's tp cp pp dp layouts times its expert divisions of the
 * stage's tp x cp x dp ranks: EP a power of two dividing 4 and the ranks,
 * ETP 1, or ETP = TP with EP x TP dividing the ranks:
 *   ranks 1 (1 1 4 1):            EP 1                     = 1  x 8  =  8
 *   ranks 2, tp 1 (1 1 2 2, 1 2 2 1): EP 1, 2              = 2  x 24 = 48
 *   ranks 4, tp 1 (1 1 1 4, 1 2 1 2, 1 4 1 1): EP 1, 2, 4  = 3  x 18 = 54
 *   ranks 2, tp 2 (2 1 2 1):      ETP 1: EP 1, 2; ETP 2: 1 = 3  x 14 = 42
 *   ranks 4, tp 2 (2 1 1 2, 2 2 1 1): ETP 1: 1, 2, 4; ETP 2: 1, 2 = 5 x 14 = 70
 * 222 layouts.  Zero 0 is dominated where the distributed optimizer
 * shards nothing, dp cp = 1 and the expert data-parallel group of one:
 * 1 1 4 1's 4, and 2 1 2 1's 7 for each of EP 2 / ETP 1 and EP 1 / ETP 2
 * (edp 2 / 2 = 1; EP 1 / ETP 1 leaves edp 2): 4 + 14 = 18.  The bounded
 * search finds the exhaustive one's best. */
static void test_space_moe(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("100", "10");
    cp_search_out s, all;
    (void)state;
    x.moe.experts = 4, x.moe.top_k = 2, x.moe.ffn = 128, x.moe.every = 1;
    search(&x, t, 3, 0, 0, 0, 1, &s);
    assert_int_equal(s.considered, 222);
    assert_int_equal(s.dominated, 18);
    search(&x, t, 3, 1, 0, 0, 1, &all);
    assert_int_equal(s.nhits, 3);
    assert_int_equal(s.hits[0].index, all.hits[0].index);
    assert_true(s.hits[0].r.iteration_ms == all.hits[0].r.iteration_ms);
    cp_search_free(&s);
    cp_search_free(&all);
    cp_topo_free(t);
}

static void test_pruning_keeps_optimum(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("1", "10");
    cp_search_out a, b;
    int i;
    (void)state;
    search(&x, t, 3, 0, 1, 0, 1, &a);
    search(&x, t, 3, 1, 1, 0, 1, &b);
    assert_int_equal(a.nhits, b.nhits);
    assert_true(b.priced >= a.priced);
    for (i = 0; i < a.nhits; i++) {
        assert_near(a.hits[i].r.iteration_ms, b.hits[i].r.iteration_ms, 0);
        assert_int_equal(a.hits[i].index, b.hits[i].index);
    }
    cp_search_free(&a);
    cp_search_free(&b);
    cp_topo_free(t);
}

/* The best is never slower than a layout predict prices for the same
 * inputs: every layout of the space, priced by cp_llm_predict, is at least
 * the search's best. */
static void test_best_beats_every_layout(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("100", "10");
    cp_search_out s;
    cp_gpu g;
    cp_err e;
    int tp, pp;
    (void)state;
    search(&x, t, 1, 0, 0, 0, 1, &s);
    assert_int_equal(cp_gpu_from_topo(t, &g, &e), CP_OK);
    for (tp = 1; tp <= 2; tp *= 2)
        for (pp = 1; pp <= 2; pp *= 2) {
            cp_layout l;
            cp_groups G;
            cp_llm_opts o;
            cp_llm_result r;
            cp_layout_default(&l);
            l.tp = tp, l.pp = pp, l.gbs = 8, l.recompute = CP_RC_AUTO;
            assert_int_equal(cp_layout_resolve(&l, &x, 4, 2, &e), CP_OK);
            assert_int_equal(cp_groups_build(&G, t, &l, 0, NULL, &e), CP_OK);
            memset(&o, 0, sizeof o);
            o.dp_alg = CP_ALGS;
            assert_int_equal(cp_llm_predict(&x, &l, &g, &G, &o, &r, &e), CP_OK);
            assert_true(r.iteration_ms >= s.hits[0].r.iteration_ms);
            cp_llm_result_free(&r);
            cp_groups_free(&G);
        }
    cp_search_free(&s);
    cp_topo_free(t);
}

/* A host tier that cannot stream (the socket sums nothing: reduce_gbs
 * 0.001 GB/s, its memory 0.003 GB/s) is never chosen where recomputing or
 * the GPU's memory does the job; with a useful tier (10 GB/s) the search
 * may pick it, and never does worse than without it. */
static void test_slow_tier_never_chosen(void **state)
{
    cp_xformer x = model();
    cp_topo *slow = host("1", "0.001"), *fast = host("1", "10");
    cp_search_out a, b, c;
    int i;
    (void)state;
    search(&x, slow, 5, 0, 1, 0, 1, &a);
    for (i = 0; i < a.nhits; i++)
        assert_int_equal(a.hits[i].l.offload_opt, 0);
    search(&x, fast, 1, 0, 1, 0, 1, &b);
    search(&x, fast, 1, 0, 0, 0, 1, &c);
    assert_true(b.hits[0].r.iteration_ms <= c.hits[0].r.iteration_ms);
    cp_search_free(&a);
    cp_search_free(&b);
    cp_search_free(&c);
    cp_topo_free(slow);
    cp_topo_free(fast);
}

/* A pool without capacity changes nothing: searched with it (its tiers and
 * its data-parallel route offered) the ranking is the one without it,
 * layout for layout and to the bit.  A pool of 2 x 64 GB only adds
 * options: its best is never slower. */
static void test_pool_without_capacity(void **state)
{
    cp_xformer x = model();
    cp_topo *plain = host("1", "10"), *empty = host_pool("1", ""),
            *room = host_pool("1", ", \"capacity_gb\": 64");
    cp_search_out a, b, c;
    int i;
    (void)state;
    search_pool(&x, plain, 5, 0, 1, 0, 0, 1, &a);
    search_pool(&x, empty, 5, 0, 1, 1, 0, 1, &b);
    assert_int_equal(a.nhits, b.nhits);
    assert_int_equal(a.considered, b.considered);
    for (i = 0; i < a.nhits; i++) {
        assert_int_equal(a.hits[i].index, b.hits[i].index);
        assert_true(a.hits[i].r.iteration_ms == b.hits[i].r.iteration_ms);
        assert_int_not_equal(b.hits[i].l.offload_opt, CP_LAYOUT_TIER_POOL);
        assert_int_not_equal(b.hits[i].l.offload_act, CP_LAYOUT_TIER_POOL);
    }
    search_pool(&x, room, 1, 0, 1, 1, 0, 1, &c);
    assert_true(c.hits[0].r.iteration_ms <= a.hits[0].r.iteration_ms);
    cp_search_free(&a);
    cp_search_free(&b);
    cp_search_free(&c);
    cp_topo_free(plain);
    cp_topo_free(empty);
    cp_topo_free(room);
}

/* Split over three parts (as MPI ranks split it) and merged, the ranking
 * is the single process's. */
static void test_parts_merge(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("1", "10");
    cp_search_out whole, part;
    cp_err e;
    int p, i;
    (void)state;
    search(&x, t, 4, 0, 1, 0, 1, &whole);
    search(&x, t, 4, 0, 1, 0, 3, &part);
    for (p = 1; p < 3; p++) {
        cp_search_out other;
        search(&x, t, 4, 0, 1, p, 3, &other);
        assert_int_equal(cp_search_merge(&part, &other, 4, &e), CP_OK);
        cp_search_free(&other);
    }
    assert_int_equal(part.considered, whole.considered);
    assert_int_equal(part.nhits, whole.nhits);
    for (i = 0; i < whole.nhits; i++)
        assert_int_equal(part.hits[i].index, whole.hits[i].index);
    cp_search_free(&whole);
    cp_search_free(&part);
    cp_topo_free(t);
}

/* Nothing fits GPUs of 0.01 GB: no hit, and the least memory any layout
 * needs is reported (the runtime's 3 GB reserve alone exceeds them). */
static void test_fits_nowhere(void **state)
{
    cp_xformer x = model();
    cp_topo *t = host("0.01", "10");
    cp_search_out s;
    (void)state;
    search(&x, t, 3, 0, 1, 0, 1, &s);
    assert_int_equal(s.nhits, 0);
    assert_true(s.min_memory_gb >= 3.0);
    cp_search_free(&s);
    cp_topo_free(t);
}

/* The fabrics' prices of the pool report (docs/pool.md, "Fabric prices")
 * by hand.  hgx-h100-pod, 8 hosts: 64 NICs (8 a host) fill one 64-port
 * switch, 64 x 1,745 + 16,000 = 127,680 USD; the pool's two 23 GB/s ports
 * a host are one adapter each (23 <= 26 GB/s), 16 x 210 = 3,360, and
 * 16 x 16 + 32 cards x 8 = 512 lanes need two 256-lane switches, 11,600:
 * 14,960.  64 hosts: 512 NICs, 16 leaves and 16 x 32 / 64 = 8 spines, 512 x
 * 1,745 + 24 x 16,000 = 1,277,440.  The 2x pod's 46 GB/s ports are two
 * adapters each: 32 x 210 = 6,720, and 32 x 16 + 64 x 8 = 1,024 lanes,
 * four switches (23,200): 29,920. */
static void test_fabric_prices(void **state)
{
    cp_topo *t;
    cp_err e;
    double net, pool;
    (void)state;
    assert_int_equal(cp_topo_load("topologies/hgx-h100-pod.json", &t, &e), CP_OK);
    cli_fabric_costs(t, 8, &net, &pool);
    assert_near(net, 127680, 1e-6);
    assert_near(pool, 14960, 1e-6);
    cli_fabric_costs(t, 64, &net, &pool);
    assert_near(net, 1277440, 1e-6);
    cp_topo_free(t);
    assert_int_equal(cp_topo_load("topologies/hgx-h100-pod-2x.json", &t, &e), CP_OK);
    cli_fabric_costs(t, 8, &net, &pool);
    assert_near(pool, 29920, 1e-6);
    cp_topo_free(t);
    assert_int_equal(cp_topo_load("topologies/hgx-h100.json", &t, &e), CP_OK);
    cli_fabric_costs(t, 8, &net, &pool);
    assert_near(pool, 0, 0); /* no pool, no price */
    cp_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space_by_hand),
        cmocka_unit_test(test_space_moe),
        cmocka_unit_test(test_pruning_keeps_optimum),
        cmocka_unit_test(test_best_beats_every_layout),
        cmocka_unit_test(test_slow_tier_never_chosen),
        cmocka_unit_test(test_pool_without_capacity),
        cmocka_unit_test(test_parts_merge),
        cmocka_unit_test(test_fits_nowhere),
        cmocka_unit_test(test_fabric_prices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
