/*
 * calibrate.c - least-squares fit of bw_eff and step_us (see calibrate.h).
 *
 * The model at a size S is T(S) = A + beta S (collective.h).  Scaling the
 * binding kind's bw_eff by k divides beta by k, as long as the same links
 * bind; raising that kind's step_us by d adds c d to A, where c counts the
 * algorithm's steps over such links.  Both are measured by rebuilding the
 * model, so the fit needs no knowledge of the algorithm's formulas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/calibrate.h"

void cp_fit_free(cp_fit *f)
{
    free(f->pred_us);
    memset(f, 0, sizeof *f);
}

/* A (intercept, us) and beta (us per byte) of the model for op/alg. */
static int model_line(const cp_topo *t, int gpt, cp_coll_op op, cp_coll_alg alg, double *A,
                      double *beta, cp_link_kind *bind_kind, cp_err *e)
{
    cp_coll c;
    int rc = cp_coll_build(t, gpt, &c, e);
    if (rc)
        return rc;
    if (!c.cost[op][alg].available) {
        rc = cp_fail(e, CP_EINPUT, "%s is not available for %s on %s: %s",
                     cp_coll_alg_name(alg), cp_coll_op_name(op), t->name,
                     c.cost[op][alg].why_not);
    } else {
        const cp_alg_cost *a = &c.cost[op][alg];
        int k, best = 0;
        *A = cp_coll_time_us(&c, op, alg, 0);
        *beta = (cp_coll_time_us(&c, op, alg, 1e9) - *A) / 1e9;
        /* the phase that dominates the bandwidth term names the kind */
        for (k = 1; k < a->nphases; k++)
            if (a->phase[k].factor / a->phase[k].bw_gbs >
                a->phase[best].factor / a->phase[best].bw_gbs)
                best = k;
        *bind_kind = a->phase[best].nbind > 0
                         ? cp_coll_arcs(&c)->links[a->phase[best].bind_arc[0] >> 1].kind
                         : CP_NVLINK;
    }
    cp_coll_free(&c);
    return rc;
}

/* beta minimising sum ((A + beta S - T) / T)^2 over rows [lo, hi). */
static double fit_beta(const cp_nccl_table *tab, int lo, int hi, double A)
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

/* A minimising the same over the latency rows, given beta. */
static double fit_A(const cp_nccl_table *tab, const int *rows, int n, double beta)
{
    double num = 0, den = 0;
    int i;
    for (i = 0; i < n; i++) {
        const cp_nccl_row *r = &tab->rows[rows[i]];
        num += (r->time_us - beta * r->bytes) / (r->time_us * r->time_us);
        den += 1 / (r->time_us * r->time_us);
    }
    return den > 0 ? num / den : 0;
}

/* Rows for each fit: bandwidth = the top four octaves of sizes; latency =
 * times within 20% of the smallest time. */
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
        if (tab->rows[i].bytes >= smax / 16 && i < *bw_lo)
            *bw_lo = i;
    }
    return *nlat > 0 && *bw_lo < tab->nrows;
}

/* One round: measure the model's sensitivities, fit, update t->calib. */
static int round_fit(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, cp_coll_alg alg,
                     const int *lat, int nlat, int bw_lo, cp_fit *f, cp_err *e)
{
    double A, beta, A2, beta2, Afit, bfit, c;
    cp_link_kind bk, dummy;
    int gpt = tab->gpus_per_thread, rc;
    cp_calib_kind *lk;

    if ((rc = model_line(t, gpt, op, alg, &A, &beta, &bk, e)))
        return rc;
    /* A measurement across hosts calibrates the network; one inside a host
     * calibrates whatever binds there. */
    f->bw_kind = t->nhosts > 1 ? CP_NET : bk;
    f->lat_kind = f->bw_kind;
    bk = f->bw_kind;
    lk = &t->calib.kind[f->lat_kind];
    lk->step_us += 1.0;
    rc = model_line(t, gpt, op, alg, &A2, &beta2, &dummy, e);
    lk->step_us -= 1.0;
    if (rc)
        return rc;
    c = A2 - A; /* us of intercept per us of step */
    bfit = fit_beta(tab, bw_lo, tab->nrows, A);
    Afit = fit_A(tab, lat, nlat, bfit);
    bfit = fit_beta(tab, bw_lo, tab->nrows, Afit);
    if (!(bfit > 0) || !(c > 0))
        return cp_fail(e, CP_EINPUT, "the table cannot be fitted: time does not grow with "
                                     "size, or the model has no steps over %s links",
                       cp_link_kind_name(f->lat_kind));
    t->calib.kind[bk].bw_eff *= beta / bfit;
    f->bw_clamped = t->calib.kind[bk].bw_eff > 1;
    if (f->bw_clamped)
        t->calib.kind[bk].bw_eff = 1;
    /* The loader refuses what lies outside these bounds; refusing here keeps
     * calibrate -o from writing a topology nothing can read. */
    if (!(t->calib.kind[bk].bw_eff >= CP_MIN_BW_EFF))
        return cp_fail(e, CP_EINPUT, "the table's large sizes run at %.3g of the %s links' "
                                     "nominal bandwidth (under %g): is it from this machine?",
                       t->calib.kind[bk].bw_eff, cp_link_kind_name(bk), CP_MIN_BW_EFF);
    lk->step_us += (Afit - A) / c;
    f->step_clamped = lk->step_us < 0;
    if (f->step_clamped)
        lk->step_us = 0;
    if (!(lk->step_us <= CP_MAX_STEP_US))
        return cp_fail(e, CP_EINPUT, "the table's small sizes need %.3g us per step over %s "
                                     "links (over %g): is it from this machine?",
                       lk->step_us, cp_link_kind_name(f->lat_kind), CP_MAX_STEP_US);
    return CP_OK;
}

int cp_calibrate(cp_topo *t, const cp_nccl_table *tab, cp_coll_op op, int alg, cp_fit *f,
                 cp_err *e)
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
    for (round = 0; round < 3 && rc == CP_OK; round++) {
        cp_calib before = t->calib;
        rc = round_fit(t, tab, op, f->alg, lat, nlat, bw_lo, f, e);
        if (round == 0 && rc == CP_OK) {
            f->bw_eff_before = before.kind[f->bw_kind].bw_eff;
            f->step_before = before.kind[f->lat_kind].step_us;
        }
    }
    free(lat);
    if (rc)
        return rc;
    f->bw_eff_after = t->calib.kind[f->bw_kind].bw_eff;
    f->step_after = t->calib.kind[f->lat_kind].step_us;
    t->calib.given = 1;
    rc = cp_coll_build(t, tab->gpus_per_thread, &c, e);
    if (rc)
        return rc;
    f->pred_us = malloc((size_t)tab->nrows * sizeof *f->pred_us);
    if (!f->pred_us) {
        cp_coll_free(&c);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < tab->nrows; i++)
        f->pred_us[i] = cp_coll_time_us(&c, op, f->alg, tab->rows[i].bytes);
    cp_coll_free(&c);
    return CP_OK;
}
