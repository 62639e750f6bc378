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
 * master copy).  Activations are what the user measured (--activation-gb),
 * or, for a model file that gives its transformer dimensions and batch,
 * estimated by eq. M2 (Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models", MLSys 2023, section 4.1,
 * generalised to the element size, the MLP, grouped-query attention, fused
 * attention and full recomputation); otherwise they are not counted and the
 * figure is a floor on what a job needs, which tells whether a
 * configuration cannot fit.
 *
 * Ownership: nothing is allocated that outlives a call.
 */
#ifndef CP_MEMORY_H
#define CP_MEMORY_H

#include "predict/predictor.h"

typedef struct cp_mem {
    double weights;   /* bytes per GPU: parameters (or their shard) */
    double grads;     /* gradients (or their shard) */
    double optim;     /* optimizer states (or their shard) */
    double buffers;   /* DDP buckets, Horovod's fusion buffer, DeepSpeed's reduce bucket */
    double gathered;  /* parameters and gradients held whole beyond the shard (FSDP, ZeRO-3) */
    double states;    /* the five above */
    double pooled;    /* --offload pool: bytes per GPU held in the CXL pool instead */
    double activations; /* what the user gave (o->activation_gb) or eq. M2, 0 unknown */
    int act_estimated;  /* 1 when activations is eq. M2's estimate */
    double total;     /* states + activations */
    double capacity;  /* the GPU's memory, bytes (its capacity_gb); 0 unknown */
    double max_batch; /* the largest per-GPU micro-batch whose activations fit beside
                         the states (activations grow with the batch); -1 unknown */
} cp_mem;

/* Optimizer state bytes per parameter (K above) for o->optimizer with
 * gradients of grad_bytes. */
double cp_optimizer_bytes(int optimizer, int grad_bytes);

/* Eq. M2: bytes of activations one micro-batch keeps for backward on one
 * GPU, from the model's transformer dimensions and batch, activation
 * elements of elem_bytes (0: the model's dtype), blocks split over tp GPUs
 * (eq. T1; 0 or 1: none), with every block recomputed or not and fused
 * attention or not; 0 when the model does not give them. */
double cp_activation_bytes(const cp_model *m, int elem_bytes, int tp, int recompute,
                           int flash_attn);

/* Eq. M1 for the predictor's model, machine and framework (o).  CP_OK or
 * CP_EINTERNAL (out of memory). */
int cp_model_states(const cp_predictor *p, const cp_predict_opts *o, cp_mem *out, cp_err *e);

#endif
