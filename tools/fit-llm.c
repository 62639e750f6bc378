/*
 * fit-llm.c - fit the per-generation compute constants of the large-model
 * model (src/llm/gpu.c's calibration table) to the published runs in
 * ../shared/data/llm/, and print the table and every row's error
 * (docs/calibration.md, "Large-model compute").  `make calibration` runs it.
 *
 * Ampere is fitted on vTrain's 1,440 single-server runs, Narayanan et al.'s
 * Table 1 and Korthikanti et al.'s Table 4; Hopper on the Megatron-LM H100
 * table, NeMo 24.07 and the dense rows of Megatron-LM's examples and
 * Megatron-Bridge 25.09; then, the dense constants kept, the grouped-GEMM
 * and all-to-all constants (group_us, a2a_eff) on Megatron-Bridge 25.09's
 * mixture-of-experts rows.
 * The loss is the sum over those sources of the
 * mean |log(predicted / measured)|, each source weighing the same whatever
 * its row count.  Minimised by coordinate descent on the logarithms of the
 * constants, each kept within physical bounds (an efficiency in (0, 1]).
 *
 * Usage: fit-llm [--print] [--moe] [ROOT]   (ROOT: the repository, default .)
 *   --print   no fit: the errors at the shipped constants
 *   --moe     fit only the mixture-of-experts constants, from the shipped
 *             Hopper constants
 */
#include "llm_rows.h"

typedef struct source {
    const char *name;
    const char *prefix;   /* row ids starting with it; "vtrain" for the vTrain file */
    int gen;              /* 0 ampere, 1 hopper, 2 hopper's mixture-of-experts rows */
} source;

static const source sources[] = {
    {"vTrain single-server A100", "vtrain", 0},
    {"Narayanan Table 1", "N21", 0},
    {"Korthikanti Table 4", "K22", 0},
    {"Megatron-LM H100", "MLM-H100", 1},
    {"NeMo 24.07", "NeMo2407", 1},
    {"Megatron-LM examples", "MLMex", 1},
    {"Megatron-Bridge 25.09 dense", "MB25.09-Llama", 1},
    {"Megatron-Bridge 25.09 MoE", "MB25.09-", 2},
};
#define NSRC (int)(sizeof sources / sizeof *sources)

static llm_row *meas_rows, *vt_rows;
static int n_meas, n_vt;
static const char *root = ".";

/* The parameters a fit moves, by offset into cp_gpu_calib, with bounds. */
typedef struct param {
    const char *name;
    size_t off;
    double lo, hi;
} param;

static const param params[] = {
    {"eff16", offsetof(cp_gpu_calib, eff16), 0.2, 1.0},
    {"eff8", offsetof(cp_gpu_calib, eff8), 0.2, 1.0},
    {"ai_crit", offsetof(cp_gpu_calib, ai_crit), 16, 256},
    {"k0", offsetof(cp_gpu_calib, k0), 0, 1024},
    {"attn_eff", offsetof(cp_gpu_calib, attn_eff), 0.2, 1.5},
    {"bwd_eff", offsetof(cp_gpu_calib, bwd_eff), 0.5, 1.2},
    {"mem_eff", offsetof(cp_gpu_calib, mem_eff), 0.3, 1.0},
    {"kernel_us", offsetof(cp_gpu_calib, kernel_us), 0.5, 50},
    {"host_us", offsetof(cp_gpu_calib, host_us), 0.5, 200},
    {"group_us", offsetof(cp_gpu_calib, group_us), 0.1, 500},
    {"a2a_eff", offsetof(cp_gpu_calib, a2a_eff), 0.2, 1.0},
};
#define NPARAM (int)(sizeof params / sizeof *params)

static double *field(cp_gpu_calib *c, int i)
{
    return (double *)((char *)c + params[i].off);
}

/* Which parameters a generation's rows can tell: Ampere has no FP8 and no
 * FlashAttention rows; Hopper none of the small shapes ai_crit and k0 show. */
static int moves(int gen, int i)
{
    const char *n = params[i].name;
    if (gen == 2) /* the mixture-of-experts rows move only their own constants */
        return !strcmp(n, "group_us") || !strcmp(n, "a2a_eff");
    if (!strcmp(n, "group_us") || !strcmp(n, "a2a_eff"))
        return 0;
    if (gen == 0)
        return strcmp(n, "eff8") && strcmp(n, "attn_eff");
    return strcmp(n, "ai_crit") && strcmp(n, "k0");
}

/* Mean |log error| of source s under calibration c; *rows counted. */
static double source_loss(int s, const cp_gpu_calib *c, int print, int *rows)
{
    double sum = 0;
    int i, n = 0;
    if (!strcmp(sources[s].prefix, "vtrain")) {
        for (i = 0; i < n_vt; i++) {
            llm_case k;
            llm_eval ev;
            llm_vtrain_setup(&vt_rows[i], &k);
            if (llm_case_eval(&k, root, c, &ev))
                continue;
            sum += fabs(log(ev.pred / ev.meas));
            n++;
        }
    } else {
        for (i = 0; i < n_meas; i++) {
            llm_case k;
            llm_eval ev;
            if (strncmp(meas_rows[i].f[C_ID], sources[s].prefix, strlen(sources[s].prefix)))
                continue;
            llm_row_setup(&meas_rows[i], &k);
            if (k.skip || (k.x.moe.experts > 0) != (sources[s].gen == 2) ||
                llm_case_eval(&k, root, c, &ev))
                continue;
            if (k.kind == 3) {
                sum += fabs(log(ev.pred_fwd / k.measured_fwd)) +
                       fabs(log(ev.pred_bwd / k.measured_bwd));
                n += 2;
            } else {
                sum += fabs(log(ev.pred / ev.meas));
                n++;
            }
            if (print)
                printf("  %-34s measured %10.2f predicted %10.2f  %+6.1f%%  (mbs %d vp %d "
                       "recompute %s%s%s)\n", meas_rows[i].f[C_ID], ev.meas, ev.pred,
                       100 * ev.err, ev.used.mbs, ev.used.vp,
                       cp_recompute_name(ev.res.recompute),
                       ev.res.recompute_layers ? " of some blocks" : "",
                       ev.fits ? "" : ", DOES NOT FIT");
        }
    }
    *rows = n;
    return n ? sum / n : 0;
}

static double gen_loss(int gen, const cp_gpu_calib *c, int print)
{
    double L = 0;
    int s, n;
    for (s = 0; s < NSRC; s++)
        if (sources[s].gen == gen) {
            double l = source_loss(s, c, print, &n);
            if (print)
                printf("%-30s %4d rows  mean |log error| %.4f\n", sources[s].name, n, l);
            L += l;
        }
    return L;
}

/* Coordinate descent on log parameters: each in turn moved by a factor
 * while the loss falls, the factor shrinking when no move helps. */
static void fit(int gen, cp_gpu_calib *c)
{
    double step = 1.25, best = gen_loss(gen, c, 0);
    int round, i;
    fprintf(stderr, "%s: start loss %.4f\n", c->gen, best);
    for (round = 0; round < 40 && step > 1.005; round++) {
        int improved = 0;
        for (i = 0; i < NPARAM; i++) {
            int dir;
            if (!moves(gen, i))
                continue;
            for (dir = -1; dir <= 1; dir += 2) {
                for (;;) {
                    double *p = field(c, i), old = *p, nv = dir > 0 ? old * step : old / step, l;
                    if (nv < params[i].lo || nv > params[i].hi)
                        break;
                    *p = nv;
                    l = gen_loss(gen, c, 0);
                    if (l < best - 1e-6) {
                        best = l;
                        improved = 1;
                    } else {
                        *p = old;
                        break;
                    }
                }
            }
        }
        fprintf(stderr, "%s: round %d step %.3f loss %.4f\n", c->gen, round, step, best);
        if (!improved)
            step = sqrt(step);
    }
}

int main(int argc, char **argv)
{
    char path[512];
    int i, gen, print = 0, moe_only = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--print"))
            print = 1;
        else if (!strcmp(argv[i], "--moe"))
            moe_only = 1;
        else
            root = argv[i];
    }
    snprintf(path, sizeof path, "%s/../shared/data/llm/measurements.csv", root);
    meas_rows = llm_rows_read(path, &n_meas);
    snprintf(path, sizeof path, "%s/../shared/data/llm/vtrain-a100-single-node.csv", root);
    vt_rows = llm_rows_read(path, &n_vt);
    if (!meas_rows || !vt_rows) {
        fprintf(stderr, "fit-llm: %s: cannot read ../shared/data/llm (the data lives beside "
                "the repository; see docs/calibration.md)\n", path);
        return 2;
    }
    {
        int cal;
        cp_gpu_calib c = *cp_gpu_calib_for("H100", &cal);
        for (gen = moe_only ? 2 : 0; gen < 3; gen++) {
            /* gen 2 starts from gen 1's constants (fitted or shipped) */
            if (gen < 2)
                c = *cp_gpu_calib_for(gen ? "H100" : "A100", &cal);
            if (!print)
                fit(gen, &c);
            printf("\n%s%s: %s\n", c.gen, gen == 2 ? " (mixture-of-experts rows)" : "",
                   print ? "shipped constants" : "fitted constants");
            for (i = 0; i < NPARAM; i++)
                if (gen < 2 ? !moves(2, i) : moves(gen, i))
                    printf("  %-10s %.4g\n", params[i].name, *field(&c, i));
            printf("  loss %.4f\n", gen_loss(gen, &c, 1));
        }
    }
    free(meas_rows);
    free(vt_rows);
    llm_machines_free();
    return 0;
}
