/*
 * model.c - derived quantities and lifetime of a cp_model (see model.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

int cp_dtype_bytes(cp_dtype t)
{
    return t == CP_FP32 ? 4 : 2;
}

const char *cp_dtype_name(cp_dtype t)
{
    switch (t) {
    case CP_FP16:
        return "fp16";
    case CP_BF16:
        return "bf16";
    default:
        return "fp32";
    }
}

int64_t cp_model_grad_bytes(const cp_model *m)
{
    return m->params * cp_dtype_bytes(m->dtype);
}

void cp_model_free(cp_model *m)
{
    int i;
    if (!m)
        return;
    for (i = 0; i < m->ntensors; i++)
        free(m->tensors[i].name);
    for (i = 0; i < m->nlayers; i++)
        free(m->layers[i].name);
    free(m->tensors);
    free(m->layers);
    free(m->name);
    free(m);
}

/* Timings must be given for every layer or for none: a half-timed model
 * would silently mix measured and guessed numbers. */
static int check_timing(const cp_model *m, cp_err *e)
{
    int i, timed = 0;
    for (i = 0; i < m->nlayers; i++)
        timed += m->layers[i].fwd_ms >= 0;
    if (timed != 0 && timed != m->nlayers) {
        for (i = 0; i < m->nlayers; i++)
            if (m->layers[i].fwd_ms < 0)
                break;
        return cp_fail_at(e, CP_EINPUT, NULL, 0, 0, NULL,
                          "layers[%d] (%s) has no fwd_ms while %d other layers do: give "
                          "per-layer times for all layers or for none",
                          i, m->layers[i].name ? m->layers[i].name : "?", timed);
    }
    return CP_OK;
}

int cp_model_finish(cp_model *m, cp_err *e)
{
    int i;
    if (m->bwd_fwd_ratio <= 0)
        m->bwd_fwd_ratio = 2.0;
    m->params = 0;
    for (i = 0; i < m->nlayers; i++)
        m->layers[i].params = 0;
    for (i = 0; i < m->ntensors; i++) {
        const cp_tensor *t = &m->tensors[i];
        if (t->layer < 0 || t->layer >= m->nlayers)
            return cp_fail(e, CP_EINPUT, "tensors[%d].layer %d does not exist (%d layers)", i,
                           t->layer, m->nlayers);
        m->layers[t->layer].params += t->numel;
        m->params += t->numel;
    }
    for (i = 0; i < m->nlayers; i++) {
        cp_layer *l = &m->layers[i];
        if (!l->name) {
            char buf[32];
            snprintf(buf, sizeof buf, "layer%d", i);
            l->name = strdup(buf);
            if (!l->name)
                return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
        if (l->fwd_ms >= 0 && l->bwd_ms < 0)
            l->bwd_ms = l->fwd_ms * m->bwd_fwd_ratio;
    }
    return check_timing(m, e);
}

/* strdup of "base#k" (k > 0) or of base (k == 0). */
static char *suffixed(const char *base, int k)
{
    size_t n = strlen(base) + 16;
    char *s = malloc(n);
    if (!s)
        return NULL;
    if (k == 0)
        snprintf(s, n, "%s", base);
    else
        snprintf(s, n, "%s#%d", base, k);
    return s;
}

cp_model *cp_model_repeat(const cp_model *m, int times)
{
    cp_model *r;
    int k, i;
    cp_err e;
    if (times < 1 || (int64_t)m->ntensors * times > CP_MAX_TENSORS ||
        (int64_t)m->nlayers * times > CP_MAX_TENSORS)
        return NULL;
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = *m;
    r->name = suffixed(m->name, times > 1 ? times : 0);
    r->ntensors = r->nlayers = 0;
    r->tensors = calloc((size_t)m->ntensors * times, sizeof *r->tensors);
    r->layers = calloc((size_t)m->nlayers * times, sizeof *r->layers);
    if (!r->name || !r->tensors || !r->layers)
        goto fail;
    for (k = 0; k < times; k++) {
        for (i = 0; i < m->nlayers; i++) {
            cp_layer *l = &r->layers[r->nlayers];
            *l = m->layers[i];
            l->name = suffixed(m->layers[i].name, k);
            if (!l->name)
                goto fail;
            r->nlayers++;
        }
        for (i = 0; i < m->ntensors; i++) {
            cp_tensor *t = &r->tensors[r->ntensors];
            *t = m->tensors[i];
            t->layer = m->tensors[i].layer + k * m->nlayers;
            t->name = suffixed(m->tensors[i].name, k);
            if (!t->name)
                goto fail;
            r->ntensors++;
        }
    }
    if (r->iteration_ms > 0)
        r->iteration_ms *= times;
    r->optimizer_ms *= times;
    r->xf.layers *= times;
    if (cp_model_finish(r, &e) == CP_OK)
        return r;
fail:
    cp_model_free(r);
    return NULL;
}
