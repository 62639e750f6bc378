/*
 * ops.h - every kernel and every tensor-parallel collective of one
 * transformer block, and of the embedding and the LM head, for one
 * micro-batch on one GPU of a layout: GEMMs with their shapes, FLOPs and
 * bytes, attention's core as FlashAttention or eager attention runs it,
 * the memory-bound work (norms, activations, dropout, residuals, rotary,
 * FP8 casts) with its bytes, and the TP and CP communication with its
 * bytes and group (docs/model.md, eq. L1-L6).
 *
 * The lists follow Megatron-Core's TransformerLayer in order: forward
 *
 *     norm1 [AG] qkv rope attention proj [RS|AR] residual
 *     norm2 [AG] fc1 activation fc2 [RS|AR] residual
 *
 * (AG/RS with sequence parallelism, AR without), and backward in reverse,
 * each GEMM as its data-gradient and weight-gradient GEMMs.  Counting only:
 * times come from gemm.h and groups.h.  No allocation.
 */
#ifndef CP_LLM_OPS_H
#define CP_LLM_OPS_H

#include "llm/layout.h"

typedef enum cp_step_kind {
    CP_ST_GEMM,  /* a GEMM: out m x n, inner k, `batch` of them (batched GEMM) */
    CP_ST_ATTN,  /* FlashAttention: batch = b x heads, m query and n key tokens,
                    k head width; `causal` the fraction of score blocks computed */
    CP_ST_MEM,   /* memory-bound: `bytes` through HBM */
    CP_ST_COMM   /* a collective of `comm_bytes` on a group */
} cp_step_kind;

typedef enum cp_comm_kind { CP_CM_AR, CP_CM_RS, CP_CM_AG, CP_CM_P2P, CP_CM_A2A } cp_comm_kind;

/* Step flags. */
#define CP_SF_SEL 1      /* attention's core: what selective recompute rebuilds */
#define CP_SF_FP8 2      /* a GEMM at the FP8 tensor rate */
#define CP_SF_WGRAD 4    /* a weight-gradient GEMM (the TP collective before it in
                            backward can hide under it: Megatron's async all-reduce) */
#define CP_SF_HIDE 8     /* a collective a framework can overlap with the GEMM after it */
#define CP_SF_BWD 16     /* a backward GEMM (data or weight gradient) */

typedef struct cp_step {
    cp_step_kind kind;
    const char *name;        /* static: "qkv", "fc1.dgrad", "norm1", "tp.ag" ... */
    double m, n, k, batch;   /* GEMM and attention shapes */
    double flops;            /* executed FLOPs, all batch copies */
    double bytes;            /* HBM bytes read and written */
    double causal;           /* attention: fraction of the m x n blocks computed */
    cp_comm_kind comm;
    cp_group_kind group;
    double comm_bytes;       /* the collective's buffer (nccl-tests' size) */
    int flags;
} cp_step;

#define CP_OPS_MAX 96

typedef struct cp_steps {
    cp_step s[CP_OPS_MAX];
    int n;
} cp_steps;

/* The element sizes a layout computes with: activations and weights in 16
 * bits, FP8 GEMM operands in 8, gradients accumulated in fp32 or 16 bits. */
typedef struct cp_elem {
    double act;      /* bytes of an activation element (2) */
    double gemm_in;  /* bytes of a GEMM operand: 1 under FP8, else 2 */
    double grad;     /* bytes of a gradient element in the reduction buffers */
} cp_elem;

void cp_layout_elem(const cp_layout *l, cp_elem *el);

/* One block's forward and backward on one GPU for one micro-batch. */
void cp_block_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_block_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);

/* The input side (embedding lookup, position, dropout; its vocabulary-
 * parallel reduction) and the output side (final norm, logits GEMM,
 * vocabulary-parallel cross-entropy), forward and backward. */
void cp_embed_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_embed_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_head_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_head_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);

/* Sums over a list. */
double cp_steps_flops(const cp_steps *s);
double cp_steps_bytes(const cp_steps *s);

/* Parameters of one block and of the embedding, output layer and final norm
 * (the whole model's: no division by TP).  Elements. */
double cp_block_params(const cp_xformer *x);
double cp_embed_params(const cp_xformer *x);   /* token (+ position) table */
double cp_head_params(const cp_xformer *x);    /* final norm + LM head when untied */
double cp_model_params(const cp_xformer *x);

/* Megatron's model FLOPs of one sequence forward + backward (no recompute:
 * num_floating_point_operations in megatron/training/training.py, every
 * GEMM counted, causal attention at half the scores as its newer versions
 * count it when `causal_half`), for MFU. */
double cp_model_flops_per_seq(const cp_xformer *x, int64_t seq, int causal_half);

#endif
