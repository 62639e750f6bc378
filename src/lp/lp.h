/*
 * lp.h - a small linear-programming interface over GLPK.
 *
 * The only module that includes glpk.h.  Callers build a problem with named
 * columns and rows (0-based indices), solve it, and read primal values and
 * row duals.  The matrix is collected as triplets and loaded into GLPK in
 * one call at solve time, which is much faster than row-by-row loading for
 * large problems.
 *
 * Failure handling: GLPK aborts the process on internal errors unless an
 * error hook jumps out; cp_lp_solve installs one, so a GLPK failure becomes
 * CP_EINTERNAL with a message, never an abort.  A solve that ends without
 * an optimal basic solution (infeasible, unbounded, iteration limit,
 * numerical trouble) is reported with GLPK's reason; the LP can be written
 * in CPLEX LP format with cp_lp_write for inspection.
 *
 * Ownership: cp_lp_new returns a new problem that the caller frees with
 * cp_lp_free.  Names are copied.
 */
#ifndef CP_LP_H
#define CP_LP_H

#include "core/err.h"

typedef struct cp_lp cp_lp;

typedef enum cp_lp_rowtype { CP_LP_LE, CP_LP_GE, CP_LP_EQ } cp_lp_rowtype;

/* A new empty problem; maximise when `maximize` is 1.  NULL when out of memory. */
cp_lp *cp_lp_new(const char *name, int maximize);

void cp_lp_free(cp_lp *lp);

/* Add a column with bounds [lo, hi] (hi < 0 means no upper bound) and
 * objective coefficient `obj`; returns its index or -1 when out of memory. */
int cp_lp_add_col(cp_lp *lp, const char *name, double lo, double hi, double obj);

/* Add a row `sum(vals[k] x cols[k]) (<=, >=, =) rhs`; returns its index or -1.
 * Zero coefficients are dropped; repeated columns are summed. */
int cp_lp_add_row(cp_lp *lp, const char *name, cp_lp_rowtype type, double rhs, int n,
                  const int *cols, const double *vals);

/* Append one coefficient to an existing row (for rows built incrementally). */
int cp_lp_add_coef(cp_lp *lp, int row, int col, double val);

/* Solve with the simplex method.  CP_OK when an optimal solution was found;
 * otherwise CP_EINTERNAL with GLPK's reason in e (infeasible, unbounded,
 * iteration limit, numerical failure). */
int cp_lp_solve(cp_lp *lp, cp_err *e);

/* 1 when the last cp_lp_solve ran the simplex to its end, whatever it
 * found: a failure then is the problem's (or its numbers'), not memory or a
 * GLPK abort. */
int cp_lp_ran(const cp_lp *lp);

/* Results of the last successful solve. */
double cp_lp_obj(const cp_lp *lp);
double cp_lp_value(const cp_lp *lp, int col);
double cp_lp_dual(const cp_lp *lp, int row);    /* d objective / d rhs */
double cp_lp_activity(const cp_lp *lp, int row); /* the row's left-hand side */

int cp_lp_ncols(const cp_lp *lp);
int cp_lp_nrows(const cp_lp *lp);
const char *cp_lp_row_name(const cp_lp *lp, int row);
const char *cp_lp_col_name(const cp_lp *lp, int col);

/* Simplex iterations of the last solve (for benchmarks). */
int cp_lp_iterations(const cp_lp *lp);

/* Write the problem in CPLEX LP format to `path` (atomically); CP_OK or
 * CP_EINTERNAL.  Works before or after solving. */
int cp_lp_write(const cp_lp *lp, const char *path, cp_err *e);

#endif
