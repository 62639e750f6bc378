/*
 * predict_llm.c - `predict` for a large-model parallel layout: the layout
 * options, the run (model, machine, groups, one prediction per
 * data-parallel strategy), the table, the CSV and the JSON with its
 * `parallel` object (see predict_llm.h; docs/cli.md, docs/model.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/predict_llm.h"
#include "core/units.h"
#include "cost/pool.h"
#include "llm/alltoall.h"
#include "load/load.h"

/* ------------------------------------------------------------------ */
/* Options                                                             */

int cli_llm_degree(const char *cmd, char *arg, void *value, int *dst, const char *name)
{
    cli_llm *L = value;
    long v;
    char *end;
    v = strtol(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || v < 1 || v > 1 << 20)
        return cli_usage(cmd, "--%s: expected a whole number from 1 to %d, got '%s'", name,
                         1 << 20, arg);
    *dst = (int)v;
    L->given = 1;
    return CP_OK;
}

#define DEGREE(fn, field, name)                                                              \
    int fn(const char *cmd, char *arg, void *value)                                          \
    {                                                                                        \
        return cli_llm_degree(cmd, arg, value, &((cli_llm *)value)->lay.field, name);        \
    }
DEGREE(cli_llm_opt_tp, tp, "tp")
DEGREE(cli_llm_opt_pp, pp, "pp")
DEGREE(cli_llm_opt_vp, vp, "vp")
DEGREE(cli_llm_opt_cp, cp, "cp")
DEGREE(cli_llm_opt_dp, dp, "dp")
DEGREE(cli_llm_opt_mbs, mbs, "mbs")
DEGREE(cli_llm_opt_gbs, gbs, "gbs")
DEGREE(cli_llm_opt_recompute_layers, recompute_layers, "recompute-layers")
DEGREE(cli_llm_opt_ep, ep, "ep")
DEGREE(cli_llm_opt_etp, etp, "etp")

int cli_llm_opt_seq(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    int s = 0, rc = cli_llm_degree(cmd, arg, value, &s, "seq");
    L->lay.seq = s;
    return rc;
}

/* on|off into *dst. */
static int on_off(const char *cmd, const char *arg, const char *name, int *dst)
{
    if (strcmp(arg, "on") == 0)
        *dst = 1;
    else if (strcmp(arg, "off") == 0)
        *dst = 0;
    else
        return cli_usage(cmd, "--%s: expected on or off, got '%s'", name, arg);
    return CP_OK;
}

int cli_llm_opt_sp(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return on_off(cmd, arg, "sp", &L->lay.sp);
}

int cli_llm_opt_fp8_params(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return on_off(cmd, arg, "fp8-params", &L->lay.fp8_params);
}

int cli_llm_opt_tp_overlap(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return on_off(cmd, arg, "tp-overlap", &L->lay.tp_overlap);
}

int cli_llm_opt_span(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return on_off(cmd, arg, "tp-span-hosts", &L->lay.tp_span_hosts);
}

int cli_llm_opt_precision(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    int p;
    for (p = CP_PREC_BF16; p <= CP_PREC_FP8; p++)
        if (strcmp(arg, cp_precision_name((cp_precision)p)) == 0) {
            L->lay.precision = (cp_precision)p;
            L->given = 1;
            return CP_OK;
        }
    return cli_usage(cmd, "--precision: expected bf16, fp16 or fp8, got '%s'", arg);
}

/* --recompute does not by itself select a layout: without one, "full" is
 * the data-parallel activation estimate's checkpointing (predict.c). */
int cli_llm_opt_recompute(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    int r;
    for (r = CP_RC_NONE; r <= CP_RC_AUTO; r++)
        if (strcmp(arg, cp_recompute_name((cp_recompute)r)) == 0) {
            L->lay.recompute = (cp_recompute)r;
            return CP_OK;
        }
    return cli_usage(cmd, "--recompute: expected none, selective, full or auto, got '%s'", arg);
}

int cli_llm_opt_attention(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strcmp(arg, "flash") == 0)
        L->lay.attn = CP_ATTN_FLASH;
    else if (strcmp(arg, "eager") == 0)
        L->lay.attn = CP_ATTN_EAGER;
    else
        return cli_usage(cmd, "--attention: expected flash or eager, got '%s'", arg);
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_grad_reduce(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strcmp(arg, "fp32") == 0)
        L->lay.grad_fp32 = 1;
    else if (strcmp(arg, "bf16") == 0 || strcmp(arg, "fp16") == 0)
        L->lay.grad_fp32 = 0;
    else
        return cli_usage(cmd, "--grad-reduce: expected fp32 or bf16, got '%s'", arg);
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_zero(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strlen(arg) != 1 || arg[0] < '0' || arg[0] > '3')
        return cli_usage(cmd, "--zero: expected 0, 1, 2 or 3, got '%s'", arg);
    L->lay.zero = arg[0] - '0';
    L->zero_given = 1;
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_net(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (cp_parse_double(arg, &L->net_gbs) || !(L->net_gbs > 0) || L->net_gbs > 1e5)
        return cli_usage(cmd, "--net-gbs: expected a rate in (0, 1e5] GB/s, got '%s'", arg);
    L->given = 1;
    return CP_OK;
}

/* gpu|host|pool into *dst (a CP_LAYOUT_TIER_*). */
static int tier(const char *cmd, const char *arg, const char *name, int *dst)
{
    if (strcmp(arg, "gpu") == 0)
        *dst = CP_LAYOUT_TIER_GPU;
    else if (strcmp(arg, "host") == 0 || strcmp(arg, "cpu") == 0)
        *dst = CP_LAYOUT_TIER_HOST;
    else if (strcmp(arg, "pool") == 0)
        *dst = CP_LAYOUT_TIER_POOL;
    else
        return cli_usage(cmd, "--%s: expected gpu, host or pool, got '%s'", name, arg);
    return CP_OK;
}

int cli_llm_opt_offload_opt(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return tier(cmd, arg, "offload-optimizer", &L->lay.offload_opt);
}

int cli_llm_opt_offload_act(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return tier(cmd, arg, "offload-activations", &L->lay.offload_act);
}

int cli_llm_opt_moe_imbalance(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    double v;
    if (cp_parse_double(arg, &v) || !(v >= 1) || v > 1024)
        return cli_usage(cmd, "--moe-imbalance: expected the busiest expert's tokens over the "
                              "mean, from 1 to 1024, got '%s'", arg);
    L->lay.moe_imbalance = v;
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_moe_overlap(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    L->given = 1;
    return on_off(cmd, arg, "moe-overlap", &L->lay.moe_overlap);
}

int cli_llm_opt_moe_dispatcher(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strcmp(arg, "alltoall") == 0)
        L->lay.moe_dispatch = CP_MOE_ALLTOALL;
    else if (strcmp(arg, "deepep") == 0)
        L->lay.moe_dispatch = CP_MOE_DEEPEP;
    else
        return cli_usage(cmd, "--moe-dispatcher: expected alltoall or deepep, got '%s'", arg);
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_moe_a2a(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strcmp(arg, "auto") == 0)
        L->lay.moe_path = CP_A2A_AUTO;
    else if (strcmp(arg, "net") == 0)
        L->lay.moe_path = CP_A2A_NET;
    else if (strcmp(arg, "pool") == 0)
        L->lay.moe_path = CP_A2A_POOL;
    else
        return cli_usage(cmd, "--moe-a2a: expected auto, net or pool, got '%s'", arg);
    L->given = 1;
    return CP_OK;
}

int cli_llm_opt_framework(const char *cmd, char *arg, void *value)
{
    cli_llm *L = value;
    if (strcmp(arg, "megatron") == 0 || strcmp(arg, "deepspeed") == 0) {
        L->lay.fw = arg[0] == 'm' ? CP_LLM_MEGATRON : CP_LLM_DEEPSPEED;
        L->fw_given = L->given = 1;
        return CP_OK;
    }
    if (strcmp(arg, "fsdp") == 0) /* FSDP2 with a layout, FSDP without one */
        L->lay.fw = CP_LLM_FSDP, L->fw_given = 1;
    {
        int f;
        for (f = CP_FW_DDP; f <= CP_FW_ZERO1; f++)
            if (strcmp(arg, cp_framework_name((cp_framework)f)) == 0)
                return cli_opt_framework(cmd, arg, L->dp_fw);
    }
    return cli_usage(cmd, "--framework: expected megatron, deepspeed or fsdp (a large-model "
                          "layout), or ddp, horovod, zero1, zero2, zero3 or mirrored, got '%s'",
                     arg);
}

void cli_llm_bind(cli_llm *L, cp_framework *dp_framework)
{
    memset(L, 0, sizeof *L);
    cp_layout_default(&L->lay);
    L->dp_fw = dp_framework;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */

int cli_llm_strategy_alg(cp_strategy s, cp_coll_alg *alg, int *pool, cp_err *e)
{
    *pool = 0;
    switch (s) {
    case CP_S_POOL:
        *alg = CP_ALGS;
        *pool = 1;
        return CP_OK;
    case CP_S_AUTO:
    case CP_S_BEST:
        *alg = CP_ALGS;
        return CP_OK;
    case CP_S_RING:
        *alg = CP_ALG_RING;
        return CP_OK;
    case CP_S_TREE:
        *alg = CP_ALG_TREE;
        return CP_OK;
    case CP_S_COLLNET:
        *alg = CP_ALG_COLLNET;
        return CP_OK;
    default:
        return cp_fail(e, CP_EINPUT, "strategy %s is not priced for large-model layouts: their "
                       "data-parallel groups run ring, tree, collnet, auto (NCCL's choice, "
                       "NVLS included) or pool (through the CXL pool)", cp_strategy_name(s));
    }
}

/* What the data-parallel group's strategy cannot run: the reason, or NULL. */
static const char *unavailable(const cp_groups *G, const cp_layout *l, cp_coll_alg alg)
{
    const cp_coll *c = cp_groups_coll(G, l->cp > 1 ? CP_G_DPCP : CP_G_DP);
    if (alg == CP_ALGS || !c)
        return NULL;
    if (!c->cost[CP_OP_ALLREDUCE][alg].available)
        return c->cost[CP_OP_ALLREDUCE][alg].why_not;
    return NULL;
}

int cli_llm_resolve(const cli_llm *L, const cp_model *m, const cp_topo *t, int hosts,
                    const char *model, cp_layout *l, cp_err *e)
{
    *l = L->lay;
    if (m->xf.layers <= 0)
        return cp_fail_at(e, CP_EINPUT, model, 0, 0, NULL,
                          "a large-model layout needs the model's \"transformer\" block "
                          "(docs/formats.md; import hf-config writes it)");
    return cp_layout_resolve(l, &m->xf, t->ngpus * hosts, t->ngpus / t->nhosts, e);
}

/* The machine of a layout: one host of the file (`gpus` of its GPUs), which
 * the groups replicate as far as each spans (groups.h), never the whole
 * machine: --hosts 2048 costs what --hosts 2 does.  A file of several
 * hosts is taken whole (--hosts must then be 1). */
int cli_llm_machine(const char *path, int gpus, int hosts, cp_topo **t, cp_err *e)
{
    int rc = cp_topo_load_machine(path, gpus, 1, t, e), n;
    if (rc == CP_OK && hosts > 1 && (n = (*t)->nhosts) > 1) {
        cp_topo_free(*t);
        *t = NULL;
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                          "--hosts replicates a single-host topology; this one already "
                          "describes %d hosts", n);
    }
    return rc;
}

static const char *fw_title(const cp_layout *l)
{
    switch (l->fw) {
    case CP_LLM_FSDP: return "fsdp (FSDP2, torchtitan)";
    case CP_LLM_DEEPSPEED: return "deepspeed";
    default: return "megatron (Megatron-Core)";
    }
}

static void print_header(const cp_model *m, const cp_topo *t, const cp_layout *l,
                         const cp_gpu *g, const cp_llm_result *r)
{
    const cp_llm_mem *mm = &r->mem;
    printf("# predict: %s on %s x%d (%d GPUs, %d a host), %s\n", m->name, t->name, l->hosts,
           l->gpus, l->per_host, fw_title(l));
    printf("# layout: TP %d x CP %d x DP %d x PP %d", l->tp, l->cp, l->dp, l->pp);
    if (l->vp > 1)
        printf(" (interleaved, %d chunks a stage)", l->vp);
    printf(", micro-batch %d, global batch %d (%d micro-batches), sequence %lld, %s, SP %s, "
           "ZeRO %d\n", l->mbs, l->gbs, l->micro, (long long)l->seq,
           cp_precision_name(l->precision), l->sp ? "on" : "off", l->zero);
    printf("# compute: %s at %.0f TFLOP/s 16-bit", g->model, g->peak16 / 1e12);
    if (g->peak8 > 0)
        printf(", %.0f FP8", g->peak8 / 1e12);
    printf(", %s constants%s\n", g->cal.gen,
           g->calibrated ? "" : " (uncalibrated for this GPU: docs/calibration.md)");
    printf("# memory per GPU (stage %d): %.1f GB of %.1f: weights %.1f, gradients %.1f, "
           "optimizer %.1f, activations %.1f (%d micro-batch chunks in flight), logits %.1f, "
           "buffers %.1f, reserve %.1f: %s\n", mm->stage, mm->total / 1e9, g->capacity / 1e9,
           mm->weights / 1e9, mm->grads / 1e9, mm->optim / 1e9, mm->activations / 1e9,
           mm->inflight, mm->logits / 1e9, mm->buffers / 1e9, mm->reserve / 1e9,
           r->fits ? "fits" : "DOES NOT FIT");
    if (l->offload_opt || l->offload_act)
        printf("# offloaded per GPU: %.1f GB (optimizer to %s, activations to %s)\n",
               mm->offloaded / 1e9, cp_tier_name((cp_tier)l->offload_opt),
               cp_tier_name((cp_tier)l->offload_act));
    if (m->xf.moe.experts > 0)
        printf("# experts: %lld routed (top %lld) x %lld wide, EP %d x ETP %d (expert DP %d), "
               "%s dispatcher%s, imbalance %.2f: one all-to-all %.3f ms (%s, bound by %s)\n",
               (long long)m->xf.moe.experts, (long long)m->xf.moe.top_k,
               (long long)m->xf.moe.ffn, l->ep, cp_layout_etp(l), l->edp,
               l->moe_dispatch == CP_MOE_DEEPEP ? "deepep" : "alltoall",
               l->moe_overlap > 0 ? " overlapped (1F1B)" : "", l->moe_imbalance, r->a2a_ms,
               r->a2a_path ? r->a2a_path : "-", r->a2a_bind ? r->a2a_bind : "-");
    if (l->tp > l->per_host)
        printf("# note: the TP group spans %d hosts: every block's collectives cross the "
               "network (slow)\n", (l->tp + l->per_host - 1) / l->per_host);
}

static void print_rows(const cp_strategy *list, const cp_llm_result *res, int n)
{
    int k, i;
    printf("%-8s %12s %10s %6s %9s", "strategy", "iteration_ms", "tokens/s", "mfu",
           "recompute");
    for (i = 0; i < CP_LLM_TERMS; i++)
        printf(" %10s", cp_llm_term_name(i));
    printf("  bound\n");
    for (k = 0; k < n; k++) {
        const cp_llm_result *r = &res[k];
        char rc[32];
        if (r->recompute == CP_RC_FULL && r->recompute_layers > 0)
            snprintf(rc, sizeof rc, "full:%d", r->recompute_layers);
        else
            snprintf(rc, sizeof rc, "%s", cp_recompute_name(r->recompute));
        printf("%-8s %12.2f %10.1f %6.3f %9s", cp_strategy_name(list[k]), r->iteration_ms,
               r->tokens_per_s_per_gpu, r->mfu, rc);
        for (i = 0; i < CP_LLM_TERMS; i++)
            printf(" %10.2f", cp_llm_term(&r->b, i));
        printf("  %s\n", r->bound);
    }
}

static void print_csv(const cp_model *m, const cp_topo *t, const cp_layout *l,
                      const cp_strategy *list, const cp_llm_result *res, int n)
{
    int k, i;
    printf("model,topology,gpus,strategy,tp,cp,dp,pp,vp,ep,etp,mbs,gbs,precision,recompute,"
           "iteration_ms,tokens_per_s_per_gpu,mfu,memory_gb_per_gpu,fits");
    for (i = 0; i < CP_LLM_TERMS; i++)
        printf(",%s_ms", cp_llm_term_name(i));
    printf(",bound\n");
    for (k = 0; k < n; k++) {
        const cp_llm_result *r = &res[k];
        printf("%s,%s,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%.4f,%.3f,%.4f,%.3f,%d", m->name,
               t->name, l->gpus, cp_strategy_name(list[k]), l->tp, l->cp, l->dp, l->pp, l->vp,
               l->ep, cp_layout_etp(l), l->mbs, l->gbs, cp_precision_name(l->precision),
               cp_recompute_name(r->recompute), r->iteration_ms, r->tokens_per_s_per_gpu,
               r->mfu, r->mem.total / 1e9, r->fits);
        for (i = 0; i < CP_LLM_TERMS; i++)
            printf(",%.4f", cp_llm_term(&r->b, i));
        printf(",%s\n", r->bound);
    }
}

json_t *cli_llm_parallel_json(const cp_layout *l, const cp_llm_result *r)
{
    json_t *p = json_object(), *b = json_object(), *mem = json_object();
    int i;
    json_object_set_new(p, "framework", json_string(cp_llm_fw_name(l->fw)));
    json_object_set_new(p, "tp", json_integer(l->tp));
    json_object_set_new(p, "pp", json_integer(l->pp));
    json_object_set_new(p, "vp", json_integer(l->vp));
    json_object_set_new(p, "cp", json_integer(l->cp));
    json_object_set_new(p, "dp", json_integer(l->dp));
    json_object_set_new(p, "ep", json_integer(l->ep));
    json_object_set_new(p, "etp", json_integer(cp_layout_etp(l)));
    if (l->edp > 0) { /* a mixture of experts: its expert groups and all-to-all */
        json_t *moe = json_object();
        json_object_set_new(moe, "edp", json_integer(l->edp));
        json_object_set_new(moe, "dispatcher", json_string(l->moe_dispatch == CP_MOE_DEEPEP ?
                                                           "deepep" : "alltoall"));
        json_object_set_new(moe, "overlap", json_boolean(l->moe_overlap > 0));
        json_object_set_new(moe, "imbalance", cli_real(l->moe_imbalance, 4));
        json_object_set_new(moe, "a2a_ms", cli_real(r->a2a_ms, 4));
        json_object_set_new(moe, "a2a_path", json_string(r->a2a_path ? r->a2a_path : "-"));
        json_object_set_new(moe, "a2a_bind", json_string(r->a2a_bind ? r->a2a_bind : "-"));
        json_object_set_new(moe, "ep_comm_ms", cli_real(r->ep_comm_ms, 4));
        json_object_set_new(moe, "ep_exposed_ms", cli_real(r->b.ep, 4));
        json_object_set_new(p, "moe", moe);
    }
    json_object_set_new(p, "mbs", json_integer(l->mbs));
    json_object_set_new(p, "gbs", json_integer(l->gbs));
    json_object_set_new(p, "seq", json_integer(l->seq));
    json_object_set_new(p, "microbatches", json_integer(l->micro));
    json_object_set_new(p, "sp", json_boolean(l->sp));
    json_object_set_new(p, "zero", json_integer(l->zero));
    json_object_set_new(p, "recompute", json_string(cp_recompute_name(r->recompute)));
    json_object_set_new(p, "recompute_layers", json_integer(r->recompute_layers));
    json_object_set_new(p, "offload_optimizer", json_string(cp_tier_name((cp_tier)l->offload_opt)));
    json_object_set_new(p, "offload_activations",
                        json_string(cp_tier_name((cp_tier)l->offload_act)));
    json_object_set_new(p, "offloaded_gb_per_gpu", cli_real(r->mem.offloaded / 1e9, 3));
    json_object_set_new(p, "precision", json_string(cp_precision_name(l->precision)));
    json_object_set_new(p, "iteration_ms", cli_real(r->iteration_ms, 4));
    json_object_set_new(p, "tokens_per_s_per_gpu", cli_real(r->tokens_per_s_per_gpu, 3));
    json_object_set_new(p, "model_tflops_per_gpu", cli_real(r->model_tflops_per_gpu, 3));
    json_object_set_new(p, "mfu", cli_real(r->mfu, 4));
    json_object_set_new(p, "memory_gb_per_gpu", cli_real(r->mem.total / 1e9, 3));
    json_object_set_new(p, "fits", json_boolean(r->fits));
    json_object_set_new(p, "bound", json_string(r->bound));
    json_object_set_new(p, "dp_algorithm", json_string(r->dp_alg ? r->dp_alg : "-"));
    if (r->dp_expert_alg)
        json_object_set_new(p, "dp_expert_algorithm", json_string(r->dp_expert_alg));
    json_object_set_new(p, "dp_buckets", json_integer(r->dp_buckets));
    json_object_set_new(p, "dp_pool_buckets", json_integer(r->dp_pool_buckets));
    json_object_set_new(mem, "weights", cli_real(r->mem.weights / 1e9, 3));
    json_object_set_new(mem, "gradients", cli_real(r->mem.grads / 1e9, 3));
    json_object_set_new(mem, "optimizer", cli_real(r->mem.optim / 1e9, 3));
    json_object_set_new(mem, "activations", cli_real(r->mem.activations / 1e9, 3));
    json_object_set_new(mem, "logits", cli_real(r->mem.logits / 1e9, 3));
    json_object_set_new(mem, "buffers", cli_real(r->mem.buffers / 1e9, 3));
    json_object_set_new(mem, "reserve", cli_real(r->mem.reserve / 1e9, 3));
    json_object_set_new(p, "memory_gb", mem);
    for (i = 0; i < CP_LLM_TERMS; i++)
        json_object_set_new(b, cp_llm_term_name(i), cli_real(cp_llm_term(&r->b, i), 4));
    json_object_set_new(p, "breakdown_ms", b);
    return p;
}

/* compute_ms and comm_ms as predict's data-parallel output defines them:
 * compute the kernels (recomputation and launch waits included), exposed
 * what else the iteration waited for. */
static double compute_ms(const cp_llm_result *r)
{
    return r->b.compute + r->b.recompute + r->b.host + r->b.optimizer;
}

static int print_json(const cp_model *m, const cp_topo *t, const cp_layout *l,
                      const cp_strategy *list, const cp_llm_result *res, int n)
{
    json_t *root = json_object(), *arr = json_array();
    int k;
    json_object_set_new(root, "model", json_string(m->name));
    json_object_set_new(root, "topology", json_string(t->name));
    json_object_set_new(root, "hosts", json_integer(l->hosts));
    json_object_set_new(root, "gpus", json_integer(l->gpus));
    json_object_set_new(root, "framework", json_string(cp_llm_fw_name(l->fw)));
    for (k = 0; k < n; k++) {
        json_t *s = json_object();
        json_object_set_new(s, "name", json_string(cp_strategy_name(list[k])));
        json_object_set_new(s, "iteration_ms", cli_real(res[k].iteration_ms, 4));
        json_object_set_new(s, "compute_ms", cli_real(compute_ms(&res[k]), 4));
        json_object_set_new(s, "comm_ms",
                            cli_real(res[k].tp_comm_ms + res[k].dp_comm_ms + res[k].b.pp +
                                         res[k].b.cp + res[k].ep_comm_ms, 4));
        json_object_set_new(s, "exposed_comm_ms",
                            cli_real(res[k].iteration_ms - compute_ms(&res[k]), 4));
        json_object_set_new(s, "parallel", cli_llm_parallel_json(l, &res[k]));
        json_array_append_new(arr, s);
    }
    json_object_set_new(root, "strategies", arr);
    if (n > 0)
        json_object_set_new(root, "parallel", cli_llm_parallel_json(l, &res[0]));
    return cli_dump_json(root, stdout);
}

int cli_llm_open(const cli_llm *L, const char *model, const char *topo, int gpus, int hosts,
                 cp_model **m, cp_topo **t, cp_layout *l, cp_gpu *g, cp_tiers *tiers, cp_err *e)
{
    int rc;
    *m = NULL;
    *t = NULL;
    memset(tiers, 0, sizeof *tiers);
    if ((rc = cp_model_load(model, m, e)) || (rc = cli_llm_machine(topo, gpus, hosts, t, e)) ||
        (rc = cli_llm_resolve(L, *m, *t, hosts, model, l, e)) || (rc = cp_gpu_from_topo(*t, g, e)))
        return rc;
    if (l->precision == CP_PREC_FP8 && g->peak8 <= 0)
        return cp_fail_at(e, CP_EINPUT, topo, 0, 0, NULL,
                          "--precision fp8: %s has no FP8 tensor cores (no tflops_fp8 in the "
                          "topology)", g->model);
    /* the tiers: for offloading, and for a pool's room (auto's DP buckets) */
    if (l->offload_opt || l->offload_act || cp_pool_present(*t))
        return cp_tiers_build(*t, l->hosts, tiers, e);
    return CP_OK;
}

int cli_predict_llm(const cli_llm *L, const cli_llm_run *r, cp_err *e)
{
    static const cp_strategy dflt[] = {CP_S_AUTO};
    const cp_strategy *list = r->nlist > 0 ? r->list : dflt;
    int n = r->nlist > 0 ? r->nlist : 1, k, rc, have_groups = 0;
    cp_llm_result res[CP_STRATEGIES];
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_groups G;
    cp_tiers tiers;
    cp_layout l;
    cp_gpu g;
    memset(res, 0, sizeof res);
    if ((rc = cli_llm_open(L, r->model, r->topo, r->gpus, r->hosts, &m, &t, &l, &g, &tiers, e)))
        goto done;
    if ((rc = cp_groups_build(&G, t, &l, L->net_gbs, NULL, e)))
        goto done;
    have_groups = 1;
    if (l.moe_path == CP_A2A_POOL && (!G.a2a || !G.a2a->have_pool)) {
        rc = cp_fail_at(e, CP_EINPUT, r->topo, 0, 0, NULL,
                        "--moe-a2a pool: %s", G.a2a && G.a2a->hosts > 1 ?
                        "the topology has no CXL pool for the expert-parallel group's hosts" :
                        "no expert all-to-all crosses hosts (--ep 1, or an expert-parallel "
                        "group inside one host)");
        goto done;
    }
    for (k = 0; k < n && rc == CP_OK; k++) {
        cp_llm_opts o;
        const char *why;
        memset(&o, 0, sizeof o);
        if ((rc = cli_llm_strategy_alg(list[k], &o.dp_alg, &o.dp_pool, e)))
            break;
        /* auto is the search's evaluation: each bucket on the network or
         * through a pool with room, whichever is faster */
        if ((list[k] == CP_S_AUTO || list[k] == CP_S_BEST) && tiers.t[CP_TIER_POOL].available)
            o.dp_pool = 2;
        if (o.dp_pool == 1 && cp_groups_model(&G, l.cp > 1 ? CP_G_DPCP : CP_G_DP) &&
            !cp_groups_model(&G, l.cp > 1 ? CP_G_DPCP : CP_G_DP)->have_pool) {
            rc = cp_fail_at(e, CP_EINPUT, r->topo, 0, 0, NULL,
                            "strategy pool: %s has no CXL pool (no cxl_switch node, no pool "
                            "block)", t->name);
            break;
        }
        if ((why = unavailable(&G, &l, o.dp_alg))) {
            rc = cp_fail(e, CP_EINPUT, "strategy %s is not available on %s's data-parallel "
                         "group: %s", cp_strategy_name(list[k]), t->name, why);
            break;
        }
        o.keep_events = r->svg && k == 0;
        o.tiers = &tiers;
        rc = cp_llm_predict(&m->xf, &l, &g, &G, &o, &res[k], e);
    }
    if (rc == CP_OK && r->svg) {
        char title[256];
        snprintf(title, sizeof title, "%s on %s x%d (%d GPUs): TP %d x CP %d x DP %d x PP %d, "
                 "one iteration (coarse-plan predict)", m->name, t->name, l.hosts, l.gpus, l.tp,
                 l.cp, l.dp, l.pp);
        rc = cli_llm_pipeline_svg(r->svg, title, &l, &res[0], e);
    }
    if (rc)
        goto done;
    if (r->json)
        rc = print_json(m, t, &l, list, res, n) ? cp_fail(e, CP_EINTERNAL,
                                                          "writing output failed") : CP_OK;
    else if (r->csv)
        print_csv(m, t, &l, list, res, n);
    else {
        print_header(m, t, &l, &g, &res[0]);
        print_rows(list, res, n);
    }
done:
    for (k = 0; k < CP_STRATEGIES; k++)
        cp_llm_result_free(&res[k]);
    if (have_groups)
        cp_groups_free(&G);
    cp_model_free(m);
    cp_topo_free(t);
    return rc;
}
