/*
 * cmd_calibrate.c - `coarse-plan calibrate NCCL_TESTS_OUTPUT -t TOPO`: fit the
 * topology's calibration block to a measured nccl-tests table, print the fit
 * and the residual of every row, and with -o write the calibrated topology.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/pool_table.h"
#include "core/fileio.h"
#include "core/units.h"
#include "cost/calibrate.h"
#include "load/load.h"
#include "out/jsonfmt.h"

static const cli_usage_text usage = {
    "usage: coarse-plan calibrate NCCL_TESTS_OUTPUT -t TOPO [OPTIONS]\n",
    "Fit the topology's calibration to measured nccl-tests output (all_reduce_perf\n"
    "console output, verbatim): the achieved fraction of nominal bandwidth (bw_eff)\n"
    "of the link kind that binds, the Simple protocol's cost per step (simple_us)\n"
    "and the software latency per step under LL (step_us), started from line fits\n"
    "through the largest sizes and the smallest times, then refined against every\n"
    "row from 1 KB (largest plus root-mean-square relative error), with the launch\n"
    "cost when one thread drives several GPUs and the network's LL efficiency\n"
    "(ll_eff) across hosts.  Prints the fit and, for every row, measured and\n"
    "predicted time, the error and the protocol.\n",
    "The GPUs driven by one thread (nccl-tests -g) come from the table's header.\n"
    "Method and the shipped fits: docs/calibration.md.\n"};

/* Default launch cost of one kernel when the topology has no calibration:
 * CUDA's documented launch overhead is a few microseconds; 5 us is the
 * round figure NVIDIA quotes (docs/calibration.md). */
#define DEFAULT_LAUNCH_US 5.0

typedef struct opts {
    const char *table, *topo, *out;
    int hosts, gpus, alg, json;
    int pool, xop;   /* -a pool; the operation as a cp_xop */
    cp_coll_op op;
    double launch;   /* < 0: keep the topology's */
} opts;

/* --op OP (value: opts): op the cp_coll_op (allreduce for the operations
 * only -a pool fits), xop the cp_xop (pool_table.h). */
static int parse_op(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    int k;
    for (k = 0; k < CP_XOPS && strcmp(arg, cp_xop_name((cp_xop)k)) != 0; k++)
        ;
    if (k == CP_XOPS)
        return cli_usage(cmd, "--op: unknown operation '%s'", arg);
    o->op = (cp_coll_op)(k < CP_OPS ? k : 0);
    o->xop = k;
    return CP_OK;
}

/* -a ALG (value: opts): alg a cp_coll_alg, or pool 1 for -a pool. */
static int parse_alg(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    int k;
    if ((o->pool = strcmp(arg, "pool") == 0))
        return CP_OK;
    for (k = 0; k < CP_ALGS && strcmp(arg, cp_coll_alg_name((cp_coll_alg)k)) != 0; k++)
        ;
    if (k == CP_ALGS)
        return cli_usage(cmd, "-a: unknown algorithm '%s' (ring, tree, nvls, hier, ps)", arg);
    o->alg = k;
    return CP_OK;
}

/* --launch-us US (value: double), 0 allowed. */
static int parse_launch(const char *cmd, char *arg, void *value)
{
    double *launch = value;
    if (cp_parse_double(arg, launch) || *launch < 0 || *launch > 1e4)
        return cli_usage(cmd, "--launch-us: expected 0 to 10000, got '%s'", arg);
    return CP_OK;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    const cli_option table[] = {
        OPT_STRING('t', "topo", "FILE", &o->topo, "topology JSON describing the measured machine"),
        OPT_INT(0, "hosts", "N", &o->hosts, 1, CP_MAX_HOSTS,
                "the measurement spanned N copies of it"),
        OPT_INT(0, "gpus", "G", &o->gpus, 1, CLI_MAX_GPUS,
                "... using the first G GPUs of each (default: all)"),
        OPT_STRING('o', "output", "FILE", &o->out,
                   "write the topology with the fitted calibration block"),
        OPT_CALLBACK(0, "op", "OP", o, parse_op,
                     "operation measured (default allreduce; with -a pool also reduce, "
                     "gather, scatter, alltoall)"),
        OPT_CALLBACK('a', "algo", "ALG", o, parse_alg,
                     "algorithm NCCL used (default ring), or pool: a table of collectives "
                     "through a CXL pool, fitting calibration.pool (the busier copy-engine "
                     "stream's rate and fixed cost a copy; hosts of several GPUs "
                     "hierarchically; docs/pool.md)"),
        OPT_CALLBACK(0, "launch-us", "US", &o->launch, parse_launch,
                     "fixed launch cost per kernel (default: the topology's, or 5 us when it "
                     "has no calibration block)"),
        OPT_FLAG(0, "json", &o->json, "the fit and the rows as JSON"),
        CLI_QUIET_OPTION("no progress meter on a terminal's standard error"), /* the fit's */
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    o->hosts = 1;
    o->alg = CP_ALG_RING;
    o->launch = -1;
    if ((rc = cli_parse("calibrate", &usage, table, argc, argv, &first)))
        return rc;
    if (first + 1 != argc)
        return cli_usage("calibrate", first >= argc ? "the nccl-tests output file is required"
                                                    : "give one nccl-tests output file");
    o->table = argv[first];
    if (o->xop >= CP_OPS && !o->pool)
        return cli_usage("calibrate", "--op %s: only -a pool fits it", cp_xop_name(o->xop));
    if (!o->topo)
        return cli_usage("calibrate", "-t TOPO is required");
    if (o->out && (cp_same_file(o->out, o->topo) || cp_same_file(o->out, o->table)))
        return cli_usage("calibrate", "-o %s would overwrite an input", o->out);
    return CP_OK;
}

/* The calibration block as JSON: launch_us and every kind that is not the
 * default (bw_eff 1, step_us 0, simple_us 0); simple_us only when set, so
 * a topology calibrated before protocols were modelled reads the same. */
static json_t *calib_json(const cp_calib *c, const char *note)
{
    json_t *o = json_object();
    int k;
    json_object_set_new(o, "note", json_string(note));
    json_object_set_new(o, "launch_us", cli_real(c->launch_us, 4));
    if (c->net_fabric[0]) /* the name stays; a fitted `net` below overrides its numbers */
        json_object_set_new(o, "net_fabric", json_string(c->net_fabric));
    if (c->nvls_eff != 1) /* kept as the topology had it: the fit does not touch NVLS */
        json_object_set_new(o, "nvls_eff", cli_real(c->nvls_eff, 4));
    for (k = 0; k < CP_LINK_KINDS; k++) {
        json_t *sub;
        if (c->kind[k].bw_eff == 1 && c->kind[k].step_us == 0 && c->kind[k].simple_us == 0)
            continue;
        sub = json_object();
        /* 6 decimals: bw_eff may be as small as 1e-3 (CP_MIN_BW_EFF) */
        json_object_set_new(sub, "bw_eff", cli_real(c->kind[k].bw_eff, 6));
        json_object_set_new(sub, "step_us", cli_real(c->kind[k].step_us, 6));
        if (c->kind[k].simple_us != 0)
            json_object_set_new(sub, "simple_us", cli_real(c->kind[k].simple_us, 6));
        if (c->kind[k].ll_eff != 0)
            json_object_set_new(sub, "ll_eff", cli_real(c->kind[k].ll_eff, 6));
        json_object_set_new(o, cp_link_kind_name((cp_link_kind)k), sub);
    }
    cli_pool_calib_json(o, &c->pool);
    return o;
}

/* The source topology file with its calibration block replaced. */
static int write_topology(const opts *o, const cp_calib *calib, cp_err *e)
{
    cp_jdoc d;
    cp_outfile out;
    char note[512];
    int rc = cp_jdoc_load(&d, o->topo, e);
    if (rc)
        return rc;
    snprintf(note, sizeof note, "fitted by coarse-plan calibrate to %s", o->table);
    json_object_set_new(d.root, "calibration", calib_json(calib, note));
    rc = cp_out_open(&out, o->out, e);
    if (rc == CP_OK) {
        if (cp_json_write_doc(d.root, out.f)) {
            cp_out_abort(&out);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", o->out);
        } else {
            rc = cp_out_commit(&out, e);
        }
    }
    cp_jdoc_free(&d);
    return rc;
}

static void print_fit(const opts *o, const cp_topo *t, const cp_nccl_table *tab,
                      const cp_fit *f)
{
    int i;
    printf("# calibrate: %s on %s (%d GPU%s, %d per thread), %s %s\n", o->table, t->name,
           t->ngpus, cp_s(t->ngpus), tab->gpus_per_thread, cp_coll_op_name(o->op),
           cp_coll_alg_name(f->alg));
    printf("# %s bw_eff: %.4f -> %.4f%s\n", cp_link_kind_name(f->bw_kind), f->bw_eff_before,
           f->bw_eff_after, f->bw_clamped ? " (clamped: the fit asked for more than nominal)" : "");
    printf("# %s step_us: %.3f -> %.3f%s\n", cp_link_kind_name(f->lat_kind), f->step_before,
           f->step_after, f->step_clamped ? " (clamped at 0)" : "");
    if (f->simple_fitted)
        printf("# %s simple_us: %.3f -> %.3f%s\n", cp_link_kind_name(f->lat_kind),
               f->simple_before, f->simple_after,
               f->simple_below_other ? " (another kind's simple_us is larger and sets the "
                                       "pace)" : "");
    else
        printf("# %s simple_us: %.3f kept (one size in the top six octaves: too few to fit "
               "Simple's intercept)\n", cp_link_kind_name(f->lat_kind), f->simple_after);
    if (f->fit_ll)
        printf("# net ll_eff: %.4f -> %.4f\n", f->ll_before, f->ll_after);
    printf("# launch_us: %.3f%s per kernel x %d GPU%s per thread\n", t->calib.launch_us,
           f->fit_launch ? " (fitted: one thread issues every launch)" : " (held)",
           tab->gpus_per_thread, cp_s(tab->gpus_per_thread));
    printf("# start: line fits through the %d largest sizes and the %d smallest times; then "
           "every row from %.0f B (%d): max |error| %.1f%%, median %.1f%%\n", f->nbw_rows,
           f->nlat_rows, CP_FIT_MIN_BYTES, f->nfit_rows, 100 * f->max_err, 100 * f->median_err);
    printf("#%12s  %12s  %12s  %8s  %s\n", "size (B)", "measured us", "predicted us", "error",
           "protocol");
    for (i = 0; i < tab->nrows; i++) {
        const cp_nccl_row *r = &tab->rows[i];
        printf(" %12.0f  %12.2f  %12.2f  %+7.1f%%  %s\n", r->bytes, r->time_us, f->pred_us[i],
               100 * (f->pred_us[i] - r->time_us) / r->time_us, cp_proto_name(f->proto[i]));
    }
}

static int print_fit_json(const cp_topo *t, const cp_nccl_table *tab, const cp_fit *f)
{
    json_t *root = json_object(), *rows = json_array();
    int i;
    json_object_set_new(root, "topology", json_string(t->name));
    json_object_set_new(root, "algorithm", json_string(cp_coll_alg_name(f->alg)));
    json_object_set_new(root, "calibration", calib_json(&t->calib, "fitted"));
    for (i = 0; i < tab->nrows; i++) {
        json_t *r = cli_fit_row(tab->rows[i].bytes, tab->rows[i].time_us, f->pred_us[i]);
        json_object_set_new(r, "protocol", json_string(cp_proto_name(f->proto[i])));
        json_array_append_new(rows, r);
    }
    json_object_set_new(root, "rows", rows);
    return cli_dump_json(root, stdout);
}

/* -a pool: the pool's fit, with the network's model of the machine for
 * the in-host phases of hosts of several GPUs (docs/pool.md, eq. PL7). */
static int pool_fit(const opts *o, cp_topo *t, const cp_nccl_table *tab, cp_pool_fit *f,
                    cp_err *e)
{
    cp_coll c;
    int rc = cli_blame(cp_coll_build(t, tab->gpus_per_thread > 0 ? tab->gpus_per_thread : 1, &c,
                                     e),
                       e, o->topo);
    if (rc)
        return rc;
    rc = cli_blame(cp_pool_calibrate(t, &c, tab, (cp_xop)o->xop, f, e), e, o->table);
    cp_coll_free(&c);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    opts o;
    cp_topo *t = NULL;
    cp_nccl_table tab;
    cp_fit fit;
    cp_pool_fit pfit;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    memset(&fit, 0, sizeof fit);
    memset(&pfit, 0, sizeof pfit);
    memset(&tab, 0, sizeof tab);
    rc = cp_nccl_load(o.table, &tab, &e);
    if (rc == CP_OK)
        rc = cp_topo_load_machine(o.topo, o.gpus, o.hosts, &t, &e);
    if (rc == CP_OK) {
        if (o.launch >= 0)
            t->calib.launch_us = o.launch;
        else if (!t->calib.given)
            t->calib.launch_us = DEFAULT_LAUNCH_US;
        cli_meter mt;
        cp_progress pg;
        cli_meter_start(&mt, "calibrate", 4);
        pg = cli_meter_progress(&mt);
        if (o.pool)
            rc = pool_fit(&o, t, &tab, &pfit, &e);
        else
            rc = cli_blame(cp_calibrate_progress(t, &tab, o.op, o.alg, &fit, &pg, &e), &e,
                           o.table);
        cli_meter_end(&mt);
    }
    if (rc == CP_OK && o.out)
        rc = write_topology(&o, &t->calib, &e);
    if (rc == CP_OK && o.pool)
        rc = cli_print_pool_fit(t, &tab, &pfit, o.table, o.json, &e);
    else if (rc == CP_OK) {
        if (o.json)
            rc = print_fit_json(t, &tab, &fit) ? cp_fail(&e, CP_EINTERNAL, "writing failed") : 0;
        else
            print_fit(&o, t, &tab, &fit);
    }
    cp_fit_free(&fit);
    cp_pool_fit_free(&pfit);
    cp_nccl_free(&tab);
    cp_topo_free(t);
    return cli_report(rc, &e);
}
