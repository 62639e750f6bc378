/*
 * calibrate.c - least-squares fit of bw_eff and step_us (see calibrate.h).
 *
 * The model at a size S is the faster of two lines (collective.h):
 * LL, T = A_ll + beta S / CP_LL_EFF, and Simple, T = A_ll + steps x
 * simple_us + beta S.  Scaling the binding kind's bw_eff by k divides beta by
 * k, as long as the same links bind; raising that kind's step_us by d adds
 * c d to A_ll, where c counts the algorithm's steps over such links, measured
 * by rebuilding the model, so the fit needs no knowledge of the algorithm's
 * formulas.  Simple's line is fitted to the large sizes (slope -> bw_eff,
 * intercept -> simple_us); the intercept of the smallest times, at the slope
 * of the protocol the model runs there, gives step_us.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/calibrate.h"

void cp_fit_free(cp_fit *f)
{
    free(f->pred_us);
    free(f->proto);
    memset(f, 0, sizeof *f);
}

/* The model's lines for op/alg: A_ll and A_s, the intercepts under LL and
 * Simple (us), beta, Simple's slope (us per byte; LL's is beta / CP_LL_EFF),
 * steps, the Simple steps that simple_us multiplies, and the kind whose
 * links bind the bandwidth.  The built model goes to *out (caller frees). */
typedef struct line {
    double A_ll, A_s, beta, steps;
    cp_link_kind bind_kind;
} line;

static int model_line(const cp_topo *t, int gpt, cp_coll_op op, cp_coll_alg alg, line *l,
                      cp_coll *out, cp_err *e)
{
    cp_coll *c = out;
    int rc = cp_coll_build(t, gpt, c, e);
    if (rc)
        return rc;
    c->no_ll128 = 1; /* the fit is of LL and Simple (docs/calibration.md) */
    if (!c->cost[op][alg].available) {
        rc = cp_fail(e, CP_EINPUT, "%s is not available for %s on %s: %s",
                     cp_coll_alg_name(alg), cp_coll_op_name(op), t->name,
                     c->cost[op][alg].why_not);
        cp_coll_free(c);
        return rc;
    } else {
        const cp_alg_cost *a = &c->cost[op][alg];
        int k, best = 0;
        l->A_s = cp_coll_proto_est_us(c, op, alg, CP_PROTO_SIMPLE, 0);
        l->A_ll = a->ll ? cp_coll_proto_est_us(c, op, alg, CP_PROTO_LL, 0) : l->A_s;
        l->beta = (cp_coll_proto_est_us(c, op, alg, CP_PROTO_SIMPLE, 1e9) - l->A_s) / 1e9;
        l->steps = 0;
        /* the phase that dominates the bandwidth term names the kind */
        for (k = 0; k < a->nphases; k++) {
            l->steps += a->phase[k].steps;
            if (a->phase[k].factor / a->phase[k].bw_gbs >
                a->phase[best].factor / a->phase[best].bw_gbs)
                best = k;
        }
        l->bind_kind = a->phase[best].nbind > 0
                           ? cp_coll_arcs(c)->links[a->phase[best].bind_arc[0] >> 1].kind
                           : CP_NVLINK;
    }
    return CP_OK;
}

/* A and beta minimising sum ((A + beta S - T) / T)^2 over rows [lo, hi):
 * the Simple line through the large sizes.  0 when the rows cannot give
 * two parameters. */
static int fit_line(const cp_nccl_table *tab, int lo, int hi, double *A, double *beta)
{
    double s00 = 0, s01 = 0, s11 = 0, b0 = 0, b1 = 0, det;
    int i;
    for (i = lo; i < hi; i++) {
        double w = 1 / tab->rows[i].time_us, x = tab->rows[i].bytes * w;
        s00 += w * w;
        s01 += w * x;
        s11 += x * x;
        b0 += w;     /* w x T x w = w */
        b1 += x;
    }
    det = s00 * s11 - s01 * s01;
    if (!(det > 0))
        return 0;
    *A = (b0 * s11 - b1 * s01) / det;
    *beta = (s00 * b1 - s01 * b0) / det;
    return 1;
}

/* beta minimising sum ((A + beta S - T) / T)^2 over rows [lo, hi) with A
 * given: a table with one size in its top octaves fits the slope alone. */
static double fit_slope(const cp_nccl_table *tab, int lo, int hi, double A)
{
    double num = 0, den = 0;
    int i;
    for (i = lo; i < hi; i++) {
        double s = tab->rows[i].bytes / tab->rows[i].time_us;
        num += s * (1 - A / tab->rows[i].time_us);
        den += s * s;
    }
    return den > 0 ? num / den : 0;
}

/* A minimising sum ((A + slope_i S - T) / T)^2 over the latency rows, each
 * row at the slope of the protocol the model runs there (slope[i]). */
static double fit_A(const cp_nccl_table *tab, const int *rows, int n, const double *slope)
{
    double num = 0, den = 0;
    int i;
    for (i = 0; i < n; i++) {
        const cp_nccl_row *r = &tab->rows[rows[i]];
        num += (r->time_us - slope[i] * r->bytes) / (r->time_us * r->time_us);
        den += 1 / (r->time_us * r->time_us);
    }
    return den > 0 ? num / den : 0;
}

/* Rows for each fit: bandwidth = the top six octaves of sizes (enough of a
 * lever arm to fit Simple's intercept as well as its slope); latency = times
 * within 20% of the smallest time. */
static int pick_rows(const cp_nccl_table *tab, int *bw_lo, int *lat, int *nlat)
{
    double tmin = tab->rows[0].time_us, smax = tab->rows[tab->nrows - 1].bytes;
    int i;
    *nlat = 0;
    *bw_lo = tab->nrows;
    for (i = 0; i < tab->nrows; i++)
        if (tab->rows[i].time_us < tmin)
            tmin = tab->rows[i].time_us;
    for (i = 0; i < tab->nrows; i++) {
        if (tab->rows[i].time_us <= 1.2 * tmin)
            lat[(*nlat)++] = i;
        if (tab->rows[i].bytes >= smax / 64 && i < *bw_lo)
            *bw_lo = i;
    }
    return *nlat > 0 && tab->nrows - *bw_lo >= 1;
}

/* The model's lines on t (*l), and the slope the model's protocol gives
 * each latency row, per unit of the fitted beta (*slope, the caller's to
 * free): LL's rows carry twice the bytes. */
static int model_slopes(const cp_topo *t, const cp_nccl_table *tab, cp_coll_op op,
                        cp_coll_alg alg, const int *lat, int nlat, line *l, double **slope,
                        cp_err *e)
{
    cp_coll model;
    int i, rc = model_line(t, tab->gpus_per_thread, op, alg, l, &model, e);
    if (rc)
        return rc;
    *slope = malloc((size_t)nlat * sizeof **slope);
    if (!*slope) {
        cp_coll_free(&model);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < nlat; i++) {
        cp_proto p;
        cp_coll_time_proto_us(&model, op, alg, tab->rows[lat[i]].bytes, &p);
        (*slope)[i] = p == CP_PROTO_LL ? 1 / CP_LL_EFF : 1;
    }
    cp_coll_free(&model);
    return CP_OK;
}

/* Simple's intercept is LL's plus steps x simple_us of the slowest kind
 * in use (eq. C11): what is left of the fitted intercept Afit_s, per step,
 * once LL's intercept has moved by c x d; into lk->simple_us. */
static int fit_simple(const cp_topo *t, const line *l, double Afit_s, double c, double d,
                      cp_fit *f, cp_calib_kind *lk, cp_err *e)
{
    double simple = l->steps > 0 ? (Afit_s - (l->A_ll + c * d)) / l->steps : 0, other = 0;
    int k;
    for (k = 0; k < CP_LINK_KINDS; k++)
        if (k != (int)f->lat_kind && t->calib.kind[k].simple_us > other)
            other = t->calib.kind[k].simple_us;
    f->simple_clamped = simple < 0;
    if (f->simple_clamped)
        simple = 0;
    f->simple_below_other = simple < other;
    lk->simple_us = simple;
    if (!(lk->simple_us <= CP_MAX_STEP_US))
        return cp_fail(e, CP_EINPUT, "the table's large sizes need %.3g us per Simple step "
                                     "over %s links (over %g): is it from this machine?",
                       lk->simple_us, cp_link_kind_name(f->lat_kind), CP_MAX_STEP_US);
    return CP_OK;
}

/* One round: measure the model's lines and sensitivity, fit, update t->calib. */
static int round_fit(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, cp_coll_alg alg,
                     const int *lat, int nlat, int bw_lo, cp_fit *f, cp_err *e)
{
    line l, l2;
    double Afit_s = 0, Afit_ll, bfit = 0, c, d, *slope;
    cp_link_kind bk;
    int gpt = tab->gpus_per_thread, rc, i;
    cp_calib_kind *lk;
    cp_coll model;

    if ((rc = model_slopes(t, tab, op, alg, lat, nlat, &l, &slope, e)))
        return rc;
    /* A measurement across hosts calibrates the network; one inside a host
     * calibrates whatever binds there. */
    f->bw_kind = t->nhosts > 1 ? CP_NET : l.bind_kind;
    f->lat_kind = f->bw_kind;
    bk = f->bw_kind;
    lk = &t->calib.kind[f->lat_kind];
    lk->step_us += 1.0;
    rc = model_line(t, gpt, op, alg, &l2, &model, e);
    lk->step_us -= 1.0;
    if (rc) {
        free(slope);
        return rc;
    }
    cp_coll_free(&model);
    c = l2.A_ll - l.A_ll; /* us of LL intercept per us of step */
    /* two sizes or more fit Simple's line; one fits its slope through the
     * model's intercept, and simple_us stays as it was */
    f->simple_fitted = fit_line(tab, bw_lo, tab->nrows, &Afit_s, &bfit);
    if (!f->simple_fitted)
        bfit = fit_slope(tab, bw_lo, tab->nrows, l.A_s);
    if (!(bfit > 0) || !(c > 0)) {
        free(slope);
        return cp_fail(e, CP_EINPUT, "the table cannot be fitted: time does not grow with "
                                     "size, or the model has no steps over %s links",
                       cp_link_kind_name(f->lat_kind));
    }
    for (i = 0; i < nlat; i++)
        slope[i] *= bfit;
    Afit_ll = fit_A(tab, lat, nlat, slope);
    free(slope);
    t->calib.kind[bk].bw_eff *= l.beta / bfit;
    f->bw_clamped = t->calib.kind[bk].bw_eff > 1;
    if (f->bw_clamped)
        t->calib.kind[bk].bw_eff = 1;
    /* The loader refuses what lies outside these bounds; refusing here keeps
     * calibrate -o from writing a topology nothing can read. */
    if (!(t->calib.kind[bk].bw_eff >= CP_MIN_BW_EFF))
        return cp_fail(e, CP_EINPUT, "the table's large sizes run at %.3g of the %s links' "
                                     "nominal bandwidth (under %g): is it from this machine?",
                       t->calib.kind[bk].bw_eff, cp_link_kind_name(bk), CP_MIN_BW_EFF);
    d = (Afit_ll - l.A_ll) / c;
    f->step_clamped = lk->step_us + d < 0;
    if (f->step_clamped)
        d = -lk->step_us;
    lk->step_us += d;
    if (!(lk->step_us <= CP_MAX_STEP_US))
        return cp_fail(e, CP_EINPUT, "the table's small sizes need %.3g us per step over %s "
                                     "links (over %g): is it from this machine?",
                       lk->step_us, cp_link_kind_name(f->lat_kind), CP_MAX_STEP_US);
    return f->simple_fitted ? fit_simple(t, &l, Afit_s, c, d, f, lk, e) : CP_OK;
}

/* ------------------------------------------------------------------------ */
/* The refinement: the whole model against every row from CP_FIT_MIN_BYTES    */

/* Parameters, in the order of the search vector. */
enum { P_BW, P_STEP, P_SIMPLE, P_LAUNCH, P_LL, NPAR };

/* The model built at the start point and how each phase of op/alg moves
 * with the parameters (measured by rebuilding with each one nudged): the
 * refinement patches a shallow copy instead of rebuilding, so a search of
 * thousands of evaluations costs four builds. */
typedef struct refit {
    const cp_nccl_table *tab;
    cp_coll_op op;
    cp_coll_alg alg;
    cp_link_kind kind;      /* the kind whose numbers are fitted */
    int gpt, lo;            /* GPUs per thread; first row weighed */
    int use[NPAR];          /* 1: fitted, 0: held at p0 */
    double p0[NPAR];
    cp_coll base, work;     /* base owned; work a shallow copy, patched */
    double dlat[3], dsimple[3], ebw[3]; /* per phase: us per us of step and of
                                         * simple_us; exponent of bw in bw_eff */
    cp_calib_kind net;      /* the network's calibration, patched */
    double *err;            /* [nrows] scratch */
} refit;

/* The search vector to parameters: positive by absolute value, efficiencies
 * at most 1. */
static void to_params(const refit *r, const double *y, double *x)
{
    int k, j = 0;
    for (k = 0; k < NPAR; k++) {
        x[k] = r->use[k] ? fabs(y[j++]) : r->p0[k];
        if ((k == P_BW || k == P_LL) && x[k] > 1)
            x[k] = 1;
    }
}

/* Patch work to parameters x. */
static void patch(refit *r, const double *x)
{
    const cp_alg_cost *b = &r->base.cost[r->op][r->alg];
    cp_alg_cost *a = &r->work.cost[r->op][r->alg];
    int k;
    r->net.bw_eff = r->kind == CP_NET ? x[P_BW] : r->net.bw_eff;
    r->net.ll_eff = r->use[P_LL] ? x[P_LL] : r->net.ll_eff;
    for (k = 0; k < a->nphases && k < 3; k++) {
        a->phase[k].lat_us = b->phase[k].lat_us + r->dlat[k] * (x[P_STEP] - r->p0[P_STEP]);
        a->phase[k].simple_us =
            b->phase[k].simple_us + r->dsimple[k] * (x[P_SIMPLE] - r->p0[P_SIMPLE]);
        a->phase[k].bw_gbs = b->phase[k].bw_gbs * pow(x[P_BW] / r->p0[P_BW], r->ebw[k]);
        cp_coll_phase_ll(&a->phase[k], &r->net);
    }
    r->work.launch_us = x[P_LAUNCH];
    r->work.issue_us = x[P_LAUNCH] * (r->gpt > 0 ? r->gpt : 1);
}

/* |relative error| of every weighed row at parameters x into err (n rows);
 * returns n. */
static int row_errors(refit *r, const double *x, double *err)
{
    int i, n = 0;
    patch(r, x);
    for (i = r->lo; i < r->tab->nrows; i++) {
        double p = cp_coll_time_proto_us(&r->work, r->op, r->alg, r->tab->rows[i].bytes, NULL);
        err[n++] = fabs(p / r->tab->rows[i].time_us - 1);
    }
    return n;
}

/* The objective: the largest relative error plus the root mean square. */
static double objective(refit *r, const double *y)
{
    double x[NPAR], worst = 0, sq = 0;
    int i, n;
    to_params(r, y, x);
    n = row_errors(r, x, r->err);
    for (i = 0; i < n; i++) {
        worst = r->err[i] > worst ? r->err[i] : worst;
        sq += r->err[i] * r->err[i];
    }
    return n > 0 ? worst + sqrt(sq / n) : 0;
}

/* Nelder-Mead on the objective from y (n values), each axis first moved by
 * step[k]; the best point back into y.  Textbook coefficients: reflect 1,
 * expand 2, contract 1/2, shrink 1/2. */
static void nelder_mead(refit *r, double *y, const double *step, int n, int iters)
{
    double pt[NPAR + 1][NPAR] = {{0}}, val[NPAR + 1] = {0}, c[NPAR] = {0}, xr[NPAR] = {0},
           xt[NPAR] = {0};
    int i, j, k, it;
    if (n < 1 || n > NPAR)
        return;
    for (i = 0; i <= n; i++) {
        memcpy(pt[i], y, (size_t)n * sizeof *y);
        if (i > 0)
            pt[i][i - 1] += step[i - 1];
        val[i] = objective(r, pt[i]);
    }
    for (it = 0; it < iters; it++) {
        double fr, ft;
        for (i = 1; i <= n; i++) /* sort by value, best first */
            for (j = i; j > 0 && val[j] < val[j - 1]; j--) {
                double v = val[j];
                val[j] = val[j - 1];
                val[j - 1] = v;
                memcpy(xt, pt[j], sizeof xt);
                memcpy(pt[j], pt[j - 1], sizeof xt);
                memcpy(pt[j - 1], xt, sizeof xt);
            }
        if (val[n] - val[0] < 1e-15)
            break;
        for (k = 0; k < n; k++) {
            c[k] = 0;
            for (i = 0; i < n; i++)
                c[k] += pt[i][k] / n;
            xr[k] = 2 * c[k] - pt[n][k];
        }
        fr = objective(r, xr);
        if (fr < val[0]) {
            for (k = 0; k < n; k++)
                xt[k] = 3 * c[k] - 2 * pt[n][k];
            ft = objective(r, xt);
            memcpy(pt[n], ft < fr ? xt : xr, sizeof xt);
            val[n] = ft < fr ? ft : fr;
            continue;
        }
        if (fr < val[n - 1]) {
            memcpy(pt[n], xr, sizeof xr);
            val[n] = fr;
            continue;
        }
        for (k = 0; k < n; k++)
            xt[k] = (c[k] + (fr < val[n] ? xr[k] : pt[n][k])) / 2;
        ft = objective(r, xt);
        if (ft < (fr < val[n] ? fr : val[n])) {
            memcpy(pt[n], xt, sizeof xt);
            val[n] = ft;
            continue;
        }
        for (i = 1; i <= n; i++) {
            for (k = 0; k < n; k++)
                pt[i][k] = (pt[i][k] + pt[0][k]) / 2;
            val[i] = objective(r, pt[i]);
        }
    }
    for (i = 1, k = 0; i <= n; i++)
        k = val[i] < val[k] ? i : k;
    memcpy(y, pt[k], (size_t)n * sizeof *y);
}

/* The calibration's current numbers as parameters. */
static void read_params(const cp_topo *t, cp_link_kind kind, double *x)
{
    x[P_BW] = t->calib.kind[kind].bw_eff;
    x[P_STEP] = t->calib.kind[kind].step_us;
    x[P_SIMPLE] = t->calib.kind[kind].simple_us;
    x[P_LAUNCH] = t->calib.launch_us;
    x[P_LL] = t->calib.kind[CP_NET].ll_eff > 0 ? t->calib.kind[CP_NET].ll_eff
                                               : CP_LL_EFF * t->calib.kind[CP_NET].bw_eff;
}

static void write_params(cp_topo *t, const refit *r, const double *x)
{
    t->calib.kind[r->kind].bw_eff = x[P_BW];
    t->calib.kind[r->kind].step_us = x[P_STEP];
    t->calib.kind[r->kind].simple_us = x[P_SIMPLE];
    t->calib.launch_us = x[P_LAUNCH];
    if (r->use[P_LL])
        t->calib.kind[CP_NET].ll_eff = x[P_LL];
}

/* The model at the calibration of t, no LL128 (as the fit), into *c. */
static int build_fit_model(const cp_topo *t, int gpt, cp_coll *c, cp_err *e)
{
    int rc = cp_coll_build(t, gpt, c, e);
    if (rc == CP_OK)
        c->no_ll128 = 1;
    return rc;
}

/* Measure how each phase moves: rebuild with step_us + 1, simple_us + 1
 * and bw_eff x 0.9. */
static int sensitivities(cp_topo *t, refit *r, cp_err *e)
{
    cp_calib_kind *k = &t->calib.kind[r->kind], keep = *k;
    cp_coll m;
    int which, ph, rc = CP_OK;
    for (which = 0; which < 3 && rc == CP_OK; which++) {
        if (which == 0)
            k->step_us += 1;
        else if (which == 1)
            k->simple_us += 1;
        else
            k->bw_eff *= 0.9;
        rc = build_fit_model(t, r->gpt, &m, e);
        *k = keep;
        if (rc)
            break;
        for (ph = 0; ph < r->base.cost[r->op][r->alg].nphases && ph < 3; ph++) {
            const cp_phase *a = &r->base.cost[r->op][r->alg].phase[ph];
            const cp_phase *b = &m.cost[r->op][r->alg].phase[ph];
            if (which == 0)
                r->dlat[ph] = b->lat_us - a->lat_us;
            else if (which == 1)
                r->dsimple[ph] = b->simple_us - a->simple_us;
            else
                r->ebw[ph] = a->bw_gbs > 0 ? log(b->bw_gbs / a->bw_gbs) / log(0.9) : 0;
        }
        cp_coll_free(&m);
    }
    return rc;
}

/* One pass: build at t's calibration, measure, search, write back. */
static int refine_pass(cp_topo *t, refit *r, cp_err *e)
{
    double y[NPAR], step[NPAR], x[NPAR];
    int k, n = 0, rc, rep;
    read_params(t, r->kind, r->p0);
    if (r->p0[P_BW] <= 0)
        return CP_OK;
    r->net = t->calib.kind[CP_NET];
    if ((rc = build_fit_model(t, r->gpt, &r->base, e)))
        return rc;
    if ((rc = sensitivities(t, r, e))) {
        cp_coll_free(&r->base);
        return rc;
    }
    r->work = r->base;
    /* LL's intercept and Simple's differ by simple_us only where both
     * protocols run: with one alone the two step costs trade off freely, and
     * simple_us stays where the line fits put it */
    {
        int i, nll = 0, ns = 0;
        for (i = r->lo; i < r->tab->nrows; i++) {
            cp_proto p;
            cp_coll_time_proto_us(&r->base, r->op, r->alg, r->tab->rows[i].bytes, &p);
            nll += p == CP_PROTO_LL;
            ns += p != CP_PROTO_LL;
        }
        if (!nll || !ns)
            r->use[P_SIMPLE] = 0;
    }
    for (k = 0; k < NPAR; k++)
        if (r->use[k]) {
            y[n] = r->p0[k];
            step[n++] = r->p0[k] > 0 ? 0.1 * r->p0[k] : 1;
        }
    /* restarts from the best point with a fresh simplex: Nelder-Mead stalls
     * on the kinks of a largest-error objective */
    for (rep = 0; rep < 10; rep++) {
        nelder_mead(r, y, step, n, 1000);
        for (k = 0; k < n; k++)
            step[k] = fabs(y[k]) > 0 ? 0.02 * fabs(y[k]) : 0.01;
    }
    to_params(r, y, x);
    write_params(t, r, x);
    cp_coll_free(&r->base);
    return CP_OK;
}

/* The refinement (docs/calibration.md, "Method"): two passes, each from
 * the model rebuilt at the last one's numbers. */
static int refine(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, cp_fit *f, cp_err *e)
{
    refit r;
    int i, pass, rc = CP_OK, big = 0;
    double x[NPAR];
    memset(&r, 0, sizeof r);
    r.tab = tab;
    r.op = op;
    r.alg = f->alg;
    r.kind = f->bw_kind;
    r.gpt = tab->gpus_per_thread;
    for (i = 0; i < tab->nrows; i++)
        big += tab->rows[i].bytes >= CP_FIT_MIN_BYTES;
    r.lo = big >= 4 ? tab->nrows - big : 0;
    r.use[P_BW] = r.use[P_STEP] = 1;
    r.use[P_SIMPLE] = f->simple_fitted;
    r.use[P_LAUNCH] = f->fit_launch = r.gpt > 1;
    r.use[P_LL] = f->fit_ll = r.kind == CP_NET;
    r.err = malloc((size_t)tab->nrows * sizeof *r.err);
    if (!r.err)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    read_params(t, r.kind, x);
    f->launch_before = x[P_LAUNCH];
    f->ll_before = t->calib.kind[CP_NET].ll_eff;
    for (pass = 0; pass < 2 && rc == CP_OK; pass++)
        rc = refine_pass(t, &r, e);
    f->launch_after = t->calib.launch_us;
    f->ll_after = t->calib.kind[CP_NET].ll_eff;
    f->nfit_rows = tab->nrows - r.lo;
    free(r.err);
    return rc;
}

int cp_calibrate(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, int alg, cp_fit *f,
                 cp_err *e)
{
    return cp_calibrate_progress(t, tab, op, alg, f, NULL, e);
}

/* Steps told to the progress callback: 3 fitting rounds, then the rows. */
#define CALIB_ROUNDS 3

int cp_calibrate_progress(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, int alg,
                          cp_fit *f, const cp_progress *progress, cp_err *e)
{
    int *lat = malloc((size_t)tab->nrows * sizeof *lat), nlat, bw_lo, round, i, rc = CP_OK;
    cp_coll c;
    memset(f, 0, sizeof *f);
    f->alg = alg < 0 ? CP_ALG_RING : (cp_coll_alg)alg;
    if (!lat)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (!pick_rows(tab, &bw_lo, lat, &nlat)) {
        free(lat);
        return cp_fail(e, CP_EINPUT, "the table needs small sizes (latency) and large ones "
                                     "(bandwidth) to fit both");
    }
    f->nlat_rows = nlat;
    f->nbw_rows = tab->nrows - bw_lo;
    for (round = 0; round < CALIB_ROUNDS && rc == CP_OK; round++) {
        cp_calib before = t->calib;
        rc = round_fit(t, tab, op, f->alg, lat, nlat, bw_lo, f, e);
        cp_progress_report(progress, round + 1, CALIB_ROUNDS + 1);
        if (round == 0 && rc == CP_OK) {
            f->bw_eff_before = before.kind[f->bw_kind].bw_eff;
            f->step_before = before.kind[f->lat_kind].step_us;
            f->simple_before = before.kind[f->lat_kind].simple_us;
        }
    }
    free(lat);
    if (rc == CP_OK)
        rc = refine(t, tab, op, f, e);
    if (rc == CP_OK && !(t->calib.kind[f->bw_kind].bw_eff >= CP_MIN_BW_EFF))
        rc = cp_fail(e, CP_EINPUT, "the table runs at %.3g of the %s links' nominal bandwidth "
                                   "(under %g): is it from this machine?",
                     t->calib.kind[f->bw_kind].bw_eff, cp_link_kind_name(f->bw_kind),
                     CP_MIN_BW_EFF);
    if (rc == CP_OK && !(t->calib.kind[f->lat_kind].step_us <= CP_MAX_STEP_US &&
                         t->calib.kind[f->lat_kind].simple_us <= CP_MAX_STEP_US))
        rc = cp_fail(e, CP_EINPUT, "the table needs over %g us per step over %s links: is it "
                                   "from this machine?", CP_MAX_STEP_US,
                     cp_link_kind_name(f->lat_kind));
    if (rc)
        return rc;
    f->bw_eff_after = t->calib.kind[f->bw_kind].bw_eff;
    f->step_after = t->calib.kind[f->lat_kind].step_us;
    f->simple_after = t->calib.kind[f->lat_kind].simple_us;
    t->calib.given = 1;
    rc = cp_coll_build(t, tab->gpus_per_thread, &c, e);
    if (rc)
        return rc;
    c.no_ll128 = 1; /* as the fit */
    f->pred_us = malloc((size_t)tab->nrows * sizeof *f->pred_us);
    f->proto = malloc((size_t)tab->nrows * sizeof *f->proto);
    if (!f->pred_us || !f->proto) {
        cp_coll_free(&c);
        cp_fit_free(f);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    {
        double *err = malloc((size_t)tab->nrows * sizeof *err);
        int n = 0, j, lo = tab->nrows - f->nfit_rows;
        if (!err) {
            cp_coll_free(&c);
            cp_fit_free(f);
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
        for (i = 0; i < tab->nrows; i++) {
            f->pred_us[i] = cp_coll_time_proto_us(&c, op, f->alg, tab->rows[i].bytes,
                                                  &f->proto[i]);
            if (i >= lo)
                err[n++] = fabs(f->pred_us[i] / tab->rows[i].time_us - 1);
        }
        for (i = 1; i < n; i++) /* insertion sort: at most CP_NCCL_MAX_ROWS */
            for (j = i; j > 0 && err[j] < err[j - 1]; j--) {
                double x = err[j];
                err[j] = err[j - 1];
                err[j - 1] = x;
            }
        f->max_err = n > 0 ? err[n - 1] : 0;
        f->median_err = n == 0 ? 0 : n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
        free(err);
    }
    cp_coll_free(&c);
    cp_progress_report(progress, CALIB_ROUNDS + 1, CALIB_ROUNDS + 1);
    return CP_OK;
}
