/*
 * test_sim.c - `simulate`'s replay (src/sim/sim.c) against replays worked
 * by hand: link rates shared max-min between operations in flight, the
 * rates the topology's links give (not the planner's cost lines), and the
 * tail the plan charges after its last bucket (predicted.tail_ms).
 */
#include "testutil.h"

#include "core/jsondoc.h"
#include "runtime/planfile.h"
#include "sim/sim.h"

/* Two GPUs g0, g1 and a memory device m on one PCIe switch: every link 12
 * GB/s each way, 0 us (so that no latency enters the closed forms); m sums
 * at 1000 GB/s and its link runs at 100 GB/s, so neither binds.  Indexed,
 * uncalibrated (bw_eff 1, step 0, launch 0).
 *
 * By hand: NCCL's one ring g0 -> g1 -> g0 crosses g0->sw, sw->g1, g1->sw,
 * sw->g0, and with n = 2 every GPU sends 2 (n-1)/n = 1 byte per bucket byte
 * to its successor: 1 byte per byte on each of the four arcs.  The proxy
 * through m: each GPU pushes 1 byte per byte up its link and pulls 1 back
 * down: again 1 on each of the four arcs (2 on sw<->m, 2 summed by m). */
static cp_topo *pair_with_device(void)
{
    cp_topo *t = cp_topo_new("pair-dev");
    cp_err e;
    int g0 = cp_topo_add_node(t, "g0", CP_GPU, 0), g1 = cp_topo_add_node(t, "g1", CP_GPU, 0);
    int sw = cp_topo_add_node(t, "sw", CP_PCIE_SWITCH, 0), m = cp_topo_add_node(t, "m", CP_MEMDEV, 0);
    t->nodes[m].reduce_gbs = 1000;
    cp_topo_add_link(t, g0, sw, CP_PCIE, 12, 0, 0);
    cp_topo_add_link(t, g1, sw, CP_PCIE, 12, 0, 0);
    cp_topo_add_link(t, m, sw, CP_PCIE, 100, 0, 0);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    return t;
}

/* A plan of two buckets of one tensor each on the machine above; `pred` is
 * the "predicted" object's members, routes the two buckets' route lists. */
static cpl_plan *plan_text(const char *pred, double ready0, double need0, long long bytes0,
                           const char *route0, double ready1, double need1, long long bytes1,
                           const char *route1)
{
    char text[4096];
    cp_jdoc d;
    cp_err e;
    cpl_plan *p = NULL;
    snprintf(text, sizeof text,
             "{\"format\": \"coarse-plan/1\", \"model\": {\"name\": \"two\", \"tensors\": 2},\n"
             " \"topology\": {\"name\": \"pair-dev\", \"gpus\": 2},\n"
             " \"predicted\": {%s},\n"
             " \"buckets\": [\n"
             "  {\"id\": 0, \"bytes\": %lld, \"ready_ms\": %g, \"need_ms\": %g, \"first_layer\": 1,\n"
             "   \"tensors\": [{\"name\": \"a\", \"offset\": 0, \"bytes\": %lld}],\n"
             "   \"routes\": [%s]},\n"
             "  {\"id\": 1, \"bytes\": %lld, \"ready_ms\": %g, \"need_ms\": %g, \"first_layer\": 0,\n"
             "   \"tensors\": [{\"name\": \"b\", \"offset\": 0, \"bytes\": %lld}],\n"
             "   \"routes\": [%s]}]}\n",
             pred, bytes0, ready0, need0, bytes0, route0, bytes1, ready1, need1, bytes1, route1);
    cp_err_clear(&e);
    assert_int_equal(cp_jdoc_load_text(&d, "plan.json", text, strlen(text), &e), CP_OK);
    if (cp_planfile_load_doc(&d, &p, &e) != CP_OK)
        fail_msg("plan refused: %s", e.msg);
    return p;
}

#define ROUTE_AR(order, bytes)                                                            \
    "{\"order\": " #order ", \"kind\": \"allreduce\", \"algorithm\": \"ring\", "           \
    "\"devices\": [], \"offset\": 0, \"bytes\": " #bytes ", \"shards\": 1}"
#define ROUTE_DEV(order, bytes)                                                           \
    "{\"order\": " #order ", \"kind\": \"proxy-lat\", \"algorithm\": \"proxy-lat\", "      \
    "\"devices\": [\"m\"], \"offset\": 0, \"bytes\": " #bytes ", \"shards\": 1}"

/* Bucket 0 (6e6 bytes, AllReduce) and bucket 1 (18e6 bytes, through m) are
 * both ready at 0 and load the same four arcs by 1 byte per byte: fair
 * sharing gives each 12 / 2 = 6 GB/s = 6e6 bytes/ms, so bucket 0 ends at
 * 6e6 / 6e6 = 1 ms; bucket 1 has 18e6 - 6e6 = 12e6 bytes left, now alone at
 * 12e6 bytes/ms: it ends at 1 + 1 = 2 ms.  Bucket 0 is needed at once (need
 * 0), bucket 1 5 ms into the next forward, compute 0.1 ms, no tail: the
 * iteration is max(0.1, 1 - 0, 2 - 5) = 1 ms.  Run one after the other,
 * bucket 0 would end at 0.5 ms; shared without re-sharing when it ends,
 * bucket 1 at 1 + 12e6 / 6e6 = 3 ms. */
static void test_two_buckets_share_one_link(void **state)
{
    cp_topo *t = pair_with_device();
    cpl_plan *p = plan_text("\"iteration_ms\": 1, \"compute_ms\": 0.1, \"tail_ms\": 0", 0, 0,
                            6000000, ROUTE_AR(0, 6000000), 0, 5, 18000000,
                            ROUTE_DEV(1, 18000000));
    cp_sim_result r;
    cp_err e;
    int arc;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_simulate(p, t, &r, &e), CP_OK);
    assert_int_equal(r.completed, 2);
    assert_near(r.iteration_ms, 1.0, 1e-9);
    assert_near(r.first_ms, 0.0, 1e-12);
    assert_near(r.last_ms, 2.0, 1e-9);
    /* g0 -> sw (arc 0, link 0's a -> b) carried 6e6 + 18e6 bytes over the
     * 2 ms at 12e6 bytes/ms: busy all the time */
    arc = 0;
    assert_near(r.busy[arc], 24e6, 1);
    assert_near(cp_sim_util(&r, arc), 1.0, 1e-9);
    cp_sim_result_free(&r);
    cpl_close(p);
    cp_topo_free(t);
}

/* The replay's rate is the links' 12 GB/s, whatever the plan's times say:
 * bucket 1 alone (12e6 bytes on the ring, 1 byte per byte on 12 GB/s arcs)
 * takes 12e6 / 12e6 = 1 ms from its readiness at 9.5 ms, ends at 10.5 ms
 * and is needed at once.  Compute 10 ms, of which the tail (DDP's copy
 * back) 0.5 ms: the next forward starts after 10.5 + 0.5 = 11 ms, above
 * compute + tail's 10.5 and above the 10.5 the replay gave when it dropped
 * the tail.  A plan without tail_ms (written before it) replays as before:
 * max(10, 10.5) = 10.5. */
static void test_replay_adds_the_tail(void **state)
{
    cp_topo *t = pair_with_device();
    cpl_plan *p = plan_text("\"iteration_ms\": 11, \"compute_ms\": 10, \"tail_ms\": 0.5", 0, 5,
                            1000000, ROUTE_AR(0, 1000000), 9.5, 0, 12000000,
                            ROUTE_AR(1, 12000000));
    cpl_plan *old = plan_text("\"iteration_ms\": 10.5, \"compute_ms\": 10", 0, 5, 1000000,
                              ROUTE_AR(0, 1000000), 9.5, 0, 12000000, ROUTE_AR(1, 12000000));
    cp_sim_result r;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_near(cp_planfile_tail_ms(p), 0.5, 0);
    assert_near(cp_planfile_tail_ms(old), 0, 0);
    assert_int_equal(cp_simulate(p, t, &r, &e), CP_OK);
    assert_near(r.tail_ms, 0.5, 0);
    assert_near(r.last_ms, 10.5, 1e-9);
    assert_near(r.iteration_ms, 11.0, 1e-9);
    assert_true(r.iteration_ms >= r.compute_ms + r.tail_ms);
    assert_true(r.iteration_ms >= r.last_ms + r.tail_ms - 1e-9);
    cp_sim_result_free(&r);
    assert_int_equal(cp_simulate(old, t, &r, &e), CP_OK);
    assert_near(r.iteration_ms, 10.5, 1e-9);
    cp_sim_result_free(&r);
    cpl_close(old);
    cpl_close(p);
    cp_topo_free(t);
}

/* A tail that is negative, or longer than the compute it is part of, is an
 * input error at predicted.tail_ms. */
static void test_tail_checked(void **state)
{
    const char *bad[] = {"{\"compute_ms\": 10, \"tail_ms\": -1}",
                         "{\"compute_ms\": 10, \"tail_ms\": 11}"};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        char text[2048];
        cp_jdoc d;
        cp_err e;
        cpl_plan *p = NULL;
        snprintf(text, sizeof text,
                 "{\"format\": \"coarse-plan/1\", \"model\": {\"name\": \"one\", \"tensors\": 1},\n"
                 " \"topology\": {\"name\": \"pair-dev\", \"gpus\": 2}, \"predicted\": %s,\n"
                 " \"buckets\": [{\"id\": 0, \"bytes\": 4, \"ready_ms\": 0, \"need_ms\": 0,\n"
                 "  \"first_layer\": 0, \"tensors\": [{\"name\": \"a\", \"offset\": 0, \"bytes\": 4}],\n"
                 "  \"routes\": [" ROUTE_AR(0, 4) "]}]}\n",
                 bad[i]);
        cp_err_clear(&e);
        assert_int_equal(cp_jdoc_load_text(&d, "plan.json", text, strlen(text), &e), CP_OK);
        assert_int_equal(cp_planfile_load_doc(&d, &p, &e), CP_EINPUT);
        assert_null(p);
        assert_string_equal(e.where, "predicted.tail_ms");
        assert_int_equal(e.line, 2); /* the "predicted" line of the text */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_buckets_share_one_link),
        cmocka_unit_test(test_replay_adds_the_tail),
        cmocka_unit_test(test_tail_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
