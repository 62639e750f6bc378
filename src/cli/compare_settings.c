/*
 * compare_settings.c - `compare --setting` (see compare_settings.h): the
 * experiments of the paper-reproduction report side by side, each with its
 * own baseline, strategies and machines, one CSV row per model x machine x
 * strategy, and one chart of every setting's best speed-up over its
 * baseline.  Rows of planned strategies (proxy, coarse, coarse-mpi) carry
 * the planner's share of bytes per route family, so the report shows which
 * routes the speed-up came from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/compare_settings.h"
#include "core/fileio.h"
#include "load/load.h"
#include "out/svg.h"
#include "plan/plan_predict.h"
#include "plan/planner.h"

/* Cut s at every `sep` into at most max items; their count, or -1. */
static int split(char *s, const char *sep, char **items, int max)
{
    char *save = NULL, *tok;
    int n = 0;
    for (tok = strtok_r(s, sep, &save); tok; tok = strtok_r(NULL, sep, &save)) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

int cli_setting_parse(char *spec, cli_setting *s)
{
    char *part[4], *strat[CLI_SETTING_MAX + 1], *topo[CLI_SETTING_MAX + 1];
    int k, np = split(spec, ":", part, 4), ns, nt;
    memset(s, 0, sizeof *s);
    if (np != 3)
        return cli_usage("compare", "--setting: expected NAME:BASELINE,STRATEGY..:TOPO,.., "
                                    "got %d part(s)", np);
    ns = split(part[1], ",", strat, CLI_SETTING_MAX);
    nt = split(part[2], ",", topo, CLI_SETTING_MAX);
    if (ns < 2 || nt < 1)
        return cli_usage("compare", "--setting %s: needs a baseline, at least one strategy to "
                                    "compare with it, and at most %d of each and a topology",
                         part[0], CLI_SETTING_MAX);
    s->name = part[0];
    for (k = 0; k < ns; k++)
        if (cp_strategy_parse(strat[k], &s->strat[k]))
            return cli_usage("compare", "--setting %s: unknown strategy '%s'", part[0], strat[k]);
    for (k = 0; k < nt; k++)
        s->topo[k] = topo[k];
    s->ns = ns;
    s->nt = nt;
    return CP_OK;
}

/* The families with a bytes_ column: the COARSE paper's five (allreduce ..
 * ps); the CXL pool's family (CP_FAM_POOL) has none, no paper machine
 * having a pool. */
#define PAPER_FAMS (CP_FAM_PS + 1)

/* The planner's share of bytes per family for a planned strategy
 * (proxy, coarse, coarse-mpi) into share[CP_FAMS]; 0 when s is not
 * planned here, 1 when it is, or an error (negative). */
static int family_shares(const cp_predictor *pr, cp_strategy s, const cp_predict_opts *o,
                         double *share, cp_err *e)
{
    cp_plan_opts po;
    cp_plan pl;
    double total = 0;
    int f;
    if ((s != CP_S_PROXY && s != CP_S_COARSE && s != CP_S_COARSE_MPI) || pr->topo->ngpus <= 1)
        return 0;
    cp_plan_opts_default(&po);
    po.pred = *o;
    po.mode = s == CP_S_PROXY ? CP_PLAN_PROXY : CP_PLAN_COARSE;
    po.gpu_mpi = s == CP_S_COARSE_MPI;
    if (cp_plan_build(pr, &po, &pl, e) != CP_OK) {
        cp_err_clear(e); /* the prediction already said why it cannot run */
        return 0;
    }
    for (f = 0; f < CP_FAMS; f++)
        total += pl.fam_bytes[f];
    for (f = 0; f < CP_FAMS; f++)
        share[f] = total > 0 ? pl.fam_bytes[f] / total : 0;
    cp_plan_free(&pl);
    return 1;
}

/* The rows of one model on one machine of setting s; best[0] gets the
 * best speed-up (baseline / strategy iteration) of the compared strategies,
 * -1 when none ran. */
static int rows(const cli_setting *s, const cp_model *m, const cp_topo *t,
                const cp_predict_opts *o, FILE *f, double *best, cp_err *e)
{
    cp_predictor pr;
    double base_ms = -1;
    int k, q, rc = cp_predictor_init(&pr, m, t, o, e);
    *best = -1;
    if (rc)
        return rc;
    for (k = 0; k < s->ns && rc == CP_OK; k++) {
        cp_prediction p;
        double share[CP_FAMS];
        int planned;
        if ((rc = cp_predict_any(&pr, s->strat[k], o, 0, 0, &p, e)))
            break;
        fprintf(f, "%s,%s,%s,%d,%s,%s,%d,", s->name, m->name, t->name, t->ngpus,
                cp_strategy_name(s->strat[0]), cp_strategy_name(s->strat[k]), p.available);
        if (!p.available) {
            char *c;
            for (c = p.why_not; *c; c++)
                if (*c == ',' || *c == '"' || *c == '\n')
                    *c = ';'; /* one CSV record without quoting */
            fprintf(f, ",,,,,,,,,,,,%s\n", p.why_not);
            cp_prediction_free(&p);
            continue;
        }
        if (k == 0)
            base_ms = p.iteration_ms;
        else if (base_ms > 0 && base_ms / p.iteration_ms > *best)
            *best = base_ms / p.iteration_ms;
        fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f,", p.iteration_ms, p.compute_ms, p.comm_ms,
                p.exposed_ms, p.comm_ms / p.iteration_ms);
        if (base_ms > 0)
            fprintf(f, "%.2f,", 100 * (base_ms / p.iteration_ms - 1));
        else
            fputc(',', f);
        if ((planned = family_shares(&pr, s->strat[k], o, share, e)) < 0) {
            rc = CP_EINTERNAL;
            cp_prediction_free(&p);
            break;
        }
        for (q = 0; q < PAPER_FAMS; q++)
            if (planned)
                fprintf(f, "%.4f,", share[q]);
            else
                fputc(',', f);
        fprintf(f, "%s,\n", pr.compute_source);
        cp_prediction_free(&p);
    }
    cp_predictor_free(&pr);
    return rc;
}

/* The chart: the k-th machine of every setting with each model in one
 * group, a bar per setting. */
static int chart(const cli_setting *set, int nset, const char *const *cat, int ncat,
                 const double *val, const char *svg, cp_err *e)
{
    const char *ser[CLI_MAX_SETTINGS];
    cp_bars c;
    cp_outfile out;
    int k, rc;
    for (k = 0; k < nset; k++)
        ser[k] = set[k].name;
    memset(&c, 0, sizeof c);
    c.title = "best speed-up over each setting's baseline (coarse-plan compare --setting)";
    c.ylabel = "baseline iteration / best strategy's (x)";
    c.ncat = ncat;
    c.cat = cat;
    c.nser = nset;
    c.ser = ser;
    c.val = val;
    c.ref = 1.0;
    if ((rc = cp_out_open(&out, svg, e)))
        return rc;
    if (cp_svg_bars(&c, out.f)) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "writing %s failed", svg);
    }
    return cp_out_commit(&out, e);
}

/* Every setting's rows; val[(k * nm + i) * nset + j] the best speed-up of
 * model i on setting j's k-th machine; cat[] the groups' labels. */
static int all_rows(const cli_setting *set, int nset, cp_model **m, int nm, int gpus, int hosts,
                    const cp_predict_opts *po, FILE *f, char **cat, double *val, cp_err *e)
{
    int j, k, i, rc = CP_OK;
    for (j = 0; j < nset && rc == CP_OK; j++)
        for (k = 0; k < set[j].nt && rc == CP_OK; k++) {
            cp_topo *t = NULL;
            if ((rc = cp_topo_load_machine(set[j].topo[k], gpus, hosts, &t, e)))
                break;
            for (i = 0; i < nm && rc == CP_OK; i++) {
                size_t g = (size_t)k * nm + i;
                if (j == 0 || !strstr(cat[g], t->name)) { /* "model @ machine / machine" */
                    char label[600];
                    if (j == 0)
                        snprintf(label, sizeof label, "%s @ %s", m[i]->name, t->name);
                    else
                        snprintf(label, sizeof label, "%.300s / %s", cat[g], t->name);
                    free(cat[g]);
                    if (!(cat[g] = strdup(label)))
                        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
                }
                if (rc == CP_OK)
                    rc = rows(&set[j], m[i], t, po, f, &val[g * nset + j], e);
            }
            cp_topo_free(t);
        }
    return rc;
}

int cli_compare_settings(const cli_setting *set, int nset, const char *const *models, int nm,
                         int gpus, int hosts, const cp_predict_opts *po, const char *out,
                         const char *svg, cp_err *e)
{
    cp_model *m[CLI_SETTING_MAX * 4] = {0};
    cp_outfile of;
    int i, rc = CP_OK, nt = set[0].nt, ncat = nt * nm;
    char **cat = calloc((size_t)ncat + 1, sizeof *cat);
    double *val = calloc((size_t)ncat * nset + 1, sizeof *val);
    for (i = 1; i < nset; i++)
        if (set[i].nt != nt)
            rc = cp_fail(e, CP_EINPUT, "--setting %s lists %d topologies, %s %d: the chart puts "
                                       "the k-th machine of every setting side by side",
                         set[i].name, set[i].nt, set[0].name, nt);
    for (i = 0; i < nset && rc == CP_OK; i++) {
        int k;
        for (k = 0; k < set[i].nt && rc == CP_OK; k++)
            if (cp_same_file(out, set[i].topo[k]) || (svg && cp_same_file(svg, set[i].topo[k])))
                rc = cp_fail(e, CP_EINPUT, "-o or --svg would overwrite %s", set[i].topo[k]);
    }
    if (rc == CP_OK && nm > (int)(sizeof m / sizeof m[0]))
        rc = cp_fail(e, CP_EINPUT, "--setting: at most %d models", (int)(sizeof m / sizeof m[0]));
    if (rc == CP_OK && (!cat || !val))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < nm && rc == CP_OK; i++)
        rc = cp_model_load(models[i], &m[i], e);
    if (rc == CP_OK && (rc = cp_out_open(&of, out, e)) == CP_OK) {
        fprintf(of.f, "setting,model,topology,gpus,baseline,strategy,available,iteration_ms,"
                      "compute_ms,comm_ms,exposed_comm_ms,comm_share,speedup_vs_baseline_pct,"
                      "bytes_allreduce,bytes_proxy_bw,bytes_proxy_lat,bytes_proxy_ring,bytes_ps,"
                      "compute_source,note\n");
        rc = all_rows(set, nset, m, nm, gpus, hosts, po, of.f, cat, val, e);
        if (rc == CP_OK && svg)
            rc = chart(set, nset, (const char *const *)cat, ncat, val, svg, e);
        if (rc == CP_OK)
            rc = cp_out_commit(&of, e);
        else
            cp_out_abort(&of);
    }
    for (i = 0; i < nm; i++)
        cp_model_free(m[i]);
    for (i = 0; cat && i < ncat; i++)
        free(cat[i]);
    free(cat);
    free(val);
    return rc;
}
