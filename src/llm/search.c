/*
 * search.c - branch and bound over large-model layouts (see search.h;
 * docs/model.md, "Searching layouts").
 *
 * Three steps: enumerate every layout the framework can run on the GPUs
 * (the degrees, chunks, micro-batches and sharding that resolve); give
 * each a memory check (recomputing every block: does anything fit?) and a
 * lower bound (its kernels alone); price them in order of the bound, a
 * batch at a time on the threads, building the group machines a batch
 * needs first (a cache keeps them across layouts), until the next bound
 * exceeds the K-th best.  Cost: the enumeration and bounds are microseconds
 * a layout; the group machines (one collective-model build per distinct
 * group shape) and the priced layouts are what the time goes to.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "llm/dpsync.h"
#include "llm/search.h"

/* A candidate: the layout, its bound and memory verdict. */
typedef struct cand {
    cp_layout l;
    double lb_ms;
    long index;
} cand;

typedef struct cands {
    cand *c;
    long n, cap;
} cands;

static int push(cands *cs, const cp_layout *l, long index)
{
    if (cs->n == cs->cap) {
        long cap = cs->cap ? 2 * cs->cap : 1024;
        cand *c = realloc(cs->c, (size_t)cap * sizeof *c);
        if (!c)
            return -1;
        cs->c = c;
        cs->cap = cap;
    }
    cs->c[cs->n].l = *l;
    cs->c[cs->n].index = index;
    cs->c[cs->n].lb_ms = 0;
    cs->n++;
    return 0;
}

/* The framework's sharding choices: Megatron with and without the
 * distributed optimizer, DeepSpeed's ZeRO stages, FSDP's full sharding. */
static int zero_options(cp_llm_fw fw, int pp, int *z)
{
    if (fw == CP_LLM_FSDP) {
        z[0] = 3;
        return 1;
    }
    if (fw == CP_LLM_DEEPSPEED) {
        z[0] = 1;
        if (pp > 1)
            return 1;
        z[1] = 2, z[2] = 3;
        return 3;
    }
    z[0] = 1, z[1] = 0;
    return 2;
}

typedef struct enum_ctx {
    const cp_search_in *in;
    const cp_tiers *tiers;
    cands *out;
    long index;           /* every layout tried, for the split and the ties */
    long considered, dominated;
    int per_host, gpus;
    cp_err scratch;
} enum_ctx;

/* A layout another candidate prices at least as fast (eq. T1-T3): without
 * data parallelism (nor, in a mixture of experts, expert data
 * parallelism) the distributed optimizer shards nothing (the same as
 * zero 0); offloading activations only adds copies when the GPU alone
 * holds them without recomputation; offloading the optimizer too, unless
 * the tier's step beats the GPU's. */
static int dominated(const enum_ctx *E, const cp_layout *l)
{
    cp_layout g = *l;
    if (l->zero == 0 && (long)l->dp * l->cp == 1 && l->edp <= 1)
        return 1;
    if (!l->offload_opt && !l->offload_act)
        return 0;
    g.offload_opt = g.offload_act = 0;
    if (cp_llm_resolve_recompute(E->in->x, &g, E->in->g) != CP_RC_NONE)
        return 0;
    if (l->offload_act)
        return 1;
    {
        double params = cp_stage_params(E->in->x, l, l->pp - 1) / l->tp;
        double off = cp_dp_offload_step_ms(l, E->in->g, E->tiers, params);
        return off >= cp_dp_optimizer_ms(l, E->in->g, params);
    }
}

/* Offer one layout: resolved and not dominated, it joins this part's
 * candidates.  *uniform caches cp_layout_uniform for the layout's degrees
 * (-1 unknown): the groups' spread does not change with the chunks, the
 * micro-batch, the sharding or the tiers. */
static int offer(enum_ctx *E, cp_layout *l, int *uniform)
{
    long i = E->index++;
    if (i % E->in->nparts != E->in->part)
        return 0;
    cp_err_clear(&E->scratch);
    if (cp_layout_resolve(l, E->in->x, E->gpus, E->per_host, &E->scratch) != CP_OK)
        return 0;
    if (*uniform < 0)
        *uniform = cp_layout_uniform(l);
    if (!*uniform) /* predict refuses it */
        return 0;
    E->considered++;
    if (dominated(E, l)) {
        E->dominated++;
        return 0;
    }
    return push(E->out, l, i);
}

/* The expert layouts of a stage of tp x cp x dp ranks (eq. E1): EP a
 * power of two dividing the experts and the ranks, ETP 1 (the published
 * recipes') or, with TP, TP (Megatron-Core's default); either pinned where
 * the settings `m` (may be NULL) give it (--ep above 1, --etp); a dense
 * model has one, EP 1.  Fills ep[] and etp[] (room for 64), returns the
 * count. */
static int expert_options(const cp_xformer *x, const cp_layout *m, int tp, long ranks, int *ep,
                          int *etp)
{
    int n = 0, e, t;
    if (x->moe.experts <= 0) {
        ep[0] = 1, etp[0] = 0;
        return 1;
    }
    for (t = 1; t <= tp; t = t == 1 && tp > 1 ? tp : tp + 1)
        for (e = 1; e <= x->moe.experts && (long)e * t <= ranks && n < 64; e *= 2)
            if (x->moe.experts % e == 0 && ranks % ((long)e * t) == 0 && x->moe.ffn % t == 0 &&
                (!m || m->ep <= 1 || m->ep == e) && (!m || m->etp <= 0 || m->etp == t)) {
                ep[n] = e, etp[n] = t;
                n++;
            }
    return n;
}

/* Every micro-batch, chunk count, sharding and expert division of the
 * degrees tp, cp, pp. */
static int enumerate_inner(enum_ctx *E, int tp, int cp, int pp)
{
    const cp_search_in *in = E->in;
    const cp_xformer *x = in->x;
    long dp = E->gpus / ((long)tp * cp * pp), per;
    int mbs, vp, k, nz, z[3], max_vp = in->max_vp > 0 ? in->max_vp : 16, ne, ep[64], etp[64];
    int uniform[64];
    if (dp < 1 || in->gbs % dp)
        return 0;
    per = in->gbs / dp;
    nz = zero_options(in->fw, pp, z);
    ne = expert_options(x, in->moe, tp, (long)tp * cp * dp, ep, etp);
    for (k = 0; k < ne; k++)
        uniform[k] = -1;
    for (vp = 1; vp <= (pp > 1 ? max_vp : 1); vp++) {
        long chunks = (long)pp * vp;
        if (x->layers % chunks && (pp < 2 || (x->layers + 2) % chunks))
            continue;
        if (x->layers / chunks < 1)
            break;
        for (mbs = 1; mbs <= per; mbs *= 2) {
            if (per % mbs)
                continue;
            for (k = 0; k < nz * ne; k++) {
                int to, ta;
                for (to = 0; to < 3; to++)
                    for (ta = 0; ta < 3; ta++) {
                        cp_layout l;
                        /* a tier the machine has, and offload only when searched */
                        if ((to || ta) && !in->offload)
                            continue;
                        if ((to && !E->tiers->t[to].available) ||
                            (ta && !E->tiers->t[ta].available))
                            continue;
                        if (in->moe)
                            l = *in->moe;
                        else
                            cp_layout_default(&l);
                        l.tp = tp, l.cp = cp, l.pp = pp, l.vp = vp, l.dp = (int)dp;
                        l.mbs = mbs, l.gbs = in->gbs, l.seq = in->seq;
                        l.precision = in->precision, l.fw = in->fw, l.zero = z[k % nz];
                        l.ep = ep[k / nz], l.etp = etp[k / nz];
                        l.recompute_layers = 0;
                        l.recompute = CP_RC_AUTO;
                        l.offload_opt = to, l.offload_act = ta;
                        if (offer(E, &l, &uniform[k / nz]))
                            return -1;
                    }
            }
        }
    }
    return 0;
}

/* Every TP (dividing a host and the heads), CP (dividing the sequence in
 * 2 CP) and PP (dividing the layers, or them plus the embedding and loss)
 * whose product divides the GPUs. */
static int enumerate(enum_ctx *E)
{
    const cp_xformer *x = E->in->x;
    int64_t seq = E->in->seq > 0 ? E->in->seq : x->seq;
    int tp, cp, pp;
    for (tp = 1; tp <= E->per_host; tp *= 2) {
        if (x->heads % tp)
            continue;
        for (cp = 1; cp <= 64 && (cp == 1 || seq % (2 * (int64_t)cp) == 0); cp *= 2) {
            if (E->gpus % (tp * cp))
                break;
            for (pp = 1; pp <= x->layers + 2 && pp <= E->gpus / (tp * cp); pp++) {
                if ((E->gpus / (tp * cp)) % pp)
                    continue;
                if (pp > 1 && x->layers % pp && (x->layers + 2) % pp)
                    continue;
                if (enumerate_inner(E, tp, cp, pp))
                    return -1;
            }
        }
    }
    return 0;
}

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->lb_ms != y->lb_ms)
        return x->lb_ms < y->lb_ms ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int cp_search_hit_cmp(const cp_search_hit *a, const cp_search_hit *b)
{
    if (a->r.fits != b->r.fits)
        return a->r.fits ? -1 : 1;
    if (a->r.iteration_ms != b->r.iteration_ms)
        return a->r.iteration_ms < b->r.iteration_ms ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Insert h into the best `top` (sorted); 1 when kept. */
static int keep(cp_search_out *o, int top, const cp_search_hit *h)
{
    int i;
    if (o->nhits == top && cp_search_hit_cmp(h, &o->hits[top - 1]) >= 0)
        return 0;
    i = o->nhits < top ? o->nhits++ : top - 1;
    for (; i > 0 && cp_search_hit_cmp(h, &o->hits[i - 1]) < 0; i--)
        o->hits[i] = o->hits[i - 1];
    o->hits[i] = *h;
    return 1;
}

/* The time a candidate must beat to rank: the K-th best so far. */
static double bar_ms(const cp_search_out *o, int top)
{
    return o->nhits < top ? HUGE_VAL : o->hits[top - 1].r.iteration_ms;
}

/* One batch of candidates priced by the threads. */
typedef struct job {
    const cp_search_in *in;
    const cand *c;
    const cp_groups *G;       /* [n] */
    const cp_tiers *tiers;
    cp_llm_result *res;       /* [n] */
    int *rc;                  /* [n] */
    int n, next;
    pthread_mutex_t mu;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        int i;
        cp_llm_opts o;
        cp_err e;
        pthread_mutex_lock(&j->mu);
        i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        memset(&o, 0, sizeof o);
        o.dp_alg = CP_ALGS;
        o.tiers = j->tiers;
        o.dp_pool = j->tiers->t[CP_TIER_POOL].available ? 2 : 0; /* a pool with room */
        cp_err_clear(&e);
        j->rc[i] = cp_llm_predict(j->in->x, &j->c[i].l, j->in->g, &j->G[i], &o, &j->res[i], &e);
    }
}

/* Price n candidates (their group machines built first, serially, into
 * the cache: the collective model's builder is not for threads). */
static int price_batch(const cp_search_in *in, const cp_tiers *tiers, const cand *c, int n,
                       cp_group_cache *cache, cp_search_out *o, cp_err *e)
{
    cp_groups *G = calloc((size_t)n, sizeof *G);
    cp_llm_result *res = calloc((size_t)n, sizeof *res);
    int *rcs = calloc((size_t)n, sizeof *rcs), i, t, rc = CP_OK, nt;
    pthread_t th[64];
    job j;
    if (!G || !res || !rcs) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (i = 0; i < n && rc == CP_OK; i++)
        rc = cp_groups_build(&G[i], in->host, &c[i].l, in->net_gbs, cache, e);
    if (rc)
        goto done;
    memset(&j, 0, sizeof j);
    j.in = in, j.c = c, j.G = G, j.res = res, j.rc = rcs, j.n = n, j.tiers = tiers;
    pthread_mutex_init(&j.mu, NULL);
    nt = in->threads > 1 ? in->threads : 1;
    if (nt > 64)
        nt = 64;
    if (nt > n)
        nt = n;
    for (t = 1; t < nt; t++)
        if (pthread_create(&th[t], NULL, worker, &j)) {
            nt = t;
            break;
        }
    worker(&j);
    for (t = 1; t < nt; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&j.mu);
    for (i = 0; i < n; i++) {
        cp_search_hit h;
        if (rcs[i] == CP_EINTERNAL) {
            rc = cp_fail(e, CP_EINTERNAL, "out of memory pricing a layout");
            break;
        }
        if (rcs[i])
            continue;
        o->priced++;
        if (!res[i].fits) /* the GPU holds it, a tier cannot hold what it offloads */
            continue;
        h.l = c[i].l;
        h.r = res[i];
        h.index = c[i].index;
        keep(o, in->top, &h);
    }
done:
    if (G)
        for (i = 0; i < n; i++)
            cp_groups_free(&G[i]);
    free(G);
    free(res);
    free(rcs);
    return rc;
}

int cp_search_run(const cp_search_in *in, cp_search_out *out, cp_err *e)
{
    cands cs = {NULL, 0, 0};
    cp_group_cache cache;
    cp_tiers tiers;
    cp_llm_bound_memo *memo = NULL;
    enum_ctx E;
    long i, kept = 0;
    int rc = CP_OK, top = in->top > 0 ? in->top : 1;
    memset(out, 0, sizeof *out);
    memset(&cache, 0, sizeof cache);
    memset(&E, 0, sizeof E);
    E.in = in;
    E.out = &cs;
    E.per_host = in->host->ngpus / (in->host->nhosts > 0 ? in->host->nhosts : 1);
    E.gpus = E.per_host * in->hosts;
    out->min_memory_gb = HUGE_VAL;
    if ((rc = cp_tiers_build(in->host, in->hosts, &tiers, e)))
        goto done;
    if (!in->pool)
        tiers.t[CP_TIER_POOL].available = 0;
    E.tiers = &tiers;
    if (!(out->hits = calloc((size_t)top, sizeof *out->hits)) ||
        !(memo = cp_llm_bound_memo_new()) || enumerate(&E)) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    out->considered = E.considered;
    out->dominated = E.dominated;
    if (E.considered == 0 && in->nparts <= 1) {
        rc = cp_fail(e, CP_EINPUT, "no layout of %d GPUs (%d hosts of %d) runs %lld layers, "
                     "%lld heads and a global batch of %d: no TP x CP x DP x PP divides them "
                     "all", E.gpus, in->hosts, E.per_host, (long long)in->x->layers,
                     (long long)in->x->heads, in->gbs);
        goto done;
    }
    /* the memory check and the bound: what cannot fit even recomputing
     * every block is dropped */
    for (i = 0; i < cs.n && rc == CP_OK; i++) {
        cp_layout l = cs.c[i].l;
        cp_groups tc;
        cp_llm_mem m;
        l.recompute_layers = 0;
        cp_llm_memory(in->x, &l, l.offload_act ? CP_RC_NONE : CP_RC_FULL, &m);
        if (m.total / 1e9 < out->min_memory_gb)
            out->min_memory_gb = m.total / 1e9;
        if (in->g->capacity > 0 && m.total > in->g->capacity) {
            out->pruned_memory++;
            continue;
        }
        cs.c[kept] = cs.c[i];
        /* the TP, CP and expert groups take few shapes: their collectives
         * (the experts' all-to-all too) join the bound */
        if ((rc = cp_groups_build_kinds(&tc, in->host, &l, in->net_gbs, &cache,
                                        (1u << CP_G_TP) | (1u << CP_G_CP) | (1u << CP_G_EP) |
                                            (1u << CP_G_ETP), e)))
            break;
        cs.c[kept].lb_ms = cp_llm_lower_bound_ms(in->x, &cs.c[kept].l, in->g, &tc, &tiers, memo);
        cp_groups_free(&tc);
        kept++;
    }
    if (kept > 1)
        qsort(cs.c, (size_t)kept, sizeof *cs.c, cmp_cand);
    /* price in order of the bound, a batch of a few per thread at a time,
     * until the next bound cannot beat the K-th best */
    for (i = 0; i < kept && rc == CP_OK;) {
        int batch = (in->threads > 1 ? in->threads : 1) * 4, n = 0;
        double bar = in->exhaustive ? HUGE_VAL : bar_ms(out, top);
        while (i + n < kept && n < batch && cs.c[i + n].lb_ms <= bar)
            n++;
        if (n == 0)
            break;
        rc = price_batch(in, &tiers, cs.c + i, n, &cache, out, e);
        i += n;
    }
    out->pruned_bound = kept - out->priced;
    out->groups = cache.n;
done:
    free(cs.c);
    cp_llm_bound_memo_free(memo);
    cp_group_cache_free(&cache);
    if (rc)
        cp_search_free(out);
    return rc;
}

int cp_search_reprice(const cp_search_in *in, const cp_layout *ls, const long *index, int n,
                      cp_search_out *out, cp_err *e)
{
    cp_group_cache cache;
    cp_tiers tiers;
    cand *c = calloc((size_t)n + 1, sizeof *c);
    int i, rc, top = in->top > 0 ? in->top : 1;
    memset(out, 0, sizeof *out);
    memset(&cache, 0, sizeof cache);
    if (!c || !(out->hits = calloc((size_t)top, sizeof *out->hits))) {
        free(c);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < n; i++) {
        c[i].l = ls[i];
        c[i].index = index[i];
    }
    rc = cp_tiers_build(in->host, in->hosts, &tiers, e);
    if (rc == CP_OK && !in->pool)
        tiers.t[CP_TIER_POOL].available = 0;
    if (rc == CP_OK && n > 0)
        rc = price_batch(in, &tiers, c, n, &cache, out, e);
    out->priced = 0;
    cp_group_cache_free(&cache);
    free(c);
    if (rc)
        cp_search_free(out);
    return rc;
}

int cp_search_merge(cp_search_out *a, const cp_search_out *b, int top, cp_err *e)
{
    int i;
    if (a->nhits < top) { /* a's array holds top hits (cp_search_run) */
        cp_search_hit *h = realloc(a->hits, (size_t)top * sizeof *h);
        if (!h)
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        a->hits = h;
    }
    for (i = 0; i < b->nhits; i++)
        keep(a, top, &b->hits[i]);
    a->considered += b->considered;
    a->dominated += b->dominated;
    a->pruned_memory += b->pruned_memory;
    a->pruned_bound += b->pruned_bound;
    a->priced += b->priced;
    a->groups += b->groups;
    if (b->min_memory_gb < a->min_memory_gb)
        a->min_memory_gb = b->min_memory_gb;
    return CP_OK;
}

void cp_search_free(cp_search_out *out)
{
    free(out->hits);
    out->hits = NULL;
    out->nhits = 0;
}
