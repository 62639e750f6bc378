/*
 * model_load.c - reading and validating model JSON (schema: docs/formats.md).
 *
 * Strict: unknown keys, wrong types, non-positive sizes, duplicate tensor
 * names and half-given timings are errors with the line and column of the
 * offending value.  The result is a cp_model with derived fields filled.
 * The "transformer" block is read by xformer_load.c.  A Hugging Face
 * config.json (no "tensors", a "model_type" or "architectures") is
 * converted as `import hf-config --dtype bf16` converts it, then read.
 */
#include <stdlib.h>
#include <string.h>

#include "core/jsondoc.h"
#include "core/strmap.h"
#include "core/units.h"
#include "import/hf_config.h"
#include "load/load.h"
#include "load/xformer_load.h"

/* Longest tensor or layer name we accept, in bytes. */
#define NAME_MAX_BYTES 512

/* Sanity bounds on timings, refused as unit mistakes: no layer or iteration
 * takes less than a nanosecond or more than 1e9 ms (11.6 days), and backward
 * is not 100 times forward (it is 1-3x).  They also keep every derived time
 * finite: fwd_ms x bwd_fwd_ratio <= 1e11, and 2 million layers of that sum
 * to 2e17. */
#define MIN_MS 1e-6
#define MAX_MS 1e9
#define MAX_BWD_FWD_RATIO 100

/* Forward FLOPs per sample of one layer: a trillion-parameter dense layer on
 * a 10^4-token sample is 2e16; 1e20 leaves room and keeps sums finite. */
#define MAX_FLOPS 1e20

static const char *const top_keys[] = {"name",    "dtype",       "tensors", "layers",
                                       "compute", "transformer", NULL};
static const char *const tensor_keys[] = {"name", "shape", "numel", "layer", NULL};
static const char *const layer_keys[] = {"name", "flops", "fwd_ms", "bwd_ms", NULL};
static const char *const compute_keys[] = {"iteration_ms", "split", "bwd_fwd_ratio",
                                           "optimizer_ms", "batch", NULL};
static const char *const dtype_names[] = {"fp32", "fp16", "bf16", "float32", "float16",
                                          "bfloat16", NULL};
static const int dtype_ids[] = {CP_FP32, CP_FP16, CP_BF16, CP_FP32, CP_FP16, CP_BF16};
static const char *const split_names[] = {"auto", "flops", "params", NULL};

/* Product of the shape's dimensions into t->shape/ndim/numel. */
static int read_shape(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                      const json_t *shape, cp_tensor *t)
{
    size_t i, n = json_array_size(shape);
    int64_t numel = 1;
    char got[80];
    if (n > CP_MAX_DIMS)
        return cp_jdoc_fail(d, e, obj, "shape", where, "%zu dimensions; at most %d allowed",
                            n, CP_MAX_DIMS);
    for (i = 0; i < n; i++) {
        const json_t *v = json_array_get(shape, i);
        json_int_t x;
        if (!json_is_integer(v) || json_integer_value(v) < 1) {
            char path[192];
            cp_jshow(v, got, sizeof got);
            cp_jpath(path, sizeof path, where, "shape");
            return cp_jdoc_fail(d, e, v, NULL, path,
                                "dimension %zu: expected a positive integer, got %s", i, got);
        }
        x = json_integer_value(v);
        if (x > CP_MAX_NUMEL || numel > CP_MAX_NUMEL / x)
            return cp_jdoc_fail(d, e, obj, "shape", where,
                                "tensor has more than 2^40 elements (the limit)");
        numel *= x;
        t->shape[i] = x;
    }
    t->ndim = (int)n;
    t->numel = numel;
    return CP_OK;
}

/* One element of "tensors". */
static int read_tensor(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                       cp_tensor *t)
{
    const char *name = NULL;
    const json_t *shape = NULL;
    int64_t numel = 0, layer = 0;
    int rc;

    if (!json_is_object(obj))
        return cp_jdoc_fail(d, e, obj, NULL, where, "expected a tensor object");
    if ((rc = cp_jdoc_check_keys(d, e, obj, where, tensor_keys)) ||
        (rc = cp_jget_str(d, e, obj, where, "name", CP_REQ, NAME_MAX_BYTES, &name)) ||
        (rc = cp_jget_array(d, e, obj, where, "shape", 0, &shape)) ||
        (rc = cp_jget_int(d, e, obj, where, "numel", 0, 1, CP_MAX_NUMEL, &numel)) ||
        (rc = cp_jget_int(d, e, obj, where, "layer", CP_REQ, 0, CP_MAX_TENSORS - 1, &layer)))
        return rc;
    if (!shape && !numel)
        return cp_jdoc_fail(d, e, obj, NULL, where,
                            "tensor \"%s\" needs \"shape\" (array of dimensions) or "
                            "\"numel\" (element count)", name);
    if (shape && (rc = read_shape(d, e, obj, where, shape, t)))
        return rc;
    if (shape && numel && numel != t->numel)
        return cp_jdoc_fail(d, e, obj, "numel", where,
                            "numel %lld does not match the shape's product %lld",
                            (long long)numel, (long long)t->numel);
    if (!shape)
        t->numel = numel;
    t->layer = (int)layer;
    t->name = strdup(name);
    return t->name ? CP_OK : cp_fail(e, CP_EINTERNAL, "out of memory");
}

static int read_tensors(const cp_jdoc *d, cp_err *e, const json_t *arr, cp_model *m)
{
    size_t i, n = json_array_size(arr);
    cp_strmap names = {0};
    int rc = CP_OK;

    if (n == 0)
        return cp_jdoc_fail(d, e, d->root, "tensors", "",
                            "the model has no tensors (expected at least one)");
    if (n > CP_MAX_TENSORS)
        return cp_jdoc_fail(d, e, d->root, "tensors", "", "%zu tensors; the limit is %d", n,
                            CP_MAX_TENSORS);
    m->tensors = calloc(n, sizeof *m->tensors);
    if (!m->tensors || cp_strmap_init(&names, n) != 0) {
        cp_strmap_free(&names);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < n && rc == CP_OK; i++) {
        char where[64];
        const json_t *obj = json_array_get(arr, i);
        int prev;
        cp_jpath_index(where, sizeof where, "tensors", i);
        rc = read_tensor(d, e, obj, where, &m->tensors[i]);
        if (rc)
            break;
        m->ntensors++;
        prev = cp_strmap_put(&names, m->tensors[i].name, (int)i);
        if (prev == -2)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        else if (prev >= 0)
            rc = cp_jdoc_fail(d, e, obj, "name", where,
                              "duplicate tensor name \"%s\" (first at tensors[%d])",
                              m->tensors[i].name, prev);
    }
    cp_strmap_free(&names);
    return rc;
}

/* One element of "layers". */
static int read_layer(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                      cp_layer *l)
{
    const char *name = NULL;
    int rc;
    l->fwd_ms = l->bwd_ms = -1;
    if (!json_is_object(obj))
        return cp_jdoc_fail(d, e, obj, NULL, where, "expected a layer object");
    if ((rc = cp_jdoc_check_keys(d, e, obj, where, layer_keys)) ||
        (rc = cp_jget_str(d, e, obj, where, "name", 0, NAME_MAX_BYTES, &name)) ||
        (rc = cp_jget_num_range(d, e, obj, where, "flops", CP_NONNEG, 0, MAX_FLOPS,
                                "a non-negative number (forward FLOPs per sample)",
                                &l->flops)) ||
        (rc = cp_jget_num_range(d, e, obj, where, "fwd_ms", CP_POS, MIN_MS, MAX_MS,
                                "a positive number (forward milliseconds)", &l->fwd_ms)) ||
        (rc = cp_jget_num_range(d, e, obj, where, "bwd_ms", CP_POS, MIN_MS, MAX_MS,
                                "a positive number (backward milliseconds)", &l->bwd_ms)))
        return rc;
    if (l->bwd_ms > 0 && l->fwd_ms < 0)
        return cp_jdoc_fail(d, e, obj, "bwd_ms", where,
                            "bwd_ms given without fwd_ms (give both, or fwd_ms alone)");
    if (name && !(l->name = strdup(name)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    return CP_OK;
}

/* The explicit "layers" array, or implicit layers 0..max(tensor.layer). */
static int read_layers(const cp_jdoc *d, cp_err *e, const json_t *arr, cp_model *m)
{
    size_t i, n;
    int timed = 0, maxl = -1, rc;

    for (i = 0; i < (size_t)m->ntensors; i++)
        if (m->tensors[i].layer > maxl)
            maxl = m->tensors[i].layer;
    n = arr ? json_array_size(arr) : (size_t)maxl + 1;
    if (n > CP_MAX_TENSORS)
        return cp_jdoc_fail(d, e, d->root, "layers", "", "%zu layers; the limit is %d", n,
                            CP_MAX_TENSORS);
    m->layers = calloc(n ? n : 1, sizeof *m->layers);
    if (!m->layers)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < n; i++)
        m->layers[i].fwd_ms = m->layers[i].bwd_ms = -1;
    m->nlayers = (int)n;
    if (!arr)
        return CP_OK;
    for (i = 0; i < n; i++) {
        char where[64];
        cp_jpath_index(where, sizeof where, "layers", i);
        if ((rc = read_layer(d, e, json_array_get(arr, i), where, &m->layers[i])))
            return rc;
        timed += m->layers[i].fwd_ms > 0;
    }
    if (maxl >= 0 && (size_t)maxl >= n) {
        char where[64];
        for (i = 0; i < (size_t)m->ntensors; i++)
            if (m->tensors[i].layer == maxl)
                break;
        cp_jpath_index(where, sizeof where, "tensors", i);
        return cp_jdoc_fail(d, e, json_array_get(json_object_get(d->root, "tensors"), i),
                            "layer", where, "layer %d does not exist (the model lists %zu "
                            "layers)", maxl, n);
    }
    if (timed && timed != (int)n) {
        for (i = 0; i < n; i++)
            if (m->layers[i].fwd_ms < 0)
                break;
        return cp_jdoc_fail(d, e, json_array_get(arr, i), NULL, "layers",
                            "layer %zu has no fwd_ms while %d other%s %s: give per-layer "
                            "times for all layers or for none", i, timed, cp_s(timed),
                            timed == 1 ? "does" : "do");
    }
    return CP_OK;
}

static int read_compute(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_model *m)
{
    int64_t batch = 0;
    int split = CP_SPLIT_AUTO, rc;
    if (!obj)
        return CP_OK;
    if ((rc = cp_jdoc_check_keys(d, e, obj, "compute", compute_keys)) ||
        (rc = cp_jget_num_range(d, e, obj, "compute", "iteration_ms", CP_POS, MIN_MS, MAX_MS,
                                "a positive number (one-GPU iteration milliseconds)",
                                &m->iteration_ms)) ||
        (rc = cp_jget_enum(d, e, obj, "compute", "split", 0, split_names, NULL, &split)) ||
        (rc = cp_jget_num_range(d, e, obj, "compute", "bwd_fwd_ratio", CP_POS, 0,
                                MAX_BWD_FWD_RATIO,
                                "a positive number (backward time / forward time)",
                                &m->bwd_fwd_ratio)) ||
        (rc = cp_jget_num_range(d, e, obj, "compute", "optimizer_ms", CP_NONNEG, 0, MAX_MS,
                                "a non-negative number (milliseconds)", &m->optimizer_ms)) ||
        (rc = cp_jget_int(d, e, obj, "compute", "batch", 0, 1, 1 << 30, &batch)))
        return rc;
    if (m->iteration_ms > 0 && m->optimizer_ms >= m->iteration_ms)
        return cp_jdoc_fail(d, e, obj, "optimizer_ms", "compute",
                            "optimizer_ms %.3f is not less than iteration_ms %.3f",
                            m->optimizer_ms, m->iteration_ms);
    m->split = (cp_split)split;
    m->batch = (int)batch;
    return CP_OK;
}

/* Cross-checks that need positions: timing given twice, flops split without
 * flops. */
static int check_compute(const cp_jdoc *d, cp_err *e, const json_t *compute, cp_model *m)
{
    int i, any_flops = 0, timed = m->nlayers > 0 && m->layers[0].fwd_ms > 0;
    for (i = 0; i < m->nlayers; i++)
        any_flops |= m->layers[i].flops > 0;
    if (timed && m->iteration_ms > 0)
        return cp_jdoc_fail(d, e, compute, "iteration_ms", "compute",
                            "per-layer fwd_ms are given: iteration_ms would be ignored; give "
                            "one or the other");
    if (m->split == CP_SPLIT_FLOPS && !any_flops)
        return cp_jdoc_fail(d, e, compute, "split", "compute",
                            "split \"flops\" needs \"flops\" on the layers");
    if (m->split == CP_SPLIT_AUTO)
        m->split = any_flops ? CP_SPLIT_FLOPS : CP_SPLIT_PARAMS;
    return CP_OK;
}

static int read_model(const cp_jdoc *d, cp_err *e, cp_model *m)
{
    const json_t *root = d->root, *tensors = NULL, *layers = NULL, *compute = NULL, *xf = NULL;
    const char *name = NULL;
    int dtype = CP_FP32, rc;

    if ((rc = cp_jdoc_check_keys(d, e, root, "", top_keys)) ||
        (rc = cp_jget_str(d, e, root, "", "name", CP_REQ, NAME_MAX_BYTES, &name)) ||
        (rc = cp_jget_enum(d, e, root, "", "dtype", CP_REQ, dtype_names, dtype_ids, &dtype)) ||
        (rc = cp_jget_array(d, e, root, "", "tensors", CP_REQ, &tensors)) ||
        (rc = cp_jget_array(d, e, root, "", "layers", 0, &layers)) ||
        (rc = cp_jget_object(d, e, root, "", "compute", 0, &compute)) ||
        (rc = cp_jget_object(d, e, root, "", "transformer", 0, &xf)))
        return rc;
    m->dtype = (cp_dtype)dtype;
    m->bwd_fwd_ratio = 2.0;
    if (!(m->name = strdup(name)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = read_tensors(d, e, tensors, m)) || (rc = read_layers(d, e, layers, m)) ||
        (rc = read_compute(d, e, compute, m)) || (rc = check_compute(d, e, compute, m)) ||
        (rc = cp_read_transformer(d, e, xf, m)))
        return rc;
    rc = cp_model_finish(m, e);
    if (rc && !e->file[0])
        snprintf(e->file, sizeof e->file, "%s", d->path);
    return rc;
}

static int load_hf_config(const cp_jdoc *d, cp_model **out, cp_err *e);

int cp_model_load_doc(const cp_jdoc *d, cp_model **out, cp_err *e)
{
    cp_model *m;
    int rc;
    *out = NULL;
    if (cp_is_hf_config(d))
        return load_hf_config(d, out, e);
    if (!(m = calloc(1, sizeof *m)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    rc = read_model(d, e, m);
    if (rc) {
        cp_model_free(m);
        return rc;
    }
    *out = m;
    return CP_OK;
}

int cp_is_hf_config(const cp_jdoc *d)
{
    return !json_object_get(d->root, "tensors") &&
           (json_object_get(d->root, "model_type") || json_object_get(d->root, "architectures"));
}

/* The config converted (16-bit gradients, the importer's defaults
 * otherwise) and read as the model file `import hf-config` would write;
 * errors point into the config. */
static int load_hf_config(const cp_jdoc *d, cp_model **out, cp_err *e)
{
    cp_hf_opts o;
    json_t *root = NULL;
    char *text = NULL;
    cp_jdoc conv;
    int rc;
    cp_hf_opts_default(&o);
    o.dtype = "bf16";
    memset(&conv, 0, sizeof conv);
    if ((rc = cp_import_hf_config(d->path, d->text, d->len, &o, &root, e)))
        return rc;
    if (!(text = json_dumps(root, JSON_COMPACT)))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    else if ((rc = cp_jdoc_load_text(&conv, d->path, text, strlen(text), e)) == CP_OK)
        rc = cp_model_load_doc(&conv, out, e);
    cp_jdoc_free(&conv);
    free(text);
    json_decref(root);
    return rc;
}

int cp_model_load(const char *path, cp_model **out, cp_err *e)
{
    cp_jdoc d;
    int rc;
    *out = NULL;
    rc = cp_jdoc_load(&d, path, e);
    if (rc == CP_OK)
        rc = cp_model_load_doc(&d, out, e);
    cp_jdoc_free(&d);
    return rc;
}
