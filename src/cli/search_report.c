/*
 * search_report.c - the rows, prices and chart of `search --csv` (see
 * search_report.h; docs/pool.md, "Where a pool pays").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/search_report.h"
#include "out/svg.h"

void cli_fabric_costs(const cp_topo *t, int hosts, double *net_usd, double *pool_usd)
{
    int nics = 0, devs = 0, i;
    double nports, leaves, spines, lanes, ports = 0;
    for (i = 0; i < t->nnodes; i++) {
        if (t->nodes[i].kind == CP_NIC && t->nodes[i].host >= 0)
            nics++;
        if (t->nodes[i].kind == CP_MEMDEV && t->nodes[i].host < 0)
            devs++;
    }
    for (i = 0; i < t->nlinks; i++) { /* a host's port: a host node to a CXL switch, */
        const cp_node *a = &t->nodes[t->links[i].a], *b = &t->nodes[t->links[i].b];
        if ((a->kind == CP_CXL_SWITCH) != (b->kind == CP_CXL_SWITCH) &&  /* as many x16 */
            a->kind != CP_MEMDEV && b->kind != CP_MEMDEV)                /* adapters as */
            ports += ceil(t->links[i].gbs[0] / CP_GBS_CXL_ADAPTER - 1e-9); /* its rate needs */
    }
    nports = (double)nics * hosts;
    leaves = nports > 64 ? ceil(nports / 32) : (nports > 0 ? 1 : 0);
    spines = leaves > 1 ? ceil(leaves * 32 / 64) : 0;
    *net_usd = nports * CP_USD_NIC + (leaves + spines) * CP_USD_IB_SWITCH;
    lanes = ports * hosts * 16 + (double)devs * 8;
    *pool_usd = ports > 0 ? ports * hosts * CP_USD_CXL_ADAPTER +
                            ceil(lanes / 256) * CP_USD_CXL_SWITCH
                      : 0;
}

double cli_nic_gbs(const cp_topo *t)
{
    int i;
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_NIC)
            return t->nodes[i].net_gbs;
    return 0;
}

void cli_report_header(FILE *f)
{
    fprintf(f, "model,topology,hosts,gpus,gbs,seq,precision,nic_gbs,without_pool_ms,"
               "without_pool_layout,with_pool_ms,with_pool_layout,saving_ms,saving_pct,"
               "relaxed,network_usd,pool_usd,why\n");
}

/* "tp4 cp1 dp16 pp8 vp12 mbs1 recompute:none offload:-/-". */
static void layout_str(const cp_search_hit *h, char *buf, size_t cap)
{
    if (!h) {
        snprintf(buf, cap, "none fits");
        return;
    }
    snprintf(buf, cap, "tp%d cp%d dp%d pp%d vp%d mbs%d zero%d recompute:%s offload:%s/%s "
             "dp:%s%s%s", h->l.tp, h->l.cp, h->l.dp, h->l.pp, h->l.vp, h->l.mbs, h->l.zero,
             cp_recompute_name(h->r.recompute),
             h->l.offload_opt ? cp_tier_name((cp_tier)h->l.offload_opt) : "-",
             h->l.offload_act ? cp_tier_name((cp_tier)h->l.offload_act) : "-",
             h->r.dp_alg ? h->r.dp_alg : "-", h->r.dp_expert_alg ? " edp:" : "",
             h->r.dp_expert_alg ? h->r.dp_expert_alg : "");
}

void cli_report_row_csv(FILE *f, const cli_report_row *r)
{
    char a[160], b[160];
    double wo = r->without ? r->without->r.iteration_ms : -1;
    double wi = r->with ? r->with->r.iteration_ms : -1;
    layout_str(r->without, a, sizeof a);
    layout_str(r->with, b, sizeof b);
    fprintf(f, "%s,%s,%d,%d,%d,%lld,%s,%g,", r->model, r->topo, r->hosts, r->gpus, r->gbs,
            r->seq, r->precision, r->nic_gbs);
    if (wo >= 0)
        fprintf(f, "%.3f,", wo);
    else
        fprintf(f, ",");
    fprintf(f, "%s,", a);
    if (wi >= 0)
        fprintf(f, "%.3f,", wi);
    else
        fprintf(f, ",");
    fprintf(f, "%s,", b);
    if (wo >= 0 && wi >= 0)
        fprintf(f, "%.3f,%.3f,", wo - wi, 100 * (wo - wi) / wo);
    else
        fprintf(f, ",,");
    fprintf(f, "%s,%.0f,%.0f,\"%s\"\n", r->relaxed, r->net_usd, r->pool_usd, r->why);
}

/* A chart series: the machine, and the NIC rate when a what-if set it. */
static void series_name(const cli_report_row *r, char *buf, size_t cap)
{
    if (r->nic_whatif)
        snprintf(buf, cap, "%s, NICs at %g GB/s", r->topo, r->nic_gbs);
    else
        snprintf(buf, cap, "%s", r->topo);
}

int cli_report_svg(FILE *f, const cli_report_row *rows, int n)
{
    /* categories: model @ hosts; series: each machine (and what-if NIC rate)
     * in the order seen */
    const char *cats[64], *sers[8];
    static char catbuf[64][96], serbuf[8][96];
    double *val;
    int nc = 0, ns = 0, i, j, rc;
    cp_bars c;
    for (i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s @ %d", rows[i].model, rows[i].hosts);
        for (j = 0; j < nc && strcmp(cats[j], name) != 0; j++)
            ;
        if (j == nc && nc < 64) {
            snprintf(catbuf[nc], sizeof catbuf[nc], "%s", name);
            cats[nc] = catbuf[nc];
            nc++;
        }
        series_name(&rows[i], name, sizeof name);
        for (j = 0; j < ns && strcmp(sers[j], name) != 0; j++)
            ;
        if (j == ns && ns < 8) {
            snprintf(serbuf[ns], sizeof serbuf[ns], "%s", name);
            sers[ns] = serbuf[ns];
            ns++;
        }
    }
    if (!(val = malloc(((size_t)nc * ns + 1) * sizeof *val)))
        return -1;
    for (i = 0; i < nc * ns; i++)
        val[i] = -1;
    for (i = 0; i < n; i++) {
        char name[96];
        int ci, si;
        snprintf(name, sizeof name, "%s @ %d", rows[i].model, rows[i].hosts);
        for (ci = 0; ci < nc && strcmp(cats[ci], name) != 0; ci++)
            ;
        series_name(&rows[i], name, sizeof name);
        for (si = 0; si < ns && strcmp(sers[si], name) != 0; si++)
            ;
        if (ci < nc && si < ns && rows[i].without && rows[i].with)
            val[ci * ns + si] = 100 * (rows[i].without->r.iteration_ms -
                                       rows[i].with->r.iteration_ms) /
                                rows[i].without->r.iteration_ms;
    }
    memset(&c, 0, sizeof c);
    c.title = "Where a CXL pool pays: iteration time saved by the pool, best layout with it "
              "against best without (coarse-plan search)";
    c.ylabel = "time saved by the pool (%)";
    c.note = "no bar: the pool saves nothing there (the same layout is fastest with and without it)";
    c.ncat = nc;
    c.cat = cats;
    c.nser = ns;
    c.ser = sers;
    c.val = val;
    rc = cp_svg_bars(&c, f);
    free(val);
    return rc;
}
