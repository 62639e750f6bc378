/*
 * frameworks.c - `predict --frameworks`: the same model, machine and
 * strategy under every data-parallel framework the model knows, with the
 * iteration time and the model states per GPU (eq. M1) side by side, and
 * the fastest that fits.  The question a user asks before choosing between
 * DDP, ZeRO and FSDP.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "core/units.h"
#include "cost/pool.h"
#include "plan/plan_predict.h"
#include "predict/memory.h"

typedef struct variant {
    const char *name;
    cp_framework fw;
    int sharding, offload;
} variant;

static const variant variants[] = {
    {"ddp", CP_FW_DDP, 0},
    {"horovod", CP_FW_HOROVOD, 0},
    {"zero1", CP_FW_ZERO1, 0},
    {"zero2", CP_FW_ZERO2, 0},
    {"fsdp", CP_FW_FSDP, 0},
    {"fsdp grad-op", CP_FW_FSDP, CP_SHARD_GRAD_OP},
    {"fsdp hybrid", CP_FW_FSDP, CP_SHARD_HYBRID},
    {"fsdp hybrid-grad-op", CP_FW_FSDP, CP_SHARD_HYBRID | CP_SHARD_GRAD_OP},
    {"zero3", CP_FW_ZERO3, 0},
    {"mirrored", CP_FW_MIRRORED, 0},
    {"zero2 offload", CP_FW_ZERO2, 0, 1},
    {"zero3 offload", CP_FW_ZERO3, 0, 1},
    /* machines with a CXL pool only (docs/pool.md, eq. PL8) */
    {"zero2 offload pool", CP_FW_ZERO2, 0, CP_OFFLOAD_POOL},
    {"zero3 offload pool", CP_FW_ZERO3, 0, CP_OFFLOAD_POOL},
    {"fsdp offload pool", CP_FW_FSDP, 0, CP_OFFLOAD_POOL},
};

#define NVAR (sizeof variants / sizeof variants[0])

/* The pool variants only where there is a pool to offload to. */
static int skipped(const cp_topo *t, size_t k)
{
    return variants[k].offload == CP_OFFLOAD_POOL && !cp_pool_present(t);
}

/* "yes", "no", or "?" when the GPU's memory is not known. */
static const char *fits(const cp_mem *m)
{
    return m->capacity > 0 ? (m->total <= m->capacity ? "yes" : "no") : "?";
}

/* Samples per second over all GPUs when every GPU runs the largest batch
 * that fits (mem->max_batch): forward and backward grow with the batch
 * from the model's, the communication does not.  0 when not known. */
static int throughput(const cp_model *m, const cp_topo *t, const cp_predict_opts *o,
                      const cp_mem *mem, const cp_predictor *like, cp_strategy s, double *out,
                      cp_err *e)
{
    cp_predict_opts big = *o;
    cp_predictor pr;
    cp_prediction p;
    int rc;
    *out = 0;
    if (!(mem->max_batch >= 1) || m->batch <= 0)
        return CP_OK;
    big.batch_scale = mem->max_batch / m->batch;
    if ((rc = cp_predictor_init_like(&pr, m, t, &big, like, e)))
        return rc;
    rc = cp_predict_any(&pr, s, &big, 0, 0, &p, e);
    if (rc == CP_OK && p.available && p.iteration_ms > 0)
        *out = t->ngpus * mem->max_batch / p.iteration_ms * 1e3;
    if (rc == CP_OK)
        cp_prediction_free(&p);
    cp_predictor_free(&pr);
    return rc;
}

/* The table (or CSV) of the NVAR predictions res with their model states
 * mem and best throughput thr; best and most index the fastest that fits
 * and the most samples per second (NVAR: none).  Frees res. */
static void print_frameworks(const cp_model *m, const cp_topo *t, const cp_predict_opts *base,
                             cp_strategy s, int csv, cp_prediction *res, const cp_mem *mem,
                             const double *thr, size_t best, size_t most)
{
    size_t k;
    if (csv)
        printf("framework,available,iteration_ms,exposed_comm_ms,model_states_gb,"
               "gpu_memory_gb,fits,max_batch,samples_per_s\n");
    else {
        printf("# frameworks: %s on %s (%d GPU%s), strategy %s; model states per GPU "
               "(eq. M1), %s\n",
               m->name, t->name, t->ngpus, cp_s(t->ngpus), cp_strategy_name(s),
               base->activation_gb > 0 ? "fits with the activations given"
               : mem[0].act_estimated  ? "fits with the activations estimated (eq. M2)"
                                       : "activations not counted");
        cli_calib_note(t, "# ", stdout);
        printf("%-20s %12s %11s %16s %5s %9s %10s\n", "framework", "iteration_ms",
               "exposed_ms", "model_states_gb", "fits", "max_batch", "samples/s");
    }
    for (k = 0; k < NVAR; k++) {
        const cp_prediction *p = &res[k];
        char cap[32] = "", maxb[32] = "", sps[32] = ""; /* empty when not known */
        if (skipped(t, k))
            continue;
        if (mem[k].capacity > 0)
            snprintf(cap, sizeof cap, "%.2f", mem[k].capacity / 1e9);
        if (mem[k].max_batch >= 0)
            snprintf(maxb, sizeof maxb, "%.0f", mem[k].max_batch);
        if (thr[k] > 0)
            snprintf(sps, sizeof sps, "%.1f", thr[k]);
        if (csv && p->available)
            printf("%s,1,%.4f,%.4f,%.4f,%s,%s,%s,%s\n", variants[k].name, p->iteration_ms,
                   p->exposed_ms, mem[k].states / 1e9, cap, fits(&mem[k]), maxb, sps);
        else if (csv)
            printf("%s,0,,,%.4f,%s,%s,%s,\n", variants[k].name, mem[k].states / 1e9, cap,
                   fits(&mem[k]), maxb);
        else if (p->available)
            printf("%-20s %12.2f %11.2f %16.3f %5s %9s %10s\n", variants[k].name,
                   p->iteration_ms, p->exposed_ms, mem[k].states / 1e9, fits(&mem[k]),
                   maxb[0] ? maxb : "-", sps[0] ? sps : "-");
        else
            printf("%-20s %12s %11s %16.3f %5s %9s %10s  (%s)\n", variants[k].name, "-", "-",
                   mem[k].states / 1e9, fits(&mem[k]), maxb[0] ? maxb : "-", "-", p->why_not);
        cp_prediction_free(&res[k]);
    }
    if (!csv) {
        if (best < NVAR)
            printf("fastest that fits: %s (%.2f ms per iteration)\n", variants[best].name,
                   res[best].iteration_ms);
        else
            printf("fastest that fits: none known (%s)\n",
                   mem[0].capacity <= 0    ? "the topology gives no GPU memory"
                   : mem[0].activations > 0 ? "no framework fits with its activations"
                                            : "no framework's model states fit");
        if (most < NVAR)
            printf("most samples/s: %s at a batch of %.0f per GPU (%.1f samples/s)\n",
                   variants[most].name, mem[most].max_batch, thr[most]);
    }
}

/* Every variant predicted in turn (the first builds the collective model the
 * others borrow), the fastest that fits and the most samples per second
 * found, then the table printed. */
int cli_frameworks(const cp_model *m, const cp_topo *t, const cp_predict_opts *base,
                   cp_strategy s, int bucket_given, int csv, cp_err *e)
{
    cp_prediction res[NVAR];
    cp_mem mem[NVAR];
    double thr[NVAR];
    cp_predictor first; /* variant 0's, whose collective model the others borrow */
    size_t k, best = NVAR, most = NVAR;
    int rc = CP_OK, have_first = 0;
    memset(res, 0, sizeof res);
    memset(thr, 0, sizeof thr);
    memset(&first, 0, sizeof first);
    for (k = 0; k < NVAR && rc == CP_OK; k++) {
        cp_predict_opts o = *base;
        cp_predictor pr;
        memset(&pr, 0, sizeof pr);
        if (skipped(t, k))
            continue;
        o.framework = variants[k].fw;
        o.fsdp_sharding = variants[k].sharding;
        o.offload = variants[k].offload;
        o.comm_hook = o.framework == CP_FW_DDP ? base->comm_hook : 0;
        if (!bucket_given && cp_framework_deepspeed(o.framework))
            o.bucket_mb = 0; /* DeepSpeed's reduce_bucket_size */
        cp_predictor *use = have_first ? &pr : &first;
        if ((rc = cp_predictor_init_like(use, m, t, &o, have_first ? &first : NULL, e)))
            break;
        rc = cp_predict_any(use, s, &o, 0, 0, &res[k], e);
        if (rc == CP_OK)
            rc = cp_model_states(use, &o, &mem[k], e);
        if (have_first)
            cp_predictor_free(&pr);
        have_first = 1;
        if (rc == CP_OK && res[k].available &&
            (rc = throughput(m, t, &o, &mem[k], &first, s, &thr[k], e)) == CP_OK &&
            thr[k] > 0 && (most == NVAR || thr[k] > thr[most] * (1 + 1e-12)))
            most = k;
        if (rc == CP_OK && res[k].available && mem[k].capacity > 0 &&
            mem[k].total <= mem[k].capacity &&
            (best == NVAR || res[k].iteration_ms < res[best].iteration_ms - 1e-9))
            best = k;
    }
    if (have_first)
        cp_predictor_free(&first);
    if (rc)
        return rc;
    print_frameworks(m, t, base, s, csv, res, mem, thr, best, most);
    return CP_OK;
}
