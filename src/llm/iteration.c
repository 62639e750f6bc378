/*
 * iteration.c - one iteration of a large-model layout (see iteration.h;
 * docs/model.md, "Large-model layouts", eq. L1-L9).
 *
 * Per micro-batch, a block's forward and backward are priced step by step
 * (pass_cost): kernels at their times, TP collectives exposed unless the
 * framework hides them under the GEMM that follows, context-parallel KV
 * exchange under attention, and the whole pass no faster than the host
 * can launch its kernels.  A chunk is its blocks plus the embedding or the
 * head where it holds them.  The schedule lays the chunks out; the
 * slowest stage's end, its data-parallel tail and its optimizer step give
 * the iteration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm/dpsync.h"
#include "llm/iteration.h"
#include "llm/moe.h"

/* What one pass (a block's forward or backward, or an end of the model)
 * costs, us. */
typedef struct pass_cost {
    double kernel;    /* GEMMs, attention, memory-bound kernels */
    double tp;        /* exposed TP collectives */
    double cp;        /* exposed context-parallel exchange */
    double ep;        /* exposed expert-parallel all-to-alls and ETP collectives */
    double host;      /* the host's dispatch beyond the GPU's work */
    double tp_all;    /* every TP collective */
    double ep_all;    /* every expert-parallel collective */
    int nkern;
} pass_cost;

static double pass_total(const pass_cost *p)
{
    return p->kernel + p->tp + p->cp + p->ep + p->host;
}

/* The next GEMM after step i, whose time a collective issued before it
 * can hide under (Megatron's asynchronous all-gather before a data
 * gradient, reduce-scatter before a weight gradient). */
static double next_gemm_us(const cp_gpu *g, const cp_steps *st, int i)
{
    int j;
    for (j = i + 1; j < st->n; j++)
        if (st->s[j].kind == CP_ST_GEMM)
            return cp_gpu_step_us(g, &st->s[j]);
    return 0;
}

/* Ring attention's exchange (eq. L5): c - 1 rounds, each sending this
 * GPU's keys and values (and in backward their gradients too) to the next
 * GPU of the CP group while attention computes on the block it has; what
 * a round's send takes beyond its block's attention is exposed. */
static double cp_exchange_us(const cp_xformer *x, const cp_layout *l, const cp_groups *G,
                             double attn_us, int bwd, double loss)
{
    double s = (double)(l->seq > 0 ? l->seq : x->seq), T = l->mbs * s / l->cp;
    double g = x->kv_heads >= l->tp ? (double)x->kv_heads / l->tp : 1;
    double kv = 2 * T * g * (double)cp_xf_head_dim(x) * 2 * (bwd ? 2 : 1);
    double round, block, exposed;
    if (l->cp <= 1)
        return 0;
    /* a round is one step of a ring all-gather: (all-gather of c blocks) / (c - 1) */
    round = cp_groups_us(G, CP_G_CP, CP_CM_AG, kv * l->cp, CP_ALGS, NULL) / (l->cp - 1);
    block = attn_us / l->cp;
    exposed = round > block ? round - block : 0;
    /* the hidden part slows the attention it hides under (eq. K5) */
    return ((exposed + (round - exposed) * loss)) * (l->cp - 1);
}

/* Price a list of steps.  `hide` lets collectives flagged CP_SF_HIDE
 * overlap the next GEMM; `sel_only` prices only the steps selective
 * recomputation rebuilds. */
static void pass_cost_of(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                         const cp_groups *G, const cp_steps *st, int hide, int sel_only, int bwd,
                         pass_cost *pc)
{
    double attn = 0;
    int i;
    memset(pc, 0, sizeof *pc);
    for (i = 0; i < st->n; i++) {
        const cp_step *s = &st->s[i];
        if (sel_only && !(s->flags & CP_SF_SEL))
            continue;
        if (s->kind == CP_ST_COMM && !G) { /* a lower bound: the kernels alone
                                               (cp_llm_lower_bound_ms) */
            pc->nkern++;
            continue;
        }
        if (s->kind == CP_ST_COMM && (s->group == CP_G_EP || s->group == CP_G_ETP)) {
            /* the experts' collectives (moe.h), exposed unless overlapped below */
            pc->ep_all += s->comm == CP_CM_A2A ? cp_moe_a2a_us(x, l, g, G, s->comm_bytes, NULL)
                          : cp_groups_us(G, s->group, s->comm, s->comm_bytes, CP_ALGS, NULL);
            pc->nkern++;
            continue;
        }
        if (s->kind == CP_ST_COMM) {
            double t = cp_groups_us(G, s->group, s->comm, s->comm_bytes, CP_ALGS, NULL);
            double ex = t;
            if (hide && (s->flags & CP_SF_HIDE)) {
                ex = t - next_gemm_us(g, st, i);
                if (ex < 0)
                    ex = 0;
                /* the GEMM it hides under runs on fewer SMs meanwhile (eq. K5) */
                ex += (t - ex) * cp_gpu_overlap_loss(g);
            }
            pc->tp_all += t;
            pc->tp += ex;
            pc->nkern++;
            continue;
        }
        {
            double t = cp_gpu_step_us(g, s);
            if (t <= 0)
                continue;
            pc->kernel += t;
            /* a grouped GEMM launches one GEMM per expert (eq. E3) */
            pc->nkern += s->flags & CP_SF_GROUPED ? (int)s->batch : 1;
            if (s->flags & CP_SF_SEL)
                attn += t;
        }
    }
    if (!sel_only && G)
        pc->cp = cp_exchange_us(x, l, G, attn, bwd, cp_gpu_overlap_loss(g));
    pc->ep = pc->ep_all;
    if (l->moe_overlap > 0 && pc->ep_all > 0) {
        /* eq. E9: the other micro-batch's pass (1F1B all-to-all overlap)
         * computes meanwhile, slowed by the SMs the collective takes */
        double hid = pc->ep_all < pc->kernel ? pc->ep_all : pc->kernel;
        pc->ep = pc->ep_all - hid + hid * cp_gpu_overlap_loss(g);
    }
    {
        double host = pc->nkern * g->cal.host_us, gpu = pc->kernel + pc->tp + pc->cp + pc->ep;
        pc->host = host > gpu ? host - gpu : 0;
    }
}

/* Per micro-batch, the forward and backward of one chunk of stage r and
 * their terms, us. */
typedef struct chunk_cost {
    double fwd, bwd;
    double compute, recompute, host, tp, cp, ep, tp_all, ep_all, offload;
    double ep_fwd, ep_bwd;   /* the exposed expert collectives of forward and of backward */
} chunk_cost;

static void add_pass(chunk_cost *c, const pass_cost *p, double times, int recompute, int fwd)
{
    double t = pass_total(p) * times;
    if (fwd)
        c->fwd += t;
    else
        c->bwd += t;
    if (recompute)
        c->recompute += p->kernel * times;
    else
        c->compute += p->kernel * times;
    c->host += p->host * times;
    c->tp += p->tp * times;
    c->cp += p->cp * times;
    c->ep += p->ep * times;
    c->tp_all += p->tp_all * times;
    c->ep_all += p->ep_all * times;
    if (fwd)
        c->ep_fwd += p->ep * times;
    else
        c->ep_bwd += p->ep * times;
}

/* The passes every chunk shares: one block forward, backward, and what
 * recomputation runs again; and the ends of the model. */
typedef struct passes {
    pass_cost blk_f, blk_b, blk_re, emb_f, emb_b, head_f, head_b;
    pass_cost dblk_f, dblk_b, dblk_re; /* a mixture of experts' dense blocks (moe.h) */
    cp_recompute rc;
} passes;

/* One kind of block's forward, recomputation and backward: ops.c's block,
 * or for a mixture of experts or latent attention moe.c's, routed (moe)
 * or dense. */
static void price_block(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                        const cp_groups *G, cp_recompute rc, int moe, pass_cost *f,
                        pass_cost *re, pass_cost *b)
{
    cp_steps st;
    /* forward TP collectives hide only with Transformer Engine's overlap;
     * backward's under Megatron's asynchronous collectives too */
    int hide_f = l->tp_overlap > 0, hide_b = l->tp_overlap > 0 || l->fw == CP_LLM_MEGATRON;
    int special = cp_moe_special(x);
    if (special)
        cp_moe_block_fwd(x, l, moe, &st);
    else
        cp_block_fwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, hide_f, 0, 0, f);
    if (rc == CP_RC_FULL)
        *re = *f;
    else if (rc == CP_RC_SELECTIVE)
        pass_cost_of(x, l, g, G, &st, hide_f, 1, 0, re);
    else
        memset(re, 0, sizeof *re);
    if (special)
        cp_moe_block_bwd(x, l, moe, &st);
    else
        cp_block_bwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, hide_b, 0, 1, b);
}

static void price_passes(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                         const cp_groups *G, cp_recompute rc, passes *P)
{
    cp_steps st;
    int hide_f = l->tp_overlap > 0, hide_b = l->tp_overlap > 0 || l->fw == CP_LLM_MEGATRON;
    P->rc = rc;
    price_block(x, l, g, G, rc, cp_moe_on(x), &P->blk_f, &P->blk_re, &P->blk_b);
    if (cp_moe_on(x))
        price_block(x, l, g, G, rc, 0, &P->dblk_f, &P->dblk_re, &P->dblk_b);
    else {
        memset(&P->dblk_f, 0, sizeof P->dblk_f);
        memset(&P->dblk_re, 0, sizeof P->dblk_re);
        memset(&P->dblk_b, 0, sizeof P->dblk_b);
    }
    cp_embed_fwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, 0, 0, 0, &P->emb_f);
    cp_embed_bwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, 0, 0, 1, &P->emb_b);
    cp_head_fwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, hide_f, 0, 0, &P->head_f);
    cp_head_bwd(x, l, &st);
    pass_cost_of(x, l, g, G, &st, hide_b, 0, 1, &P->head_b);
}

/* Activation offload's copies beside chunk cc's compute (eq. T2): what
 * they take beyond it holds the chunk. */
static void offload_chunk(const cp_xformer *x, const cp_layout *l, const cp_tiers *t, int G,
                          chunk_cost *cc)
{
    double bytes, xf, xb;
    if (!l->offload_act || !t)
        return;
    bytes = (double)cp_layout_chunk_layers(l, G) * cp_block_act_bytes(x, l, CP_RC_NONE);
    cp_offload_act_us(&t->t[l->offload_act], bytes, cc->fwd, cc->bwd, &xf, &xb);
    cc->fwd += xf;
    cc->bwd += xb;
    cc->offload += xf + xb;
}

static void chunk_of(const cp_xformer *x, const cp_layout *l, const passes *P, int r, int c,
                     chunk_cost *cc)
{
    int G = c * l->pp + r, last = l->pp * l->vp - 1;
    int64_t nd = 0, nm = cp_layout_chunk_layers(l, G), nrc = cp_layout_recomputed(l, P->rc, G);
    int64_t rd;
    if (cp_moe_on(x)) /* a mixture of experts' dense and routed blocks (moe.h) */
        cp_moe_chunk_blocks(x, l, G, &nd, &nm);
    rd = nrc < nd ? nrc : nd; /* the chunk's first blocks are recomputed first */
    memset(cc, 0, sizeof *cc);
    add_pass(cc, &P->blk_f, (double)nm, 0, 1);
    add_pass(cc, &P->blk_re, (double)(nrc - rd), 1, 0);
    add_pass(cc, &P->blk_b, (double)nm, 0, 0);
    if (nd > 0) {
        add_pass(cc, &P->dblk_f, (double)nd, 0, 1);
        add_pass(cc, &P->dblk_re, (double)rd, 1, 0);
        add_pass(cc, &P->dblk_b, (double)nd, 0, 0);
    }
    if (G == 0) {
        add_pass(cc, &P->emb_f, 1, 0, 1);
        add_pass(cc, &P->emb_b, 1, 0, 0);
    }
    if (G == last) {
        add_pass(cc, &P->head_f, 1, 0, 1);
        add_pass(cc, &P->head_b, 1, 0, 0);
    }
}

/* One activation (or its gradient) between adjacent stages: the
 * sequence-sharded tensor under SP (Megatron sends s/t x b x h), whole
 * otherwise, on the pair's links. */
static double p2p_ms(const cp_xformer *x, const cp_layout *l, const cp_groups *G)
{
    double s = (double)(l->seq > 0 ? l->seq : x->seq), T = l->mbs * s / l->cp;
    double bytes = (l->sp > 0 ? T / l->tp : T) * (double)x->hidden * 2;
    if (l->pp <= 1)
        return 0;
    return cp_groups_us(G, CP_G_PP, CP_CM_P2P, bytes, CP_ALGS, NULL) / 1000;
}

static const char *const term_names[CP_LLM_TERMS] = {
    "compute", "recompute", "host", "tp", "cp", "ep", "pp", "bubble", "dp", "optimizer",
    "offload"};

const char *cp_llm_term_name(int i)
{
    return i >= 0 && i < CP_LLM_TERMS ? term_names[i] : "?";
}

double cp_llm_term(const cp_llm_breakdown *b, int i)
{
    const double v[CP_LLM_TERMS] = {b->compute,   b->recompute, b->host, b->tp,
                                    b->cp,        b->ep,        b->pp,   b->bubble,
                                    b->dp,        b->optimizer, b->offload};
    return i >= 0 && i < CP_LLM_TERMS ? v[i] : 0;
}

void cp_llm_result_free(cp_llm_result *r)
{
    if (r->have_sched)
        cp_sched_free(&r->sched);
    r->have_sched = 0;
    free(r->dp_end_ms);
    free(r->step_end_ms);
    free(r->ep_fwd_ms);
    free(r->ep_bwd_ms);
    r->dp_end_ms = r->step_end_ms = NULL;
    r->ep_fwd_ms = r->ep_bwd_ms = NULL;
}

/* The GPU's memory fits, and what is offloaded fits its tiers: the bytes
 * every GPU of a host places in a tier (optimizer states, activations, or
 * both) within the tier's share of a host (not checked when the tier gives
 * no capacity). */
static int fits_mem(const cp_layout *l, const cp_gpu *g, const cp_tiers *t, const cp_llm_mem *m)
{
    double in[3] = {0, 0, 0};
    int k;
    if (g->capacity > 0 && m->total > g->capacity)
        return 0;
    in[l->offload_opt] += m->offloaded - m->offloaded_act;
    in[l->offload_act] += m->offloaded_act;
    for (k = CP_TIER_HOST; t && k <= CP_TIER_POOL; k++)
        if (t->t[k].capacity_gb > 0 && in[k] * l->per_host > t->t[k].capacity_gb * 1e9)
            return 0;
    return 1;
}

/* The iteration at a fixed recomputation. */
static int predict_at(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                      const cp_groups *G, const cp_llm_opts *o, cp_recompute rc,
                      cp_llm_result *out, cp_err *e)
{
    int p = l->pp, v = l->vp, m = l->micro, r, c, worst = 0, rcode;
    double *fwd = malloc((size_t)p * v * sizeof *fwd), *bwd = malloc((size_t)p * v * sizeof *bwd);
    chunk_cost *cc = calloc((size_t)p * v, sizeof *cc);
    double end = 0, flops;
    cp_sched_in in;
    passes P;
    memset(out, 0, sizeof *out);
    if (!fwd || !bwd || !cc) {
        free(fwd), free(bwd), free(cc);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    if ((l->offload_opt && (!o->tiers || !o->tiers->t[l->offload_opt].available)) ||
        (l->offload_act && (!o->tiers || !o->tiers->t[l->offload_act].available))) {
        int tier = l->offload_opt ? l->offload_opt : l->offload_act;
        free(fwd), free(bwd), free(cc);
        return cp_fail(e, CP_EINPUT, "the machine has no %s tier to offload to (%s)",
                       cp_tier_name((cp_tier)tier),
                       tier == CP_TIER_POOL ? "no cxl_switch and pool devices"
                                            : "no CPU socket with reduce_gbs within reach");
    }
    price_passes(x, l, g, G, rc, &P);
    for (r = 0; r < p; r++)
        for (c = 0; c < v; c++) {
            chunk_cost *k = &cc[r * v + c];
            double extra;
            chunk_of(x, l, &P, r, c, k);
            offload_chunk(x, l, o->tiers, c * p + r, k);
            /* ZeRO-2/3 and FSDP: the chunk's gathers and reduce-scatters run
             * beside its compute every micro-batch; what they take beyond it
             * holds the chunk (eq. D3) */
            extra = cp_dp_per_micro_ms(l, G, o->dp_alg, o->dp_pool,
                                       cp_stage_params(x, l, r) / l->tp / v) *
                        1000 - (k->fwd + k->bwd);
            if (extra > 0)
                k->bwd += extra;
            fwd[r * v + c] = k->fwd / 1000;
            bwd[r * v + c] = k->bwd / 1000;
        }
    memset(&in, 0, sizeof in);
    in.pp = p, in.vp = v, in.micro = m;
    in.fwd_ms = fwd, in.bwd_ms = bwd;
    in.p2p_ms = p2p_ms(x, l, G);
    /* Megatron overlaps sends with compute only in the interleaved
     * schedule (overlap_p2p_comm); DeepSpeed's engine always blocks */
    in.p2p_blocks = !(l->fw == CP_LLM_MEGATRON && v > 1);
    in.keep_events = o->keep_events;
    if ((rcode = cp_sched_run(&in, &out->sched, e))) {
        free(fwd), free(bwd), free(cc);
        return rcode;
    }
    out->have_sched = 1;
    if (o->keep_events) {
        out->dp_end_ms = calloc((size_t)p, sizeof *out->dp_end_ms);
        out->step_end_ms = calloc((size_t)p, sizeof *out->step_end_ms);
        out->ep_fwd_ms = calloc((size_t)p * v, sizeof *out->ep_fwd_ms);
        out->ep_bwd_ms = calloc((size_t)p * v, sizeof *out->ep_bwd_ms);
        if (!out->dp_end_ms || !out->step_end_ms || !out->ep_fwd_ms || !out->ep_bwd_ms) {
            free(fwd), free(bwd), free(cc);
            cp_llm_result_free(out);
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
    }
    for (r = 0; r < p; r++) {
        cp_dp_in di;
        cp_dp_out dout;
        double t;
        memset(&di, 0, sizeof di);
        di.l = l, di.G = G, di.g = g, di.alg = o->dp_alg;
        di.params = cp_stage_params(x, l, r) / l->tp;
        di.stage_end_ms = out->sched.stage_end_ms[r];
        di.last_bwd_start_ms = out->sched.last_bwd_start_ms + (size_t)r * v;
        di.last_bwd_end_ms = out->sched.last_bwd_end_ms + (size_t)r * v;
        di.tiers = o->tiers;
        di.pool = o->dp_pool;
        if (cp_moe_on(x)) /* the experts' gradients on their own group (moe.h) */
            cp_moe_dp_sync(x, l, r, &di, &dout);
        else
            cp_dp_sync(&di, &dout);
        t = dout.grads_done_ms + dout.optimizer_ms + dout.gather_exposed_ms;
        if (out->dp_end_ms) {
            out->dp_end_ms[r] = dout.grads_done_ms;
            out->step_end_ms[r] = t;
        }
        if (t > end || r == 0) {
            double busy_compute = 0, rec = 0, host = 0, tp = 0, cpx = 0, ep = 0, off = 0;
            end = t;
            worst = r;
            for (c = 0; c < v; c++) {
                const chunk_cost *k = &cc[r * v + c];
                busy_compute += k->compute * m / 1000;
                rec += k->recompute * m / 1000;
                host += k->host * m / 1000;
                tp += k->tp * m / 1000;
                cpx += k->cp * m / 1000;
                ep += k->ep * m / 1000;
                off += k->offload * m / 1000;
            }
            out->b.compute = busy_compute;
            out->b.recompute = rec;
            out->b.host = host;
            out->b.tp = tp;
            out->b.cp = cpx;
            out->b.ep = ep;
            out->b.pp = out->sched.send_ms[r];
            out->b.dp = dout.grads_done_ms - out->sched.stage_end_ms[r] + dout.gather_exposed_ms;
            out->b.optimizer = dout.optimizer_ms;
            out->b.offload = off;
            out->dp_alg = dout.alg;
            out->dp_expert_alg = dout.expert_alg;
            out->dp_buckets = dout.buckets;
            out->dp_pool_buckets = dout.pool_buckets;
            out->dp_comm_ms = dout.comm_ms;
        }
    }
    /* what the stage's own work does not explain is idle: the bubble */
    out->b.bubble = end - out->b.compute - out->b.recompute - out->b.host - out->b.tp -
                    out->b.cp - out->b.ep - out->b.pp - out->b.dp - out->b.optimizer -
                    out->b.offload;
    if (out->b.bubble < 0)
        out->b.bubble = 0;
    out->iteration_ms = end;
    out->stage = worst;
    out->recompute = rc;
    out->recompute_layers = rc == CP_RC_FULL ? l->recompute_layers : 0;
    out->fwd_ms = out->bwd_ms = 0;
    out->tp_comm_ms = out->ep_comm_ms = 0;
    for (c = 0; c < v; c++) {
        out->fwd_ms += fwd[worst * v + c];
        out->bwd_ms += bwd[worst * v + c];
        out->tp_comm_ms += cc[worst * v + c].tp_all * m / 1000;
        out->ep_comm_ms += cc[worst * v + c].ep_all * m / 1000;
    }
    for (r = 0; out->ep_fwd_ms && r < p * v; r++) {
        out->ep_fwd_ms[r] = cc[r].ep_fwd / 1000;
        out->ep_bwd_ms[r] = cc[r].ep_bwd / 1000;
    }
    if (cp_moe_on(x) && G->a2a) { /* one all-to-all and where it binds, for the output */
        cp_moe_tokens tk;
        cp_a2a_why w;
        cp_moe_tokens_of(x, l, &tk);
        out->a2a_ms = cp_moe_a2a_us(x, l, g, G, tk.a2a_bytes, &w) / 1000;
        out->a2a_path = w.path;
        out->a2a_bind = w.bind;
    }
    flops = l->gbs * (cp_moe_special(x) ? cp_moe_flops_per_seq(x, l->seq, 0)
                                        : cp_model_flops_per_seq(x, l->seq, 0));
    out->tokens_per_s_per_gpu = l->gbs * (double)l->seq / (end / 1000) / l->gpus;
    out->model_tflops_per_gpu = flops / (end / 1000) / l->gpus / 1e12;
    out->mfu = out->model_tflops_per_gpu * 1e12 /
               (l->precision == CP_PREC_FP8 && g->peak8 > 0 ? g->peak8 : g->peak16);
    cp_llm_memory(x, l, rc, &out->mem);
    out->fits = fits_mem(l, g, o->tiers, &out->mem);
    {
        double best = -1;
        int i;
        out->bound = "compute";
        for (i = 0; i < CP_LLM_TERMS; i++) {
            double t = cp_llm_term(&out->b, i);
            if (i == 1 || i == 2) /* recompute and host count with compute */
                continue;
            if (i == 0)
                t += out->b.recompute + out->b.host;
            if (t > best) {
                best = t;
                out->bound = cp_llm_term_name(i);
            }
        }
        if (!out->fits)
            out->bound = "memory";
    }
    free(fwd), free(bwd), free(cc);
    if (!o->keep_events) {
        cp_sched_free(&out->sched);
        out->have_sched = 0;
    }
    return CP_OK;
}

void cp_llm_block_ms(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                     const cp_groups *G, cp_recompute rc, double *fwd_ms, double *bwd_ms)
{
    passes P;
    price_passes(x, l, g, G, rc, &P);
    *fwd_ms = pass_total(&P.blk_f) / 1000;
    *bwd_ms = (pass_total(&P.blk_b) + pass_total(&P.blk_re)) / 1000;
}

/* The memory of layout l under recomputation rc fits the GPU. */
static int fits_with(const cp_xformer *x, const cp_layout *l, const cp_gpu *g, cp_recompute rc)
{
    cp_llm_mem m;
    cp_llm_memory(x, l, rc, &m);
    return g->capacity <= 0 || m.total <= g->capacity;
}

cp_recompute cp_llm_resolve_recompute(const cp_xformer *x, cp_layout *l, const cp_gpu *g)
{
    int64_t lo, hi;
    if (l->recompute != CP_RC_AUTO)
        return l->recompute;
    /* auto (eq. M5): the least recomputation that fits: none, selective,
     * then full recomputation of the fewest blocks per chunk */
    l->recompute_layers = 0;
    if (fits_with(x, l, g, CP_RC_NONE))
        return CP_RC_NONE;
    if (fits_with(x, l, g, CP_RC_SELECTIVE))
        return CP_RC_SELECTIVE;
    lo = 1, hi = l->layers_per_chunk; /* the least n that fits, by bisection */
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        l->recompute_layers = (int)mid;
        if (fits_with(x, l, g, CP_RC_FULL))
            hi = mid;
        else
            lo = mid + 1;
    }
    l->recompute_layers = lo < l->layers_per_chunk ? (int)lo : 0;
    return CP_RC_FULL;
}

int cp_llm_predict(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                   const cp_groups *G, const cp_llm_opts *o, cp_llm_result *out, cp_err *e)
{
    cp_layout lk = *l;
    cp_recompute rc = cp_llm_resolve_recompute(x, &lk, g);
    return predict_at(x, &lk, g, G, o, rc, out, e);
}

/* What the passes of a block depend on in one search: the degrees inside
 * a stage, the micro-batch, the recomputation and the group models (the
 * cache's, so equal pointers are equal machines).  The model, the GPU and
 * the framework's settings are the search's own. */
typedef struct bound_key {
    int tp, cp, mbs, ep, etp, sp, rc;
    const void *grp[CP_G_KINDS];
} bound_key;

typedef struct bound_entry {
    bound_key k;
    passes P;
    int used;
} bound_entry;

struct cp_llm_bound_memo {
    bound_entry *e;  /* [cap], open addressing */
    size_t cap, n;
};

cp_llm_bound_memo *cp_llm_bound_memo_new(void)
{
    cp_llm_bound_memo *m = calloc(1, sizeof *m);
    if (m && !(m->e = calloc(m->cap = 256, sizeof *m->e))) {
        free(m);
        return NULL;
    }
    return m;
}

void cp_llm_bound_memo_free(cp_llm_bound_memo *m)
{
    if (!m)
        return;
    free(m->e);
    free(m);
}

/* FNV-1a over the key's fields (not its bytes: padding is not data). */
static size_t key_hash(const bound_key *k)
{
    size_t h = 14695981039346656037u;
    int i, f[7] = {k->tp, k->cp, k->mbs, k->ep, k->etp, k->sp, k->rc};
    for (i = 0; i < 7; i++)
        h = (h ^ (size_t)(unsigned)f[i]) * 1099511628211u;
    for (i = 0; i < CP_G_KINDS; i++)
        h = (h ^ (size_t)k->grp[i]) * 1099511628211u;
    return h;
}

static int key_eq(const bound_key *a, const bound_key *b)
{
    int i;
    if (a->tp != b->tp || a->cp != b->cp || a->mbs != b->mbs || a->ep != b->ep ||
        a->etp != b->etp || a->sp != b->sp || a->rc != b->rc)
        return 0;
    for (i = 0; i < CP_G_KINDS; i++)
        if (a->grp[i] != b->grp[i])
            return 0;
    return 1;
}

/* The slot of key k: its entry, or the empty one it would take. */
static bound_entry *slot(bound_entry *e, size_t cap, const bound_key *k)
{
    size_t i = key_hash(k) & (cap - 1);
    while (e[i].used && !key_eq(&e[i].k, k))
        i = (i + 1) & (cap - 1);
    return &e[i];
}

/* Keep P under k; a full table doubles, and out of memory only forgets. */
static void remember(cp_llm_bound_memo *m, const bound_key *k, const passes *P)
{
    bound_entry *s;
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = 2 * m->cap, i;
        bound_entry *e = calloc(cap, sizeof *e);
        if (!e)
            return;
        for (i = 0; i < m->cap; i++)
            if (m->e[i].used)
                *slot(e, cap, &m->e[i].k) = m->e[i];
        free(m->e);
        m->e = e, m->cap = cap;
    }
    s = slot(m->e, m->cap, k);
    s->k = *k, s->P = *P, s->used = 1;
    m->n++;
}

double cp_llm_lower_bound_ms(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                             const cp_groups *tp_cp, const cp_tiers *tiers,
                             cp_llm_bound_memo *memo)
{
    cp_layout lk = *l;
    cp_recompute rc = cp_llm_resolve_recompute(x, &lk, g);
    int p = lk.pp, v = lk.vp, r = p - 1, c, G;
    double fill = 0, busy = 0;
    passes P;
    bound_key key;
    bound_entry *hit = NULL;
    if (memo) {
        memset(&key, 0, sizeof key);
        key.tp = lk.tp, key.cp = lk.cp, key.mbs = lk.mbs, key.ep = lk.ep, key.etp = lk.etp;
        key.sp = lk.sp, key.rc = (int)rc;
        if (tp_cp)
            for (c = 0; c < CP_G_KINDS; c++)
                key.grp[c] = tp_cp->active[c] ? (const void *)tp_cp->use[c] : NULL;
        hit = slot(memo->e, memo->cap, &key);
    }
    if (hit && hit->used)
        P = hit->P;
    else {
        price_passes(x, &lk, g, tp_cp, rc, &P);
        if (memo)
            remember(memo, &key, &P);
    }
    /* the first micro-batch reaches the last stage through chunks 0 .. p-2,
     * and the last one's gradient returns through them (eq. S2): the last
     * stage's work lies between */
    for (G = 0; G < p - 1; G++) {
        chunk_cost cc;
        chunk_of(x, &lk, &P, G % p, G / p, &cc);
        fill += cc.fwd + cc.bwd;
    }
    for (c = 0; c < v; c++) {
        chunk_cost cc;
        chunk_of(x, &lk, &P, r, c, &cc);
        busy += (cc.fwd + cc.bwd) * lk.micro;
    }
    {
        double params = cp_stage_params(x, &lk, r) / lk.tp;
        double step = lk.offload_opt ? cp_dp_offload_step_ms(&lk, g, tiers, params)
                                     : cp_dp_optimizer_ms(&lk, g, params);
        return (fill + busy) / 1000 + (step > 0 ? step : 0);
    }
}
