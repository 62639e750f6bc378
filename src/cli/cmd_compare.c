/*
 * cmd_compare.c - `coarse-plan compare`: every model x topology x strategy
 * (and, optionally, memory-device figures) as one CSV row each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/compare_settings.h"
#include "core/fileio.h"
#include "core/units.h"
#include "load/load.h"
#include "out/svg.h"
#include "plan/plan_predict.h"
#include "predict/memory.h"

static const cli_usage_text usage = {
    "usage: coarse-plan compare -m MODEL,.. -t TOPO,.. -o FILE.csv [OPTIONS]\n",
    "Predict every model on every topology with every strategy and write one CSV\n"
    "row each (written atomically; \"-\" for standard output):\n"
    "  model,topology,gpus,memdev_gbs,memdev_reduce_gbs,strategy,available,\n"
    "  iteration_ms,compute_ms,comm_ms,exposed_comm_ms,speedup_vs_ring,\n"
    "  model_states_gb,activations_gb,gpu_memory_gb,fits,compute_source,note\n"
    "(model states per GPU, docs/model.md eq. M1; activations estimated by\n"
    "eq. M2 when the model gives its transformer dimensions, else empty; fits\n"
    "yes, no, or ? when the machine gives no GPU memory)\n",
    "Compute: --compute-ms for all, else each model's own, else estimated from\n"
    "FLOPs, batch and GPU tflops (docs/model.md, eq. P0).\n"
    "--setting (repeatable, instead of -t and -s): an experiment with its own\n"
    "baseline strategy, the strategies compared with it and its machines; the\n"
    "CSV gets a setting column, each row its speed-up over the baseline and,\n"
    "for planned strategies, the share of bytes per route family; --svg draws\n"
    "every setting's best speed-up side by side (docs/paper-reproduction.md).\n"};

#define MAX_LIST 64

typedef struct opts {
    const char *models[MAX_LIST], *topos[MAX_LIST], *out, *svg;
    int nm, nt, hosts, gpus, ns;
    cp_strategy strat[CP_STRATEGIES];
    double mgbs[MAX_LIST], mred[MAX_LIST];
    int nmg, nmr;
    int bucket_given; /* --bucket-mb was given */
    cp_predict_opts p;
    cli_setting set[CLI_MAX_SETTINGS]; /* --setting, in order */
    int nset;
} opts;

/* Append the comma-separated items of arg (kept in argv's storage). */
static int add_list(const char *opt, char *arg, const char **list, int *n)
{
    char *save = NULL, *tok;
    for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_LIST)
            return cli_usage("compare", "%s: at most %d values", opt, MAX_LIST);
        list[(*n)++] = tok;
    }
    return CP_OK;
}

static int add_numbers(const char *opt, char *arg, double *list, int *n)
{
    const char *items[MAX_LIST];
    int k, m = 0, rc = add_list(opt, arg, items, &m);
    for (k = 0; rc == CP_OK && k < m; k++) {
        if (*n >= MAX_LIST || cp_parse_double(items[k], &list[*n]) || !(list[*n] > 0) ||
            list[*n] > 1e5)
            return cli_usage("compare", "%s: expected GB/s values in (0, 1e5], got '%s'", opt,
                             items[k]);
        (*n)++;
    }
    return rc;
}

/* -s LIST (value: opts): strategies appended in the order given. */
static int parse_strategies(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    const char *names[MAX_LIST];
    int k, nn = 0, rc = add_list("-s", arg, names, &nn);
    for (k = 0; rc == CP_OK && k < nn; k++)
        if (o->ns >= CP_STRATEGIES || cp_strategy_parse(names[k], &o->strat[o->ns++]))
            rc = cli_usage(cmd, "-s: unknown strategy '%s'", names[k]);
    return rc;
}

/* --memdev-gbs and --memdev-reduce-gbs X[,X..] (value: opts). */
static int parse_mgbs(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    (void)cmd;
    return add_numbers("--memdev-gbs", arg, o->mgbs, &o->nmg);
}

static int parse_mred(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    (void)cmd;
    return add_numbers("--memdev-reduce-gbs", arg, o->mred, &o->nmr);
}

/* --setting NAME:BASE,S2..:TOPO,.. (value: opts), at most CLI_MAX_SETTINGS. */
static int parse_setting(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    if (o->nset >= CLI_MAX_SETTINGS)
        return cli_usage(cmd, "--setting: at most %d", CLI_MAX_SETTINGS);
    return cli_setting_parse(arg, &o->set[o->nset++]);
}

/* No output may replace an input. */
static int check_outputs(const opts *o)
{
    int k;
    for (k = 0; k < o->nm; k++)
        if (cp_same_file(o->out, o->models[k]))
            return cli_usage("compare", "-o %s would overwrite an input", o->out);
    for (k = 0; k < o->nt; k++)
        if (cp_same_file(o->out, o->topos[k]) || (o->svg && cp_same_file(o->svg, o->topos[k])))
            return cli_usage("compare", "-o %s would overwrite an input", o->out);
    for (k = 0; o->svg && k < o->nm; k++)
        if (cp_same_file(o->svg, o->models[k]))
            return cli_usage("compare", "--svg %s would overwrite an input", o->svg);
    return CP_OK;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    static const cp_strategy dflt[] = {CP_S_RING, CP_S_TREE, CP_S_AUTO, CP_S_PS, CP_S_PROXY,
                                       CP_S_COARSE};
    cp_predict_opts *p = &o->p;
    const cli_option table[] = {
        OPT_LIST('m', "model", "FILE[,FILE..]", o->models, &o->nm, MAX_LIST,
                 "model JSON files (-m may repeat)"),
        OPT_LIST('t', "topo", "FILE[,FILE..]", o->topos, &o->nt, MAX_LIST,
                 "topology JSON files (-t may repeat)"),
        OPT_STRING('o', "output", "FILE", &o->out, "the CSV to write (\"-\" for standard output)"),
        OPT_CALLBACK('s', "strategies", "LIST", o, parse_strategies,
                     "comma-separated (default ring,tree,auto,ps,proxy,coarse); one a machine "
                     "cannot run gets available=0 and the reason in `note`"),
        OPT_INT(0, "hosts", "N", &o->hosts, 1, CP_MAX_HOSTS,
                "replicate single-host topologies N times"),
        OPT_INT(0, "gpus", "G", &o->gpus, 1, CLI_MAX_GPUS, "use the first G GPUs of each host"),
        OPT_DOUBLE(0, "compute-ms", "T", &p->compute_ms, 1e7,
                   "measured one-GPU iteration time, for every model"),
        OPT_DOUBLE(0, "mfu", "F", &p->mfu, 1, "FLOPs utilisation for the estimate (default 0.5)"),
        OPT_DOUBLE_SEEN(0, "bucket-mb", "B", &p->bucket_mb, 65536, &o->bucket_given,
                        "as for predict"),
        OPT_DOUBLE(0, "compute-scale", "F", &p->compute_scale, 1e3, "multiply compute by F"),
        OPT_DTYPE(0, "grad-dtype", "T", &p->grad_bytes,
                  "gradient element type fp32, fp16 or bf16 (default: the model's)"),
        CLI_MODEL_OPTIONS(p),
        CLI_FRAMEWORK_OPTIONS(p),
        OPT_STRING(0, "svg", "CHART.svg", &o->svg,
                   "also draw the speed-ups over ring as a grouped bar chart"),
        OPT_CALLBACK(0, "memdev-gbs", "X[,X..]", o, parse_mgbs,
                     "replace every CXL link's bandwidth with each value in turn (a sweep over "
                     "the assumed device figures; the memdev_gbs column is empty otherwise)"),
        OPT_CALLBACK(0, "memdev-reduce-gbs", "Y[,Y..]", o, parse_mred,
                     "the same for every memory device's reduce rate (memdev_reduce_gbs)"),
        OPT_CALLBACK(0, "setting", "NAME:BASE,S2..:TOPO,..", o, parse_setting,
                     "an experiment against its own baseline, instead of -t and -s "
                     "(repeatable)"),
        CLI_QUIET_OPTION("no progress meter (drawn on a terminal's standard error)"),
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    o->hosts = 1;
    cp_predict_opts_default(&o->p);
    if ((rc = cli_parse("compare", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("compare", argc, argv, first)))
        return rc;
    if (o->nset && (o->nt || o->ns))
        return cli_usage("compare", "--setting names its own strategies and topologies: drop "
                                    "-t and -s");
    if (!o->nm || (!o->nt && !o->nset) || !o->out)
        return cli_usage("compare", "-m MODEL, -t TOPO and -o FILE.csv are required");
    if ((rc = check_outputs(o)))
        return rc;
    if (!o->ns) {
        memcpy(o->strat, dflt, sizeof dflt);
        o->ns = (int)(sizeof dflt / sizeof dflt[0]);
    }
    return cli_settle_framework("compare", &o->p, o->bucket_given);
}

/* Replace every CXL link's bandwidth and every memory device's reduce rate. */
static void set_memdevs(cp_topo *t, double gbs, double reduce)
{
    int i;
    for (i = 0; gbs > 0 && i < t->nlinks; i++)
        if (t->links[i].kind == CP_CXL)
            t->links[i].gbs[0] = t->links[i].gbs[1] = gbs;
    for (i = 0; reduce > 0 && i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_MEMDEV)
            t->nodes[i].reduce_gbs = reduce;
}

/* model_states_gb,activations_gb,gpu_memory_gb,fits (eq. M1, M2): the
 * same for every strategy of a model on a machine. */
static void mem_columns(const cp_mem *m, char *buf, size_t len)
{
    char act[32] = "", cap[32] = "";
    if (m->activations > 0)
        snprintf(act, sizeof act, "%.4f", m->activations / 1e9);
    if (m->capacity > 0)
        snprintf(cap, sizeof cap, "%.2f", m->capacity / 1e9);
    snprintf(buf, len, "%.4f,%s,%s,%s", m->states / 1e9, act, cap,
             m->capacity > 0 ? (m->total <= m->capacity ? "yes" : "no") : "?");
}

/* The rows of one model on one (possibly edited) topology. */
static int rows(const opts *o, const cp_model *m, const cp_topo *t, double mg, double mr,
                FILE *f, double *speedup, cp_err *e)
{
    cp_predictor pr;
    cp_prediction ring;
    cp_mem mem;
    double ring_ms = 0;
    char mgs[32] = "", mrs[32] = "", memcols[128];
    int k, rc = cp_predictor_init(&pr, m, t, &o->p, e);
    if (rc)
        return rc;
    if ((rc = cp_model_states(&pr, &o->p, &mem, e))) {
        cp_predictor_free(&pr);
        return rc;
    }
    mem_columns(&mem, memcols, sizeof memcols);
    if (mg > 0)
        snprintf(mgs, sizeof mgs, "%g", mg);
    if (mr > 0)
        snprintf(mrs, sizeof mrs, "%g", mr);
    { /* the speed-up column; a failure to price ring is not "no ring" */
        int rr = cp_predict(&pr, CP_S_RING, &o->p, 0, &ring, e);
        if (rr == CP_EINTERNAL)
            rc = rr;
        else if (rr == CP_OK && ring.available)
            ring_ms = ring.iteration_ms;
    }
    for (k = 0; k < o->ns && rc == CP_OK; k++) {
        cp_prediction p;
        rc = cp_predict_any(&pr, o->strat[k], &o->p, 0, 0, &p, e);
        if (rc)
            break;
        fprintf(f, "%s,%s,%d,%s,%s,%s,", m->name, t->name, t->ngpus, mgs, mrs,
                cp_strategy_name(o->strat[k]));
        speedup[k] = p.available && ring_ms > 0 ? ring_ms / p.iteration_ms : -1;
        if (p.available)
            fprintf(f, "1,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%s,\n", p.iteration_ms, p.compute_ms,
                    p.comm_ms, p.exposed_ms, ring_ms > 0 ? ring_ms / p.iteration_ms : 0,
                    memcols, pr.compute_source);
        else {
            char *c;
            for (c = p.why_not; *c; c++)
                if (*c == ',' || *c == '"' || *c == '\n')
                    *c = ';'; /* keep the row one CSV record without quoting */
            fprintf(f, "0,,,,,,%s,%s,%s\n", memcols, pr.compute_source, p.why_not);
        }
    }
    cp_predictor_free(&pr);
    return rc;
}

/* The speed-up chart: one group per model, machine (and device figures). */
static int write_svg(const opts *o, char **cats, int ncat, const double *val, cp_err *e)
{
    const char *ser[CP_STRATEGIES];
    cp_bars c;
    cp_outfile out;
    int k, rc;
    for (k = 0; k < o->ns; k++)
        ser[k] = cp_strategy_name(o->strat[k]);
    memset(&c, 0, sizeof c);
    c.title = "iteration speed-up over ring AllReduce (coarse-plan compare)";
    c.ylabel = "speed-up over ring (x)";
    c.ncat = ncat;
    c.cat = (const char *const *)cats;
    c.nser = o->ns;
    c.ser = ser;
    c.val = val;
    c.ref = 1.0;
    if ((rc = cp_out_open(&out, o->svg, e)))
        return rc;
    if (cp_svg_bars(&c, out.f)) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "writing %s failed", o->svg);
    }
    return cp_out_commit(&out, e);
}

static int run(const opts *o, cp_err *e)
{
    cp_model *m[MAX_LIST] = {0};
    cp_topo *t[MAX_LIST] = {0};
    cp_outfile out;
    int i, j, a, b, rc = CP_OK, na = o->nmg ? o->nmg : 1, nb = o->nmr ? o->nmr : 1, ncat = 0;
    int maxcat = o->nm * o->nt * na * nb;
    char **cats = calloc((size_t)maxcat + 1, sizeof *cats);
    double *val = calloc((size_t)maxcat * CP_STRATEGIES + 1, sizeof *val);
    cli_meter meter;
    cli_meter_start(&meter, "compare", maxcat);
    if (!cats || !val)
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < o->nm && rc == CP_OK; i++)
        if ((rc = cp_model_load(o->models[i], &m[i], e)) == CP_OK)
            rc = cli_need_batch(m[i], o->models[i], o->p.activation_gb, e);
    for (i = 0; i < o->nt && rc == CP_OK; i++)
        rc = cp_topo_load_machine(o->topos[i], o->gpus, o->hosts, &t[i], e);
    if (rc == CP_OK)
        rc = cp_out_open(&out, o->out, e);
    if (rc == CP_OK) {
        fprintf(out.f, "model,topology,gpus,memdev_gbs,memdev_reduce_gbs,strategy,available,"
                       "iteration_ms,compute_ms,comm_ms,exposed_comm_ms,speedup_vs_ring,"
                       "model_states_gb,activations_gb,gpu_memory_gb,fits,compute_source,"
                       "note\n");
        for (j = 0; j < o->nt && rc == CP_OK; j++)
            for (a = 0; a < na && rc == CP_OK; a++)
                for (b = 0; b < nb && rc == CP_OK; b++) {
                    cp_topo *edit = cp_topo_clone(t[j]);
                    double mg = o->nmg ? o->mgbs[a] : 0, mr = o->nmr ? o->mred[b] : 0;
                    if (!edit) {
                        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
                        break;
                    }
                    set_memdevs(edit, mg, mr);
                    for (i = 0; i < o->nm && rc == CP_OK; i++) {
                        char label[300];
                        if (mg > 0 || mr > 0)
                            snprintf(label, sizeof label, "%s @ %s (%g/%g)", m[i]->name,
                                     edit->name, mg, mr);
                        else
                            snprintf(label, sizeof label, "%s @ %s", m[i]->name, edit->name);
                        if (!(cats[ncat] = strdup(label))) {
                            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
                            break;
                        }
                        rc = cli_blame(rows(o, m[i], edit, mg, mr, out.f,
                                            val + (size_t)ncat * o->ns, e),
                                       e, o->models[i]);
                        cli_meter_step(&meter, ++ncat);
                    }
                    cp_topo_free(edit);
                }
        cli_meter_end(&meter);
        if (rc == CP_OK && o->svg)
            rc = write_svg(o, cats, ncat, val, e);
        if (rc == CP_OK)
            rc = cp_out_commit(&out, e);
        else
            cp_out_abort(&out);
    }
    for (i = 0; i < MAX_LIST; i++) {
        cp_model_free(m[i]);
        cp_topo_free(t[i]);
    }
    for (i = 0; cats && i < ncat; i++)
        free(cats[i]);
    free(cats);
    free(val);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    opts o;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    if (o.nset)
        return cli_report(cli_compare_settings(o.set, o.nset, o.models, o.nm, o.gpus, o.hosts,
                                               &o.p, o.out, o.svg, &e),
                          &e);
    return cli_report(run(&o, &e), &e);
}
