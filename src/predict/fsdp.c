/*
 * fsdp.c - PyTorch FSDP's timeline (see fsdp.h and docs/model.md eqs.
 * Z2-Z4): the wrap policy's units, each unit's parameters gathered before
 * its forward and again before its backward (prefetched one unit ahead),
 * its gradients reduce-scattered when its backward ends, under FULL_SHARD,
 * SHARD_GRAD_OP and HYBRID_SHARD; and the parameters a GPU holds whole at
 * the busiest point (eq. M1).
 */
#include <stdlib.h>
#include <string.h>

#include "predict/fsdp.h"
#include "predict/shard_ops.h"

#define MIB CP_MIB

/* Length of the block prefix of a module name: up to and including its
 * first all-digit component ("encoder.layer.3.attention" -> "encoder.layer.3",
 * "h.0.mlp" -> "h.0"), the module transformer_auto_wrap_policy would wrap;
 * 0 when the name has none (embeddings, heads: the root unit). */
static size_t block_prefix(const char *name)
{
    const char *c = name;
    while (*c) {
        const char *end = strchr(c, '.');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        size_t k = 0;
        while (k < len && c[k] >= '0' && c[k] <= '9')
            k++;
        if (len > 0 && k == len)
            return (size_t)(c - name) + len;
        if (!end)
            break;
        c = end + 1;
    }
    return 0;
}

/* FSDP units (eq. Z2): unit[l] for every layer, -1 for the root unit (no
 * block).  Units are runs of consecutive layers, numbered in forward order;
 * returns their count.  Policies (o->fsdp_wrap_mb): CP_WRAP_LAYER every
 * layer a unit; 0 or CP_WRAP_BLOCK one unit per block (block_prefix), the
 * rest in the root; > 0 layers grouped in forward order until a group holds
 * that many MiB. */
static int fsdp_units(const cp_model *m, const double *bytes, double wrap_mb, int *unit)
{
    int l, U = 0;
    double acc = 0;
    const char *prev = NULL;
    size_t plen = 0;
    for (l = 0; l < m->nlayers; l++) {
        const char *nm = m->layers[l].name;
        if (wrap_mb == CP_WRAP_LAYER) {
            unit[l] = U++;
        } else if (wrap_mb > 0) {
            if (l == 0 || acc >= wrap_mb * MIB) {
                U += l > 0;
                acc = 0;
            }
            unit[l] = U;
            acc += bytes[l];
        } else { /* 0 or CP_WRAP_BLOCK */
            size_t len = block_prefix(nm);
            if (len == 0) {
                unit[l] = -1;
                continue;
            }
            if (!prev || len != plen || strncmp(nm, prev, len) != 0)
                U++;
            prev = nm;
            plen = len;
            unit[l] = U - 1;
        }
    }
    return wrap_mb > 0 ? (m->nlayers > 0 ? U + 1 : 0) : U;
}

/* Scratch of run_fsdp: per layer, and per unit (ub, unt: bytes and tensors;
 * fend: end of its forward; bstart, bend: start and end of its backward). */
typedef struct fsdp_state {
    double *lbytes;
    int *lnt, *unit;
    double *ub, *fend, *bstart, *bend;
    int *unt;
} fsdp_state;

static void fsdp_free(fsdp_state *f)
{
    free(f->lbytes);
    free(f->lnt);
    free(f->unit);
    free(f->ub);
    free(f->fend);
    free(f->bstart);
    free(f->bend);
    free(f->unt);
}

static int fsdp_alloc(fsdp_state *f, int L)
{
    size_t n = (size_t)L + 1;
    memset(f, 0, sizeof *f);
    f->lbytes = calloc(n, sizeof *f->lbytes);
    f->lnt = calloc(n, sizeof *f->lnt);
    f->unit = calloc(n, sizeof *f->unit);
    f->ub = calloc(n, sizeof *f->ub);
    f->fend = calloc(n, sizeof *f->fend);
    f->bstart = calloc(n, sizeof *f->bstart);
    f->bend = calloc(n, sizeof *f->bend);
    f->unt = calloc(n, sizeof *f->unt);
    return f->lbytes && f->lnt && f->unit && f->ub && f->fend && f->bstart && f->bend && f->unt;
}

/* A unit's gradients reduced: a ReduceScatter over the shard group (every
 * GPU, or with hybrid sharding each host), then with hybrid sharding over
 * several hosts the all-reduce of every shard with its peers, on the same
 * stream (FSDP's post-backward hook runs both).  Returns the finish, -1
 * when s cannot run them. */
static double reduce_unit(const cp_predictor *p, cp_strategy s, int hybrid, double bytes,
                          int nt, double at, double *stream, cp_prediction *out, int cap)
{
    double f = cp_shard_issue_in(p, s, CP_OP_REDUCESCATTER, hybrid ? CP_SC_HOST : CP_SC_ALL,
                                 bytes, 1, nt, at, stream, out, cap);
    if (f < 0 || !hybrid)
        return f;
    return cp_shard_issue_in(p, s, CP_OP_ALLREDUCE, CP_SC_PEERS, bytes, 1, nt, f, stream, out,
                             cap);
}

/* What one FSDP micro-batch needs to know (run_fsdp sets it up). */
typedef struct fsdp_run {
    const cp_predictor *p;
    cp_strategy s;
    int hybrid, keep_params;
    int U;               /* units */
    double rootb;        /* root unit's bytes and tensors */
    int rootnt;
    cp_prediction *out;
    int cap;             /* room in out->runs */
} fsdp_run;

/* One micro-batch's forward and backward from time *t, the stream free
 * from *stream (eqs. Z2, Z3); both advance.  Returns 0, CP_UNAVAILABLE when the
 * strategy cannot run an operation, -1 when out of memory. */
static int fsdp_micro(const fsdp_run *r, fsdp_state *f, double *t, double *stream)
{
    const cp_predictor *p = r->p;
    const cp_compute *c = &p->comp;
    const cp_model *m = p->model;
    cp_strategy s = r->s;
    cp_shard_scope in = r->hybrid ? CP_SC_HOST : CP_SC_ALL;
    int L = m->nlayers, l, u, U = r->U, n = r->cap, cur = -2;
    double g = 0, groot, fwd_end, t0 = *t, first = -1;
    cp_prediction *out = r->out;
    /* forward */
    if ((groot = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, in, r->rootb, 1, r->rootnt, *t,
                                   stream, out, n)) < 0)
        return CP_UNAVAILABLE;
    for (l = 0; l < L; l++) {
        u = f->unit[l];
        if (u >= 0 && u != cur) {
            double limit = u >= 2 && !r->keep_params ? f->fend[u - 2] : t0;
            if ((g = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, in, f->ub[u], 1, f->unt[u], limit,
                                       stream, out, n)) < 0)
                return CP_UNAVAILABLE;
            cur = u;
        }
        if (u < 0 ? groot > *t : g > *t)
            *t = u < 0 ? groot : g;
        if (first < 0)
            first = *t;
        *t += c->fwd_ms[l];
        if (u >= 0)
            f->fend[u] = *t;
    }
    /* backward, from the last layer: the gather of u is issued when unit
     * u + 1's backward starts (BACKWARD_PRE) and unit u + 2 is freed, the
     * reduce-scatter of u + 1 when its backward ends */
    fwd_end = *t;
    cur = -2;
    for (l = L - 1; l >= 0; l--) {
        u = f->unit[l];
        if (u >= 0 && u != cur) {
            double limit = u + 2 < U ? f->bend[u + 2] : fwd_end;
            double at = u + 1 < U ? f->bstart[u + 1] : fwd_end;
            g = 0; /* SHARD_GRAD_OP: the parameters are still there from forward */
            if (!r->keep_params &&
                (g = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, in, f->ub[u], 1, f->unt[u],
                                       at > limit ? at : limit, stream, out, n)) < 0)
                return CP_UNAVAILABLE;
            if (u + 1 < U && reduce_unit(p, s, r->hybrid, f->ub[u + 1], f->unt[u + 1],
                                         f->bend[u + 1], stream, out, n) < 0)
                return CP_UNAVAILABLE;
            if (g > *t)
                *t = g;
            f->bstart[u] = *t;
            cur = u;
        }
        *t += c->bwd_ms[l];
        if (u >= 0)
            f->bend[u] = *t;
    }
    if (U > 0 && reduce_unit(p, s, r->hybrid, f->ub[0], f->unt[0], f->bend[0], stream, out,
                             n) < 0)
        return CP_UNAVAILABLE;
    if (reduce_unit(p, s, r->hybrid, r->rootb, r->rootnt, *t, stream, out, n) < 0)
        return CP_UNAVAILABLE;
    return cp_shard_micro_spans(out, first < 0 ? t0 : first, fwd_end, *t);
}

/* Eq. Z2, FSDP FULL_SHARD over the wrap policy's units: the root unit (if
 * any) is gathered first and kept until backward ends (FSDP does not
 * reshard the root after forward); forward gathers each unit before its
 * first layer runs, the next one while it runs (at most two gathered: the
 * gather of u waits for unit u-2 to be freed); backward gathers again one
 * unit ahead and reduce-scatters each unit's gradients when its backward
 * ends, the root's last.  Eq. Z3, the other sharding strategies:
 * SHARD_GRAD_OP frees nothing after forward, so no gather waits for a free
 * and backward gathers nothing; HYBRID_SHARD gathers and reduce-scatters
 * inside each host and all-reduces each shard across the hosts
 * (reduce_unit).  Gradient accumulation (eq. Z4): every micro-batch does
 * all of it, the next one's forward starting when the previous backward's
 * compute ends.  *end: the iteration without the optimizer. */
int cp_fsdp_run(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                cp_prediction *out, double *end, cp_err *e)
{
    const cp_model *m = p->model;
    int L = m->nlayers, l, k, K = o->accum_steps > 1 ? o->accum_steps : 1, rc = CP_OK;
    double stream = 0, t = 0, per = 4.0 * L * (p->pool_params ? 2 : 1) + 6;
    fsdp_run r;
    fsdp_state f;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.s = s;
    r.out = out;
    r.hybrid = (o->fsdp_sharding & CP_SHARD_HYBRID) && p->topo->nhosts > 1;
    r.keep_params = o->fsdp_sharding & CP_SHARD_GRAD_OP;
    if ((rc = cp_shard_alloc_runs(out, keep, per, K, 0, &r.cap, e)))
        return rc;
    if (!fsdp_alloc(&f, L)) {
        fsdp_free(&f);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (k = 0; k < m->ntensors; k++) {
        f.lbytes[m->tensors[k].layer] += (double)m->tensors[k].numel * p->elem_bytes;
        f.lnt[m->tensors[k].layer]++;
    }
    r.U = fsdp_units(m, f.lbytes, o->fsdp_wrap_mb, f.unit);
    for (l = 0; l < L; l++) {
        if (f.unit[l] < 0) {
            r.rootb += f.lbytes[l];
            r.rootnt += f.lnt[l];
        } else {
            f.ub[f.unit[l]] += f.lbytes[l];
            f.unt[f.unit[l]] += f.lnt[l];
        }
    }
    for (k = 0; k < K && rc == CP_OK; k++)
        rc = fsdp_micro(&r, &f, &t, &stream);
    *end = t > stream ? t : stream;
    fsdp_free(&f);
    return rc < 0 ? cp_fail(e, CP_EINTERNAL, "out of memory") : rc;
}

double cp_fsdp_gathered_bytes(const cp_predictor *p, const cp_predict_opts *o)
{
    const cp_model *m = p->model;
    double total = 0, a, b, x;
    int k, l, U;
    fsdp_state f;
    if (!fsdp_alloc(&f, m->nlayers)) {
        fsdp_free(&f);
        return -1;
    }
    for (k = 0; k < m->ntensors; k++)
        f.lbytes[m->tensors[k].layer] += (double)m->tensors[k].numel * p->elem_bytes;
    U = fsdp_units(m, f.lbytes, o->fsdp_wrap_mb, f.unit);
    x = 0;
    for (l = 0; l < m->nlayers; l++) {
        total += f.lbytes[l];
        if (f.unit[l] < 0)
            x += f.lbytes[l]; /* the root, kept whole through the step */
        else
            f.ub[f.unit[l]] += f.lbytes[l];
    }
    cp_shard_two_largest(f.ub, U, &a, &b);
    /* two units gathered at once and one's unsharded gradient; with
     * SHARD_GRAD_OP every parameter by the end of forward */
    x = (o->fsdp_sharding & CP_SHARD_GRAD_OP) ? total + a : x + 2 * a + b;
    fsdp_free(&f);
    return x;
}
