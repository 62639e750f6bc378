/*
 * dpsync.c - data-parallel synchronisation and the optimizer step of one
 * pipeline stage (see dpsync.h; docs/model.md eq. D1-D4).
 */
#include <math.h>
#include <string.h>

#include "llm/dpsync.h"

/* Megatron-Core's default bucket, parameters (distributed_data_parallel.py:
 * bucket_size = max(40000000, 1000000 * dp_size)). */
static double bucket_params(const cp_layout *l)
{
    double b = 1e6 * l->dp * l->cp;
    return b > 4e7 ? b : 4e7;
}

cp_group_kind cp_dp_group(const cp_layout *l, int expert)
{
    return expert ? CP_G_EDP : l->cp > 1 ? CP_G_DPCP : CP_G_DP;
}

/* One DP collective, ms, on the DP group (or the experts' EDP group): on
 * the network (alg, or NCCL's choice when alg cannot run it), through the
 * pool (pool 1), or the faster (pool 2). */
static double coll_ms(const cp_groups *G, const cp_layout *l, int expert, cp_comm_kind op,
                      double bytes, cp_coll_alg alg, int pool, const char **name)
{
    cp_coll_alg used = CP_ALGS;
    cp_group_kind k = cp_dp_group(l, expert);
    double us = -1, p = pool ? cp_groups_pool_us(G, k, op, bytes) : -1;
    if (pool != 1) {
        us = cp_groups_us(G, k, op, bytes, alg, &used);
        if (us < 0) /* the algorithm cannot run this operation: NCCL's choice */
            us = cp_groups_us(G, k, op, bytes, CP_ALGS, &used);
    }
    if (p >= 0 && (us < 0 || p < us)) {
        if (name)
            *name = "pool";
        return p / 1000;
    }
    if (name)
        *name = used < CP_ALGS ? cp_coll_alg_name(used) : "-";
    return us / 1000;
}

double cp_dp_per_micro_ms(const cp_layout *l, const cp_groups *G, cp_coll_alg alg, int pool,
                          double chunk_params)
{
    double gb = l->grad_fp32 ? 4 : 2, t = 0;
    int zero3 = l->zero >= 3, zero2 = l->fw != CP_LLM_MEGATRON && l->zero >= 2;
    if (!zero2 && !zero3)
        return 0;
    t += coll_ms(G, l, 0, CP_CM_RS, chunk_params * gb, alg, pool, NULL);
    if (zero3) /* gathered for forward and again for backward (resharded after forward) */
        t += (l->fw == CP_LLM_FSDP && l->pp > 1 ? 1 : 2) *
             coll_ms(G, l, 0, CP_CM_AG, chunk_params * 2, alg, pool, NULL);
    return t;
}

/* The optimizer step on `shard` parameters of a GPU holding `local` (eq.
 * D4): Adam reads the fp32 gradient, master weight and both moments and
 * writes the last three and the 16-bit weight (4 x 4 + 3 x 4 + 2 = 30
 * bytes a parameter); the gradient norm reads, and zeroing writes, every
 * local gradient once. */
static double optimizer_ms(const cp_gpu *g, double shard, double local, double gb)
{
    double bytes = shard * 30 + local * 2 * gb;
    return bytes / (g->hbm * g->cal.mem_eff) * 1e3 + 4 * g->cal.kernel_us / 1e3;
}

double cp_dp_optimizer_ms(const cp_layout *l, const cp_gpu *g, double params)
{
    double n = (double)l->dp * l->cp, gb = l->grad_fp32 ? 4 : 2;
    return optimizer_ms(g, l->zero >= 1 ? params / n : params, params, gb);
}

double cp_dp_offload_step_ms(const cp_layout *l, const cp_gpu *g, const cp_tiers *t,
                             double params)
{
    double n = (double)l->dp * l->cp, shard = l->zero >= 1 ? params / n : params;
    double gb = l->grad_fp32 ? 4 : 2, tier;
    if (!t || !l->offload_opt)
        return -1;
    tier = cp_offload_opt_ms(&t->t[l->offload_opt], shard, gb, l->per_host);
    if (tier < 0)
        return -1;
    /* the GPU still takes the gradients' norm and zeroes them (eq. D4) */
    return tier + params * 2 * gb / (g->hbm * g->cal.mem_eff) * 1e3;
}

void cp_dp_sync(const cp_dp_in *in, cp_dp_out *out)
{
    const cp_layout *l = in->l;
    double n = (double)l->dp * l->cp, gb = l->grad_fp32 ? 4 : 2, P = in->params;
    double per_chunk = P / l->vp, bucket = bucket_params(l), queue = 0, first_ag = 0;
    int dist = l->zero >= 1, c, nb, j, pooled, once = !(l->zero >= 3 || (l->fw != CP_LLM_MEGATRON && l->zero >= 2));
    const char *name = "-";
    memset(out, 0, sizeof *out);
    out->alg = "-";
    out->grads_done_ms = in->stage_end_ms;
    out->optimizer_ms = l->offload_opt ? cp_dp_offload_step_ms(l, in->g, in->tiers, P)
                                       : optimizer_ms(in->g, dist ? P / n : P, P, gb);
    if (n <= 1)
        return;
    if (!once) { /* ZeRO-2/3 and FSDP synchronised every micro-batch (cp_dp_per_micro_ms) */
        out->comm_ms = l->micro * l->vp * cp_dp_per_micro_ms(l, in->G, in->alg, in->pool,
                                                             per_chunk);
        coll_ms(in->G, l, in->expert, CP_CM_RS, per_chunk * gb, in->alg, in->pool, &out->alg);
        return;
    }
    /* once an iteration: each chunk's buckets as its last backward makes
     * them (overlap) or after the stage's last backward, one stream */
    nb = (int)ceil(per_chunk / bucket);
    if (nb < 1)
        nb = 1;
    for (c = l->vp - 1; c >= 0; c--) {
        double start = in->last_bwd_start_ms[c], end = in->last_bwd_end_ms[c];
        for (j = 0; j < nb; j++) {
            double size = j < nb - 1 ? bucket : per_chunk - bucket * (nb - 1);
            double ready = l->overlap_grad ? start + (end - start) * (j + 1) / nb
                                           : in->stage_end_ms;
            double t = coll_ms(in->G, l, in->expert, dist ? CP_CM_RS : CP_CM_AR, size * gb,
                               in->alg, in->pool, &name);
            if (j == 0)
                out->alg = name;
            out->buckets++;
            pooled = strcmp(name, "pool") == 0;
            if (queue < ready)
                queue = ready;
            queue += t;
            out->comm_ms += t;
            if (dist) { /* the gather of the updated bucket, 16-bit weights */
                const char *agname = "-";
                double ag = coll_ms(in->G, l, in->expert, CP_CM_AG, size * 2, in->alg,
                                    in->pool, &agname);
                pooled |= strcmp(agname, "pool") == 0;
                out->comm_ms += ag;
                if (l->overlap_param) {
                    if (c == 0 && j == 0)
                        first_ag = ag; /* the next forward needs it first */
                } else {
                    out->gather_exposed_ms += ag;
                }
            }
            out->pool_buckets += pooled;
        }
    }
    out->gather_exposed_ms += first_ag;
    out->grads_done_ms = queue > in->stage_end_ms ? queue : in->stage_end_ms;
    /* what overlapped compute slowed it by the SMs its thread blocks took
     * (eq. K5): charged after the gathers, where the stage waits */
    {
        double hidden = out->comm_ms - (out->grads_done_ms - in->stage_end_ms) -
                        out->gather_exposed_ms;
        if (hidden > 0)
            out->gather_exposed_ms += hidden * cp_gpu_overlap_loss(in->g);
    }
}
