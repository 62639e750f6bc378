/*
 * memory.c - model-state memory per GPU under each framework (see
 * memory.h and docs/model.md, eq. M1).
 */
#include <math.h>
#include <string.h>

#include "predict/memory.h"
#include "predict/sharded.h"

#define MIB CP_MIB

double cp_optimizer_bytes(int optimizer, int grad_bytes)
{
    double master = grad_bytes < 4 ? 4 : 0; /* fp32 master weights under mixed precision */
    return (optimizer == CP_OPT_SGD ? 4 : 8) + master;
}

/* The smallest of two sizes. */
static double least(double a, double b)
{
    return a < b ? a : b;
}

double cp_activation_bytes(const cp_model *m, int elem_bytes, int tp, int recompute,
                           int flash_attn)
{
    const cp_xformer *x = &m->xf;
    double E = elem_bytes > 0 ? elem_bytes : cp_dtype_bytes(m->dtype), drop = x->dropout > 0;
    double s = (double)x->seq, b = m->batch, h = (double)x->hidden, a = (double)x->heads;
    double sbh = s * b * h, sbf = s * b * (double)x->ffn, t = tp > 1 ? tp : 1;
    double block, attn, kept, ends;
    if (x->layers <= 0 || m->batch <= 0)
        return 0;
    /* per block, whole on every GPU: the inputs of both norms and of the QKV
     * and MLP-in projections (E each), two dropout masks (1 byte); split
     * over the T tensor-parallel GPUs (eq. T1): Q and the output
     * projection's input (E each), K and V (kv_heads / heads of that), the
     * MLP's inner tensors (GELU in and out, or gate, up, SiLU and product) */
    block = sbh * (4 * E + 2 * drop) +
            (sbh * E * (2 + 2 * (double)x->kv_heads / a) + sbf * E * (x->swiglu ? 4 : 2)) / t;
    /* softmax out, dropout out and mask over a x s x s per sample, split by
     * heads; fused attention keeps only its fp32 log-sum-exp per head and
     * token */
    attn = (flash_attn ? 4 * a * s * b : a * s * s * b * (E * (1 + drop) + drop)) / t;
    /* recomputation keeps each block's input and rebuilds one block at a
     * time, whose own saved tensors include that input */
    kept = recompute ? (double)(x->layers - 1) * E * sbh + block + attn
                     : (double)x->layers * (block + attn);
    /* embedding dropout mask, final norm's input; an LM head's input and its
     * fp32 log-softmax over the vocabulary (split by vocabulary under
     * tensor parallelism) */
    ends = sbh * (drop + E) + (x->vocab > 0 ? E * sbh + 4 * s * b * (double)x->vocab / t : 0);
    return kept + ends;
}

/* Eq. M1's terms under o->framework, n GPUs sharing one copy of the
 * sharded states: out->weights, grads, optim, buffers and gathered, for
 * the whole model on one GPU (no offload, no tensor parallelism yet).
 * 0, or -1 when out of memory. */
static int framework_states(const cp_predictor *p, const cp_predict_opts *o, double n,
                            cp_mem *out)
{
    double psi = (double)p->model->params, g = p->elem_bytes; /* bytes of a weight, a gradient */
    double K = cp_optimizer_bytes(o->optimizer, p->elem_bytes);
    double cap = cp_zero_bucket_bytes(p, o);
    switch (o->framework) {
    case CP_FW_DDP:
        out->weights = psi * g;
        out->grads = psi * g;
        out->optim = psi * K;
        out->buffers = o->bucket_view ? 0 : psi * g; /* the flat buckets */
        break;
    case CP_FW_MIRRORED: /* the pack, reduced in place, split into new gradients */
        out->weights = psi * g;
        out->grads = psi * g;
        out->optim = psi * K;
        out->buffers = p->topo->ngpus > 1 ? psi * g : 0;
        break;
    case CP_FW_HOROVOD:
        out->weights = psi * g;
        out->grads = psi * g;
        out->optim = psi * K;
        out->buffers = least(o->fusion_mb * MIB, psi * g);
        break;
    case CP_FW_ZERO1: /* every gradient kept: reduced at the accumulation boundary */
        out->weights = psi * g;
        out->grads = psi * g;
        out->optim = psi * K / n;
        out->buffers = least(cap, psi * g);
        break;
    case CP_FW_ZERO2:
        out->weights = psi * g;
        out->grads = psi * g / n;
        out->optim = psi * K / n;
        out->buffers = least(cap, psi * g);
        break;
    case CP_FW_FSDP:
    case CP_FW_ZERO3:
        out->weights = psi * g / n;
        out->grads = psi * g / n;
        out->optim = psi * K / n;
        out->buffers = o->framework == CP_FW_ZERO3 ? least(cap, psi * g) : 0;
        /* a shard of the whole (one GPU to a shard group) is used in place */
        out->gathered = n > 1 ? cp_sharded_gathered_bytes(p, o) : 0;
        if (out->gathered < 0)
            return -1;
        break;
    }
    return 0;
}

int cp_model_states(const cp_predictor *p, const cp_predict_opts *o, cp_mem *out, cp_err *e)
{
    const cp_model *m = p->model;
    double n;
    memset(out, 0, sizeof *out);
    out->capacity = p->topo->ngpus > 0 ? p->topo->nodes[p->topo->gpus[0]].capacity_gb * 1e9 : 0;
    /* GPUs sharing one copy of the sharded states */
    n = o->framework == CP_FW_FSDP && (o->fsdp_sharding & CP_SHARD_HYBRID) ? p->coll.per_host
                                                                            : p->topo->ngpus;
    if (n < 1)
        n = 1;
    if (framework_states(p, o, n, out))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (o->offload == CP_OFFLOAD_POOL) { /* eq. PL8: states, and ZeRO-3/FSDP shards, pooled */
        out->pooled = out->optim;
        if (o->framework == CP_FW_ZERO3 || o->framework == CP_FW_FSDP) {
            out->pooled += out->weights;
            out->weights = 0;
        }
    }
    if (o->offload)
        out->optim = 0; /* the optimizer states live in host memory (eq. Z6) */
    out->states = out->weights + out->grads + out->optim + out->buffers + out->gathered;
    if (o->activation_gb > 0) { /* measured beats estimated */
        out->activations = o->activation_gb * 1e9;
    } else {
        out->activations = cp_activation_bytes(m, o->act_bytes, 1, o->recompute,
                                               o->flash_attn);
        out->act_estimated = out->activations > 0;
    }
    out->total = out->states + out->activations;
    out->max_batch = -1;
    if (out->activations > 0 && m->batch > 0 && out->capacity > 0) {
        double per_sample = out->activations / m->batch, room = out->capacity - out->states;
        out->max_batch = room > 0 ? floor(room / per_sample) : 0;
    }
    return CP_OK;
}
