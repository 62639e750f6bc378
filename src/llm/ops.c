/*
 * ops.c - the kernels and tensor-parallel collectives of a transformer
 * block, its embedding and its LM head for one micro-batch on one GPU (see
 * ops.h; docs/model.md eq. L1-L6).
 *
 * Notation: b the micro-batch, s the sequence, c the context-parallel
 * degree, t the tensor-parallel degree, T = b s / c the tokens a GPU
 * computes GEMMs on, T' = T / t those it runs token-wise work on under
 * sequence parallelism (T without), h hidden, a and g query and key/value
 * heads, d the head width, f the MLP inner size, V the vocabulary, E the
 * bytes of an activation (2), e those of a GEMM operand (1 under FP8).
 */
#include <string.h>

#include "llm/ops.h"

void cp_layout_elem(const cp_layout *l, cp_elem *el)
{
    el->act = 2;
    el->gemm_in = l->precision == CP_PREC_FP8 ? 1 : 2;
    el->grad = l->grad_fp32 ? 4 : 2;
}

/* The per-GPU sizes every list below uses. */
typedef struct dims {
    double b, s, c, t, T, Tsp, h, a, g, d, dv, f, V, E, e, drop;
    int gated, flash, sp, fp8, rope, qk_norm;
    double causal;    /* fraction of query-key pairs a causal mask leaves */
    double skv;       /* key tokens each query block sees on one GPU */
} dims;

static void get_dims(const cp_xformer *x, const cp_layout *l, dims *D)
{
    cp_elem el;
    double win;
    cp_layout_elem(l, &el);
    memset(D, 0, sizeof *D);
    D->b = l->mbs;
    D->s = (double)(l->seq > 0 ? l->seq : x->seq);
    D->c = l->cp;
    D->t = l->tp;
    D->T = D->b * D->s / D->c;
    D->sp = l->sp > 0;
    D->Tsp = D->sp ? D->T / D->t : D->T;
    D->h = (double)x->hidden;
    D->a = (double)x->heads / D->t;
    /* Megatron replicates key/value heads when TP exceeds their count */
    D->g = x->kv_heads >= l->tp ? (double)x->kv_heads / D->t : 1;
    D->d = (double)cp_xf_head_dim(x);
    D->dv = D->d;
    D->f = (double)x->ffn / D->t;
    D->V = (double)x->vocab / D->t;
    D->E = el.act;
    D->e = el.gemm_in;
    D->drop = x->dropout > 0;
    D->gated = cp_xf_gated(x);
    D->flash = l->attn == CP_ATTN_FLASH;
    D->fp8 = l->precision == CP_PREC_FP8;
    D->rope = x->pos == CP_POS_ROPE;
    D->qk_norm = x->qk_norm;
    /* a query attends to the keys before it: s^2/2 pairs of s^2 (the
     * diagonal blocks counted whole); with context parallelism each GPU
     * holds s/c queries against all s keys, load-balanced so each computes
     * 1/c of the causal pairs.  A sliding window of w keys: w/s of them. */
    D->skv = D->s;
    D->causal = 0.5;
    win = (double)x->window;
    if (win > 0 && win < D->s) {
        double every = x->window_every > 0 ? (double)x->window_every : 1;
        double frac = (win / D->s) / every + 0.5 * (1 - 1 / every);
        D->causal = frac;
    }
}

/* --------------------------------------------------------------------- */
/* Building lists                                                         */

static cp_step *add(cp_steps *o, cp_step_kind k, const char *name)
{
    cp_step *s;
    if (o->n >= CP_OPS_MAX) /* the lists are fixed in length: a bug, not input */
        return &o->s[CP_OPS_MAX - 1];
    s = &o->s[o->n++];
    memset(s, 0, sizeof *s);
    s->kind = k;
    s->name = name;
    s->batch = 1;
    return s;
}

/* A GEMM out[m x n] = A[m x k] B[k x n]: 2 m n k FLOPs; reads A and B at
 * `ein` bytes, writes (or, accumulating into an fp32 buffer, reads and
 * writes) C at `eout`. */
static void gemm(cp_steps *o, const char *name, double m, double n, double k, double ein,
                 double eout, int flags)
{
    cp_step *s = add(o, CP_ST_GEMM, name);
    s->m = m;
    s->n = n;
    s->k = k;
    s->flops = 2 * m * n * k;
    s->bytes = ein * (m * k + k * n) + eout * m * n;
    s->flags = flags;
}

static void mem(cp_steps *o, const char *name, double bytes, int flags)
{
    cp_step *s = add(o, CP_ST_MEM, name);
    s->bytes = bytes;
    s->flags = flags;
}

static void comm(cp_steps *o, const char *name, cp_comm_kind k, cp_group_kind g, double bytes,
                 int flags)
{
    cp_step *s = add(o, CP_ST_COMM, name);
    s->comm = k;
    s->group = g;
    s->comm_bytes = bytes;
    s->flags = flags;
}

/* A linear layer's backward, in two GEMMs: the data gradient dA = dC B^T
 * (m x k, inner n), then the weight gradient dB = A^T dC (k x n, inner m)
 * accumulated into the fp32 main-grad buffer when gradients are kept in
 * fp32 (Megatron's gradient_accumulation_fusion: read and written, 8
 * bytes).  The input gradient's TP collective goes between the two, so it
 * runs under the weight gradient (Megatron's asynchronous all-reduce). */
static void dgrad(cp_steps *o, const char *name, double m, double n, double k, const dims *D,
                  int fp8)
{
    gemm(o, name, m, k, n, fp8 ? D->e : D->E, D->E, (fp8 ? CP_SF_FP8 : 0) | CP_SF_BWD);
}

static void wgrad(cp_steps *o, const char *name, double m, double n, double k, const dims *D,
                  const cp_layout *l, int fp8)
{
    double acc = l->grad_fp32 ? 8 : 2 * D->E;
    gemm(o, name, k, n, m, fp8 ? D->e : D->E, acc,
         (fp8 ? CP_SF_FP8 : 0) | CP_SF_WGRAD | CP_SF_BWD);
}

static void linear_bwd(cp_steps *o, const char *dname, const char *wname, double m, double n,
                       double k, const dims *D, const cp_layout *l, int fp8)
{
    dgrad(o, dname, m, n, k, D, fp8);
    wgrad(o, wname, m, n, k, D, l, fp8);
}

/* Under FP8, Transformer Engine casts each GEMM input it did not produce
 * in FP8 itself: a read at E and a write at 1 byte, plus the transposed
 * copy backward needs (cast_transpose); the norms emit FP8 directly. */
static void fp8_cast(cp_steps *o, const char *name, double elems, const dims *D)
{
    if (D->fp8)
        mem(o, name, elems * (D->E + 2), 0);
}

/* --------------------------------------------------------------------- */
/* One block                                                              */

/* The TP collective at a block's entry (forward: all-gather the sequence
 * shards under SP; without SP nothing) and at its exit (reduce-scatter
 * under SP, all-reduce without).  Buffers of T h E bytes. */
static void tp_enter(cp_steps *o, const dims *D, const char *name)
{
    if (D->t > 1 && D->sp)
        comm(o, name, CP_CM_AG, CP_G_TP, D->T * D->h * D->E, CP_SF_HIDE);
}

static void tp_exit(cp_steps *o, const dims *D, const char *name)
{
    if (D->t > 1)
        comm(o, name, D->sp ? CP_CM_RS : CP_CM_AR, CP_G_TP, D->T * D->h * D->E, CP_SF_HIDE);
}

/* A norm over T' tokens: read x, write y (the FP8 output when the next
 * GEMM is FP8, fused in Transformer Engine's LayerNormLinear). */
static void norm_fwd(cp_steps *o, const char *name, const dims *D)
{
    mem(o, name, D->Tsp * D->h * (D->E + (D->fp8 ? 1 : D->E)), 0);
}

/* The residual block end: bias + dropout + add, fused (Megatron's
 * bias_dropout_add): read the branch and the residual, write the sum and
 * the mask. */
static void residual_fwd(cp_steps *o, const char *name, const dims *D)
{
    mem(o, name, D->Tsp * D->h * (3 * D->E + D->drop), 0);
}

/* Eager attention, as Megatron-LM ran it (core_attention): Q K^T as a
 * batched GEMM per head, the fused scale-mask-softmax and the dropout over
 * the b x heads x s_q x s scores, then P V.  Masked blocks are computed. */
static void attn_eager_fwd(cp_steps *o, const dims *D)
{
    double B = D->b * D->a, sq = D->s / D->c, sk = D->skv, scores = B * sq * sk;
    cp_step *st;
    st = add(o, CP_ST_GEMM, "attn.qk");
    st->batch = B, st->m = sq, st->n = sk, st->k = D->d;
    st->flops = 2 * B * sq * sk * D->d;
    st->bytes = D->E * (B * (sq + sk) * D->d + scores);
    st->flags = CP_SF_SEL;
    mem(o, "attn.softmax", scores * 2 * D->E, CP_SF_SEL);
    if (D->drop)
        mem(o, "attn.dropout", scores * (2 * D->E + 1), CP_SF_SEL);
    st = add(o, CP_ST_GEMM, "attn.pv");
    st->batch = B, st->m = sq, st->n = D->dv, st->k = sk;
    st->flops = 2 * B * sq * sk * D->dv;
    st->bytes = D->E * (scores + B * sk * D->dv + B * sq * D->dv);
    st->flags = CP_SF_SEL;
}

static void attn_eager_bwd(cp_steps *o, const dims *D)
{
    double B = D->b * D->a, sq = D->s / D->c, sk = D->skv, scores = B * sq * sk;
    const char *names[4] = {"attn.dp", "attn.dv", "attn.dq", "attn.dk"};
    /* dP = dO V^T (sq x sk, inner dv), dV = P^T dO (sk x dv, inner sq),
     * dQ = dS K (sq x d, inner sk), dK = dS^T Q (sk x d, inner sq) */
    double shape[4][3] = {{sq, sk, D->dv}, {sk, D->dv, sq}, {sq, D->d, sk}, {sk, D->d, sq}};
    int i;
    for (i = 0; i < 4; i++) {
        cp_step *st = add(o, CP_ST_GEMM, names[i]);
        st->batch = B, st->m = shape[i][0], st->n = shape[i][1], st->k = shape[i][2];
        st->flops = 2 * B * st->m * st->n * st->k;
        st->bytes = D->E * B * (st->m * st->k + st->k * st->n + st->m * st->n);
        st->flags = CP_SF_BWD;
        if (i == 1)
            mem(o, "attn.dropout.bwd", D->drop ? scores * (2 * D->E + 1) : 0, 0);
        if (i == 1)
            mem(o, "attn.softmax.bwd", scores * 3 * D->E, 0);
    }
}

/* FlashAttention (Dao et al.): forward reads Q, K, V and writes O and the
 * log-sum-exp; 4 d FLOPs per query-key pair it computes (Q K^T and P V),
 * causal blocks above the diagonal skipped.  Backward recomputes the scores
 * and forms dV, dP, dQ, dK: 10 d per pair, 2.5 times forward. */
static void attn_flash(cp_steps *o, const dims *D, int bwd)
{
    double B = D->b * D->a, sq = D->s / D->c, sk = D->skv;
    /* s/c queries against s keys on each GPU, load-balanced so that each
     * computes 1/c of the causal pairs */
    double pairs = B * sq * sk * D->causal;
    double io = D->E * (B * sq * (D->d + D->dv) + D->b * D->g * sk * (D->d + D->dv));
    cp_step *st = add(o, CP_ST_ATTN, bwd ? "attn.flash.bwd" : "attn.flash");
    st->batch = B;
    st->m = sq;
    st->n = sk;
    st->k = D->d;
    st->causal = D->causal;
    st->flops = (bwd ? 5.0 : 2.0) * pairs * (D->d + D->dv);
    st->bytes = bwd ? 2 * io + D->E * B * sq * D->dv : io + 4 * B * sq;
    st->flags = CP_SF_SEL;
}

void cp_block_attn_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    double qkv_n, T;
    get_dims(x, l, &D);
    T = D.T;
    qkv_n = (D.a + 2 * D.g) * D.d;
    norm_fwd(o, "norm1", &D);
    tp_enter(o, &D, "tp.ag.qkv");
    gemm(o, "qkv", T, qkv_n, D.h, D.e, D.E, D.fp8 ? CP_SF_FP8 : 0);
    if (D.qk_norm)
        mem(o, "qk_norm", T * (D.a + D.g) * D.d * 2 * D.E, 0);
    if (D.rope)
        mem(o, "rope", T * (D.a + D.g) * D.d * 2 * D.E, 0);
    if (D.flash)
        attn_flash(o, &D, 0);
    else
        attn_eager_fwd(o, &D);
    fp8_cast(o, "proj.cast", T * D.a * D.dv, &D);
    gemm(o, "proj", T, D.h, D.a * D.dv, D.e, D.E, D.fp8 ? CP_SF_FP8 : 0);
    tp_exit(o, &D, "tp.rs.proj");
    residual_fwd(o, "residual1", &D);
}

void cp_block_mlp_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    double T;
    get_dims(x, l, &D);
    T = D.T;
    norm_fwd(o, "norm2", &D);
    tp_enter(o, &D, "tp.ag.fc1");
    gemm(o, "fc1", T, D.f * (D.gated ? 2 : 1), D.h, D.e, D.E, D.fp8 ? CP_SF_FP8 : 0);
    /* GELU or squared ReLU: read, write; SwiGLU/GeGLU: read gate and up,
     * write the product */
    mem(o, "act", T * D.f * D.E * (D.gated ? 3 : 2), 0);
    fp8_cast(o, "fc2.cast", T * D.f, &D);
    gemm(o, "fc2", T, D.h, D.f, D.e, D.E, D.fp8 ? CP_SF_FP8 : 0);
    tp_exit(o, &D, "tp.rs.fc2");
    residual_fwd(o, "residual2", &D);
}

void cp_block_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    o->n = 0;
    cp_block_attn_fwd(x, l, o);
    cp_block_mlp_fwd(x, l, o);
}

void cp_block_mlp_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    double T;
    int f8;
    get_dims(x, l, &D);
    T = D.T;
    f8 = D.fp8;
    /* residual2: the gradient passes to both branches, through the mask */
    mem(o, "residual2.bwd", D.Tsp * D.h * (2 * D.E + D.drop), 0);
    /* the gradient of fc2's output: all-gathered under SP (reduce-scatter's
     * gradient); without SP it arrives whole (the all-reduce's is identity) */
    tp_enter(o, &D, "tp.ag.fc2.bwd");
    fp8_cast(o, "fc2.grad.cast", T * D.h, &D);
    linear_bwd(o, "fc2.dgrad", "fc2.wgrad", T, D.h, D.f, &D, l, f8);
    mem(o, "act.bwd", T * D.f * D.E * (D.gated ? 5 : 3), 0);
    fp8_cast(o, "fc1.grad.cast", T * D.f * (D.gated ? 2 : 1), &D);
    /* SP re-gathers norm2's output for fc1's weight gradient, overlapped
     * with the data gradient (Megatron's async all-gather) */
    if (D.t > 1 && D.sp)
        comm(o, "tp.ag.fc1.regather", CP_CM_AG, CP_G_TP, T * D.h * D.E, CP_SF_HIDE);
    dgrad(o, "fc1.dgrad", T, D.f * (D.gated ? 2 : 1), D.h, &D, f8);
    /* the input gradient of fc1: reduce-scattered (SP) or all-reduced,
     * overlapped with the weight gradient in Megatron */
    if (D.t > 1)
        comm(o, "tp.rs.fc1.bwd", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP, T * D.h * D.E,
             CP_SF_HIDE);
    wgrad(o, "fc1.wgrad", T, D.f * (D.gated ? 2 : 1), D.h, &D, l, f8);
    mem(o, "norm2.bwd", D.Tsp * D.h * 3 * D.E, 0);
}

void cp_block_attn_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    double T, qkv_n;
    int f8;
    get_dims(x, l, &D);
    T = D.T;
    f8 = D.fp8;
    qkv_n = (D.a + 2 * D.g) * D.d;
    mem(o, "residual1.bwd", D.Tsp * D.h * (2 * D.E + D.drop), 0);
    tp_enter(o, &D, "tp.ag.proj.bwd");
    fp8_cast(o, "proj.grad.cast", T * D.h, &D);
    linear_bwd(o, "proj.dgrad", "proj.wgrad", T, D.h, D.a * D.dv, &D, l, f8);
    if (D.flash)
        attn_flash(o, &D, 1);
    else
        attn_eager_bwd(o, &D);
    if (D.rope)
        mem(o, "rope.bwd", T * (D.a + D.g) * D.d * 2 * D.E, 0);
    if (D.qk_norm)
        mem(o, "qk_norm.bwd", T * (D.a + D.g) * D.d * 3 * D.E, 0);
    fp8_cast(o, "qkv.grad.cast", T * qkv_n, &D);
    if (D.t > 1 && D.sp)
        comm(o, "tp.ag.qkv.regather", CP_CM_AG, CP_G_TP, T * D.h * D.E, CP_SF_HIDE);
    dgrad(o, "qkv.dgrad", T, qkv_n, D.h, &D, f8);
    if (D.t > 1)
        comm(o, "tp.rs.qkv.bwd", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP, T * D.h * D.E,
             CP_SF_HIDE);
    wgrad(o, "qkv.wgrad", T, qkv_n, D.h, &D, l, f8);
    mem(o, "norm1.bwd", D.Tsp * D.h * 3 * D.E, 0);
}

void cp_block_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    o->n = 0;
    cp_block_mlp_bwd(x, l, o);
    cp_block_attn_bwd(x, l, o);
}

void cp_attn_core(const cp_xformer *x, const cp_layout *l, double d, double dv, double g,
                  int bwd, cp_steps *o)
{
    dims D;
    get_dims(x, l, &D);
    D.d = d;
    D.dv = dv;
    D.g = g;
    if (D.flash)
        attn_flash(o, &D, bwd);
    else if (bwd)
        attn_eager_bwd(o, &D);
    else
        attn_eager_fwd(o, &D);
}

/* --------------------------------------------------------------------- */
/* Building lists for other files (moe.c, mla.c)                          */

cp_step *cp_steps_add(cp_steps *o, cp_step_kind k, const char *name)
{
    return add(o, k, name);
}

void cp_steps_gemm(cp_steps *o, const char *name, double m, double n, double k, double ein,
                   double eout, int flags)
{
    gemm(o, name, m, n, k, ein, eout, flags);
}

void cp_steps_mem(cp_steps *o, const char *name, double bytes, int flags)
{
    mem(o, name, bytes, flags);
}

void cp_steps_comm(cp_steps *o, const char *name, cp_comm_kind k, cp_group_kind g,
                   double bytes, int flags)
{
    comm(o, name, k, g, bytes, flags);
}

/* `batch` copies of the last step's GEMM. */
static void batched(cp_steps *o, double batch)
{
    cp_step *s = &o->s[o->n - 1];
    s->batch = batch;
    s->flops *= batch;
    s->bytes *= batch;
}

void cp_steps_linear(cp_steps *o, const char *name, double m, double n, double k, double batch,
                     const cp_layout *l, int flags)
{
    cp_elem el;
    cp_layout_elem(l, &el);
    gemm(o, name, m, n, k, flags & CP_SF_FP8 ? el.gemm_in : el.act, el.act, flags);
    batched(o, batch);
}

void cp_steps_linear_bwd(cp_steps *o, const char *dname, const char *wname, double m, double n,
                         double k, double batch, const cp_layout *l, int flags)
{
    cp_elem el;
    double ein, acc = l->grad_fp32 ? 8 : 2 * 2;
    cp_layout_elem(l, &el);
    ein = flags & CP_SF_FP8 ? el.gemm_in : el.act;
    gemm(o, dname, m, k, n, ein, el.act, flags | CP_SF_BWD);
    batched(o, batch);
    gemm(o, wname, k, n, m, ein, acc, flags | CP_SF_WGRAD | CP_SF_BWD);
    batched(o, batch);
}

/* --------------------------------------------------------------------- */
/* The ends of the model                                                  */

void cp_embed_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    get_dims(x, l, &D);
    o->n = 0;
    /* each TP rank looks up the tokens of its vocabulary shard (zeros for
     * the others): read rows, write T h */
    mem(o, "embed", D.T * D.h * 2 * D.E + (x->pos == CP_POS_LEARNED ? D.T * D.h * 2 * D.E : 0),
        0);
    /* the partial embeddings are summed over TP: reduce-scatter under SP */
    if (D.t > 1)
        comm(o, "tp.embed", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP, D.T * D.h * D.E, 0);
    if (D.drop)
        mem(o, "embed.dropout", D.Tsp * D.h * (2 * D.E + 1), 0);
}

void cp_embed_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    double grad_acc;
    get_dims(x, l, &D);
    grad_acc = l->grad_fp32 ? 8 : 2 * D.E;
    o->n = 0;
    if (D.t > 1 && D.sp)
        comm(o, "tp.embed.bwd", CP_CM_AG, CP_G_TP, D.T * D.h * D.E, 0);
    /* the table's gradient: a dense V/t x h tensor zero-filled, the rows of
     * the batch added in, then accumulated into the main gradient */
    mem(o, "embed.bwd", D.V * D.h * (2 * D.E + grad_acc) + D.T * D.h * 2 * D.E, 0);
}

void cp_head_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    get_dims(x, l, &D);
    o->n = 0;
    norm_fwd(o, "final_norm", &D);
    if (x->vocab <= 0)
        return;
    tp_enter(o, &D, "tp.ag.logits");
    /* the output layer stays in 16 bits under FP8 (Transformer Engine's
     * recipes keep it out of fp8_autocast) */
    gemm(o, "logits", D.T, D.V, D.h, D.E, D.E, 0);
    /* vocabulary-parallel cross-entropy in fp32: max, exp and sum, loss;
     * three all-reduces of T floats over TP */
    mem(o, "cross_entropy", D.T * D.V * (D.E + 3 * 4), 0);
    if (D.t > 1)
        comm(o, "tp.ce", CP_CM_AR, CP_G_TP, 3 * D.T * 4, 0);
}

void cp_head_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    dims D;
    get_dims(x, l, &D);
    o->n = 0;
    if (x->vocab > 0) {
        mem(o, "cross_entropy.bwd", D.T * D.V * (4 + D.E), 0);
        dgrad(o, "logits.dgrad", D.T, D.V, D.h, &D, 0);
        tp_exit(o, &D, "tp.rs.logits.bwd");
        wgrad(o, "logits.wgrad", D.T, D.V, D.h, &D, l, 0);
    }
    mem(o, "final_norm.bwd", D.Tsp * D.h * 3 * D.E, 0);
}

double cp_steps_flops(const cp_steps *s)
{
    double f = 0;
    int i;
    for (i = 0; i < s->n; i++)
        f += s->s[i].flops;
    return f;
}

double cp_steps_bytes(const cp_steps *s)
{
    double b = 0;
    int i;
    for (i = 0; i < s->n; i++)
        b += s->s[i].bytes;
    return b;
}

/* --------------------------------------------------------------------- */
/* Parameters and model FLOPs                                             */

double cp_block_params(const cp_xformer *x)
{
    double h = (double)x->hidden, d = (double)cp_xf_head_dim(x), a = (double)x->heads;
    double g = (double)x->kv_heads, f = (double)x->ffn;
    double attn = h * (a + 2 * g) * d + a * d * h;
    double mlp = (cp_xf_gated(x) ? 3 : 2) * h * f;
    double norms = (x->norm == CP_NORM_LAYER ? 4 : 2) * h;
    if (x->qkv_bias)
        attn += (a + 2 * g) * d;
    if (x->o_bias)
        attn += h;
    if (x->mlp_bias)
        mlp += f * (cp_xf_gated(x) ? 2 : 1) + h;
    if (x->qk_norm)
        norms += 2 * d;
    return attn + mlp + norms;
}

double cp_embed_params(const cp_xformer *x)
{
    double h = (double)x->hidden;
    return (double)x->vocab * h + (x->pos == CP_POS_LEARNED ? (double)x->max_pos * h : 0);
}

double cp_head_params(const cp_xformer *x)
{
    double h = (double)x->hidden;
    return (x->norm == CP_NORM_LAYER ? 2 : 1) * h + (x->tied ? 0 : (double)x->vocab * h);
}

double cp_model_params(const cp_xformer *x)
{
    return (double)x->layers * cp_block_params(x) + cp_embed_params(x) + cp_head_params(x);
}

double cp_model_flops_per_seq(const cp_xformer *x, int64_t seq, int causal_half)
{
    double s = (double)seq, L = (double)x->layers, h = (double)x->hidden;
    double a = (double)x->heads, g = (double)x->kv_heads, d = (double)cp_xf_head_dim(x);
    double q_ratio = a * d / h, gm = cp_xf_gated(x) ? 1.5 : 1, f = (double)x->ffn;
    double attn_s = causal_half ? s / (2 * h) : s / h;
    return 12 * s * L * h * h *
           ((1 + g / a + attn_s) * q_ratio + f / h * gm + (double)x->vocab / (2 * L * h));
}
