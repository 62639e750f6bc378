/*
 * planner.c - the routing and partitioning LP, shard rounding, evaluation
 * and sensitivity (see planner.h and docs/planner.md, eqs. Q5-Q9).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "lp/lp.h"
#include "plan/planner.h"

#define KIB 1024.0

void cp_plan_opts_default(cp_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    cp_predict_opts_default(&o->pred);
    o->min_shard_kb = 512; /* shards below ~0.5 MB are latency-bound on every bus here */
    o->mode = CP_PLAN_COARSE;
}

void cp_plan_free(cp_plan *p)
{
    int i;
    for (i = 0; i < p->nb; i++)
        free(p->b[i].routes);
    free(p->b);
    free(p->order);
    cp_families_free(&p->fams);
    memset(p, 0, sizeof *p);
}

/* Families the mode may use. */
static int allowed(const cp_plan *p, int f)
{
    if (!p->fams.f[f].available)
        return 0;
    return p->opts.mode == CP_PLAN_COARSE || f == CP_FAM_PROXY_BW || f == CP_FAM_PROXY_LAT ||
           f == CP_FAM_PROXY_RING;
}

/* ------------------------------------------------------------------------ */
/* Buckets                                                                   */

/* Buckets from the framework's bucketing, in order of readiness, with the
 * point in the next forward where each is first needed (F(b), eq. Q5). */
static int make_buckets(cp_plan *p, const cp_predictor *pr, cp_err *e)
{
    cp_buckets bk;
    const cp_model *m = p->model;
    double *fstart;
    double first, cap;
    int i, k, rc;
    cp_ddp_caps(p->opts.pred.first_bucket_mb, p->opts.pred.bucket_mb, p->opts.pred.apex_elems,
                pr->elem_bytes, &first, &cap);
    rc = cp_buckets_ddp(m, &pr->comp, pr->elem_bytes, first, cap, &bk, e);
    if (rc)
        return rc;
    fstart = malloc((size_t)(m->nlayers + 1) * sizeof *fstart);
    p->b = calloc((size_t)bk.n + 1, sizeof *p->b);
    p->order = bk.order;
    bk.order = NULL;
    if (!fstart || !p->b) {
        free(fstart);
        cp_buckets_free(&bk);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    fstart[0] = 0;
    for (i = 0; i < m->nlayers; i++)
        fstart[i + 1] = fstart[i] + pr->comp.fwd_ms[i];
    for (i = 0; i < bk.n; i++) {
        cp_plan_bucket *b = &p->b[i];
        b->first = bk.b[i].first;
        b->count = bk.b[i].count;
        b->bytes = (int64_t)bk.b[i].bytes;
        b->ready_ms = bk.b[i].ready_ms;
        b->first_layer = m->nlayers;
        for (k = 0; k < b->count; k++) {
            int l = m->tensors[p->order[b->first + k]].layer;
            if (l < b->first_layer)
                b->first_layer = l;
        }
        b->need_ms = fstart[b->first_layer];
    }
    p->nb = bk.n;
    free(fstart);
    cp_buckets_free(&bk);
    /* DDP's buckets come in reverse registration order, which is readiness
     * order up to ties; the chains need it exactly: stable insertion sort */
    for (i = 1; i < p->nb; i++) {
        cp_plan_bucket t = p->b[i];
        for (k = i - 1; k >= 0 && p->b[k].ready_ms > t.ready_ms; k--)
            p->b[k + 1] = p->b[k];
        p->b[k + 1] = t;
    }
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* The LP (eq. Q6)                                                           */

/* One LP over the buckets [b0, b1): columns and rows by bucket offset
 * i = b - b0.  Chains start from init[g], the previous window's finish. */
typedef struct lpvars {
    int b0, b1;
    int *x;       /* [i * CP_FAMS + f] column, -1 if not allowed */
    int *s;       /* [i * G + g] column */
    int *chain;   /* [i * G + g] row s >= s_prev + sum c x */
    int *ready;   /* [i * G + g] row s >= ready + sum c x */
    int z;
    int G;
} lpvars;

/* Buckets per LP when the plan is long: windows of this many buckets are
 * solved in order, each starting from the chains the previous one left
 * (docs/planner.md, "Size").  One window is exact; with 128 the solve time
 * grows linearly (gpt2 x10: 18 ms, x100: 163 ms) and on the benchmark plans
 * the windowed optimum equals the single LP's (docs/performance.md). */
#define LP_WINDOW 128

/* solve_window: the simplex ran and found no optimum (see one_family). */
#define LP_GAVE_UP 3

/* Weight of the stall z against the chain ends in a non-final window: any
 * stall costs more than every chain end (ms) it could save. */
#define Z_WEIGHT 1e6

static void lpvars_free(lpvars *v)
{
    free(v->x);
    free(v->s);
    free(v->chain);
    free(v->ready);
}

/* Family f's time for the whole of bucket b, ms (eq. Q7). */
static double full_ms(const cp_plan *p, int b, int f)
{
    const char *how;
    return cp_family_time_us(&p->fams, (cp_fam_kind)f, (double)p->b[b].bytes, &how) / 1e3;
}

static int build_lp(const cp_plan *p, cp_lp *lp, lpvars *v, double tc, const double *init,
                    int final)
{
    int B = v->b1 - v->b0, G = p->fams.ngroups, i, f, g;
    char name[64];
    v->G = G;
    v->x = malloc((size_t)B * CP_FAMS * sizeof *v->x);
    v->s = malloc((size_t)B * G * sizeof *v->s);
    v->chain = malloc((size_t)B * G * sizeof *v->chain);
    v->ready = malloc((size_t)B * G * sizeof *v->ready);
    if (!v->x || !v->s || !v->chain || !v->ready)
        return -1;
    v->z = cp_lp_add_col(lp, "z", 0, -1, final ? 1.0 : Z_WEIGHT);
    for (i = 0; i < B; i++) {
        int b = v->b0 + i, row;
        snprintf(name, sizeof name, "once_b%d", b);
        row = cp_lp_add_row(lp, name, CP_LP_EQ, 1.0, 0, NULL, NULL);
        if (row < 0)
            return -1;
        for (f = 0; f < CP_FAMS; f++) {
            v->x[i * CP_FAMS + f] = -1;
            if (!allowed(p, f))
                continue;
            snprintf(name, sizeof name, "x_b%d_%s", b, cp_fam_name((cp_fam_kind)f));
            v->x[i * CP_FAMS + f] = cp_lp_add_col(lp, name, 0, 1, 0);
            if (v->x[i * CP_FAMS + f] < 0 || cp_lp_add_coef(lp, row, v->x[i * CP_FAMS + f], 1))
                return -1;
        }
        for (g = 0; g < G; g++) {
            int k = i * G + g, cd, rd, dl;
            snprintf(name, sizeof name, "s_b%d_g%d", b, g);
            /* a non-final window ends by minimising its chains' finish */
            v->s[k] = cp_lp_add_col(lp, name, 0, -1, !final && i == B - 1 ? 1.0 : 0);
            snprintf(name, sizeof name, "ready_b%d_g%d", b, g);
            rd = cp_lp_add_row(lp, name, CP_LP_GE, p->b[b].ready_ms, 0, NULL, NULL);
            snprintf(name, sizeof name, "chain_b%d_g%d", b, g);
            cd = cp_lp_add_row(lp, name, CP_LP_GE, i == 0 ? init[g] : 0, 0, NULL, NULL);
            if (cd < 0 || cp_lp_add_coef(lp, cd, v->s[k], 1) ||
                (i > 0 && cp_lp_add_coef(lp, cd, v->s[k - G], -1)))
                return -1;
            snprintf(name, sizeof name, "need_b%d_g%d", b, g);
            dl = cp_lp_add_row(lp, name, CP_LP_LE, tc + p->b[b].need_ms, 0, NULL, NULL);
            if (v->s[k] < 0 || rd < 0 || dl < 0 || cp_lp_add_coef(lp, rd, v->s[k], 1) ||
                cp_lp_add_coef(lp, dl, v->s[k], 1) || cp_lp_add_coef(lp, dl, v->z, -1))
                return -1;
            v->chain[k] = cd;
            v->ready[k] = rd;
            for (f = 0; f < CP_FAMS; f++) {
                int col = v->x[i * CP_FAMS + f];
                double c;
                if (col < 0 || p->fams.f[f].group != g)
                    continue;
                c = full_ms(p, b, f);
                if (cp_lp_add_coef(lp, rd, col, -c) || cp_lp_add_coef(lp, cd, col, -c))
                    return -1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Shards and routes (eq. Q8)                                                */

/* Deal n items over weights w[0..k) by largest remainder into out[]. */
static void deal(int n, const double *w, int k, int *out)
{
    double sum = 0, rem[CP_FAM_MAX_DEV > CP_FAMS ? CP_FAM_MAX_DEV : CP_FAMS];
    int i, given = 0;
    for (i = 0; i < k; i++)
        sum += w[i] > 0 ? w[i] : 0;
    for (i = 0; i < k; i++) {
        double exact = sum > 0 && w[i] > 0 ? n * w[i] / sum : 0;
        out[i] = (int)floor(exact + 1e-9);
        rem[i] = exact - out[i];
        given += out[i];
    }
    while (given < n) {
        int best = -1;
        for (i = 0; i < k; i++)
            if (w[i] > 0 && (best < 0 || rem[i] > rem[best] + 1e-12))
                best = i;
        if (best < 0)
            break;
        out[best]++;
        rem[best] = -1;
        given++;
    }
}

static int add_route(cp_plan_bucket *b, cp_fam_kind f, int dev, int64_t off, int64_t bytes,
                     int shards)
{
    cp_plan_route *r;
    if (bytes <= 0)
        return 0;
    r = &b->routes[b->nroutes++];
    memset(r, 0, sizeof *r);
    r->fam = f;
    r->dev = dev;
    r->offset = off;
    r->bytes = bytes;
    r->shards = shards;
    r->how = cp_fam_name(f);
    return 0;
}

/* Cut bucket b into equal shards and give each family (and each proxy-bw
 * device) a contiguous range; fractions come from frac[]. */
static int shard_bucket(cp_plan *p, int bi, const double *frac)
{
    cp_plan_bucket *b = &p->b[bi];
    int64_t min_shard = (int64_t)(p->opts.min_shard_kb * KIB), shard, off = 0;
    int n = (int)(b->bytes / (min_shard > 0 ? min_shard : 1)), counts[CP_FAMS], f, k;
    const cp_family *bw = &p->fams.f[CP_FAM_PROXY_BW];
    if (n < 1)
        n = 1;
    if (n > 65536)
        n = 65536; /* an upper bound on shards per bucket: 65536 x 512 KiB = 32 GiB */
    shard = (b->bytes + n - 1) / n;
    free(b->routes);
    b->nroutes = 0;
    b->routes = calloc((size_t)CP_FAMS + CP_FAM_MAX_DEV, sizeof *b->routes);
    if (!b->routes)
        return -1;
    deal(n, frac, CP_FAMS, counts);
    for (f = 0; f < CP_FAMS; f++) {
        int64_t bytes = (int64_t)counts[f] * shard;
        if (counts[f] == 0)
            continue;
        if (off + bytes > b->bytes)
            bytes = b->bytes - off;
        if (f == CP_FAM_PROXY_BW && bw->ndev > 1) {
            int per[CP_FAM_MAX_DEV];
            int64_t o2 = off;
            deal(counts[f], bw->share, bw->ndev, per);
            for (k = 0; k < bw->ndev; k++) {
                int64_t nb = (int64_t)per[k] * shard;
                if (o2 + nb > off + bytes)
                    nb = off + bytes - o2;
                add_route(b, (cp_fam_kind)f, bw->dev[k], o2, nb, per[k]);
                o2 += nb;
            }
        } else {
            int dev = f == CP_FAM_PROXY_LAT || (f == CP_FAM_PROXY_BW && bw->ndev == 1)
                          ? p->fams.f[f].dev[0]
                          : -1;
            add_route(b, (cp_fam_kind)f, dev, off, bytes, counts[f]);
        }
        off += bytes;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Evaluation (eq. Q9)                                                       */

/* Bytes of bucket b on family f after rounding. */
static int64_t fam_bytes(const cp_plan_bucket *b, int f)
{
    int64_t s = 0;
    int k;
    for (k = 0; k < b->nroutes; k++)
        if (b->routes[k].fam == (cp_fam_kind)f)
            s += b->routes[k].bytes;
    return s;
}

double cp_plan_evaluate(cp_plan *p)
{
    double s[CP_FAMS], tc = p->compute_ms, P = tc;
    int bi, f, k, g, order = 0;
    for (g = 0; g < CP_FAMS; g++)
        s[g] = 0;
    for (bi = 0; bi < p->nb; bi++) {
        cp_plan_bucket *b = &p->b[bi];
        for (g = 0; g < p->fams.ngroups; g++) {
            if (s[g] < b->ready_ms)
                s[g] = b->ready_ms;
            for (f = 0; f < CP_FAMS; f++) {
                int64_t bytes;
                const char *how = cp_fam_name((cp_fam_kind)f);
                double d, start = s[g];
                if (!p->fams.f[f].available || p->fams.f[f].group != g ||
                    (bytes = fam_bytes(b, f)) == 0)
                    continue;
                d = cp_family_time_us(&p->fams, (cp_fam_kind)f, (double)bytes, &how) / 1e3;
                s[g] += d;
                for (k = 0; k < b->nroutes; k++)
                    if (b->routes[k].fam == (cp_fam_kind)f) {
                        b->routes[k].start_ms = start;
                        b->routes[k].finish_ms = s[g];
                        b->routes[k].how = how;
                    }
            }
            if (s[g] - b->need_ms > P)
                P = s[g] - b->need_ms;
        }
        for (k = 0; k < b->nroutes; k++)
            b->routes[k].order = order++;
    }
    return P;
}

/* Rebuild routes from per-bucket fractions (only < 0), or with every byte
 * on family `only`, and evaluate. */
static int realise(cp_plan *p, int only, double *iter)
{
    int bi, f;
    for (bi = 0; bi < p->nb; bi++) {
        double frac[CP_FAMS];
        for (f = 0; f < CP_FAMS; f++)
            frac[f] = only >= 0 ? (f == only) : p->b[bi].x[f];
        if (shard_bucket(p, bi, frac))
            return -1;
    }
    *iter = cp_plan_evaluate(p);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */

/* Leading layers whose bytes go mostly to the GPUs' AllReduce. */
static int split_layer(const cp_plan *p)
{
    const cp_model *m = p->model;
    double *ar = calloc((size_t)m->nlayers + 1, sizeof *ar);
    double *tot = calloc((size_t)m->nlayers + 1, sizeof *tot);
    int bi, k, l, split = 0;
    if (!ar || !tot) {
        free(ar);
        free(tot);
        return -1;
    }
    for (bi = 0; bi < p->nb; bi++) {
        const cp_plan_bucket *b = &p->b[bi];
        double share = (double)fam_bytes(b, CP_FAM_ALLREDUCE) / (double)b->bytes;
        for (k = 0; k < b->count; k++) {
            const cp_tensor *t = &m->tensors[p->order[b->first + k]];
            ar[t->layer] += share * (double)t->numel;
            tot[t->layer] += (double)t->numel;
        }
    }
    for (l = 0; l < m->nlayers; l++) {
        if (tot[l] <= 0)
            continue;
        if (ar[l] < 0.5 * tot[l])
            break;
        split = l + 1;
    }
    free(ar);
    free(tot);
    return split;
}

/* LP-free bound: each GPU must send and receive (N-1)/N of all gradient
 * bytes over its own links, starting no earlier than the first bucket is
 * ready and ending no later than the last deadline. */
static double lower_bound(const cp_plan *p)
{
    const cp_topo *t = p->topo;
    double cap = -1, total = 0, first = p->compute_ms, need = 0, n = t->ngpus;
    int i, k;
    for (i = 0; i < t->ngpus; i++) {
        int v = t->gpus[i];
        double out = 0, in = 0;
        for (k = t->adj_off[v]; k < t->adj_off[v + 1]; k++) {
            int a = t->adj_arc[k];
            out += cp_arc_cap(t, a);
            in += cp_arc_cap(t, a ^ 1);
        }
        if (cap < 0 || out < cap)
            cap = out;
        if (in < cap)
            cap = in;
    }
    for (i = 0; i < p->nb; i++) {
        total += (double)p->b[i].bytes;
        if (p->b[i].ready_ms < first)
            first = p->b[i].ready_ms;
        if (p->b[i].need_ms > need)
            need = p->b[i].need_ms;
    }
    if (n < 2 || cap <= 0)
        return p->compute_ms;
    total *= (n - 1) / n;
    return fmax(p->compute_ms, first + total / (cap * 1e6) - need);
}

/* dz/dB_f from the LP duals, then per resource through the family's own
 * packing duals: the ms one more GB/s on a resource saves (eq. Q10). */
static void sensitivity(cp_plan *p, const cp_lp *lp, const lpvars *v)
{
    double dzdB[CP_FAMS] = {0}, best[64];
    int res[64], nres = 0, bi, f, k, g;
    const cp_phase *ring = &p->fams.coll->cost[CP_OP_ALLREDUCE][CP_ALG_RING].phase[0];
    for (bi = v->b0; bi < v->b1; bi++)
        for (f = 0; f < CP_FAMS; f++) {
            int i = bi - v->b0, col = v->x[i * CP_FAMS + f];
            double x, y, S = (double)p->b[bi].bytes, B, dcdB;
            if (col < 0 || (x = cp_lp_value(lp, col)) <= 0)
                continue;
            g = p->fams.f[f].group;
            y = cp_lp_dual(lp, v->ready[i * v->G + g]) + cp_lp_dual(lp, v->chain[i * v->G + g]);
            int nccl = f == CP_FAM_ALLREDUCE && !p->fams.gpu_mpi;
            B = nccl ? ring->bw_gbs : p->fams.f[f].gbs;
            dcdB = -(nccl ? ring->factor : 1.0) * S / (B * B * 1e6); /* ms/(GB/s) */
            dzdB[f] += y * x * dcdB;
        }
    for (f = 0; f < CP_FAMS; f++) {
        const int *ba;
        const double *bd;
        int nb;
        if (!allowed(p, f) || dzdB[f] == 0)
            continue;
        if (f == CP_FAM_ALLREDUCE && p->fams.gpu_mpi) {
            continue; /* the MPI family has no packed binding links */
        } else if (f == CP_FAM_ALLREDUCE) {
            ba = ring->bind_arc;
            bd = ring->bind_dual;
            nb = cp_coll_arcs(p->fams.coll) == p->topo ? ring->nbind : 0;
        } else {
            ba = p->fams.f[f].pk.bind_arc;
            bd = p->fams.f[f].pk.bind_dual;
            nb = p->fams.f[f].pk.nbind;
        }
        for (k = 0; k < nb; k++) {
            double save = -dzdB[f] * bd[k];
            int j;
            for (j = 0; j < nres && res[j] != ba[k]; j++)
                ;
            if (j == nres) {
                if (nres == 64)
                    continue;
                res[nres] = ba[k];
                best[nres++] = 0;
            }
            best[j] += save;
        }
    }
    /* keep the largest savings, in decreasing order */
    p->nbind = 0;
    while (p->nbind < (int)(sizeof p->bind / sizeof p->bind[0])) {
        int j, top = -1;
        for (j = 0; j < nres; j++)
            if (best[j] > 1e-9 && (top < 0 || best[j] > best[top]))
                top = j;
        if (top < 0)
            break;
        p->bind[p->nbind].res = res[top];
        p->bind[p->nbind].gbs = cp_res_cap(p->topo, res[top]);
        p->bind[p->nbind].save_ms = best[top];
        p->nbind++;
        best[top] = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                    */

/* Solve the LP over buckets [b0, b1) from chain states init[]; store the
 * fractions and the finish of every chain in init[] for the next window. */
static int solve_window(cp_plan *p, int b0, int b1, double *init, int final, cp_err *e)
{
    cp_lp *lp = cp_lp_new("coarse", 0);
    lpvars v;
    int rc, bi, f, g;
    memset(&v, 0, sizeof v);
    v.b0 = b0;
    v.b1 = b1;
    if (!lp || build_lp(p, lp, &v, p->compute_ms, init, final)) {
        lpvars_free(&v);
        cp_lp_free(lp);
        return cp_fail(e, CP_EINTERNAL, "out of memory building the plan LP");
    }
    p->lp_rows += cp_lp_nrows(lp);
    p->lp_cols += cp_lp_ncols(lp);
    if (final && p->opts.dump_lp && (rc = cp_lp_write(lp, p->opts.dump_lp, e))) {
        lpvars_free(&v);
        cp_lp_free(lp);
        return rc;
    }
    rc = cp_lp_solve(lp, e);
    if (rc == CP_OK) {
        double z = cp_lp_value(lp, v.z);
        p->lp_iters += cp_lp_iterations(lp);
        if (p->compute_ms + z > p->lp_iteration_ms)
            p->lp_iteration_ms = p->compute_ms + z;
        for (bi = b0; bi < b1; bi++)
            for (f = 0; f < CP_FAMS; f++) {
                int col = v.x[(bi - b0) * CP_FAMS + f];
                double x = col >= 0 ? cp_lp_value(lp, col) : 0;
                p->b[bi].x[f] = x > 1e-9 ? x : 0;
            }
        for (g = 0; g < v.G; g++)
            init[g] = cp_lp_value(lp, v.s[(b1 - b0 - 1) * v.G + g]);
        if (final)
            sensitivity(p, lp, &v);
    } else if (cp_lp_ran(lp)) {
        snprintf(p->lp_gave_up, sizeof p->lp_gave_up, "%.199s", e->msg);
        cp_err_clear(e);
        rc = LP_GAVE_UP;
    } else if (p->opts.dump_lp == NULL) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        cp_fail(e, CP_EINTERNAL, "%s (rerun with --dump-lp FILE to inspect the LP)", msg);
    }
    lpvars_free(&v);
    cp_lp_free(lp);
    return rc;
}

/* When the simplex finds no optimum of a feasible LP (it always is: every
 * bucket on one family is a solution; GLPK has called one infeasible whose
 * times reached 1e11 ms beside costs of 0.1 ms), every bucket goes to one
 * family, AllReduce when allowed: a valid plan, reported as such. */
static void one_family(cp_plan *p)
{
    int bi, f, pick = -1;
    for (f = 0; f < CP_FAMS && pick < 0; f++)
        if (allowed(p, f) && p->fams.f[f].available &&
            (f == CP_FAM_ALLREDUCE || !allowed(p, CP_FAM_ALLREDUCE) ||
             !p->fams.f[CP_FAM_ALLREDUCE].available))
            pick = f;
    for (bi = 0; bi < p->nb; bi++)
        for (f = 0; f < CP_FAMS; f++)
            p->b[bi].x[f] = f == pick;
}

/* One LP when the plan is short; windows of LP_WINDOW buckets otherwise. */
static int solve(cp_plan *p, cp_err *e)
{
    double init[CP_FAMS] = {0}, t0 = cp_now_s();
    int b0 = 0, rc = CP_OK;
    p->lp_iteration_ms = p->compute_ms;
    while (rc == CP_OK && b0 < p->nb) {
        int b1 = p->nb - b0 <= LP_WINDOW * 3 / 2 ? p->nb : b0 + LP_WINDOW;
        rc = solve_window(p, b0, b1, init, b1 == p->nb, e);
        b0 = b1;
        cp_progress_report(&p->opts.progress, b0, p->nb); /* buckets planned of all */
    }
    if (rc == LP_GAVE_UP) {
        one_family(p);
        p->nbind = 0;
        rc = CP_OK;
    }
    p->lp_seconds = cp_now_s() - t0;
    p->opts.progress.fn = NULL; /* its context lives no longer than cp_plan_build */
    return rc;
}

/* Eq. P7: the framework copies the reduced gradients back after the last
 * bucket is synchronised, whatever route carried them, so every time the
 * plan reports grows by the same copy (as in cp_predict). */
static void add_copy_back(cp_plan *p, double ms)
{
    p->tail_ms = ms;
    p->compute_ms += ms;
    p->iteration_ms += ms;
    p->lp_iteration_ms += ms;
    p->lower_bound_ms += ms;
    if (p->allreduce_ms >= 0)
        p->allreduce_ms += ms;
    if (p->pool_ms >= 0)
        p->pool_ms += ms;
}

int cp_plan_build(const cp_predictor *pr, const cp_plan_opts *o, cp_plan *p, cp_err *e)
{
    int rc, f, any = 0, bi;
    double lp_iter, ar_iter = -1;
    memset(p, 0, sizeof *p);
    p->model = pr->model;
    p->topo = pr->topo;
    p->opts = *o;
    p->compute_ms = cp_compute_total(&pr->comp);
    if ((rc = cp_families_build(pr->topo, &pr->coll, &p->fams, e)))
        return rc;
    if (o->gpu_mpi && !pr->coll.mpi.available) { /* asked for: say why it cannot */
        rc = cp_fail_at(e, CP_EINPUT, pr->topo->src_path, 0, 0, NULL,
                        "--gpu-collective mpi: %s", pr->coll.mpi.why_not);
        cp_plan_free(p);
        return rc;
    }
    if (o->gpu_mpi && (rc = cp_families_use_mpi(&p->fams, e))) {
        cp_plan_free(p);
        return rc;
    }
    for (f = 0; f < CP_FAMS; f++)
        any |= allowed(p, f);
    if (!any) {
        rc = cp_fail_at(e, CP_EINPUT, pr->topo->src_path, 0, 0, NULL, "%s",
                        p->fams.f[CP_FAM_PROXY_BW].why_not);
        cp_plan_free(p);
        return rc;
    }
    if ((rc = make_buckets(p, pr, e)) || (rc = solve(p, e))) {
        cp_plan_free(p);
        return rc;
    }
    if (p->fams.f[CP_FAM_ALLREDUCE].available && realise(p, CP_FAM_ALLREDUCE, &ar_iter))
        goto oom;
    p->allreduce_ms = ar_iter;
    p->pool_ms = -1;
    if (o->mode == CP_PLAN_COARSE && p->fams.f[CP_FAM_POOL].available &&
        realise(p, CP_FAM_POOL, &p->pool_ms))
        goto oom;
    if (realise(p, -1, &lp_iter))
        goto oom;
    p->iteration_ms = lp_iter;
    if (p->lp_gave_up[0])
        p->lp_iteration_ms = lp_iter; /* no optimum: the one-family plan's own time */
    if (o->mode == CP_PLAN_COARSE && ar_iter >= 0 && ar_iter < lp_iter - 1e-9) {
        /* the LP's fluid optimum rounded worse than plain AllReduce: take that */
        for (bi = 0; bi < p->nb; bi++)
            for (f = 0; f < CP_FAMS; f++)
                p->b[bi].x[f] = f == CP_FAM_ALLREDUCE;
        if (realise(p, CP_FAM_ALLREDUCE, &p->iteration_ms))
            goto oom;
        lp_iter = p->iteration_ms;
    }
    if (p->pool_ms >= 0 && p->pool_ms < lp_iter - 1e-9) {
        /* the same through the pool alone: the split is never slower */
        for (bi = 0; bi < p->nb; bi++)
            for (f = 0; f < CP_FAMS; f++)
                p->b[bi].x[f] = f == CP_FAM_POOL;
        if (realise(p, CP_FAM_POOL, &p->iteration_ms))
            goto oom;
    }
    for (bi = 0; bi < p->nb; bi++)
        for (f = 0; f < CP_FAMS; f++)
            p->fam_bytes[f] += (double)fam_bytes(&p->b[bi], f);
    p->split_layer = split_layer(p);
    p->lower_bound_ms = lower_bound(p);
    add_copy_back(p, pr->copy_out_ms);
    return CP_OK;
oom:
    cp_plan_free(p);
    return cp_fail(e, CP_EINTERNAL, "out of memory");
}
