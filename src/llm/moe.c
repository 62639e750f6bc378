/*
 * moe.c - mixture-of-experts blocks: block kinds, the routed MLP's kernels
 * and collectives, tokens and all-to-all, parameters, activations, FLOPs
 * and the experts' gradient synchronisation (see moe.h; docs/model.md,
 * "Mixture of experts", eq. E1-E12).
 *
 * Notation as ops.c, and: k experts per token, X experts, X_l = X / EP on
 * a GPU, f_e = ffn / ETP the expert's inner size on a GPU, g 2 for gated
 * MLPs (else 1), R and R_l the copies routed and held (moe.h), m_e = R_l /
 * X_l a GPU's tokens per expert, f_s = shared_ffn / t.
 */
#include <string.h>

#include "llm/moe.h"

int cp_moe_on(const cp_xformer *x)
{
    return x->moe.experts > 0;
}

int cp_moe_special(const cp_xformer *x)
{
    return cp_moe_on(x) || cp_mla_on(x);
}

int cp_moe_block_is_moe(const cp_xformer *x, int64_t i)
{
    int64_t every = x->moe.every > 0 ? x->moe.every : 1;
    if (!cp_moe_on(x) || i < x->moe.dense_layers)
        return 0;
    return (i - x->moe.dense_layers + 1) % every == 0;
}

void cp_moe_dense_view(const cp_xformer *x, cp_xformer *d)
{
    *d = *x;
    memset(&d->moe, 0, sizeof d->moe);
    if (x->moe.dense_ffn > 0)
        d->ffn = x->moe.dense_ffn;
}

/* The first block of global chunk G: the blocks of the chunks before it,
 * every chunk layers_per_chunk but the first (one less when the embedding
 * and the loss take a block's place, cp_layout_chunk_layers). */
static int64_t chunk_start(const cp_layout *l, int G)
{
    int64_t n = (int64_t)G * l->layers_per_chunk;
    if (l->ends_in_split && G > 0)
        n--;
    return n;
}

/* The routed blocks among blocks 0 .. n-1: i >= dense_layers with
 * (i - dense_layers + 1) a multiple of `every` (cp_moe_block_is_moe),
 * counted in closed form. */
static int64_t moe_below(const cp_xformer *x, int64_t n)
{
    int64_t every = x->moe.every > 0 ? x->moe.every : 1;
    if (!cp_moe_on(x) || n <= x->moe.dense_layers)
        return 0;
    return (n - x->moe.dense_layers) / every;
}

void cp_moe_chunk_blocks(const cp_xformer *x, const cp_layout *l, int G, int64_t *dense,
                         int64_t *moe)
{
    int64_t first = chunk_start(l, G), n = cp_layout_chunk_layers(l, G);
    *moe = moe_below(x, first + n) - moe_below(x, first);
    *dense = n - *moe;
}

/* --------------------------------------------------------------------- */
/* Tokens                                                                 */

void cp_moe_tokens_of(const cp_xformer *x, const cp_layout *l, cp_moe_tokens *t)
{
    double s = (double)(l->seq > 0 ? l->seq : x->seq), T = l->mbs * s / l->cp;
    double Tsp = l->sp > 0 ? T / l->tp : T, etp = cp_layout_etp(l);
    double imb = l->moe_imbalance >= 1 ? l->moe_imbalance : 1;
    memset(t, 0, sizeof *t);
    if (!cp_moe_on(x))
        return;
    t->local_experts = (double)x->moe.experts / (l->ep > 0 ? l->ep : 1);
    t->routed = Tsp * (double)x->moe.top_k;
    t->held = t->routed * etp * imb;
    t->per_expert = t->held / t->local_experts;
    t->a2a_bytes = t->routed * (double)x->hidden * 2;
}

double cp_moe_reach(double experts, double held, double k)
{
    double miss = 1;
    int i;
    if (held >= experts)
        return 1;
    for (i = 0; i < (int)k; i++) /* C(E - x, k) / C(E, k), a factor at a time */
        miss *= (experts - held - i) / (experts - i);
    return 1 - (miss > 0 ? miss : 0);
}

double cp_moe_a2a_us(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                     const cp_groups *G, double bytes, cp_a2a_why *why)
{
    cp_a2a *a = G->a2a;
    double n = l->ep, piece = bytes / n, same = piece, cross = piece, net, pool = -1;
    double imb = l->moe_imbalance >= 1 ? l->moe_imbalance : 1;
    cp_a2a_why wn, wp;
    memset(&wp, 0, sizeof wp);
    if (why)
        memset(why, 0, sizeof *why);
    if (!a || l->ep <= 1 || bytes <= 0)
        return 0;
    if (l->moe_dispatch == CP_MOE_DEEPEP) {
        /* eq. E6: a copy per token and destination GPU over NVLink, per
         * destination host over the network, spread over its GPUs */
        double X = (double)x->moe.experts, k = (double)x->moe.top_k, tok = bytes / k;
        double per_gpu = X / n, per_host = per_gpu * a->local;
        same = tok * cp_moe_reach(X, per_gpu, k);
        cross = tok * cp_moe_reach(X, per_host, k) / a->local;
    }
    net = cp_a2a_net_us(a, same, cross, &wn);
    if (l->moe_dispatch == CP_MOE_ALLTOALL && g->cal.a2a_eff > 0) {
        /* NCCL's all-to-all below the links' rates; DeepEP's kernels reach them */
        net += wn.wire_us * (1 / g->cal.a2a_eff - 1);
        wn.wire_us /= g->cal.a2a_eff;
    }
    if (l->moe_path != CP_A2A_NET && l->moe_dispatch == CP_MOE_ALLTOALL)
        pool = cp_a2a_pool_us(a, bytes, &wp);
    if (pool >= 0 && (l->moe_path == CP_A2A_POOL || pool < net)) {
        if (why)
            *why = wp;
        return pool * imb;
    }
    if (why)
        *why = wn;
    return net * imb;
}

/* --------------------------------------------------------------------- */
/* The routed MLP                                                         */

typedef struct edims {
    double T, Tsp, h, E, e, X, Xl, fe, g, fs, gs, R, Rl, me, etp, ep, drop;
    int f8, sp, tp, deepep;
} edims;

static void get_edims(const cp_xformer *x, const cp_layout *l, edims *D)
{
    cp_moe_tokens t;
    double s = (double)(l->seq > 0 ? l->seq : x->seq);
    memset(D, 0, sizeof *D);
    cp_moe_tokens_of(x, l, &t);
    D->T = l->mbs * s / l->cp;
    D->sp = l->sp > 0;
    D->tp = l->tp;
    D->Tsp = D->sp ? D->T / l->tp : D->T;
    D->h = (double)x->hidden;
    D->E = 2;
    D->e = l->precision == CP_PREC_FP8 ? 1 : 2;
    D->f8 = l->precision == CP_PREC_FP8 ? CP_SF_FP8 : 0;
    D->X = (double)x->moe.experts;
    D->Xl = t.local_experts;
    D->etp = cp_layout_etp(l);
    D->ep = l->ep;
    D->fe = (double)x->moe.ffn / D->etp;
    D->g = cp_xf_gated(x) ? 2 : 1;
    D->fs = (double)x->moe.shared_ffn / l->tp;
    D->R = t.routed;
    D->Rl = t.held;
    D->me = t.per_expert;
    D->drop = x->dropout > 0;
    D->deepep = l->moe_dispatch == CP_MOE_DEEPEP;
}

static void cast(cp_steps *o, const char *name, double elems, const edims *D)
{
    if (D->f8)
        cp_steps_mem(o, name, elems * (D->E + 2), 0);
}

/* The shared experts: a dense MLP of f_s on the block's T tokens, split
 * over TP as one (ops.c's MLP without its norm and residual). */
static void shared_fwd(const cp_xformer *x, const cp_layout *l, const edims *D, cp_steps *o)
{
    if (x->moe.shared_ffn <= 0)
        return;
    if (D->tp > 1 && D->sp)
        cp_steps_comm(o, "tp.ag.shared", CP_CM_AG, CP_G_TP, D->T * D->h * D->E, CP_SF_HIDE);
    cp_steps_linear(o, "shared.fc1", D->T, D->fs * D->g, D->h, 1, l, D->f8);
    cp_steps_mem(o, "shared.act", D->T * D->fs * D->E * (D->g > 1 ? 3 : 2), 0);
    cast(o, "shared.fc2.cast", D->T * D->fs, D);
    cp_steps_linear(o, "shared.fc2", D->T, D->h, D->fs, 1, l, D->f8);
    if (D->tp > 1)
        cp_steps_comm(o, "tp.rs.shared", D->sp ? CP_CM_RS : CP_CM_AR, CP_G_TP,
                      D->T * D->h * D->E, CP_SF_HIDE);
}

static void shared_bwd(const cp_xformer *x, const cp_layout *l, const edims *D, cp_steps *o)
{
    if (x->moe.shared_ffn <= 0)
        return;
    if (D->tp > 1 && D->sp)
        cp_steps_comm(o, "tp.ag.shared.bwd", CP_CM_AG, CP_G_TP, D->T * D->h * D->E,
                      CP_SF_HIDE);
    cast(o, "shared.fc2.grad.cast", D->T * D->h, D);
    cp_steps_linear_bwd(o, "shared.fc2.dgrad", "shared.fc2.wgrad", D->T, D->h, D->fs, 1, l,
                        D->f8);
    cp_steps_mem(o, "shared.act.bwd", D->T * D->fs * D->E * (D->g > 1 ? 5 : 3), 0);
    cast(o, "shared.fc1.grad.cast", D->T * D->fs * D->g, D);
    if (D->tp > 1 && D->sp)
        cp_steps_comm(o, "tp.ag.shared.regather", CP_CM_AG, CP_G_TP, D->T * D->h * D->E,
                      CP_SF_HIDE);
    cp_steps_linear_bwd(o, "shared.fc1.dgrad", "shared.fc1.wgrad", D->T, D->fs * D->g, D->h, 1,
                        l, D->f8);
    if (D->tp > 1) /* its input gradient, before the weight gradient in the list above */
        cp_steps_comm(o, "tp.rs.shared.bwd", D->sp ? CP_CM_RS : CP_CM_AR, CP_G_TP,
                      D->T * D->h * D->E, 0);
}

/* The all-to-all of the routed copies (eq. E6) and, with ETP, the gather
 * of the ETP group's copies (eq. E2). */
static void a2a(cp_steps *o, const char *name, const edims *D)
{
    cp_steps_comm(o, name, CP_CM_A2A, CP_G_EP, D->R * D->h * D->E, 0);
}

static void etp_comm(cp_steps *o, const char *name, cp_comm_kind k, const edims *D)
{
    if (D->etp > 1)
        cp_steps_comm(o, name, k, CP_G_ETP, D->R * D->etp * D->h * D->E, 0);
}

/* Eq. E3-E5, forward: router, permutations, the grouped expert GEMMs. */
static void moe_mlp_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    edims D;
    int grp;
    get_edims(x, l, &D);
    grp = D.f8 | CP_SF_GROUPED;
    /* norm2 writes 16 bits: the router and the permutation read it */
    cp_steps_mem(o, "norm2", D.Tsp * D.h * 2 * D.E, 0);
    cp_steps_linear(o, "router", D.Tsp, D.X, D.h, 1, l, 0);
    /* scores (fp32) read, softmax or sigmoid, top-k: probabilities and
     * indices written */
    cp_steps_mem(o, "router.topk", D.Tsp * D.X * 8 + D.R * 12, 0);
    /* the all-to-all dispatcher copies each token once per expert before
     * sending; DeepEP's kernels read the tokens in place */
    if (!D.deepep)
        cp_steps_mem(o, "permute", D.R * D.h * 2 * D.E, 0);
    a2a(o, "ep.a2a.dispatch", &D);
    etp_comm(o, "etp.ag", CP_CM_AG, &D);
    if (D.Xl > 1 || D.deepep) /* the received copies grouped by local expert */
        cp_steps_mem(o, "sort", D.Rl * D.h * 2 * D.E, 0);
    cast(o, "experts.fc1.cast", D.Rl * D.h, &D);
    cp_steps_linear(o, "experts.fc1", D.me, D.fe * D.g, D.h, D.Xl, l, grp);
    /* the activation, weighted by each copy's probability */
    cp_steps_mem(o, "experts.act", D.Rl * (D.fe * D.E * (D.g > 1 ? 3 : 2) + 4), 0);
    cast(o, "experts.fc2.cast", D.Rl * D.fe, &D);
    cp_steps_linear(o, "experts.fc2", D.me, D.h, D.fe, D.Xl, l, grp);
    if (D.Xl > 1 || D.deepep)
        cp_steps_mem(o, "unsort", D.Rl * D.h * 2 * D.E, 0);
    etp_comm(o, "etp.rs", CP_CM_RS, &D);
    a2a(o, "ep.a2a.combine", &D);
    /* the copies (weighted in the activation) summed per token; DeepEP's
     * combine sums them as they arrive */
    if (!D.deepep)
        cp_steps_mem(o, "unpermute", D.R * D.h * D.E + D.Tsp * D.h * D.E, 0);
    shared_fwd(x, l, &D, o);
    cp_steps_mem(o, "residual2", D.Tsp * D.h * (3 * D.E + D.drop), 0);
}

static void moe_mlp_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    edims D;
    int grp;
    get_edims(x, l, &D);
    grp = D.f8 | CP_SF_GROUPED;
    cp_steps_mem(o, "residual2.bwd", D.Tsp * D.h * (2 * D.E + D.drop), 0);
    shared_bwd(x, l, &D, o);
    /* the tokens' gradient copied to their routes */
    if (!D.deepep)
        cp_steps_mem(o, "unpermute.bwd", D.Tsp * D.h * D.E + D.R * D.h * D.E, 0);
    a2a(o, "ep.a2a.combine.bwd", &D);
    etp_comm(o, "etp.ag.bwd", CP_CM_AG, &D);
    if (D.Xl > 1 || D.deepep)
        cp_steps_mem(o, "unsort.bwd", D.Rl * D.h * 2 * D.E, 0);
    cast(o, "experts.fc2.grad.cast", D.Rl * D.h, &D);
    cp_steps_linear_bwd(o, "experts.fc2.dgrad", "experts.fc2.wgrad", D.me, D.h, D.fe, D.Xl, l,
                        grp);
    /* and the probabilities' gradient */
    cp_steps_mem(o, "experts.act.bwd", D.Rl * (D.fe * D.E * (D.g > 1 ? 5 : 3) + 8), 0);
    cast(o, "experts.fc1.grad.cast", D.Rl * D.fe * D.g, &D);
    cp_steps_linear_bwd(o, "experts.fc1.dgrad", "experts.fc1.wgrad", D.me, D.fe * D.g, D.h,
                        D.Xl, l, grp);
    if (D.Xl > 1 || D.deepep)
        cp_steps_mem(o, "sort.bwd", D.Rl * D.h * 2 * D.E, 0);
    etp_comm(o, "etp.rs.bwd", CP_CM_RS, &D);
    a2a(o, "ep.a2a.dispatch.bwd", &D);
    /* the copies' gradients summed into their tokens */
    if (!D.deepep)
        cp_steps_mem(o, "permute.bwd", D.R * D.h * D.E + D.Tsp * D.h * 2 * D.E, 0);
    cp_steps_mem(o, "router.topk.bwd", D.Tsp * D.X * 12 + D.R * 12, 0);
    cp_steps_linear_bwd(o, "router.dgrad", "router.wgrad", D.Tsp, D.X, D.h, 1, l, 0);
    cp_steps_mem(o, "norm2.bwd", D.Tsp * D.h * 3 * D.E, 0);
}

void cp_moe_block_fwd(const cp_xformer *x, const cp_layout *l, int moe, cp_steps *o)
{
    cp_xformer d;
    o->n = 0;
    if (cp_mla_on(x))
        cp_mla_attn_fwd(x, l, o);
    else
        cp_block_attn_fwd(x, l, o);
    if (moe) {
        moe_mlp_fwd(x, l, o);
        return;
    }
    cp_moe_dense_view(x, &d);
    cp_block_mlp_fwd(&d, l, o);
}

void cp_moe_block_bwd(const cp_xformer *x, const cp_layout *l, int moe, cp_steps *o)
{
    cp_xformer d;
    o->n = 0;
    if (moe) {
        moe_mlp_bwd(x, l, o);
    } else {
        cp_moe_dense_view(x, &d);
        cp_block_mlp_bwd(&d, l, o);
    }
    if (cp_mla_on(x))
        cp_mla_attn_bwd(x, l, o);
    else
        cp_block_attn_bwd(x, l, o);
}

/* --------------------------------------------------------------------- */
/* Parameters                                                             */

/* ops.c's dense block without its MLP: attention and norms. */
static double dense_attn_params(const cp_xformer *x)
{
    cp_xformer a = *x;
    a.ffn = 0;
    a.mlp_bias = 0;
    return cp_block_params(&a);
}

/* A block's attention and norms: latent attention's, or a dense block's. */
static double attn_params(const cp_xformer *x)
{
    double norms = (x->norm == CP_NORM_LAYER ? 4 : 2) * (double)x->hidden;
    return cp_mla_on(x) ? cp_mla_params(x) + norms : dense_attn_params(x);
}

/* One routed expert's matrices (and biases), the router, the shared experts. */
static double expert_params(const cp_xformer *x)
{
    double h = (double)x->hidden, f = (double)x->moe.ffn, g = cp_xf_gated(x) ? 2 : 1;
    return (g + 1) * h * f + (x->moe.expert_bias ? g * f + h : 0);
}

static double router_params(const cp_xformer *x)
{
    double X = (double)x->moe.experts;
    /* a score bias per expert: DeepSeek-V3's correction bias, GPT-OSS's router bias */
    return X * (double)x->hidden + (x->moe.router_sigmoid || x->moe.expert_bias ? X : 0);
}

static double shared_params(const cp_xformer *x)
{
    return (cp_xf_gated(x) ? 3 : 2) * (double)x->hidden * (double)x->moe.shared_ffn;
}

double cp_moe_block_params(const cp_xformer *x, int64_t i, double *expert)
{
    double att = attn_params(x), ex;
    cp_xformer d;
    if (expert)
        *expert = 0;
    if (!cp_moe_block_is_moe(x, i)) {
        cp_moe_dense_view(x, &d);
        return att + cp_block_params(&d) - dense_attn_params(&d);
    }
    ex = (double)x->moe.experts * expert_params(x);
    if (expert)
        *expert = ex;
    return att + ex + router_params(x) + shared_params(x);
}

double cp_moe_model_params(const cp_xformer *x, double *active)
{
    double total = cp_embed_params(x) + cp_head_params(x), act = total;
    int64_t i;
    for (i = 0; i < x->layers; i++) {
        double ex, p = cp_moe_block_params(x, i, &ex);
        total += p;
        act += p - ex + ex * (double)x->moe.top_k / (double)(x->moe.experts > 0 ?
                                                              x->moe.experts : 1);
    }
    if (active)
        *active = act;
    return total;
}

/* Per stage, the blocks take two sizes only (routed or dense): each is
 * counted once, the stage's blocks only classified (the search asks this
 * of every candidate). */
void cp_moe_stage_params(const cp_xformer *x, const cp_layout *l, int r, double *dense,
                         double *expert)
{
    double moe_ex = 0, moe_p = 0, dense_p = 0;
    int64_t nmoe = 0, ndense = 0, first_moe = -1, first_dense = -1;
    int c;
    for (c = 0; c < l->vp; c++) {
        int G = c * l->pp + r;
        int64_t first = chunk_start(l, G), n = cp_layout_chunk_layers(l, G), m;
        m = moe_below(x, first + n) - moe_below(x, first);
        nmoe += m;
        ndense += n - m;
        if (m > 0 && first_moe < 0) /* a routed block: the first after `first` */
            for (first_moe = first; !cp_moe_block_is_moe(x, first_moe); first_moe++)
                ;
        if (n - m > 0 && first_dense < 0)
            for (first_dense = first; cp_moe_block_is_moe(x, first_dense); first_dense++)
                ;
    }
    if (first_dense >= 0)
        dense_p = cp_moe_block_params(x, first_dense, NULL);
    if (first_moe >= 0)
        moe_p = cp_moe_block_params(x, first_moe, &moe_ex);
    *dense = (double)ndense * dense_p + (double)nmoe * (moe_p - moe_ex);
    *expert = (double)nmoe * moe_ex;
}

/* --------------------------------------------------------------------- */
/* Memory and FLOPs                                                       */

double cp_moe_mlp_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc)
{
    edims D;
    double kept;
    if (rc == CP_RC_FULL || !cp_moe_on(x)) /* the block's input is counted by attention */
        return 0;
    get_edims(x, l, &D);
    /* the probabilities weigh the copies inside the experts' activation
     * (Megatron-Core 0.13 and later), so the unpermute keeps nothing */
    kept = D.Tsp * D.h * D.E * 2            /* norm2's input and output (router, permute) */
           + D.Tsp * D.X * 4 + D.R * 12     /* scores, probabilities and indices */
           + D.Rl * D.h * D.e               /* the experts' fc1 input */
           + D.Rl * (D.fe * D.g * D.E + 4)  /* fc1's output and the probabilities: the
                                               activation's input */
           + D.Rl * D.fe * D.e              /* the activation's output, fc2's input */
           + D.Tsp * D.h * D.drop;          /* the mask after the MLP */
    if (x->moe.shared_ffn > 0)              /* the shared experts, as a dense MLP */
        kept += D.Tsp * D.h * D.e + D.T * D.fs * D.g * D.E + D.T * D.fs * D.e;
    return kept;
}

double cp_moe_dispatch_bytes(const cp_xformer *x, const cp_layout *l)
{
    edims D;
    if (!cp_moe_on(x))
        return 0;
    get_edims(x, l, &D);
    /* the permuted copies, the received ones and their sorted order, and
     * the same on the way back: alive through one routed MLP */
    return (2 * D.R + 2 * D.Rl) * D.h * D.E;
}

double cp_moe_flops_per_seq(const cp_xformer *x, int64_t seq, int causal_half)
{
    double s = (double)seq, h = (double)x->hidden, per_tok = 0, core_s;
    int64_t i;
    core_s = s * (causal_half ? 0.5 : 1);
    for (i = 0; i < x->layers; i++) {
        if (cp_mla_on(x)) {
            per_tok += cp_mla_flops_per_token(x, seq, causal_half);
        } else {
            double a = (double)x->heads, g = (double)x->kv_heads,
                   d = (double)cp_xf_head_dim(x);
            per_tok += 6 * (h * (a + 2 * g) * d + a * d * h) + 12 * core_s * a * d;
        }
        if (cp_moe_block_is_moe(x, i)) {
            double gm = cp_xf_gated(x) ? 3 : 2;
            per_tok += 6 * gm * h * ((double)x->moe.ffn * (double)x->moe.top_k +
                                     (double)x->moe.shared_ffn);
        } else {
            cp_xformer d;
            cp_moe_dense_view(x, &d);
            per_tok += 6 * (cp_xf_gated(x) ? 3 : 2) * h * (double)d.ffn;
        }
    }
    per_tok += 6 * (double)x->vocab * h;
    return per_tok * s;
}

/* --------------------------------------------------------------------- */
/* The experts' gradients                                                 */

void cp_moe_dp_sync(const cp_xformer *x, const cp_layout *l, int r, const cp_dp_in *in,
                    cp_dp_out *out)
{
    cp_dp_in di = *in;
    cp_dp_out ex;
    cp_layout le = *l;
    double dense, expert;
    cp_moe_stage_params(x, l, r, &dense, &expert);
    /* in->params counts the experts as split over TP: take them out */
    di.params = in->params - expert / l->tp;
    cp_dp_sync(&di, out);
    if (expert <= 0 || l->edp < 1)
        return;
    /* eq. E10: the experts' buckets after the dense ones, on their own group */
    le.dp = l->edp;
    le.cp = 1;
    di.l = &le;
    di.expert = 1;
    di.params = expert / ((double)l->ep * cp_layout_etp(l));
    cp_dp_sync(&di, &ex);
    out->grads_done_ms += ex.grads_done_ms - in->stage_end_ms;
    out->optimizer_ms += ex.optimizer_ms;
    out->gather_exposed_ms += ex.gather_exposed_ms;
    out->comm_ms += ex.comm_ms;
    out->expert_alg = ex.alg;
    out->buckets += ex.buckets;
    out->pool_buckets += ex.pool_buckets;
}
