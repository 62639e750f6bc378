/*
 * llm_rows.h - the published large-model runs of ../shared/data/llm/, read
 * in place and turned into a transformer, a layout and a machine, then
 * predicted and compared in each row's own unit (docs/calibration.md,
 * "Large-model runs").  Shared by tests/unit/test_llm_runs.c (the
 * acceptance figures) and tools/fit-llm.c (make calibration).
 *
 * What each row leaves unstated is filled by the rules of
 * docs/calibration.md, "Settings the rows leave out", in llm_row_setup:
 * the model's architecture from its family (GPT: learned positions, GELU,
 * LayerNorm, biases, tied embeddings; Llama: RoPE, SwiGLU, RMSNorm; Nemotron:
 * squared ReLU), the stack's defaults by source (Megatron-LM 2021/2022:
 * eager attention, dropout 0.1, no distributed optimizer, no overlap, no SP
 * in 2021; Megatron-Core and NeMo: flash attention, SP, distributed
 * optimizer and overlaps), and a micro-batch, interleaving or recompute the
 * row does not give: the fastest the model finds that fits (the runs were
 * tuned by their authors).  Mixture-of-experts rows (docs/calibration.md,
 * "Mixture-of-experts rows"): the experts from the row's `ffn` and `moe`
 * fields, the rest of the architecture from the family's published
 * config.json, and the settings of Megatron-Bridge's performance recipes
 * (expert tensor parallelism 1; DeepEP for DeepSeek-V3 with its
 * multi-token-prediction block as one more routed block; the all-to-all
 * dispatcher for Qwen3, whose runs drop tokens at capacity 1, equal to the
 * balanced load; routing force-balanced: imbalance 1).
 *
 * Header-only (static functions), C11, no allocation beyond the rows.
 */
#ifndef CP_TEST_LLM_ROWS_H
#define CP_TEST_LLM_ROWS_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/iteration.h"
#include "load/load.h"

#define LLM_ROW_FIELDS 40
#define LLM_FIELD 400

typedef struct llm_row {
    char f[LLM_ROW_FIELDS][LLM_FIELD]; /* the CSV fields as text */
    int nf;
} llm_row;

/* Column indices of measurements.csv (its header, checked by llm_rows_read). */
enum {
    C_ID, C_SOURCE, C_LOCATOR, C_MODEL, C_PARAMS, C_ARCH, C_LAYERS, C_HIDDEN, C_HEADS, C_KV,
    C_FFN, C_VOCAB, C_SEQ, C_MOE, C_GPU, C_NGPUS, C_PERNODE, C_INTRA, C_INTER, C_TP, C_PP, C_DP,
    C_CP, C_EP, C_VP, C_MBS, C_GBS, C_PREC, C_RECOMP, C_ZERO, C_FW, C_MEASURED, C_UNIT, C_MISSING,
    C_COLUMNS
};

/* One CSV record from `line` (RFC 4180 quoting) into r; the field count. */
static int llm_csv_split(const char *line, llm_row *r)
{
    int n = 0, q = 0;
    size_t k = 0;
    const char *p;
    memset(r, 0, sizeof *r);
    for (p = line; *p && *p != '\n' && *p != '\r'; p++) {
        if (q) {
            if (*p == '"' && p[1] == '"')
                r->f[n][k < LLM_FIELD - 1 ? k++ : k] = '"', p++;
            else if (*p == '"')
                q = 0;
            else if (k < LLM_FIELD - 1)
                r->f[n][k++] = *p;
        } else if (*p == '"') {
            q = 1;
        } else if (*p == ',') {
            if (++n >= LLM_ROW_FIELDS)
                return n;
            k = 0;
        } else if (k < LLM_FIELD - 1) {
            r->f[n][k++] = *p;
        }
    }
    r->nf = n + 1;
    return r->nf;
}

/* The rows of a CSV file after its header; NULL when the file cannot be
 * read.  *n the count. */
static llm_row *llm_rows_read(const char *path, int *n)
{
    FILE *fp = fopen(path, "r");
    char line[8192];
    llm_row *rows = NULL;
    int cap = 0, first = 1;
    *n = 0;
    if (!fp)
        return NULL;
    while (fgets(line, sizeof line, fp)) {
        llm_row r;
        if (first) { /* the header */
            first = 0;
            continue;
        }
        if (llm_csv_split(line, &r) < 2)
            continue;
        if (*n >= cap) {
            llm_row *nr;
            cap = cap ? 2 * cap : 64;
            nr = realloc(rows, (size_t)cap * sizeof *rows);
            if (!nr) {
                free(rows);
                fclose(fp);
                return NULL;
            }
            rows = nr;
        }
        rows[(*n)++] = r;
    }
    fclose(fp);
    return rows;
}

static int llm_int(const char *s)
{
    return isdigit((unsigned char)*s) ? atoi(s) : 0;
}

/* A prepared row: model, layout (before search for what is unstated),
 * machine, and how to compare. */
typedef struct llm_case {
    cp_xformer x;
    cp_layout l;
    const char *topo;     /* shipped topology file of one host */
    int hosts;
    int gpus_used;        /* GPUs of the host the run used, 0: all */
    int free_mbs, free_vp, free_rc; /* unstated: search */
    int free_mem;         /* memory settings unstated: bf16 gradients or FP8 weights when
                             the defaults would need recomputation */
    int kind;             /* 0 eq.3 TFLOP/s, 1 model TFLOP/s, 2 tokens/s/GPU, 3 ms/layer,
                             4 ms/iteration */
    double measured, measured_fwd, measured_bwd;
    int skip;             /* 1: the row lacks the architecture (Nemotron 8B/22B) */
    const char *why_skip;
} llm_case;

/* The experts of a mixture-of-experts row: `ffn` "moe F xEe topK [+ shared]",
 * `moe` "... +N shared"; and what the families' config.json files give
 * beyond the row: DeepSeek-V3 (deepseek-ai/DeepSeek-V3): multi-head latent
 * attention (q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
 * qk_rope_head_dim 64, v_head_dim 128), first_k_dense_replace 3 dense
 * blocks of intermediate_size 18432, sigmoid scores, one multi-token-
 * prediction block (num_nextn_predict_layers 1); Qwen3 (Qwen/Qwen3-30B-A3B,
 * Qwen3-235B-A22B): head_dim 128, per-head q/k RMSNorm, untied. */
static void llm_moe_arch(const llm_row *r, cp_xformer *x)
{
    const char *f = r->f[C_FFN], *p;
    if (strncmp(f, "moe ", 4) != 0)
        return;
    x->moe.ffn = atoll(f + 4);
    x->moe.experts = (p = strstr(f, " x")) ? atoll(p + 2) : 0;
    x->moe.top_k = (p = strstr(f, "top")) ? atoll(p + 3) : 0;
    x->moe.shared_experts = (p = strstr(r->f[C_MOE], "+")) ? atoll(p + 1) : 0;
    x->moe.shared_ffn = x->moe.shared_experts * x->moe.ffn;
    x->moe.every = 1;
    x->ffn = x->moe.ffn;
    if (strstr(r->f[C_ARCH], "MLA")) {
        x->mla.q_lora_rank = 1536;
        x->mla.kv_lora_rank = 512;
        x->mla.qk_nope_dim = 128;
        x->mla.qk_rope_dim = 64;
        x->mla.v_head_dim = 128;
        x->head_dim = 128 + 64;
        x->moe.dense_layers = 3;
        x->moe.dense_ffn = 18432;
        x->moe.router_sigmoid = 1;
        x->layers += 1; /* the multi-token-prediction block, a routed block on the last stage */
    }
    if (strstr(r->f[C_MODEL], "Qwen3")) {
        x->head_dim = 128;
        x->qk_norm = 1;
    }
}

/* Fill a transformer of a family from the row's dimensions. */
static void llm_arch(const llm_row *r, cp_xformer *x)
{
    int llama = strstr(r->f[C_ARCH], "Llama") != NULL || strstr(r->f[C_ARCH], "MoE") != NULL;
    int nemotron = strstr(r->f[C_MODEL], "Nemotron") != NULL;
    memset(x, 0, sizeof *x);
    x->layers = llm_int(r->f[C_LAYERS]);
    x->hidden = llm_int(r->f[C_HIDDEN]);
    x->heads = llm_int(r->f[C_HEADS]);
    x->kv_heads = llm_int(r->f[C_KV]) ? llm_int(r->f[C_KV]) : x->heads;
    x->ffn = llm_int(r->f[C_FFN]) ? llm_int(r->f[C_FFN]) : 4 * x->hidden; /* "4h likely" */
    x->seq = llm_int(r->f[C_SEQ]);
    x->vocab = llm_int(r->f[C_VOCAB]);
    x->window_every = 1;
    if (llama && !nemotron) {
        x->mlp = CP_MLP_SWIGLU, x->pos = CP_POS_ROPE, x->norm = CP_NORM_RMS;
    } else if (nemotron) { /* Nemotron-4: squared ReLU, RoPE, LayerNorm, no biases */
        x->mlp = CP_MLP_RELU2, x->pos = CP_POS_ROPE, x->norm = CP_NORM_LAYER;
    } else { /* GPT: learned positions, GELU, LayerNorm, biases, tied */
        x->mlp = CP_MLP_GELU, x->pos = CP_POS_LEARNED, x->norm = CP_NORM_LAYER;
        x->max_pos = x->seq;
        x->qkv_bias = x->o_bias = x->mlp_bias = 1;
        x->tied = 1;
    }
    llm_moe_arch(r, x);
    x->swiglu = cp_xf_gated(x);
}

/* Turn a row into a case (llm_rows.h's rules; docs/calibration.md). */
static void llm_row_setup(const llm_row *r, llm_case *c)
{
    const char *id = r->f[C_ID], *unit = r->f[C_UNIT];
    int n21 = !strncmp(id, "N21", 3), k22 = !strncmp(id, "K22", 3);
    int a100 = strstr(r->f[C_GPU], "A100") != NULL;
    memset(c, 0, sizeof *c);
    llm_arch(r, &c->x);
    if (c->x.layers <= 0 || c->x.hidden <= 0) {
        c->skip = 1;
        c->why_skip = "architecture not published";
        return;
    }
    cp_layout_default(&c->l);
    if (c->x.moe.experts > 0) { /* the recipes' expert settings (docs/calibration.md) */
        c->l.ep = llm_int(r->f[C_EP]) ? llm_int(r->f[C_EP]) : 1;
        c->l.etp = 1;
        c->l.moe_dispatch = c->x.mla.kv_lora_rank > 0 ? CP_MOE_DEEPEP : CP_MOE_ALLTOALL;
    }
    c->topo = a100 ? "topologies/dgx-a100-80g.json" : "topologies/hgx-h100.json";
    c->l.tp = llm_int(r->f[C_TP]) ? llm_int(r->f[C_TP]) : 1;
    c->l.pp = llm_int(r->f[C_PP]) ? llm_int(r->f[C_PP]) : 1;
    c->l.cp = llm_int(r->f[C_CP]) ? llm_int(r->f[C_CP]) : 1;
    c->l.dp = llm_int(r->f[C_DP]);
    c->l.vp = llm_int(r->f[C_VP]) ? llm_int(r->f[C_VP]) : 1;
    c->free_vp = strstr(r->f[C_VP], "interleaved") != NULL;
    c->l.mbs = llm_int(r->f[C_MBS]);
    c->free_mbs = c->l.mbs == 0;
    if (c->l.mbs == 0)
        c->l.mbs = 1;
    c->l.gbs = llm_int(r->f[C_GBS]);
    c->l.seq = c->x.seq;
    c->hosts = llm_int(r->f[C_NGPUS]) / 8;
    if (c->hosts < 1)
        c->hosts = 1;
    c->l.precision = strstr(r->f[C_PREC], "FP8") ? CP_PREC_FP8 :
                     strstr(r->f[C_PREC], "fp16") ? CP_PREC_FP16 : CP_PREC_BF16;
    c->l.fw = CP_LLM_MEGATRON;
    if (!n21 && !k22)
        c->free_mem = 1;
    if (strstr(r->f[C_MISSING], "FSDP=8")) /* Megatron-FSDP over the 8 GPUs */
        c->l.zero = 3;
    if (n21 || k22) { /* Megatron-LM of 2021-22 */
        c->l.attn = CP_ATTN_EAGER;
        c->x.dropout = 0.1;
        c->l.zero = 0;
        c->l.overlap_grad = 0;
        c->l.overlap_param = 0;
        c->l.sp = 0;
    }
    else /* Megatron-Core stacks: NeMo's and Megatron-Bridge's performance recipes and
          * Megatron-LM's examples turn on Transformer Engine's TP overlap */
        c->l.tp_overlap = 1;
    if (n21)
        c->l.recompute = CP_RC_FULL;
    else if (k22) {
        const char *v = r->f[C_RECOMP];
        c->l.recompute = strstr(v, "full") ? CP_RC_FULL :
                         strstr(v, "selective") ? CP_RC_SELECTIVE : CP_RC_NONE;
        c->l.sp = strstr(v, "sequence") ? 1 : 0;
        c->l.dp = 1;
        c->l.gbs = c->l.mbs;
    } else {
        c->free_rc = 1;
        c->l.recompute = CP_RC_AUTO;
    }
    c->measured = atof(r->f[C_MEASURED]);
    if (k22) {
        const char *p = strstr(unit, "(fwd ");
        c->kind = 3;
        c->measured_fwd = p ? atof(p + 5) : 0;
        p = strstr(unit, ", bwd ");
        c->measured_bwd = p ? atof(p + 6) : 0;
    } else if (strncmp(unit, "tokens/s", 8) == 0) {
        c->kind = 2;
    } else if (strstr(unit, "eq.3")) {
        c->kind = 0;
    } else if (strstr(unit, "TFLOP")) {
        c->kind = 1;
    } else {
        c->kind = 2;
    }
}

/* ------------------------------------------------------------------ */
/* Predicting a case                                                   */

/* Machines of one host file replicated over `hosts`, loaded once. */
typedef struct llm_machine {
    char path[256];
    int hosts, gpus;
    cp_topo *t;
} llm_machine;

#define LLM_MACHINES 32
static llm_machine llm_machines[LLM_MACHINES];

/* Machine `path` (relative to root) with `gpus` GPUs a host (0: all)
 * replicated over `hosts`, loaded once. */
static cp_topo *llm_machine_get(const char *root, const char *path, int hosts, int gpus)
{
    char full[512];
    cp_err e;
    int i;
    for (i = 0; i < LLM_MACHINES && llm_machines[i].t; i++)
        if (!strcmp(llm_machines[i].path, path) && llm_machines[i].hosts == hosts &&
            llm_machines[i].gpus == gpus)
            return llm_machines[i].t;
    if (i == LLM_MACHINES)
        return NULL;
    snprintf(full, sizeof full, "%s/%s", root, path);
    cp_err_clear(&e);
    if (cp_topo_load_machine(full, gpus, hosts, &llm_machines[i].t, &e) != CP_OK) {
        cp_err_print(&e, stderr);
        return NULL;
    }
    snprintf(llm_machines[i].path, sizeof llm_machines[i].path, "%s", path);
    llm_machines[i].hosts = hosts;
    llm_machines[i].gpus = gpus;
    return llm_machines[i].t;
}

static void llm_groups_free(void);

static void llm_machines_free(void)
{
    int i;
    llm_groups_free();
    for (i = 0; i < LLM_MACHINES; i++) {
        cp_topo_free(llm_machines[i].t);
        memset(&llm_machines[i], 0, sizeof llm_machines[i]);
    }
}

typedef struct llm_eval {
    double pred, meas, err;      /* in the row's unit; err = pred / meas - 1 */
    double pred_fwd, pred_bwd;   /* K22 rows: ms per layer */
    double err_fwd, err_bwd;
    double iteration_ms;
    int fits;
    cp_layout used;
    cp_llm_result res;
} llm_eval;

/* Groups depend only on the degrees and the machine: built once each. */
typedef struct llm_gcache {
    const cp_topo *t;
    int tp, cp, dp, pp, ep, etp;
    cp_groups G;
} llm_gcache;

#define LLM_GCACHE 256
static llm_gcache llm_gc[LLM_GCACHE];
static int llm_ngc;

static const cp_groups *llm_groups_get(const cp_topo *t, const cp_layout *l, cp_err *e)
{
    int i;
    for (i = 0; i < llm_ngc; i++)
        if (llm_gc[i].t == t && llm_gc[i].tp == l->tp && llm_gc[i].cp == l->cp &&
            llm_gc[i].dp == l->dp && llm_gc[i].pp == l->pp && llm_gc[i].ep == l->ep &&
            llm_gc[i].etp == cp_layout_etp(l))
            return &llm_gc[i].G;
    if (llm_ngc == LLM_GCACHE)
        return NULL;
    if (cp_groups_build(&llm_gc[llm_ngc].G, t, l, 0, NULL, e))
        return NULL;
    llm_gc[llm_ngc].t = t;
    llm_gc[llm_ngc].tp = l->tp, llm_gc[llm_ngc].cp = l->cp;
    llm_gc[llm_ngc].dp = l->dp, llm_gc[llm_ngc].pp = l->pp;
    llm_gc[llm_ngc].ep = l->ep, llm_gc[llm_ngc].etp = cp_layout_etp(l);
    return &llm_gc[llm_ngc++].G;
}

static void llm_groups_free(void)
{
    int i;
    for (i = 0; i < llm_ngc; i++)
        cp_groups_free(&llm_gc[i].G);
    llm_ngc = 0;
}

/* Predict layout l on machine t; CP_OK and *res, or an error. */
static int llm_predict_layout(const cp_xformer *x, cp_layout *l, const cp_topo *t,
                              const cp_gpu *g, cp_llm_result *res, cp_err *e)
{
    const cp_groups *G;
    cp_llm_opts o;
    int rc;
    if ((rc = cp_layout_resolve(l, x, t->ngpus, t->ngpus / t->nhosts, e)))
        return rc;
    if (!(G = llm_groups_get(t, l, e)))
        return e->status ? e->status : CP_EINTERNAL;
    memset(&o, 0, sizeof o);
    o.dp_alg = CP_ALGS;
    rc = cp_llm_predict(x, l, g, G, &o, res, e);
    return rc;
}

/* Layout l with the memory settings the row leaves unstated: the
 * defaults, and where those recompute, bf16 gradient reduction and then FP8
 * weights (the recipes' memory savers), the first that recomputes least. */
static int llm_eval_memory(const llm_case *c, cp_layout l, const cp_topo *t, const cp_gpu *g,
                           cp_layout *used, cp_llm_result *res)
{
    int k, ok = -1;
    for (k = 0; k < (c->free_mem ? 3 : 1); k++) {
        cp_layout lk = l;
        cp_llm_result r;
        cp_err e;
        if (k >= 1)
            lk.grad_fp32 = 0;
        if (k >= 2) {
            if (lk.precision != CP_PREC_FP8)
                break;
            lk.fp8_params = 1;
        }
        cp_err_clear(&e);
        if (llm_predict_layout(&c->x, &lk, t, g, &r, &e) != CP_OK) {
            if (getenv("LLM_ROWS_DEBUG"))
                cp_err_print(&e, stderr);
            return -1;
        }
        if (ok < 0 || (r.fits && (!res->fits || r.recompute < res->recompute))) {
            *res = r;
            *used = lk;
            ok = 0;
        }
        if (r.fits && r.recompute == CP_RC_NONE)
            break;
    }
    return ok;
}

/* The fastest fitting choice of what the row leaves unstated. */
static int llm_case_eval(llm_case *c, const char *root, const cp_gpu_calib *cal, llm_eval *ev)
{
    static const int mbs_opts[] = {1, 2, 4, 8};
    cp_topo *t = llm_machine_get(root, c->topo, c->hosts, c->gpus_used);
    cp_gpu g;
    cp_err e;
    double best = HUGE_VAL;
    int i, v, nv, found = 0;
    memset(ev, 0, sizeof *ev);
    if (!t)
        return -1;
    cp_err_clear(&e);
    if (cp_gpu_from_topo(t, &g, &e))
        return -1;
    if (cal)
        g.cal = *cal;
    nv = c->free_vp ? (int)(c->x.layers / c->l.pp) : 1;
    for (i = 0; i < (c->free_mbs ? 4 : 1); i++)
        for (v = 1; v <= nv; v++) {
            cp_layout l = c->l, used;
            cp_llm_result res;
            if (c->free_mbs)
                l.mbs = mbs_opts[i];
            if (c->free_vp) {
                if (c->x.layers % ((int64_t)l.pp * v))
                    continue;
                l.vp = v;
            }
            if (llm_eval_memory(c, l, t, &g, &used, &res))
                continue;
            /* what fits beats what does not; then the fastest */
            if (!found || (res.fits && !ev->fits) ||
                (res.fits == ev->fits && res.iteration_ms < best)) {
                best = res.iteration_ms;
                ev->used = used;
                ev->res = res;
                ev->fits = res.fits;
                found = 1;
            }
        }
    if (!found)
        return -1;
    ev->iteration_ms = best;
    {
        double n = c->l.gpus ? c->l.gpus : ev->used.gpus, s = (double)c->x.seq;
        double B = ev->used.gbs, L = (double)c->x.layers, h = (double)c->x.hidden;
        double V = (double)c->x.vocab, tsec = best / 1000;
        switch (c->kind) {
        case 0: /* Narayanan eq. 3 */
            ev->pred = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h)) /
                       (tsec * n) / 1e12;
            break;
        case 1:
            ev->pred = ev->res.model_tflops_per_gpu;
            break;
        case 2:
            ev->pred = ev->res.tokens_per_s_per_gpu;
            break;
        case 4: /* ms per iteration */
            ev->pred = best;
            break;
        default: {
            const cp_groups *G;
            cp_layout l = ev->used;
            cp_err_clear(&e);
            if (!(G = llm_groups_get(t, &l, &e)))
                return -1;
            cp_llm_block_ms(&c->x, &l, &g, G, l.recompute, &ev->pred_fwd, &ev->pred_bwd);
            ev->err_fwd = ev->pred_fwd / c->measured_fwd - 1;
            ev->err_bwd = ev->pred_bwd / c->measured_bwd - 1;
            ev->pred = ev->pred_fwd + ev->pred_bwd;
        }
        }
    }
    ev->meas = c->measured;
    ev->err = ev->pred / ev->meas - 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* vTrain's single-server runs                                        */

/* Columns of vtrain-a100-single-node.csv. */
enum { V_GPUS, V_GBS, V_MBS, V_HIDDEN, V_HEADS, V_LAYERS, V_SEQ, V_TP, V_DP, V_PP, V_MS };

/* A vTrain row as its repository states the setting: Megatron-DeepSpeed,
 * GPT with FFN 4h and vocabulary 50,257, fp16, full activation
 * checkpointing, 1F1B, no gradient bucketing (one all-reduce after
 * backward), an A100 server of 8 GPUs of which the run used `# GPUs`.
 * Megatron-DeepSpeed's defaults fill the rest: eager attention, dropout
 * 0.1, fp16 gradients reduced by DeepSpeed, no sequence parallelism. */
static void llm_vtrain_setup(const llm_row *r, llm_case *c)
{
    memset(c, 0, sizeof *c);
    c->x.layers = llm_int(r->f[V_LAYERS]);
    c->x.hidden = llm_int(r->f[V_HIDDEN]);
    c->x.heads = c->x.kv_heads = llm_int(r->f[V_HEADS]);
    c->x.ffn = 4 * c->x.hidden;
    c->x.seq = llm_int(r->f[V_SEQ]);
    c->x.vocab = 50257;
    c->x.max_pos = c->x.seq;
    c->x.mlp = CP_MLP_GELU, c->x.pos = CP_POS_LEARNED, c->x.norm = CP_NORM_LAYER;
    c->x.qkv_bias = c->x.o_bias = c->x.mlp_bias = 1;
    c->x.tied = 1;
    c->x.dropout = 0.1;
    c->x.window_every = 1;
    cp_layout_default(&c->l);
    c->l.tp = llm_int(r->f[V_TP]);
    c->l.dp = llm_int(r->f[V_DP]);
    c->l.pp = llm_int(r->f[V_PP]);
    c->l.mbs = llm_int(r->f[V_MBS]);
    c->l.gbs = llm_int(r->f[V_GBS]);
    c->l.seq = c->x.seq;
    c->l.precision = CP_PREC_FP16;
    c->l.attn = CP_ATTN_EAGER;
    c->l.recompute = CP_RC_FULL;
    c->l.zero = 0;
    c->l.overlap_grad = c->l.overlap_param = 0;
    c->l.sp = 0;
    c->l.grad_fp32 = 0;
    c->topo = "topologies/dgx-a100-80g.json";
    c->hosts = 1;
    c->gpus_used = llm_int(r->f[V_GPUS]);
    c->kind = 4;
    c->measured = atof(r->f[V_MS]);
}

#endif
