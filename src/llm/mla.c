/*
 * mla.c - multi-head latent attention's kernels, parameters, activations
 * and FLOPs (see mla.h; docs/model.md eq. E13).
 *
 * Notation as ops.c: T = b s / c tokens on a GPU, T' = T / t under
 * sequence parallelism, per-GPU heads a = heads / t, ql and kl the query
 * and key/value latent widths, dn, dr and dv the per-head widths without
 * rotary, rotary and of the values, E = 2 bytes, e a GEMM operand's (1
 * under FP8).
 */
#include <string.h>

#include "llm/mla.h"

int cp_mla_on(const cp_xformer *x)
{
    return x->mla.kv_lora_rank > 0;
}

typedef struct mdims {
    double b, s, c, t, T, Tsp, h, a, ql, kl, dn, dr, dv, E, e, drop;
    int sp, fp8, f8;   /* f8: CP_SF_FP8 when the block's GEMMs run in FP8 */
} mdims;

static void get_mdims(const cp_xformer *x, const cp_layout *l, mdims *D)
{
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
    D->ql = (double)x->mla.q_lora_rank;
    D->kl = (double)x->mla.kv_lora_rank;
    D->dn = (double)x->mla.qk_nope_dim;
    D->dr = (double)x->mla.qk_rope_dim;
    D->dv = (double)x->mla.v_head_dim;
    D->E = 2;
    D->fp8 = l->precision == CP_PREC_FP8;
    D->e = D->fp8 ? 1 : 2;
    D->f8 = D->fp8 ? CP_SF_FP8 : 0;
    D->drop = x->dropout > 0;
}

/* Transformer Engine's cast of a GEMM input to FP8 with its transpose. */
static void cast(cp_steps *o, const char *name, double elems, const mdims *D, int flags)
{
    if (D->fp8)
        cp_steps_mem(o, name, elems * (D->E + 2), flags);
}

/* A latent all-gathered over TP (sequence parallelism) before an up
 * projection; rebuilt with it under selective recomputation. */
static void gather(cp_steps *o, const char *name, double width, const mdims *D, int flags)
{
    if (D->t > 1 && D->sp)
        cp_steps_comm(o, name, CP_CM_AG, CP_G_TP, D->T * width * D->E, flags);
}

void cp_mla_attn_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    mdims D;
    double T, qn, kvn;
    get_mdims(x, l, &D);
    T = D.T;
    qn = D.a * (D.dn + D.dr);
    kvn = D.a * (D.dn + D.dv);
    cp_steps_mem(o, "norm1", D.Tsp * D.h * (D.E + D.e), 0);
    if (D.ql > 0) {
        cp_steps_linear(o, "q_down", D.Tsp, D.ql, D.h, 1, l, D.f8);
        cp_steps_mem(o, "q_norm", D.Tsp * D.ql * 2 * D.E, 0);
        gather(o, "tp.ag.q_latent", D.ql, &D, CP_SF_SEL);
        cast(o, "q_up.cast", T * D.ql, &D, CP_SF_SEL);
        cp_steps_linear(o, "q_up", T, qn, D.ql, 1, l, D.f8 | CP_SF_SEL);
    } else { /* queries straight from h: the input gathered as a dense block's */
        gather(o, "tp.ag.q", D.h, &D, CP_SF_SEL);
        cp_steps_linear(o, "q_proj", T, qn, D.h, 1, l, D.f8 | CP_SF_SEL);
    }
    cp_steps_linear(o, "kv_down", D.Tsp, D.kl + D.dr, D.h, 1, l, D.f8);
    cp_steps_mem(o, "kv_norm", D.Tsp * D.kl * 2 * D.E, 0);
    gather(o, "tp.ag.kv_latent", D.kl + D.dr, &D, CP_SF_SEL);
    cast(o, "kv_up.cast", T * D.kl, &D, CP_SF_SEL);
    cp_steps_linear(o, "kv_up", T, kvn, D.kl, 1, l, D.f8 | CP_SF_SEL);
    /* rotary on the query's and the shared key's rotary parts, then the
     * heads' queries and keys assembled: read q and k, write both */
    cp_steps_mem(o, "mla.rope", T * qn * 3 * D.E, CP_SF_SEL);
    cp_attn_core(x, l, D.dn + D.dr, D.dv, D.a, 0, o);
    cast(o, "proj.cast", T * D.a * D.dv, &D, 0);
    cp_steps_linear(o, "proj", T, D.h, D.a * D.dv, 1, l, D.f8);
    if (D.t > 1)
        cp_steps_comm(o, "tp.rs.proj", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP, T * D.h * D.E,
                      CP_SF_HIDE);
    cp_steps_mem(o, "residual1", D.Tsp * D.h * (3 * D.E + D.drop), 0);
}

void cp_mla_attn_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *o)
{
    mdims D;
    double T, qn, kvn;
    get_mdims(x, l, &D);
    T = D.T;
    qn = D.a * (D.dn + D.dr);
    kvn = D.a * (D.dn + D.dv);
    cp_steps_mem(o, "residual1.bwd", D.Tsp * D.h * (2 * D.E + D.drop), 0);
    if (D.t > 1 && D.sp)
        cp_steps_comm(o, "tp.ag.proj.bwd", CP_CM_AG, CP_G_TP, T * D.h * D.E, CP_SF_HIDE);
    cast(o, "proj.grad.cast", T * D.h, &D, 0);
    cp_steps_linear_bwd(o, "proj.dgrad", "proj.wgrad", T, D.h, D.a * D.dv, 1, l, D.f8);
    cp_attn_core(x, l, D.dn + D.dr, D.dv, D.a, 1, o);
    cp_steps_mem(o, "mla.rope.bwd", T * qn * 3 * D.E, 0);
    cast(o, "kv_up.grad.cast", T * kvn, &D, 0);
    cp_steps_linear_bwd(o, "kv_up.dgrad", "kv_up.wgrad", T, kvn, D.kl, 1, l, D.f8);
    if (D.t > 1) /* the latent's gradient back to the sequence shards */
        cp_steps_comm(o, "tp.rs.kv_latent.bwd", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP,
                      T * (D.kl + D.dr) * D.E, CP_SF_HIDE);
    cp_steps_mem(o, "kv_norm.bwd", D.Tsp * D.kl * 3 * D.E, 0);
    cp_steps_linear_bwd(o, "kv_down.dgrad", "kv_down.wgrad", D.Tsp, D.kl + D.dr, D.h, 1, l,
                        D.f8);
    cast(o, "q_up.grad.cast", T * qn, &D, 0);
    if (D.ql > 0) {
        cp_steps_linear_bwd(o, "q_up.dgrad", "q_up.wgrad", T, qn, D.ql, 1, l, D.f8);
        if (D.t > 1)
            cp_steps_comm(o, "tp.rs.q_latent.bwd", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP,
                          T * D.ql * D.E, CP_SF_HIDE);
        cp_steps_mem(o, "q_norm.bwd", D.Tsp * D.ql * 3 * D.E, 0);
        cp_steps_linear_bwd(o, "q_down.dgrad", "q_down.wgrad", D.Tsp, D.ql, D.h, 1, l, D.f8);
    } else {
        cp_steps_linear_bwd(o, "q_proj.dgrad", "q_proj.wgrad", T, qn, D.h, 1, l, D.f8);
        if (D.t > 1)
            cp_steps_comm(o, "tp.rs.q.bwd", D.sp ? CP_CM_RS : CP_CM_AR, CP_G_TP,
                          T * D.h * D.E, CP_SF_HIDE);
    }
    /* the two input gradients summed, then the norm's backward */
    cp_steps_mem(o, "norm1.bwd", D.Tsp * D.h * 5 * D.E, 0);
}

double cp_mla_params(const cp_xformer *x)
{
    double h = (double)x->hidden, a = (double)x->heads, ql = (double)x->mla.q_lora_rank;
    double kl = (double)x->mla.kv_lora_rank, dn = (double)x->mla.qk_nope_dim;
    double dr = (double)x->mla.qk_rope_dim, dv = (double)x->mla.v_head_dim;
    double q = ql > 0 ? h * ql + ql + ql * a * (dn + dr) : h * a * (dn + dr);
    double kv = h * (kl + dr) + kl + kl * a * (dn + dv);
    return q + kv + a * dv * h;
}

double cp_mla_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc)
{
    mdims D;
    double T, kept, qkv, core;
    get_mdims(x, l, &D);
    T = D.T;
    if (rc == CP_RC_FULL) /* only the block's input */
        return D.Tsp * D.h * D.E;
    kept = D.Tsp * D.h * D.E          /* norm1's input */
           + D.Tsp * D.h * D.e        /* its output, the down projections' input */
           + D.Tsp * D.kl * D.E       /* kv_norm's input */
           + T * (D.kl + D.dr) * D.e  /* the gathered latent and rotary key: kv_up's input */
           + T * D.a * D.dv * D.e     /* the attention output, the projection's input */
           + D.Tsp * D.h * D.drop;    /* the mask after the projection */
    if (D.ql > 0)
        kept += D.Tsp * D.ql * D.E + T * D.ql * D.e; /* q_norm's input, q_up's input */
    else
        kept += T * D.h * D.e;                       /* q_proj's gathered input */
    qkv = T * D.a * (2 * (D.dn + D.dr) + D.dv) * D.E; /* Q, K and V */
    if (l->attn == CP_ATTN_FLASH)
        core = T * D.a * 4 + T * D.a * D.dv * D.E;   /* log-sum-exp and the output */
    else
        core = D.b * D.a * (D.s / D.c) * D.s * (D.E + D.drop * (D.E + 1));
    if (rc == CP_RC_SELECTIVE) /* Q, K, V and the core rebuilt from the latents */
        qkv = core = 0;
    return kept + qkv + core;
}

double cp_mla_flops_per_token(const cp_xformer *x, int64_t seq, int causal_half)
{
    double s = (double)seq, a = (double)x->heads, dv = (double)x->mla.v_head_dim;
    double dqk = (double)(x->mla.qk_nope_dim + x->mla.qk_rope_dim);
    double proj = cp_mla_params(x), core = s * a * (dqk + dv) * (causal_half ? 0.5 : 1);
    /* 3 passes (forward, two backward GEMMs) x 2 FLOPs a multiply-add */
    return 6 * (proj + core);
}
