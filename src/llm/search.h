/*
 * search.h - the fastest layouts that fit: every TP x CP x DP x PP (with
 * VP), micro-batch, sharding and memory placement a framework can run for
 * a model, GPU count and global batch, ranked by predicted iteration time
 * (docs/model.md, "Searching layouts").
 *
 * Branch and bound: every candidate gets a memory check and a lower bound
 * on its predicted time from its kernels alone (no collective, no group
 * machine to build: cp_llm_lower_bound_ms); candidates are priced in order
 * of that bound and the search stops once the next bound exceeds the K-th
 * best time found, so pruning never drops a layout that would rank.  The
 * full price is cp_llm_predict's, the evaluation `predict` uses: the best
 * layout is never slower than any layout predict prices for the same
 * inputs.  Pricing runs on `threads` threads; the candidate list can be
 * split over processes (part of nparts: MPI ranks), whose rankings merge
 * into the one a single process finds (cp_search_merge).
 *
 * Ownership: cp_search_out owns its hits (cp_search_free).
 */
#ifndef CP_LLM_SEARCH_H
#define CP_LLM_SEARCH_H

#include "llm/iteration.h"

typedef struct cp_search_in {
    const cp_xformer *x;
    const cp_topo *host;      /* one host of the machine */
    const cp_gpu *g;
    int hosts;
    int gbs;
    int64_t seq;              /* 0: the model's */
    cp_precision precision;
    cp_llm_fw fw;
    double net_gbs;           /* every NIC's rate (0: the topology's) */
    int top;                  /* how many to keep, best first */
    int threads;              /* pricing threads (1: none) */
    int part, nparts;         /* this process prices candidates i with i % nparts == part */
    int max_vp;               /* at most this many chunks a stage (0: 16) */
    int offload;              /* 1: also try the memory tiers (optimizer, activations) */
    int pool;                 /* 1: the pool's tiers and data-parallel route too */
    int exhaustive;           /* 1: price every layout that fits (no bound): for checking */
    /* a mixture of experts' settings every candidate takes (the search
     * varies EP and ETP): NULL for Megatron-Core's defaults */
    const cp_layout *moe;
} cp_search_in;

typedef struct cp_search_hit {
    cp_layout l;
    cp_llm_result r;          /* no events */
    long index;               /* candidate number (ties break on it) */
} cp_search_hit;

typedef struct cp_search_out {
    cp_search_hit *hits;      /* owned, best first */
    int nhits;
    long considered;          /* layouts that resolve */
    long dominated;           /* of which another is never slower (search.c: dominated) */
    long pruned_memory;       /* cannot fit even recomputing every block */
    long pruned_bound;        /* their lower bound exceeded the K-th best */
    long priced;              /* fully predicted */
    double min_memory_gb;     /* the least any considered layout needs per GPU */
    int groups;               /* group machines built */
} cp_search_out;

/* Run the search.  CP_EINPUT when no candidate resolves (a global batch no
 * layout divides, a GPU count no layout fits: the reason); a search whose
 * candidates all fail the memory check succeeds with nhits 0 and
 * min_memory_gb set (the caller says what memory it would need). */
int cp_search_run(const cp_search_in *in, cp_search_out *out, cp_err *e);

/* Merge b's hits into a (both from the same inputs, other parts), keeping
 * the best `top` in the single-process order; counts add up. */
int cp_search_merge(cp_search_out *a, const cp_search_out *b, int top, cp_err *e);

void cp_search_free(cp_search_out *out);

/* Price the n layouts ls (resolved; index[i] their candidate numbers) as
 * the search prices them and keep the best in->top in *out (fresh): how the
 * process that gathers other processes' rankings (MPI rank 0) rebuilds
 * them without shipping results between processes.  Counts are left 0. */
int cp_search_reprice(const cp_search_in *in, const cp_layout *ls, const long *index, int n,
                      cp_search_out *out, cp_err *e);

/* The order of hits: faster first, then the lower candidate number. */
int cp_search_hit_cmp(const cp_search_hit *a, const cp_search_hit *b);

#endif
