/*
 * sharded.c - DeepSpeed ZeRO's timelines, stages 1 and 2 (eq. Z1) and 3
 * (eq. Z5), and cp_predict_sharded, which runs them or FSDP's (fsdp.c) and
 * closes the iteration (see sharded.h and docs/model.md, eqs. Z1-Z6).  The
 * stream they queue on is shard_ops.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/fsdp.h"
#include "predict/pool_hooks.h"
#include "predict/shard_ops.h"
#include "predict/sharded.h"

#define MIB CP_MIB

/* DeepSpeed ZeRO-3's defaults, in parameters (elements):
 * stage3_prefetch_bucket_size, stage3_param_persistence_threshold and
 * stage3_max_reuse_distance (deepspeed/runtime/zero/config.py). */
#define ZERO3_PREFETCH_ELEMS 5e7
#define ZERO3_PERSIST_ELEMS 1e5
#define ZERO3_REUSE_ELEMS 1e9

double cp_zero_bucket_bytes(const cp_predictor *p, const cp_predict_opts *o)
{
    return o->bucket_mb > 0 ? o->bucket_mb * MIB : CP_ZERO_BUCKET_ELEMS * p->elem_bytes;
}

/* Eq. Z1, ZeRO-2: reduce-scatter the buckets during backward (every
 * micro-batch's, eq. Z4), step the optimizer on the shard, all-gather the
 * parameters.  ZeRO-1 reduce-scatters them once, after the last
 * micro-batch's backward.  *end: the iteration without the optimizer. */
static int run_zero2(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                     cp_prediction *out, double *end, cp_err *e)
{
    cp_buckets bk;
    double cap = cp_zero_bucket_bytes(p, o);
    double stream = 0, total = 0, full, micro = p->comp.fwd_total + p->comp.bwd_total;
    double backward_end = p->comp.lead_ms + micro;
    int stage1 = o->framework == CP_FW_ZERO1;
    int i, k, n, K = o->accum_steps > 1 ? o->accum_steps : 1, reduces = stage1 ? 1 : K;
    int rc = cp_buckets_ddp(p->model, &p->comp, p->elem_bytes, cap, cap, &bk, e);
    if (rc)
        return rc;
    for (i = 0; i < bk.n; i++)
        total += bk.b[i].bytes;
    /* reduce-scatters, then the full all-gathers and the rest */
    if ((rc = cp_shard_alloc_runs(out, keep, bk.n * (o->offload == CP_OFFLOAD_CPU ? 2 : 1),
                                  reduces, 3, &n, e))) {
        cp_buckets_free(&bk);
        return rc;
    }
    /* eq. Z4: every micro-batch reduce-scatters its buckets; the bucket
     * times are the last micro-batch's, k earlier ones k x micro before */
    for (k = reduces - 1; k >= 0; k--)
        for (i = 0; i < bk.n; i++)
            if (cp_shard_reduce_bucket(p, s, o->offload == CP_OFFLOAD_CPU, bk.b[i].bytes,
                                       bk.b[i].count, stage1 ? backward_end : bk.b[i].ready_ms - k * micro,
                                       &stream, out, n) < 0) {
                cp_buckets_free(&bk);
                return CP_UNAVAILABLE;
            }
    cp_buckets_free(&bk);
    *end = backward_end;
    if (stream > *end)
        *end = stream;
    /* the optimizer steps the shard, then the new parameters are gathered */
    stream = *end;
    for (k = 0; k < K; k++)
        if (cp_shard_micro_spans(out, k * micro, k * micro + p->comp.fwd_total,
                                 (k + 1) * micro))
            return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (cp_shard_optimizer_step(p, o, *end, &stream, out, n))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    full = floor(total / cap);
    if (cp_shard_issue_n(p, s, CP_OP_ALLGATHER, cap, full, 0, stream, &stream, out, n) < 0 ||
        cp_shard_issue(p, s, CP_OP_ALLGATHER, total - full * cap, 0, stream, &stream, out,
                       n) < 0)
        return CP_UNAVAILABLE;
    *end = stream - cp_shard_gpu_step_ms(p, o, p->topo->ngpus);
    return CP_OK;
}

/* Scratch of run_zero3, per layer: its parameters (numel), those it
 * fetches (fnumel, fbytes, fnt: the tensors not persistent), its gradient
 * bytes and tensors (lbytes, lnt), its fetch group (-1: nothing to fetch);
 * per group: bytes, tensors, its first and last layer, whether backward
 * gathers it again, when its gather ends. */
typedef struct zero3_state {
    double *numel, *fnumel, *fbytes, *lbytes;
    int *fnt, *lnt, *group;
    double *gbytes, *gdone;
    int *gnt, *gfirst, *glast, *regather;
    int G;                /* groups */
    double persist_bytes; /* gathered once after the optimizer step */
    int persist_nt;
    int offload;          /* optimizer on the host: shards copied there (eq. Z6) */
} zero3_state;

static void zero3_free(zero3_state *z)
{
    free(z->numel);
    free(z->fnumel);
    free(z->fbytes);
    free(z->lbytes);
    free(z->fnt);
    free(z->lnt);
    free(z->group);
    free(z->gbytes);
    free(z->gdone);
    free(z->gnt);
    free(z->gfirst);
    free(z->glast);
    free(z->regather);
}

/* Eq. Z5: tensors of fewer than ZERO3_PERSIST_ELEMS elements persist
 * (never partitioned, never gathered for compute); layers with tensors to
 * fetch form fetch groups of consecutive layers in forward order, each of
 * at most ZERO3_PREFETCH_ELEMS fetched parameters (at least one layer),
 * what one prefetch brings in.  A group is gathered again in backward only
 * when the parameters used between its forward and its backward (twice
 * those of the layers after it) exceed ZERO3_REUSE_ELEMS; otherwise it is
 * kept.  Returns -1 when out of memory. */
static int zero3_setup(const cp_predictor *p, zero3_state *z)
{
    const cp_model *m = p->model;
    size_t n = (size_t)m->nlayers + 1;
    double acc = 0, after = 0;
    int l, k, g = -1;
    memset(z, 0, sizeof *z);
    z->numel = calloc(n, sizeof *z->numel);
    z->fnumel = calloc(n, sizeof *z->fnumel);
    z->fbytes = calloc(n, sizeof *z->fbytes);
    z->lbytes = calloc(n, sizeof *z->lbytes);
    z->fnt = calloc(n, sizeof *z->fnt);
    z->lnt = calloc(n, sizeof *z->lnt);
    z->group = calloc(n, sizeof *z->group);
    z->gbytes = calloc(n, sizeof *z->gbytes);
    z->gdone = calloc(n, sizeof *z->gdone);
    z->gnt = calloc(n, sizeof *z->gnt);
    z->gfirst = calloc(n, sizeof *z->gfirst);
    z->glast = calloc(n, sizeof *z->glast);
    z->regather = calloc(n, sizeof *z->regather);
    if (!z->numel || !z->fnumel || !z->fbytes || !z->lbytes || !z->fnt || !z->lnt ||
        !z->group || !z->gbytes || !z->gdone || !z->gnt || !z->gfirst || !z->glast ||
        !z->regather)
        return -1;
    for (k = 0; k < m->ntensors; k++) {
        const cp_tensor *x = &m->tensors[k];
        double bytes = (double)x->numel * p->elem_bytes;
        z->numel[x->layer] += (double)x->numel;
        z->lbytes[x->layer] += bytes;
        z->lnt[x->layer]++;
        if ((double)x->numel < ZERO3_PERSIST_ELEMS) {
            z->persist_bytes += bytes;
            z->persist_nt++;
        } else {
            z->fnumel[x->layer] += (double)x->numel;
            z->fbytes[x->layer] += bytes;
            z->fnt[x->layer]++;
        }
    }
    for (l = 0; l < m->nlayers; l++) {
        z->group[l] = -1;
        if (!(z->fnumel[l] > 0))
            continue;
        if (g < 0 || acc + z->fnumel[l] > ZERO3_PREFETCH_ELEMS) {
            g++;
            acc = 0;
            z->gfirst[g] = l;
        }
        acc += z->fnumel[l];
        z->group[l] = g;
        z->glast[g] = l;
        z->gbytes[g] += z->fbytes[l];
        z->gnt[g] += z->fnt[l];
    }
    z->G = g + 1;
    for (l = m->nlayers - 1, g = z->G - 1; l >= 0; l--) {
        if (g >= 0 && l == z->glast[g]) {
            z->regather[g] = 2 * after > ZERO3_REUSE_ELEMS;
            g--;
        }
        after += z->numel[l];
    }
    return 0;
}

/* One ZeRO-3 micro-batch from *t (eq. Z5): forward gathers group 0 at the
 * start and group g + 1 when group g's first layer starts (the prefetch);
 * backward gathers again, one group ahead, the groups not kept; gradients
 * fill reduce buckets of `cap` bytes in backward order, each
 * reduce-scattered as it fills, the rest when backward ends.  Returns 0,
 * CP_UNAVAILABLE when the strategy cannot run an operation, -1 when out of
 * memory. */
static int zero3_micro(const cp_predictor *p, cp_strategy s, zero3_state *z, double cap,
                       double *t, double *stream, cp_prediction *out, int n)
{
    const cp_compute *c = &p->comp;
    int L = p->model->nlayers, l, g, nt = 0;
    double acc = 0, t0 = *t, first = -1, fwd_end;
    if (z->G > 0 && (z->gdone[0] = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, CP_SC_ALL,
                                                     z->gbytes[0], 1, z->gnt[0], *t, stream,
                                                     out, n)) < 0)
        return CP_UNAVAILABLE;
    for (l = 0; l < L; l++) {
        g = z->group[l];
        if (g >= 0 && l == z->gfirst[g] && g + 1 < z->G &&
            (z->gdone[g + 1] = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, CP_SC_ALL,
                                                 z->gbytes[g + 1], 1, z->gnt[g + 1], *t,
                                                 stream, out, n)) < 0)
            return CP_UNAVAILABLE;
        if (g >= 0 && z->gdone[g] > *t)
            *t = z->gdone[g];
        if (first < 0)
            first = *t;
        *t += c->fwd_ms[l];
    }
    fwd_end = *t;
    for (l = L - 1; l >= 0; l--) {
        g = z->group[l];
        if (g >= 0 && l == z->glast[g]) {
            /* group g was prefetched when group g + 1's backward began,
             * unless it is the first backward meets */
            if (z->regather[g] && g == z->G - 1 &&
                (z->gdone[g] = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, CP_SC_ALL, z->gbytes[g],
                                                 1, z->gnt[g], *t, stream, out, n)) < 0)
                return CP_UNAVAILABLE;
            if (z->regather[g] && z->gdone[g] > *t)
                *t = z->gdone[g];
            if (g > 0 && z->regather[g - 1] &&
                (z->gdone[g - 1] = cp_shard_issue_in(p, s, CP_OP_ALLGATHER, CP_SC_ALL,
                                                     z->gbytes[g - 1], 1, z->gnt[g - 1], *t,
                                                     stream, out, n)) < 0)
                return CP_UNAVAILABLE;
        }
        *t += c->bwd_ms[l];
        acc += z->lbytes[l];
        nt += z->lnt[l];
        if (acc >= cap) {
            if (cp_shard_reduce_bucket(p, s, z->offload, acc, nt, *t, stream, out, n) < 0)
                return CP_UNAVAILABLE;
            acc = 0;
            nt = 0;
        }
    }
    if (cp_shard_reduce_bucket(p, s, z->offload, acc, nt, *t, stream, out, n) < 0)
        return CP_UNAVAILABLE;
    return cp_shard_micro_spans(out, first < 0 ? t0 : first, fwd_end, *t);
}

/* Eq. Z5, DeepSpeed ZeRO stage 3 with its defaults: K micro-batches
 * (zero3_micro), the optimizer on the shard, then the persistent
 * parameters gathered.  *end: the iteration without the optimizer. */
static int run_zero3(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                     cp_prediction *out, double *end, cp_err *e)
{
    double cap = cp_zero_bucket_bytes(p, o);
    double t = 0, stream = 0;
    double per = (o->offload ? 4.0 : 3.0) * p->model->nlayers * (p->pool_params ? 2 : 1) + 3;
    int k, K = o->accum_steps > 1 ? o->accum_steps : 1, rc, cap_runs;
    zero3_state z;
    if ((rc = cp_shard_alloc_runs(out, keep, per, K, 0, &cap_runs, e)))
        return rc;
    if (zero3_setup(p, &z)) {
        zero3_free(&z);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    z.offload = o->offload == CP_OFFLOAD_CPU;
    for (k = 0; k < K && rc == CP_OK; k++)
        rc = zero3_micro(p, s, &z, cap, &t, &stream, out, cap_runs);
    if (rc == CP_OK) {
        *end = t > stream ? t : stream;
        stream = *end;
        if (cp_shard_optimizer_step(p, o, *end, &stream, out, cap_runs))
            rc = -1;
        else if (cp_shard_issue_in(p, s, CP_OP_ALLGATHER, CP_SC_ALL, z.persist_bytes, 1,
                                   z.persist_nt, stream, &stream, out, cap_runs) < 0)
            rc = CP_UNAVAILABLE;
        else
            *end = stream - cp_shard_gpu_step_ms(p, o, p->topo->ngpus);
    }
    zero3_free(&z);
    return rc < 0 ? cp_fail(e, CP_EINTERNAL, "out of memory") : rc;
}

double cp_sharded_gathered_bytes(const cp_predictor *p, const cp_predict_opts *o)
{
    double a, b, x = -1;
    if (o->framework == CP_FW_FSDP) {
        x = cp_fsdp_gathered_bytes(p, o);
    } else if (o->framework == CP_FW_ZERO3) {
        zero3_state z;
        int g;
        if (zero3_setup(p, &z) == 0) {
            double *re = calloc((size_t)z.G + 1, sizeof *re);
            if (re) {
                x = z.persist_bytes;
                for (g = 0; g < z.G; g++) {
                    if (z.regather[g])
                        re[g] = z.gbytes[g];
                    else
                        x += z.gbytes[g]; /* kept from forward to backward */
                }
                cp_shard_two_largest(re, z.G, &a, &b);
                x += a + b;
                free(re);
            }
        }
        zero3_free(&z);
    } else {
        x = 0;
    }
    return x;
}

int cp_predict_sharded(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
                       int keep_runs, cp_prediction *out, cp_err *e)
{
    int hybrid = o->framework == CP_FW_FSDP && (o->fsdp_sharding & CP_SHARD_HYBRID);
    int group = hybrid ? p->coll.per_host : p->topo->ngpus; /* GPUs sharing a shard */
    double end = 0, opt = cp_shard_gpu_step_ms(p, o, group);
    int rc;
    memset(out, 0, sizeof *out);
    out->strategy = s;
    if (o->offload == CP_OFFLOAD_CPU && !(p->coll.host_mem_gbs > 0)) {
        snprintf(out->why_not, sizeof out->why_not,
                 "optimizer offload needs CPU sockets with reduce_gbs (how fast host memory "
                 "streams) on the GPUs' host");
        return CP_OK;
    }
    /* each GPU steps the optimizer on its 1/N shard */
    out->compute_ms = p->comp.lead_ms + p->comp.fwd_total + p->comp.bwd_total + opt;
    rc = o->framework == CP_FW_FSDP    ? cp_fsdp_run(p, s, o, keep_runs, out, &end, e)
         : o->framework == CP_FW_ZERO3 ? run_zero3(p, s, o, keep_runs, out, &end, e)
                                       : run_zero2(p, s, o, keep_runs, out, &end, e);
    if (rc == CP_UNAVAILABLE && s == CP_S_POOL) {
        cp_prediction_free(out);
        out->available = 0;
        snprintf(out->why_not, sizeof out->why_not, "%s", cp_pool_strategy_why_not(p));
        return CP_OK;
    }
    if (rc == CP_UNAVAILABLE) {
        cp_prediction_free(out);
        out->available = 0;
        snprintf(out->why_not, sizeof out->why_not,
                 "%s shards gradients with ReduceScatter and AllGather, which %s cannot "
                 "run (ring, auto and best can: NCCL's tree, hier, CollNet and the "
                 "parameter server are AllReduce algorithms)",
                 cp_framework_name(o->framework), cp_strategy_name(s));
        return CP_OK;
    }
    if (rc)
        return rc;
    out->available = 1;
    out->iteration_ms = end + opt;
    if (o->offload == CP_OFFLOAD_POOL) { /* eq. PL8: the step's pool copies communicate */
        double pc = cp_pool_offload_step_ms(p, o, group);
        out->compute_ms -= pc;
        out->comm_ms += pc;
    }
    /* ZeRO-2 and ZeRO-3 step before their last gathers (their spans say so) */
    if (o->framework == CP_FW_FSDP &&
        cp_prediction_span(out, end, out->iteration_ms, CP_SPAN_OPTIMIZER))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    out->exposed_ms = out->iteration_ms - out->compute_ms;
    if (out->exposed_ms < 0)
        out->exposed_ms = 0;
    return CP_OK;
}
