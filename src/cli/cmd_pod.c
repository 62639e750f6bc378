/*
 * cmd_pod.c - `coarse-plan pod`: the reports of a CXL pool shared by many
 * hosts (docs/pool.md, "Reports").
 *
 * Iterations (default): every model under every framework on the topology
 * replicated to each host count, with the network alone (auto, NCCL's
 * choice per bucket), the pool alone (strategy pool) and the LP's split
 * (coarse, DDP only: the planner buckets as DDP does), the speed-ups over
 * the network and the resource that binds the pool at the run's largest
 * operation; CSV, and with --svg the speed-ups as grouped bars.
 *
 * --collectives: every operation through the pool against the network
 * (-a pool against -a auto) from -b to -e bytes on the topology as given.
 *
 * Output is written atomically once complete (cp_out_open).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_table.h"
#include "core/fileio.h"
#include "core/units.h"
#include "cost/p2p.h"
#include "load/load.h"
#include "out/svg.h"
#include "plan/plan_predict.h"
#include "predict/pool_strategy.h"

static const cli_usage_text usage = {
    "usage: coarse-plan pod -m MODEL[,MODEL..] -t TOPO -o FILE.csv [OPTIONS]\n"
    "       coarse-plan pod --collectives -t TOPO -o FILE.csv [-b MIN] [-e MAX]\n",
    "Reports of a CXL memory pool shared by many hosts (docs/pool.md).  Iterations:\n"
    "  model,framework,hosts,gpus,network_ms,pool_ms,split_ms,pool_speedup,\n"
    "  split_speedup,pool_binding\n"
    "for every model, framework (default ddp,fsdp) and host count (default\n"
    "2,4,8,16,32,64; TOPO replicated, its pool shared): the network alone (auto),\n"
    "the pool alone (pool), the LP's split (coarse; DDP only, empty otherwise),\n"
    "speed-ups over the network, and what binds the pool at the largest operation.\n"
    "--collectives:\n"
    "  operation,bytes,pool_us,network_us,network_algorithm,speedup,pool_binding,\n"
    "  pool_form\n"
    "for every operation from -b (default 1M) to -e (default 4G), doubling;\n"
    "pool_form is AllReduce's faster form through the pool (direct: every rank\n"
    "pulls every contribution; rs+ag: a reduce-scatter, then an all-gather).\n",
    NULL};

#define MAX_LIST 16
#define LIST_BYTES 2048

typedef struct opts {
    const char *topo, *out, *svg;
    const char *model[MAX_LIST];
    int nmodel;
    int hosts[MAX_LIST], nhosts;
    cp_framework fw[MAX_LIST];
    int nfw, collectives;
    int64_t minb, maxb;
    char mbuf[LIST_BYTES]; /* the -m list's text, which model[] points into */
} opts;

/* Split a comma list into at most MAX_LIST pieces of buf (borrowed). */
static int split_list(char *buf, const char **out, int *n)
{
    char *save = NULL, *tok;
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_LIST)
            return -1;
        out[(*n)++] = tok;
    }
    return *n > 0 ? 0 : -1;
}

/* -m M[,M..] (value: opts). */
static int parse_models(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    snprintf(o->mbuf, sizeof o->mbuf, "%s", arg);
    if (split_list(o->mbuf, o->model, &o->nmodel))
        return cli_usage(cmd, "-m: expected 1 to %d model files", MAX_LIST);
    return CP_OK;
}

/* --hosts N[,N..] (value: opts). */
static int parse_hosts(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    char buf[LIST_BYTES];
    const char *tok[MAX_LIST];
    int k, n;
    snprintf(buf, sizeof buf, "%s", arg);
    if (split_list(buf, tok, &n))
        return cli_usage(cmd, "--hosts: expected 1 to %d host counts", MAX_LIST);
    for (k = 0; k < n; k++)
        if (cli_parse_hosts(cmd, tok[k], &o->hosts[k]))
            return CP_EINPUT;
    o->nhosts = n;
    return CP_OK;
}

/* --framework F[,F..] (value: opts). */
static int parse_fws(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    char buf[LIST_BYTES];
    const char *tok[MAX_LIST];
    int k, n, rc;
    snprintf(buf, sizeof buf, "%s", arg);
    if (split_list(buf, tok, &n))
        return cli_usage(cmd, "--framework: expected 1 to %d frameworks", MAX_LIST);
    for (k = 0; k < n; k++)
        if ((rc = cli_opt_framework(cmd, (char *)tok[k], &o->fw[k])))
            return rc;
    o->nfw = n;
    return CP_OK;
}

/* -b and -e SIZE (value: int64_t): bytes, K, M, G suffixes. */
static int parse_min(const char *cmd, char *arg, void *value)
{
    if (cp_parse_size(arg, value))
        return cli_usage(cmd, "-b: expected a size such as 1M, got '%s'", arg);
    return CP_OK;
}

static int parse_max(const char *cmd, char *arg, void *value)
{
    if (cp_parse_size(arg, value))
        return cli_usage(cmd, "-e: expected a size such as 1M, got '%s'", arg);
    return CP_OK;
}

/* The option table, parsed into o, then what does not combine; CP_OK,
 * CLI_HELP or a usage error. */
static int parse_opts(int argc, char **argv, opts *o)
{
    const cli_option table[] = {
        OPT_CALLBACK('m', "model", "M[,M..]", o, parse_models,
                     "model JSON files (the iteration report)"),
        OPT_STRING('t', "topo", "FILE", &o->topo,
                   "topology JSON with a CXL pool (replicated to each host count)"),
        OPT_STRING('o', "output", "FILE", &o->out, "CSV to write (\"-\" for standard output)"),
        OPT_CALLBACK(0, "hosts", "N[,N..]", o, parse_hosts,
                     "host counts (default 2,4,8,16,32,64)"),
        OPT_CALLBACK(0, "framework", "F[,F..]", o, parse_fws,
                     "frameworks, as predict --framework takes them (default ddp,fsdp)"),
        OPT_STRING(0, "svg", "CHART.svg", &o->svg,
                   "also draw the speed-ups over the network as grouped bars"),
        OPT_FLAG(0, "collectives", &o->collectives,
                 "every operation through the pool against the network, instead"),
        OPT_CALLBACK('b', "minbytes", "SIZE", &o->minb, parse_min,
                     "smallest size of --collectives (default 1M); K, M, G suffixes (x1024)"),
        OPT_CALLBACK('e', "maxbytes", "SIZE", &o->maxb, parse_max,
                     "largest size of --collectives (default 4G)"),
        OPT_END()};
    static const int dflt_hosts[] = {2, 4, 8, 16, 32, 64};
    int first, rc, k;
    memset(o, 0, sizeof *o);
    o->minb = 1 << 20;
    o->maxb = (int64_t)4 << 30;
    for (k = 0; k < 6; k++)
        o->hosts[k] = dflt_hosts[k];
    o->nhosts = 6;
    o->fw[0] = CP_FW_DDP;
    o->fw[1] = CP_FW_FSDP;
    o->nfw = 2;
    if ((rc = cli_parse("pod", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("pod", argc, argv, first)))
        return rc;
    if (!o->topo || !o->out || (!o->collectives && o->nmodel == 0))
        return cli_usage("pod", "-t TOPO, -o FILE.csv and (without --collectives) -m MODEL "
                                "are required");
    if (o->minb < 1 || o->maxb < o->minb)
        return cli_usage("pod", "sizes: need 1 <= -b <= -e");
    if (o->collectives && o->svg)
        return cli_usage("pod", "--svg goes with the iteration report");
    return CP_OK;
}

/* One strategy's iteration, -1 when unavailable. */
static int one(const cp_predictor *pr, cp_strategy s, const cp_predict_opts *po, double *ms,
               cp_err *e)
{
    cp_prediction r;
    int rc = cp_predict_any(pr, s, po, 0, 0, &r, e);
    *ms = -1;
    if (rc == CP_OK && r.available)
        *ms = r.iteration_ms;
    if (rc == CP_OK)
        cp_prediction_free(&r);
    return rc;
}

static void cell(FILE *f, double x, const char *sep)
{
    if (x >= 0)
        fprintf(f, "%.4f%s", x, sep);
    else
        fprintf(f, "%s", sep);
}

/* One row of the iteration report; *sp_pool, *sp_split the speed-ups. */
static int row(FILE *f, const char *mpath, const cp_model *m, cp_topo *t, cp_framework fw,
               int hosts, double *sp_pool, double *sp_split, cp_err *e)
{
    cp_predict_opts po;
    cp_predictor pr;
    double net, pool, split;
    const char *bind = "";
    int rc;
    cp_predict_opts_default(&po);
    po.framework = fw;
    if (cp_framework_deepspeed(fw))
        po.bucket_mb = 0;
    if ((rc = cli_blame(cp_predictor_init(&pr, m, t, &po, e), e, mpath)))
        return rc;
    if ((rc = one(&pr, CP_S_AUTO, &po, &net, e)) || (rc = one(&pr, CP_S_POOL, &po, &pool, e)) ||
        (rc = one(&pr, CP_S_COARSE, &po, &split, e)) ||
        (rc = cli_pool_binding(&pr, &po, &bind, e))) {
        cp_predictor_free(&pr);
        return rc;
    }
    *sp_pool = net > 0 && pool > 0 ? net / pool : -1;
    *sp_split = net > 0 && split > 0 ? net / split : -1;
    fprintf(f, "%s,%s,%d,%d,", m->name, cp_framework_name(fw), hosts, t->ngpus);
    cell(f, net, ",");
    cell(f, pool, ",");
    cell(f, split, ",");
    cell(f, *sp_pool, ",");
    cell(f, *sp_split, ",");
    fprintf(f, "%s\n", bind);
    cp_predictor_free(&pr);
    return CP_OK;
}

/* The speed-ups as bars: one group per (model, framework, hosts). */
static int write_svg(const opts *o, char **cat, const double *val, int ncat, cp_err *e)
{
    static const char *const ser[] = {"pool alone", "LP split"};
    cp_bars b = {"Speed-up over the network alone (auto)", "speed-up", ncat,
                 (const char *const *)cat, 2, ser, val, 1.0,
                 "No LP split bar for FSDP: the planner buckets gradients as DDP does, so "
                 "its split is computed for DDP only (docs/pool.md)."};
    cp_outfile out;
    int rc = cp_out_open(&out, o->svg, e);
    if (rc)
        return rc;
    if (cp_svg_bars(&b, out.f)) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "writing %s failed", o->svg);
    }
    return cp_out_commit(&out, e);
}

/* The iteration report compares the network with a pool the hosts share:
 * a topology without one would give empty pool columns and exit 0, so it
 * is refused first, as `predict -s pool` refuses it. */
static int need_pool(const opts *o, cp_err *e)
{
    cp_topo *t = NULL;
    int rc = cp_topo_load(o->topo, &t, e);
    if (rc)
        return rc;
    if (!cp_pool_present(t))
        rc = cp_fail_at(e, CP_EINPUT, o->topo, 0, 0, NULL,
                        "%s has no CXL pool (no cxl_switch node, no pool block): pod compares "
                        "the network with a pool the hosts share (docs/pool.md; "
                        "topologies/hgx-h100-pod.json has one)", t->name);
    cp_topo_free(t);
    return rc;
}

static int iterations(const opts *o, FILE *f, cp_err *e)
{
    int ncat = o->nmodel * o->nfw * o->nhosts, k = 0, i, j, h, rc = CP_OK;
    char **cat = calloc((size_t)ncat + 1, sizeof *cat);
    double *val = malloc(2 * ((size_t)ncat + 1) * sizeof *val);
    if (!cat || !val) {
        free(cat);
        free(val);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    fprintf(f, "model,framework,hosts,gpus,network_ms,pool_ms,split_ms,pool_speedup,"
               "split_speedup,pool_binding\n");
    for (i = 0; i < o->nmodel && rc == CP_OK; i++) {
        cp_model *m = NULL;
        if ((rc = cp_model_load(o->model[i], &m, e)))
            break;
        for (h = 0; h < o->nhosts && rc == CP_OK; h++) {
            cp_topo *t = NULL;
            if ((rc = cp_topo_load_hosts(o->topo, o->hosts[h], &t, e)))
                break;
            for (j = 0; j < o->nfw && rc == CP_OK; j++, k++) {
                char label[128];
                rc = row(f, o->model[i], m, t, o->fw[j], o->hosts[h], &val[2 * (size_t)k],
                         &val[2 * (size_t)k + 1], e);
                snprintf(label, sizeof label, "%s %s x%d", m->name, cp_framework_name(o->fw[j]),
                         o->hosts[h]);
                if (rc == CP_OK && !(cat[k] = strdup(label)))
                    rc = cp_fail(e, CP_EINTERNAL, "out of memory");
            }
            cp_topo_free(t);
        }
        cp_model_free(m);
    }
    if (rc == CP_OK && o->svg)
        rc = write_svg(o, cat, val, k, e);
    for (i = 0; i < ncat; i++)
        free(cat[i]);
    free(cat);
    free(val);
    return rc;
}

static int collectives(const opts *o, FILE *f, cp_err *e)
{
    cp_topo *t = NULL;
    cp_coll c;
    cp_p2p p2p;
    cp_pool pool;
    int rc, op, have = 0;
    if ((rc = cp_topo_load(o->topo, &t, e)))
        return rc;
    memset(&c, 0, sizeof c);
    memset(&p2p, 0, sizeof p2p);
    if ((rc = cli_blame(cp_coll_build(t, 1, &c, e), e, o->topo)) == CP_OK &&
        (rc = cp_p2p_build(t, &p2p, e)) == CP_OK &&
        (rc = cli_blame(cp_pool_build(t, &c, &pool, e), e, o->topo)) == CP_OK)
        have = 1;
    if (rc == CP_OK)
        fprintf(f, "operation,bytes,pool_us,network_us,network_algorithm,speedup,"
                   "pool_binding,pool_form\n");
    for (op = 0; rc == CP_OK && op < CP_XOPS; op++) {
        int64_t s;
        for (s = o->minb; s <= o->maxb; s *= 2) {
            cp_pool_why w;
            const char *alg;
            double pu = cp_pool_time_us(&pool, (cp_xop)op, (double)s, &w);
            double nu = cp_net_time_us(&c, &p2p, (cp_xop)op, (double)s, &alg);
            fprintf(f, "%s,%lld,%.3f,%.3f,%s,%.4f,%s,%s\n", cp_xop_name((cp_xop)op),
                    (long long)s, pu, nu, alg, nu / pu, cp_pool_res_name(w.bind),
                    op != CP_XOP_ALLREDUCE ? "" : w.rsag ? "rs+ag" : "direct");
            if (s > INT64_MAX / 2)
                break;
        }
    }
    if (have)
        cp_pool_free(&pool);
    cp_p2p_free(&p2p);
    cp_coll_free(&c);
    cp_topo_free(t);
    return rc;
}

int cmd_pod(int argc, char **argv)
{
    opts o;
    cp_outfile out;
    cp_err e;
    int rc;
    memset(&o, 0, sizeof o); /* parse_opts sets every field; cppcheck's CTU wants it here */
    rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    if (cp_same_file(o.out, o.topo) || (o.svg && cp_same_file(o.svg, o.topo)))
        return cli_usage("pod", "-o/--svg would overwrite an input");
    if (!o.collectives && (rc = need_pool(&o, &e)))
        return cli_report(rc, &e);
    rc = cp_out_open(&out, o.out, &e);
    if (rc == CP_OK) {
        rc = o.collectives ? collectives(&o, out.f, &e) : iterations(&o, out.f, &e);
        if (rc)
            cp_out_abort(&out);
        else
            rc = cp_out_commit(&out, &e);
    }
    return cli_report(rc, &e);
}
