/*
 * layout.c - the large-model parallel layout: defaults, checks against the
 * model and machine, Megatron's rank order and the shape of each
 * communication group (see layout.h; docs/model.md, "Layouts").
 */
#include <stdio.h>
#include <string.h>

#include "llm/layout.h"

void cp_layout_default(cp_layout *l)
{
    memset(l, 0, sizeof *l);
    l->tp = l->cp = l->pp = l->vp = 1;
    l->mbs = 1;
    l->sp = -1;
    l->recompute = CP_RC_NONE;
    l->precision = CP_PREC_BF16;
    l->attn = CP_ATTN_FLASH;
    l->fw = CP_LLM_MEGATRON;
    l->zero = -1;
    l->overlap_grad = l->overlap_param = -1;
    l->tp_overlap = -1;
    l->grad_fp32 = -1;
    l->fp8_params = -1;
    l->ep = 1;
    l->etp = 0;
    l->moe_imbalance = 1;
    l->moe_overlap = -1;
    l->moe_dispatch = CP_MOE_ALLTOALL;
    l->moe_path = CP_A2A_AUTO;
}

const char *cp_llm_fw_name(cp_llm_fw f)
{
    static const char *const n[] = {"megatron", "fsdp", "deepspeed"};
    return f >= 0 && f < CP_LLM_FWS ? n[f] : "?";
}

const char *cp_recompute_name(cp_recompute r)
{
    static const char *const n[] = {"none", "selective", "full", "auto"};
    return r >= CP_RC_NONE && r <= CP_RC_AUTO ? n[r] : "?";
}

const char *cp_precision_name(cp_precision p)
{
    static const char *const n[] = {"bf16", "fp16", "fp8"};
    return p >= CP_PREC_BF16 && p <= CP_PREC_FP8 ? n[p] : "?";
}

int64_t cp_layout_chunk_layers(const cp_layout *l, int G)
{
    int64_t n = l->layers_per_chunk;
    if (l->ends_in_split && (G == 0 || G == l->pp * l->vp - 1))
        n--;
    return n;
}

int64_t cp_layout_recomputed(const cp_layout *l, cp_recompute rc, int G)
{
    int64_t n = cp_layout_chunk_layers(l, G);
    if (rc == CP_RC_NONE)
        return 0;
    if (rc == CP_RC_FULL && l->recompute_layers > 0 && l->recompute_layers < n)
        return l->recompute_layers;
    return n;
}

int cp_layout_rank(const cp_layout *l, int tp_i, int cp_i, int dp_i, int pp_i)
{
    return tp_i + l->tp * (cp_i + l->cp * (dp_i + l->dp * pp_i));
}

/* The frameworks' defaults for what the user left unset (-1):
 * Megatron-Core with SP (when TP > 1), the distributed optimizer and both
 * overlaps (the recipes NVIDIA publishes); FSDP2 shards everything (ZeRO-3)
 * and prefetches, without SP unless asked; DeepSpeed ZeRO-1 (its pipeline
 * engine refuses stages 2 and 3 with PP > 1), gradients reduced after
 * backward, no SP.  Gradients: Megatron keeps fp32 main_grad buffers and
 * reduces them in fp32 (--accumulate-allreduce-grads-in-fp32 is its bf16
 * default); FSDP2 and DeepSpeed reduce in the parameters' 16 bits. */
static void framework_defaults(cp_layout *l)
{
    int mega = l->fw == CP_LLM_MEGATRON;
    if (l->sp < 0)
        l->sp = mega && l->tp > 1;
    if (l->zero < 0)
        l->zero = mega ? 1 : l->fw == CP_LLM_FSDP ? 3 : 1;
    if (l->overlap_grad < 0)
        l->overlap_grad = l->fw != CP_LLM_DEEPSPEED;
    if (l->overlap_param < 0)
        l->overlap_param = l->fw != CP_LLM_DEEPSPEED && l->zero > 0;
    if (l->tp_overlap < 0)
        l->tp_overlap = 0;
    if (l->grad_fp32 < 0)
        l->grad_fp32 = mega;
    if (l->fp8_params < 0)
        l->fp8_params = 0;
}

/* A dense model takes no expert option: each one given is named. */
static int dense_experts(const cp_layout *l, cp_err *e)
{
    const char *opt = l->ep > 1 ? "--ep" : l->etp > 0 ? "--etp" :
                      l->moe_imbalance != 1 ? "--moe-imbalance" :
                      l->moe_overlap > 0 ? "--moe-overlap" :
                      l->moe_dispatch != CP_MOE_ALLTOALL ? "--moe-dispatcher" :
                      l->moe_path != CP_A2A_AUTO ? "--moe-a2a" : NULL;
    if (opt)
        return cp_fail(e, CP_EINPUT, "%s: the model is dense (no experts in its "
                       "\"transformer\" block); expert options need a mixture-of-experts "
                       "model", opt);
    return CP_OK;
}

/* The expert layers' division of a stage's TP x CP x DP ranks (docs/
 * model.md eq. E1): ETP x EP x EDP of them, Megatron-Core's expert rank
 * order (tp-ep-dp-pp), so an EP group of ep x etp ranks or fewer stays
 * inside a host whenever that many fit in one. */
static int expert_resolve(cp_layout *l, const cp_xformer *x, cp_err *e)
{
    long long stage = (long long)l->tp * l->cp * l->dp, span;
    int etp = cp_layout_etp(l);
    if (l->moe_overlap < 0)
        l->moe_overlap = 0;
    if (x->moe.experts <= 0) {
        l->edp = 0; /* no expert groups */
        return dense_experts(l, e);
    }
    span = (long long)l->ep * etp;
    if (x->moe.experts % l->ep)
        return cp_fail(e, CP_EINPUT, "%lld experts are not divisible by --ep %d",
                       (long long)x->moe.experts, l->ep);
    if (stage % span)
        return cp_fail(e, CP_EINPUT, "--ep %d x --etp %d = %lld does not divide the %lld ranks "
                       "of a pipeline stage (--tp %d x --cp %d x dp %d): Megatron-Core carves "
                       "the expert groups out of them", l->ep, etp, span, stage, l->tp, l->cp,
                       l->dp);
    if (etp > l->per_host && !l->tp_span_hosts)
        return cp_fail(e, CP_EINPUT, "--etp %d is wider than a host of %d GPUs: its collectives "
                       "would cross the network every layer; add --tp-span-hosts to price it "
                       "anyway", etp, l->per_host);
    if (etp > 1 && etp < l->per_host && l->per_host % etp)
        return cp_fail(e, CP_EINPUT, "--etp %d does not divide the %d GPUs of a host: an "
                       "expert tensor-parallel group would straddle two hosts", etp,
                       l->per_host);
    if (span > l->per_host && span % l->per_host)
        return cp_fail(e, CP_EINPUT, "--ep %d x --etp %d = %lld ranks would spread unevenly "
                       "over hosts of %d GPUs", l->ep, etp, span, l->per_host);
    if (l->moe_imbalance * (double)x->moe.top_k > (double)x->moe.experts)
        return cp_fail(e, CP_EINPUT, "--moe-imbalance %g: the busiest expert gets at most every "
                       "token, %lld experts / top %lld = %g times the mean",
                       l->moe_imbalance, (long long)x->moe.experts, (long long)x->moe.top_k,
                       (double)x->moe.experts / (double)x->moe.top_k);
    if (x->moe.ffn % etp)
        return cp_fail(e, CP_EINPUT, "the experts' FFN of %lld is not divisible by --etp %d",
                       (long long)x->moe.ffn, etp);
    if (l->moe_dispatch == CP_MOE_DEEPEP && l->moe_path == CP_A2A_POOL)
        return cp_fail(e, CP_EINPUT, "--moe-a2a pool with --moe-dispatcher deepep: DeepEP's "
                       "kernels send over NVLink and the network, not through a pool");
    if (l->ep > 1 && l->fw != CP_LLM_MEGATRON)
        return cp_fail(e, CP_EINPUT, "--ep %d with --framework %s: expert parallelism is "
                       "modelled as Megatron-Core runs it only", l->ep, cp_llm_fw_name(l->fw));
    l->edp = (int)(stage / span);
    return CP_OK;
}

int cp_layout_etp(const cp_layout *l)
{
    return l->etp > 0 ? l->etp : l->tp;
}

int cp_layout_resolve(cp_layout *l, const cp_xformer *x, int gpus, int per_host, cp_err *e)
{
    long long tcp = (long long)l->tp * l->cp * l->pp;
    int rc;
    if (x->layers <= 0)
        return cp_fail(e, CP_EINPUT, "the model has no transformer block: a large-model "
                                     "layout needs its architecture (import hf-config writes it)");
    if (l->seq <= 0)
        l->seq = x->seq;
    if (l->vp < 1)
        l->vp = 1;
    if (l->dp <= 0) {
        if (tcp <= 0 || gpus % tcp)
            return cp_fail(e, CP_EINPUT, "--tp %d x --cp %d x --pp %d = %lld does not divide the "
                           "%d GPUs", l->tp, l->cp, l->pp, tcp, gpus);
        l->dp = (int)(gpus / tcp);
    }
    if (tcp * l->dp != gpus)
        return cp_fail(e, CP_EINPUT, "--tp %d x --cp %d x --dp %d x --pp %d = %lld, but the "
                       "machine has %d GPUs", l->tp, l->cp, l->dp, l->pp, tcp * l->dp, gpus);
    if (l->gbs <= 0)
        l->gbs = l->mbs * l->dp;
    if (l->gbs % ((long long)l->mbs * l->dp))
        return cp_fail(e, CP_EINPUT, "--gbs %d is not divisible by --mbs %d x dp %d = %lld",
                       l->gbs, l->mbs, l->dp, (long long)l->mbs * l->dp);
    l->ends_in_split = x->layers % ((long long)l->pp * l->vp) != 0 && l->pp > 1 &&
                       (x->layers + 2) % ((long long)l->pp * l->vp) == 0;
    if (!l->ends_in_split && x->layers % ((long long)l->pp * l->vp))
        return cp_fail(e, CP_EINPUT, "%lld layers are not divisible by --pp %d x --vp %d = %lld "
                       "(nor are %lld, the embedding and the loss counted as layers)",
                       (long long)x->layers, l->pp, l->vp, (long long)l->pp * l->vp,
                       (long long)x->layers + 2);
    if (x->heads % l->tp)
        return cp_fail(e, CP_EINPUT, "%lld attention heads are not divisible by --tp %d",
                       (long long)x->heads, l->tp);
    if (x->kv_heads % l->tp && l->tp % x->kv_heads)
        return cp_fail(e, CP_EINPUT, "%lld key/value heads and --tp %d: neither divides the "
                       "other (Megatron replicates KV heads only when TP is a multiple)",
                       (long long)x->kv_heads, l->tp);
    if (l->cp > 1 && l->seq % (2LL * l->cp))
        return cp_fail(e, CP_EINPUT, "sequence %lld is not divisible by 2 x --cp %d = %d (each "
                       "rank takes two chunks for causal load balance)", (long long)l->seq,
                       l->cp, 2 * l->cp);
    if (l->vp > 1 && l->pp < 2)
        return cp_fail(e, CP_EINPUT, "--vp %d needs --pp 2 or more (virtual stages interleave "
                       "a pipeline)", l->vp);
    l->gpus = gpus;
    l->per_host = per_host > 0 ? per_host : gpus;
    l->hosts = (gpus + l->per_host - 1) / l->per_host;
    l->micro = l->gbs / (l->mbs * l->dp);
    if (l->vp > 1 && l->micro % l->pp)
        return cp_fail(e, CP_EINPUT, "the interleaved schedule needs the %d micro-batches "
                       "(--gbs %d / (--mbs %d x dp %d)) to be a multiple of --pp %d",
                       l->micro, l->gbs, l->mbs, l->dp, l->pp);
    l->layers_per_chunk = (x->layers + 2 * (int64_t)l->ends_in_split) / ((int64_t)l->pp * l->vp);
    if (l->tp > l->per_host && !l->tp_span_hosts)
        return cp_fail(e, CP_EINPUT, "--tp %d is wider than a host of %d GPUs: its all-reduces "
                       "would cross the network every layer; add --tp-span-hosts to price it "
                       "anyway", l->tp, l->per_host);
    if (l->tp < l->per_host && l->per_host % l->tp && l->tp > 1)
        return cp_fail(e, CP_EINPUT, "--tp %d does not divide the %d GPUs of a host: a TP "
                       "group would straddle two hosts", l->tp, l->per_host);
    framework_defaults(l);
    if ((rc = expert_resolve(l, x, e)))
        return rc;
    if (l->fw == CP_LLM_DEEPSPEED && l->pp > 1 && l->zero > 1)
        return cp_fail(e, CP_EINPUT, "deepspeed: ZeRO stage %d with --pp %d; DeepSpeed's "
                       "pipeline engine runs only stage 1 (or 0)", l->zero, l->pp);
    if (l->fw == CP_LLM_DEEPSPEED && l->vp > 1)
        return cp_fail(e, CP_EINPUT, "deepspeed: --vp %d; DeepSpeed's pipeline engine has no "
                       "interleaved schedule", l->vp);
    return CP_OK;
}

/* Member i of the first group of kind k (every other index 0), in rank
 * order; *size gets the group's size. */
static int member_rank(const cp_layout *l, cp_group_kind k, int i, int *size)
{
    switch (k) {
    case CP_G_TP:
        *size = l->tp;
        return cp_layout_rank(l, i, 0, 0, 0);
    case CP_G_CP:
        *size = l->cp;
        return cp_layout_rank(l, 0, i, 0, 0);
    case CP_G_DP:
        *size = l->dp;
        return cp_layout_rank(l, 0, 0, i, 0);
    case CP_G_DPCP: /* Megatron's data-parallel group with context parallelism */
        *size = l->dp * l->cp;
        return cp_layout_rank(l, 0, i % l->cp, i / l->cp, 0);
    case CP_G_PP: /* the pair of adjacent stages that exchange activations */
        *size = l->pp > 1 ? 2 : 1;
        return cp_layout_rank(l, 0, 0, 0, i);
    /* the expert groups: rank = etp_i + ETP (ep_i + EP (edp_i + EDP pp_i)) (eq. E1) */
    case CP_G_EP: /* none in a dense model (edp 0) */
        *size = l->edp > 0 ? l->ep : 0;
        return cp_layout_etp(l) * i;
    case CP_G_ETP:
        *size = l->edp > 0 ? cp_layout_etp(l) : 0;
        return i;
    case CP_G_EDP:
        *size = l->edp;
        return cp_layout_etp(l) * l->ep * i;
    default:
        *size = 0;
        return 0;
    }
}

void cp_layout_group(const cp_layout *l, cp_group_kind k, cp_group_shape *g)
{
    int n, i, first_host, cur_host = -1, cur = 0;
    memset(g, 0, sizeof *g);
    g->kind = k;
    g->uniform = 1;
    member_rank(l, k, 0, &n);
    g->size = n;
    if (n == 0)
        return;
    first_host = member_rank(l, k, 0, &n) / l->per_host;
    for (i = 0; i < n; i++) {
        int r = member_rank(l, k, i, &n), h = r / l->per_host;
        if (h != cur_host) { /* ranks rise, so a host's members are consecutive */
            if (cur_host > first_host && cur != g->local)
                g->uniform = 0;
            cur_host = h;
            cur = 0;
            g->hosts++;
        }
        if (h == first_host) {
            if (g->local < CP_LAYOUT_MAX_LOCAL)
                g->idx[g->local++] = r % l->per_host;
        } else {
            cur++;
        }
    }
    if (g->hosts > 1 && cur != g->local)
        g->uniform = 0;
    /* every GPU of a host is in one group of each kind, so per_host / local
     * groups share a host; a machine smaller than a host has fewer */
    g->concurrent = g->local > 0 && l->per_host % g->local == 0 ? l->per_host / g->local : 1;
    if (g->hosts == 1 && (long long)g->concurrent * g->size > l->gpus)
        g->concurrent = l->gpus / g->size;
    if (g->concurrent < 1)
        g->concurrent = 1;
}

int cp_layout_uniform(const cp_layout *l)
{
    int k;
    for (k = 0; k < CP_G_KINDS; k++) {
        cp_group_shape sh;
        cp_layout_group(l, (cp_group_kind)k, &sh);
        if (sh.size > 1 && !sh.uniform)
            return 0;
    }
    return 1;
}
