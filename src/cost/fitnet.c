/*
 * fitnet.c - the NVLS and EFA-2024 fits of docs/calibration.md ("NVLS on
 * H100", "EFA 2024") from the rows of the p5 nccl-tests table, through the
 * collective model itself: one parameter each, minimax by golden-section search
 * (each row's relative error is monotone in the parameter, so the worst of
 * them is unimodal).
 */
#include "cost/fitnet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/collective.h"

int cp_fitnet_load(const char *path, int nodes, cp_fitnet_row **rows, int *n, cp_err *e)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int cap = 16, lineno = 0;
    *rows = NULL;
    *n = 0;
    if (!f)
        return cp_fail(e, CP_EINPUT, "%s: cannot open", path);
    *rows = malloc((size_t)cap * sizeof **rows);
    if (!*rows) {
        fclose(f);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end;
        long nd;
        double b = 0, us = 0;
        int ok;
        lineno++;
        if (line[0] == '#' || strncmp(line, "nodes", 5) == 0 || line[0] == '\n')
            continue;
        nd = strtol(p, &end, 10);
        ok = end != p && *end == ',';
        if (ok) {
            b = strtod(p = end + 1, &end);
            ok = end != p && *end == ',';
        }
        if (ok) {
            us = strtod(p = end + 1, &end);
            ok = end != p && *end == ',';
        }
        if (!ok || !(b > 0) || !(us > 0)) {
            fclose(f);
            free(*rows);
            *rows = NULL;
            *n = 0;
            return cp_fail(e, CP_EINPUT, "%s:%d: expected nodes,bytes,time_us,busbw_gbs", path,
                           lineno);
        }
        if (nd != nodes)
            continue;
        if (*n == cap) {
            cp_fitnet_row *r = realloc(*rows, (size_t)(cap *= 2) * sizeof **rows);
            if (!r) {
                fclose(f);
                free(*rows);
                *rows = NULL;
                *n = 0;
                return cp_fail(e, CP_EINTERNAL, "out of memory");
            }
            *rows = r;
        }
        (*rows)[*n].bytes = b;
        (*rows)[(*n)++].us = us;
    }
    fclose(f);
    if (*n == 0) {
        free(*rows);
        *rows = NULL;
        return cp_fail(e, CP_EINPUT, "%s: no rows of %d nodes", path, nodes);
    }
    return CP_OK;
}

/* The worst relative error of `alg` (CP_ALGS: the model's best) over the
 * rows, on t's collective model as t is now calibrated; < 0 on failure. */
static double worst_err(const cp_topo *t, int alg, const cp_fitnet_row *rows, int n, cp_err *e)
{
    cp_coll c;
    double w = 0;
    int k;
    if (cp_coll_build(t, 1, &c, e) != CP_OK)
        return -1;
    for (k = 0; k < n; k++) {
        double us = alg == CP_ALGS ? -1 : cp_coll_time_us(&c, CP_OP_ALLREDUCE, (cp_coll_alg)alg,
                                                          rows[k].bytes);
        if (alg == CP_ALGS)
            cp_coll_best(&c, CP_OP_ALLREDUCE, rows[k].bytes, &us);
        w = fmax(w, fabs(us / rows[k].us - 1));
    }
    cp_coll_free(&c);
    return w;
}

/* Golden-section search of x in [lo, hi] for the least worst error, to
 * within tol; t is left carrying *x (through `set`). */
typedef void (*setter)(cp_topo *t, double x);

static double eval_at(cp_topo *t, setter set, int alg, const cp_fitnet_row *rows, int n, double x,
                      cp_err *e)
{
    set(t, x);
    return worst_err(t, alg, rows, n, e);
}

static int minimax(cp_topo *t, setter set, int alg, const cp_fitnet_row *rows, int n, double lo,
                   double hi, double tol, double *x, double *worst, cp_err *e)
{
    const double g = 0.6180339887498949;
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    double fa = eval_at(t, set, alg, rows, n, a, e), fb = eval_at(t, set, alg, rows, n, b, e);
    while (hi - lo > tol && fa >= 0 && fb >= 0) {
        if (fa <= fb) {
            hi = b;
            b = a;
            fb = fa;
            a = hi - g * (hi - lo);
            fa = eval_at(t, set, alg, rows, n, a, e);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + g * (hi - lo);
            fb = eval_at(t, set, alg, rows, n, b, e);
        }
    }
    if (fa < 0 || fb < 0)
        return e->status ? e->status : CP_EINTERNAL;
    *x = (lo + hi) / 2;
    *worst = eval_at(t, set, alg, rows, n, *x, e);
    return *worst < 0 ? (e->status ? e->status : CP_EINTERNAL) : CP_OK;
}

static void set_nvls(cp_topo *t, double x)
{
    t->calib.nvls_eff = x;
}

static void set_simple(cp_topo *t, double x)
{
    t->calib.kind[CP_NET].simple_us = x;
}

int cp_fitnet_nvls_eff(cp_topo *t, const cp_fitnet_row *rows, int n, double *eff, double *worst,
                       cp_err *e)
{
    double keep = t->calib.nvls_eff;
    int rc = minimax(t, set_nvls, CP_ALG_NVLS, rows, n, 0.05, 1, 1e-6, eff, worst, e);
    t->calib.nvls_eff = keep;
    return rc;
}

int cp_fitnet_net(cp_topo *t, int hosts, const cp_fitnet_row *rows, int n, double *bw_eff,
                  double *simple_us, double *worst, cp_err *e)
{
    cp_topo *h;
    double line = 0, alg;
    int k, rc, big = 0;
    for (k = 0; k < t->nnodes; k++)
        if (t->nodes[k].kind == CP_NIC)
            line += t->nodes[k].net_gbs;
    for (k = 1; k < n; k++)
        if (rows[k].bytes > rows[big].bytes)
            big = k;
    k = big;
    alg = rows[k].bytes / (rows[k].us * 1e3); /* GB/s */
    if (!(line > 0))
        return cp_fail(e, CP_EINPUT, "%s has no NIC with net_gbs", t->name);
    *bw_eff = ceil(alg / line * 100 - 1e-9) / 100;
    rc = cp_topo_replicate(t, hosts, &h, e);
    if (rc != CP_OK)
        return rc;
    h->calib.kind[CP_NET].bw_eff = *bw_eff;
    rc = minimax(h, set_simple, CP_ALGS, rows, n, 0, 1000, 1e-3, simple_us, worst, e);
    cp_topo_free(h);
    return rc;
}
