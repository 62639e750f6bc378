/*
 * memory.c - model-state memory per GPU under each framework (see
 * memory.h and docs/model.md, eq. M1).
 */
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

int cp_model_states(const cp_predictor *p, const cp_predict_opts *o, cp_mem *out, cp_err *e)
{
    const cp_model *m = p->model;
    double psi = 0, g = p->elem_bytes; /* bytes of a weight and of a gradient alike */
    double K = cp_optimizer_bytes(o->optimizer, p->elem_bytes), n;
    double cap = cp_zero_bucket_bytes(p, o);
    int k;
    memset(out, 0, sizeof *out);
    for (k = 0; k < m->ntensors; k++)
        psi += (double)m->tensors[k].numel;
    out->capacity = p->topo->ngpus > 0 ? p->topo->nodes[p->topo->gpus[0]].capacity_gb * 1e9 : 0;
    /* GPUs sharing one copy of the sharded states */
    n = o->framework == CP_FW_FSDP && (o->fsdp_sharding & CP_SHARD_HYBRID) ? p->coll.per_host
                                                                            : p->topo->ngpus;
    if (n < 1)
        n = 1;
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
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        break;
    }
    out->states = out->weights + out->grads + out->optim + out->buffers + out->gathered;
    out->activations = o->activation_gb > 0 ? o->activation_gb * 1e9 : 0;
    out->total = out->states + out->activations;
    return CP_OK;
}
