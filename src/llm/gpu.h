/*
 * gpu.h - how long one kernel takes on one GPU: GEMMs at a shape-dependent
 * efficiency (tiles, waves over the SMs, split-K, the inner dimension's
 * prologue), FlashAttention at its own efficiency, memory-bound work from
 * bytes at HBM bandwidth, and the fixed cost of every kernel, on the GPU
 * and on the host that launches it (docs/model.md eq. K1-K4).  The few
 * constants of each GPU generation are fitted on ../shared/data/llm/
 * (docs/calibration.md, "Large-model compute"); the peaks, SMs and HBM
 * bandwidth are the topology's datasheet figures.
 *
 * Pure functions of a cp_gpu; no allocation.
 */
#ifndef CP_LLM_GPU_H
#define CP_LLM_GPU_H

#include "core/err.h"
#include "llm/ops.h"
#include "topo/topo.h"

/* Fitted per GPU generation (docs/calibration.md). */
typedef struct cp_gpu_calib {
    const char *gen;      /* "ampere", "hopper", "generic" */
    const char *fitted_on; /* the rows, for the output and docs */
    double eff16;         /* a large 16-bit GEMM's fraction of the dense peak */
    double eff8;          /* a large FP8 GEMM's fraction of the FP8 peak */
    double ai_crit;       /* tile intensity (tm tn / (tm + tn)) at which a tile
                             feeds its tensor cores at full rate */
    double k0;            /* a tile's prologue and epilogue, in inner-dimension elements */
    double attn_eff;      /* FlashAttention's fraction of the 16-bit peak on long
                             sequences, relative to eff16 */
    double bwd_eff;       /* the backward GEMMs' (data and weight gradients: transposed
                             operands, a long inner dimension) efficiency relative to
                             forward's */
    double mem_eff;       /* fraction of the HBM bandwidth memory-bound kernels reach */
    double kernel_us;     /* GPU time of a kernel beyond its work (ramp-up, tail) */
    double host_us;       /* host time to dispatch one kernel (framework + launch) */
    int nccl_ctas;        /* thread blocks an NCCL collective keeps busy (one SM each), so a
                             kernel overlapped by one runs on the other SMs (eq. K5):
                             24 on Hopper (TUNING-FACTS.md A6: "24 coll channels"), 16 on
                             Ampere (twice its 8 search channels, connect.cc) */
    double group_us;      /* a grouped GEMM's cost per expert beyond its tiles (eq. E3): each
                             expert's GEMM launched, ramped and drained on its own */
    double a2a_eff;       /* NCCL's all-to-all (grouped sends to every peer, Megatron's
                             all-to-all dispatcher) as a fraction of the links' calibrated
                             rates (eq. E7); DeepEP's kernels reach the rates */
} cp_gpu_calib;

typedef struct cp_gpu {
    const char *model;    /* borrowed from the topology */
    double peak16;        /* dense 16-bit FLOP/s */
    double peak8;         /* dense FP8 FLOP/s, 0 without FP8 */
    double hbm;           /* bytes/s */
    double capacity;      /* bytes of device memory */
    int sms;
    cp_gpu_calib cal;     /* the generation's, possibly overridden */
    int calibrated;       /* 0: a generation the fit never saw (generic constants) */
} cp_gpu;

/* The GPU of topology t (its first GPU: hosts are alike): peaks from
 * tflops_fp16 / tflops_fp8, HBM from mem_gbs, SMs from `sms` (or the
 * generation's count), capacity from capacity_gb; CP_EINPUT naming the
 * file when it lacks the 16-bit peak or the HBM bandwidth. */
int cp_gpu_from_topo(const cp_topo *t, cp_gpu *g, cp_err *e);

/* The calibration of a GPU model string ("A100-SXM4-80GB" -> ampere). */
const cp_gpu_calib *cp_gpu_calib_for(const char *model, int *calibrated);

/* Time in us of one step of kind GEMM, ATTN or MEM on one GPU, without the
 * host's dispatch (which the caller bounds per pass: cp_gpu_pass_us). */
double cp_gpu_step_us(const cp_gpu *g, const cp_step *s);

/* The fraction of a kernel's time lost while an NCCL collective overlaps it
 * (eq. K5): the collective's thread blocks over the SMs. */
double cp_gpu_overlap_loss(const cp_gpu *g);

/* A GEMM's efficiency (achieved / peak) at its shape, for --explain and tests. */
double cp_gpu_gemm_eff(const cp_gpu *g, double m, double n, double k, double batch, int fp8);

#endif
