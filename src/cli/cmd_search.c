/*
 * cmd_search.c - `coarse-plan search`: the fastest large-model layouts that
 * fit a model, machine and global batch, best first, with the breakdown of
 * each and the term that binds it (src/llm/search.h; docs/cli.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/search_report.h"
#include "cli/search_split.h"
#include "core/fileio.h"
#include "cost/pool.h"
#include "cli/predict_llm.h"
#include "core/units.h"
#include "llm/search.h"
#include "load/load.h"

static const cli_usage_text usage = {
    "usage: coarse-plan search -m MODEL -t TOPO --hosts H --gbs G [OPTIONS]\n",
    "Search every tensor x context x data x pipeline layout (with interleaving),\n"
    "micro-batch and sharding a framework can run on the machine for the model and\n"
    "global batch; keep what fits; rank by predicted iteration time.  Layouts are\n"
    "priced by predict's own evaluation, in order of a lower bound from their\n"
    "kernels, until no remaining one can rank.\n",
    "The model: docs/model.md, \"Searching layouts\".\n"};

#define MAX_LIST 16

typedef struct opts {
    const char *model, *topo;    /* as given: a file, or (a sweep) a comma-separated list */
    const char *hosts_arg, *gbs_arg, *net_arg;
    const char *csv, *svg;       /* a sweep's report and chart */
    int hosts, gpus, json, top, threads, max_vp, exhaustive, no_offload;
    char *models[MAX_LIST], *topos[MAX_LIST]; /* point into list_buf */
    int nmodels, ntopos, nhosts, ngbs;
    int hosts_list[MAX_LIST], gbs_list[MAX_LIST], nnets;
    double net_list[MAX_LIST]; /* --net-gbs (0: the topology's) */
    char list_buf[4096];
    cli_llm llm;
    cp_framework dp_fw;      /* --framework's data-parallel choices land here (refused) */
} opts;

/* Split `arg` at commas into out[] (pointing into *buf, advanced). */
static int split(const char *name, const char *arg, char **out, int *n, char **buf,
                 const char *end)
{
    char *p = *buf, *tok, *save = NULL;
    size_t len = strlen(arg) + 1;
    if (p + len > end)
        return cli_usage("search", "%s: the list is too long", name);
    memcpy(p, arg, len);
    *buf += len;
    *n = 0;
    for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST)
            return cli_usage("search", "%s: at most %d items", name, MAX_LIST);
        out[(*n)++] = tok;
    }
    if (*n == 0)
        return cli_usage("search", "%s: nothing given", name);
    return CP_OK;
}

/* Whole numbers of a comma-separated list into v[] in [1, hi]. */
static int numbers(const char *name, const char *arg, int *v, int *n, int hi)
{
    char buf[512], *tok, *save = NULL, *end;
    snprintf(buf, sizeof buf, "%s", arg);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long x = strtol(tok, &end, 10);
        if (*end || x < 1 || x > hi)
            return cli_usage("search", "%s: expected whole numbers from 1 to %d, got '%s'",
                             name, hi, tok);
        if (*n == MAX_LIST)
            return cli_usage("search", "%s: at most %d items", name, MAX_LIST);
        v[(*n)++] = (int)x;
    }
    if (*n == 0)
        return cli_usage("search", "%s: nothing given", name);
    return CP_OK;
}

/* Rates of a comma-separated list into v[] in (0, 1e5]. */
static int rates(const char *name, const char *arg, double *v, int *n)
{
    char buf[512], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", arg);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double x;
        if (cp_parse_double(tok, &x) || !(x > 0) || x > 1e5)
            return cli_usage("search", "%s: expected rates in (0, 1e5] GB/s, got '%s'", name,
                             tok);
        if (*n == MAX_LIST)
            return cli_usage("search", "%s: at most %d items", name, MAX_LIST);
        v[(*n)++] = x;
    }
    if (*n == 0)
        return cli_usage("search", "%s: nothing given", name);
    return CP_OK;
}

/* -m, -t, --hosts, --gbs and --net-gbs as lists (a sweep needs --csv). */
static int parse_lists(opts *o)
{
    char *buf = o->list_buf, *end = o->list_buf + sizeof o->list_buf;
    int rc;
    if ((rc = split("-m", o->model, o->models, &o->nmodels, &buf, end)) ||
        (rc = split("-t", o->topo, o->topos, &o->ntopos, &buf, end)) ||
        (rc = numbers("--hosts", o->hosts_arg ? o->hosts_arg : "1", o->hosts_list, &o->nhosts,
                      CP_MAX_HOSTS)) ||
        (rc = numbers("--gbs", o->gbs_arg, o->gbs_list, &o->ngbs, 1 << 24)))
        return rc;
    o->nnets = 1, o->net_list[0] = 0;
    if (o->net_arg && (rc = rates("--net-gbs", o->net_arg, o->net_list, &o->nnets)))
        return rc;
    if (!o->csv &&
        (o->nmodels > 1 || o->ntopos > 1 || o->nhosts > 1 || o->ngbs > 1 || o->nnets > 1))
        return cli_usage("search", "lists of models, topologies, hosts, batches or network "
                                   "rates make a sweep: give --csv FILE");
    if (o->ngbs > 1 && o->ngbs != o->nmodels)
        return cli_usage("search", "--gbs: %d batches for %d models (one each, or one for all)",
                         o->ngbs, o->nmodels);
    if (o->svg && !o->csv)
        return cli_usage("search", "--svg goes with --csv (the sweep's chart)");
    if (o->csv && o->json)
        return cli_usage("search", "--csv and --json do not combine");
    o->hosts = o->hosts_list[0];
    o->llm.lay.gbs = o->gbs_list[0];
    o->llm.net_gbs = o->net_list[0];
    return CP_OK;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    cli_llm *L = &o->llm;
    const cli_option table[] = {
        OPT_STRING('m', "model", "FILE", &o->model,
                   "model JSON with a transformer block (import hf-config writes one); with "
                   "--csv a comma-separated list"),
        OPT_STRING('t', "topo", "FILE", &o->topo,
                   "topology JSON of one host; with --csv a comma-separated list"),
        OPT_STRING(0, "hosts", "H", &o->hosts_arg,
                   "hosts (default 1); with --csv a comma-separated list"),
        OPT_INT(0, "gpus", "G", &o->gpus, 1, CLI_MAX_GPUS,
                "use the first G GPUs of each host (default: all)"),
        OPT_STRING(0, "gbs", "G", &o->gbs_arg,
                   "global batch, sequences (required); with --csv one per model, or one for all"),
        OPT_CALLBACK(0, "seq", "S", L, cli_llm_opt_seq, "tokens per sequence (default the model's)"),
        OPT_CALLBACK(0, "precision", "P", L, cli_llm_opt_precision, "bf16 (default), fp16 or fp8"),
        OPT_CALLBACK(0, "framework", "F", L, cli_llm_opt_framework,
                     "megatron (default: with and without the distributed optimizer), "
                     "deepspeed (ZeRO-1, -2, -3) or fsdp (FSDP2)"),
        OPT_STRING(0, "net-gbs", "X", &o->net_arg,
                   "every NIC's line rate, GB/s per direction (default the topology's); with "
                   "--csv a comma-separated list, each rate a what-if of every machine"),
        OPT_CALLBACK(0, "ep", "E", L, cli_llm_opt_ep,
                     "a mixture of experts: only expert-parallel degree E (default: every "
                     "power of two dividing the experts and a stage's ranks)"),
        OPT_CALLBACK(0, "etp", "T", L, cli_llm_opt_etp,
                     "a mixture of experts: only expert tensor-parallel degree T (default: 1 "
                     "and the layout's TP)"),
        OPT_CALLBACK(0, "moe-imbalance", "X", L, cli_llm_opt_moe_imbalance,
                     "the busiest expert's tokens over the mean (default 1: balanced)"),
        OPT_CALLBACK(0, "moe-overlap", "on|off", L, cli_llm_opt_moe_overlap,
                     "overlap the expert all-to-all with the other micro-batch's compute "
                     "(default off)"),
        OPT_CALLBACK(0, "moe-dispatcher", "D", L, cli_llm_opt_moe_dispatcher,
                     "alltoall (default) or deepep"),
        OPT_CALLBACK(0, "moe-a2a", "P", L, cli_llm_opt_moe_a2a,
                     "auto (default), net or pool: the links the expert all-to-all takes"),
        OPT_INT(0, "top", "K", &o->top, 1, 1000, "how many layouts to print (default 10)"),
        OPT_INT(0, "threads", "N", &o->threads, 1, 64,
                "pricing threads (default: the machine's cores)"),
        OPT_INT(0, "max-vp", "V", &o->max_vp, 1, 128,
                "at most V model chunks a pipeline stage (default 16)"),
        OPT_FLAG(0, "no-offload", &o->no_offload,
                 "search the GPU's memory only (no host or pool tier)"),
        OPT_FLAG(0, "exhaustive", &o->exhaustive,
                 "price every layout that fits, no bound (slow; to check the pruning)"),
        OPT_STRING(0, "csv", "FILE", &o->csv,
                   "a sweep: every model on every topology at every host count, one CSV row "
                   "each with the best layout without and with the machine's pool, what the "
                   "pool changed and what each fabric costs (reports/pool-pays.csv; written "
                   "whole)"),
        OPT_STRING(0, "svg", "FILE", &o->svg, "with --csv: the time the pool saves, as a bar "
                   "chart"),
        OPT_FLAG(0, "json", &o->json,
                 "{\"model\",\"topology\",\"hosts\",\"gpus\",\"gbs\",\n\"considered\","
                 "\"dominated\",\"pruned_memory\",\n\"pruned_bound\",\"priced\",\"seconds\","
                 "\n\"layouts\":[...]}: each layout the parallel object predict --json prints, "
                 "best first; with a pool also best_without_pool, best_with_pool, pool_effect"),
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    o->top = 10;
    cli_llm_bind(&o->llm, &o->dp_fw);
    if ((rc = cli_parse("search", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("search", argc, argv, first)))
        return rc;
    if (!o->model || !o->topo)
        return cli_usage("search", "-m MODEL and -t TOPO are required");
    if (!o->gbs_arg)
        return cli_usage("search", "--gbs G is required: the global batch every layout must "
                                   "divide");
    if ((rc = parse_lists(o)))
        return rc;
    if (o->dp_fw != CP_FW_DDP && o->llm.lay.fw != CP_LLM_FSDP)
        return cli_usage("search", "--framework %s is data-parallel only; search takes "
                                   "megatron, deepspeed or fsdp", cp_framework_name(o->dp_fw));
    if (o->threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads = n > 0 && n < 64 ? (int)n : 1;
    }
    return CP_OK;
}

/* The binding term's time (compute with its recomputation and launch
 * waits, as iteration.c names it). */
static double bound_ms(const cp_llm_result *r)
{
    int i;
    if (strcmp(r->bound, "compute") == 0)
        return r->b.compute + r->b.recompute + r->b.host;
    for (i = 0; i < CP_LLM_TERMS; i++)
        if (strcmp(r->bound, cp_llm_term_name(i)) == 0)
            return cp_llm_term(&r->b, i);
    return 0;
}

static void print_table(const cp_model *m, const cp_topo *t, const opts *o,
                        const cp_search_out *s, double secs)
{
    int k;
    printf("# search: %s on %s x%d (%d GPUs), global batch %d, %s, %s\n", m->name, t->name,
           o->hosts, t->ngpus * o->hosts, o->llm.lay.gbs,
           cp_precision_name(o->llm.lay.precision), cp_llm_fw_name(o->llm.lay.fw));
    printf("# %ld layouts considered: %ld dominated, %ld cannot fit, %ld bounded out, %ld "
           "priced (%d group machines built) in %.3f s\n", s->considered, s->dominated,
           s->pruned_memory, s->pruned_bound, s->priced, s->groups, secs);
    printf("%4s %3s %3s %4s %3s %3s %4s %4s %9s %9s %12s %10s %6s %7s  %s\n", "rank", "tp",
           "cp", "dp", "pp", "vp", "mbs", "zero", "recompute", "offload", "iteration_ms",
           "tokens/s", "mfu", "mem_gb", "bound");
    for (k = 0; k < s->nhits; k++) {
        const cp_search_hit *h = &s->hits[k];
        char rc[32];
        if (h->r.recompute == CP_RC_FULL && h->r.recompute_layers > 0)
            snprintf(rc, sizeof rc, "full:%d", h->r.recompute_layers);
        else
            snprintf(rc, sizeof rc, "%s", cp_recompute_name(h->r.recompute));
        char off[32];
        snprintf(off, sizeof off, "%s/%s", h->l.offload_opt ? cp_tier_name(h->l.offload_opt) : "-",
                 h->l.offload_act ? cp_tier_name(h->l.offload_act) : "-");
        printf("%4d %3d %3d %4d %3d %3d %4d %4d %9s %9s %12.2f %10.1f %6.3f %7.1f  %s %.1f ms\n",
               k + 1, h->l.tp, h->l.cp, h->l.dp, h->l.pp, h->l.vp, h->l.mbs, h->l.zero, rc, off,
               h->r.iteration_ms, h->r.tokens_per_s_per_gpu, h->r.mfu, h->r.mem.total / 1e9,
               h->r.bound, bound_ms(&h->r));
    }
}

/* Whether the layout's gradients (dense or the experts') go through the pool. */
static int dp_in_pool(const cp_llm_result *r)
{
    return r->dp_pool_buckets > 0 || (r->dp_alg && strcmp(r->dp_alg, "pool") == 0) ||
           (r->dp_expert_alg && strcmp(r->dp_expert_alg, "pool") == 0);
}

/* What the pool changed, in words: which constraint it relaxed and by how
 * much (docs/model.md, "What a pool changes"). */
static const char *pool_effect(const cp_search_out *without, const cp_search_out *with,
                               char *buf, size_t cap)
{
    const cp_search_hit *a = without->nhits ? &without->hits[0] : NULL;
    const cp_search_hit *b = with->nhits ? &with->hits[0] : NULL;
    double saved, pct;
    int tier;
    if (!b) {
        snprintf(buf, cap, "nothing fits with or without the pool");
        return "none";
    }
    if (!a) {
        snprintf(buf, cap, "capacity: without the pool no layout fits (the least needs %.1f "
                 "GB a GPU); with it TP %d PP %d DP %d runs, %s in the pool",
                 without->min_memory_gb, b->l.tp, b->l.pp, b->l.dp,
                 b->l.offload_opt == CP_LAYOUT_TIER_POOL ? "the optimizer states"
                                                        : "the activations");
        return "capacity";
    }
    saved = a->r.iteration_ms - b->r.iteration_ms;
    pct = 100 * saved / a->r.iteration_ms;
    tier = b->l.offload_opt == CP_LAYOUT_TIER_POOL || b->l.offload_act == CP_LAYOUT_TIER_POOL;
    if (tier) {
        snprintf(buf, cap, "capacity: %s in the pool (%.1f GB a GPU) let TP %d PP %d VP %d "
                 "micro-batch %d run with %s recomputation, %.2f ms faster (%.1f%%) than the "
                 "best without it (TP %d PP %d VP %d micro-batch %d, %s recomputation)",
                 b->l.offload_opt == CP_LAYOUT_TIER_POOL ? "the optimizer states"
                                                        : "the activations",
                 b->r.mem.offloaded / 1e9, b->l.tp, b->l.pp, b->l.vp, b->l.mbs,
                 cp_recompute_name(b->r.recompute), saved, pct, a->l.tp, a->l.pp, a->l.vp,
                 a->l.mbs, cp_recompute_name(a->r.recompute));
        return "capacity";
    }
    if (dp_in_pool(&b->r)) {
        snprintf(buf, cap, "data-parallel traffic moved off the network: TP %d PP %d DP %d "
                 "syncs %s (%d of %d buckets) through the pool, %.2f ms faster (%.1f%%) "
                 "than the best without it", b->l.tp, b->l.pp, b->l.dp,
                 b->r.dp_alg && strcmp(b->r.dp_alg, "pool") == 0 ? "its gradients"
                 : b->r.dp_expert_alg && strcmp(b->r.dp_expert_alg, "pool") == 0
                     ? "its experts' gradients"
                     : "some of its gradients",
                 b->r.dp_pool_buckets, b->r.dp_buckets, saved, pct);
        return "dp_traffic";
    }
    if (b->r.a2a_path && strcmp(b->r.a2a_path, "pool") == 0) {
        snprintf(buf, cap, "expert traffic moved off the network: TP %d PP %d DP %d EP %d "
                 "dispatches and combines its tokens through the pool, %.2f ms faster (%.1f%%) "
                 "than the best without it", b->l.tp, b->l.pp, b->l.dp, b->l.ep, saved, pct);
        return "ep_traffic";
    }
    if (saved > 0) { /* per-micro-batch sharded collectives take the pool where faster */
        snprintf(buf, cap, "data-parallel traffic partly moved off the network: TP %d PP %d DP "
                 "%d runs some of its sharded collectives through the pool, %.2f ms faster "
                 "(%.1f%%) than the best without it", b->l.tp, b->l.pp, b->l.dp, saved, pct);
        return "dp_traffic";
    }
    snprintf(buf, cap, "nothing: the fastest layout uses neither a pool tier nor the pool "
             "for its traffic (bound by %s), so the pool saves 0 ms", b->r.bound);
    return "none";
}

static int print_json(const cp_model *m, const cp_topo *t, const opts *o,
                      const cp_search_out *s, const cp_search_out *nopool, const char *effect,
                      double secs)
{
    json_t *root = json_object(), *arr = json_array();
    int k;
    json_object_set_new(root, "model", json_string(m->name));
    json_object_set_new(root, "topology", json_string(t->name));
    json_object_set_new(root, "hosts", json_integer(o->hosts));
    json_object_set_new(root, "gpus", json_integer((json_int_t)t->ngpus * o->hosts));
    json_object_set_new(root, "gbs", json_integer(o->llm.lay.gbs));
    json_object_set_new(root, "considered", json_integer(s->considered));
    json_object_set_new(root, "dominated", json_integer(s->dominated));
    json_object_set_new(root, "pruned_memory", json_integer(s->pruned_memory));
    json_object_set_new(root, "pruned_bound", json_integer(s->pruned_bound));
    json_object_set_new(root, "priced", json_integer(s->priced));
    json_object_set_new(root, "seconds", cli_real(secs, 3));
    for (k = 0; k < s->nhits; k++)
        json_array_append_new(arr, cli_llm_parallel_json(&s->hits[k].l, &s->hits[k].r));
    json_object_set_new(root, "layouts", arr);
    if (nopool) {
        json_object_set_new(root, "best_without_pool",
                            nopool->nhits ? cli_llm_parallel_json(&nopool->hits[0].l,
                                                                  &nopool->hits[0].r)
                                          : json_null());
        json_object_set_new(root, "best_with_pool",
                            s->nhits ? cli_llm_parallel_json(&s->hits[0].l, &s->hits[0].r)
                                     : json_null());
        json_object_set_new(root, "pool_effect", json_string(effect));
    }
    return cli_dump_json(root, stdout);
}

/* Expert options on a dense model are an input error (the layout's own
 * check, cp_layout_resolve, would refuse every candidate alike). */
static int dense_model_moe(const cp_model *m, const cp_layout *l, cp_err *e)
{
    const char *opt = l->ep > 1 ? "--ep" : l->etp > 0 ? "--etp" :
                      l->moe_imbalance != 1 ? "--moe-imbalance" :
                      l->moe_overlap > 0 ? "--moe-overlap" :
                      l->moe_dispatch != CP_MOE_ALLTOALL ? "--moe-dispatcher" :
                      l->moe_path != CP_A2A_AUTO ? "--moe-a2a" : NULL;
    if (m->xf.moe.experts > 0 || !opt)
        return CP_OK;
    return cp_fail(e, CP_EINPUT, "%s: %s is dense (no experts in its \"transformer\" block); expert "
                   "options need a mixture-of-experts model", opt, m->name);
}

/* One search of the machine, with or without its pool: this process's
 * part of the candidates, then (split over processes) the exchange that
 * leaves the whole ranking with the printing part. */
static int search_once(const opts *o, const cp_model *m, const cp_topo *t, const cp_gpu *g,
                       int pool, const cli_search_split *sp, cp_search_out *s, cp_err *e)
{
    cp_search_in in;
    int rc;
    if ((rc = dense_model_moe(m, &o->llm.lay, e)))
        return rc;
    memset(&in, 0, sizeof in);
    in.x = &m->xf, in.host = t, in.g = g, in.hosts = o->hosts;
    in.gbs = o->llm.lay.gbs, in.seq = o->llm.lay.seq;
    in.precision = o->llm.lay.precision, in.fw = o->llm.lay.fw, in.net_gbs = o->llm.net_gbs;
    in.top = o->top, in.threads = o->threads;
    in.part = sp ? sp->part : 0, in.nparts = sp ? sp->nparts : 1;
    in.max_vp = o->max_vp;
    in.exhaustive = o->exhaustive;
    in.offload = !o->no_offload;
    in.pool = pool;
    in.moe = m->xf.moe.experts > 0 ? &o->llm.lay : NULL;
    rc = cp_search_run(&in, s, e);
    if (rc == CP_OK && sp && sp->exchange)
        rc = sp->exchange(&in, s, sp->ctx, e);
    return rc;
}

/* A sweep (--csv): every model on every topology at every host count,
 * searched without and with the pool; one CSV row each, written whole,
 * and the chart. */
static int sweep(const opts *oin, const cli_search_split *sp, cp_err *e)
{
    int n = oin->nmodels * oin->ntopos * oin->nhosts * oin->nnets, k = 0, mi, ti, hi, ni;
    int rc = CP_OK;
    cli_report_row *rows = calloc((size_t)n + 1, sizeof *rows);
    cp_search_hit *hits = calloc(2 * (size_t)n + 1, sizeof *hits);
    char (*why)[512] = calloc((size_t)n + 1, sizeof *why);
    cp_outfile out;
    memset(&out, 0, sizeof out);
    if (!rows || !hits || !why) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (mi = 0; mi < oin->nmodels && rc == CP_OK; mi++) {
        cp_model *m = NULL;
        if ((rc = cp_model_load(oin->models[mi], &m, e)))
            break;
        if (m->xf.layers <= 0)
            rc = cp_fail_at(e, CP_EINPUT, oin->models[mi], 0, 0, NULL,
                            "search needs the model's \"transformer\" block");
        for (ti = 0; ti < oin->ntopos && rc == CP_OK; ti++) {
            cp_topo *t = NULL;
            cp_gpu g;
            if ((rc = cli_llm_machine(oin->topos[ti], oin->gpus, 1, &t, e)) ||
                (rc = cp_gpu_from_topo(t, &g, e))) {
                cp_topo_free(t);
                break;
            }
            if (oin->llm.lay.precision == CP_PREC_FP8 && g.peak8 <= 0) {
                rc = cp_fail_at(e, CP_EINPUT, oin->topos[ti], 0, 0, NULL,
                                "--precision fp8: %s has no FP8 tensor cores", g.model);
                cp_topo_free(t);
                break;
            }
            for (hi = 0; hi < oin->nhosts * oin->nnets && rc == CP_OK; hi++, k++) {
                opts o = *oin;
                cp_search_out with, without;
                double t0 = cp_now_s();
                int pool = cp_pool_present(t);
                memset(&with, 0, sizeof with);
                memset(&without, 0, sizeof without);
                ni = hi % oin->nnets;
                o.hosts = oin->hosts_list[hi / oin->nnets];
                o.llm.net_gbs = oin->net_list[ni];
                o.llm.lay.gbs = oin->ngbs > 1 ? oin->gbs_list[mi] : oin->gbs_list[0];
                o.top = 1;
                if ((pool && (rc = search_once(&o, m, t, &g, 0, sp, &without, e))) ||
                    (rc = search_once(&o, m, t, &g, pool, sp, &with, e)))
                    goto next;
                rows[k].model = strdup(m->name);
                rows[k].topo = strdup(t->name);
                if (!rows[k].model || !rows[k].topo) {
                    rc = cp_fail(e, CP_EINTERNAL, "out of memory");
                    goto next;
                }
                rows[k].hosts = o.hosts;
                rows[k].gpus = t->ngpus * o.hosts;
                rows[k].gbs = o.llm.lay.gbs;
                rows[k].seq = o.llm.lay.seq > 0 ? o.llm.lay.seq : m->xf.seq;
                rows[k].precision = cp_precision_name(o.llm.lay.precision);
                rows[k].has_pool = pool;
                rows[k].nic_gbs = o.llm.net_gbs > 0 ? o.llm.net_gbs : cli_nic_gbs(t);
                rows[k].nic_whatif = o.llm.net_gbs > 0;
                if (with.nhits) {
                    hits[2 * (size_t)k + 1] = with.hits[0];
                    rows[k].with = &hits[2 * (size_t)k + 1];
                }
                if (pool && without.nhits) {
                    hits[2 * (size_t)k] = without.hits[0];
                    rows[k].without = &hits[2 * (size_t)k];
                } else if (!pool) {
                    rows[k].without = rows[k].with;
                }
                rows[k].relaxed = pool ? pool_effect(&without, &with, why[k], sizeof why[k])
                                       : "no_pool";
                if (!pool)
                    snprintf(why[k], sizeof why[k], "the machine has no pool");
                rows[k].why = why[k];
                cli_fabric_costs(t, o.hosts, &rows[k].net_usd, &rows[k].pool_usd);
                rows[k].seconds = cp_now_s() - t0;
                if (!sp || sp->print)
                    printf("%s on %s x%d%s: %s\n", m->name, t->name, o.hosts,
                           rows[k].nic_whatif ? " (what-if NICs)" : "", why[k]);
            next:
                cp_search_free(&with);
                cp_search_free(&without);
            }
            cp_topo_free(t);
        }
        cp_model_free(m);
    }
    if (rc || (sp && !sp->print))
        goto done;
    if ((rc = cp_out_open(&out, oin->csv, e)) == CP_OK) {
        int i;
        cli_report_header(out.f);
        for (i = 0; i < k; i++)
            cli_report_row_csv(out.f, &rows[i]);
        rc = cp_out_commit(&out, e);
    }
    if (rc == CP_OK && oin->svg && (rc = cp_out_open(&out, oin->svg, e)) == CP_OK) {
        if (cli_report_svg(out.f, rows, k)) {
            cp_out_abort(&out);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", oin->svg);
        } else {
            rc = cp_out_commit(&out, e);
        }
    }
done:
    if (rows)
        for (mi = 0; mi < k; mi++) {
            free((char *)rows[mi].model);
            free((char *)rows[mi].topo);
        }
    free(rows);
    free(hits);
    free(why);
    return rc;
}

static int run(const opts *o, const cli_search_split *sp, cp_err *e)
{
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_search_out s, nopool;
    cp_gpu g;
    double t0 = cp_now_s(), secs;
    char effect[512] = "";
    int rc, has_pool;
    memset(&s, 0, sizeof s);
    memset(&nopool, 0, sizeof nopool);
    if (o->csv)
        return sweep(o, sp, e);
    if ((rc = cp_model_load(o->models[0], &m, e)) ||
        (rc = cli_llm_machine(o->topos[0], o->gpus, o->hosts, &t, e)) ||
        (rc = cp_gpu_from_topo(t, &g, e)))
        goto done;
    if (m->xf.layers <= 0) {
        rc = cp_fail_at(e, CP_EINPUT, o->models[0], 0, 0, NULL,
                        "search needs the model's \"transformer\" block (docs/formats.md; "
                        "import hf-config writes it)");
        goto done;
    }
    if (o->llm.lay.precision == CP_PREC_FP8 && g.peak8 <= 0) {
        rc = cp_fail_at(e, CP_EINPUT, o->topos[0], 0, 0, NULL,
                        "--precision fp8: %s has no FP8 tensor cores (no tflops_fp8 in the "
                        "topology)", g.model);
        goto done;
    }
    has_pool = cp_pool_present(t);
    if ((has_pool && (rc = search_once(o, m, t, &g, 0, sp, &nopool, e))) ||
        (rc = search_once(o, m, t, &g, has_pool, sp, &s, e)))
        goto done;
    if (sp && !sp->print) /* another process prints the whole ranking */
        goto done;
    if (s.nhits == 0 && s.min_memory_gb * 1e9 > g.capacity) {
        rc = cp_fail(e, CP_EINPUT, "%s fits no layout of %d GPUs even recomputing every block "
                     "and offloading: the least memory any needs is %.1f GB per GPU, the GPUs "
                     "have %.1f", m->name, t->ngpus * o->hosts, s.min_memory_gb,
                     g.capacity / 1e9);
        goto done;
    }
    if (s.nhits == 0) {
        rc = cp_fail(e, CP_EINPUT, "%s fits no layout of %d GPUs: those the GPUs hold (%.1f GB "
                     "per GPU at least) offload more than the host's memory%s holds",
                     m->name, t->ngpus * o->hosts, s.min_memory_gb,
                     has_pool ? " and the pool" : "");
        goto done;
    }
    if (has_pool)
        pool_effect(&nopool, &s, effect, sizeof effect);
    secs = cp_now_s() - t0;
    if (o->json)
        rc = print_json(m, t, o, &s, has_pool ? &nopool : NULL, effect, secs)
                 ? cp_fail(e, CP_EINTERNAL, "writing output failed")
                 : CP_OK;
    else {
        print_table(m, t, o, &s, secs);
        if (has_pool) {
            if (nopool.nhits)
                printf("# best without the pool: %.2f ms (TP %d CP %d DP %d PP %d VP %d, "
                       "micro-batch %d)\n", nopool.hits[0].r.iteration_ms, nopool.hits[0].l.tp,
                       nopool.hits[0].l.cp, nopool.hits[0].l.dp, nopool.hits[0].l.pp,
                       nopool.hits[0].l.vp, nopool.hits[0].l.mbs);
            else
                printf("# best without the pool: none fits\n");
            printf("# best with the pool: %.2f ms; what the pool changed: %s\n",
                   s.hits[0].r.iteration_ms, effect);
        }
    }
done:
    cp_search_free(&s);
    cp_search_free(&nopool);
    cp_model_free(m);
    cp_topo_free(t);
    return rc;
}

int cli_search_main(int argc, char **argv, const cli_search_split *sp)
{
    opts o;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    cp_err_clear(&e);
    if (sp && !sp->print) /* the printing process reports for all */
        return run(&o, sp, &e);
    return cli_report(run(&o, sp, &e), &e);
}

int cmd_search(int argc, char **argv)
{
    return cli_search_main(argc, argv, NULL);
}
