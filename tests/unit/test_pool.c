/*
 * test_pool.c - collectives through a CXL pool (src/cost/pool.c), worked by
 * hand on two small pods (docs/pool.md, eq. PL1-PL6):
 *
 *   tests/data/good/topo/pool-2host-1dev.json: 2 hosts, one GPU each, GPU
 *   to CPU PCIe 40 GB/s, CPU to switch 30, switch to the one device 25,
 *   device read 20 / write 10 / combined 24 GB/s, access 0.5 us, every hop
 *   1 us; uncalibrated: launch 0, copy engines at the GPU's link (40),
 *   4 MiB chunks, chunk cost = launch + doorbell.  Route GPU -> device:
 *   3 hops, 3 us; doorbell 3 x 3 + 2 x 0.5 = 10 us = chunk_us.
 *
 *   tests/data/good/topo/pool-3host-2dev.json: 3 hosts, one switch, two
 *   devices (read 24, write 10, no combined cap), same links; calibrated:
 *   launch 5 us, copy engines 16 GB/s, 1 MiB chunks of 4 us; doorbell 10.
 */
#include "testutil.h"

#include "cost/pool.h"
#include "cost/pool_calib.h"
#include "load/load.h"
#include "out/plan_write.h"
#include "plan/planner.h"
#include "predict/pool_strategy.h"
#include "runtime/planfile.h"

#define MiB 1048576.0

static cp_topo *load(const char *path, int hosts)
{
    cp_topo *t = NULL;
    cp_err e;
    cp_err_clear(&e);
    assert_int_equal(cp_topo_load_hosts(path, hosts, &t, &e), CP_OK);
    return t;
}

static void test_two_hosts_one_device(void **state)
{
    cp_topo *t = load("tests/data/good/topo/pool-2host-1dev.json", 1);
    cp_pool p;
    cp_pool_why w;
    cp_err e;
    double us;
    (void)state;
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_OK);
    assert_int_equal(p.nranks, 2);
    assert_int_equal(p.ndev, 1);
    assert_near(p.path_lat_us, 3, 1e-12);   /* pcie 1 + port 1 + switch port 1 */
    assert_near(p.doorbell_us, 10, 1e-12);  /* 3 x 3 + 2 x 0.5 */
    assert_near(p.chunk_us, 10, 1e-12);     /* launch 0 + doorbell */
    assert_near(p.copy_gbs[0], 40, 1e-12);  /* the GPU's PCIe link */

    /* AllGather of S = 8 MiB: each rank publishes S/2 and pulls S/2 (one
     * 4 MiB chunk each way): copy engines 4 MiB / 40e3 + 10 = 114.8576 us;
     * the switch port carries both writes, 8 MiB / 25e3 = 335.54432; the
     * device absorbs S = 8 MiB at 10 GB/s = 838.8608 (reads 419.43,
     * combined 16 MiB / 24e3 = 699.05): the device binds.  Fill: one 4 MiB
     * chunk at 40 GB/s + doorbell = 114.8576.  T = 953.7184 us. */
    us = cp_pool_time_us(&p, CP_XOP_ALLGATHER, 8 * MiB, &w);
    assert_near(us, 953.7184, 1e-6);
    assert_int_equal(w.bind, CP_PRES_DEVICE);
    assert_near(w.res_us[CP_PRES_COPY_READ], 114.8576, 1e-6);
    assert_near(w.res_us[CP_PRES_LINK], 335.54432, 1e-6);
    assert_string_equal(cp_pool_arc_role(t, w.res_where[CP_PRES_LINK]), "switch port");

    /* Near-memory reduction (the same pod with a 5 GB/s summing device):
     * AllReduce of S = 8 MiB, each rank publishes S and pulls the sum S
     * (two chunks each way).  The device reads the old partial sum for
     * each written byte: reads 2S + 2S = 32 MiB, writes 16 MiB, combined
     * 48 MiB / 24e3 = 2097.152 us; summing 16 MiB at 5e3 B/us = 3355.4432
     * binds.  Fill 114.8576.  T = 3470.3008 us. */
    t->nodes[cp_topo_find(t, "mem0")].reduce_gbs = 5;
    cp_pool_free(&p);
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_OK);
    us = cp_pool_time_us(&p, CP_XOP_ALLREDUCE, 8 * MiB, &w);
    assert_near(us, 3470.3008, 1e-6);
    assert_int_equal(w.bind, CP_PRES_REDUCE);
    assert_near(w.res_us[CP_PRES_DEVICE], 2097.152, 1e-6);
    cp_pool_free(&p);
    cp_topo_free(t);
}

static void test_three_hosts_two_devices(void **state)
{
    cp_topo *t = load("tests/data/good/topo/pool-3host-2dev.json", 1);
    cp_pool p;
    cp_pool_why w;
    cp_err e;
    double us;
    (void)state;
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_OK);
    assert_int_equal(p.ndev, 2);
    assert_near(p.chunk_us, 4, 1e-12);
    assert_near(p.copy_gbs[2], 16, 1e-12);

    /* AllReduce of S = 3 MiB reduced on the GPUs: each rank publishes S
     * (3 chunks) and pulls both others' S (6 chunks).  Read stream 2S /
     * 16e3 + 6 x 4 = 417.216 us; write stream 196.608 + 12 = 208.608.
     * Each device: writes 3 x S/2 = 4.5 MiB at 10 GB/s = 471.8592, reads
     * 3 x 2S/2 = 9 MiB at 24 = 393.216: the device binds.  The switch port
     * device->switch carries 9 MiB / 25e3 = 377.48736.  Fill: a 1 MiB chunk
     * at 16 GB/s + 10 = 75.536.  T = 5 + 75.536 + 471.8592 = 552.3952. */
    us = cp_pool_time_us(&p, CP_XOP_ALLREDUCE, 3 * MiB, &w);
    assert_near(us, 552.3952, 1e-6);
    assert_int_equal(w.bind, CP_PRES_DEVICE);
    assert_near(w.res_us[CP_PRES_COPY_READ], 417.216, 1e-6);
    assert_near(w.res_us[CP_PRES_LINK], 377.48736, 1e-6);

    /* AllGather of S = 3 MiB: publish 1 MiB (1 chunk), pull two 1 MiB
     * pieces (2 chunks): read stream 131.072 + 8 = 139.072.  Devices:
     * writes 3 MiB / 2 = 1.5 MiB at 10 = 157.2864 (reads 3 MiB at 24 =
     * 131.072) bind.  T = 5 + 75.536 + 157.2864 = 237.8224. */
    us = cp_pool_time_us(&p, CP_XOP_ALLGATHER, 3 * MiB, &w);
    assert_near(us, 237.8224, 1e-6);
    assert_near(w.res_us[CP_PRES_COPY_READ], 139.072, 1e-6);

    /* Broadcast of S = 3 MiB: the root publishes S (3 chunks): 196.608 +
     * 12 = 208.608 binds (the devices absorb S/2 each: 157.2864).  T = 5 +
     * 75.536 + 208.608 = 289.144. */
    us = cp_pool_time_us(&p, CP_XOP_BROADCAST, 3 * MiB, &w);
    assert_near(us, 289.144, 1e-6);
    assert_int_equal(w.bind, CP_PRES_COPY_WRITE);
    assert_int_equal(w.res_where[CP_PRES_COPY_WRITE], t->gpus[0]);

    /* Gather of S = 3 MiB: two ranks publish 1 MiB each, the root pulls
     * both: read stream 2 MiB / 16e3 + 2 x 4 = 139.072 binds (devices:
     * 1 MiB written each, 104.8576).  T = 5 + 75.536 + 139.072 = 219.608. */
    us = cp_pool_time_us(&p, CP_XOP_GATHER, 3 * MiB, &w);
    assert_near(us, 219.608, 1e-6);
    assert_int_equal(w.bind, CP_PRES_COPY_READ);

    /* AlltoAll of S = 3 MiB: each rank publishes and pulls two 1 MiB
     * pieces: streams 139.072; devices absorb 3 x 2 MiB / 2 = 3 MiB at 10 =
     * 314.5728, bind.  T = 5 + 75.536 + 314.5728 = 395.1088. */
    us = cp_pool_time_us(&p, CP_XOP_ALLTOALL, 3 * MiB, &w);
    assert_near(us, 395.1088, 1e-6);
    cp_pool_free(&p);
    cp_topo_free(t);
}

/* Never faster than the host links allow: every rank's pulled bytes cross
 * its host's port, so T >= pulled / port rate, at every size and op. */
static void test_never_faster_than_host_links(void **state)
{
    cp_topo *t = load("tests/data/good/topo/pool-3host-2dev.json", 1);
    cp_pool p;
    cp_err e;
    int op;
    double s;
    (void)state;
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_OK);
    for (op = 0; op < CP_XOPS; op++)
        for (s = 1024; s <= 4.0 * 1024 * MiB; s *= 4) {
            /* bytes the busiest host pulls per byte of S, n = 3 (pool.c's
             * roles): allreduce 2, reducescatter, allgather, alltoall 2/3,
             * broadcast 1, reduce (root) 2, gather (root) 2/3, scatter 1/3 */
            static const double pulled[CP_XOPS] = {2, 2.0 / 3, 2.0 / 3, 1, 2, 2.0 / 3,
                                                   1.0 / 3, 2.0 / 3};
            double floor_us = pulled[op] * s / 30e3; /* port 30 GB/s */
            assert_true(cp_pool_time_us(&p, (cp_xop)op, s, NULL) >= floor_us);
        }
    cp_pool_free(&p);
    cp_topo_free(t);
}

/* A pool block shared over --hosts 3: one pool, every host's port on it. */
static void test_block_replicated(void **state)
{
    cp_topo *t = load("tests/data/good/topo/pool-block-1host.json", 3);
    cp_pool p;
    cp_pool_why w;
    cp_err e;
    double us;
    (void)state;
    /* 2 switches x 2 devices, shared: 4 devices, not 12 */
    assert_int_equal(cp_topo_count(t, CP_MEMDEV), 4);
    assert_int_equal(cp_topo_count(t, CP_CXL_SWITCH), 2);
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_OK);
    assert_int_equal(p.nranks, 3);
    assert_int_equal(p.ndev, 4);
    /* Broadcast of 4 MiB: the root's 4 MiB (one chunk) at 40 GB/s +
     * chunk_us 10 = 114.8576, as each reader's pull; the root's writes
     * split over both of its ports (2 MiB at 30 = 69.9).  Each of the four
     * devices absorbs 1 MiB and serves 2 x 1 MiB: 3 MiB against the
     * combined 24 GB/s = 131.072 binds (write alone 104.8576, read
     * 104.8576).  Fill 104.8576 + 10.  T = 0 + 114.8576 + 131.072 =
     * 245.9296. */
    us = cp_pool_time_us(&p, CP_XOP_BROADCAST, 4 * MiB, &w);
    assert_near(us, 245.9296, 1e-6);
    assert_int_equal(w.bind, CP_PRES_DEVICE);
    cp_pool_free(&p);
    cp_topo_free(t);
}

static void test_no_pool(void **state)
{
    cp_topo *t = load("topologies/dgx1-v100.json", 1);
    cp_pool p;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_pool_build(t, NULL, &p, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "no CXL pool"));
    cp_topo_free(t);
}

/* calibrate on a table made from the closed form: pool-3host-2dev's
 * AllGather with pulls at 12 GB/s and 6 us a chunk (the file says 16 and
 * 4).  At S = 3 MiB x 2^k each rank pulls two pieces of 2^k MiB in 2 x 2^k
 * chunks: the read stream, 2^k (2 MiB / 12e3 + 12) us, binds (the devices'
 * writes take 2^k x 157.3, the switch ports 2^k x 125.8); fill = a 1 MiB
 * chunk at 12 GB/s + the 10 us doorbell; T_k = 5 + 1 MiB / 12e3 + 10 +
 * 2^k (2 MiB / 12e3 + 12).  The fit must find 12 and 6 again. */
static void test_calibrate_closed_form(void **state)
{
    cp_topo *t = load("tests/data/good/topo/pool-3host-2dev.json", 1);
    cp_nccl_table tab;
    cp_pool_fit f;
    cp_err e;
    char text[4096], *path;
    size_t len = 0;
    int k;
    (void)state;
    len += (size_t)snprintf(text + len, sizeof text - len, "# nThread 1 nGpus 1\n");
    for (k = 0; k <= 8; k++) {
        double S = 3 * MiB * (1 << k);
        double us = 5 + MiB / 12e3 + 10 + (1 << k) * (2 * MiB / 12e3 + 12);
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "%12.0f %10.0f float none -1 %10.3f 0 0 0 %10.3f 0 0 0\n", S,
                                S / 4, us, us);
    }
    path = write_temp(text);
    cp_err_clear(&e);
    assert_int_equal(cp_nccl_load(path, &tab, &e), CP_OK);
    assert_int_equal(tab.nrows, 9);
    assert_int_equal(cp_pool_calibrate(t, NULL, &tab, CP_XOP_ALLGATHER, &f, &e), CP_OK);
    assert_int_equal(f.read_side, 1);
    assert_int_equal(f.rate_fitted, 1);
    assert_near(f.rate_before, 16, 1e-12);
    assert_near(f.chunk_before, 4, 1e-12);
    assert_near(f.rate_after, 12, 12e-4);
    assert_near(f.chunk_after, 6, 6e-3);
    assert_true(f.rms_error < 1e-4);
    assert_near(t->calib.pool.copy_read_gbs, f.rate_after, 1e-12);
    assert_near(t->calib.pool.copy_gbs, 16, 1e-12); /* the publish side untouched */
    cp_pool_fit_free(&f);
    cp_nccl_free(&tab);
    drop_temp(path);
    cp_topo_free(t);
}

/* The pool strategy and --offload pool through the predictor, on
 * pool-3host-2dev with one fp32 tensor of 1,179,648 parameters (4.5 MiB of
 * gradients; a 393,216-parameter shard on each of the 3 GPUs). */
static void test_strategy_and_offload(void **state)
{
    static const char model[] =
        "{\"name\": \"one\", \"dtype\": \"fp32\", \"tensors\": "
        "[{\"name\": \"w\", \"numel\": 1179648, \"layer\": 0}], "
        "\"compute\": {\"iteration_ms\": 10}}";
    cp_topo *t = load("tests/data/good/topo/pool-3host-2dev.json", 1);
    char *path = write_temp(model);
    cp_model *m = NULL;
    cp_predictor pr;
    cp_predict_opts o;
    cp_coll_alg alg;
    const char *proto;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_model_load(path, &m, &e), CP_OK);
    cp_predict_opts_default(&o);
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    /* the 3 MiB AllReduce of test_three_hosts_two_devices: 552.3952 us */
    assert_near(cp_strategy_coll_ms(&pr, CP_S_POOL, CP_OP_ALLREDUCE, 3 * MiB, &alg, &proto),
                0.5523952, 1e-9);
    /* every GPU pulls 3 MiB of its own (3 chunks): read stream 196.608 +
     * 12 = 208.608 binds (devices: 4.5 MiB read each at 24 = 196.608;
     * switch ports 4.5 MiB at 25 = 188.74); no doorbell; + launch 5 */
    assert_near(cp_pool_copy_ms(&pr, 3 * MiB, 0), 0.213608, 1e-9);
    cp_predictor_free(&pr);

    /* FSDP with --offload pool: Adam fp32 states, 8 bytes a parameter, of
     * the 393,216-parameter shard = 3 MiB pulled (0.213608 ms) before the
     * step; after it the states and the 1.5 MiB parameter shard published:
     * 4.5 MiB a GPU, the devices absorb 3 x 4.5 / 2 = 6.75 MiB each at 10
     * GB/s = 707.7888 us (write stream 294.912 + 5 x 4 = 314.912), + launch
     * 5.  Together 0.213608 + 0.7127888 = 0.9263968 ms. */
    o.framework = CP_FW_FSDP;
    o.offload = CP_OFFLOAD_POOL;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(pr.pool_params, 1);
    assert_near(cp_pool_offload_step_ms(&pr, &o, 3), 0.9263968, 1e-9);
    cp_predictor_free(&pr);
    cp_model_free(m);
    drop_temp(path);
    cp_topo_free(t);

    /* no pool: --offload pool is refused */
    t = load("topologies/dgx1-v100.json", 1);
    path = write_temp(model);
    assert_int_equal(cp_model_load(path, &m, &e), CP_OK);
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--offload pool"));
    cp_model_free(m);
    drop_temp(path);
    cp_topo_free(t);
}

/* The planner across hosts: on cccl-pod and hgx-h100-pod x2, bert-large and
 * gpt2, communication-bound (30 ms) and compute-bound (300 ms), the LP's
 * split is never slower than every bucket on AllReduce nor every bucket
 * through the pool (both with the plan's own evaluator), never beats
 * compute, and the plan (format 2 when it has pool routes) loads back with
 * one slot per host on each pool route, each of the route's bytes. */
static void test_plan_split(void **state)
{
    static const char *const topos[] = {"topologies/cccl-pod.json",
                                        "topologies/hgx-h100-pod.json"};
    static const char *const models[] = {"models/bert-large.json", "models/gpt2.json"};
    static const double compute[] = {30, 300};
    size_t i, j, c;
    (void)state;
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++)
            for (c = 0; c < 2; c++) {
                cp_topo *t = load(topos[i], i == 1 ? 2 : 1);
                cp_model *m = NULL;
                cp_plan_opts o;
                cp_predictor pr;
                cp_plan p;
                cp_plan_inputs in = {models[j], topos[i], 1, 2, i == 1 ? 2 : 1};
                json_t *js;
                char *text, *path;
                cpl_plan *lp;
                cp_err e;
                size_t b, k, pool_routes = 0;
                assert_int_equal(cp_model_load(models[j], &m, &e), CP_OK);
                cp_plan_opts_default(&o);
                o.pred.compute_ms = compute[c];
                assert_int_equal(cp_predictor_init(&pr, m, t, &o.pred, &e), CP_OK);
                assert_int_equal(cp_plan_build(&pr, &o, &p, &e), CP_OK);
                assert_true(p.fams.f[CP_FAM_POOL].available);
                assert_true(p.pool_ms > 0);
                if (p.iteration_ms > fmin(p.allreduce_ms, p.pool_ms) + 1e-9)
                    fail_msg("%s on %s: plan %.4f > allreduce %.4f / pool %.4f", models[j],
                             topos[i], p.iteration_ms, p.allreduce_ms, p.pool_ms);
                assert_true(p.iteration_ms >= p.compute_ms - 1e-9);
                js = cp_plan_to_json(&p, &in);
                text = json_dumps(js, JSON_INDENT(1));
                json_decref(js);
                path = write_temp(text);
                free(text);
                if (cp_planfile_load(path, &lp, &e) != CP_OK)
                    fail_msg("reloading: %s: %s", e.where, e.msg);
                for (b = 0; b < cpl_bucket_count(lp); b++) {
                    cpl_bucket bk;
                    cpl_get_bucket(lp, b, &bk);
                    for (k = 0; k < bk.nroutes; k++) {
                        cpl_route r;
                        cpl_pool_slot s;
                        cpl_get_route(lp, b, k, &r);
                        if (strcmp(r.kind, "pool") != 0)
                            continue;
                        pool_routes++;
                        assert_int_equal(r.npool_slots, (size_t)t->nhosts);
                        assert_int_equal(cpl_get_pool_slot(lp, b, k, r.npool_slots - 1, &s), 0);
                        assert_int_equal(s.host, t->nhosts - 1);
                        assert_int_equal(s.bytes, r.bytes);
                    }
                }
                assert_true(pool_routes == 0 || p.fam_bytes[CP_FAM_POOL] > 0);
                cpl_close(lp);
                drop_temp(path);
                cp_plan_free(&p);
                cp_predictor_free(&pr);
                cp_model_free(m);
                cp_topo_free(t);
            }
}

static void test_busbw_factors(void **state)
{
    (void)state;
    /* nccl-tests: reduce 1; gather, scatter, alltoall (n-1)/n */
    assert_near(cp_xop_busbw_factor(CP_XOP_REDUCE, 4), 1, 1e-15);
    assert_near(cp_xop_busbw_factor(CP_XOP_GATHER, 4), 0.75, 1e-15);
    assert_near(cp_xop_busbw_factor(CP_XOP_ALLTOALL, 3), 2.0 / 3, 1e-15);
    assert_near(cp_xop_busbw_factor(CP_XOP_ALLREDUCE, 4), 1.5, 1e-15);
    assert_string_equal(cp_xop_name(CP_XOP_SCATTER), "scatter");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_hosts_one_device),
        cmocka_unit_test(test_three_hosts_two_devices),
        cmocka_unit_test(test_never_faster_than_host_links),
        cmocka_unit_test(test_block_replicated),
        cmocka_unit_test(test_no_pool),
        cmocka_unit_test(test_calibrate_closed_form),
        cmocka_unit_test(test_strategy_and_offload),
        cmocka_unit_test(test_plan_split),
        cmocka_unit_test(test_busbw_factors),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
