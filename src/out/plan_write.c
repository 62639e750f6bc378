/*
 * plan_write.c - building the plan JSON and checking its orders (see
 * plan_write.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "core/version.h"
#include "out/plan_write.h"
#include "plan/deadlock.h"

#define PLAN_FORMAT "coarse-plan/1"
/* Plans with routes through a CXL pool: their routes carry "pool" (which
 * range of the pool each host writes; it reads the others'), which
 * loaders of format 1 would refuse (docs/plan-format.md). */
#define PLAN_FORMAT_POOL "coarse-plan/2"

static json_t *real(double x, int d)
{
    return json_real(cp_round(x, d));
}

static json_t *hash_str(unsigned long long h)
{
    char buf[40];
    snprintf(buf, sizeof buf, "fnv1a64:%016llx", h);
    return json_string(buf);
}

/* Node ids of a route's devices (proxies or CPU sockets). */
static json_t *route_devices(const cp_plan *p, const cp_plan_route *r)
{
    json_t *a = json_array();
    const cp_family *f = &p->fams.f[r->fam];
    int k;
    if (r->dev >= 0) {
        json_array_append_new(a, json_string(p->topo->nodes[r->dev].id));
    } else if (r->fam != CP_FAM_ALLREDUCE) {
        for (k = 0; k < f->ndev; k++)
            json_array_append_new(a, json_string(p->topo->nodes[f->dev[k]].id));
    }
    return a;
}

/* A pool route's layout: host h writes its contribution to the route's
 * range at [base + h x bytes, base + (h + 1) x bytes) of the pool's shared
 * region, its GPUs' pieces in local-rank order, interleaved over the
 * route's devices in chunk_bytes units (a GPU's piece over the pool's
 * chunk count, whole elements); every host reads the others'.  *base
 * advances past the route's H ranges. */
static json_t *pool_layout(const cp_plan *p, const cp_plan_route *r, int elem, int64_t *base)
{
    json_t *o = json_object(), *hs = json_array();
    int h, H = p->topo->nhosts;
    double chunk = ceil(cp_pool_chunk_bytes(p->fams.pool, (double)r->bytes) / elem) * elem;
    json_object_set_new(o, "chunk_bytes", json_integer((json_int_t)fmax(chunk, elem)));
    for (h = 0; h < H; h++) {
        json_t *s = json_object();
        json_object_set_new(s, "host", json_integer(h));
        json_object_set_new(s, "offset", json_integer(*base + (int64_t)h * r->bytes));
        json_object_set_new(s, "bytes", json_integer(r->bytes));
        json_array_append_new(hs, s);
    }
    *base += (int64_t)H * r->bytes;
    json_object_set_new(o, "hosts", hs);
    return o;
}

static json_t *bucket_json(const cp_plan *p, int bi, int64_t *pool_base)
{
    const cp_plan_bucket *b = &p->b[bi];
    json_t *o = json_object(), *ts = json_array(), *rs = json_array();
    int64_t off = 0;
    int k, elem = cp_dtype_bytes(p->model->dtype);
    if (p->opts.pred.grad_bytes > 0)
        elem = p->opts.pred.grad_bytes;
    json_object_set_new(o, "id", json_integer(bi));
    json_object_set_new(o, "bytes", json_integer(b->bytes));
    json_object_set_new(o, "ready_ms", real(b->ready_ms, 4));
    json_object_set_new(o, "need_ms", real(b->need_ms, 4));
    json_object_set_new(o, "first_layer", json_integer(b->first_layer));
    for (k = 0; k < b->count; k++) {
        const cp_tensor *t = &p->model->tensors[p->order[b->first + k]];
        json_t *tj = json_object();
        int64_t bytes = t->numel * elem;
        json_object_set_new(tj, "name", json_string(t->name));
        json_object_set_new(tj, "offset", json_integer(off));
        json_object_set_new(tj, "bytes", json_integer(bytes));
        json_array_append_new(ts, tj);
        off += bytes;
    }
    for (k = 0; k < b->nroutes; k++) {
        const cp_plan_route *r = &b->routes[k];
        json_t *rj = json_object();
        json_object_set_new(rj, "order", json_integer(r->order));
        json_object_set_new(rj, "kind", json_string(cp_fam_name(r->fam)));
        json_object_set_new(rj, "algorithm", json_string(r->how));
        json_object_set_new(rj, "devices", route_devices(p, r));
        json_object_set_new(rj, "offset", json_integer(r->offset));
        json_object_set_new(rj, "bytes", json_integer(r->bytes));
        json_object_set_new(rj, "shards", json_integer(r->shards));
        json_object_set_new(rj, "start_ms", real(r->start_ms, 4));
        json_object_set_new(rj, "finish_ms", real(r->finish_ms, 4));
        if (r->fam == CP_FAM_POOL)
            json_object_set_new(rj, "pool", pool_layout(p, r, elem, pool_base));
        json_array_append_new(rs, rj);
    }
    json_object_set_new(o, "tensors", ts);
    json_object_set_new(o, "routes", rs);
    return o;
}

/* Memory devices acting as proxies, with the GPUs whose queues they keep
 * and, when proxy-ring is available, the GPUs (indices) that push to each
 * in it (its nearest device: families.c), so that a runtime need not know
 * the topology to execute proxy-ring routes. */
static json_t *proxies_json(const cp_plan *p)
{
    json_t *arr = json_array();
    const cp_topo *t = p->topo;
    const cp_family *ring = &p->fams.f[CP_FAM_PROXY_RING];
    int v, g;
    for (v = 0; v < t->nnodes; v++) {
        json_t *o, *cl;
        if (t->nodes[v].kind != CP_MEMDEV || t->nodes[v].reduce_gbs <= 0)
            continue;
        o = json_object();
        cl = json_array();
        for (g = 0; g < t->ngpus; g++)
            json_array_append_new(cl, json_string(t->nodes[t->gpus[g]].id));
        json_object_set_new(o, "device", json_string(t->nodes[v].id));
        json_object_set_new(o, "reduce_gbs", real(t->nodes[v].reduce_gbs, 4));
        json_object_set_new(o, "clients", cl);
        json_object_set_new(o, "queues", json_string("per-client"));
        if (ring->available && ring->client_dev) {
            json_t *rc = json_array();
            for (g = 0; g < t->ngpus; g++)
                if (ring->client_dev[g] == v)
                    json_array_append_new(rc, json_integer(g));
            json_object_set_new(o, "ring_clients", rc);
        }
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *families_json(const cp_plan *p)
{
    json_t *arr = json_array();
    int f;
    for (f = 0; f < CP_FAMS; f++) {
        const cp_family *fa = &p->fams.f[f];
        json_t *o;
        if (!fa->available)
            continue;
        o = json_object();
        json_object_set_new(o, "name", json_string(cp_fam_name((cp_fam_kind)f)));
        json_object_set_new(o, "group", json_integer(fa->group));
        json_object_set_new(o, "gbs", real(fa->gbs, 4));
        json_object_set_new(o, "bytes", json_integer((json_int_t)p->fam_bytes[f]));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *cp_plan_to_json(const cp_plan *p, const cp_plan_inputs *in)
{
    json_t *root = json_object(), *m = json_object(), *t = json_object(), *s = json_object(),
           *pr = json_object(), *bs = json_array();
    int bi, k, pooled = 0;
    int64_t pool_base = 0;
    if (!root || !m || !t || !s || !pr || !bs)
        return NULL;
    for (bi = 0; bi < p->nb; bi++)
        for (k = 0; k < p->b[bi].nroutes; k++)
            pooled |= p->b[bi].routes[k].fam == CP_FAM_POOL;
    json_object_set_new(root, "format", json_string(pooled ? PLAN_FORMAT_POOL : PLAN_FORMAT));
    json_object_set_new(root, "generator", json_string("coarse-plan " CP_VERSION));
    json_object_set_new(m, "name", json_string(p->model->name));
    json_object_set_new(m, "file", json_string(in->model_path));
    json_object_set_new(m, "hash", hash_str(in->model_hash));
    json_object_set_new(m, "tensors", json_integer(p->model->ntensors));
    json_object_set_new(m, "dtype", json_string(p->opts.pred.grad_bytes == 2   ? "fp16"
                                                : p->opts.pred.grad_bytes == 4 ? "fp32"
                                                : cp_dtype_name(p->model->dtype)));
    json_object_set_new(root, "model", m);
    json_object_set_new(t, "name", json_string(p->topo->name));
    json_object_set_new(t, "file", json_string(in->topo_path));
    json_object_set_new(t, "hash", hash_str(in->topo_hash));
    /* the hosts the plan was made for: a multi-host file's own, or the
     * --hosts copies of a single-host one (issue 24, item 3) */
    json_object_set_new(t, "hosts", json_integer(p->topo->nhosts));
    json_object_set_new(t, "gpus", json_integer(p->topo->ngpus));
    json_object_set_new(root, "topology", t);
    if (in->layout) {
        const cp_plan_layout *L = in->layout;
        json_t *l = json_object();
        if (!l)
            return NULL;
        json_object_set_new(l, "framework", json_string(L->framework));
        json_object_set_new(l, "tp", json_integer(L->tp));
        json_object_set_new(l, "pp", json_integer(L->pp));
        json_object_set_new(l, "vp", json_integer(L->vp));
        json_object_set_new(l, "cp", json_integer(L->cp));
        json_object_set_new(l, "dp", json_integer(L->dp));
        json_object_set_new(l, "mbs", json_integer(L->mbs));
        json_object_set_new(l, "gbs", json_integer(L->gbs));
        json_object_set_new(l, "seq", json_integer(L->seq));
        json_object_set_new(l, "stage", json_integer(L->stage));
        json_object_set_new(l, "group", json_string(L->group));
        json_object_set_new(l, "group_gpus", json_integer(L->group_gpus));
        json_object_set_new(l, "group_hosts", json_integer(L->group_hosts));
        json_object_set_new(l, "stage_params", json_integer(L->params));
        json_object_set_new(l, "bucket_params", json_integer((json_int_t)L->bucket_params));
        if (L->net_gbs > 0)
            json_object_set_new(l, "net_gbs", real(L->net_gbs, 6));
        json_object_set_new(l, "layout_iteration_ms", real(L->iteration_ms, 4));
        json_object_set_new(root, "layout", l);
    }
    json_object_set_new(s, "mode", json_string(p->opts.mode == CP_PLAN_PROXY ? "proxy" : "coarse"));
    json_object_set_new(s, "bucket_mb", real(p->opts.pred.bucket_mb, 6));
    json_object_set_new(s, "first_bucket_mb", real(p->opts.pred.first_bucket_mb, 6));
    json_object_set_new(s, "min_shard_kb", real(p->opts.min_shard_kb, 6));
    json_object_set_new(s, "compute_ms", real(p->compute_ms, 6));
    json_object_set_new(root, "settings", s);
    json_object_set_new(pr, "iteration_ms", real(p->iteration_ms, 4));
    json_object_set_new(pr, "compute_ms", real(p->compute_ms, 4));
    json_object_set_new(pr, "exposed_ms", real(p->iteration_ms - p->compute_ms, 4));
    json_object_set_new(pr, "tail_ms", real(p->tail_ms, 4));
    json_object_set_new(pr, "lp_iteration_ms", real(p->lp_iteration_ms, 4));
    json_object_set_new(pr, "allreduce_ms", real(p->allreduce_ms, 4));
    json_object_set_new(pr, "lower_bound_ms", real(p->lower_bound_ms, 4));
    json_object_set_new(root, "predicted", pr);
    json_object_set_new(root, "split_layer", json_integer(p->split_layer));
    json_object_set_new(root, "families", families_json(p));
    json_object_set_new(root, "proxies", proxies_json(p));
    for (bi = 0; bi < p->nb; bi++)
        json_array_append_new(bs, bucket_json(p, bi, &pool_base));
    json_object_set_new(root, "buckets", bs);
    return root;
}

/* Append op `order` to participant `part`'s row of the pool (rows of
 * nops + 1). */
static void append(int *pool, int nops, int *len, int part, int order)
{
    pool[(size_t)part * ((size_t)nops + 1) + (size_t)len[part]++] = order;
}

int cp_plan_check_waits(const cp_plan *p, cp_err *e)
{
    const cp_topo *t = p->topo;
    int nparts = t->ngpus + t->nnodes, nops = 0, bi, k, q, rc = CP_OK;
    int **seq, *len, *pool;
    for (bi = 0; bi < p->nb; bi++)
        nops += p->b[bi].nroutes;
    /* one block of nparts rows of nops + 1: row k is participant k's sequence */
    seq = calloc((size_t)nparts + 1, sizeof *seq);
    len = calloc((size_t)nparts + 1, sizeof *len);
    pool = malloc(((size_t)nparts + 1) * ((size_t)nops + 1) * sizeof *pool);
    if (!seq || !len || !pool) {
        free(seq);
        free(len);
        free(pool);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    /* every GPU takes part in every route; a proxy or socket in the routes
     * that name it (participant ngpus + node id) */
    for (bi = 0; bi < p->nb; bi++)
        for (k = 0; k < p->b[bi].nroutes; k++) {
            const cp_plan_route *r = &p->b[bi].routes[k];
            const cp_family *f = &p->fams.f[r->fam];
            for (q = 0; q < t->ngpus; q++)
                append(pool, nops, len, q, r->order);
            if (r->dev >= 0)
                append(pool, nops, len, t->ngpus + r->dev, r->order);
            else if (r->fam != CP_FAM_ALLREDUCE)
                for (q = 0; q < f->ndev; q++)
                    append(pool, nops, len, t->ngpus + f->dev[q], r->order);
        }
    for (k = 0; k < nparts; k++)
        seq[k] = pool + (size_t)k * ((size_t)nops + 1);
    rc = cp_check_waits(nparts, (const int *const *)seq, len, nops, NULL, e);
    free(pool);
    free(seq);
    free(len);
    return rc;
}
