/*
 * predictor.c - the predictor every framework's timeline shares (see
 * predictor.h and docs/model.md): strategy and framework names, default
 * options, the predictor's build (compute timeline eq. P0, gradient copies
 * eqs. P7 and P11, stragglers eq. P9, tensor parallelism eq. T1), the time
 * of one collective under a strategy, and the prediction record.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predictor.h"
#include "predict/pool_hooks.h"

static const char *const strategy_names[CP_STRATEGIES] = {
    "ring", "tree", "auto", "hier", "collnet", "ps", "proxy", "coarse", "best", "mpi",
    "coarse-mpi", "pool"};

const char *cp_strategy_name(cp_strategy s)
{
    return (unsigned)s < CP_STRATEGIES ? strategy_names[s] : "?";
}

const char *cp_framework_name(cp_framework f)
{
    static const char *const names[] = {"ddp",   "horovod",  "zero2", "fsdp",
                                        "zero3", "mirrored", "zero1"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

int cp_strategy_parse(const char *name, cp_strategy *out)
{
    int i;
    for (i = 0; i < CP_STRATEGIES; i++)
        if (strcmp(name, strategy_names[i]) == 0) {
            *out = (cp_strategy)i;
            return 0;
        }
    return -1;
}

void cp_predict_opts_default(cp_predict_opts *o)
{
    memset(o, 0, sizeof *o);
    o->framework = CP_FW_DDP;
    o->bucket_mb = 25;       /* torch.nn.parallel.DistributedDataParallel bucket_cap_mb */
    o->first_bucket_mb = 1;  /* torch.distributed._DEFAULT_FIRST_BUCKET_BYTES */
    o->fusion_mb = 64;       /* HOROVOD_FUSION_THRESHOLD default */
    o->cycle_ms = 5;         /* HOROVOD_CYCLE_TIME default */
    o->mfu = 0.5;            /* ResNet-50 on V100 FP32 reaches 0.58 (docs/model.md, P0) */
    o->compute_scale = 1;
    o->accum_steps = 1;
    o->bucket_view = 0;      /* DistributedDataParallel(gradient_as_bucket_view=False) */
}

/* The slowest GPU memory of the machine, GB/s; 0 when a GPU does not say
 * (then no gradient copy is charged, eq. P7). */
static double gpu_mem_gbs(const cp_topo *t)
{
    double m = 0;
    int g;
    for (g = 0; g < t->ngpus; g++) {
        double x = t->nodes[t->gpus[g]].mem_gbs;
        if (!(x > 0))
            return 0;
        if (m == 0 || x < m)
            m = x;
    }
    return m;
}

double cp_expected_max_normal(int n)
{
    /* E[max] = integral of x n phi(x) Phi(x)^(n-1) dx; Simpson's rule on
     * [-12, 12], where the integrand of any n up to 2^24 lives */
    const int steps = 4800;
    const double a = -12, h = 24.0 / steps;
    double sum = 0;
    int k;
    if (n <= 1)
        return 0;
    for (k = 0; k <= steps; k++) {
        double x = a + k * h, phi = exp(-0.5 * x * x) / sqrt(2 * M_PI);
        double Phi = 0.5 * erfc(-x / sqrt(2.0));
        double f = x * n * phi * pow(Phi, n - 1);
        sum += (k == 0 || k == steps ? 1 : k % 2 ? 4 : 2) * f;
    }
    return sum * h / 3;
}

/* The peak a model of this dtype computes at: the half-precision (tensor
 * core) peak for fp16 and bf16 models when the GPU gives one, FP32 else. */
static double peak_tflops(const cp_model *m, const cp_node *gpu)
{
    if ((m->dtype == CP_FP16 || m->dtype == CP_BF16) && gpu->tflops_fp16 > 0)
        return gpu->tflops_fp16;
    return gpu->tflops;
}

double cp_compute_estimate_ms(const cp_model *m, const cp_topo *t, double mfu)
{
    double flops = 0, peak;
    int l;
    for (l = 0; l < m->nlayers; l++)
        flops += m->layers[l].flops;
    if (flops <= 0 || m->batch <= 0 || t->ngpus == 0 || mfu <= 0)
        return 0;
    peak = peak_tflops(m, &t->nodes[t->gpus[0]]);
    if (peak <= 0)
        return 0;
    return (1 + m->bwd_fwd_ratio) * flops * m->batch / (peak * 1e12 * mfu) * 1e3;
}

void cp_prediction_free(cp_prediction *p)
{
    free(p->runs);
    p->runs = NULL;
    p->nruns = 0;
    free(p->spans);
    p->spans = NULL;
    p->nspans = p->span_cap = 0;
}

const char *cp_span_name(cp_span_kind k)
{
    static const char *const names[CP_SPAN_KINDS] = {
        "earlier micro-batches", "forward", "backward", "pack", "copy back", "optimizer"};
    return k >= 0 && k < CP_SPAN_KINDS ? names[k] : "?";
}

int cp_prediction_span(cp_prediction *out, double start, double end, cp_span_kind k)
{
    if (!out->runs || !(end > start))
        return 0;
    if (out->nspans == out->span_cap) {
        int cap = out->span_cap ? 2 * out->span_cap : 8;
        cp_span *x = realloc(out->spans, (size_t)cap * sizeof *x);
        if (!x)
            return -1;
        out->spans = x;
        out->span_cap = cap;
    }
    out->spans[out->nspans].start_ms = start;
    out->spans[out->nspans].end_ms = end;
    out->spans[out->nspans].kind = k;
    out->nspans++;
    return 0;
}

int cp_prediction_ddp_spans(const cp_predictor *p, cp_prediction *out)
{
    const cp_compute *c = &p->comp;
    double f = c->lead_ms + c->fwd_total, b = f + c->bwd_total;
    double opt = out->iteration_ms - c->optimizer_ms, copy = opt - p->copy_out_ms;
    return cp_prediction_span(out, 0, c->lead_ms, CP_SPAN_MICRO) ||
                   cp_prediction_span(out, c->lead_ms, f, CP_SPAN_FORWARD) ||
                   cp_prediction_span(out, f, b, CP_SPAN_BACKWARD) ||
                   cp_prediction_span(out, b, b + p->pack_ms, CP_SPAN_PACK) ||
                   cp_prediction_span(out, copy, opt, CP_SPAN_COPY) ||
                   cp_prediction_span(out, opt, out->iteration_ms, CP_SPAN_OPTIMIZER)
               ? -1
               : 0;
}


int cp_predictor_init(cp_predictor *p, const cp_model *m, const cp_topo *t,
                      const cp_predict_opts *o, cp_err *e)
{
    return cp_predictor_init_like(p, m, t, o, NULL, e);
}

int cp_predictor_init_like(cp_predictor *p, const cp_model *m, const cp_topo *t,
                           const cp_predict_opts *o, const cp_predictor *like, cp_err *e)
{
    double compute_ms = o->compute_ms, micro_ms;
    int rc;
    memset(p, 0, sizeof *p);
    p->model = m;
    p->topo = t;
    p->elem_bytes = o->grad_bytes > 0 ? o->grad_bytes : cp_dtype_bytes(m->dtype);
    if (o->comm_hook && p->elem_bytes <= o->comm_hook)
        return cp_fail(e, CP_EINPUT, "the compression hook casts gradients to %d bytes; "
                                     "these are %d-byte already", o->comm_hook, p->elem_bytes);
    p->compute_source = compute_ms > 0 ? "measured" : "model";
    if (compute_ms <= 0 && m->iteration_ms <= 0 && !(m->nlayers > 0 && m->layers[0].fwd_ms >= 0)) {
        compute_ms = cp_compute_estimate_ms(m, t, o->mfu);
        p->compute_source = "estimated";
    }
    rc = cp_compute_build(m, compute_ms, &p->comp, e);
    if (rc)
        return rc;
    if (o->compute_scale > 0 && o->compute_scale != 1)
        cp_compute_scale(&p->comp, o->compute_scale);
    if (o->batch_scale > 0 && o->batch_scale != 1)
        cp_compute_scale_passes(&p->comp, o->batch_scale);
    p->single_ms = cp_compute_total(&p->comp);
    if (o->jitter > 0 && t->ngpus > 1) { /* eq. P9: every step waits for the slowest GPU */
        cp_compute_scale(&p->comp, 1 + o->jitter * cp_expected_max_normal(t->ngpus));
        p->straggle_ms = cp_compute_total(&p->comp) - p->single_ms;
    }
    micro_ms = p->comp.fwd_total + p->comp.bwd_total;
    p->mem_gbs = t->ngpus > 1 ? gpu_mem_gbs(t) : 0;
    if (o->framework == CP_FW_DDP) { /* Horovod copies on its own stream: run_horovod */
        double pass = cp_compute_add_copies(&p->comp, m, p->elem_bytes, p->mem_gbs);
        p->copy_out_ms = o->bucket_view ? 0 : pass;
        p->copy_ms = pass + p->copy_out_ms;
    }
    if (o->framework == CP_FW_MIRRORED) { /* eq. P11: concatenate, then split */
        p->pack_ms = p->copy_out_ms = cp_copy_ms((double)m->params * p->elem_bytes, p->mem_gbs);
        p->copy_ms = 2 * p->pack_ms;
    }
    if (like) { /* the same machine's collective model, borrowed (have_coll 0) */
        p->coll = like->coll;
    } else if ((rc = cp_coll_build(t, 1, &p->coll, e))) {
        /* whole-machine refusals (too many GPUs on a host) are the topology's */
        if (rc == CP_EINPUT && !e->file[0] && t->src_path)
            snprintf(e->file, sizeof e->file, "%s", t->src_path);
        cp_compute_free(&p->comp);
        return rc;
    } else {
        p->have_coll = 1;
    }
    if ((rc = cp_pool_predictor_attach(p, like, o, e))) {
        cp_predictor_free(p);
        return rc;
    }
    cp_compute_accumulate(&p->comp, o->accum_steps, micro_ms);
    return CP_OK;
}

void cp_predictor_free(cp_predictor *p)
{
    cp_pool_predictor_detach(p);
    if (p->have_coll)
        cp_coll_free(&p->coll);
    cp_compute_free(&p->comp);
    memset(p, 0, sizeof *p);
}

cp_coll_alg cp_strategy_alg(cp_strategy s)
{
    switch (s) {
    case CP_S_RING: return CP_ALG_RING;
    case CP_S_TREE: return CP_ALG_TREE;
    case CP_S_HIER: return CP_ALG_HIER;
    case CP_S_COLLNET: return CP_ALG_COLLNET;
    case CP_S_PS: return CP_ALG_PS;
    default: return CP_ALGS;
    }
}

double cp_strategy_coll_ms(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                           cp_coll_alg *alg, const char **proto)
{
    double us = -1;
    int a;
    cp_proto pr;
    *alg = CP_ALGS;
    *proto = "-";
    if (p->topo->ngpus <= 1)
        return 0;
    switch (s) {
    case CP_S_MPI: /* MPI's AllReduce, staged through host memory (cost/mpi.h) */
        return op == CP_OP_ALLREDUCE ? cp_mpi_allreduce_us(&p->coll.mpi, bytes) / 1e3 : -1;
    case CP_S_AUTO: *alg = cp_coll_best(&p->coll, op, bytes, &us); break;
    case CP_S_POOL: return (us = cp_pool_strategy_us(p, op, bytes)) < 0 ? -1 : us / 1e3;
    case CP_S_BEST:
        for (a = 0; a < CP_ALGS; a++) {
            double x = cp_coll_time_us(&p->coll, op, (cp_coll_alg)a, bytes);
            if (x >= 0 && (us < 0 || x < us)) {
                us = x;
                *alg = (cp_coll_alg)a;
            }
        }
        break;
    default:
        if ((*alg = cp_strategy_alg(s)) == CP_ALGS)
            return -1;
        us = cp_coll_time_us(&p->coll, op, *alg, bytes);
        break;
    }
    if (us >= 0 && *alg != CP_ALGS && *alg != CP_ALG_PS) {
        cp_coll_time_proto_us(&p->coll, op, *alg, bytes, &pr);
        *proto = cp_proto_name(pr);
    }
    return us < 0 ? -1 : us / 1e3;
}

int cp_prediction_run(cp_prediction *out, int cap, double bytes, int nt, double ready,
                      double start, double finish, const char *how, const char *proto)
{
    cp_bucket_run *r;
    if (!out->runs)
        return 0;
    if (out->nruns >= cap)
        return -1;
    r = &out->runs[out->nruns++];
    r->bytes = bytes;
    r->ntensors = nt;
    r->ready_ms = ready;
    r->start_ms = start;
    r->finish_ms = finish;
    r->how = how;
    r->proto = proto;
    return 0;
}
