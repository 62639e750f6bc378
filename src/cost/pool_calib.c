/*
 * pool_calib.c - fitting calibration.pool to a measured table (see
 * pool_calib.h).
 *
 * Two numbers are fitted, both of the busier copy-engine stream (pulling,
 * unless publishing takes longer, as Scatter's root's): its engine's rate
 * and the fixed cost of one of its copies.  The model is piecewise (a
 * maximum of resources, the small-copy cliff): the fit minimises the
 * squared relative error over every row, first on a coarse grid around the
 * topology's values, then by Levenberg-Marquardt in (log rate, fixed cost)
 * from the grid's best point.  Where a copy's path (a link, the device) is
 * slower than the engine, the engine's rate does not move the model and is
 * kept.  The launch cost is held, as for rings.  On hosts of several GPUs
 * the in-host phases come from the network's model the caller passes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/pool_calib.h"

/* Bounds of the search: those the loader enforces for calibration.pool. */
#define RATE_MIN 1e-3
#define RATE_MAX 1e5
#define CHUNK_MAX_US 1e6

void cp_pool_fit_free(cp_pool_fit *f)
{
    free(f->pred_us);
    f->pred_us = NULL;
}

/* Set the fitted side's engine rate on every GPU and its copies' fixed
 * cost. */
static void set_params(cp_pool *p, int read_side, double rate, double fixed)
{
    int g;
    for (g = 0; g < p->nranks; g++) {
        if (read_side)
            p->copy_read_gbs[g] = rate;
        else
            p->copy_gbs[g] = rate;
    }
    if (read_side)
        p->chunk_read_us = fixed;
    else
        p->chunk_us = fixed;
}

/* Sum of squared relative errors with the given rate and fixed cost. */
static double sse(cp_pool *p, const cp_nccl_table *tab, cp_xop op, int read_side, double rate,
                  double chunk)
{
    double s = 0;
    int i;
    set_params(p, read_side, rate, chunk);
    for (i = 0; i < tab->nrows; i++) {
        double r = cp_pool_time_us(p, op, tab->rows[i].bytes, NULL) / tab->rows[i].time_us - 1;
        s += r * r;
    }
    return s;
}

/* 1 when the engine at `rate` is slower than some copy's path: only then
 * does its rate move the model. */
static int engine_seen(const cp_pool *p, int read_side, double rate)
{
    const double *path = read_side ? p->path_r_gbs : p->path_w_gbs;
    size_t i, n = (size_t)p->nranks * p->ndev;
    for (i = 0; i < n; i++)
        if (rate < path[i])
            return 1;
    return 0;
}

/* Relative residuals of every row at (log rate, chunk) into r. */
static void residuals(cp_pool *p, const cp_nccl_table *tab, cp_xop op, int read_side,
                      const double *x, double *r)
{
    int i;
    sse(p, tab, op, read_side, exp(x[0]), x[1]);
    for (i = 0; i < tab->nrows; i++)
        r[i] = cp_pool_time_us(p, op, tab->rows[i].bytes, NULL) / tab->rows[i].time_us - 1;
}

static int in_bounds(const double *x, int fit_rate)
{
    return x[1] >= 0 && x[1] <= CHUNK_MAX_US &&
           (!fit_rate || (x[0] >= log(RATE_MIN) && x[0] <= log(RATE_MAX)));
}

/* The best point of a coarse grid: rates from a tenth to ten times the
 * start (41 steps in log space), fixed costs 0 and 2^-2 .. 2^10 us; of
 * points that fit equally well, the rate nearest the start (a rate the
 * rows cannot see stays put).  Where a device or a link binds every row,
 * neither parameter moves the model, and a local method from there would
 * not move at all. */
static void grid(cp_pool *p, const cp_nccl_table *tab, cp_xop op, int read_side, double *rate,
                 double *chunk)
{
    double r0 = *rate, best = INFINITY;
    int i, j;
    for (i = 0; i <= 40; i++)
        for (j = -1; j <= 12; j++) {
            double r = r0 * pow(10, (i - 20) / 20.0), c = j < 0 ? 0 : pow(2, j - 2);
            double v = sse(p, tab, op, read_side, r, c);
            if (v < best * (1 - 1e-12) ||
                (v <= best * (1 + 1e-12) && fabs(log(r / r0)) < fabs(log(*rate / r0)))) {
                best = fmin(best, v);
                *rate = r;
                *chunk = c;
            }
        }
}

/* Levenberg-Marquardt on (log rate, chunk_us) with forward-difference
 * derivatives: the model is smooth wherever the binding resource and the
 * chunk counts stay put, and those do not depend on the two parameters
 * near the optimum.  The rate and the chunk cost both add to the slope, a
 * narrow valley that axis searches crawl along.  `r`: 3 x nrows scratch. */
static void search(cp_pool *p, const cp_nccl_table *tab, cp_xop op, int read_side,
                   int fit_rate, double *rate, double *chunk, double *r)
{
    double x[2] = {log(*rate), *chunk}, lambda = 1e-3, cur;
    double *r1 = r + tab->nrows, *r2 = r1 + tab->nrows;
    int it, i, n = tab->nrows;
    cur = sse(p, tab, op, read_side, exp(x[0]), x[1]);
    for (it = 0; it < 200 && cur > 1e-24; it++) {
        double h0 = 1e-6, h1 = 1e-6 * (1 + x[1]), A[3] = {0, 0, 0}, g[2] = {0, 0}, xs[2];
        double xn[2], det, v;
        residuals(p, tab, op, read_side, x, r);
        xs[0] = x[0] + h0;
        xs[1] = x[1];
        residuals(p, tab, op, read_side, xs, r1);
        xs[0] = x[0];
        xs[1] = x[1] + h1;
        residuals(p, tab, op, read_side, xs, r2);
        for (i = 0; i < n; i++) {
            double j0 = fit_rate ? (r1[i] - r[i]) / h0 : 0, j1 = (r2[i] - r[i]) / h1;
            A[0] += j0 * j0;
            A[1] += j0 * j1;
            A[2] += j1 * j1;
            g[0] += j0 * r[i];
            g[1] += j1 * r[i];
        }
        for (;;) {
            /* Marquardt's damping, floored so that a parameter the rows do
             * not see yet (a rate where a device binds) takes small steps */
            double a0 = A[0] + lambda * fmax(A[0], 1e-6), a2 = A[2] + lambda * fmax(A[2], 1e-6);
            det = a0 * a2 - A[1] * A[1];
            xn[0] = x[0] - (a2 * g[0] - A[1] * g[1]) / det;
            xn[1] = x[1] - (a0 * g[1] - A[1] * g[0]) / det;
            if (!fit_rate)
                xn[0] = x[0];
            v = in_bounds(xn, fit_rate) ? sse(p, tab, op, read_side, exp(xn[0]), xn[1]) : INFINITY;
            if (v < cur || lambda > 1e12)
                break;
            lambda *= 10;
        }
        if (!(v < cur))
            break;
        x[0] = xn[0];
        x[1] = xn[1];
        cur = v;
        lambda = fmax(lambda / 10, 1e-9);
    }
    *rate = exp(x[0]);
    *chunk = x[1];
}

int cp_pool_calibrate(cp_topo *t, const cp_coll *c, const cp_nccl_table *tab, cp_xop op,
                      cp_pool_fit *f, cp_err *e)
{
    cp_pool p;
    cp_pool_why w;
    double rate, chunk;
    int rc, i;
    memset(f, 0, sizeof *f);
    f->op = op;
    if (tab->nrows < 2)
        return cp_fail(e, CP_EINPUT, "a pool fit needs at least two rows (two sizes)");
    if ((rc = cp_pool_build(t, c, &p, e)))
        return rc;
    cp_pool_time_us(&p, op, tab->rows[tab->nrows - 1].bytes, &w);
    /* the busier stream's direction; its rate moves only where it binds */
    f->read_side = w.res_us[CP_PRES_COPY_READ] >= w.res_us[CP_PRES_COPY_WRITE];
    rate = f->read_side ? p.copy_read_gbs[0] : p.copy_gbs[0];
    chunk = f->read_side ? p.chunk_read_us : p.chunk_us;
    f->rate_before = rate;
    f->chunk_before = chunk;
    f->pred_us = malloc(3 * (size_t)tab->nrows * sizeof *f->pred_us);
    if (!f->pred_us) {
        cp_pool_free(&p);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    grid(&p, tab, op, f->read_side, &rate, &chunk);
    search(&p, tab, op, f->read_side, 1, &rate, &chunk, f->pred_us);
    /* a rate the rows cannot see (every copy's path slower) is kept */
    f->rate_fitted = engine_seen(&p, f->read_side, rate);
    if (!f->rate_fitted)
        rate = f->rate_before;
    f->rate_after = rate;
    f->chunk_after = chunk;
    sse(&p, tab, op, f->read_side, rate, chunk);
    for (i = 0; i < tab->nrows; i++) {
        double r;
        f->pred_us[i] = cp_pool_time_us(&p, op, tab->rows[i].bytes, i + 1 == tab->nrows ? &w
                                                                                       : NULL);
        r = f->pred_us[i] / tab->rows[i].time_us - 1;
        f->rms_error += r * r;
    }
    f->rms_error = sqrt(f->rms_error / tab->nrows);
    f->bind = w.bind;
    if (f->rate_fitted) {
        if (f->read_side)
            t->calib.pool.copy_read_gbs = rate;
        else
            t->calib.pool.copy_gbs = rate;
    }
    if (f->read_side)
        t->calib.pool.chunk_read_us = chunk;
    else
        t->calib.pool.chunk_us = chunk;
    t->calib.given = 1;
    cp_pool_free(&p);
    return CP_OK;
}
