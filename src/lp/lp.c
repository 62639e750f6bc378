/*
 * lp.c - the GLPK binding (see lp.h).  The only file that includes glpk.h.
 *
 * The problem lives in plain arrays until solve time; cp_lp_solve builds a
 * glp_prob, loads the merged triplets with one glp_load_matrix call, solves
 * with the presolved primal simplex, copies the results out and deletes the
 * glp_prob.  Keeping GLPK's object short-lived makes the error hook safe:
 * after a longjmp out of GLPK, glp_free_env destroys every GLPK object, and
 * ours holds no pointer into GLPK by then.
 */
#include <glpk.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "lp/lp.h"

/* One simplex solve may take at most this long (ms) before we give up with
 * a clear error instead of hanging: two minutes is far beyond any plan the
 * shipped inputs need (docs/performance.md). */
#define LP_TIME_LIMIT_MS 120000

typedef struct triplet {
    int row, col;
    double val;
} triplet;

struct cp_lp {
    char *name;
    int maximize;
    /* columns */
    char **col_name;
    double *col_lo, *col_hi, *col_obj, *col_val;
    int ncols, cap_cols;
    /* rows */
    char **row_name;
    cp_lp_rowtype *row_type;
    double *row_rhs, *row_dual, *row_act;
    int nrows, cap_rows;
    /* matrix */
    triplet *nz;
    size_t nnz, cap_nz;
    /* results */
    double obj;
    int iterations;
    int solved;
    int ran;        /* the last solve ran the simplex to its end */
};

cp_lp *cp_lp_new(const char *name, int maximize)
{
    cp_lp *lp = calloc(1, sizeof *lp);
    if (!lp)
        return NULL;
    lp->name = strdup(name ? name : "lp");
    if (!lp->name) {
        free(lp);
        return NULL;
    }
    lp->maximize = maximize;
    return lp;
}

void cp_lp_free(cp_lp *lp)
{
    int i;
    if (!lp)
        return;
    for (i = 0; i < lp->ncols; i++)
        free(lp->col_name[i]);
    for (i = 0; i < lp->nrows; i++)
        free(lp->row_name[i]);
    free(lp->col_name);
    free(lp->col_lo);
    free(lp->col_hi);
    free(lp->col_obj);
    free(lp->col_val);
    free(lp->row_name);
    free(lp->row_type);
    free(lp->row_rhs);
    free(lp->row_dual);
    free(lp->row_act);
    free(lp->nz);
    free(lp->name);
    free(lp);
}

/* Grow every per-column array to hold one more column. */
static int grow_cols(cp_lp *lp)
{
    int cap = lp->cap_cols ? lp->cap_cols * 2 : 64;
    void *a = realloc(lp->col_name, (size_t)cap * sizeof *lp->col_name);
    if (!a)
        return -1;
    lp->col_name = a;
#define GROW(field)                                                   \
    do {                                                              \
        void *p_ = realloc(lp->field, (size_t)cap * sizeof *lp->field); \
        if (!p_)                                                      \
            return -1;                                                \
        lp->field = p_;                                               \
    } while (0)
    GROW(col_lo);
    GROW(col_hi);
    GROW(col_obj);
    GROW(col_val);
    lp->cap_cols = cap;
    return 0;
}

static int grow_rows(cp_lp *lp)
{
    int cap = lp->cap_rows ? lp->cap_rows * 2 : 64;
    void *a = realloc(lp->row_name, (size_t)cap * sizeof *lp->row_name);
    if (!a)
        return -1;
    lp->row_name = a;
    GROW(row_type);
    GROW(row_rhs);
    GROW(row_dual);
    GROW(row_act);
#undef GROW
    lp->cap_rows = cap;
    return 0;
}

int cp_lp_add_col(cp_lp *lp, const char *name, double lo, double hi, double obj)
{
    int j;
    if (lp->ncols == lp->cap_cols && grow_cols(lp))
        return -1;
    j = lp->ncols;
    lp->col_name[j] = strdup(name ? name : "x");
    if (!lp->col_name[j])
        return -1;
    lp->col_lo[j] = lo;
    lp->col_hi[j] = hi;
    lp->col_obj[j] = obj;
    lp->col_val[j] = 0;
    lp->ncols++;
    lp->solved = 0;
    return j;
}

int cp_lp_add_coef(cp_lp *lp, int row, int col, double val)
{
    if (val == 0)
        return 0;
    if (lp->nnz == lp->cap_nz) {
        size_t cap = lp->cap_nz ? lp->cap_nz * 2 : 256;
        triplet *p = realloc(lp->nz, cap * sizeof *p);
        if (!p)
            return -1;
        lp->nz = p;
        lp->cap_nz = cap;
    }
    lp->nz[lp->nnz].row = row;
    lp->nz[lp->nnz].col = col;
    lp->nz[lp->nnz].val = val;
    lp->nnz++;
    lp->solved = 0;
    return 0;
}

int cp_lp_add_row(cp_lp *lp, const char *name, cp_lp_rowtype type, double rhs, int n,
                  const int *cols, const double *vals)
{
    int i, k;
    if (lp->nrows == lp->cap_rows && grow_rows(lp))
        return -1;
    i = lp->nrows;
    lp->row_name[i] = strdup(name ? name : "r");
    if (!lp->row_name[i])
        return -1;
    lp->row_type[i] = type;
    lp->row_rhs[i] = rhs;
    lp->row_dual[i] = lp->row_act[i] = 0;
    lp->nrows++;
    for (k = 0; k < n; k++)
        if (cp_lp_add_coef(lp, i, cols[k], vals[k]))
            return -1;
    lp->solved = 0;
    return i;
}

static int cmp_triplet(const void *a, const void *b)
{
    const triplet *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return x->col < y->col ? -1 : x->col > y->col;
}

/* Sort and sum repeated (row, col) entries: GLPK refuses duplicates. */
static void merge_triplets(cp_lp *lp)
{
    size_t i, out = 0;
    if (lp->nnz == 0)
        return;
    qsort(lp->nz, lp->nnz, sizeof *lp->nz, cmp_triplet);
    for (i = 1; i < lp->nnz; i++) {
        if (lp->nz[i].row == lp->nz[out].row && lp->nz[i].col == lp->nz[out].col)
            lp->nz[out].val += lp->nz[i].val;
        else
            lp->nz[++out] = lp->nz[i];
    }
    lp->nnz = out + 1;
}

/* Build the glp_prob from our arrays.  May longjmp through the error hook. */
static glp_prob *build(cp_lp *lp)
{
    glp_prob *P = glp_create_prob();
    int *ia, *ja, i;
    double *ar;
    size_t k;

    glp_set_prob_name(P, lp->name);
    glp_set_obj_dir(P, lp->maximize ? GLP_MAX : GLP_MIN);
    if (lp->nrows)
        glp_add_rows(P, lp->nrows);
    if (lp->ncols)
        glp_add_cols(P, lp->ncols);
    for (i = 0; i < lp->nrows; i++) {
        int t = lp->row_type[i] == CP_LP_LE ? GLP_UP : lp->row_type[i] == CP_LP_GE ? GLP_LO : GLP_FX;
        glp_set_row_name(P, i + 1, lp->row_name[i]);
        glp_set_row_bnds(P, i + 1, t, lp->row_rhs[i], lp->row_rhs[i]);
    }
    for (i = 0; i < lp->ncols; i++) {
        int t = lp->col_hi[i] < 0 ? GLP_LO : lp->col_hi[i] == lp->col_lo[i] ? GLP_FX : GLP_DB;
        glp_set_col_name(P, i + 1, lp->col_name[i]);
        glp_set_col_bnds(P, i + 1, t, lp->col_lo[i], lp->col_hi[i]);
        glp_set_obj_coef(P, i + 1, lp->col_obj[i]);
    }
    merge_triplets(lp);
    ia = malloc((lp->nnz + 1) * sizeof *ia);
    ja = malloc((lp->nnz + 1) * sizeof *ja);
    ar = malloc((lp->nnz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia);
        free(ja);
        free(ar);
        glp_delete_prob(P);
        return NULL;
    }
    for (k = 0; k < lp->nnz; k++) {
        ia[k + 1] = lp->nz[k].row + 1;
        ja[k + 1] = lp->nz[k].col + 1;
        ar[k + 1] = lp->nz[k].val;
    }
    glp_load_matrix(P, (int)lp->nnz, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    return P;
}

static void on_glpk_error(void *info)
{
    longjmp(*(jmp_buf *)info, 1);
}

/* Words for glp_simplex's return code and the solution status. */
static const char *simplex_reason(int ret, int status)
{
    switch (ret) {
    case GLP_EBADB: return "invalid initial basis";
    case GLP_ESING: return "singular basis matrix";
    case GLP_ECOND: return "ill-conditioned basis matrix";
    case GLP_EBOUND: return "a double-bounded variable has incorrect bounds";
    case GLP_EFAIL: return "numerical failure in the simplex solver";
    case GLP_EOBJLL: case GLP_EOBJUL: return "objective limit reached";
    case GLP_EITLIM: return "simplex iteration limit exceeded";
    case GLP_ETMLIM: return "time limit exceeded";
    case GLP_ENOPFS: return "the problem has no feasible solution";
    case GLP_ENODFS: return "the problem is unbounded (no dual feasible solution)";
    default: break;
    }
    switch (status) {
    case GLP_INFEAS: case GLP_NOFEAS: return "the problem has no feasible solution";
    case GLP_UNBND: return "the problem is unbounded";
    default: return "no optimal solution found";
    }
}

/* Copy results out of the solved problem. */
static void extract(cp_lp *lp, glp_prob *P)
{
    int i;
    lp->obj = glp_get_obj_val(P);
    for (i = 0; i < lp->ncols; i++)
        lp->col_val[i] = glp_get_col_prim(P, i + 1);
    for (i = 0; i < lp->nrows; i++) {
        lp->row_dual[i] = glp_get_row_dual(P, i + 1);
        lp->row_act[i] = glp_get_row_prim(P, i + 1);
    }
    lp->solved = 1;
}

int cp_lp_solve(cp_lp *lp, cp_err *e)
{
    jmp_buf env;
    glp_prob *volatile P = NULL;
    volatile int ret = 0, status = 0;
    glp_smcp parm;

    lp->solved = 0;
    lp->ran = 0;
    /* GLPK aborts the process when it cannot allocate its environment on
     * first use; initialised here first, that is an error we report */
    if (glp_init_env() == 2)
        return cp_fail(e, CP_EINTERNAL, "out of memory starting GLPK for LP %s", lp->name);
    glp_term_out(GLP_OFF);
    glp_error_hook(on_glpk_error, &env);
    if (setjmp(env)) {
        glp_error_hook(NULL, NULL);
        glp_free_env(); /* destroys P too */
        return cp_fail(e, CP_EINTERNAL, "LP %s: GLPK internal error (the solver aborted)",
                       lp->name);
    }
    P = build(lp);
    if (!P) {
        glp_error_hook(NULL, NULL);
        return cp_fail(e, CP_EINTERNAL, "out of memory building LP %s", lp->name);
    }
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.tm_lim = LP_TIME_LIMIT_MS;
    glp_scale_prob(P, GLP_SF_AUTO);
    ret = glp_simplex(P, &parm);
    status = glp_get_status(P);
    lp->ran = 1;
    if (ret == 0 && status == GLP_OPT) {
        lp->iterations = glp_get_it_cnt(P);
        extract(lp, P);
    }
    glp_delete_prob(P);
    glp_error_hook(NULL, NULL);
    if (!lp->solved)
        return cp_fail(e, CP_EINTERNAL, "LP %s (%d rows, %d columns): %s", lp->name, lp->nrows,
                       lp->ncols, simplex_reason(ret, status));
    return CP_OK;
}

int cp_lp_ran(const cp_lp *lp)
{
    return lp->ran;
}

double cp_lp_obj(const cp_lp *lp)
{
    return lp->obj;
}

double cp_lp_value(const cp_lp *lp, int col)
{
    return lp->col_val[col];
}

double cp_lp_dual(const cp_lp *lp, int row)
{
    return lp->row_dual[row];
}

double cp_lp_activity(const cp_lp *lp, int row)
{
    return lp->row_act[row];
}

int cp_lp_ncols(const cp_lp *lp)
{
    return lp->ncols;
}

int cp_lp_nrows(const cp_lp *lp)
{
    return lp->nrows;
}

const char *cp_lp_row_name(const cp_lp *lp, int row)
{
    return lp->row_name[row];
}

const char *cp_lp_col_name(const cp_lp *lp, int col)
{
    return lp->col_name[col];
}

int cp_lp_iterations(const cp_lp *lp)
{
    return lp->iterations;
}

/* cp_lp_write for a path that is not "-". */
static int write_lp(const cp_lp *lp, const char *path, cp_err *e)
{
    jmp_buf env;
    glp_prob *volatile P = NULL;
    cp_outfile out;
    volatile int rc;
    int orc;

    orc = cp_out_open(&out, path, e);
    if (orc)
        return orc;
    fclose(out.f); /* GLPK writes by name; we only want the temporary path */
    out.f = NULL;
    glp_term_out(GLP_OFF);
    glp_error_hook(on_glpk_error, &env);
    if (setjmp(env)) {
        glp_error_hook(NULL, NULL);
        glp_free_env();
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "GLPK failed writing the LP to %s", path);
    }
    P = build((cp_lp *)lp);
    rc = P ? glp_write_lp(P, NULL, out.tmp_path) : -1;
    if (P)
        glp_delete_prob(P);
    glp_error_hook(NULL, NULL);
    if (rc != 0) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "cannot write the LP to %s", path);
    }
    out.f = fopen(out.tmp_path, "r"); /* reopen so commit's flush/close succeed */
    if (!out.f) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "cannot write the LP to %s", path);
    }
    return cp_out_commit(&out, e);
}

int cp_lp_write(const cp_lp *lp, const char *path, cp_err *e)
{
    return write_lp(lp, strcmp(path, "-") == 0 ? "/dev/stdout" : path, e);
}
