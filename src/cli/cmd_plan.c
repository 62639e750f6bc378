/*
 * cmd_plan.c - `coarse-plan plan`: solve the routing LP, write the plan
 * atomically, print the predicted time and what binds it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "core/fileio.h"
#include "core/units.h"
#include "load/load.h"
#include "out/plan_write.h"
#include "plan/planner.h"

static const char help[] =
    "usage: coarse-plan plan -m MODEL -t TOPO -o PLAN.json [--compute-ms T]\n"
    "                        [--bucket-mb B] [--first-bucket-mb B] [--min-shard-kb K]\n"
    "                        [--mode coarse|proxy] [--grad-dtype fp32|fp16|bf16]\n"
    "                        [--accum-steps K] [--bucket-view] [--jitter CV] [--explain]\n"
    "                        [--dump-lp FILE] [--hosts N]\n"
    "\n"
    "Plan COARSE gradient synchronisation: for every gradient bucket, the share of\n"
    "its bytes on each route family (AllReduce among the GPUs, memory-device\n"
    "proxies sharded for bandwidth, the lowest-latency proxy, decentralised\n"
    "proxies with memory-side rings, the CPU parameter server), chosen by a\n"
    "linear program (GLPK) so that the iteration ends soonest, given when each\n"
    "bucket is ready, that each route family works through its buckets in\n"
    "order, and that the next forward pass needs the first layers first.\n"
    "Buckets are cut into equal shards of at least --min-shard-kb, the plan is\n"
    "checked for deadlock freedom and written atomically (docs/plan-format.md).\n"
    "\n"
    "  -m, --model FILE       model JSON\n"
    "  -t, --topo FILE        topology JSON (memory devices, a CXL pool optional)\n"
    "      --hosts N          replicate a single-host topology N times (its pool shared)\n"
    "  -o, --output FILE      plan JSON to write (\"-\" for standard output)\n"
    "      --compute-ms T     measured one-GPU iteration time (default: the model's)\n"
    "      --bucket-mb B      bucket cap, MiB (default 25), as DDP's bucket_cap_mb\n"
    "      --first-bucket-mb B  first bucket, MiB (default 1)\n"
    "      --min-shard-kb K   smallest shard, KiB (default 512)\n"
    "      --mode M           coarse (every route, default) or proxy (memory devices only)\n"
    "      --grad-dtype T     gradient element type (default: the model's)\n"
    "      --accum-steps K    micro-batches per optimizer step (as for predict)\n"
    "      --bucket-view      no copy of the reduced buckets back into the gradients\n"
    "      --jitter CV        step-to-step variation of one GPU's compute (as for predict)\n"
    "      --explain          every binding link and reducer with what one more GB/s\n"
    "                         on it would save per iteration (from the LP duals), and\n"
    "                         the bytes each route family carries\n"
    "      --dump-lp FILE     also write the LP in CPLEX LP format\n"
    "\n"
    "The model: docs/planner.md.\n";

enum { OPT_COMPUTE = 256, OPT_BUCKET, OPT_FIRST, OPT_SHARD, OPT_MODE, OPT_DTYPE, OPT_EXPLAIN,
       OPT_DUMP, OPT_HOSTS };

typedef struct opts {
    const char *model, *topo, *out;
    int explain, hosts;
    cp_plan_opts p;
} opts;

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"model", required_argument, NULL, 'm'},     {"topo", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},    {"compute-ms", required_argument, NULL, OPT_COMPUTE},
        {"bucket-mb", required_argument, NULL, OPT_BUCKET},
        {"first-bucket-mb", required_argument, NULL, OPT_FIRST},
        {"min-shard-kb", required_argument, NULL, OPT_SHARD},
        {"mode", required_argument, NULL, OPT_MODE}, {"grad-dtype", required_argument, NULL, OPT_DTYPE},
        {"explain", no_argument, NULL, OPT_EXPLAIN}, {"dump-lp", required_argument, NULL, OPT_DUMP},
        {"hosts", required_argument, NULL, OPT_HOSTS},
        CLI_MODEL_LONGOPTS,
        {"help", no_argument, NULL, 'h'},            {0, 0, 0, 0}};
    int c, rc = CP_OK;
    memset(o, 0, sizeof *o);
    cp_plan_opts_default(&o->p);
    o->hosts = 1;
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":hm:t:o:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(help, stdout); return -1;
        case 'm': o->model = optarg; break;
        case 't': o->topo = optarg; break;
        case 'o': o->out = optarg; break;
        case OPT_COMPUTE: rc = cli_parse_positive("plan", "--compute-ms", optarg, 1e7, &o->p.pred.compute_ms); break;
        case OPT_BUCKET: rc = cli_parse_positive("plan", "--bucket-mb", optarg, 65536, &o->p.pred.bucket_mb); break;
        case OPT_FIRST: rc = cli_parse_positive("plan", "--first-bucket-mb", optarg, 65536, &o->p.pred.first_bucket_mb); break;
        case OPT_SHARD: rc = cli_parse_positive("plan", "--min-shard-kb", optarg, 1 << 22, &o->p.min_shard_kb); break;
        case OPT_MODE:
            if (strcmp(optarg, "coarse") == 0)
                o->p.mode = CP_PLAN_COARSE;
            else if (strcmp(optarg, "proxy") == 0)
                o->p.mode = CP_PLAN_PROXY;
            else
                rc = cli_usage("plan", "--mode: expected coarse or proxy, got '%s'", optarg);
            break;
        case OPT_DTYPE: rc = cli_parse_dtype("plan", "--grad-dtype", optarg, &o->p.pred.grad_bytes); break;
        case OPT_EXPLAIN: o->explain = 1; break;
        case OPT_DUMP: o->p.dump_lp = optarg; break;
        case OPT_HOSTS: rc = cli_parse_hosts("plan", optarg, &o->hosts); break;
        case ':': return cli_usage("plan", "option '%s' needs a value", argv[optind - 1]);
        default:
            if ((rc = cli_model_option("plan", c, optarg, &o->p.pred)) < 0)
                return cli_usage("plan", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_usage("plan", "unexpected argument '%s'", argv[optind]);
    if (!o->model || !o->topo || !o->out)
        return cli_usage("plan", "-m MODEL, -t TOPO and -o PLAN.json are required");
    if (cp_same_file(o->out, o->model) || cp_same_file(o->out, o->topo))
        return cli_usage("plan", "-o %s would overwrite an input", o->out);
    if (o->p.dump_lp && (cp_same_file(o->p.dump_lp, o->model) || cp_same_file(o->p.dump_lp, o->topo)))
        return cli_usage("plan", "--dump-lp %s would overwrite an input", o->p.dump_lp);
    return CP_OK;
}

static void print_summary(const opts *o, const cp_plan *p, FILE *f)
{
    double total = 0;
    int k, nf = 0, shown = o->explain ? p->nbind : (p->nbind < 3 ? p->nbind : 3);
    for (k = 0; k < CP_FAMS; k++) {
        total += p->fam_bytes[k];
        nf += p->fams.f[k].available;
    }
    fprintf(f, "plan: %s on %s (%d GPUs), %d buckets, %d route families in %d groups\n",
            p->model->name, p->topo->name, p->topo->ngpus, p->nb, nf, p->fams.ngroups);
    fprintf(f, "predicted iteration %.3f ms (compute %.3f, exposed %.3f); every bucket "
               "all-reduced: %.3f ms; LP optimum %.3f ms; lower bound %.3f ms\n",
            p->iteration_ms, p->compute_ms, p->iteration_ms - p->compute_ms,
            p->allreduce_ms, p->lp_iteration_ms, p->lower_bound_ms);
    if (p->pool_ms >= 0)
        fprintf(f, "every bucket through the CXL pool: %.3f ms\n", p->pool_ms);
    if (p->lp_gave_up[0])
        fprintf(f, "the LP found no optimum (%s): every bucket on one route family\n",
                p->lp_gave_up);
    fprintf(f, "split layer m = %d: layers before it go mostly to AllReduce among the GPUs\n",
            p->split_layer);
    fprintf(f, "bytes:");
    for (k = 0; k < CP_FAMS; k++)
        if (p->fam_bytes[k] > 0)
            fprintf(f, " %s %.1f%%", cp_fam_name((cp_fam_kind)k), 100 * p->fam_bytes[k] / total);
    fputc('\n', f);
    if (shown)
        fprintf(f, "binding (what one more GB/s would save per iteration):\n");
    for (k = 0; k < shown; k++) {
        char name[200];
        cli_res_name(p->topo, p->bind[k].res, name, sizeof name);
        fprintf(f, "  %-40s %8.2f GB/s  %9.4f ms\n", name, p->bind[k].gbs, p->bind[k].save_ms);
    }
    if (o->explain) {
        for (k = 0; k < CP_FAMS; k++) {
            const cp_family *fa = &p->fams.f[k];
            if (fa->available)
                fprintf(f, "family %-10s group %d, %8.2f GB/s alone, latency %.2f us\n",
                        cp_fam_name((cp_fam_kind)k), fa->group, fa->gbs, fa->lat_us);
            else
                fprintf(f, "family %-10s unavailable: %s\n", cp_fam_name((cp_fam_kind)k),
                        fa->why_not);
        }
        fprintf(f, "LP: %d rows, %d columns, %d simplex iterations, %.3f s\n", p->lp_rows,
                p->lp_cols, p->lp_iters, p->lp_seconds);
    }
}

/* Content hash of a file, for the plan's provenance. */
static int file_hash(const char *path, unsigned long long *h, cp_err *e)
{
    char *text;
    size_t len;
    int rc = cp_read_file(path, &text, &len, e);
    if (rc)
        return rc;
    *h = cp_hash64(text, len);
    free(text);
    return CP_OK;
}

static int write_plan(const opts *o, const cp_plan *p, cp_err *e)
{
    cp_plan_inputs in;
    cp_outfile out;
    json_t *root;
    int rc;
    memset(&in, 0, sizeof in);
    in.model_path = o->model;
    in.topo_path = o->topo;
    in.hosts = o->hosts;
    if ((rc = file_hash(o->model, &in.model_hash, e)) || (rc = file_hash(o->topo, &in.topo_hash, e)))
        return rc;
    if ((rc = cp_plan_check_waits(p, e)))
        return rc == CP_EINPUT ? cp_fail(e, CP_EINTERNAL, "refusing to write: %s", e->msg) : rc;
    root = cp_plan_to_json(p, &in);
    if (!root)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    rc = cp_out_open(&out, o->out, e);
    if (rc == CP_OK) {
        if (json_dumpf(root, out.f, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) ||
            fputc('\n', out.f) == EOF) {
            cp_out_abort(&out);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", o->out);
        } else {
            rc = cp_out_commit(&out, e);
        }
    }
    json_decref(root);
    return rc;
}

static int run(const opts *o, cp_err *e)
{
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_predictor pr;
    cp_plan p;
    int rc, have_pr = 0, have_plan = 0;
    if ((rc = cp_model_load(o->model, &m, e)) ||
        (rc = cp_topo_load_hosts(o->topo, o->hosts, &t, e)))
        goto done;
    if ((rc = cli_blame(cp_predictor_init(&pr, m, t, &o->p.pred, e), e, o->model)))
        goto done;
    have_pr = 1;
    if ((rc = cp_plan_build(&pr, &o->p, &p, e)))
        goto done;
    have_plan = 1;
    rc = write_plan(o, &p, e);
    if (rc == CP_OK)
        print_summary(o, &p, strcmp(o->out, "-") == 0 ? stderr : stdout);
done:
    if (have_plan)
        cp_plan_free(&p);
    if (have_pr)
        cp_predictor_free(&pr);
    cp_model_free(m);
    cp_topo_free(t);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    opts o;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? CP_OK : rc;
    cp_err_clear(&e);
    return cli_report(run(&o, &e), &e);
}
