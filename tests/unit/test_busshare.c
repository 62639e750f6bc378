/*
 * test_busshare.c - a ring AllReduce's share of the GPU buses
 * (src/cost/busshare.c), worked by hand on small uncalibrated machines and
 * the COARSE paper's DGX-1 side figure on the shipped dgx1-v100.
 */
#include "testutil.h"
#include "testtopo.h"

#include "cost/busshare.h"
#include "load/load.h"

/* Four GPUs on a square of 25 GB/s NVLinks: the two packed rings (one each
 * way) use every direction of every link, 8 x 25 = 200 of 200 GB/s: 100%. */
static void test_square_all_busy(void **state)
{
    cp_topo *t = test_nvlink_square(25, 25);
    cp_coll c;
    cp_bus_share s;
    cp_err e;
    (void)state;
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    assert_near(cp_coll_bus_share(&c, &s), 1.0, 1e-9);
    assert_near(s.total_gbs, 200.0, 1e-9);
    assert_near(s.nvlink_used_gbs, 200.0, 1e-9);
    cp_coll_free(&c);
    cp_topo_free(t);
}

/* Two GPUs joined by a 50 GB/s NVLink, each on a 12 GB/s PCIe link to the
 * switch (test_pair_host): the ring uses the NVLink both ways, 2 x 50 = 100
 * GB/s; the buses total 100 + 2 GPUs x 2 directions x 12 = 148 (the
 * switch's uplink has no GPU at either end): 100 / 148 = 67.6%. */
static void test_pair_with_pcie(void **state)
{
    cp_topo *t = test_pair_host(2);
    cp_coll c;
    cp_bus_share s;
    cp_err e;
    (void)state;
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    assert_near(cp_coll_bus_share(&c, &s), 100.0 / 148.0, 1e-9);
    assert_near(s.used_gbs, 100.0, 1e-9);
    cp_coll_free(&c);
    cp_topo_free(t);
}

/* dgx1-v100: the model's packed rings keep every NVLink busy (the bound:
 * 24 bricks x 2 directions x 25 x 0.8751 = 1050.1 GB/s), and the GPUs' own
 * PCIe links (8 x 2 x 12 = 192) idle: 1050.1 / 1242.1 = 84.5%, not the
 * paper's ~34%, which is what one ring each way over one brick per hop
 * would use: 2 x 8 x 21.88 / 1050.1 = 33.3% of the NVLinks
 * (docs/paper-reproduction.md). */
static void test_dgx1_v100(void **state)
{
    cp_topo *t = NULL;
    cp_coll c;
    cp_bus_share s;
    cp_err e;
    (void)state;
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &t, &e), CP_OK);
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    cp_coll_bus_share(&c, &s);
    assert_near(s.nvlink_total_gbs, 48 * 25 * 0.8751, 1e-6);
    assert_near(s.total_gbs, 48 * 25 * 0.8751 + 192, 1e-6);
    assert_near(s.nvlink_used_gbs / s.nvlink_total_gbs, 1.0, 1e-6);
    cp_coll_free(&c);
    cp_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_square_all_busy),
        cmocka_unit_test(test_pair_with_pcie),
        cmocka_unit_test(test_dgx1_v100),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
