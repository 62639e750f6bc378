/*
 * footprint.h - device memory per GPU of a large-model layout: weights,
 * gradients and optimizer states as each framework shards them, the
 * activations in flight under the pipeline schedule (Korthikanti et al.'s
 * per-layer sizes with TP, SP, CP, FP8 copies and recomputation), the
 * logits, communication buffers and the runtime's reserve, for the stage
 * that needs the most; and the verdict against the GPU's capacity
 * (docs/model.md eq. M3-M6).
 *
 * Pure arithmetic; no allocation.
 */
#ifndef CP_LLM_FOOTPRINT_H
#define CP_LLM_FOOTPRINT_H

#include "llm/ops.h"

typedef struct cp_llm_mem {
    double weights, grads, optim;   /* bytes per GPU of the worst stage */
    double activations;             /* in flight under the schedule */
    double logits;                  /* the LM head's logits and cross-entropy buffers */
    double buffers;                 /* gathered parameters (ZeRO-3/FSDP), communication */
    double reserve;                 /* CUDA context, NCCL, workspaces, fragmentation */
    double total;                   /* on the GPU */
    double offloaded;               /* placed in a memory tier beyond the GPU (offload.h) */
    double offloaded_act;           /* of which activations (the rest: optimizer states) */
    double per_layer_act;           /* one block's activations for one micro-batch */
    int stage;                      /* the stage these figures are for */
    int inflight;                   /* micro-batch chunks in flight on it */
} cp_llm_mem;

/* Parameters (elements, whole model: before TP) held by stage r: its
 * chunks' blocks, the embedding on the first, the final norm and output
 * layer on the last (a tied output layer is a copy there when pp > 1). */
double cp_stage_params(const cp_xformer *x, const cp_layout *l, int r);

/* Activation bytes one block keeps for backward for one micro-batch on one
 * GPU under recomputation rc (eq. M3). */
double cp_block_act_bytes(const cp_xformer *x, const cp_layout *l, cp_recompute rc);

/* Micro-batch chunks stage r holds at its peak under the schedule (1F1B:
 * min(p - r, m); interleaved: Megatron's warm-up + 1, at most m v). */
int cp_inflight_chunks(const cp_layout *l, int r);

/* The memory of every stage under recomputation rc (never CP_RC_AUTO);
 * out gets the stage that needs the most. */
void cp_llm_memory(const cp_xformer *x, const cp_layout *l, cp_recompute rc, cp_llm_mem *out);

/* The runtime's fixed reserve per GPU, bytes (eq. M6): CUDA context, NCCL
 * communicators and cuBLAS workspaces. */
#define CP_RUNTIME_RESERVE_BYTES 3.0e9
/* The caching allocator's fragmentation, a fraction of what it holds. */
#define CP_FRAGMENTATION 0.05

#endif
