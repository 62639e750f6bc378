/*
 * timeline.c - compute timeline and DDP bucketing (see timeline.h).
 */
#include <stdlib.h>
#include <string.h>

#include "predict/timeline.h"

void cp_compute_free(cp_compute *c)
{
    free(c->fwd_ms);
    free(c->bwd_ms);
    free(c->ready_ms);
    memset(c, 0, sizeof *c);
}

void cp_compute_scale_passes(cp_compute *c, double f)
{
    int l;
    for (l = 0; l < c->nlayers; l++) {
        c->fwd_ms[l] *= f;
        c->bwd_ms[l] *= f;
        c->ready_ms[l] *= f;
    }
    c->fwd_total *= f;
    c->bwd_total *= f;
    c->lead_ms *= f;
}

void cp_compute_scale(cp_compute *c, double f)
{
    cp_compute_scale_passes(c, f);
    c->optimizer_ms *= f;
}

double cp_compute_total(const cp_compute *c)
{
    return c->lead_ms + c->fwd_total + c->bwd_total + c->optimizer_ms;
}

/* Eq. P2: backward runs from the last layer; layer l's gradients exist when
 * its own backward is done, after the earlier micro-batches (lead_ms). */
static void set_ready(cp_compute *c)
{
    double t = c->lead_ms + c->fwd_total;
    int l;
    for (l = c->nlayers - 1; l >= 0; l--) {
        t += c->bwd_ms[l];
        c->ready_ms[l] = t;
    }
}

double cp_copy_ms(double bytes, double mem_gbs)
{
    return mem_gbs > 0 ? 2 * bytes / (mem_gbs * 1e6) : 0;
}

double cp_compute_add_copies(cp_compute *c, const cp_model *m, int elem_bytes, double mem_gbs)
{
    double total = 0;
    int k;
    if (!(mem_gbs > 0))
        return 0;
    for (k = 0; k < m->ntensors; k++) {
        double bytes = (double)m->tensors[k].numel * elem_bytes, ms = cp_copy_ms(bytes, mem_gbs);
        c->bwd_ms[m->tensors[k].layer] += ms;
        c->bwd_total += ms;
        total += bytes;
    }
    set_ready(c);
    return cp_copy_ms(total, mem_gbs);
}

void cp_compute_accumulate(cp_compute *c, int steps, double micro_ms)
{
    c->lead_ms = steps > 1 ? (steps - 1) * micro_ms : 0;
    set_ready(c);
}

/* Weight of layer l when splitting a measured time (eq. P1). */
static double layer_weight(const cp_model *m, int l, cp_split split)
{
    return split == CP_SPLIT_FLOPS ? m->layers[l].flops : (double)m->layers[l].params;
}

int cp_compute_build(const cp_model *m, double compute_ms, cp_compute *c, cp_err *e)
{
    int l, timed = m->nlayers > 0 && m->layers[0].fwd_ms >= 0 && compute_ms <= 0;
    double total = compute_ms > 0 ? compute_ms : m->iteration_ms, wsum = 0;
    cp_split split = m->split == CP_SPLIT_AUTO ? CP_SPLIT_PARAMS : m->split;

    memset(c, 0, sizeof *c);
    if (!timed && !(total > 0))
        return cp_fail(e, CP_EINPUT, "model %s has no compute time: give --compute-ms "
                       "(the measured one-GPU iteration time) or compute.iteration_ms, or "
                       "compute.batch with layer flops and GPU tflops to estimate it",
                       m->name);
    c->nlayers = m->nlayers;
    c->fwd_ms = calloc((size_t)m->nlayers + 1, sizeof *c->fwd_ms);
    c->bwd_ms = calloc((size_t)m->nlayers + 1, sizeof *c->bwd_ms);
    c->ready_ms = calloc((size_t)m->nlayers + 1, sizeof *c->ready_ms);
    if (!c->fwd_ms || !c->bwd_ms || !c->ready_ms) {
        cp_compute_free(c);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    c->optimizer_ms = timed ? m->optimizer_ms : m->optimizer_ms < total ? m->optimizer_ms : 0;
    if (!timed) {
        double fwd = (total - c->optimizer_ms) / (1 + m->bwd_fwd_ratio);
        for (l = 0; l < m->nlayers; l++)
            wsum += layer_weight(m, l, split);
        if (!(wsum > 0)) {
            cp_compute_free(c);
            return cp_fail(e, CP_EINPUT, "model %s: cannot split the compute time by %s: "
                           "every layer has zero", m->name,
                           split == CP_SPLIT_FLOPS ? "FLOPs" : "parameters");
        }
        for (l = 0; l < m->nlayers; l++) {
            c->fwd_ms[l] = fwd * layer_weight(m, l, split) / wsum;
            c->bwd_ms[l] = c->fwd_ms[l] * m->bwd_fwd_ratio;
        }
    } else {
        for (l = 0; l < m->nlayers; l++) {
            c->fwd_ms[l] = m->layers[l].fwd_ms;
            c->bwd_ms[l] = m->layers[l].bwd_ms;
        }
    }
    for (l = 0; l < m->nlayers; l++) {
        c->fwd_total += c->fwd_ms[l];
        c->bwd_total += c->bwd_ms[l];
    }
    set_ready(c);
    return CP_OK;
}

void cp_buckets_free(cp_buckets *b)
{
    free(b->order);
    free(b->b);
    memset(b, 0, sizeof *b);
}

void cp_ddp_caps(double first_mb, double cap_mb, double apex_elems, int elem_bytes,
                 double *first_bytes, double *cap_bytes)
{
    if (apex_elems > 0) { /* apex: one threshold in elements, counted as they arrive */
        *first_bytes = *cap_bytes = apex_elems * elem_bytes;
        return;
    }
    *first_bytes = first_mb * 1048576.0;
    *cap_bytes = cap_mb * 1048576.0;
}

int cp_buckets_ddp(const cp_model *m, const cp_compute *c, int elem_bytes,
                   double first_cap_bytes, double cap_bytes, cp_buckets *out, cp_err *e)
{
    int i, k;
    double size = 0, limit = first_cap_bytes;
    cp_bucket *cur;

    memset(out, 0, sizeof *out);
    out->ntensors = m->ntensors;
    out->order = malloc((size_t)m->ntensors * sizeof *out->order);
    out->b = calloc((size_t)m->ntensors + 1, sizeof *out->b); /* + the empty one after a full last bucket */
    if (!out->order || !out->b) {
        cp_buckets_free(out);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < m->ntensors; i++)
        out->order[i] = m->ntensors - 1 - i;
    cur = &out->b[0];
    for (k = 0; k < m->ntensors; k++) {
        const cp_tensor *t = &m->tensors[out->order[k]];
        double bytes = (double)t->numel * elem_bytes, ready = c->ready_ms[t->layer];
        if (cur->count == 0)
            cur->first = k;
        cur->count++;
        cur->bytes += bytes;
        if (ready > cur->ready_ms)
            cur->ready_ms = ready;
        size += bytes;
        if (size >= limit) { /* reducer.cpp: close once the cap is reached */
            out->n++;
            cur = &out->b[out->n];
            size = 0;
            limit = cap_bytes;
        }
    }
    if (cur->count > 0)
        out->n++;
    return CP_OK;
}
