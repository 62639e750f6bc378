/*
 * planner.h - COARSE tensor routing and partitioning as a linear program.
 *
 * Given the compute timeline (when each gradient bucket is ready) and the
 * route families of the machine (families.h), choose for every bucket the
 * fraction of its bytes on each family so that the iteration ends soonest:
 *
 *   minimise z                                   (iteration = compute + z)
 *   sum_f x[b][f] = 1                            every byte synchronised once
 *   s[b][g] >= s[b-1][g] + sum_{f in g} c[b][f] x[b][f]    a group is a chain
 *   s[b][g] >= ready_b  + sum_{f in g} c[b][f] x[b][f]     not before ready
 *   s[b][g] <= compute + z + F(b)                the next forward needs it
 *
 * c[b][f] is family f's time for the whole bucket (latency included, so
 * small buckets go whole to a low-latency family); F(b) is how far into the
 * next iteration's forward pass bucket b's first layer is needed (0 for the
 * first layer: dual synchronisation falls out of these deadlines, the LP
 * decides which layers the GPUs all-reduce and which go to the proxies).
 * The LP has B (F + G) + 1 columns and B (1 + 3G) rows for B buckets, F
 * families and G sharing groups: linear in the number of buckets, not in
 * buckets x links (docs/planner.md, "Size").
 *
 * After the LP, each bucket is cut into equal shards no smaller than
 * min_shard, the shards are dealt to the families (and, for proxy-bw, to
 * the devices) by largest remainder, and the plan is re-evaluated with the
 * exact per-family times of the rounded shares; if plain AllReduce of every
 * bucket evaluates faster, that is the plan (the LP may always choose it).
 *
 * Ownership: cp_plan owns all its arrays; cp_plan_free releases them.  It
 * borrows the model and topology given to cp_plan_build.
 */
#ifndef CP_PLANNER_H
#define CP_PLANNER_H

#include "core/progress.h"
#include "plan/families.h"
#include "predict/predict.h"

typedef enum cp_plan_mode {
    CP_PLAN_COARSE,   /* every family, per-layer deadlines (dual synchronisation) */
    CP_PLAN_PROXY     /* memory-device families only, per-layer deadlines */
} cp_plan_mode;

typedef struct cp_plan_opts {
    cp_predict_opts pred;   /* compute time, bucket size, gradient dtype */
    double min_shard_kb;    /* smallest shard, KiB (default 512) */
    cp_plan_mode mode;
    int gpu_mpi;            /* GPU-side family: 1 MPI AllReduce staged through host
                               memory (--gpu-collective mpi), 0 NCCL's (default) */
    const char *dump_lp;    /* write the LP here (CPLEX LP format), or NULL */
    cp_progress progress;   /* told the LP windows solved of all (core/progress.h);
                             * fn NULL (the default): nothing told */
} cp_plan_opts;

void cp_plan_opts_default(cp_plan_opts *o);

typedef struct cp_plan_route {
    cp_fam_kind fam;
    const char *how;        /* algorithm or family name */
    int dev;                /* memory device or CPU node for a proxy/ps share; -1 otherwise */
    int64_t offset, bytes;  /* byte range of the bucket */
    int shards;             /* equal shards in that range */
    int order;              /* global processing order (0, 1, 2, ...) */
    double start_ms, finish_ms;
} cp_plan_route;

typedef struct cp_plan_bucket {
    int first, count;       /* tensors order[first .. first+count) */
    int64_t bytes;
    double ready_ms;        /* when backward produced its last tensor */
    double need_ms;         /* F(b): needed this far into the next forward */
    int first_layer;        /* the earliest layer among its tensors */
    double x[CP_FAMS];      /* LP fractions */
    cp_plan_route *routes;  /* owned */
    int nroutes;
} cp_plan_bucket;

/* A binding link or reducer and what one more GB/s on it would save. */
typedef struct cp_plan_bind {
    int res;                /* resource id (pack.h: arc, or 2 nlinks + node) */
    double gbs;             /* its effective capacity */
    double save_ms;         /* iteration ms saved per extra GB/s */
} cp_plan_bind;

typedef struct cp_plan {
    const cp_model *model;  /* borrowed */
    const cp_topo *topo;    /* borrowed */
    cp_plan_opts opts;
    cp_families fams;
    int *order;             /* tensor indices in bucket order (owned) */
    cp_plan_bucket *b;      /* owned */
    int nb;
    double compute_ms;      /* one-GPU iteration (tail_ms included) */
    double tail_ms;         /* charged after the last bucket's synchronisation: DDP's copy
                             * back (eq. P7); the plan file's predicted.tail_ms */
    double iteration_ms;    /* re-evaluated after sharding */
    double lp_iteration_ms; /* the LP's optimum (fluid, before sharding) */
    double allreduce_ms;    /* every bucket all-reduced, same evaluator */
    double pool_ms;         /* every bucket through the CXL pool, same evaluator; -1 none */
    double lower_bound_ms;  /* LP-free bound: GPU links must carry the bytes */
    int split_layer;        /* leading layers synchronised mostly by the GPUs */
    double fam_bytes[CP_FAMS]; /* bytes per family */
    cp_plan_bind bind[16];
    int nbind;
    int lp_rows, lp_cols, lp_iters;
    double lp_seconds;
    char lp_gave_up[200];   /* why the LP found no optimum ("" when it did); the plan
                               then puts every bucket on one family (planner.c) */
} cp_plan;

/* Build a plan.  The predictor supplies the compute timeline and the
 * collective model (it must be for the same model and topology). */
int cp_plan_build(const cp_predictor *pr, const cp_plan_opts *o, cp_plan *p, cp_err *e);
void cp_plan_free(cp_plan *p);

/* Re-evaluate a plan's timing from its rounded routes (used after edits). */
double cp_plan_evaluate(cp_plan *p);

#endif
