/*
 * cmd_plan.c - `coarse-plan plan`: solve the routing LP, write the plan
 * atomically, print the predicted time and what binds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/plan_llm.h"
#include "cli/progress.h"
#include "cli/summary.h"
#include "core/fileio.h"
#include "core/units.h"
#include "load/load.h"
#include "out/plan_write.h"
#include "plan/planner.h"

static const cli_usage_text usage = {
    "usage: coarse-plan plan -m MODEL -t TOPO -o PLAN.json [OPTIONS]\n",
    "Plan COARSE gradient synchronisation: for every gradient bucket, the share of\n"
    "its bytes on each route family (AllReduce among the GPUs, memory-device\n"
    "proxies sharded for bandwidth, the lowest-latency proxy, decentralised\n"
    "proxies with memory-side rings, the CPU parameter server), chosen by a\n"
    "linear program (GLPK) so that the iteration ends soonest, given when each\n"
    "bucket is ready, that each route family works through its buckets in\n"
    "order, and that the next forward pass needs the first layers first.\n"
    "Buckets are cut into equal shards of at least --min-shard-kb, the plan is\n"
    "checked for deadlock freedom and written atomically (docs/plan-format.md).\n",
    "With a large-model layout (--tp, --pp, --dp, ... or --framework megatron,\n"
    "fsdp, deepspeed, as predict takes them) the plan synchronises one pipeline\n"
    "stage's gradient buckets over that stage's data-parallel group, ready as\n"
    "the last micro-batch's backward produces them (docs/planner.md, \"Large-\n"
    "model layouts\").\n"
    "The model: docs/planner.md.\n"};

typedef struct opts {
    const char *model, *topo, *out;
    int explain, hosts;
    int stage;           /* --stage, -1: the slowest */
    cp_plan_opts p;
    cli_llm llm;         /* the layout options (predict_llm.h) */
    cp_framework dp_fw;  /* --framework ddp, ...: refused (plan buckets as DDP) */
} opts;

/* Why: a layout option puts plan in layout mode, as it does predict; the
 * options that shape a data-parallel plan's compute and buckets do not
 * apply there (the layout computes from the GEMMs and buckets as its
 * framework does), and are refused by name. */
static int layout_mode(const opts *o)
{
    return o->llm.given || o->llm.fw_given || o->llm.lay.recompute != CP_RC_NONE;
}

static int check_layout(opts *o)
{
    const cp_predict_opts *p = &o->p.pred;
    if (o->dp_fw != CP_FW_DDP && !(o->llm.fw_given && o->llm.lay.fw == CP_LLM_FSDP))
        return cli_usage("plan", "--framework %s: plan buckets gradients as DDP does; "
                         "--framework takes megatron, fsdp or deepspeed (a large-model "
                         "layout)", cp_framework_name(o->dp_fw));
    if (!layout_mode(o)) {
        if (o->stage >= 0)
            return cli_usage("plan", "--stage goes with a large-model layout (--tp, --pp, "
                             "--dp, ...)");
        return CP_OK;
    }
    if (p->compute_ms > 0 || p->bucket_mb != 25 || p->first_bucket_mb != 1 ||
        p->grad_bytes || p->accum_steps > 1 || p->jitter > 0 || p->bucket_view)
        return cli_usage("plan", "--compute-ms, --bucket-mb, --first-bucket-mb, --grad-dtype, "
                         "--accum-steps, --jitter and --bucket-view apply to data-parallel "
                         "plans, not to a large-model layout: it computes from the GEMMs and "
                         "buckets gradients as its framework does (docs/planner.md)");
    return CP_OK;
}

/* --mode coarse|proxy (value: cp_plan_mode). */
static int parse_mode(const char *cmd, char *arg, void *value)
{
    if (strcmp(arg, "coarse") == 0)
        *(cp_plan_mode *)value = CP_PLAN_COARSE;
    else if (strcmp(arg, "proxy") == 0)
        *(cp_plan_mode *)value = CP_PLAN_PROXY;
    else
        return cli_usage(cmd, "--mode: expected coarse or proxy, got '%s'", arg);
    return CP_OK;
}

/* --gpu-collective nccl|mpi (value: the planner's gpu_mpi flag). */
static int parse_gpu_collective(const char *cmd, char *arg, void *value)
{
    if (cp_gpu_collective_parse(arg, (int *)value))
        return cli_usage(cmd, "--gpu-collective: expected nccl or mpi, got '%s'", arg);
    return CP_OK;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    cp_predict_opts *p = &o->p.pred;
    const cli_option table[] = {
        OPT_STRING('m', "model", "FILE", &o->model, "model JSON"),
        OPT_STRING('t', "topo", "FILE", &o->topo,
                   "topology JSON (memory devices, a CXL pool optional)"),
        OPT_INT(0, "hosts", "N", &o->hosts, 1, CP_MAX_HOSTS,
                "replicate a single-host topology N times (its pool shared)"),
        OPT_STRING('o', "output", "FILE", &o->out, "plan JSON to write (\"-\" for standard output)"),
        OPT_DOUBLE(0, "compute-ms", "T", &p->compute_ms, 1e7,
                   "measured one-GPU iteration time (default: the model's)"),
        OPT_DOUBLE(0, "bucket-mb", "B", &p->bucket_mb, 65536,
                   "bucket cap, MiB (default 25), as DDP's bucket_cap_mb"),
        OPT_DOUBLE(0, "first-bucket-mb", "B", &p->first_bucket_mb, 65536,
                   "first bucket, MiB (default 1)"),
        OPT_DOUBLE(0, "min-shard-kb", "K", &o->p.min_shard_kb, 1 << 22,
                   "smallest shard, KiB (default 512)"),
        OPT_CALLBACK(0, "mode", "M", &o->p.mode, parse_mode,
                     "coarse (every route, default) or proxy (memory devices only)"),
        OPT_DTYPE(0, "grad-dtype", "T", &p->grad_bytes,
                  "gradient element type fp32, fp16 or bf16 (default: the model's)"),
        CLI_MODEL_OPTIONS(p),
        OPT_CALLBACK(0, "framework", "F", &o->llm, cli_llm_opt_framework,
                     "a large-model layout's framework: megatron (default with a layout), "
                     "fsdp or deepspeed"),
        CLI_LAYOUT_OPTIONS(&o->llm),
        OPT_INT(0, "stage", "R", &o->stage, 0, 1 << 20,
                "with a layout: the pipeline stage whose gradients are planned (default: "
                "the slowest, whose step ends the iteration)"),
        OPT_FLAG(0, "explain", &o->explain,
                 "every binding link and reducer with what one more GB/s on it would save per "
                 "iteration (from the LP duals), and the bytes each route family carries"),
        OPT_STRING(0, "dump-lp", "FILE", &o->p.dump_lp, "also write the LP in CPLEX LP format"),
        OPT_CALLBACK(0, "gpu-collective", "C", &o->p.gpu_mpi, parse_gpu_collective,
                     "the GPU-side family: nccl (default) or mpi, MPI AllReduce staged through "
                     "host memory, as the COARSE paper ran it"),
        CLI_QUIET_OPTION("no progress meter on a terminal's standard error"), /* the LP's */
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    cp_plan_opts_default(&o->p);
    o->hosts = 1;
    o->stage = -1;
    cli_llm_bind(&o->llm, &o->dp_fw);
    if ((rc = cli_parse("plan", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("plan", argc, argv, first)))
        return rc;
    if (!o->model || !o->topo || !o->out)
        return cli_usage("plan", "-m MODEL, -t TOPO and -o PLAN.json are required");
    if (cp_same_file(o->out, o->model) || cp_same_file(o->out, o->topo))
        return cli_usage("plan", "-o %s would overwrite an input", o->out);
    if (o->p.dump_lp && (cp_same_file(o->p.dump_lp, o->model) || cp_same_file(o->p.dump_lp, o->topo)))
        return cli_usage("plan", "--dump-lp %s would overwrite an input", o->p.dump_lp);
    return check_layout(o);
}

/* Why: a layout's plan is for one stage and one group; the summary says
 * which, what the LP saw, and predict's iteration beside the plan's. */
static void print_layout(const cli_plan_llm *s, FILE *f)
{
    const cp_plan_layout *L = &s->info;
    double gb = (double)s->sg.params * s->sg.elem_bytes;
    fprintf(f, "layout: %s, TP %d x CP %d x DP %d x PP %d", L->framework, L->tp, L->cp, L->dp,
            L->pp);
    if (L->vp > 1)
        fprintf(f, " (%d chunks a stage)", L->vp);
    fprintf(f, ", micro-batch %d, global batch %d; predicted iteration %.3f ms (auto, %s)\n",
            L->mbs, L->gbs, L->iteration_ms, s->dp_alg ? s->dp_alg : "-");
    fprintf(f, "planned: stage %d of %d (%s), %lld parameters a GPU, %.3f GB of %s gradients "
               "in %d bucket%s (%d a chunk) of up to %.0f parameters; its %s group: %d GPU%s on "
               "%d host%s\n", L->stage, L->pp,
            L->stage == s->slowest ? "the slowest" : "--stage", L->params, gb / 1e9,
            s->sg.elem_bytes == 4 ? "fp32" : "bf16", s->sg.model->ntensors,
            cp_s(s->sg.model->ntensors), s->sg.per_chunk, L->bucket_params,
            L->group[2] ? "data x context-parallel" : "data-parallel", L->group_gpus,
            cp_s(L->group_gpus), L->group_hosts, cp_s(L->group_hosts));
}

static void print_summary(const opts *o, const cp_plan *p, FILE *f)
{
    double total = 0;
    int k, nf = 0, shown = o->explain ? p->nbind : (p->nbind < 3 ? p->nbind : 3);
    for (k = 0; k < CP_FAMS; k++) {
        total += p->fam_bytes[k];
        nf += p->fams.f[k].available;
    }
    fprintf(f, "plan: %s on %s (%d GPU%s), %d bucket%s, %d route famil%s in %d group%s\n",
            p->model->name, p->topo->name, p->topo->ngpus, cp_s(p->topo->ngpus), p->nb,
            cp_s(p->nb), nf, nf == 1 ? "y" : "ies", p->fams.ngroups, cp_s(p->fams.ngroups));
    cli_calib_note(p->topo, "", f);
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

static int write_plan(const opts *o, const cp_plan *p, const cp_plan_layout *layout,
                      cp_err *e)
{
    cp_plan_inputs in;
    cp_outfile out;
    json_t *root;
    int rc;
    memset(&in, 0, sizeof in);
    in.model_path = o->model;
    in.topo_path = o->topo;
    in.layout = layout;
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

/* A plan numbers its GPUs host-major, as many on each host
 * (docs/plan-format.md, topology.hosts): a runtime places GPU g on host
 * g / (G / hosts).  A topology file whose GPUs are listed otherwise would
 * give a plan that places them wrongly, so it is refused at its nodes. */
static int host_major(const cp_topo *t, cp_err *e)
{
    int g, per = t->ngpus / t->nhosts;
    for (g = 0; g < t->ngpus; g++)
        if (t->ngpus % t->nhosts || t->nodes[t->gpus[g]].host != g / per)
            return cp_fail_at(e, CP_EINPUT, t->src_path, t->nodes[t->gpus[g]].src_line, 0, NULL,
                              "a plan needs the GPUs listed host by host, as many on each of "
                              "the %d hosts; GPU %s (host %d) is GPU %d of %d", t->nhosts,
                              t->nodes[t->gpus[g]].id, t->nodes[t->gpus[g]].host, g,
                              t->ngpus);
    return CP_OK;
}

static int run(const opts *o, cp_err *e)
{
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_predictor pr;
    cp_plan p;
    cp_plan_opts po = o->p;
    cli_meter mt;
    cli_plan_llm lay;
    int rc, have_pr = 0, have_plan = 0, have_lay = 0;
    if (layout_mode(o)) {
        /* the stage's buckets are the tensors, one a bucket (cap 0); no
         * DDP copies (Megatron reduces its buckets in place) */
        if ((rc = cli_plan_llm_setup(&o->llm, o->model, o->topo, o->hosts, o->stage, &lay, e)))
            return rc;
        have_lay = 1;
        po.pred.bucket_mb = po.pred.first_bucket_mb = 0;
        po.pred.framework = CP_FW_HOROVOD;
        if ((rc = cp_predictor_init(&pr, lay.sg.model, lay.machine, &po.pred, e)))
            goto done;
        have_pr = 1;
        cli_plan_llm_timeline(&lay, &pr.comp);
    } else {
        if ((rc = cp_model_load(o->model, &m, e)) ||
            (rc = cp_topo_load_machine(o->topo, 0, o->hosts, &t, e)) || (rc = host_major(t, e)))
            goto done;
        if ((rc = cli_blame(cp_predictor_init(&pr, m, t, &o->p.pred, e), e, o->model)))
            goto done;
        have_pr = 1;
    }
    cli_meter_start(&mt, "plan: LP", 1);
    po.progress = cli_meter_progress(&mt); /* buckets planned, window by window */
    rc = cp_plan_build(&pr, &po, &p, e);
    cli_meter_end(&mt);
    if (rc)
        goto done;
    have_plan = 1;
    rc = write_plan(o, &p, have_lay ? &lay.info : NULL, e);
    if (rc == CP_OK && have_lay)
        print_layout(&lay, strcmp(o->out, "-") == 0 ? stderr : stdout);
    if (rc == CP_OK)
        print_summary(o, &p, strcmp(o->out, "-") == 0 ? stderr : stdout);
done:
    if (have_plan)
        cp_plan_free(&p);
    if (have_pr)
        cp_predictor_free(&pr);
    if (have_lay)
        cli_plan_llm_free(&lay);
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
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    return cli_report(run(&o, &e), &e);
}
