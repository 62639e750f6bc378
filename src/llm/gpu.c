/*
 * gpu.c - kernel times on one GPU (see gpu.h; docs/model.md eq. K1-K4).
 *
 * A GEMM runs as output tiles of tm x tn, one per streaming multiprocessor
 * at a time; cuBLAS picks the tile (and a split of the inner dimension when
 * there are fewer tiles than SMs) that finishes first.  A tile of
 * intensity tm tn / (tm + tn) below `ai_crit` cannot feed its tensor cores
 * (eq. K1); every tile pays a prologue and epilogue worth k0 inner
 * elements; the last wave may leave SMs idle (eq. K2).  No GEMM beats the
 * time to move its operands through HBM.
 */
#include <math.h>
#include <string.h>

#include "llm/gpu.h"

/* Hopper's mixture-of-experts constants (tools/fit-llm on the three MoE
 * rows of Megatron-Bridge 25.09, docs/calibration.md "Mixture-of-experts
 * rows"): a grouped GEMM's cost per expert, us, and NCCL's all-to-all's
 * fraction of the links' rates. */
#define GROUP_US 29.76
#define A2A_EFF 0.7889

/* The fitted constants per generation (docs/calibration.md, "Large-model
 * compute", and tools/fit-llm: the rows each is fitted on). */
static const cp_gpu_calib calibs[] = {
    /* gen      fitted on                      eff16 eff8  ai   k0  attn bwd  mem  kern host
     *                                                                       ctas group a2a
     * group_us and a2a_eff: fitted on Hopper's mixture-of-experts rows, borrowed by the
     * others (no Ampere MoE row) */
    {"ampere", "vTrain 1,440 A100 runs; Narayanan Table 1; Korthikanti Table 4",
     0.75, 0.0, 31.87, 38.9, 0.75, 0.8752, 0.85, 29.8, 70.37, 16, GROUP_US, A2A_EFF},
    {"hopper", "Megatron-LM H100 table; NeMo 24.07; Megatron-Bridge 25.09 dense rows; "
               "group_us and a2a_eff on the Megatron-Bridge 25.09 MoE rows",
     0.6661, 0.52, 64, 64, 1.124, 1.0, 0.5915, 5.944, 8.0, 24, GROUP_US, A2A_EFF},
    {"generic", "none: the Ampere constants on a GPU the fit never saw",
     0.80, 0.65, 64, 64, 0.75, 1.0, 0.85, 3.0, 8.0, 16, GROUP_US, A2A_EFF},
};

/* Model-string prefixes of each generation. */
static const struct {
    const char *prefix;
    int calib;   /* index into calibs */
    int sms;     /* SMs of the part when the topology does not say */
} parts[] = {
    {"A100", 0, 108}, {"A800", 0, 108}, {"A30", 0, 56}, {"A10", 0, 72},
    {"H100-PCIe", 1, 114}, {"H100", 1, 132}, {"H800", 1, 132}, {"H200", 1, 132},
    {"H20", 1, 78},
};

const cp_gpu_calib *cp_gpu_calib_for(const char *model, int *calibrated)
{
    size_t i;
    for (i = 0; model && i < sizeof parts / sizeof *parts; i++)
        if (strncmp(model, parts[i].prefix, strlen(parts[i].prefix)) == 0) {
            *calibrated = 1;
            return &calibs[parts[i].calib];
        }
    *calibrated = 0;
    return &calibs[2];
}

/* SMs of a part the topology gives no count for: the table's, else 108
 * (the A100's, whose constants the generic calibration uses). */
static int default_sms(const char *model)
{
    size_t i;
    for (i = 0; model && i < sizeof parts / sizeof *parts; i++)
        if (strncmp(model, parts[i].prefix, strlen(parts[i].prefix)) == 0)
            return parts[i].sms;
    return 108;
}

int cp_gpu_from_topo(const cp_topo *t, cp_gpu *g, cp_err *e)
{
    const cp_node *n;
    memset(g, 0, sizeof *g);
    if (t->ngpus < 1)
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, NULL, "the topology has no GPU");
    n = &t->nodes[t->gpus[0]];
    if (n->tflops_fp16 <= 0 || n->mem_gbs <= 0)
        return cp_fail_at(e, CP_EINPUT, t->src_path, n->src_line, 0, NULL,
                          "gpu \"%s\": a large-model prediction needs its tflops_fp16 (dense "
                          "16-bit peak) and mem_gbs (HBM bandwidth)", n->id);
    g->model = n->model ? n->model : n->id;
    g->peak16 = n->tflops_fp16 * 1e12;
    g->peak8 = n->tflops_fp8 * 1e12;
    g->hbm = n->mem_gbs * 1e9;
    g->capacity = n->capacity_gb * 1e9;
    g->sms = n->sms > 0 ? n->sms : default_sms(n->model);
    g->cal = *cp_gpu_calib_for(n->model, &g->calibrated);
    return CP_OK;
}

/* Candidate tiles (CUTLASS / cuBLAS shapes on Ampere and Hopper). */
static const int tile_m[] = {256, 128, 128, 128, 64, 64};
static const int tile_n[] = {128, 256, 128, 64, 128, 64};
#define NTILES (int)(sizeof tile_m / sizeof *tile_m)
#define MAX_SPLIT 16

/* The fastest tiling of a GEMM, in us of tensor-core time (eq. K1, K2). */
static double gemm_core_us(const cp_gpu *g, double m, double n, double k, double batch,
                           double peak, double eff)
{
    double per_sm = peak / g->sms, best = HUGE_VAL;
    int i, s;
    for (i = 0; i < NTILES; i++) {
        double tm = tile_m[i], tn = tile_n[i], ai = tm * tn / (tm + tn);
        double te = eff * (ai < g->cal.ai_crit ? ai / g->cal.ai_crit : 1);
        double tiles = ceil(m / tm) * ceil(n / tn) * batch;
        for (s = 1; s <= MAX_SPLIT; s++) {
            double waves, t;
            if (s > 1 && (tiles * (s - 1) >= g->sms || k / s < 128))
                break; /* split only to fill idle SMs, never below 128 deep */
            waves = ceil(tiles * s / g->sms);
            t = waves * 2 * tm * tn * (k / s + g->cal.k0) / (per_sm * te) * 1e6;
            if (s > 1) /* the partial sums, written and reduced in fp32 */
                t += s * m * n * batch * 8 / (g->hbm * g->cal.mem_eff) * 1e6;
            if (t < best)
                best = t;
        }
    }
    return best;
}

double cp_gpu_overlap_loss(const cp_gpu *g)
{
    double f = g->sms > 0 ? (double)g->cal.nccl_ctas / g->sms : 0;
    return f < 1 ? f : 1;
}

double cp_gpu_gemm_eff(const cp_gpu *g, double m, double n, double k, double batch, int fp8)
{
    double peak = fp8 && g->peak8 > 0 ? g->peak8 : g->peak16;
    double eff = fp8 && g->peak8 > 0 ? g->cal.eff8 : g->cal.eff16;
    double us = gemm_core_us(g, m, n, k, batch, peak, eff);
    return us > 0 ? 2 * m * n * k * batch / (us * 1e-6) / peak : 0;
}

/* FlashAttention (eq. K3): one thread block per 128 queries of a head, its
 * work the FLOPs of those queries, at attn_eff of the GEMM efficiency; the
 * blocks run in waves over the SMs. */
static double attn_us(const cp_gpu *g, const cp_step *s)
{
    double ctas = s->batch * ceil(s->m / 128), rate = g->peak16 * g->cal.eff16 * g->cal.attn_eff;
    double waves = ceil(ctas / g->sms), full = ctas / g->sms;
    return s->flops / rate * (waves / full) * 1e6;
}

double cp_gpu_step_us(const cp_gpu *g, const cp_step *s)
{
    double mem_us = s->bytes / (g->hbm * g->cal.mem_eff) * 1e6, core = 0;
    int fp8 = (s->flags & CP_SF_FP8) && g->peak8 > 0;
    switch (s->kind) {
    case CP_ST_GEMM:
        if (s->flops <= 0)
            return 0;
        core = gemm_core_us(g, s->m, s->n, s->k, s->batch, fp8 ? g->peak8 : g->peak16,
                            (fp8 ? g->cal.eff8 : g->cal.eff16) *
                                (s->flags & CP_SF_BWD ? g->cal.bwd_eff : 1));
        /* a grouped GEMM (eq. E3): the experts' tiles share the waves, and
         * each expert's GEMM costs group_us of its own */
        if (s->flags & CP_SF_GROUPED)
            core += s->batch * g->cal.group_us;
        break;
    case CP_ST_ATTN:
        if (s->flops <= 0)
            return 0;
        core = attn_us(g, s);
        break;
    case CP_ST_MEM:
        if (s->bytes <= 0)
            return 0;
        break;
    default:
        return 0;
    }
    return (core > mem_us ? core : mem_us) + g->cal.kernel_us;
}
