/*
 * test_llm_runs.c - issue 21's acceptance figures, computed from the
 * published runs in ../shared/data/llm/ read in place (tests/unit/
 * llm_rows.h turns each row into a model, layout and machine):
 *
 * - Narayanan et al. Table 1 (TFLOP/s per GPU by their eq. 3): each within
 *   10%, the median within 5%;
 * - the Megatron-LM H100 table and the NeMo 24.07 table: median within 7%
 *   each;
 * - Korthikanti et al. Table 4: each layer's forward and backward within 5%;
 * - vTrain's 1,440 single-server runs: mean |error| within 10%.
 *
 * Without ../shared/data every test is reported SKIPPED.  Set
 * LLM_RUNS_VERBOSE=1 to print every row (docs/calibration.md's table).
 */
#include "testutil.h"

#include "llm_rows.h"

static llm_row *rows, *vt;
static int nrows, nvt;

static int setup(void **state)
{
    (void)state;
    rows = llm_rows_read(SHARED_DATA "/llm/measurements.csv", &nrows);
    vt = llm_rows_read(SHARED_DATA "/llm/vtrain-a100-single-node.csv", &nvt);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(rows);
    free(vt);
    llm_machines_free();
    return 0;
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return x < y ? -1 : x > y;
}

static double median_abs(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_abs);
    return n % 2 ? fabs(v[n / 2]) : (fabs(v[n / 2 - 1]) + fabs(v[n / 2])) / 2;
}

/* The errors of the rows whose id starts with prefix; their count. */
static int errors(const char *prefix, double *err, int cap, int verbose)
{
    int i, n = 0;
    for (i = 0; i < nrows && n < cap; i++) {
        llm_case c;
        llm_eval ev;
        if (strncmp(rows[i].f[C_ID], prefix, strlen(prefix)))
            continue;
        llm_row_setup(&rows[i], &c);
        if (c.skip)
            continue;
        assert_int_equal(llm_case_eval(&c, ".", NULL, &ev), 0);
        /* every run in the files ran: each must be predicted to fit */
        if (!ev.fits)
            fail_msg("%s: predicted not to fit (%.1f GB)", rows[i].f[C_ID],
                     ev.res.mem.total / 1e9);
        err[n++] = ev.err;
        if (verbose)
            printf("| %s | %.1f | %.1f | %+.1f%% | %d | %d | %s |\n", rows[i].f[C_ID], ev.meas,
                   ev.pred, 100 * ev.err, ev.used.mbs, ev.used.vp,
                   cp_recompute_name(ev.res.recompute));
    }
    return n;
}

static void test_narayanan_table1(void **state)
{
    double err[16];
    int n, i;
    (void)state;
    if (!rows)
        skip();
    n = errors("N21", err, 16, getenv("LLM_RUNS_VERBOSE") != NULL);
    assert_int_equal(n, 10);
    for (i = 0; i < n; i++)
        assert_between(err[i], -0.10, 0.10);
    printf("Narayanan Table 1: median |error| %.1f%%\n", 100 * median_abs(err, n));
    assert_true(median_abs(err, n) <= 0.05);
}

static void test_h100_tables(void **state)
{
    double err[16];
    int n;
    (void)state;
    if (!rows)
        skip();
    n = errors("MLM-H100", err, 16, getenv("LLM_RUNS_VERBOSE") != NULL);
    assert_int_equal(n, 9);
    printf("Megatron-LM H100 table: median |error| %.1f%%\n", 100 * median_abs(err, n));
    assert_true(median_abs(err, n) <= 0.07);
    n = errors("NeMo2407", err, 16, getenv("LLM_RUNS_VERBOSE") != NULL);
    assert_int_equal(n, 10); /* Nemotron 8B and 22B have no published architecture */
    printf("NeMo 24.07 table: median |error| %.1f%%\n", 100 * median_abs(err, n));
    assert_true(median_abs(err, n) <= 0.07);
}

static void test_korthikanti_table4(void **state)
{
    int i, n = 0;
    (void)state;
    if (!rows)
        skip();
    for (i = 0; i < nrows; i++) {
        llm_case c;
        llm_eval ev;
        if (strncmp(rows[i].f[C_ID], "K22", 3))
            continue;
        llm_row_setup(&rows[i], &c);
        assert_int_equal(llm_case_eval(&c, ".", NULL, &ev), 0);
        if (getenv("LLM_RUNS_VERBOSE"))
            printf("| %s | fwd %.1f / %.2f (%+.1f%%) | bwd %.1f / %.2f (%+.1f%%) |\n",
                   rows[i].f[C_ID], c.measured_fwd, ev.pred_fwd, 100 * ev.err_fwd,
                   c.measured_bwd, ev.pred_bwd, 100 * ev.err_bwd);
        assert_between(ev.err_fwd, -0.05, 0.05);
        assert_between(ev.err_bwd, -0.05, 0.05);
        n++;
    }
    assert_int_equal(n, 5);
}

static void test_vtrain(void **state)
{
    double sum = 0, sumsq = 0;
    int i, n = 0;
    (void)state;
    if (!vt)
        skip();
    for (i = 0; i < nvt; i++) {
        llm_case c;
        llm_eval ev;
        llm_vtrain_setup(&vt[i], &c);
        assert_int_equal(llm_case_eval(&c, ".", NULL, &ev), 0);
        sum += fabs(ev.err);
        sumsq += ev.err * ev.err;
        n++;
    }
    assert_int_equal(n, 1440);
    printf("vTrain single-server: mean |error| %.1f%%, RMS %.1f%% over %d runs\n",
           100 * sum / n, 100 * sqrt(sumsq / n), n);
    assert_true(sum / n <= 0.10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_narayanan_table1),
        cmocka_unit_test(test_h100_tables),
        cmocka_unit_test(test_korthikanti_table4),
        cmocka_unit_test(test_vtrain),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
