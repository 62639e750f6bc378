/*
 * stageplan.c - a pipeline stage's gradient buckets and their ready times
 * as the planner's model (see stageplan.h; docs/planner.md "Large-model
 * layouts").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/dpsync.h"
#include "llm/footprint.h"
#include "llm/moe.h"
#include "llm/stageplan.h"

void cp_stage_grads_free(cp_stage_grads *s)
{
    cp_model_free(s->model);
    free(s->ready_ms);
    memset(s, 0, sizeof *s);
}

/* Why: the deadlines (eq. Q5) need how long one micro-batch's forward takes
 * through each chunk of the stage; the schedule's events hold it (the
 * first micro-batch's forward of chunk c on stage r), ms. */
static double chunk_fwd_ms(const cp_llm_result *r, int stage, int c)
{
    int i;
    for (i = 0; i < r->sched.nev; i++) {
        const cp_sched_event *ev = &r->sched.ev[i];
        if (ev->kind == CP_EV_FWD && ev->stage == stage && ev->chunk == c && ev->micro == 0)
            return ev->end_ms - ev->start_ms;
    }
    return 0;
}

/* Why: the planner's model must own its strings like a loaded one. */
static char *dupf(const char *fmt, int a, int b, int c)
{
    char buf[96];
    snprintf(buf, sizeof buf, fmt, a, b, c);
    return strdup(buf);
}

int cp_stage_grads_build(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                         const cp_tiers *tiers, const cp_llm_result *r, int stage,
                         const char *name, cp_stage_grads *out, cp_err *e)
{
    int v = l->vp, once = !(l->zero >= 3 || (l->fw != CP_LLM_MEGATRON && l->zero >= 2));
    int c, j, nb, n, k = 0, rc;
    double P, per_chunk_d;
    int64_t per_chunk, bucket;
    cp_model *m;
    memset(out, 0, sizeof *out);
    if (cp_moe_on(x))
        return cp_fail(e, CP_EINPUT, "plan with a layout plans a dense model's gradients; "
                       "a mixture of experts reduces its experts' on another group (not "
                       "planned yet)");
    if (stage < 0 || stage >= l->pp)
        return cp_fail(e, CP_EINPUT, "--stage %d: the layout has stages 0 to %d", stage,
                       l->pp - 1);
    if (!r->have_sched || !r->sched.ev)
        return cp_fail(e, CP_EINTERNAL, "the prediction kept no schedule events");
    P = cp_stage_params(x, l, stage) / l->tp;
    per_chunk_d = P / v;
    per_chunk = (int64_t)llround(per_chunk_d);
    if (per_chunk < 1)
        per_chunk = 1;
    /* Megatron-Core's bucket (dpsync.c); a chunk a bucket where the
     * framework reduce-scatters every micro-batch */
    bucket = once ? (int64_t)fmax(4e7, 1e6 * l->dp * l->cp) : per_chunk;
    nb = (int)((per_chunk + bucket - 1) / bucket);
    n = nb * v;
    out->stage = stage;
    out->per_chunk = nb;
    out->params = per_chunk * v;
    out->bucket_params = (double)bucket;
    out->elem_bytes = l->grad_fp32 ? 4 : 2;
    out->stage_end_ms = r->sched.stage_end_ms[stage];
    out->optimizer_ms = l->offload_opt ? cp_dp_offload_step_ms(l, g, tiers, P)
                                       : cp_dp_optimizer_ms(l, g, P);
    if (out->optimizer_ms < 0)
        out->optimizer_ms = 0;
    m = calloc(1, sizeof *m);
    out->model = m;
    out->ready_ms = calloc((size_t)n, sizeof *out->ready_ms);
    if (!m || !out->ready_ms ||
        !(m->tensors = calloc((size_t)n, sizeof *m->tensors)) ||
        !(m->layers = calloc((size_t)n, sizeof *m->layers)) || !(m->name = strdup(name))) {
        cp_stage_grads_free(out);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    m->dtype = out->elem_bytes == 4 ? CP_FP32 : CP_BF16;
    m->bwd_fwd_ratio = 2;
    m->xf = *x;
    /* forward order: chunk 0 first; inside a chunk the last bucket first
     * (bucket 0 holds the chunk's last layers, which backward reduces
     * first) */
    for (c = 0; c < v; c++) {
        double s = r->sched.last_bwd_start_ms[stage * v + c];
        double end = r->sched.last_bwd_end_ms[stage * v + c];
        double f = chunk_fwd_ms(r, stage, c);
        for (j = nb - 1; j >= 0; j--, k++) {
            cp_tensor *t = &m->tensors[k];
            cp_layer *y = &m->layers[k];
            t->numel = j < nb - 1 ? bucket : per_chunk - bucket * (nb - 1);
            t->layer = k;
            y->fwd_ms = f / nb;
            y->bwd_ms = (end - s) / nb;
            /* dpsync.c: bucket j of a chunk is complete (j + 1) / nb of the
             * way through its last backward when the reduction overlaps it,
             * at the stage's end otherwise */
            out->ready_ms[k] = l->overlap_grad && once ? s + (end - s) * (j + 1) / nb
                               : once ? out->stage_end_ms : end;
            if (!(t->name = dupf("stage%d.chunk%d.bucket%d", stage, c, j)) ||
                !(y->name = dupf("stage %d chunk %d bucket %d", stage, c, j))) {
                m->ntensors = m->nlayers = k + 1;
                cp_stage_grads_free(out);
                return cp_fail(e, CP_EINTERNAL, "out of memory");
            }
        }
    }
    m->ntensors = m->nlayers = n;
    if ((rc = cp_model_finish(m, e)))
        cp_stage_grads_free(out);
    return rc;
}
