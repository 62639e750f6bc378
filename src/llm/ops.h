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
#define CP_SF_GROUPED 32 /* a grouped GEMM: `batch` experts' GEMMs of m x n x k each, one
                            launch per expert (docs/model.md eq. E3) */

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

/* The halves of a block, appended to `out`: attention (norm1 .. residual1)
 * and the MLP (norm2 .. residual2); cp_block_fwd is attention then MLP,
 * cp_block_bwd the MLP's backward then attention's.  A mixture-of-experts
 * block (moe.h) puts its own MLP in place of the dense one. */
void cp_block_attn_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_block_mlp_fwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_block_mlp_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);
void cp_block_attn_bwd(const cp_xformer *x, const cp_layout *l, cp_steps *out);

/* Attention's core as the layout runs it (FlashAttention or eager), with
 * query/key head width d, value head width dv and g key/value heads per
 * GPU in place of the model's (multi-head latent attention's, mla.h);
 * forward or backward, appended to `out`. */
void cp_attn_core(const cp_xformer *x, const cp_layout *l, double d, double dv, double g,
                  int bwd, cp_steps *out);

/* Appending to a list, for the block variants of other files: a step (its
 * batch 1, the rest zero); a GEMM out[m x n] = A[m x k] B[k x n] of 2 m n k
 * FLOPs reading A and B at `ein` bytes and writing C at `eout`; a
 * memory-bound kernel of `bytes`; a collective of `bytes` on group g.  A
 * full list keeps its last step (the lists are sized for every variant). */
cp_step *cp_steps_add(cp_steps *o, cp_step_kind k, const char *name);
void cp_steps_gemm(cp_steps *o, const char *name, double m, double n, double k, double ein,
                   double eout, int flags);
void cp_steps_mem(cp_steps *o, const char *name, double bytes, int flags);
void cp_steps_comm(cp_steps *o, const char *name, cp_comm_kind k, cp_group_kind g,
                   double bytes, int flags);

/* A linear layer of layout l, `batch` of them (a grouped GEMM with
 * CP_SF_GROUPED): forward out[m x n] = in[m x k] W[k x n], its operands at
 * the layout's GEMM element size with CP_SF_FP8, else in 16 bits; and its
 * backward, the data gradient (m x k, inner n) then the weight gradient
 * (k x n, inner m) accumulated into the main gradient, as ops.c's own. */
void cp_steps_linear(cp_steps *o, const char *name, double m, double n, double k, double batch,
                     const cp_layout *l, int flags);
void cp_steps_linear_bwd(cp_steps *o, const char *dname, const char *wname, double m, double n,
                         double k, double batch, const cp_layout *l, int flags);

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
