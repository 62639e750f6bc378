/*
 * layout.h - a large-model parallel layout: how tensor (TP, with sequence
 * parallelism), context (CP), data (DP) and pipeline (PP, with VP virtual
 * stages per rank) parallelism divide a transformer and its batch over the
 * GPUs, and which GPUs each communication group holds.
 *
 * Ranks follow Megatron-Core's order (parallel_state.py): tensor-parallel
 * ranks are adjacent, then context, then data, then pipeline, so rank
 *
 *     r = tp_i + TP (cp_i + CP (dp_i + DP pp_i))
 *
 * and rank r is GPU r mod G of host r / G on hosts of G GPUs.  A group of
 * one kind (the TP group, the DP group, ...) is the set of ranks that
 * differ only in that index; every group of a kind has the same shape (GPUs
 * per host, hosts spanned), and `concurrent` groups of that kind share
 * each host's links when they all communicate at once (docs/model.md,
 * "Layouts").
 *
 * Everything here is arithmetic on the layout; nothing touches the topology
 * beyond its GPU and host counts.  No allocation.
 */
#ifndef CP_LLM_LAYOUT_H
#define CP_LLM_LAYOUT_H

#include <stdint.h>

#include "core/err.h"
#include "model/model.h"

/* Memory tiers a layout may place states in (offload.h). */
#define CP_LAYOUT_TIER_GPU 0
#define CP_LAYOUT_TIER_HOST 1
#define CP_LAYOUT_TIER_POOL 2

/* The training framework whose layout, overlap and sharding rules apply
 * (docs/model.md, "Frameworks"). */
typedef enum cp_llm_fw {
    CP_LLM_MEGATRON,  /* Megatron-Core: SP, distributed optimizer, overlapped grad
                         reduce-scatter and param all-gather */
    CP_LLM_FSDP,      /* FSDP2 with TP and PP as torchtitan composes them */
    CP_LLM_DEEPSPEED, /* DeepSpeed ZeRO-1/2/3 with its pipeline engine */
    CP_LLM_FWS
} cp_llm_fw;

typedef enum cp_recompute {
    CP_RC_NONE, CP_RC_SELECTIVE, CP_RC_FULL, CP_RC_AUTO
} cp_recompute;

typedef enum cp_precision { CP_PREC_BF16, CP_PREC_FP16, CP_PREC_FP8 } cp_precision;

/* How attention's core runs: FlashAttention (no s x s tensor in memory,
 * causal blocks skipped) or eager (scores, softmax and dropout materialised,
 * as Megatron-LM ran it before 2023). */
typedef enum cp_attn { CP_ATTN_FLASH, CP_ATTN_EAGER } cp_attn;

/* Communication group kinds.  The expert groups (mixture-of-experts
 * layers, docs/model.md eq. E1) re-divide the TP x CP x DP ranks of a
 * pipeline stage as ETP x EP x EDP: CP_G_EP exchanges tokens (the
 * all-to-all), CP_G_ETP splits each expert's matrices, CP_G_EDP reduces
 * the experts' gradients. */
typedef enum cp_group_kind {
    CP_G_TP, CP_G_CP, CP_G_DP, CP_G_DPCP, CP_G_PP, CP_G_EP, CP_G_ETP, CP_G_EDP, CP_G_KINDS
} cp_group_kind;

/* How a mixture-of-experts layer moves tokens to its experts: Megatron-
 * Core's all-to-all dispatcher (a copy per token and chosen expert) or
 * DeepEP (the flex dispatcher: a copy per token and destination GPU over
 * NVLink, per destination host over the network; docs/model.md eq. E6). */
typedef enum cp_moe_dispatch { CP_MOE_ALLTOALL, CP_MOE_DEEPEP } cp_moe_dispatch;

/* Which links the expert all-to-all takes across hosts: the faster of the
 * network and a CXL pool the topology has (auto), or one of them. */
typedef enum cp_moe_path { CP_A2A_AUTO, CP_A2A_NET, CP_A2A_POOL } cp_moe_path;

/* At most this many GPUs of one host in a group (the collective model's own
 * limit on hosts of one NVLink domain). */
#define CP_LAYOUT_MAX_LOCAL 256

typedef struct cp_layout {
    int tp, cp, dp, pp, vp;   /* degrees; dp 0 = GPUs / (tp cp pp) */
    int mbs, gbs;             /* micro-batch and global batch, sequences */
    int64_t seq;              /* tokens per sequence; 0 = the model's */
    int sp;                   /* sequence parallelism: 1 on, 0 off, -1 = framework's default */
    cp_recompute recompute;
    int recompute_layers;     /* full recomputation of only this many blocks of each chunk
                                 (Megatron's --recompute-method block --recompute-num-layers);
                                 0: every block */
    cp_precision precision;
    cp_attn attn;
    cp_llm_fw fw;
    int zero;                 /* ZeRO stage for deepspeed (1, 2, 3); fsdp is 3; megatron:
                                 1 with the distributed optimizer, 0 without */
    int overlap_grad;         /* reduce-scatter (all-reduce) of gradients overlapped with the
                                 last micro-batch's backward; -1 = framework's default */
    int overlap_param;        /* parameter all-gather overlapped with forward; -1 default */
    int tp_overlap;           /* TP communication overlapped with GEMMs (Transformer
                                 Engine userbuffers); -1 = off */
    int grad_fp32;            /* gradients kept and reduced in fp32 (Megatron's main_grad);
                                 -1 = framework's default */
    int tp_span_hosts;        /* 1: the user allows a TP group wider than a host */
    int offload_opt;          /* optimizer states and master weights: CP_LAYOUT_TIER_* */
    int offload_act;          /* saved activations moved out in forward, fetched back for
                                 backward (instead of recomputing): CP_LAYOUT_TIER_* */
    int fp8_params;           /* FP8 GEMM weights kept in FP8 (Megatron's --fp8-param-gather):
                                 1 byte and a transposed copy instead of 16-bit weights and
                                 two FP8 copies; -1 = off */
    /* mixture of experts (docs/model.md, "Mixture of experts"): */
    int ep;                   /* expert-parallel degree (1: every GPU holds every expert) */
    int etp;                  /* expert tensor-parallel degree; 0 = tp (Megatron-Core's
                                 default) */
    double moe_imbalance;     /* the busiest expert's tokens over the mean (1: balanced, as
                                 the force-balanced benchmark runs are) */
    int moe_overlap;          /* the all-to-all overlapped with the other micro-batch's
                                 compute (Megatron's 1F1B all-to-all overlap); -1 = off */
    cp_moe_dispatch moe_dispatch;
    cp_moe_path moe_path;
    /* derived by cp_layout_resolve: */
    int gpus;                 /* tp cp dp pp */
    int per_host;             /* GPUs per host of the machine */
    int hosts;
    int micro;                /* micro-batches per pipeline per iteration: gbs / (mbs dp) */
    int64_t layers_per_chunk; /* blocks per model chunk: L / (pp vp), or (L + 2) / (pp vp)
                                 when the embedding and the loss count as layers */
    int ends_in_split;        /* 1: the first and the last chunk hold one block fewer, the
                                 embedding and the loss standing for them (Megatron's
                                 account_for_embedding/loss_in_pipeline_split) */
    int edp;                  /* expert data-parallel degree: tp cp dp / (etp ep); 0 for a
                                 dense model (no expert groups) */
} cp_layout;

/* Megatron-Core's defaults: TP = PP = CP = VP = 1, mbs 1, bf16, flash
 * attention, SP and overlaps as the framework sets them. */
void cp_layout_default(cp_layout *l);

const char *cp_llm_fw_name(cp_llm_fw f);     /* "megatron", "fsdp", "deepspeed" */
const char *cp_recompute_name(cp_recompute r); /* "none", "selective", "full", "auto" */
const char *cp_precision_name(cp_precision p); /* "bf16", "fp16", "fp8" */

/* Check the layout against the model and machine and fill the derived
 * fields and the framework defaults: the product of the degrees equals the
 * GPUs (dp derived when 0), the global batch divides by mbs x dp, layers by
 * pp x vp, heads and KV heads by tp, the sequence by 2 cp (cp > 1), a TP
 * group inside a host unless tp_span_hosts; with experts, ep x etp divides
 * tp x cp x dp and ep the experts, etp fits a host and divides the expert
 * FFN, and no expert option is given for a dense model.  CP_EINPUT naming the numbers
 * (no position: the numbers come from the command line). */
int cp_layout_resolve(cp_layout *l, const cp_xformer *x, int gpus, int per_host, cp_err *e);

/* Blocks in global model chunk G (0 .. pp vp - 1). */
int64_t cp_layout_chunk_layers(const cp_layout *l, int G);

/* Blocks of chunk G recomputed under recomputation rc: all of them under
 * selective (attention's core only) and full, at most recompute_layers
 * under full when that is set; none otherwise. */
int64_t cp_layout_recomputed(const cp_layout *l, cp_recompute rc, int G);

/* The expert tensor-parallel degree in force: etp, or tp when 0. */
int cp_layout_etp(const cp_layout *l);

/* Rank of the GPU with these indices (Megatron order). */
int cp_layout_rank(const cp_layout *l, int tp_i, int cp_i, int dp_i, int pp_i);

/* The shape of one group of kind k: its `size` ranks lie on `hosts` hosts,
 * `local` GPUs on each (the same local indices on every host: `idx[0..
 * local)`), and `concurrent` groups of this kind use each host at once
 * (per_host / local when every GPU of a host is in some group of this
 * kind).  `uniform` 0 when hosts hold different counts (a TP group that
 * straddles hosts unevenly): the caller refuses such a layout.  For CP_G_PP
 * the group is the pair of adjacent stages' ranks that exchange
 * activations (stage 0 and stage 1). */
typedef struct cp_group_shape {
    cp_group_kind kind;
    int size, hosts, local, concurrent, uniform;
    int idx[CP_LAYOUT_MAX_LOCAL]; /* local GPU indices on the first host */
} cp_group_shape;

void cp_layout_group(const cp_layout *l, cp_group_kind k, cp_group_shape *g);

/* 1 when every group of two or more GPUs of l (resolved) holds as many on
 * each of its hosts (what cp_groups_build requires). */
int cp_layout_uniform(const cp_layout *l);

#endif
