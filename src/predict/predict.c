/*
 * predict.c - the timelines of the frameworks that all-reduce gradients,
 * DDP, Horovod and TensorFlow's MirroredStrategy, under each strategy (see
 * predict.h and docs/model.md), and cp_predict, which hands the sharded
 * frameworks to sharded.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/pool_hooks.h"
#include "predict/sharded.h"

#define MIB CP_MIB

/* Bytes of one full set of gradients, of the element size they travel in. */
static double grad_bytes(const cp_predictor *p)
{
    return (double)p->model->params * p->elem_bytes;
}

/* Time in ms of one AllReduce bucket under strategy s; negative when
 * unavailable.  *how names the algorithm and *proto its protocol. */
static double bucket_ms(const cp_predictor *p, cp_strategy s, double bytes, const char **how,
                        const char **proto)
{
    cp_coll_alg alg;
    double ms;
    ms = cp_strategy_coll_ms(p, s, CP_OP_ALLREDUCE, bytes, &alg, proto);
    *how = s == CP_S_MPI    ? "mpi"
           : s == CP_S_POOL ? "pool"
           : alg == CP_ALGS ? "none"
                            : cp_coll_alg_name(alg);
    return ms;
}

/* Why a strategy cannot run on this machine under this framework. */
static void why_not(const cp_predictor *p, cp_strategy s, cp_framework f, cp_prediction *out)
{
    cp_coll_alg alg = cp_strategy_alg(s);
    if (s == CP_S_POOL)
        snprintf(out->why_not, sizeof out->why_not, "%s", cp_pool_strategy_why_not(p));
    else if (s == CP_S_MPI)
        snprintf(out->why_not, sizeof out->why_not, "%s",
                 p->coll.mpi.available ? "the MPI model prices AllReduce only"
                                       : p->coll.mpi.why_not);
    else if (alg == CP_ALGS && f == CP_FW_MIRRORED)
        snprintf(out->why_not, sizeof out->why_not,
                 "the COARSE planner routes DDP's buckets as they become ready; mirrored "
                 "all-reduces one pack after backward");
    else if (alg != CP_ALGS)
        snprintf(out->why_not, sizeof out->why_not, "%s",
                 p->coll.cost[CP_OP_ALLREDUCE][alg].why_not);
    else
        snprintf(out->why_not, sizeof out->why_not, "%s needs the COARSE planner",
                 cp_strategy_name(s));
}

/* Eq. P10, DDP's fp16/bf16 compression hook on a bucket of `bytes`: the
 * all-reduce moves h = bytes x 2 / elem_bytes; the hook casts the bucket
 * down (read bytes, write h), divides it by N in place (read and write h),
 * and casts the sum back (read h, write bytes): 2 bytes + 4 h of GPU memory
 * traffic, at mem_gbs, on the bucket's way through communication. */
static double hook_cast_ms(const cp_predictor *p, const cp_predict_opts *o, double bytes)
{
    double h = bytes * o->comm_hook / p->elem_bytes;
    return p->mem_gbs > 0 ? (2 * bytes + 4 * h) / (p->mem_gbs * 1e6) : 0;
}

/* DDP: buckets on one stream in bucket order (eqs. P3, P4). */
static int run_ddp(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                   cp_prediction *out, double *finish, cp_err *e)
{
    cp_buckets bk;
    double first, cap;
    int i, rc;
    cp_ddp_caps(o->first_bucket_mb, o->bucket_mb, o->apex_elems, p->elem_bytes, &first, &cap);
    rc = cp_buckets_ddp(p->model, &p->comp, p->elem_bytes, first, cap, &bk, e);
    if (rc)
        return rc;
    if (keep && !(out->runs = calloc((size_t)bk.n + 1, sizeof *out->runs))) {
        cp_buckets_free(&bk);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    *finish = 0;
    for (i = 0; i < bk.n; i++) {
        const char *how = "none", *proto = "-";
        double wire = o->comm_hook ? bk.b[i].bytes * o->comm_hook / p->elem_bytes
                                   : bk.b[i].bytes;
        double d = bucket_ms(p, s, wire, &how, &proto), start;
        if (d < 0) {
            cp_buckets_free(&bk);
            return CP_UNAVAILABLE;
        }
        if (o->comm_hook && p->topo->ngpus > 1)
            d += hook_cast_ms(p, o, bk.b[i].bytes);
        start = bk.b[i].ready_ms > *finish ? bk.b[i].ready_ms : *finish;
        *finish = start + d;
        out->comm_ms += d;
        cp_prediction_run(out, bk.n + 1, bk.b[i].bytes, bk.b[i].count, bk.b[i].ready_ms, start, *finish,
                how, proto);
    }
    cp_buckets_free(&bk);
    return CP_OK;
}

/* Eq. P7 for Horovod, on its communication stream: a fused buffer is
 * copied in and (scaled by 1/N, the average) copied out, a lone tensor is
 * only scaled in place; each pass reads and writes every byte once. */
static double fusion_copy_ms(const cp_predictor *p, double bytes, int count)
{
    return (count > 1 ? 2 : 1) * cp_copy_ms(bytes, p->mem_gbs);
}

/* Tensors by ready time; ties (same layer) in reverse registration order,
 * the order autograd produces them.  qsort has no context argument, hence
 * the file-level pointer; it is set and used only inside run_horovod. */
static const double *sort_ready;
static int cmp_ready(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_ready[x] != sort_ready[y])
        return sort_ready[x] < sort_ready[y] ? -1 : 1;
    return y - x;
}

/* Horovod: every cycle, fuse what became ready into buffers of at most the
 * fusion threshold and queue them on the communication stream, each
 * starting when the stream is free; the cycles tick on, since the loop
 * thread hands the work to the GPU and does not wait for it (eq. P5). */
static int run_horovod(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
                       int keep, cp_prediction *out, double *finish, cp_err *e)
{
    const cp_model *m = p->model;
    int nt = m->ntensors, next = 0, k;
    int *idx = malloc((size_t)nt * sizeof *idx);
    double *ready = malloc((size_t)nt * sizeof *ready), tick = 0, fuse = o->fusion_mb * MIB;
    *finish = 0;
    if (p->topo->ngpus <= 1) { /* one GPU: no background cycle, nothing to wait for */
        free(idx);
        free(ready);
        return CP_OK;
    }
    if (!idx || !ready || (keep && !(out->runs = calloc((size_t)nt + 1, sizeof *out->runs)))) {
        free(idx);
        free(ready);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (k = 0; k < nt; k++) {
        idx[k] = k;
        ready[k] = p->comp.ready_ms[m->tensors[k].layer];
    }
    sort_ready = ready;
    qsort(idx, (size_t)nt, sizeof *idx, cmp_ready);
    while (next < nt) {
        double end = *finish; /* the communication stream is free from here */
        if (ready[idx[next]] > tick) { /* idle cycles until something is ready */
            double gap = ready[idx[next]] - tick;
            tick += o->cycle_ms * (double)(long long)(gap / o->cycle_ms + 1 - 1e-12);
            if (tick < ready[idx[next]])
                tick += o->cycle_ms;
            continue;
        }
        while (next < nt && ready[idx[next]] <= tick) {
            double bytes = 0, d, rmax = 0;
            int count = 0;
            const char *how = "none", *proto = "-";
            while (next < nt && ready[idx[next]] <= tick &&
                   (count == 0 || bytes + (double)m->tensors[idx[next]].numel * p->elem_bytes <= fuse)) {
                bytes += (double)m->tensors[idx[next]].numel * p->elem_bytes;
                if (ready[idx[next]] > rmax)
                    rmax = ready[idx[next]];
                count++;
                next++;
            }
            d = bucket_ms(p, s, bytes, &how, &proto);
            if (d < 0) {
                free(idx);
                free(ready);
                return CP_UNAVAILABLE;
            }
            d += fusion_copy_ms(p, bytes, count);
            if (end < tick)
                end = tick;
            cp_prediction_run(out, nt + 1, bytes, count, rmax, end, end + d, how, proto);
            /* the wait of the buffer's last gradient for this cycle is
             * Horovod's coordination: counted as communication (the stream
             * idles after backward only until a cycle, so exposed <= comm
             * holds); waiting behind earlier buffers on the stream is not */
            out->comm_ms += d + (tick - rmax);
            end += d;
        }
        *finish = end;
        tick += o->cycle_ms; /* the loop thread does not wait for the GPU */
    }
    free(idx);
    free(ready);
    return CP_OK;
}

/* TensorFlow's MirroredStrategy (eq. P11): apply_gradients reduces once
 * backward is over, every gradient concatenated into one pack
 * (NcclAllReduce's num_packs=1), all-reduced, then split back; the pack is
 * ready at `ready`, after the concatenation. */
static int run_mirrored(const cp_predictor *p, cp_strategy s, int keep, double ready,
                        cp_prediction *out, double *finish, cp_err *e)
{
    const char *how = "none", *proto = "-";
    double bytes = grad_bytes(p), d;
    *finish = 0;
    if (p->topo->ngpus <= 1) /* one replica: nothing to pack or reduce */
        return CP_OK;
    if ((d = bucket_ms(p, s, bytes, &how, &proto)) < 0)
        return CP_UNAVAILABLE;
    if (keep && !(out->runs = calloc(1, sizeof *out->runs)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    *finish = ready + d;
    out->comm_ms = d;
    cp_prediction_run(out, 1, bytes, p->model->ntensors, ready, ready, *finish, how, proto);
    return CP_OK;
}

int cp_predict(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
               int keep_runs, cp_prediction *out, cp_err *e)
{
    double finish = 0, end_compute = p->comp.lead_ms + p->comp.fwd_total + p->comp.bwd_total;
    int rc;
    if (cp_framework_sharded(o->framework))
        return cp_predict_sharded(p, s, o, keep_runs, out, e);
    memset(out, 0, sizeof *out);
    out->strategy = s;
    end_compute += p->pack_ms;
    out->compute_ms = cp_compute_total(&p->comp) + p->pack_ms + p->copy_out_ms;
    rc = o->framework == CP_FW_HOROVOD    ? run_horovod(p, s, o, keep_runs, out, &finish, e)
         : o->framework == CP_FW_MIRRORED ? run_mirrored(p, s, keep_runs, end_compute, out,
                                                         &finish, e)
                                          : run_ddp(p, s, o, keep_runs, out, &finish, e);
    if (rc == CP_UNAVAILABLE) {
        cp_prediction_free(out);
        out->available = 0;
        why_not(p, s, o->framework, out);
        return CP_OK;
    }
    if (rc)
        return rc;
    out->available = 1;
    /* eq. P6 */
    out->iteration_ms = (finish > end_compute ? finish : end_compute) + p->copy_out_ms +
                        p->comp.optimizer_ms;
    out->exposed_ms = out->iteration_ms - out->compute_ms;
    if (out->exposed_ms < 0)
        out->exposed_ms = 0;
    return cp_prediction_ddp_spans(p, out) ? cp_fail(e, CP_EINTERNAL, "out of memory") : CP_OK;
}
