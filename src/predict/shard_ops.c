/*
 * shard_ops.c - the communication stream of the sharded timelines (see
 * shard_ops.h and docs/model.md eqs. Z1-Z6): what each operation is called
 * on the timeline, its time in its scope under a strategy, and the queue
 * it waits in.
 */
#include <stdlib.h>

#include "predict/pool_hooks.h"
#include "predict/shard_ops.h"

/* Operations a timeline may hold before it is refused (a few hundred MB). */
#define MAX_RUNS (1 << 22)

/* Room for the timeline of K micro-batches of up to `per` operations plus
 * `extra` (when keep): CP_OK, CP_EINPUT when it would pass MAX_RUNS, or
 * CP_EINTERNAL out of memory.  *cap is the room, kept or not. */
int cp_shard_alloc_runs(cp_prediction *out, int keep, double per, int K, double extra,
                        int *cap, cp_err *e)
{
    *cap = (int)(per * K + extra);
    if (!keep)
        return CP_OK;
    if (per * K + extra > MAX_RUNS)
        return cp_fail(e, CP_EINPUT, "a timeline of %d micro-batches of up to %.0f operations "
                       "is too long to print: use fewer --accum-steps", K, per);
    if (!(out->runs = calloc((size_t)*cap, sizeof *out->runs)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    return CP_OK;
}

/* What the timeline calls each operation: the op and its algorithm. */
static const char *const how_names[2][CP_ALGS] = {
    {"allgather/ring", "allgather/tree", "allgather/nvls", "allgather/hier", "allgather/ps",
     "allgather/collnet"},
    {"reducescatter/ring", "reducescatter/tree", "reducescatter/nvls", "reducescatter/hier",
     "reducescatter/ps", "reducescatter/collnet"}};

/* What the timeline calls the in-host operations, by algorithm. */
static const char *scoped_name(cp_coll_op op, cp_coll_alg alg)
{
    if (op == CP_OP_REDUCESCATTER)
        return alg == CP_ALG_NVLS ? "reducescatter/host-nvls" : "reducescatter/host-ring";
    return alg == CP_ALG_NVLS ? "allgather/host-nvls" : "allgather/host-ring";
}

/* Time in ms of `op` on `bytes` in cp_shard_scope sc under strategy s; negative when
 * s cannot run it.  In a host, ring is the hierarchical scheme's in-host
 * ring (phase 0 reduces, phase 2 gathers), auto and best also NVLS's
 * in-host phase where the switches reduce; among peers, its ring of peers
 * (phase 1), auto and best also a tree of peers (cp_coll_peers_us).  *how
 * and *proto name what ran. */
static double scoped_ms(const cp_predictor *p, cp_strategy s, cp_coll_op op,
                        cp_shard_scope sc, double bytes, const char **how, const char **proto)
{
    cp_coll_alg alg = CP_ALG_HIER;
    cp_proto pr = CP_PROTO_SIMPLE, pn;
    int k = op == CP_OP_REDUCESCATTER ? 0 : 2; /* hier's in-host phases */
    double us, nv;
    if (sc == CP_SC_ALL) {
        us = cp_strategy_coll_ms(p, s, op, bytes, &alg, proto);
        *how = alg == CP_ALGS ? "none" : how_names[op == CP_OP_REDUCESCATTER][alg];
        if (s == CP_S_POOL)
            *how = op == CP_OP_REDUCESCATTER ? "reducescatter/pool" : "allgather/pool";
        return us;
    }
    if (s != CP_S_RING && s != CP_S_AUTO && s != CP_S_BEST)
        return -1;
    if (sc == CP_SC_PEERS) { /* ring of peers; auto and best: or NCCL's tree */
        int tree = 0;
        us = cp_coll_peers_us(&p->coll, bytes, s != CP_S_RING, &pr, &tree);
        *how = tree ? "allreduce/peers-tree" : "allreduce/peers";
        *proto = cp_proto_name(pr);
        return us < 0 ? -1 : us / 1e3;
    }
    us = cp_coll_phase_us(&p->coll, CP_ALG_HIER, k, bytes, &pr);
    if (sc == CP_SC_HOST && s != CP_S_RING &&
        (nv = cp_coll_phase_us(&p->coll, CP_ALG_NVLS, k, bytes, &pn)) >= 0 &&
        (us < 0 || nv < us)) {
        us = nv;
        pr = pn;
        alg = CP_ALG_NVLS;
    }
    *how = scoped_name(op, alg);
    *proto = cp_proto_name(pr);
    return us < 0 ? -1 : us / 1e3;
}

/* An operation of d ms queued on the communication stream: it starts when
 * issued (`at`) and the stream is free, counts as communication, and goes
 * on the timeline; returns its finish. */
static double queue_op(cp_prediction *out, int cap, double *stream, double at, double d,
                       double bytes, int nt, const char *how, const char *proto)
{
    double start = at > *stream ? at : *stream;
    *stream = start + d;
    out->comm_ms += d;
    cp_prediction_run(out, cap, bytes, nt, at, start, *stream, how, proto);
    return *stream;
}

/* `times` operations of `bytes` each in cp_shard_scope sc, back to back on the
 * communication stream (one timeline entry): they start when issued and
 * the stream is free; returns their finish, -1 when the strategy cannot run
 * them. */
double cp_shard_issue_in(const cp_predictor *p, cp_strategy s, cp_coll_op op,
                         cp_shard_scope sc, double bytes, double times, int nt, double at,
                         double *stream, cp_prediction *out, int cap)
{
    const char *how, *proto;
    double d;
    if (bytes <= 0 || times <= 0) /* a layer without parameters: nothing to move */
        return at;
    if ((d = scoped_ms(p, s, op, sc, bytes, &how, &proto)) < 0)
        return -1;
    if (op == CP_OP_ALLGATHER && p->pool_params) { /* eq. PL8: each GPU's shard first */
        double shard = bytes / (sc == CP_SC_ALL ? p->topo->ngpus : p->coll.per_host);
        at = queue_op(out, cap, stream, at, times * cp_pool_copy_ms(p, shard, 0),
                      shard * times, 0, "pool->gpu", "-");
    }
    return queue_op(out, cap, stream, at, d * times, bytes * times, nt, how, proto);
}

/* The same over every GPU. */
double cp_shard_issue_n(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                        double times, int nt, double at, double *stream, cp_prediction *out,
                        int cap)
{
    return cp_shard_issue_in(p, s, op, CP_SC_ALL, bytes, times, nt, at, stream, out, cap);
}

/* One operation: issue_n once. */
double cp_shard_issue(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                      int nt, double at, double *stream, cp_prediction *out, int cap)
{
    return cp_shard_issue_n(p, s, op, bytes, 1, nt, at, stream, out, cap);
}

double cp_offload_step_bytes(int optimizer, int grad_bytes)
{
    /* read the gradient; read and write the fp32 parameter and each
     * moment; write the 16-bit copy the GPU gets back under mixed precision */
    return 4 + 8 + (optimizer == CP_OPT_SGD ? 8 : 16) + (grad_bytes < 4 ? 2 : 0);
}

/* The GPU's share of the measured optimizer step: its 1/N shard, or
 * nothing when the optimizer runs on the host (eq. Z6). */
double cp_shard_gpu_step_ms(const cp_predictor *p, const cp_predict_opts *o, int group)
{
    if (o->offload == CP_OFFLOAD_POOL) /* eq. PL8: states to and from the pool around it */
        return p->comp.optimizer_ms / (group > 0 ? group : 1) +
               cp_pool_offload_step_ms(p, o, group);
    return o->offload ? 0 : p->comp.optimizer_ms / (group > 0 ? group : 1);
}

/* Eq. Z6: a copy of `bytes` between every GPU and its socket at once (up:
 * to host memory), queued on the stream from `at`; returns its finish. */
static double host_copy(const cp_predictor *p, double bytes, int up, double at, double *stream,
                        cp_prediction *out, int cap)
{
    const cp_coll *c = &p->coll;
    double d = c->host_lat_us / 1e3 + bytes / ((up ? c->d2h_gbs : c->h2d_gbs) * 1e6);
    return queue_op(out, cap, stream, at, d, bytes, 0, up ? "d2h" : "h2d", "-");
}

/* A gradient bucket reduced: its ReduceScatter, and under optimizer
 * offload each GPU's shard of it copied to host memory right after, on
 * the same stream (eq. Z6).  The finish, or -1 when s cannot run it. */
double cp_shard_reduce_bucket(const cp_predictor *p, cp_strategy s, int offload, double bytes,
                              int nt, double at, double *stream, cp_prediction *out, int cap)
{
    double f = cp_shard_issue_in(p, s, CP_OP_REDUCESCATTER, CP_SC_ALL, bytes, 1, nt, at, stream,
                                 out, cap);
    if (f < 0 || !offload)
        return f;
    return host_copy(p, bytes / p->topo->ngpus, 1, f, stream, out, cap);
}

/* The optimizer step once the gradients are reduced (from `at`, the
 * stream free from *stream): on the GPU, its shard of the measured step;
 * under offload, the host's sockets stepping their GPUs' shards (Psi /
 * hosts parameters of cp_offload_step_bytes each, at host_mem_gbs), then
 * each GPU's updated shard copied back (eq. Z6); the host's step counts
 * as compute.  *stream advances to the step's end; the step goes on the
 * chart.  0, or -1 when out of memory. */
int cp_shard_optimizer_step(const cp_predictor *p, const cp_predict_opts *o, double at,
                            double *stream, cp_prediction *out, int cap)
{
    double start = at > *stream ? at : *stream, cpu;
    if (o->offload != CP_OFFLOAD_CPU) {
        *stream = start + cp_shard_gpu_step_ms(p, o, p->topo->ngpus);
        return cp_prediction_span(out, start, *stream, CP_SPAN_OPTIMIZER);
    }
    cpu = (double)p->model->params / p->coll.nhosts *
          cp_offload_step_bytes(o->optimizer, p->elem_bytes) / (p->coll.host_mem_gbs * 1e6);
    *stream = start + cpu;
    out->compute_ms += cpu;
    if (cp_prediction_span(out, start, *stream, CP_SPAN_OPTIMIZER))
        return -1;
    host_copy(p, (double)p->model->params * p->elem_bytes / p->topo->ngpus, 0, *stream, stream,
              out, cap);
    return 0;
}

/* A micro-batch's forward [start, fwd_end] and backward [fwd_end, end] on
 * the compute stream, for the timeline chart: 0, or -1 when out of memory. */
int cp_shard_micro_spans(cp_prediction *out, double start, double fwd_end, double end)
{
    return cp_prediction_span(out, start, fwd_end, CP_SPAN_FORWARD) ||
                   cp_prediction_span(out, fwd_end, end, CP_SPAN_BACKWARD)
               ? -1
               : 0;
}

/* The two largest of n values (0 when absent). */
void cp_shard_two_largest(const double *v, int n, double *a, double *b)
{
    int i;
    *a = *b = 0;
    for (i = 0; i < n; i++) {
        if (v[i] > *a) {
            *b = *a;
            *a = v[i];
        } else if (v[i] > *b) {
            *b = v[i];
        }
    }
}
