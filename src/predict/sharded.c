/*
 * sharded.c - ZeRO-2 and FSDP timelines (see sharded.h and docs/model.md,
 * eqs. Z1-Z2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/sharded.h"

#define MIB 1048576.0

/* DeepSpeed's reduce_bucket_size and allgather_bucket_size default, in
 * elements (deepspeed/runtime/zero/config.py). */
#define ZERO_BUCKET_ELEMS 5e8

/* What the timeline calls each operation: the op and its algorithm. */
static const char *const how_names[2][CP_ALGS] = {
    {"allgather/ring", "allgather/tree", "allgather/nvls", "allgather/hier", "allgather/ps"},
    {"reducescatter/ring", "reducescatter/tree", "reducescatter/nvls", "reducescatter/hier",
     "reducescatter/ps"}};

/* `times` operations of `bytes` each, back to back on the communication
 * stream (one timeline entry): they start when issued and the stream is
 * free; returns their finish, -1 when the strategy cannot run them. */
static double issue_n(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                      double times, int nt, double at, double *stream, cp_prediction *out,
                      int cap)
{
    cp_coll_alg alg;
    const char *proto;
    double d, start = at > *stream ? at : *stream;
    if (bytes <= 0 || times <= 0) /* a layer without parameters: nothing to move */
        return at;
    if ((d = cp_strategy_coll_ms(p, s, op, bytes, &alg, &proto)) < 0)
        return -1;
    d *= times;
    bytes *= times;
    *stream = start + d;
    out->comm_ms += d;
    if (out->runs && out->nruns < cap) {
        cp_bucket_run *r = &out->runs[out->nruns++];
        r->bytes = bytes;
        r->ntensors = nt;
        r->ready_ms = at;
        r->start_ms = start;
        r->finish_ms = *stream;
        r->how = alg == CP_ALGS ? "none" : how_names[op == CP_OP_REDUCESCATTER][alg];
        r->proto = proto;
    }
    return *stream;
}

/* One operation: issue_n once. */
static double issue(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes, int nt,
                    double at, double *stream, cp_prediction *out, int cap)
{
    return issue_n(p, s, op, bytes, 1, nt, at, stream, out, cap);
}

/* Eq. Z1, ZeRO-2: reduce-scatter the buckets during backward, step the
 * optimizer on the shard, all-gather the parameters.  *end: the iteration
 * without the optimizer. */
static int run_zero2(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                     cp_prediction *out, double *end, cp_err *e)
{
    cp_buckets bk;
    double cap = o->bucket_mb > 0 ? o->bucket_mb * MIB : ZERO_BUCKET_ELEMS * p->elem_bytes;
    double stream = 0, total = 0, full;
    int i, n, rc = cp_buckets_ddp(p->model, &p->comp, p->elem_bytes, cap, cap, &bk, e);
    if (rc)
        return rc;
    for (i = 0; i < bk.n; i++)
        total += bk.b[i].bytes;
    n = bk.n + 2; /* reduce-scatters, then the full all-gathers and the rest */
    if (keep && !(out->runs = calloc((size_t)n, sizeof *out->runs))) {
        cp_buckets_free(&bk);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < bk.n; i++)
        if (issue(p, s, CP_OP_REDUCESCATTER, bk.b[i].bytes, bk.b[i].count, bk.b[i].ready_ms,
                  &stream, out, n) < 0) {
            cp_buckets_free(&bk);
            return 1;
        }
    cp_buckets_free(&bk);
    *end = p->comp.lead_ms + p->comp.fwd_total + p->comp.bwd_total;
    if (stream > *end)
        *end = stream;
    /* the optimizer steps the shard, then the new parameters are gathered */
    stream = *end + p->comp.optimizer_ms / p->topo->ngpus;
    full = floor(total / cap);
    if (issue_n(p, s, CP_OP_ALLGATHER, cap, full, 0, stream, &stream, out, n) < 0 ||
        issue(p, s, CP_OP_ALLGATHER, total - full * cap, 0, stream, &stream, out, n) < 0)
        return 1;
    *end = stream - p->comp.optimizer_ms / p->topo->ngpus;
    return CP_OK;
}

/* Eq. Z2, FSDP FULL_SHARD, one layer a unit: forward gathers each layer's
 * parameters before it runs, the next one while it runs (at most two
 * gathered: the gather of l waits for layer l-2 to be freed); backward
 * gathers again one layer ahead and reduce-scatters each layer's gradients
 * when its backward ends.  *end: the iteration without the optimizer. */
static int run_fsdp(const cp_predictor *p, cp_strategy s, int keep, cp_prediction *out,
                    double *end, cp_err *e)
{
    const cp_model *m = p->model;
    const cp_compute *c = &p->comp;
    int L = m->nlayers, l, k, n = 3 * L + 1;
    double *bytes = calloc((size_t)L + 1, sizeof *bytes);
    double *fend = calloc((size_t)L + 1, sizeof *fend), *bend = calloc((size_t)L + 1, sizeof *bend);
    int *nt = calloc((size_t)L + 1, sizeof *nt);
    double stream = 0, t, g, fwd_end;
    int rc = CP_OK;
    if (!bytes || !fend || !bend || !nt ||
        (keep && !(out->runs = calloc((size_t)n, sizeof *out->runs)))) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (k = 0; k < m->ntensors; k++) {
        bytes[m->tensors[k].layer] += (double)m->tensors[k].numel * p->elem_bytes;
        nt[m->tensors[k].layer]++;
    }
    t = c->lead_ms; /* forward */
    for (l = 0; l < L; l++) {
        double limit = l >= 2 ? fend[l - 2] : c->lead_ms;
        if ((g = issue(p, s, CP_OP_ALLGATHER, bytes[l], nt[l], limit, &stream, out, n)) < 0)
            goto unavailable;
        t = (t > g ? t : g) + c->fwd_ms[l];
        fend[l] = t;
    }
    /* backward: the gather of l is issued when layer l + 1's backward
     * starts (BACKWARD_PRE) and layer l + 2 is freed, the reduce-scatter of
     * l when its backward ends */
    fwd_end = t;
    for (l = L - 1; l >= 0; l--) {
        double limit = l + 2 < L ? bend[l + 2] : fwd_end;
        double at = l + 1 < L ? bend[l + 1] - c->bwd_ms[l + 1] : fwd_end;
        if ((g = issue(p, s, CP_OP_ALLGATHER, bytes[l], nt[l], at > limit ? at : limit, &stream,
                       out, n)) < 0)
            goto unavailable;
        if (l + 1 < L && issue(p, s, CP_OP_REDUCESCATTER, bytes[l + 1], nt[l + 1], bend[l + 1],
                               &stream, out, n) < 0)
            goto unavailable;
        t = (t > g ? t : g) + c->bwd_ms[l];
        bend[l] = t;
    }
    if (L > 0 && issue(p, s, CP_OP_REDUCESCATTER, bytes[0], nt[0], bend[0], &stream, out, n) < 0)
        goto unavailable;
    *end = t > stream ? t : stream;
    goto done;
unavailable:
    rc = 1;
done:
    free(bytes);
    free(fend);
    free(bend);
    free(nt);
    return rc;
}

int cp_predict_sharded(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
                       int keep_runs, cp_prediction *out, cp_err *e)
{
    double end = 0, opt = p->comp.optimizer_ms / (p->topo->ngpus > 0 ? p->topo->ngpus : 1);
    int rc;
    memset(out, 0, sizeof *out);
    out->strategy = s;
    /* each GPU steps the optimizer on its 1/N shard */
    out->compute_ms = p->comp.lead_ms + p->comp.fwd_total + p->comp.bwd_total + opt;
    rc = o->framework == CP_FW_FSDP ? run_fsdp(p, s, keep_runs, out, &end, e)
                                     : run_zero2(p, s, o, keep_runs, out, &end, e);
    if (rc == 1) {
        cp_prediction_free(out);
        out->available = 0;
        snprintf(out->why_not, sizeof out->why_not,
                 "%s shards gradients with ReduceScatter and AllGather: %s is not one of "
                 "their algorithms on this machine (ring, tree, auto, hier, best)",
                 o->framework == CP_FW_FSDP ? "fsdp" : "zero2", cp_strategy_name(s));
        return CP_OK;
    }
    if (rc)
        return rc;
    out->available = 1;
    out->iteration_ms = end + opt;
    out->exposed_ms = out->iteration_ms - out->compute_ms;
    if (out->exposed_ms < 0)
        out->exposed_ms = 0;
    return CP_OK;
}
