/*
 * hf_build.c - the builder `import hf-config`'s emitters write through
 * (hf_internal.h): layers with their forward FLOPs, tensors with their
 * shapes, in the order the emitters call it.  Sticky errors: after the first
 * failure (out of memory, a layer over the loader's FLOPs limit) every call
 * is a no-op, and the failure is in b->rc.  Cost: constant per call.
 */
#include <stdarg.h>
#include <stdio.h>

#include "import/hf_internal.h"

void hf_oom(hf_build *b)
{
    if (b->rc == CP_OK)
        b->rc = cp_fail(b->e, CP_EINTERNAL, "out of memory");
}

/* FLOPs as a JSON number: an integer while exact (below 2^53), as the
 * shipped models write them. */
static json_t *flops_json(double f)
{
    return f < 9007199254740992.0 ? json_integer((json_int_t)f) : json_real(f);
}

void hf_layer(hf_build *b, double flops, const char *fmt, ...)
{
    char name[HF_NAME_BYTES];
    json_t *l;
    va_list ap;
    if (b->rc)
        return;
    va_start(ap, fmt);
    /* clang 14's va_list checker, run on several files in one process (as
     * tools/lint.sh does), forgets the va_start above: a false positive,
     * the same as in core/err.c. */
    vsnprintf(name, sizeof name, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(ap);
    if (flops > HF_MAX_LAYER_FLOPS) {
        b->rc = cp_jdoc_fail(b->d, b->e, b->d->root, b->blame, "",
                             "layer %s would take %.3g forward FLOPs per sample, over the "
                             "limit of %g: use a shorter --seq-len", name, flops,
                             HF_MAX_LAYER_FLOPS);
        return;
    }
    l = json_object();
    if (!l || json_object_set_new(l, "name", json_string(name)) ||
        json_object_set_new(l, "flops", flops_json(flops)) ||
        json_array_append_new(b->layers, l)) {
        json_decref(l);
        hf_oom(b);
        return;
    }
    b->layer = (int)json_array_size(b->layers) - 1;
}

void hf_tensor(hf_build *b, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...)
{
    char name[HF_NAME_BYTES];
    json_t *t, *shape;
    va_list ap;
    if (b->rc)
        return;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(ap);
    t = json_object();
    shape = json_array();
    if (!t || !shape || json_object_set_new(t, "name", json_string(name)) ||
        json_array_append_new(shape, json_integer(d0)) ||
        (d1 && json_array_append_new(shape, json_integer(d1))) ||
        (d1 && d2 && json_array_append_new(shape, json_integer(d2)))) {
        json_decref(t);
        json_decref(shape);
        hf_oom(b);
        return;
    }
    if (json_object_set_new(t, "shape", shape) ||
        json_object_set_new(t, "layer", json_integer(b->layer)) ||
        json_array_append_new(b->tensors, t))
        hf_oom(b);
}

void hf_linear(hf_build *b, const char *module, int64_t in, int64_t out, int bias)
{
    hf_tensor(b, out, in, 0, "%s.weight", module);
    if (bias)
        hf_tensor(b, out, 0, 0, "%s.bias", module);
}

void hf_conv1d(hf_build *b, const char *module, int64_t in, int64_t out)
{
    hf_tensor(b, in, out, 0, "%s.weight", module);
    hf_tensor(b, out, 0, 0, "%s.bias", module);
}

void hf_norm(hf_build *b, const char *module, int64_t n, int bias)
{
    hf_tensor(b, n, 0, 0, "%s.weight", module);
    if (bias)
        hf_tensor(b, n, 0, 0, "%s.bias", module);
}

const char *hf_sub(char *buf, const char *a, const char *b)
{
    snprintf(buf, HF_NAME_BYTES, "%s.%s", a, b);
    return buf;
}

double hf_block_flops(double s, double matmul_elems, double keys, double qk_width,
                      double v_width)
{
    return 2 * matmul_elems * s + 2 * s * keys * (qk_width + v_width);
}

double hf_keys(const hf_dims *c, double s, int64_t i)
{
    int64_t every = c->window_every > 0 ? c->window_every : 1;
    if (c->window > 0 && i % every == 0 && (double)c->window < s)
        return (double)c->window;
    return s;
}
