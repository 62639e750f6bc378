/*
 * pack.c - pattern packing (see pack.h).
 *
 * LP:  maximise sum_p x_p  subject to  sum_p use[p][a] x_p <= cap[a]  for
 * every arc a that some pattern touches, x_p >= 0.  Rows are only made for
 * touched arcs, so the LP has (arcs in use) rows and (patterns) columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/pack.h"
#include "lp/lp.h"

void cp_pattern_free(cp_pattern *p)
{
    if (!p)
        return;
    free(p->use); /* one block holds use, arc and gpu (cp_pattern_from_res) */
    memset(p, 0, sizeof *p);
}

double cp_res_cap(const cp_topo *t, int res)
{
    if (res < 2 * t->nlinks)
        return cp_arc_cap(t, res);
    return t->nodes[res - 2 * t->nlinks].reduce_gbs;
}

int cp_pattern_from_load(const cp_topo *t, const double *load, const int *gpus, int ngpus,
                         double lat_us, cp_pattern *p)
{
    return cp_pattern_from_res(t, load, 2 * t->nlinks, gpus, ngpus, lat_us, p);
}

int cp_pattern_from_res(const cp_topo *t, const double *load, int nres, const int *gpus,
                        int ngpus, double lat_us, cp_pattern *p)
{
    int a, n = 0, narcs = nres;
    (void)t;
    memset(p, 0, sizeof *p);
    for (a = 0; a < narcs; a++)
        n += load[a] > 0;
    /* one allocation for the three arrays, the doubles first (their
     * alignment): a collective model makes thousands of patterns */
    {
        size_t nu = (size_t)(n ? n : 1), ng = (size_t)(ngpus ? ngpus : 1);
        unsigned char *block = malloc(nu * (sizeof *p->use + sizeof *p->arc) +
                                      ng * sizeof *p->gpu);
        if (!block)
            return CP_EINTERNAL;
        p->use = (void *)block;
        p->arc = (void *)(block + nu * sizeof *p->use);
        p->gpu = (void *)(block + nu * (sizeof *p->use + sizeof *p->arc));
    }
    for (a = 0; a < narcs; a++) {
        if (load[a] > 0) {
            p->arc[p->nuse] = a;
            p->use[p->nuse] = load[a];
            p->nuse++;
        }
    }
    if (ngpus)
        memcpy(p->gpu, gpus, (size_t)ngpus * sizeof *gpus);
    p->ngpus = ngpus;
    p->lat_us = lat_us;
    return CP_OK;
}

void cp_packing_free(cp_packing *pk)
{
    if (!pk)
        return;
    free(pk->rate);
    free(pk->bind_arc);
    free(pk->bind_dual);
    memset(pk, 0, sizeof *pk);
}

/* One pattern: its rate is the tightest cap/use; the binding arcs are the
 * ones that attain it (dual 1/use: one more GB/s there buys 1/use). */
static int pack_one(const cp_topo *t, const cp_pattern *p, cp_packing *out)
{
    int k;
    double best = -1;
    for (k = 0; k < p->nuse; k++) {
        double r = cp_res_cap(t, p->arc[k]) / p->use[k];
        if (best < 0 || r < best)
            best = r;
    }
    out->rate[0] = best > 0 ? best : 0;
    out->total = out->rate[0];
    out->bind_arc = malloc((size_t)(p->nuse ? p->nuse : 1) * sizeof *out->bind_arc);
    out->bind_dual = malloc((size_t)(p->nuse ? p->nuse : 1) * sizeof *out->bind_dual);
    if (!out->bind_arc || !out->bind_dual)
        return CP_EINTERNAL;
    for (k = 0; k < p->nuse; k++) {
        if (cp_res_cap(t, p->arc[k]) / p->use[k] <= best * (1 + 1e-9)) {
            out->bind_arc[out->nbind] = p->arc[k];
            out->bind_dual[out->nbind] = 1.0 / p->use[k];
            out->nbind++;
        }
    }
    return CP_OK;
}

/* Row index per arc (or -1), creating rows for every touched arc. */
static int build_rows(const cp_topo *t, const cp_pattern *pats, int n, cp_lp *lp, int *row_of)
{
    int i, k, narcs = CP_NRES(t);
    for (i = 0; i < narcs; i++)
        row_of[i] = -1;
    for (i = 0; i < n; i++) {
        for (k = 0; k < pats[i].nuse; k++) {
            int a = pats[i].arc[k];
            char name[64];
            if (row_of[a] >= 0)
                continue;
            if (a < 2 * t->nlinks)
                snprintf(name, sizeof name, "cap_%s_%s_%d", t->nodes[cp_arc_tail(t, a)].id,
                         t->nodes[cp_arc_head(t, a)].id, a);
            else
                snprintf(name, sizeof name, "reduce_%s", t->nodes[a - 2 * t->nlinks].id);
            row_of[a] = cp_lp_add_row(lp, name, CP_LP_LE, cp_res_cap(t, a), 0, NULL, NULL);
            if (row_of[a] < 0)
                return -1;
        }
    }
    return 0;
}

/* Binding arcs from the LP duals, sorted by decreasing dual. */
static int collect_binding(const cp_topo *t, const cp_lp *lp, const int *row_of,
                           cp_packing *out)
{
    int a, narcs = CP_NRES(t), i, j;
    out->bind_arc = malloc((size_t)(cp_lp_nrows(lp) + 1) * sizeof *out->bind_arc);
    out->bind_dual = malloc((size_t)(cp_lp_nrows(lp) + 1) * sizeof *out->bind_dual);
    if (!out->bind_arc || !out->bind_dual)
        return CP_EINTERNAL;
    out->nbind = 0;
    for (a = 0; a < narcs; a++) {
        double d;
        if (row_of[a] < 0)
            continue;
        d = cp_lp_dual(lp, row_of[a]);
        if (d > 1e-9) {
            out->bind_arc[out->nbind] = a;
            out->bind_dual[out->nbind] = d;
            out->nbind++;
        }
    }
    /* insertion sort by decreasing dual, then arc id: deterministic */
    for (i = 1; i < out->nbind; i++) {
        int ka = out->bind_arc[i];
        double kd = out->bind_dual[i];
        for (j = i - 1; j >= 0 && (out->bind_dual[j] < kd - 1e-12 ||
                                   (out->bind_dual[j] <= kd + 1e-12 && out->bind_arc[j] > ka));
             j--) {
            out->bind_arc[j + 1] = out->bind_arc[j];
            out->bind_dual[j + 1] = out->bind_dual[j];
        }
        out->bind_arc[j + 1] = ka;
        out->bind_dual[j + 1] = kd;
    }
    return CP_OK;
}

static int pack_lp(const cp_topo *t, const cp_pattern *pats, int n, cp_packing *out,
                   cp_err *e)
{
    cp_lp *lp = cp_lp_new("pack", 1);
    int *row_of = malloc((size_t)(CP_NRES(t) + 1) * sizeof *row_of);
    int i, k, rc = CP_EINTERNAL;

    if (!lp || !row_of || build_rows(t, pats, n, lp, row_of))
        goto done;
    for (i = 0; i < n; i++) {
        char name[32];
        int col;
        snprintf(name, sizeof name, "x%d", i);
        col = cp_lp_add_col(lp, name, 0, -1, 1.0);
        if (col < 0)
            goto done;
        for (k = 0; k < pats[i].nuse; k++)
            if (cp_lp_add_coef(lp, row_of[pats[i].arc[k]], col, pats[i].use[k]))
                goto done;
    }
    rc = cp_lp_solve(lp, e);
    if (rc)
        goto done;
    out->lp_iterations = cp_lp_iterations(lp);
    for (i = 0; i < n; i++) {
        double x = cp_lp_value(lp, i);
        out->rate[i] = x > 1e-9 ? x : 0;
        out->total += out->rate[i];
    }
    rc = collect_binding(t, lp, row_of, out);
done:
    if (rc == CP_EINTERNAL && !e->msg[0])
        cp_fail(e, CP_EINTERNAL, "out of memory packing %d patterns", n);
    free(row_of);
    cp_lp_free(lp);
    return rc;
}

/* Patterns with the same arc loads are interchangeable (every ring over an
 * NVSwitch board loads the same arcs): keep the first of each.  Returns the
 * distinct patterns' indices in keep[], their count as the result. */
static int distinct(const cp_pattern *pats, int n, int *keep)
{
    size_t cap = 16, i;
    int *slot, k, nk = 0;
    while (cap < (size_t)n * 2)
        cap *= 2;
    slot = malloc(cap * sizeof *slot);
    if (!slot)
        return -1;
    for (i = 0; i < cap; i++)
        slot[i] = -1;
    for (k = 0; k < n; k++) {
        const cp_pattern *p = &pats[k];
        unsigned long long h = 1469598103934665603ULL;
        int j;
        for (j = 0; j < p->nuse; j++) {
            unsigned long long bits;
            memcpy(&bits, &p->use[j], sizeof bits);
            h = (h ^ (unsigned long long)p->arc[j]) * 1099511628211ULL;
            h = (h ^ bits) * 1099511628211ULL;
        }
        for (i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            const cp_pattern *q;
            if (slot[i] < 0) {
                slot[i] = k;
                keep[nk++] = k;
                break;
            }
            q = &pats[slot[i]];
            if (q->nuse == p->nuse && memcmp(q->arc, p->arc, (size_t)p->nuse * sizeof *p->arc) == 0 &&
                memcmp(q->use, p->use, (size_t)p->nuse * sizeof *p->use) == 0)
                break; /* duplicate */
        }
    }
    free(slot);
    return nk;
}

/* Pack the distinct patterns, then spread the result back to pats order. */
static int pack_distinct(const cp_topo *t, const cp_pattern *pats, int n, cp_packing *out,
                         cp_err *e)
{
    int *keep = malloc((size_t)(n ? n : 1) * sizeof *keep), nk, k, rc;
    cp_pattern *sub;
    double *rate;
    if (!keep)
        return CP_EINTERNAL;
    nk = distinct(pats, n, keep);
    if (nk < 0) {
        free(keep);
        return CP_EINTERNAL;
    }
    if (nk == 1) {
        rc = pack_one(t, &pats[keep[0]], out);
        if (rc == CP_OK && keep[0] != 0) {
            out->rate[keep[0]] = out->rate[0];
            out->rate[0] = 0;
        }
        free(keep);
        return rc;
    }
    sub = malloc((size_t)nk * sizeof *sub);
    rate = out->rate;
    if (!sub) {
        free(keep);
        return CP_EINTERNAL;
    }
    for (k = 0; k < nk; k++)
        sub[k] = pats[keep[k]]; /* shallow: borrowed arrays */
    out->rate = calloc((size_t)nk, sizeof *out->rate);
    rc = out->rate ? pack_lp(t, sub, nk, out, e) : CP_EINTERNAL;
    if (out->rate)
        for (k = 0; k < nk; k++)
            rate[keep[k]] = out->rate[k];
    free(out->rate);
    out->rate = rate;
    out->npat = n;
    free(sub);
    free(keep);
    return rc;
}

int cp_pack(const cp_topo *t, const cp_pattern *pats, int n, cp_packing *out, cp_err *e)
{
    int rc;
    memset(out, 0, sizeof *out);
    out->npat = n;
    out->rate = calloc((size_t)(n ? n : 1), sizeof *out->rate);
    if (!out->rate)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    e->msg[0] = '\0';
    rc = n == 1 ? pack_one(t, &pats[0], out) : pack_distinct(t, pats, n, out, e);
    if (rc == CP_EINTERNAL && !e->msg[0])
        cp_fail(e, CP_EINTERNAL, "out of memory");
    if (rc == CP_OK && out->total <= 0)
        rc = cp_fail(e, CP_EINPUT, "no channel can carry data: every candidate pattern "
                                   "crosses a link of zero capacity");
    if (rc)
        cp_packing_free(out);
    return rc;
}
