/*
 * planfile.c - loading and validating plan files; the public cpl_* API
 * (see include/coarse_plan.h and planfile.h).
 *
 * The decoded JSON document stays alive inside the plan: every string the
 * API returns is borrowed from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"
#include "plan/deadlock.h"
#include "runtime/planfile.h"

/* Largest counts a plan may hold, checked before allocating: 2 million
 * tensors (CP_MAX_TENSORS), and as many buckets and routes per bucket. */
#define MAX_ITEMS 2000000

typedef struct pbucket {
    int64_t bytes;
    double ready_ms, need_ms;
    size_t t0, nt;      /* tensors t[t0 .. t0+nt) */
    size_t r0, nr;      /* routes r[r0 .. r0+nr) */
} pbucket;

typedef struct proute {
    cpl_route r;
    double start_ms, finish_ms; /* predicted; 0 when the plan does not say */
    size_t d0, nd;      /* devices dev[d0 .. d0+nd) */
    const json_t *pool; /* "pool" routes: the layout's hosts array (borrowed from doc) */
} proute;

struct cpl_plan {
    cp_jdoc doc;        /* owns every string below */
    const char *model, *topo, *topo_file, *topo_hash;
    double compute_ms;
    double tail_ms;     /* predicted.tail_ms; 0 when absent (plans before it) */
    int gpus, split;
    int version;        /* 1 or 2 (pool routes allowed) */
    int hosts;          /* topology.hosts: the hosts the plan was made for; 1 when absent */
    double iteration_ms;
    pbucket *b;
    size_t nb;
    cpl_tensor *t;
    size_t nt;
    proute *r;
    size_t nr;
    const char **dev;
    size_t ndev;
    const char *dtype;  /* model.dtype, or NULL */
    const char **pdev;  /* participant devices: proxies first, then the others */
    size_t npdev;
    int *rdev;          /* [ndev]: index in pdev of dev[i] */
    int *home;          /* [gpus]: proxy-ring device (index in pdev) of each GPU, or -1 */
    int has_layout;     /* the plan has a "layout" object (plan --tp ...) */
    cpl_layout layout;
};

static const char *const top_keys[] = {"format", "generator", "model", "topology", "settings",
                                       "predicted", "split_layer", "families", "proxies",
                                       "buckets", "layout", NULL};
static const char *const model_keys[] = {"name", "file", "hash", "tensors", "dtype", NULL};
static const char *const topo_keys[] = {"name", "file", "hash", "hosts", "gpus", NULL};
static const char *const layout_keys[] = {"framework", "tp", "pp", "vp", "cp", "dp", "mbs",
                                          "gbs", "seq", "stage", "group", "group_gpus",
                                          "group_hosts", "stage_params", "bucket_params",
                                          "net_gbs", "layout_iteration_ms", NULL};
static const char *const bucket_keys[] = {"id", "bytes", "ready_ms", "need_ms", "first_layer",
                                          "tensors", "routes", NULL};
static const char *const proxy_keys[] = {"device", "reduce_gbs", "clients", "queues",
                                         "ring_clients", NULL};
static const char *const tensor_keys[] = {"name", "offset", "bytes", NULL};
static const char *const route_keys[] = {"order", "kind", "algorithm", "devices", "offset",
                                         "bytes", "shards", "start_ms", "finish_ms", "pool",
                                         NULL};
static const char *const route_kinds[] = {"allreduce", "proxy-bw", "proxy-lat", "proxy-ring",
                                          "ps", "pool", NULL};
static const char *const pool_keys[] = {"chunk_bytes", "hosts", NULL};
static const char *const slot_keys[] = {"host", "offset", "bytes", NULL};
#define KIND_POOL 5

/* A pool route's layout (format 2): chunk_bytes and one slot per host of
 * the route's bytes, hosts 0, 1, ... in order. */
static int read_pool(cpl_plan *p, const json_t *o, const char *where, proute *r, cp_err *e)
{
    const json_t *pool = NULL, *hosts = NULL;
    int64_t chunk = 0;
    char w[256];
    size_t k;
    int rc;
    if ((rc = cp_jget_object(&p->doc, e, o, where, "pool", CP_REQ, &pool)))
        return rc;
    snprintf(w, sizeof w, "%s.pool", where);
    if ((rc = cp_jdoc_check_keys(&p->doc, e, pool, w, pool_keys)) ||
        (rc = cp_jget_int(&p->doc, e, pool, w, "chunk_bytes", CP_REQ, 1, INT64_MAX, &chunk)) ||
        (rc = cp_jget_array(&p->doc, e, pool, w, "hosts", CP_REQ, &hosts)))
        return rc;
    if (json_array_size(hosts) == 0)
        return cp_jdoc_fail(&p->doc, e, pool, "hosts", w, "no host slots");
    snprintf(w, sizeof w, "%s.pool.hosts", where);
    for (k = 0; k < json_array_size(hosts); k++) {
        const json_t *s = json_array_get(hosts, k);
        int64_t h = 0, off = 0, bytes = 0;
        char ws[300];
        cp_jpath_index(ws, sizeof ws, w, k);
        if (!json_is_object(s))
            return cp_jdoc_fail(&p->doc, e, s, NULL, ws, "expected a slot object");
        if ((rc = cp_jdoc_check_keys(&p->doc, e, s, ws, slot_keys)) ||
            (rc = cp_jget_int(&p->doc, e, s, ws, "host", CP_REQ, 0, 1 << 20, &h)) ||
            (rc = cp_jget_int(&p->doc, e, s, ws, "offset", CP_REQ, 0, INT64_MAX, &off)) ||
            (rc = cp_jget_int(&p->doc, e, s, ws, "bytes", CP_REQ, 1, INT64_MAX, &bytes)))
            return rc;
        if (h != (int64_t)k)
            return cp_jdoc_fail(&p->doc, e, s, "host", ws, "slot %zu is host %lld: expected "
                                "hosts 0, 1, ... in order", k, (long long)h);
        if (bytes != r->r.bytes)
            return cp_jdoc_fail(&p->doc, e, s, "bytes", ws, "%lld bytes: each host publishes "
                                "the route's %lld", (long long)bytes, (long long)r->r.bytes);
    }
    r->pool = hosts;
    r->r.npool_slots = json_array_size(hosts);
    r->r.pool_chunk_bytes = chunk;
    return CP_OK;
}

static void plan_free(cpl_plan *p)
{
    if (!p)
        return;
    cp_jdoc_free(&p->doc);
    free(p->b);
    free(p->t);
    free(p->r);
    free(p->dev);
    free(p->pdev);
    free(p->rdev);
    free(p->home);
    free(p);
}

/* Sizes of everything, to allocate once. */
static int count(cpl_plan *p, const json_t *buckets, cp_err *e)
{
    size_t i, nt = 0, nr = 0, nd = 0;
    for (i = 0; i < json_array_size(buckets); i++) {
        const json_t *b = json_array_get(buckets, i), *rs = json_object_get(b, "routes");
        size_t k;
        nt += json_array_size(json_object_get(b, "tensors"));
        nr += json_array_size(rs);
        for (k = 0; k < json_array_size(rs); k++)
            nd += json_array_size(json_object_get(json_array_get(rs, k), "devices"));
    }
    if (nt > MAX_ITEMS || nr > MAX_ITEMS || nd > MAX_ITEMS || json_array_size(buckets) > MAX_ITEMS)
        return cp_jdoc_fail(&p->doc, e, p->doc.root, "buckets", "",
                            "more than %d tensors, routes or devices", MAX_ITEMS);
    p->b = calloc(json_array_size(buckets) + 1, sizeof *p->b);
    p->t = calloc(nt + 1, sizeof *p->t);
    p->r = calloc(nr + 1, sizeof *p->r);
    p->dev = calloc(nd + 1, sizeof *p->dev);
    if (!p->b || !p->t || !p->r || !p->dev)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    return CP_OK;
}

/* A tensor's or route's byte span [offset, offset + bytes): it must start
 * where the previous one ended (*off) and end within int64_t; advances *off.
 * `what` is "tensor" or "route", for the message. */
static int take_span(cpl_plan *p, const json_t *o, const char *where, const char *what,
                     int64_t offset, int64_t bytes, int64_t *off, cp_err *e)
{
    if (offset != *off)
        return cp_jdoc_fail(&p->doc, e, o, "offset", where,
                            "%s starts at byte %lld; the previous one ended at %lld "
                            "(%ss must tile the bucket)", what, (long long)offset,
                            (long long)*off, what);
    if (bytes > INT64_MAX - *off)
        return cp_jdoc_fail(&p->doc, e, o, "bytes", where,
                            "%s ends past byte 2^63 - 1 (%lld + %lld)", what, (long long)offset,
                            (long long)bytes);
    *off += bytes;
    return CP_OK;
}

static int read_tensor(cpl_plan *p, const json_t *o, const char *where, int64_t *off,
                       cp_err *e)
{
    cpl_tensor *t = &p->t[p->nt];
    int64_t offset = 0, bytes = 0;
    int rc;
    if (!json_is_object(o))
        return cp_jdoc_fail(&p->doc, e, o, NULL, where, "expected a tensor object");
    if ((rc = cp_jdoc_check_keys(&p->doc, e, o, where, tensor_keys)) ||
        (rc = cp_jget_str(&p->doc, e, o, where, "name", CP_REQ, 512, &t->name)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "offset", CP_REQ, 0, INT64_MAX, &offset)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "bytes", CP_REQ, 1, INT64_MAX, &bytes)) ||
        (rc = take_span(p, o, where, "tensor", offset, bytes, off, e)))
        return rc;
    t->offset = offset;
    t->bytes = bytes;
    p->nt++;
    return CP_OK;
}

static int read_route(cpl_plan *p, const json_t *o, const char *where, int64_t *off, cp_err *e)
{
    proute *r = &p->r[p->nr];
    const json_t *devs = NULL;
    int64_t order = 0, offset = 0, bytes = 0, shards = 0;
    int kind = 0, rc;
    size_t k;
    if (!json_is_object(o))
        return cp_jdoc_fail(&p->doc, e, o, NULL, where, "expected a route object");
    if ((rc = cp_jdoc_check_keys(&p->doc, e, o, where, route_keys)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "order", CP_REQ, 0, MAX_ITEMS, &order)) ||
        (rc = cp_jget_enum(&p->doc, e, o, where, "kind", CP_REQ, route_kinds, NULL, &kind)) ||
        (rc = cp_jget_str(&p->doc, e, o, where, "algorithm", CP_REQ, 64, &r->r.algorithm)) ||
        (rc = cp_jget_array(&p->doc, e, o, where, "devices", CP_REQ, &devs)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "offset", CP_REQ, 0, INT64_MAX, &offset)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "bytes", CP_REQ, 1, INT64_MAX, &bytes)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "shards", CP_REQ, 1, 1 << 24, &shards)) ||
        (rc = cp_jget_num(&p->doc, e, o, where, "start_ms", CP_NONNEG, "a time >= 0 (ms)",
                          &r->start_ms)) ||
        (rc = cp_jget_num(&p->doc, e, o, where, "finish_ms", CP_NONNEG, "a time >= 0 (ms)",
                          &r->finish_ms)) ||
        (rc = take_span(p, o, where, "route", offset, bytes, off, e)))
        return rc;
    if (shards > bytes)
        return cp_jdoc_fail(&p->doc, e, o, "shards", where, "%lld shards of %lld bytes",
                            (long long)shards, (long long)bytes);
    if (kind == KIND_POOL && p->version < 2)
        return cp_jdoc_fail(&p->doc, e, o, "kind", where, "pool routes need format \"%s\"",
                            CPL_FORMAT_POOL);
    if (kind != KIND_POOL && json_object_get(o, "pool"))
        return cp_jdoc_fail(&p->doc, e, o, "pool", where, "\"pool\" is for pool routes");
    r->pool = NULL;
    r->r.npool_slots = 0;
    r->r.pool_chunk_bytes = 0;
    r->r.bytes = bytes;
    if (kind == KIND_POOL && (rc = read_pool(p, o, where, r, e)))
        return rc;
    r->r.order = (int)order;
    r->r.kind = route_kinds[kind];
    r->r.offset = offset;
    r->r.bytes = bytes;
    r->r.shards = (int)shards;
    r->d0 = p->ndev;
    for (k = 0; k < json_array_size(devs); k++) {
        const json_t *d = json_array_get(devs, k);
        if (!json_is_string(d) || json_string_length(d) == 0)
            return cp_jdoc_fail(&p->doc, e, d, NULL, where, "devices: expected node ids");
        p->dev[p->ndev++] = json_string_value(d);
    }
    r->nd = p->ndev - r->d0;
    r->r.ndevices = r->nd;
    p->nr++;
    return CP_OK;
}

static int read_bucket(cpl_plan *p, const json_t *o, size_t idx, cp_err *e)
{
    char where[64], sub[96];
    const json_t *ts = NULL, *rs = NULL;
    pbucket *b = &p->b[idx];
    int64_t id = 0, bytes = 0, layer = 0, off;
    size_t k;
    int rc;
    cp_jpath_index(where, sizeof where, "buckets", idx);
    if (!json_is_object(o))
        return cp_jdoc_fail(&p->doc, e, o, NULL, where, "expected a bucket object");
    if ((rc = cp_jdoc_check_keys(&p->doc, e, o, where, bucket_keys)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "id", CP_REQ, 0, MAX_ITEMS, &id)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "bytes", CP_REQ, 1, INT64_MAX, &bytes)) ||
        (rc = cp_jget_num(&p->doc, e, o, where, "ready_ms", CP_REQ | CP_NONNEG, "a time >= 0 (ms)",
                          &b->ready_ms)) ||
        (rc = cp_jget_num(&p->doc, e, o, where, "need_ms", CP_NONNEG, "a time >= 0 (ms)", &b->need_ms)) ||
        (rc = cp_jget_int(&p->doc, e, o, where, "first_layer", 0, 0, MAX_ITEMS, &layer)) ||
        (rc = cp_jget_array(&p->doc, e, o, where, "tensors", CP_REQ, &ts)) ||
        (rc = cp_jget_array(&p->doc, e, o, where, "routes", CP_REQ, &rs)))
        return rc;
    if ((size_t)id != idx)
        return cp_jdoc_fail(&p->doc, e, o, "id", where, "bucket id %lld at position %zu",
                            (long long)id, idx);
    if (json_array_size(ts) == 0 || json_array_size(rs) == 0)
        return cp_jdoc_fail(&p->doc, e, o, json_array_size(ts) ? "routes" : "tensors", where,
                            "a bucket needs at least one tensor and one route");
    b->bytes = bytes;
    b->t0 = p->nt;
    for (k = 0, off = 0; k < json_array_size(ts); k++) {
        snprintf(sub, sizeof sub, "%s.tensors[%zu]", where, k);
        if ((rc = read_tensor(p, json_array_get(ts, k), sub, &off, e)))
            return rc;
    }
    if (off != bytes)
        return cp_jdoc_fail(&p->doc, e, o, "bytes", where,
                            "bucket has %lld bytes but its tensors add up to %lld",
                            (long long)bytes, (long long)off);
    b->nt = p->nt - b->t0;
    b->r0 = p->nr;
    for (k = 0, off = 0; k < json_array_size(rs); k++) {
        snprintf(sub, sizeof sub, "%s.routes[%zu]", where, k);
        if ((rc = read_route(p, json_array_get(rs, k), sub, &off, e)))
            return rc;
    }
    if (off != bytes)
        return cp_jdoc_fail(&p->doc, e, o, "routes", where,
                            "routes cover %lld of the bucket's %lld bytes", (long long)off,
                            (long long)bytes);
    b->nr = p->nr - b->r0;
    return CP_OK;
}

/* Tensor names unique, and as many as the model block says. */
static int check_tensors(cpl_plan *p, const json_t *model, cp_err *e)
{
    cp_strmap names = {0};
    int64_t want = 0;
    size_t i;
    int rc = cp_jget_int(&p->doc, e, model, "model", "tensors", CP_REQ, 1, MAX_ITEMS, &want);
    if (rc)
        return rc;
    if ((size_t)want != p->nt)
        return cp_jdoc_fail(&p->doc, e, model, "tensors", "model",
                            "the model has %lld tensors but the buckets hold %zu",
                            (long long)want, p->nt);
    if (cp_strmap_init(&names, p->nt))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < p->nt && rc == CP_OK; i++) {
        int prev = cp_strmap_put(&names, p->t[i].name, (int)i);
        if (prev == -2)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        else if (prev >= 0)
            rc = cp_fail_at(e, CP_EINPUT, p->doc.path, 0, 0, "buckets",
                            "tensor \"%s\" appears in two buckets", p->t[i].name);
    }
    cp_strmap_free(&names);
    return rc;
}

/* Orders are a permutation; GPUs and devices cannot wait in a cycle. */
static int check_orders(cpl_plan *p, cp_err *e)
{
    size_t i, k, nparts = 1;
    int rc = CP_OK, *seen = calloc(p->nr + 1, sizeof *seen), **seq = NULL, *len = NULL;
    cp_strmap devs = {0};
    if (!seen)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < p->nr && rc == CP_OK; i++) {
        int o = p->r[i].r.order;
        if ((size_t)o >= p->nr || seen[o]++)
            rc = cp_fail_at(e, CP_EINPUT, p->doc.path, 0, 0, "buckets",
                            "route order %d is %s: orders must be 0 to %zu, each once", o,
                            (size_t)o >= p->nr ? "out of range" : "used twice", p->nr - 1);
    }
    /* participant 0: the GPUs (in every route); then one per named device */
    if (rc == CP_OK && cp_strmap_init(&devs, p->ndev + 1))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; rc == CP_OK && i < p->ndev; i++)
        if (cp_strmap_put(&devs, p->dev[i], (int)nparts) == -1)
            nparts++;
    if (rc == CP_OK) {
        int *by_order = malloc((p->nr + 1) * sizeof *by_order);
        seq = calloc(nparts, sizeof *seq);
        len = calloc(nparts, sizeof *len);
        if (!by_order || !seq || !len)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        for (k = 0; rc == CP_OK && k < nparts; k++)
            if (!(seq[k] = malloc((p->nr + 1) * sizeof **seq)))
                rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        for (i = 0; rc == CP_OK && i < p->nr; i++)
            by_order[p->r[i].r.order] = (int)i;
        for (k = 0; rc == CP_OK && k < p->nr; k++) {
            const proute *r = &p->r[by_order[k]];
            size_t d;
            seq[0][len[0]++] = (int)k;
            for (d = 0; d < r->nd; d++) {
                int part = cp_strmap_get(&devs, p->dev[r->d0 + d]);
                if (len[part] == 0 || seq[part][len[part] - 1] != (int)k)
                    seq[part][len[part]++] = (int)k;
            }
        }
        if (rc == CP_OK)
            rc = cp_check_waits((int)nparts, (const int *const *)seq, len, (int)p->nr, NULL, e);
        free(by_order);
    }
    for (k = 0; seq && k < nparts; k++)
        free(seq[k]);
    free(seq);
    free(len);
    free(seen);
    cp_strmap_free(&devs);
    return rc;
}

/* One entry of `proxies`: a device name, and the GPUs (by index) that push
 * to it in proxy-ring (`ring_clients`, optional); *dev gets the name. */
static int read_proxy(cpl_plan *p, const json_t *o, size_t idx, const char **dev, cp_err *e)
{
    char where[64];
    const json_t *cl = NULL, *rc_gpus = NULL;
    double gbs = 0;
    size_t k;
    int rc;
    cp_jpath_index(where, sizeof where, "proxies", idx);
    if (!json_is_object(o))
        return cp_jdoc_fail(&p->doc, e, o, NULL, where, "expected a proxy object");
    if ((rc = cp_jdoc_check_keys(&p->doc, e, o, where, proxy_keys)) ||
        (rc = cp_jget_str(&p->doc, e, o, where, "device", CP_REQ, 512, dev)) ||
        (rc = cp_jget_num(&p->doc, e, o, where, "reduce_gbs", CP_NONNEG, "a rate >= 0 (GB/s)",
                          &gbs)) ||
        (rc = cp_jget_array(&p->doc, e, o, where, "clients", 0, &cl)) ||
        (rc = cp_jget_array(&p->doc, e, o, where, "ring_clients", 0, &rc_gpus)))
        return rc;
    for (k = 0; k < json_array_size(cl); k++)
        if (!json_is_string(json_array_get(cl, k)))
            return cp_jdoc_fail(&p->doc, e, json_array_get(cl, k), NULL, where,
                                "clients: expected GPU ids");
    for (k = 0; k < json_array_size(rc_gpus); k++) {
        const json_t *g = json_array_get(rc_gpus, k);
        json_int_t gi = json_is_integer(g) ? json_integer_value(g) : -1;
        if (gi < 0 || gi >= p->gpus)
            return cp_jdoc_fail(&p->doc, e, g, NULL, where,
                                "ring_clients: expected GPU indices 0 to %d", p->gpus - 1);
        if (p->home[gi] != -1)
            return cp_jdoc_fail(&p->doc, e, g, NULL, where,
                                "ring_clients: GPU %lld pushes to two devices", (long long)gi);
        p->home[gi] = -2 - (int)idx; /* proxy idx; resolved to a participant below */
    }
    return CP_OK;
}

/* The participants besides the GPUs (coarse_plan.h, cpl_device_count):
 * every device a route names, the `proxies` entries first in their order,
 * then the others (CPU sockets) in order of first mention.  A device no
 * route names takes no part, so it gets no rank. */
static int read_participants(cpl_plan *p, const json_t *proxies, cp_err *e)
{
    cp_strmap named = {0}, part = {0};
    const char **pname = NULL;
    size_t i, np = json_array_size(proxies);
    int rc = CP_OK;
    p->pdev = calloc(p->ndev + 1, sizeof *p->pdev);
    p->rdev = calloc(p->ndev + 1, sizeof *p->rdev);
    p->home = malloc(((size_t)p->gpus + 1) * sizeof *p->home);
    pname = calloc(np + 1, sizeof *pname);
    if (!p->pdev || !p->rdev || !p->home || !pname || cp_strmap_init(&named, p->ndev + 1) ||
        cp_strmap_init(&part, p->ndev + np + 1))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; rc == CP_OK && i < (size_t)p->gpus; i++)
        p->home[i] = -1;
    for (i = 0; rc == CP_OK && i < p->ndev; i++)
        if (cp_strmap_put(&named, p->dev[i], (int)i) == -2)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; rc == CP_OK && i < np; i++) {
        rc = read_proxy(p, json_array_get(proxies, i), i, &pname[i], e);
        if (rc == CP_OK && cp_strmap_get(&named, pname[i]) >= 0 &&
            cp_strmap_put(&part, pname[i], (int)p->npdev) == -1)
            p->pdev[p->npdev++] = pname[i];
    }
    for (i = 0; rc == CP_OK && i < p->ndev; i++)
        if (cp_strmap_put(&part, p->dev[i], (int)p->npdev) == -1)
            p->pdev[p->npdev++] = p->dev[i];
    for (i = 0; rc == CP_OK && i < p->ndev; i++)
        p->rdev[i] = cp_strmap_get(&part, p->dev[i]);
    for (i = 0; rc == CP_OK && i < (size_t)p->gpus; i++)
        if (p->home[i] <= -2)
            p->home[i] = cp_strmap_get(&part, pname[-2 - p->home[i]]);
    free(pname);
    cp_strmap_free(&named);
    cp_strmap_free(&part);
    return rc;
}

/* Why: a plan made for a large-model layout (plan --tp ...) says which
 * stage and which group it synchronises, and simulate rebuilds that group's
 * machine from it; the object is optional (older plans have none) and
 * strict like the rest.  Its group must be the plan's GPUs and hosts. */
static int read_layout(cpl_plan *p, const json_t *root, cp_err *e)
{
    static const char *const deg[] = {"tp", "pp", "vp", "cp", "dp", "mbs", "gbs"};
    const json_t *o = NULL;
    int64_t v[7], stage = 0, gg = 0, gh = 0, seq = 0, params = 0;
    double net = 0;
    int rc, i;
    if ((rc = cp_jget_object(&p->doc, e, root, "", "layout", 0, &o)) || !o)
        return rc;
    if ((rc = cp_jdoc_check_keys(&p->doc, e, o, "layout", layout_keys)))
        return rc;
    for (i = 0; i < 7; i++)
        if ((rc = cp_jget_int(&p->doc, e, o, "layout", deg[i], CP_REQ, 1, 1 << 20, &v[i])))
            return rc;
    if ((rc = cp_jget_int(&p->doc, e, o, "layout", "stage", CP_REQ, 0, v[1] - 1, &stage)) ||
        (rc = cp_jget_int(&p->doc, e, o, "layout", "group_gpus", CP_REQ, 1, 1 << 20, &gg)) ||
        (rc = cp_jget_int(&p->doc, e, o, "layout", "group_hosts", CP_REQ, 1, 1 << 20, &gh)) ||
        (rc = cp_jget_int(&p->doc, e, o, "layout", "seq", 0, 1, (int64_t)1 << 40, &seq)) ||
        (rc = cp_jget_int(&p->doc, e, o, "layout", "stage_params", 0, 0, (int64_t)1 << 50,
                          &params)) ||
        (rc = cp_jget_num_range(&p->doc, e, o, "layout", "net_gbs", CP_POS, 0, 1e5,
                                "a positive rate, GB/s", &net)))
        return rc;
    if (gg != (int64_t)p->gpus || gh != (int64_t)p->hosts)
        return cp_jdoc_fail(&p->doc, e, o, "group_gpus", "layout",
                            "the group of %lld GPUs on %lld hosts is not the plan's topology "
                            "(%d GPUs on %d hosts)", (long long)gg, (long long)gh, p->gpus,
                            p->hosts);
    if (gg != v[4] * v[3])
        return cp_jdoc_fail(&p->doc, e, o, "group_gpus", "layout",
                            "a data-parallel group of %lld GPUs, but dp is %lld and cp %lld",
                            (long long)gg, (long long)v[4], (long long)v[3]);
    p->has_layout = 1;
    p->layout.tp = (int)v[0], p->layout.pp = (int)v[1], p->layout.vp = (int)v[2];
    p->layout.cp = (int)v[3], p->layout.dp = (int)v[4], p->layout.mbs = (int)v[5];
    p->layout.gbs = (int)v[6];
    p->layout.seq = (long long)seq;
    p->layout.stage = (int)stage;
    p->layout.group_gpus = (int)gg, p->layout.group_hosts = (int)gh;
    p->layout.stage_params = (long long)params;
    p->layout.net_gbs = net;
    return CP_OK;
}

static int read_plan(cpl_plan *p, cp_err *e)
{
    const json_t *root = p->doc.root, *model = NULL, *topo = NULL, *buckets = NULL,
                 *proxies = NULL;
    const char *format = NULL;
    int64_t gpus = 0, split = 0, hosts = 1;
    size_t i;
    int rc;
    if ((rc = cp_jget_str(&p->doc, e, root, "", "format", CP_REQ, 64, &format)))
        return rc;
    p->version = strcmp(format, CPL_FORMAT) == 0 ? 1 : strcmp(format, CPL_FORMAT_POOL) == 0 ? 2 : 0;
    if (!p->version)
        return cp_jdoc_fail(&p->doc, e, root, "format", "",
                            "unsupported plan format \"%s\" (this loader reads \"%s\" and "
                            "\"%s\")", format, CPL_FORMAT, CPL_FORMAT_POOL);
    if ((rc = cp_jdoc_check_keys(&p->doc, e, root, "", top_keys)) ||
        (rc = cp_jget_object(&p->doc, e, root, "", "model", CP_REQ, &model)) ||
        (rc = cp_jdoc_check_keys(&p->doc, e, model, "model", model_keys)) ||
        (rc = cp_jget_str(&p->doc, e, model, "model", "name", CP_REQ, 512, &p->model)) ||
        (rc = cp_jget_object(&p->doc, e, root, "", "topology", CP_REQ, &topo)) ||
        (rc = cp_jdoc_check_keys(&p->doc, e, topo, "topology", topo_keys)) ||
        (rc = cp_jget_str(&p->doc, e, topo, "topology", "name", CP_REQ, 512, &p->topo)) ||
        (rc = cp_jget_int(&p->doc, e, topo, "topology", "gpus", CP_REQ, 1, 1 << 20, &gpus)) ||
        (rc = cp_jget_int(&p->doc, e, topo, "topology", "hosts", 0, 1, 1 << 20, &hosts)) ||
        (rc = cp_jget_str(&p->doc, e, model, "model", "dtype", 0, 16, &p->dtype)) ||
        (rc = cp_jget_array(&p->doc, e, root, "", "proxies", 0, &proxies)) ||
        (rc = cp_jget_int(&p->doc, e, root, "", "split_layer", 0, 0, MAX_ITEMS, &split)) ||
        (rc = cp_jget_array(&p->doc, e, root, "", "buckets", CP_REQ, &buckets)))
        return rc;
    {
        const json_t *pred = json_object_get(root, "predicted");
        if (json_is_object(pred) && json_is_number(json_object_get(pred, "iteration_ms")))
            p->iteration_ms = json_number_value(json_object_get(pred, "iteration_ms"));
        if (json_is_object(pred) && json_is_number(json_object_get(pred, "compute_ms")))
            p->compute_ms = json_number_value(json_object_get(pred, "compute_ms"));
        /* the tail after the last synchronisation, which simulate adds; plans
         * written before it had none and replay as they did (0) */
        if (json_is_object(pred) &&
            (rc = cp_jget_num(&p->doc, e, pred, "predicted", "tail_ms", CP_NONNEG,
                              "a time >= 0 (ms)", &p->tail_ms)))
            return rc;
        if (p->tail_ms > p->compute_ms && json_is_number(json_object_get(pred, "compute_ms")))
            return cp_jdoc_fail(&p->doc, e, pred, "tail_ms", "predicted",
                                "the tail %g ms is longer than the compute %g ms it is part of",
                                p->tail_ms, p->compute_ms);
        if (json_is_string(json_object_get(topo, "file")))
            p->topo_file = json_string_value(json_object_get(topo, "file"));
        if (json_is_string(json_object_get(topo, "hash")))
            p->topo_hash = json_string_value(json_object_get(topo, "hash"));
    }
    p->gpus = (int)gpus;
    p->hosts = (int)hosts;
    p->split = (int)split;
    if (gpus % hosts)
        return cp_jdoc_fail(&p->doc, e, topo, "hosts", "topology",
                            "%lld GPUs do not divide among %lld hosts", (long long)gpus,
                            (long long)hosts);
    if ((rc = read_layout(p, root, e)))
        return rc;
    if (json_array_size(buckets) == 0)
        return cp_jdoc_fail(&p->doc, e, root, "buckets", "", "the plan has no buckets");
    if ((rc = count(p, buckets, e)))
        return rc;
    for (i = 0; i < json_array_size(buckets); i++) {
        if ((rc = read_bucket(p, json_array_get(buckets, i), i, e)))
            return rc;
        p->nb++;
    }
    if ((rc = check_tensors(p, model, e)) || (rc = read_participants(p, proxies, e)))
        return rc;
    return check_orders(p, e);
}

int cp_planfile_load_doc(cp_jdoc *d, cpl_plan **out, cp_err *e)
{
    cpl_plan *p = calloc(1, sizeof *p);
    int rc;
    *out = NULL;
    if (!p) {
        cp_jdoc_free(d);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    p->doc = *d;
    memset(d, 0, sizeof *d);
    rc = read_plan(p, e);
    if (rc) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return CP_OK;
}

int cp_planfile_load(const char *path, cpl_plan **out, cp_err *e)
{
    cp_jdoc d;
    int rc = cp_jdoc_load(&d, path, e);
    *out = NULL;
    return rc ? rc : cp_planfile_load_doc(&d, out, e);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */

/* One line, "FILE:LINE:COL: what is wrong", into the caller's buffer. */
static void format_err(const cp_err *e, char *err, size_t errlen)
{
    if (!err || errlen == 0)
        return;
    if (e->file[0] && e->line > 0)
        snprintf(err, errlen, "%s:%d:%d: %s%s%s", e->file, e->line, e->col, e->where,
                 e->where[0] ? ": " : "", e->msg);
    else if (e->file[0])
        snprintf(err, errlen, "%s: %s", e->file, e->msg);
    else
        snprintf(err, errlen, "%s", e->msg);
}

int cpl_open(const char *path, cpl_plan **out, char *err, size_t errlen)
{
    cp_err e;
    cp_err_clear(&e);
    if (!path || !out) {
        if (err && errlen)
            snprintf(err, errlen, "cpl_open: NULL argument");
        return -1;
    }
    if (cp_planfile_load(path, out, &e) != CP_OK) {
        format_err(&e, err, errlen);
        return -1;
    }
    return 0;
}

void cpl_close(cpl_plan *p)
{
    plan_free(p);
}

const char *cpl_model_name(const cpl_plan *p) { return p->model; }
const char *cpl_topology_name(const cpl_plan *p) { return p->topo; }
int cpl_gpu_count(const cpl_plan *p) { return p->gpus; }
int cpl_split_layer(const cpl_plan *p) { return p->split; }
double cpl_predicted_iteration_ms(const cpl_plan *p) { return p->iteration_ms; }
size_t cpl_bucket_count(const cpl_plan *p) { return p->nb; }
size_t cpl_route_count(const cpl_plan *p) { return p->nr; }
double cp_planfile_compute_ms(const cpl_plan *p) { return p->compute_ms; }
double cp_planfile_tail_ms(const cpl_plan *p) { return p->tail_ms; }
double cp_planfile_need_ms(const cpl_plan *p, size_t b) { return b < p->nb ? p->b[b].need_ms : 0; }
const char *cp_planfile_topo_file(const cpl_plan *p) { return p->topo_file; }
const char *cp_planfile_topo_hash(const cpl_plan *p) { return p->topo_hash; }
size_t cpl_tensor_count(const cpl_plan *p) { return p->nt; }
int cpl_host_count(const cpl_plan *p) { return p->hosts; }
const char *cpl_dtype(const cpl_plan *p) { return p->dtype; }
size_t cpl_device_count(const cpl_plan *p) { return p->npdev; }
const char *cpl_device_name(const cpl_plan *p, size_t d) { return d < p->npdev ? p->pdev[d] : NULL; }
int cpl_get_layout(const cpl_plan *p, cpl_layout *out)
{
    if (!p || !out || !p->has_layout)
        return -1;
    *out = p->layout;
    return 0;
}
int cpl_ring_home(const cpl_plan *p, int gpu) { return gpu >= 0 && gpu < p->gpus ? p->home[gpu] : -1; }

int cpl_route_times(const cpl_plan *p, size_t bucket, size_t route, double *start_ms,
                    double *finish_ms)
{
    const proute *r;
    if (!p || bucket >= p->nb || route >= p->b[bucket].nr)
        return -1;
    r = &p->r[p->b[bucket].r0 + route];
    *start_ms = r->start_ms;
    *finish_ms = r->finish_ms;
    return 0;
}

int cpl_route_device_index(const cpl_plan *p, size_t bucket, size_t route, size_t d)
{
    const proute *r;
    if (!p || bucket >= p->nb || route >= p->b[bucket].nr)
        return -1;
    r = &p->r[p->b[bucket].r0 + route];
    return d < r->nd ? p->rdev[r->d0 + d] : -1;
}

/* The first plan tensor whose name is not among the model's, or -1. */
static long first_extra(const cpl_plan *p, size_t ntensors, const char *const *names)
{
    cp_strmap have = {0};
    size_t i;
    long bad = -1;
    if (cp_strmap_init(&have, ntensors))
        return -2;
    for (i = 0; i < ntensors; i++)
        cp_strmap_put(&have, names[i], (int)i);
    for (i = 0; i < p->nt && bad < 0; i++)
        if (cp_strmap_get(&have, p->t[i].name) < 0)
            bad = (long)i;
    cp_strmap_free(&have);
    return bad;
}

int cpl_verify(const cpl_plan *p, size_t ntensors, const char *const *names,
               const int64_t *bytes, char *err, size_t errlen)
{
    char scratch[8];
    cp_strmap idx = {0};
    size_t i;
    long extra;
    int rc = 0;
    if (!err || errlen == 0) {
        err = scratch;
        errlen = sizeof scratch;
    }
    if (cp_strmap_init(&idx, p->nt)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (i = 0; i < p->nt; i++)
        cp_strmap_put(&idx, p->t[i].name, (int)i);
    for (i = 0; i < ntensors && rc == 0; i++) {
        int k = cp_strmap_get(&idx, names[i]);
        if (k < 0) {
            snprintf(err, errlen, "tensor %zu \"%s\" of the model is not in the plan (a plan "
                     "for model \"%s\")", i, names[i], p->model);
            rc = -1;
        } else if (p->t[k].bytes != bytes[i]) {
            snprintf(err, errlen, "tensor %zu \"%s\": the model has %lld gradient bytes, the "
                     "plan %lld", i, names[i], (long long)bytes[i], (long long)p->t[k].bytes);
            rc = -1;
        }
    }
    cp_strmap_free(&idx);
    if (rc == 0 && ntensors != p->nt) {
        extra = first_extra(p, ntensors, names);
        if (extra >= 0)
            snprintf(err, errlen, "plan tensor \"%s\" is not in the model (the model has %zu "
                     "tensors, the plan %zu)", p->t[extra].name, ntensors, p->nt);
        else
            snprintf(err, errlen, "the model has %zu tensors, the plan %zu", ntensors, p->nt);
        rc = -1;
    }
    return rc;
}

int cpl_get_bucket(const cpl_plan *p, size_t bucket, cpl_bucket *out)
{
    if (!p || bucket >= p->nb)
        return -1;
    out->id = bucket;
    out->bytes = p->b[bucket].bytes;
    out->ready_ms = p->b[bucket].ready_ms;
    out->ntensors = p->b[bucket].nt;
    out->nroutes = p->b[bucket].nr;
    return 0;
}

int cpl_get_tensor(const cpl_plan *p, size_t bucket, size_t k, cpl_tensor *out)
{
    if (!p || bucket >= p->nb || k >= p->b[bucket].nt)
        return -1;
    *out = p->t[p->b[bucket].t0 + k];
    return 0;
}

int cpl_get_route(const cpl_plan *p, size_t bucket, size_t k, cpl_route *out)
{
    if (!p || bucket >= p->nb || k >= p->b[bucket].nr)
        return -1;
    *out = p->r[p->b[bucket].r0 + k].r;
    return 0;
}

const char *cpl_route_device(const cpl_plan *p, size_t bucket, size_t route, size_t d)
{
    const proute *r;
    if (!p || bucket >= p->nb || route >= p->b[bucket].nr)
        return NULL;
    r = &p->r[p->b[bucket].r0 + route];
    return d < r->nd ? p->dev[r->d0 + d] : NULL;
}

int cpl_get_pool_slot(const cpl_plan *p, size_t bucket, size_t route, size_t k,
                      cpl_pool_slot *out)
{
    const proute *r;
    const json_t *s;
    if (!p || bucket >= p->nb || route >= p->b[bucket].nr)
        return -1;
    r = &p->r[p->b[bucket].r0 + route];
    if (!r->pool || k >= r->r.npool_slots)
        return -1;
    s = json_array_get(r->pool, k);
    out->host = (int)json_integer_value(json_object_get(s, "host"));
    out->offset = json_integer_value(json_object_get(s, "offset"));
    out->bytes = json_integer_value(json_object_get(s, "bytes"));
    return 0;
}
