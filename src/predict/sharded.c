/*
 * sharded.c - ZeRO-1, ZeRO-2, FSDP and ZeRO-3 timelines (see sharded.h and
 * docs/model.md, eqs. Z1-Z5).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/pool_strategy.h"
#include "predict/sharded.h"

#define MIB CP_MIB

/* DeepSpeed ZeRO-3's defaults, in parameters (elements):
 * stage3_prefetch_bucket_size, stage3_param_persistence_threshold and
 * stage3_max_reuse_distance (deepspeed/runtime/zero/config.py). */
#define ZERO3_PREFETCH_ELEMS 5e7
#define ZERO3_PERSIST_ELEMS 1e5
#define ZERO3_REUSE_ELEMS 1e9

/* Operations a timeline may hold before it is refused (a few hundred MB). */
#define MAX_RUNS (1 << 22)

/* Room for the timeline of K micro-batches of up to `per` operations plus
 * `extra` (when keep): CP_OK, CP_EINPUT when it would pass MAX_RUNS, or
 * CP_EINTERNAL out of memory.  *cap is the room, kept or not. */
static int alloc_runs(cp_prediction *out, int keep, double per, int K, double extra, int *cap,
                      cp_err *e)
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

/* Where an operation runs (eq. Z3): over every GPU; inside every host at
 * once (hybrid sharding's gathers and reduce-scatters); or among the
 * peers, the GPUs of one local rank across the hosts, every group at once
 * (hybrid sharding's all-reduce of each shard). */
typedef enum scope { SC_ALL, SC_HOST, SC_PEERS } scope;

/* What the timeline calls the in-host operations, by algorithm. */
static const char *scoped_name(cp_coll_op op, cp_coll_alg alg)
{
    if (op == CP_OP_REDUCESCATTER)
        return alg == CP_ALG_NVLS ? "reducescatter/host-nvls" : "reducescatter/host-ring";
    return alg == CP_ALG_NVLS ? "allgather/host-nvls" : "allgather/host-ring";
}

/* Time in ms of `op` on `bytes` in scope sc under strategy s; negative when
 * s cannot run it.  In a host, ring is the hierarchical scheme's in-host
 * ring (phase 0 reduces, phase 2 gathers), auto and best also NVLS's
 * in-host phase where the switches reduce; among peers, its ring of peers
 * (phase 1), auto and best also a tree of peers (cp_coll_peers_us).  *how
 * and *proto name what ran. */
static double scoped_ms(const cp_predictor *p, cp_strategy s, cp_coll_op op, scope sc,
                        double bytes, const char **how, const char **proto)
{
    cp_coll_alg alg = CP_ALG_HIER;
    cp_proto pr = CP_PROTO_SIMPLE, pn;
    int k = op == CP_OP_REDUCESCATTER ? 0 : 2; /* hier's in-host phases */
    double us, nv;
    if (sc == SC_ALL) {
        us = cp_strategy_coll_ms(p, s, op, bytes, &alg, proto);
        *how = alg == CP_ALGS ? "none" : how_names[op == CP_OP_REDUCESCATTER][alg];
        if (s == CP_S_POOL)
            *how = op == CP_OP_REDUCESCATTER ? "reducescatter/pool" : "allgather/pool";
        return us;
    }
    if (s != CP_S_RING && s != CP_S_AUTO && s != CP_S_BEST)
        return -1;
    if (sc == SC_PEERS) { /* ring of peers; auto and best: or NCCL's tree */
        int tree = 0;
        us = cp_coll_peers_us(&p->coll, bytes, s != CP_S_RING, &pr, &tree);
        *how = tree ? "allreduce/peers-tree" : "allreduce/peers";
        *proto = cp_proto_name(pr);
        return us < 0 ? -1 : us / 1e3;
    }
    us = cp_coll_phase_us(&p->coll, CP_ALG_HIER, k, bytes, &pr);
    if (sc == SC_HOST && s != CP_S_RING &&
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

/* `times` operations of `bytes` each in scope sc, back to back on the
 * communication stream (one timeline entry): they start when issued and
 * the stream is free; returns their finish, -1 when the strategy cannot run
 * them. */
static double issue_in(const cp_predictor *p, cp_strategy s, cp_coll_op op, scope sc,
                       double bytes, double times, int nt, double at, double *stream,
                       cp_prediction *out, int cap)
{
    const char *how, *proto;
    double d;
    if (bytes <= 0 || times <= 0) /* a layer without parameters: nothing to move */
        return at;
    if ((d = scoped_ms(p, s, op, sc, bytes, &how, &proto)) < 0)
        return -1;
    if (op == CP_OP_ALLGATHER && p->pool_params) { /* eq. PL8: each GPU's shard first */
        double shard = bytes / (sc == SC_ALL ? p->topo->ngpus : p->coll.per_host);
        at = queue_op(out, cap, stream, at, times * cp_pool_copy_ms(p, shard, 0),
                      shard * times, 0, "pool->gpu", "-");
    }
    return queue_op(out, cap, stream, at, d * times, bytes * times, nt, how, proto);
}

/* The same over every GPU. */
static double issue_n(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                      double times, int nt, double at, double *stream, cp_prediction *out,
                      int cap)
{
    return issue_in(p, s, op, SC_ALL, bytes, times, nt, at, stream, out, cap);
}

/* One operation: issue_n once. */
static double issue(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes, int nt,
                    double at, double *stream, cp_prediction *out, int cap)
{
    return issue_n(p, s, op, bytes, 1, nt, at, stream, out, cap);
}

double cp_zero_bucket_bytes(const cp_predictor *p, const cp_predict_opts *o)
{
    return o->bucket_mb > 0 ? o->bucket_mb * MIB : CP_ZERO_BUCKET_ELEMS * p->elem_bytes;
}

double cp_offload_step_bytes(int optimizer, int grad_bytes)
{
    /* read the gradient; read and write the fp32 parameter and each
     * moment; write the 16-bit copy the GPU gets back under mixed precision */
    return 4 + 8 + (optimizer == CP_OPT_SGD ? 8 : 16) + (grad_bytes < 4 ? 2 : 0);
}

/* The GPU's share of the measured optimizer step: its 1/N shard, or
 * nothing when the optimizer runs on the host (eq. Z6). */
static double gpu_step_ms(const cp_predictor *p, const cp_predict_opts *o, int group)
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
static double reduce_bucket(const cp_predictor *p, cp_strategy s, int offload, double bytes,
                            int nt, double at, double *stream, cp_prediction *out, int cap)
{
    double f = issue_in(p, s, CP_OP_REDUCESCATTER, SC_ALL, bytes, 1, nt, at, stream, out, cap);
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
static int optimizer_step(const cp_predictor *p, const cp_predict_opts *o, double at,
                          double *stream, cp_prediction *out, int cap)
{
    double start = at > *stream ? at : *stream, cpu;
    if (o->offload != CP_OFFLOAD_CPU) {
        *stream = start + gpu_step_ms(p, o, p->topo->ngpus);
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
static int micro_spans(cp_prediction *out, double start, double fwd_end, double end)
{
    return cp_prediction_span(out, start, fwd_end, CP_SPAN_FORWARD) ||
                   cp_prediction_span(out, fwd_end, end, CP_SPAN_BACKWARD)
               ? -1
               : 0;
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
    if ((rc = alloc_runs(out, keep, bk.n * (o->offload == CP_OFFLOAD_CPU ? 2 : 1), reduces, 3,
                         &n, e))) {
        cp_buckets_free(&bk);
        return rc;
    }
    /* eq. Z4: every micro-batch reduce-scatters its buckets; the bucket
     * times are the last micro-batch's, k earlier ones k x micro before */
    for (k = reduces - 1; k >= 0; k--)
        for (i = 0; i < bk.n; i++)
            if (reduce_bucket(p, s, o->offload == CP_OFFLOAD_CPU, bk.b[i].bytes, bk.b[i].count,
                              stage1 ? backward_end : bk.b[i].ready_ms - k * micro, &stream,
                              out, n) < 0) {
                cp_buckets_free(&bk);
                return 1;
            }
    cp_buckets_free(&bk);
    *end = backward_end;
    if (stream > *end)
        *end = stream;
    /* the optimizer steps the shard, then the new parameters are gathered */
    stream = *end;
    for (k = 0; k < K; k++)
        if (micro_spans(out, k * micro, k * micro + p->comp.fwd_total, (k + 1) * micro))
            return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (optimizer_step(p, o, *end, &stream, out, n))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    full = floor(total / cap);
    if (issue_n(p, s, CP_OP_ALLGATHER, cap, full, 0, stream, &stream, out, n) < 0 ||
        issue(p, s, CP_OP_ALLGATHER, total - full * cap, 0, stream, &stream, out, n) < 0)
        return 1;
    *end = stream - gpu_step_ms(p, o, p->topo->ngpus);
    return CP_OK;
}

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
    double f = issue_in(p, s, CP_OP_REDUCESCATTER, hybrid ? SC_HOST : SC_ALL, bytes, 1, nt,
                        at, stream, out, cap);
    if (f < 0 || !hybrid)
        return f;
    return issue_in(p, s, CP_OP_ALLREDUCE, SC_PEERS, bytes, 1, nt, f, stream, out, cap);
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
 * from *stream (eqs. Z2, Z3); both advance.  Returns 0, 1 when the
 * strategy cannot run an operation, -1 when out of memory. */
static int fsdp_micro(const fsdp_run *r, fsdp_state *f, double *t, double *stream)
{
    const cp_predictor *p = r->p;
    const cp_compute *c = &p->comp;
    const cp_model *m = p->model;
    cp_strategy s = r->s;
    scope in = r->hybrid ? SC_HOST : SC_ALL;
    int L = m->nlayers, l, u, U = r->U, n = r->cap, cur = -2;
    double g = 0, groot, fwd_end, t0 = *t, first = -1;
    cp_prediction *out = r->out;
    /* forward */
    if ((groot = issue_in(p, s, CP_OP_ALLGATHER, in, r->rootb, 1, r->rootnt, *t, stream, out,
                          n)) < 0)
        return 1;
    for (l = 0; l < L; l++) {
        u = f->unit[l];
        if (u >= 0 && u != cur) {
            double limit = u >= 2 && !r->keep_params ? f->fend[u - 2] : t0;
            if ((g = issue_in(p, s, CP_OP_ALLGATHER, in, f->ub[u], 1, f->unt[u], limit, stream,
                              out, n)) < 0)
                return 1;
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
                (g = issue_in(p, s, CP_OP_ALLGATHER, in, f->ub[u], 1, f->unt[u],
                              at > limit ? at : limit, stream, out, n)) < 0)
                return 1;
            if (u + 1 < U && reduce_unit(p, s, r->hybrid, f->ub[u + 1], f->unt[u + 1],
                                         f->bend[u + 1], stream, out, n) < 0)
                return 1;
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
        return 1;
    if (reduce_unit(p, s, r->hybrid, r->rootb, r->rootnt, *t, stream, out, n) < 0)
        return 1;
    return micro_spans(out, first < 0 ? t0 : first, fwd_end, *t);
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
static int run_fsdp(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
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
    if ((rc = alloc_runs(out, keep, per, K, 0, &r.cap, e)))
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
 * reduce-scattered as it fills, the rest when backward ends.  Returns 0, 1
 * when the strategy cannot run an operation, -1 when out of memory. */
static int zero3_micro(const cp_predictor *p, cp_strategy s, zero3_state *z, double cap,
                       double *t, double *stream, cp_prediction *out, int n)
{
    const cp_compute *c = &p->comp;
    int L = p->model->nlayers, l, g, nt = 0;
    double acc = 0, t0 = *t, first = -1, fwd_end;
    if (z->G > 0 && (z->gdone[0] = issue_in(p, s, CP_OP_ALLGATHER, SC_ALL, z->gbytes[0], 1,
                                            z->gnt[0], *t, stream, out, n)) < 0)
        return 1;
    for (l = 0; l < L; l++) {
        g = z->group[l];
        if (g >= 0 && l == z->gfirst[g] && g + 1 < z->G &&
            (z->gdone[g + 1] = issue_in(p, s, CP_OP_ALLGATHER, SC_ALL, z->gbytes[g + 1], 1,
                                        z->gnt[g + 1], *t, stream, out, n)) < 0)
            return 1;
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
                (z->gdone[g] = issue_in(p, s, CP_OP_ALLGATHER, SC_ALL, z->gbytes[g], 1,
                                        z->gnt[g], *t, stream, out, n)) < 0)
                return 1;
            if (z->regather[g] && z->gdone[g] > *t)
                *t = z->gdone[g];
            if (g > 0 && z->regather[g - 1] &&
                (z->gdone[g - 1] = issue_in(p, s, CP_OP_ALLGATHER, SC_ALL, z->gbytes[g - 1], 1,
                                            z->gnt[g - 1], *t, stream, out, n)) < 0)
                return 1;
        }
        *t += c->bwd_ms[l];
        acc += z->lbytes[l];
        nt += z->lnt[l];
        if (acc >= cap) {
            if (reduce_bucket(p, s, z->offload, acc, nt, *t, stream, out, n) < 0)
                return 1;
            acc = 0;
            nt = 0;
        }
    }
    if (reduce_bucket(p, s, z->offload, acc, nt, *t, stream, out, n) < 0)
        return 1;
    return micro_spans(out, first < 0 ? t0 : first, fwd_end, *t);
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
    if ((rc = alloc_runs(out, keep, per, K, 0, &cap_runs, e)))
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
        if (optimizer_step(p, o, *end, &stream, out, cap_runs))
            rc = -1;
        else if (issue_in(p, s, CP_OP_ALLGATHER, SC_ALL, z.persist_bytes, 1, z.persist_nt,
                          stream, &stream, out, cap_runs) < 0)
            rc = 1;
        else
            *end = stream - gpu_step_ms(p, o, p->topo->ngpus);
    }
    zero3_free(&z);
    return rc < 0 ? cp_fail(e, CP_EINTERNAL, "out of memory") : rc;
}

/* The two largest of n values (0 when absent). */
static void two_largest(const double *v, int n, double *a, double *b)
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

double cp_sharded_gathered_bytes(const cp_predictor *p, const cp_predict_opts *o)
{
    const cp_model *m = p->model;
    double total = 0, a, b, x = -1;
    int k, l, U;
    if (o->framework == CP_FW_FSDP) {
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
        two_largest(f.ub, U, &a, &b);
        /* two units gathered at once and one's unsharded gradient; with
         * SHARD_GRAD_OP every parameter by the end of forward */
        x = (o->fsdp_sharding & CP_SHARD_GRAD_OP) ? total + a : x + 2 * a + b;
        fsdp_free(&f);
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
                two_largest(re, z.G, &a, &b);
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
    double end = 0, opt = gpu_step_ms(p, o, group);
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
    rc = o->framework == CP_FW_FSDP    ? run_fsdp(p, s, o, keep_runs, out, &end, e)
         : o->framework == CP_FW_ZERO3 ? run_zero3(p, s, o, keep_runs, out, &end, e)
                                       : run_zero2(p, s, o, keep_runs, out, &end, e);
    if (rc == 1 && s == CP_S_POOL) {
        cp_prediction_free(out);
        out->available = 0;
        snprintf(out->why_not, sizeof out->why_not, "%s", cp_pool_strategy_why_not(p));
        return CP_OK;
    }
    if (rc == 1) {
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
