/*
 * memory.h - how much GPU memory a framework's model states take per GPU
 * (docs/model.md, eq. M1): weights, gradients, optimizer states, the
 * framework's communication buffers and the parameters it gathers whole.
 *
 * The ZeRO paper's accounting (Rajbhandari et al., SC'20, section 3.1): Psi
 * parameters of w bytes each, gradients of g bytes, and K bytes of
 * optimizer state per parameter: Adam keeps two fp32 moments (8 bytes) and,
 * under mixed precision (gradients narrower than 4 bytes), an fp32 master
 * copy (4 more), K = 12; SGD with momentum one moment (4, or 8 with the
 * master copy).  Activations depend on the batch and sequence length the
 * model file does not give: they are counted only when the user gives
 * them (--activation-gb, measured on one GPU), otherwise the figure is a
 * floor on what a job needs, which tells whether a configuration cannot
 * fit.
 *
 * Ownership: nothing is allocated that outlives a call.
 */
#ifndef CP_MEMORY_H
#define CP_MEMORY_H

#include "predict/predict.h"

typedef struct cp_mem {
    double weights;   /* bytes per GPU: parameters (or their shard) */
    double grads;     /* gradients (or their shard) */
    double optim;     /* optimizer states (or their shard) */
    double buffers;   /* DDP buckets, Horovod's fusion buffer, DeepSpeed's reduce bucket */
    double gathered;  /* parameters and gradients held whole beyond the shard (FSDP, ZeRO-3) */
    double states;    /* the five above */
    double activations; /* what the user gave (o->activation_gb), 0 unknown */
    double total;     /* states + activations */
    double capacity;  /* the GPU's memory, bytes (its capacity_gb); 0 unknown */
} cp_mem;

/* Optimizer state bytes per parameter (K above) for o->optimizer with
 * gradients of grad_bytes. */
double cp_optimizer_bytes(int optimizer, int grad_bytes);

/* Eq. M1 for the predictor's model, machine and framework (o).  CP_OK or
 * CP_EINTERNAL (out of memory). */
int cp_model_states(const cp_predictor *p, const cp_predict_opts *o, cp_mem *out, cp_err *e);

#endif
