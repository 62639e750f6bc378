/*
 * test_lp.c - the GLPK binding: an optimum and its duals worked by hand,
 * infeasible and unbounded problems reported as errors (never an abort),
 * repeated coefficients summed, and the LP written for inspection.
 */
#include "testutil.h"

#include "lp/lp.h"

/* maximise x + y  s.t.  x <= 2, y <= 3, x + 2y <= 7, x, y >= 0.
 * Vertices: (2, 2.5) gives 4.5, (1, 3) gives 4, (2, 0) gives 2: optimum
 * x = 2, y = 2.5.  Duals: the binding rows are x <= 2 and x + 2y <= 7;
 * from y's column 1 = 2 l3, so l3 = 0.5; from x's, 1 = l1 + l3, so l1 = 0.5;
 * y <= 3 is slack, l2 = 0. */
static void test_optimum_and_duals(void **state)
{
    cp_lp *lp = cp_lp_new("hand", 1);
    cp_err e;
    int x, y, r1, r2, r3;
    int cols[2];
    double vals[2];
    (void)state;
    x = cp_lp_add_col(lp, "x", 0, -1, 1);
    y = cp_lp_add_col(lp, "y", 0, -1, 1);
    cols[0] = x;
    vals[0] = 1;
    r1 = cp_lp_add_row(lp, "r1", CP_LP_LE, 2, 1, cols, vals);
    cols[0] = y;
    r2 = cp_lp_add_row(lp, "r2", CP_LP_LE, 3, 1, cols, vals);
    cols[0] = x;
    cols[1] = y;
    vals[1] = 2;
    r3 = cp_lp_add_row(lp, "r3", CP_LP_LE, 7, 2, cols, vals);
    assert_int_equal(cp_lp_solve(lp, &e), CP_OK);
    assert_near(cp_lp_obj(lp), 4.5, 1e-9);
    assert_near(cp_lp_value(lp, x), 2, 1e-9);
    assert_near(cp_lp_value(lp, y), 2.5, 1e-9);
    assert_near(cp_lp_dual(lp, r1), 0.5, 1e-9);
    assert_near(cp_lp_dual(lp, r2), 0, 1e-9);
    assert_near(cp_lp_dual(lp, r3), 0.5, 1e-9);
    assert_near(cp_lp_activity(lp, r3), 7, 1e-9);
    cp_lp_free(lp);
}

/* x >= 3 and x <= 1: no feasible point; an error, with GLPK's reason. */
static void test_infeasible(void **state)
{
    cp_lp *lp = cp_lp_new("bad", 0);
    cp_err e;
    int x, cols[1];
    double vals[1] = {1};
    (void)state;
    x = cp_lp_add_col(lp, "x", 0, -1, 1);
    cols[0] = x;
    cp_lp_add_row(lp, "lo", CP_LP_GE, 3, 1, cols, vals);
    cp_lp_add_row(lp, "hi", CP_LP_LE, 1, 1, cols, vals);
    assert_int_equal(cp_lp_solve(lp, &e), CP_EINTERNAL);
    assert_non_null(strstr(e.msg, "no feasible solution"));
    cp_lp_free(lp);
}

/* maximise x with x unbounded above: an error, not an abort. */
static void test_unbounded(void **state)
{
    cp_lp *lp = cp_lp_new("open", 1);
    cp_err e;
    int x, cols[1];
    double vals[1] = {1};
    (void)state;
    x = cp_lp_add_col(lp, "x", 0, -1, 1);
    cols[0] = x;
    cp_lp_add_row(lp, "lo", CP_LP_GE, 1, 1, cols, vals);
    assert_int_equal(cp_lp_solve(lp, &e), CP_EINTERNAL);
    assert_non_null(strstr(e.msg, "unbounded"));
    cp_lp_free(lp);
}

/* The same column twice in a row sums (GLPK itself refuses duplicates):
 * x + x <= 4 means x <= 2; maximise x: 2. */
static void test_repeated_coefficients(void **state)
{
    cp_lp *lp = cp_lp_new("dup", 1);
    cp_err e;
    int x, row;
    char *path;
    FILE *f;
    char buf[256];
    size_t n;
    (void)state;
    x = cp_lp_add_col(lp, "x", 0, -1, 1);
    row = cp_lp_add_row(lp, "twice", CP_LP_LE, 4, 0, NULL, NULL);
    cp_lp_add_coef(lp, row, x, 1);
    cp_lp_add_coef(lp, row, x, 1);
    assert_int_equal(cp_lp_solve(lp, &e), CP_OK);
    assert_near(cp_lp_value(lp, x), 2, 1e-9);
    /* and it can be written for a person to read */
    path = write_temp("");
    assert_int_equal(cp_lp_write(lp, path, &e), CP_OK);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "twice"));
    drop_temp(path);
    cp_lp_free(lp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optimum_and_duals),
        cmocka_unit_test(test_infeasible),
        cmocka_unit_test(test_unbounded),
        cmocka_unit_test(test_repeated_coefficients),
    };
    return cmocka_run_group_tests_name("lp", tests, NULL, NULL);
}
