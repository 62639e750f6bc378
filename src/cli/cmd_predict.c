/*
 * cmd_predict.c - `coarse-plan predict`: iteration time per strategy, the
 * bucket timeline, and the bucket-size advisor.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/pool_table.h"
#include "cli/predict_llm.h"
#include "cli/summary.h"
#include "core/fileio.h"
#include "core/units.h"
#include "load/load.h"
#include "plan/plan_predict.h"
#include "predict/memory.h"

static const cli_usage_text usage = {
    "usage: coarse-plan predict -m MODEL -t TOPO [OPTIONS]\n",
    "Predict one data-parallel training iteration on the machine for each gradient\n"
    "synchronisation strategy: iteration, compute, communication and exposed\n"
    "communication (what overlap with backward did not hide), and the speed-up\n"
    "over ring AllReduce.\n",
    "The model and its assumptions: docs/model.md.\n"};

typedef struct opts {
    const char *model, *topo;
    int hosts, gpus, json, csv, timeline, explicit_list, whatif, scaling;
    const char *svg;         /* --timeline-svg FILE */
    int frameworks;          /* --frameworks: compare them (frameworks.c) */
    int bucket_given;         /* --bucket-mb was given */
    cp_strategy list[CP_STRATEGIES];
    int nlist;
    double sweep_lo, sweep_hi;
    cp_predict_opts p;
    cli_llm llm;             /* the large-model layout options (predict_llm.h) */
} opts;

/* -s LIST (value: opts): the strategies in the order to print. */
static int parse_list(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    char buf[256], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", arg);
    o->nlist = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        cp_strategy s;
        int k;
        if (cp_strategy_parse(tok, &s))
            return cli_usage(cmd, "-s: unknown strategy '%s' (ring, tree, auto, hier, ps, "
                             "proxy, coarse, best, pool)", tok);
        for (k = 0; k < o->nlist; k++)
            if (o->list[k] == s)
                return cli_usage(cmd, "-s: '%s' given twice", tok);
        o->list[o->nlist++] = s;
    }
    if (o->nlist == 0)
        return cli_usage(cmd, "-s: no strategy given");
    o->explicit_list = 1;
    return CP_OK;
}

/* --sweep-bucket MIN:MAX (value: opts), in MiB. */
static int parse_sweep(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    char lo[64], hi[64];
    const char *colon = strchr(arg, ':');
    if (!colon || (size_t)(colon - arg) >= sizeof lo || strlen(colon + 1) >= sizeof hi)
        return cli_usage(cmd, "--sweep-bucket: expected MIN:MAX in MiB, got '%s'", arg);
    memcpy(lo, arg, (size_t)(colon - arg));
    lo[colon - arg] = '\0';
    snprintf(hi, sizeof hi, "%s", colon + 1);
    if (cp_parse_double(lo, &o->sweep_lo) || cp_parse_double(hi, &o->sweep_hi) ||
        !(o->sweep_lo > 0) || o->sweep_hi < o->sweep_lo || o->sweep_hi > 65536)
        return cli_usage(cmd, "--sweep-bucket: expected 0 < MIN <= MAX <= 65536 (MiB), "
                         "got '%s'", arg);
    return CP_OK;
}

/* --optimizer adam|adamw|sgd (value: cp_predict_opts.optimizer). */
static int parse_optimizer(const char *cmd, char *arg, void *value)
{
    int *optimizer = value;
    if (strcmp(arg, "adam") == 0 || strcmp(arg, "adamw") == 0)
        *optimizer = CP_OPT_ADAM;
    else if (strcmp(arg, "sgd") == 0)
        *optimizer = CP_OPT_SGD;
    else
        return cli_usage(cmd, "--optimizer: expected adam, adamw or sgd, got '%s'", arg);
    return CP_OK;
}

/* A large-model layout (predict_llm.h): what applies to data-parallel
 * prediction only is refused, by name. */
static int check_layout(opts *o)
{
    static const char *const dp_only = "apply to data-parallel prediction, not to a "
                                       "large-model layout (docs/model.md)";
    o->llm.given = 1;
    if (o->frameworks || o->scaling || o->sweep_hi > 0 || o->whatif || o->timeline)
        return cli_usage("predict", "--frameworks, --scaling, --sweep-bucket, --what-if and "
                                    "--timeline %s", dp_only);
    if (o->p.compute_ms > 0 || o->p.accum_steps > 1 || o->p.activation_gb > 0 ||
        o->p.jitter > 0 || o->bucket_given || o->p.offload || o->p.fsdp_sharding)
        return cli_usage("predict", "--compute-ms, --accum-steps, --activation-gb, --jitter, "
                                    "--bucket-mb, --offload and --fsdp-sharding %s: layouts "
                                    "compute from the GEMMs and take --mbs and --gbs", dp_only);
    if (o->json + o->csv > 1)
        return cli_usage("predict", "--json and --csv do not combine");
    if (o->p.framework != CP_FW_DDP && o->p.framework != CP_FW_FSDP)
        return cli_usage("predict", "--framework %s is data-parallel only; a layout takes "
                                    "megatron, fsdp or deepspeed",
                         cp_framework_name(o->p.framework));
    if (o->svg && (cp_same_file(o->svg, o->model) || cp_same_file(o->svg, o->topo)))
        return cli_usage("predict", "--timeline-svg %s would overwrite an input", o->svg);
    return CP_OK;
}

/* The options that do not combine, once all are parsed: the output forms,
 * and what --tp, --activation-gb, --what-if, --scaling, --sweep-bucket,
 * --timeline-svg and --frameworks each go with.  0 or a usage error. */
static int check_combinations(opts *o)
{
    if (!o->model || !o->topo)
        return cli_usage("predict", "-m MODEL and -t TOPO are required");
    if (o->json + o->csv + o->timeline > 1)
        return cli_usage("predict", "--json, --csv and --timeline do not combine");
    if (o->llm.given || o->llm.lay.recompute == CP_RC_SELECTIVE ||
        o->llm.lay.recompute == CP_RC_AUTO || (o->llm.fw_given && o->llm.lay.fw != CP_LLM_FSDP))
        return check_layout(o);
    if (o->llm.lay.recompute == CP_RC_FULL) /* the data-parallel activation estimate's */
        o->p.recompute = 1;
    if (o->p.activation_gb > 0 && (o->p.recompute || o->p.flash_attn || o->p.act_bytes))
        return cli_usage("predict", "--recompute, --flash-attn and --activation-dtype shape "
                                    "the activation estimate, which --activation-gb replaces");
    if (o->whatif && (o->json || o->csv || o->timeline || o->sweep_hi > 0))
        return cli_usage("predict", "--what-if goes with the plain table only");
    if (o->scaling && (o->json || o->timeline || o->sweep_hi > 0 || o->whatif))
        return cli_usage("predict", "--scaling goes with the plain table or --csv only");
    if (o->sweep_hi > 0 && o->p.framework == CP_FW_FSDP)
        return cli_usage("predict", "--sweep-bucket is for ddp and zero2 buckets; fsdp "
                         "gathers and reduces one layer at a time");
    if (o->sweep_hi > 0 && o->p.framework == CP_FW_MIRRORED)
        return cli_usage("predict", "--sweep-bucket is for ddp and zero2 buckets; mirrored "
                         "all-reduces one pack of every gradient");
    if (o->svg && (o->scaling || o->sweep_hi > 0))
        return cli_usage("predict", "--timeline-svg charts one iteration per strategy, not "
                         "--scaling or --sweep-bucket");
    if (o->svg && (cp_same_file(o->svg, o->model) || cp_same_file(o->svg, o->topo)))
        return cli_usage("predict", "--timeline-svg %s would overwrite an input", o->svg);
    if (o->frameworks) { /* every framework: what picks one does not apply */
        if (o->json || o->timeline || o->whatif || o->scaling || o->sweep_hi > 0 || o->svg)
            return cli_usage("predict", "--frameworks goes with the plain table or --csv only");
        if (o->p.framework != CP_FW_DDP || o->p.fsdp_sharding)
            return cli_usage("predict", "--frameworks compares every framework and FSDP "
                                        "sharding: drop --framework and --fsdp-sharding");
        return CP_OK;
    }
    return cli_settle_framework("predict", &o->p, o->bucket_given);
}

/* The option table, parsed into o, then what does not combine; CP_OK,
 * CLI_HELP or a usage error.  Over 80 lines because it is the table: one
 * declaration per option with its help beside it (45 of them), which reads
 * best whole. */
static int parse_opts(int argc, char **argv, opts *o)
{
    cp_predict_opts *p = &o->p;
    const cli_option table[] = {
        OPT_STRING('m', "model", "FILE", &o->model, "model JSON"),
        OPT_STRING('t', "topo", "FILE", &o->topo, "topology JSON"),
        OPT_CALLBACK('s', "strategies", "LIST", o, parse_list,
                     "comma-separated, in the order to print (default: every one this machine "
                     "can run): ring, tree, auto (what NCCL would pick per bucket), hier "
                     "(Horovod hierarchical), collnet (in-network reduction, SHARP), ps "
                     "(parameter server in CPU memory), proxy and coarse (through memory "
                     "devices), best (fastest per bucket), mpi (MPI AllReduce staged through host "
                     "memory, named only), coarse-mpi (the COARSE planner with MPI), pool (through the "
                     "shared CXL pool, docs/pool.md)"),
        OPT_INT(0, "hosts", "N", &o->hosts, 1, CP_MAX_HOSTS,
                "replicate a single-host topology N times"),
        OPT_INT(0, "gpus", "G", &o->gpus, 1, CLI_MAX_GPUS,
                "use the first G GPUs of each host (as CUDA_VISIBLE_DEVICES=0..G-1); default: "
                "all"),
        OPT_DOUBLE(0, "compute-ms", "T", &p->compute_ms, 1e7,
                   "measured one-GPU iteration time (forward, backward, optimizer), split over "
                   "layers by FLOPs or parameters; default: the model's compute block, else an "
                   "estimate from its FLOPs and batch and the GPUs' tflops"),
        OPT_DOUBLE(0, "mfu", "F", &p->mfu, 1, "FLOPs utilisation for that estimate (default 0.5)"),
        OPT_DOUBLE(0, "compute-scale", "F", &p->compute_scale, 1e3,
                   "multiply compute by F (what-if: 0.3 for mixed precision)"),
        OPT_CALLBACK(0, "framework", "F", &o->llm, cli_llm_opt_framework,
                     "a large-model layout's: megatron (Megatron-Core: SP, distributed "
                     "optimizer, overlapped gradient reduce-scatter and parameter "
                     "all-gather), fsdp (FSDP2 with TP and PP as torchtitan composes them) or "
                     "deepspeed (ZeRO-1/2/3 with its pipeline engine); without a layout: ddp "
                     "(PyTorch DistributedDataParallel, default), horovod, zero1 (DeepSpeed "
                     "ZeRO stage 1), zero2, fsdp (PyTorch FSDP), zero3 or mirrored (TensorFlow "
                     "MirroredStrategy)"),
        CLI_FRAMEWORK_TUNING(p),
        CLI_LAYOUT_OPTIONS(&o->llm),
        OPT_DOUBLE_SEEN(0, "bucket-mb", "B", &p->bucket_mb, 65536, &o->bucket_given,
                        "DDP bucket_cap_mb (MiB, default 25); ZeRO-1, -2 and -3 reduce buckets "
                        "(default 5e8 elements)"),
        OPT_DOUBLE(0, "first-bucket-mb", "B", &p->first_bucket_mb, 65536,
                   "DDP first bucket (MiB, default 1)"),
        OPT_DOUBLE(0, "apex-message-size", "N", &p->apex_elems, 1e12,
                   "apex DDP message_size: every bucket closes at N gradient elements (not "
                   "bytes; apex's default 1e7)"),
        OPT_DOUBLE(0, "fusion-mb", "B", &p->fusion_mb, 65536,
                   "Horovod fusion threshold (MiB, default 64)"),
        OPT_DOUBLE(0, "cycle-ms", "C", &p->cycle_ms, 1e5, "Horovod cycle time (ms, default 5)"),
        OPT_DTYPE(0, "grad-dtype", "T", &p->grad_bytes,
                  "gradient element type fp32, fp16 or bf16 (default: the model's)"),
        CLI_MODEL_OPTIONS(p),
        OPT_CALLBACK(0, "optimizer", "O", &p->optimizer, parse_optimizer,
                     "adam (or adamw; default) or sgd (with momentum): the optimizer states of "
                     "the memory line (model states per GPU: weights, gradients, optimizer, "
                     "buffers)"),
        OPT_DOUBLE(0, "activation-gb", "A", &p->activation_gb, 1e6,
                   "activations of one micro-batch on one GPU (GB, as measured), added to the "
                   "memory line's model states; default: estimated from the model's "
                   "transformer dimensions and batch when it gives them"),
        OPT_FLAG(0, "flash-attn", &p->flash_attn,
                 "that estimate with fused attention (FlashAttention, SDPA): no sequence x "
                 "sequence scores kept"),
        OPT_DTYPE(0, "activation-dtype", "T", &p->act_bytes,
                  "that estimate's element type: fp16 or bf16 for autocast over fp32 weights "
                  "(default: the model's)"),
        OPT_FLAG(0, "json", &o->json,
                 "{\"model\",\"topology\",\"gpus\",\"strategies\":[{\"name\",\n"
                 "\"iteration_ms\",\"compute_ms\",\"comm_ms\",\n\"exposed_comm_ms\"}]}"),
        OPT_FLAG(0, "csv", &o->csv, "the same as CSV with a header"),
        OPT_FLAG(0, "timeline", &o->timeline,
                 "CSV of every bucket: when it was ready, started, finished"),
        OPT_STRING(0, "timeline-svg", "FILE", &o->svg,
                   "also draw each strategy's iteration as a Gantt chart: compute and "
                   "communication lanes (FILE written whole)"),
        OPT_FLAG(0, "what-if", &o->whatif,
                 "also: the first strategy's iteration with each kind of link twice as fast, "
                 "every link, and compute twice as fast (which bus, or the GPUs, the iteration "
                 "waits for); across hosts, with the network reducing (SHARP)"),
        OPT_CALLBACK(0, "sweep-bucket", "MIN:MAX", o, parse_sweep,
                     "iteration time for bucket caps (MiB) from MIN to MAX (powers of two, "
                     "plus 25) and the best bucket_cap_mb (DDP) or reduce bucket (ZeRO-1, -2, "
                     "-3)"),
        OPT_FLAG(0, "frameworks", &o->frameworks,
                 "the first strategy (default auto) under ddp, horovod, zero1, zero2, every "
                 "FSDP sharding, zero3 and mirrored: iteration time, model states per GPU, "
                 "whether they fit, and the fastest that fits (plain table or --csv)"),
        OPT_FLAG(0, "scaling", &o->scaling,
                 "the first strategy (default auto) on 1, 2, 4, .. GPUs of one host up to all "
                 "of them (or --gpus), then on 2, 4, .. hosts up to --hosts: iteration, "
                 "speed-up over one GPU and scaling efficiency at the same per-GPU batch"),
        CLI_QUIET_OPTION("no progress meter (drawn on a terminal's standard error by --scaling "
                         "and --sweep-bucket)"),
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    o->hosts = 1;
    cp_predict_opts_default(&o->p);
    cli_llm_bind(&o->llm, &o->p.framework);
    if ((rc = cli_parse("predict", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("predict", argc, argv, first)))
        return rc;
    return check_combinations(o);
}

/* Default strategy list: everything this machine can run, predicted once
 * (res[k] for list[k], with the bucket runs when keep_runs). */
static int default_list(const cp_predictor *pr, opts *o, int keep_runs, cp_prediction *res,
                        cp_err *e)
{
    static const cp_strategy all[] = {CP_S_RING,  CP_S_TREE,  CP_S_AUTO,   CP_S_HIER, CP_S_COLLNET,
                                      CP_S_PS,    CP_S_PROXY, CP_S_COARSE, CP_S_BEST, CP_S_POOL};
    size_t k;
    o->nlist = 0;
    for (k = 0; k < sizeof all / sizeof all[0]; k++) {
        int rc = cp_predict_any(pr, all[k], &o->p, 0, keep_runs, &res[o->nlist], e);
        if (rc)
            return rc;
        if (res[o->nlist].available)
            o->list[o->nlist++] = all[k];
        else
            cp_prediction_free(&res[o->nlist]);
    }
    return CP_OK;
}

/* The header's name for an FSDP sharding strategy. */
static const char *fsdp_title(int sharding)
{
    switch (sharding & (CP_SHARD_GRAD_OP | CP_SHARD_HYBRID)) {
    case CP_SHARD_GRAD_OP: return "FSDP shard grad op";
    case CP_SHARD_HYBRID: return "FSDP hybrid shard";
    case CP_SHARD_GRAD_OP | CP_SHARD_HYBRID: return "FSDP hybrid shard, grad op";
    default: return "FSDP full shard";
    }
}

/* Eq. M1 as a header line: model states per GPU, and whether they fit. */
static void print_memory(const opts *o, const cp_mem *m)
{
    printf("# model states per GPU: %.3f GB (weights %.3f, gradients %.3f, %s %.3f, "
           "buffers %.3f",
           m->states / 1e9, m->weights / 1e9, m->grads / 1e9,
           o->p.optimizer == CP_OPT_SGD ? "SGD momentum" : "Adam", m->optim / 1e9,
           m->buffers / 1e9);
    if (cp_framework_sharded(o->p.framework) && !cp_framework_zero12(o->p.framework))
        printf(", gathered %.3f", m->gathered / 1e9);
    printf(")");
    if (m->activations > 0)
        printf(" + %.3f GB of activations%s%s%s", m->activations / 1e9,
               m->act_estimated ? " (estimated, eq. M2" : "",
               !m->act_estimated ? "" : o->p.recompute && o->p.flash_attn
                                        ? ", recomputed, fused attention"
                                    : o->p.recompute  ? ", recomputed"
                                    : o->p.flash_attn ? ", fused attention"
                                                      : "",
               m->act_estimated ? ")" : "");
    if (m->capacity > 0)
        printf(" of %.1f GB%s", m->capacity / 1e9,
               m->total > m->capacity ? ": does not fit" : "");
    else /* say why there is no verdict (an import without --gpu or --gpu-memory-gb) */
        printf("; GPU memory unknown (no capacity_gb on the GPUs), so no fit verdict");
    printf(m->activations > 0 ? "\n" : "; activations not counted\n");
}

static void print_table(const opts *o, const cp_predictor *pr, const cp_prediction *res,
                        double ring_ms, const cp_mem *mem)
{
    int k;
    printf("# predict: %s on %s (%d GPU%s), %s, compute %.2f ms (one GPU, %s)",
           pr->model->name, pr->topo->name, pr->topo->ngpus, cp_s(pr->topo->ngpus),
           o->p.framework == CP_FW_HOROVOD ? "Horovod fusion"
           : o->p.framework == CP_FW_ZERO2 ? "ZeRO-2 (reduce-scatter, all-gather)"
           : o->p.framework == CP_FW_ZERO1 ? "ZeRO-1 (reduce-scatter after backward, all-gather)"
           : o->p.framework == CP_FW_FSDP  ? fsdp_title(o->p.fsdp_sharding)
           : o->p.framework == CP_FW_ZERO3 ? "ZeRO-3 (prefetched gathers, reduce buckets)"
           : o->p.framework == CP_FW_MIRRORED ? "MirroredStrategy (one pack after backward)"
                                              : "DDP buckets",
           pr->single_ms, pr->compute_source);
    if (o->p.accum_steps > 1)
        printf(" x %d micro-batches", o->p.accum_steps);
    if (pr->copy_ms > 0)
        printf(" + %.2f ms %s", pr->copy_ms,
               o->p.framework == CP_FW_MIRRORED ? "packing and unpacking gradients"
                                                : "DDP gradient copies");
    if (pr->straggle_ms > 0)
        printf(" + %.2f ms waiting for the slowest GPU", pr->straggle_ms);
    printf("\n");
    cli_calib_note(pr->topo, "# ", stdout);
    print_memory(o, mem);
    printf("%-8s %12s %11s %10s %11s %9s\n", "strategy", "iteration_ms", "compute_ms",
           "comm_ms", "exposed_ms", "vs_ring");
    for (k = 0; k < o->nlist; k++) {
        const cp_prediction *p = &res[k];
        printf("%-8s %12.2f %11.2f %10.2f %11.2f %9.3f\n", cp_strategy_name(p->strategy),
               p->iteration_ms, p->compute_ms, p->comm_ms, p->exposed_ms,
               ring_ms > 0 ? ring_ms / p->iteration_ms : 0);
    }
}

static int print_json(const opts *o, const cp_predictor *pr, const cp_prediction *res,
                      const cp_mem *mem)
{
    json_t *root = json_object(), *arr = json_array();
    int k;
    json_object_set_new(root, "model", json_string(pr->model->name));
    json_object_set_new(root, "topology", json_string(pr->topo->name));
    json_object_set_new(root, "gpus", json_integer(pr->topo->ngpus));
    json_object_set_new(root, "framework", json_string(cp_framework_name(o->p.framework)));
    json_object_set_new(root, "model_states_gb", cli_real(mem->states / 1e9, 4));
    json_object_set_new(root, "activations_gb", mem->activations > 0
                                                    ? cli_real(mem->activations / 1e9, 4)
                                                    : json_null());
    json_object_set_new(root, "activations_estimated", json_boolean(mem->act_estimated));
    json_object_set_new(root, "max_batch",
                        mem->max_batch >= 0 ? json_integer((json_int_t)mem->max_batch)
                                            : json_null());
    json_object_set_new(root, "gpu_memory_gb",
                        mem->capacity > 0 ? cli_real(mem->capacity / 1e9, 2) : json_null());
    for (k = 0; k < o->nlist; k++) {
        json_t *s = json_object();
        json_object_set_new(s, "name", json_string(cp_strategy_name(res[k].strategy)));
        json_object_set_new(s, "iteration_ms", cli_real(res[k].iteration_ms, 4));
        json_object_set_new(s, "compute_ms", cli_real(res[k].compute_ms, 4));
        json_object_set_new(s, "comm_ms", cli_real(res[k].comm_ms, 4));
        json_object_set_new(s, "exposed_comm_ms", cli_real(res[k].exposed_ms, 4));
        json_array_append_new(arr, s);
    }
    json_object_set_new(root, "strategies", arr);
    return cli_dump_json(root, stdout);
}

static void print_csv(const opts *o, const cp_predictor *pr, const cp_prediction *res,
                      double ring_ms)
{
    int k;
    printf("model,topology,gpus,strategy,iteration_ms,compute_ms,comm_ms,exposed_comm_ms,"
           "speedup_vs_ring\n");
    for (k = 0; k < o->nlist; k++)
        printf("%s,%s,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f\n", pr->model->name, pr->topo->name,
               pr->topo->ngpus, cp_strategy_name(res[k].strategy), res[k].iteration_ms,
               res[k].compute_ms, res[k].comm_ms, res[k].exposed_ms,
               ring_ms > 0 ? ring_ms / res[k].iteration_ms : 0);
}

static void print_timeline(const opts *o, const cp_prediction *res)
{
    int k, i;
    printf("strategy,bucket,tensors,bytes,ready_ms,start_ms,finish_ms,algorithm,protocol\n");
    for (k = 0; k < o->nlist; k++)
        for (i = 0; i < res[k].nruns; i++) {
            const cp_bucket_run *r = &res[k].runs[i];
            printf("%s,%d,%d,%.0f,%.4f,%.4f,%.4f,%s,%s\n", cp_strategy_name(res[k].strategy), i,
                   r->ntensors, r->bytes, r->ready_ms, r->start_ms, r->finish_ms, r->how,
                   r->proto ? r->proto : "-");
        }
}

/* The largest reduce rate a network switch may have (the loader's bound):
 * a switch that sums at line rate, whatever the NICs bring. */
#define LINE_RATE_REDUCE_GBS 1e5

/* Every network switch of t (and of the host it replicates) sums data at
 * line rate: InfiniBand SHARP everywhere. */
static void give_sharp(cp_topo *t)
{
    int v;
    t->fabric_reduce_gbs = LINE_RATE_REDUCE_GBS;
    for (v = 0; v < t->nnodes; v++)
        if (t->nodes[v].kind == CP_NET_SWITCH)
            t->nodes[v].reduce_gbs = LINE_RATE_REDUCE_GBS;
    if (t->rep_base)
        t->rep_base->fabric_reduce_gbs = LINE_RATE_REDUCE_GBS;
}

/* Strategy s on machine t with options po, the model built for it and
 * dropped again: *ms and *exposed, *ms -1 when s cannot run there (the
 * reason in why, when given).  For the what-if and scaling tables. */
static int predict_on(const cp_model *m, const cp_topo *t, const cp_predict_opts *po,
                      cp_strategy s, double *ms, double *exposed, char *why, size_t whylen,
                      cp_err *e)
{
    cp_predictor pr;
    cp_prediction p;
    int rc = cp_predictor_init(&pr, m, t, po, e);
    *ms = *exposed = -1;
    if (rc)
        return rc;
    rc = cp_predict_any(&pr, s, po, 0, 0, &p, e);
    if (rc == CP_OK) {
        if (p.available) {
            *ms = p.iteration_ms;
            *exposed = p.exposed_ms;
        } else if (why) {
            snprintf(why, whylen, "%s", p.why_not);
        }
        cp_prediction_free(&p);
    }
    cp_predictor_free(&pr);
    return rc;
}

/* The iteration of strategy s on `t` after scaling `kind`'s links by f
 * (CP_LINK_KINDS: every kind) and compute by cscale, with in-network
 * reduction when sharp; negative when the strategy is then unavailable. */
static int whatif_one(const opts *o, const cp_model *m, const cp_topo *t, cp_strategy s,
                      int kind, double f, double cscale, int sharp, double *ms, cp_err *e)
{
    cp_topo *c = cp_topo_clone(t);
    cp_predict_opts po = o->p;
    double exposed;
    int k, rc;
    if (!c)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (k = 0; k < CP_LINK_KINDS; k++)
        if (k == kind || kind == CP_LINK_KINDS)
            cp_topo_scale_kind(c, (cp_link_kind)k, f);
    if (sharp)
        give_sharp(c);
    po.compute_scale *= cscale;
    rc = predict_on(m, c, &po, s, ms, &exposed, NULL, 0, e);
    cp_topo_free(c);
    return rc;
}

/* What-if table: every kind of link present twice as fast, all links twice
 * as fast, and compute twice as fast, for the first strategy asked: which
 * bus (or the GPUs) the iteration is waiting for. */
static int whatif(const opts *o, const cp_model *m, const cp_topo *t, const cp_prediction *now,
                  cp_err *e)
{
    cp_strategy s = now->strategy;
    int k, l, n, rc = CP_OK;
    double ms = 0;
    printf("# what if (strategy %s, %.2f ms now): each change alone\n", cp_strategy_name(s),
           now->iteration_ms);
    printf("%-24s %12s %10s %8s\n", "change", "iteration_ms", "saving_ms", "saving");
    for (k = 0; k <= CP_LINK_KINDS + 2 && rc == CP_OK; k++) {
        char label[64];
        if (k < CP_LINK_KINDS) {
            for (l = n = 0; l < t->nlinks; l++)
                n += t->links[l].kind == (cp_link_kind)k;
            if (n == 0)
                continue;
            snprintf(label, sizeof label, "%s x2 (%d link%s)",
                     cp_link_kind_name((cp_link_kind)k), n, cp_s(n));
            rc = whatif_one(o, m, t, s, k, 2, 1, 0, &ms, e);
        } else if (k == CP_LINK_KINDS) {
            snprintf(label, sizeof label, "every link x2");
            rc = whatif_one(o, m, t, s, CP_LINK_KINDS, 2, 1, 0, &ms, e);
        } else if (k == CP_LINK_KINDS + 1) {
            snprintf(label, sizeof label, "compute x0.5");
            rc = whatif_one(o, m, t, s, CP_LINK_KINDS, 1, 0.5, 0, &ms, e);
        } else {
            /* several hosts whose network does not reduce yet, and a strategy
             * that may take CollNet */
            if (t->nhosts < 2 || t->fabric_reduce_gbs > 0 ||
                (s != CP_S_AUTO && s != CP_S_BEST && s != CP_S_COLLNET))
                continue;
            snprintf(label, sizeof label, "network reduces (SHARP)");
            rc = whatif_one(o, m, t, s, CP_LINK_KINDS, 1, 1, 1, &ms, e);
        }
        if (rc == CP_OK && ms >= 0)
            printf("%-24s %12.2f %10.2f %7.2f%%\n", label, ms, now->iteration_ms - ms,
                   100 * (now->iteration_ms - ms) / now->iteration_ms);
        else if (rc == CP_OK)
            printf("%-24s %12s\n", label, "unavailable");
    }
    return rc == CP_OK ? cli_pool_whatif(m, t, &o->p, e) : rc;
}

/* Strategy s on the file's first `gpus` GPUs per host, `hosts` times over:
 * *ms and *exposed, or CP_EINPUT with the reason when s cannot run there. */
static int scaling_one(const opts *o, const cp_model *m, cp_strategy s, int gpus, int hosts,
                       double *ms, double *exposed, char *why, size_t len, cp_err *e)
{
    cp_topo *t;
    int rc = cp_topo_load_machine(o->topo, gpus, hosts, &t, e);
    if (rc)
        return rc;
    rc = cli_blame(predict_on(m, t, &o->p, s, ms, exposed, why, len, e), e, o->model);
    cp_topo_free(t);
    return rc;
}

/* Scaling table: 1, 2, 4, .. GPUs of one host up to G (--gpus, else all of
 * them), then G GPUs on 2, 4, .. hosts up to --hosts.  The per-GPU batch is
 * the same throughout, so throughput grows as N / T_N: speed-up N T_1 / T_N,
 * efficiency T_1 / T_N. */
static int scaling(const opts *o, const cp_model *m, const cp_topo *t, FILE *out, cp_err *e)
{
    cp_strategy s = o->explicit_list ? o->list[0] : CP_S_AUTO;
    int G = o->gpus > 0 ? o->gpus : t->ngpus / t->nhosts, g, h, rc = CP_OK;
    double t1 = 0;
    cli_meter mt;
    if (t->rep_hosts == 0 && t->nhosts > 1)
        return cp_fail_at(e, CP_EINPUT, o->topo, 0, 0, NULL,
                          "--scaling starts from one GPU of one host; this topology describes "
                          "%d hosts (give a one-host topology and --hosts N)", t->nhosts);
    cli_meter_start(&mt, "predict --scaling",
                    cli_meter_doubling(G) + cli_meter_doubling(o->hosts) - 1);
    if (o->csv)
        fprintf(out, "model,topology,strategy,gpus,hosts,gpus_per_host,iteration_ms,exposed_comm_ms,"
               "speedup,efficiency\n");
    else
    {
        fprintf(out, "# scaling: %s on %s, strategy %s, same batch per GPU\n", m->name, t->name,
                cp_strategy_name(s));
        cli_calib_note(t, "# ", out);
        fprintf(out, "%6s %6s %14s %12s %10s %8s %10s\n", "gpus", "hosts", "gpus_per_host",
                "iteration_ms", "exposed_ms", "speedup", "efficiency");
    }
    for (h = 1; rc == CP_OK; h = h * 2 < o->hosts ? h * 2 : o->hosts) {
        for (g = h == 1 ? 1 : G; rc == CP_OK; g = g * 2 < G ? g * 2 : G) {
            double ms = 0, ex = 0;
            int n = g * h;
            char why[200] = "";
            rc = scaling_one(o, m, s, g, h, &ms, &ex, why, sizeof why, e);
            cli_meter_step(&mt, mt.done + 1);
            if (rc)
                break;
            if (n == 1)
                t1 = ms;
            if (ms < 0 && o->csv) /* the strategy cannot run at this size (hier on one host) */
                fprintf(out, "%s,%s,%s,%d,%d,%d,,,,\n", m->name, t->name, cp_strategy_name(s), n,
                        h, g);
            else if (ms < 0)
                fprintf(out, "%6d %6d %14d %12s  (%s)\n", n, h, g, "-", why);
            else if (o->csv)
                fprintf(out, "%s,%s,%s,%d,%d,%d,%.4f,%.4f,%.4f,%.4f\n", m->name, t->name,
                       cp_strategy_name(s), n, h, g, ms, ex,
                       t1 > 0 ? n * t1 / ms : 0, t1 > 0 ? t1 / ms : 0);
            else
                fprintf(out, "%6d %6d %14d %12.2f %10.2f %8.2f %9.1f%%\n", n, h, g, ms,
                       ex, t1 > 0 ? n * t1 / ms : 0, t1 > 0 ? 100 * t1 / ms : 0);
            if (g == G)
                break;
        }
        if (h >= o->hosts)
            break;
    }
    cli_meter_end(&mt);
    return rc;
}

/* The bucket advisor: powers of two in [lo, hi] plus 25 MiB. */
static int sweep(const opts *o, const cp_predictor *pr, FILE *out, cp_err *e)
{
    double caps[64], best = -1, best_ms = 0;
    int n = 0, i, j, rc;
    cli_meter mt;
    cp_strategy s = o->explicit_list ? o->list[0] : CP_S_AUTO;
    /* DDP's bucket_cap_mb; DeepSpeed's reduce_bucket_size, in MiB here */
    const char *knob = cp_framework_sharded(o->p.framework) ? "reduce_bucket_mb"
                                                            : "bucket_cap_mb";
    int p2;
    for (p2 = -10; p2 <= 51 && n < 62; p2++) { /* 2^-10 .. 2^51 MiB: 1 KiB .. 2 EiB */
        double c = ldexp(1.0, p2);
        if (c > o->sweep_hi * (1 + 1e-12))
            break;
        if (c >= o->sweep_lo * (1 - 1e-12))
            caps[n++] = c;
    }
    if (25 >= o->sweep_lo && 25 <= o->sweep_hi)
        caps[n++] = 25;
    for (i = 1; i < n; i++) /* sort, so 25 sits in order */
        for (j = i; j > 0 && caps[j] < caps[j - 1]; j--) {
            double t = caps[j];
            caps[j] = caps[j - 1];
            caps[j - 1] = t;
        }
    fprintf(out, "# bucket sweep: %s on %s (%d GPU%s), strategy %s\n", pr->model->name,
           pr->topo->name, pr->topo->ngpus, cp_s(pr->topo->ngpus), cp_strategy_name(s));
    cli_calib_note(pr->topo, "# ", out);
    fprintf(out, "%16s %12s %11s\n", knob, "iteration_ms", "exposed_ms");
    cli_meter_start(&mt, "predict --sweep-bucket", n);
    for (i = 0; i < n; i++) {
        cp_predict_opts po = o->p;
        cp_prediction p;
        po.bucket_mb = caps[i];
        rc = cp_predict_any(pr, s, &po, 0, 0, &p, e);
        cli_meter_step(&mt, i + 1);
        if (rc || !p.available) {
            cli_meter_end(&mt);
            return rc ? rc : cp_fail(e, CP_EINPUT, "strategy %s: %s", cp_strategy_name(s),
                                     p.why_not);
        }
        fprintf(out, "%16g %12.3f %11.3f\n", caps[i], p.iteration_ms, p.exposed_ms);
        if (best < 0 || p.iteration_ms < best_ms - 1e-9) {
            best = caps[i];
            best_ms = p.iteration_ms;
        }
    }
    cli_meter_end(&mt);
    fprintf(out, "best %s: %g (%.3f ms per iteration)\n", knob, best, best_ms);
    return CP_OK;
}

/* --scaling or --sweep-bucket: the whole table written to memory first and
 * printed once complete, so a failure part-way prints nothing. */
static int whole_table(const opts *o, const cp_model *m, const cp_topo *t,
                       const cp_predictor *pr, cp_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *table = open_memstream(&buf, &len);
    int rc;
    if (!table)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    rc = o->scaling ? scaling(o, m, t, table, e) : sweep(o, pr, table, e);
    if (fclose(table) != 0 && rc == CP_OK)
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    if (rc == CP_OK && len > 0 && fwrite(buf, 1, len, stdout) != len)
        rc = cp_fail(e, CP_EINTERNAL, "writing standard output failed");
    free(buf);
    return rc;
}

static int run(const opts *oin, cp_err *e)
{
    opts o = *oin;
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_predictor pr;
    cp_prediction res[CP_STRATEGIES], ring;
    cp_mem mem;
    int rc, k, have_pr = 0;
    double ring_ms = 0;

    memset(res, 0, sizeof res);
    if ((rc = cp_model_load(o.model, &m, e)) || (rc = cp_topo_load_machine(o.topo, o.gpus, o.hosts, &t, e)))
        goto done;
    if ((o.p.recompute || o.p.flash_attn || o.p.act_bytes) && m->xf.layers == 0) {
        rc = cp_fail_at(e, CP_EINPUT, o.model, 0, 0, NULL,
                        "--recompute, --flash-attn and --activation-dtype shape the activation "
                        "estimate, which needs the model's \"transformer\" dimensions "
                        "(docs/formats.md)");
        goto done;
    }
    if ((rc = cli_need_batch(m, o.model, o.p.activation_gb, e)) ||
        (rc = cli_blame(cp_predictor_init(&pr, m, t, &o.p, e), e, o.model)))
        goto done;
    have_pr = 1;
    if (o.scaling || o.sweep_hi > 0) {
        rc = whole_table(&o, m, t, &pr, e);
        goto done;
    }
    if (o.frameworks) {
        rc = cli_frameworks(m, t, &o.p, o.explicit_list ? o.list[0] : CP_S_AUTO,
                            o.bucket_given, o.csv, e);
        goto done;
    }
    if (!o.explicit_list)
        rc = default_list(&pr, &o, o.timeline || o.svg, res, e);
    for (k = 0; o.explicit_list && k < o.nlist && rc == CP_OK; k++) {
        rc = cp_predict_any(&pr, o.list[k], &o.p, 0, o.timeline || o.svg, &res[k], e);
        if (rc == CP_OK && !res[k].available)
            rc = cp_fail(e, CP_EINPUT, "strategy %s is not available on %s: %s",
                         cp_strategy_name(o.list[k]), t->name, res[k].why_not);
    }
    if (rc == CP_OK) { /* the vs_ring column; a failure to price ring is not "no ring" */
        int rr = cp_predict(&pr, CP_S_RING, &o.p, 0, &ring, e);
        if (rr == CP_EINTERNAL)
            rc = rr;
        else if (rr == CP_OK && ring.available)
            ring_ms = ring.iteration_ms;
    }
    if (rc == CP_OK)
        rc = cp_model_states(&pr, &o.p, &mem, e);
    if (rc == CP_OK && o.svg) /* before anything is printed: a failure prints nothing */
        rc = cli_write_timeline_svg(o.svg, &pr, res, o.nlist, e);
    if (rc)
        goto done;
    if (o.json)
        rc = print_json(&o, &pr, res, &mem) ? cp_fail(e, CP_EINTERNAL, "writing output failed")
                                            : 0;
    else if (o.csv)
        print_csv(&o, &pr, res, ring_ms);
    else if (o.timeline)
        print_timeline(&o, res);
    else
        print_table(&o, &pr, res, ring_ms, &mem);
    if (rc == CP_OK && !o.json && !o.csv && !o.timeline)
        rc = cli_pool_memory_note(&pr, &o.p, &mem, e);
    if (o.whatif) {
        printf("\n");
        rc = whatif(&o, m, t, &res[0], e);
    }
done:
    for (k = 0; k < CP_STRATEGIES; k++)
        cp_prediction_free(&res[k]);
    if (have_pr)
        cp_predictor_free(&pr);
    cp_model_free(m);
    cp_topo_free(t);
    return rc;
}

int cmd_predict(int argc, char **argv)
{
    opts o;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    if (o.llm.given) {
        cli_llm_run r = {o.model, o.topo, o.svg, o.hosts, o.gpus, o.json, o.csv,
                         o.explicit_list ? o.list : NULL, o.explicit_list ? o.nlist : 0};
        return cli_report(cli_predict_llm(&o.llm, &r, &e), &e);
    }
    return cli_report(run(&o, &e), &e);
}
