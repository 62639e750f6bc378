/*
 * test_calibrate.c - the nccl-tests parser and the calibration fit.
 *
 * The fit is checked on a table generated from known parameters (it must
 * recover them), and the shipped topologies are checked to carry what the
 * fit gives on the reference tables today.
 */
#include "testutil.h"
#include "testtopo.h"

#include "cost/calibrate.h"
#include "cost/fitnet.h"
#include "load/load.h"
#include "topo/fabrics.h"

static void test_parse_reference_tables(void **state)
{
    cp_nccl_table t;
    cp_err e;
    (void)state;
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): parser check skipped\n");
        skip();
    }
    /* 8 B .. 128 MB doubling = 25 rows; header "nThread 1 nGpus 8" */
    assert_int_equal(cp_nccl_load(SHARED_DATA "/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt",
                                  &t, &e), CP_OK);
    assert_int_equal(t.nrows, 25);
    assert_int_equal(t.gpus_per_thread, 8);
    assert_near(t.rows[0].bytes, 8, 0);
    assert_near(t.rows[0].time_us, 48.46, 1e-9);  /* first row, out-of-place time */
    assert_near(t.rows[24].busbw, 129.14, 1e-9);   /* last row busbw */
    cp_nccl_free(&t);
    /* 8 B .. 1 GiB doubling = 28 rows; "nGpus 1" */
    assert_int_equal(cp_nccl_load(SHARED_DATA "/nccl-tests/aws-p3dn-2node-16xV100_efa.txt", &t,
                                  &e), CP_OK);
    assert_int_equal(t.nrows, 28);
    assert_int_equal(t.gpus_per_thread, 1);
    assert_near(t.rows[27].time_us, 228178, 1e-9);
    cp_nccl_free(&t);
}

static void test_parse_errors(void **state)
{
    cp_nccl_table t;
    cp_err e;
    char *p;
    (void)state;
    p = write_temp("# nThread 1 nGpus 1\n        8      2   float  sum  abc  0.00  0.00  0\n");
    assert_int_equal(cp_nccl_load(p, &t, &e), CP_EINPUT);
    assert_int_equal(e.line, 2);
    assert_non_null(strstr(e.msg, "time"));
    drop_temp(p);
    p = write_temp("nothing to see here\n");
    assert_int_equal(cp_nccl_load(p, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "no nccl-tests data rows"));
    drop_temp(p);
    p = write_temp("16 4 float sum 5.0 0 0 0 5.0 0 0 0\n8 2 float sum 5.0 0 0 0 5.0 0 0 0\n");
    assert_int_equal(cp_nccl_load(p, &t, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "increase"));
    drop_temp(p);
}

/* The table test_nvlink_square(25, 25) (1 us hops) would measure with
 * `bw_eff`, `step_us` and `simple_us`: ring AllReduce, 6 steps,
 * B = 50 x bw_eff, L = 4 x (1 + step_us), and the protocol whose line with
 * every channel is lower (NCCL's choice),
 *   LL      T(S) = 1.5 L + 1.5 S / (0.5 x B x 1e3)
 *   Simple  T(S) = 1.5 L + 6 x simple_us + 1.5 S / (B x 1e3),
 * run on the channels NCCL gives the size: the square has 4
 * (test_collective.c, test_nccl_channels), an LL channel needs 512 x 8 x 4
 * ranks = 16 KiB and a Simple one 512 x 64 = 32 KiB, so below 4 of those
 * the bandwidth term is 4 / nc times longer (nc = floor(S / need), at least
 * 1); LL's buffer (8 x 32 KiB a channel) is never outgrown where LL runs,
 * for S = 8 B .. 1 GiB (28 rows). */
static void square_table_proto(cp_nccl_table *tab, double bw_eff, double step_us,
                               double simple_us)
{
    int i;
    memset(tab, 0, sizeof *tab);
    tab->gpus_per_thread = tab->nthreads = 1;
    tab->nrows = 28;
    tab->rows = calloc(28, sizeof *tab->rows);
    assert_non_null(tab->rows);
    for (i = 0; i < 28; i++) {
        tab->rows[i].bytes = 8.0 * (1 << i);
        double S = tab->rows[i].bytes, lat = 1.5 * 4 * (1 + step_us);
        double nl = floor(S / 16384), ns = floor(S / 32768);
        double ll = lat + 1.5 * S / (0.5 * 50 * bw_eff * 1e3);
        double simple = lat + 6 * simple_us + 1.5 * S / (50 * bw_eff * 1e3);
        nl = nl < 1 ? 1 : nl > 4 ? 4 : nl;
        ns = ns < 1 ? 1 : ns > 4 ? 4 : ns;
        tab->rows[i].time_us = ll < simple ? lat + 1.5 * S * 4 / nl / (0.5 * 50 * bw_eff * 1e3)
                                           : lat + 6 * simple_us +
                                                 1.5 * S * 4 / ns / (50 * bw_eff * 1e3);
    }
}

/* Without Simple's step cost LL never wins: T = 1.5 L + 1.5 S / (B x 1e3). */
static void square_table(cp_nccl_table *tab, double bw_eff, double step_us)
{
    square_table_proto(tab, bw_eff, step_us, 0);
}

/* Fit the square's table made with bw_eff 0.5, step_us 2 and `simple_us`;
 * the fit must recover all three, reproduce every row, and run LL below
 * `ll_below` bytes and Simple above. */
static void check_recovery(double simple_us, double ll_below)
{
    cp_topo *t = test_nvlink_square(25, 25);
    cp_nccl_table tab;
    cp_fit fit;
    cp_err e;
    int i;
    square_table_proto(&tab, 0.5, 2, simple_us);
    assert_int_equal(cp_calibrate(t, &tab, CP_OP_ALLREDUCE, CP_ALG_RING, &fit, &e), CP_OK);
    assert_int_equal(fit.bw_kind, CP_NVLINK);
    assert_near(t->calib.kind[CP_NVLINK].bw_eff, 0.5, 1e-6);
    assert_near(t->calib.kind[CP_NVLINK].step_us, 2.0, 1e-6);
    assert_near(t->calib.kind[CP_NVLINK].simple_us, simple_us, 1e-6);
    for (i = 0; i < 28; i++) {
        assert_rel(fit.pred_us[i], tab.rows[i].time_us, 1e-6);
        assert_int_equal(fit.proto[i],
                         tab.rows[i].bytes < ll_below ? CP_PROTO_LL : CP_PROTO_SIMPLE);
    }
    cp_fit_free(&fit);
    free(tab.rows);
    cp_topo_free(t);
}

/* bw_eff 0.5, step_us 2, simple_us 3: LL 18 + 1.5 S / 12.5e3, Simple
 * 36 + 1.5 S / 25e3, crossing at S = 300,000 B.  The latency rows (within
 * 20% of 18 us, S <= 30,000 B) are LL's and the top six octaves (S >= 16
 * MiB) Simple's, so the fit recovers all three. */
static void test_fit_recovers_protocols(void **state)
{
    (void)state;
    check_recovery(3, 3e5);
}

/* A table of three sizes (8 B, 1 MiB, 1 GiB) has one in its top six
 * octaves: the fit keeps simple_us (here 0, as the table was made) and fits
 * the slope through the model's intercept, so bw_eff 0.5 and step_us 2 come
 * back all the same: every row is on the line T = 18 + 1.5 S / 25e3. */
static void test_fit_few_sizes(void **state)
{
    cp_topo *t = test_nvlink_square(25, 25);
    cp_nccl_table tab;
    cp_fit fit;
    cp_err e;
    (void)state;
    square_table(&tab, 0.5, 2);
    tab.rows[1] = tab.rows[17]; /* 8 B, 1 MiB, 1 GiB */
    tab.rows[2] = tab.rows[27];
    tab.nrows = 3;
    assert_int_equal(cp_calibrate(t, &tab, CP_OP_ALLREDUCE, CP_ALG_RING, &fit, &e), CP_OK);
    assert_int_equal(fit.simple_fitted, 0);
    assert_int_equal(fit.nbw_rows, 1);
    assert_near(t->calib.kind[CP_NVLINK].simple_us, 0, 0);
    assert_near(t->calib.kind[CP_NVLINK].bw_eff, 0.5, 1e-6);
    assert_near(t->calib.kind[CP_NVLINK].step_us, 2.0, 1e-6);
    cp_fit_free(&fit);
    free(tab.rows);
    cp_topo_free(t);
}

/* bw_eff 0.5 and step_us 2 with no Simple cost: T = 18 + 1.5 S / 25e3 at
 * every size, Simple throughout (LL never wins at half the bandwidth). */
static void test_fit_recovers_parameters(void **state)
{
    (void)state;
    check_recovery(0, 0);
}

/* A table from a machine 10,000x slower (bw_eff 1e-4, under the loader's
 * floor of 1e-3), or with a 2-second step (over 1e6 us), cannot become a
 * calibration the loader would read back: refused as input. */
static void test_fit_refuses_out_of_range(void **state)
{
    static const double cases[][2] = {{1e-4, 2}, {0.5, 2e6}};
    size_t k;
    (void)state;
    for (k = 0; k < 2; k++) {
        cp_topo *t = test_nvlink_square(25, 25);
        cp_nccl_table tab;
        cp_fit fit;
        cp_err e;
        square_table(&tab, cases[k][0], cases[k][1]);
        memset(&fit, 0, sizeof fit);
        assert_int_equal(cp_calibrate(t, &tab, CP_OP_ALLREDUCE, CP_ALG_RING, &fit, &e),
                         CP_EINPUT);
        assert_non_null(strstr(e.msg, "is it from this machine?"));
        cp_fit_free(&fit);
        free(tab.rows);
        cp_topo_free(t);
    }
}

/* The calibration shipped in the topologies is what the fit gives now. */
static void expect_shipped(const char *table, const char *topo, int hosts, cp_link_kind kind)
{
    cp_nccl_table tab;
    cp_topo *t;
    cp_fit fit;
    cp_err e;
    double eff, step, simple, launch, ll;
    assert_int_equal(cp_nccl_load(table, &tab, &e), CP_OK);
    assert_int_equal(cp_topo_load_hosts(topo, hosts, &t, &e), CP_OK);
    eff = t->calib.kind[kind].bw_eff;
    step = t->calib.kind[kind].step_us;
    simple = t->calib.kind[kind].simple_us;
    launch = t->calib.launch_us;
    ll = t->calib.kind[CP_NET].ll_eff;
    assert_int_equal(cp_calibrate(t, &tab, CP_OP_ALLREDUCE, CP_ALG_RING, &fit, &e), CP_OK);
    assert_int_equal(fit.bw_kind, kind);
    assert_near(t->calib.kind[kind].bw_eff, eff, 1e-3);
    assert_near(t->calib.kind[kind].step_us, step, 1e-2);
    assert_near(t->calib.kind[kind].simple_us, simple, 1e-2);
    assert_near(t->calib.launch_us, launch, 1e-2);        /* fitted on the V100 table */
    assert_near(t->calib.kind[CP_NET].ll_eff, ll, 1e-3);  /* fitted on the p3dn table */
    /* the acceptance (issue 25): every weighed row within 10%, median 5% */
    assert_true(fit.max_err <= 0.10);
    assert_true(fit.median_err <= 0.05);
    cp_fit_free(&fit);
    cp_topo_free(t);
    cp_nccl_free(&tab);
}

static void test_shipped_calibration_current(void **state)
{
    (void)state;
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): calibration check skipped\n");
        skip();
    }
    expect_shipped(SHARED_DATA "/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt",
                   "topologies/dgx1-v100.json", 1, CP_NVLINK);
    expect_shipped(SHARED_DATA "/nccl-tests/aws-p3dn-2node-16xV100_efa.txt",
                   "topologies/aws-p3dn.json", 2, CP_NET);
}

/* Issue 24 item 15: nvls_eff and the efa-2024 fabric were fitted by hand;
 * refit them from the p5 rows (cost/fitnet.c, what `make calibration`
 * prints) and compare with what ships, at the precision shipped (4 and 1
 * decimals).  docs/calibration.md's worst errors: 7.2% (one node, four
 * rows, minimax: -7.1 and +7.1 balance) and 2.0% (two nodes, five rows);
 * bw_eff = ceil(100 x 17179869184 / 66132 us / 400 GB/s) / 100 =
 * ceil(64.95) / 100 = 0.65, the 16 GB row's 259.8 GB/s over 32 x 12.5. */
static void test_nvls_efa_refit(void **state)
{
    const char *path = SHARED_DATA "/nccl-tests/p5-48xlarge_awsome.csv";
    const cp_fabric *efa = cp_fabric_find("efa-2024");
    cp_fitnet_row *rows;
    cp_topo *t;
    cp_err e;
    double eff, worst, bw, simple;
    int n;
    (void)state;
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA "): nvls_eff, efa-2024 refit skipped\n");
        skip();
    }
    assert_int_equal(cp_fitnet_load(path, 1, &rows, &n, &e), CP_OK);
    assert_int_equal(n, 4);
    assert_int_equal(cp_topo_load("topologies/hgx-h100.json", &t, &e), CP_OK);
    assert_int_equal(cp_fitnet_nvls_eff(t, rows, n, &eff, &worst, &e), CP_OK);
    assert_near(t->calib.nvls_eff, eff, 0.5e-4 + 1e-9);
    assert_true(worst <= 0.072);
    cp_topo_free(t);
    free(rows);
#ifdef __SANITIZE_ADDRESS__
    /* the two-host refit rebuilds p5's model some 30 times: 30 s under the
     * sanitizers for the same code the one-host fit above just ran; the
     * plain build checks its numbers */
    print_message("efa-2024 refit left to the plain build (sanitized: slow)\n");
    return;
#endif
    assert_int_equal(cp_fitnet_load(path, 2, &rows, &n, &e), CP_OK);
    assert_int_equal(n, 5);
    assert_int_equal(cp_topo_load("topologies/aws-p5.json", &t, &e), CP_OK);
    assert_int_equal(cp_fitnet_net(t, 2, rows, n, &bw, &simple, &worst, &e), CP_OK);
    assert_near(bw, 0.65, 1e-12);
    assert_non_null(efa);
    assert_near(efa->net.bw_eff, bw, 1e-12);
    assert_near(efa->net.simple_us, simple, 0.05 + 1e-6);
    assert_true(worst <= 0.020);
    cp_topo_free(t);
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_reference_tables),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_fit_recovers_parameters),
        cmocka_unit_test(test_fit_recovers_protocols),
        cmocka_unit_test(test_fit_few_sizes),
        cmocka_unit_test(test_fit_refuses_out_of_range),
        cmocka_unit_test(test_shipped_calibration_current),
        cmocka_unit_test(test_nvls_efa_refit),
    };
    return cmocka_run_group_tests_name("calibrate", tests, NULL, NULL);
}
