/*
 * topo.c - building, indexing and replicating the system graph (see topo.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

static const char *const node_kind_names[CP_NODE_KINDS] = {
    "gpu", "cpu", "pcie_switch", "nvswitch", "nic", "net_switch", "memdev", "cxl_switch"};
static const char *const link_kind_names[CP_LINK_KINDS] = {"nvlink", "pcie", "cxl", "socket",
                                                           "net"};

const char *cp_node_kind_name(cp_node_kind k)
{
    return (unsigned)k < CP_NODE_KINDS ? node_kind_names[k] : "?";
}

const char *cp_link_kind_name(cp_link_kind k)
{
    return (unsigned)k < CP_LINK_KINDS ? link_kind_names[k] : "?";
}

cp_topo *cp_topo_new(const char *name)
{
    int k;
    cp_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->name = strdup(name ? name : "unnamed");
    if (!t->name) {
        free(t);
        return NULL;
    }
    for (k = 0; k < CP_LINK_KINDS; k++)
        t->calib.kind[k].bw_eff = 1.0;
    t->calib.nvls_eff = 1.0;
    t->calib.pool.chunk_us = -1;      /* derived: launch + doorbell */
    t->calib.pool.chunk_read_us = -1; /* derived: chunk_us */
    return t;
}

void cp_topo_free(cp_topo *t)
{
    int i;
    if (!t)
        return;
    for (i = 0; i < t->nnodes; i++) {
        free(t->nodes[i].id);
        free(t->nodes[i].model);
    }
    free(t->nodes);
    free(t->links);
    free(t->gpus);
    free(t->adj_off);
    free(t->adj_arc);
    free(t->name);
    free(t->src_path);
    cp_topo_free(t->rep_base);
    free(t);
}

/* Grow an array of `size`-byte elements to hold one more; 0 or -1. */
static int grow(void **arr, int *cap, int count, size_t size, int limit)
{
    void *p;
    int ncap;
    if (count < *cap)
        return 0;
    if (count >= limit)
        return -1;
    ncap = *cap ? *cap * 2 : 16;
    if (ncap > limit)
        ncap = limit;
    p = realloc(*arr, (size_t)ncap * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

int cp_topo_add_node(cp_topo *t, const char *id, cp_node_kind kind, int host)
{
    cp_node *n;
    if (grow((void **)&t->nodes, &t->cap_nodes, t->nnodes, sizeof *t->nodes, CP_MAX_NODES))
        return -1;
    n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->id = strdup(id);
    if (!n->id)
        return -1;
    n->kind = kind;
    n->host = host;
    return t->nnodes++;
}

int cp_topo_add_link(cp_topo *t, int a, int b, cp_link_kind kind, double gbs_ab,
                     double gbs_ba, double lat_us)
{
    cp_link *l;
    if (grow((void **)&t->links, &t->cap_links, t->nlinks, sizeof *t->links, CP_MAX_LINKS))
        return -1;
    l = &t->links[t->nlinks];
    memset(l, 0, sizeof *l);
    l->a = a;
    l->b = b;
    l->kind = kind;
    l->gbs[0] = gbs_ab;
    l->gbs[1] = gbs_ba > 0 ? gbs_ba : gbs_ab;
    l->lat_us = lat_us;
    return t->nlinks++;
}

/* Counting sort of arcs by tail node into CSR arrays. */
static int build_adjacency(cp_topo *t)
{
    int i, narcs = 2 * t->nlinks;
    int *fill;
    free(t->adj_off);
    free(t->adj_arc);
    t->adj_off = calloc((size_t)t->nnodes + 1, sizeof *t->adj_off);
    t->adj_arc = malloc((size_t)(narcs ? narcs : 1) * sizeof *t->adj_arc);
    fill = calloc((size_t)t->nnodes + 1, sizeof *fill);
    if (!t->adj_off || !t->adj_arc || !fill) {
        free(fill);
        return -1;
    }
    for (i = 0; i < narcs; i++)
        t->adj_off[cp_arc_tail(t, i) + 1]++;
    for (i = 0; i < t->nnodes; i++)
        t->adj_off[i + 1] += t->adj_off[i];
    for (i = 0; i < narcs; i++) {
        int v = cp_arc_tail(t, i);
        t->adj_arc[t->adj_off[v] + fill[v]++] = i;
    }
    free(fill);
    return 0;
}

int cp_topo_index(cp_topo *t, cp_err *e)
{
    int i;
    if (build_adjacency(t))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    free(t->gpus);
    t->ngpus = 0;
    t->nhosts = 0;
    t->gpus = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof *t->gpus);
    if (!t->gpus)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < t->nnodes; i++) {
        if (t->nodes[i].kind != CP_GPU)
            continue;
        t->gpus[t->ngpus++] = i;
        if (t->nodes[i].host + 1 > t->nhosts)
            t->nhosts = t->nodes[i].host + 1;
    }
    if (t->ngpus == 0)
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, "nodes",
                          "the topology has no GPU (expected at least one node of kind gpu)");
    if (t->ngpus > CP_MAX_GPUS)
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, "nodes",
                          "%d GPUs; the limit is %d", t->ngpus, CP_MAX_GPUS);
    return CP_OK;
}

int cp_topo_find(const cp_topo *t, const char *id)
{
    int i;
    for (i = 0; i < t->nnodes; i++)
        if (strcmp(t->nodes[i].id, id) == 0)
            return i;
    return -1;
}

int cp_topo_count(const cp_topo *t, cp_node_kind k)
{
    int i, n = 0;
    for (i = 0; i < t->nnodes; i++)
        n += t->nodes[i].kind == k;
    return n;
}

void cp_topo_scale_kind(cp_topo *t, cp_link_kind kind, double f)
{
    int i;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == kind) {
            t->links[i].gbs[0] *= f;
            t->links[i].gbs[1] *= f;
        }
    for (i = 0; kind == CP_NET && i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_NIC)
            t->nodes[i].net_gbs *= f;
    if (t->rep_base)
        cp_topo_scale_kind(t->rep_base, kind, f);
}

/* A new topology named `name` with src's machine-wide settings
 * (calibration, fabric, source path); NULL when out of memory. */
static cp_topo *topo_like(const cp_topo *src, const char *name)
{
    cp_topo *t = cp_topo_new(name);
    if (!t)
        return NULL;
    t->calib = src->calib;
    t->fabric_reduce_gbs = src->fabric_reduce_gbs;
    t->fabric_taper = src->fabric_taper;
    if (src->src_path && !(t->src_path = strdup(src->src_path))) {
        cp_topo_free(t);
        return NULL;
    }
    return t;
}

/* Node n, every field, appended to t under its own id; its index, or -1
 * when out of memory. */
static int copy_node_same(cp_topo *t, const cp_node *n)
{
    int k = cp_topo_add_node(t, n->id, n->kind, n->host);
    char *id;
    if (k < 0)
        return -1;
    id = t->nodes[k].id;
    t->nodes[k] = *n;
    t->nodes[k].id = id;
    t->nodes[k].model = n->model ? strdup(n->model) : NULL;
    return n->model && !t->nodes[k].model ? -1 : k;
}

cp_topo *cp_topo_clone(const cp_topo *src)
{
    cp_topo *t = topo_like(src, src->name);
    cp_err e;
    int i;
    if (!t)
        return NULL;
    for (i = 0; i < src->nnodes; i++)
        if (copy_node_same(t, &src->nodes[i]) < 0)
            goto fail;
    for (i = 0; i < src->nlinks; i++) {
        int k = cp_topo_add_link(t, 0, 0, CP_PCIE, 1, 1, 1);
        if (k < 0)
            goto fail;
        t->links[k] = src->links[i];
    }
    if (cp_topo_index(t, &e) != CP_OK)
        goto fail;
    t->rep_hosts = src->rep_hosts;
    if (src->rep_base && !(t->rep_base = cp_topo_clone(src->rep_base)))
        goto fail;
    return t;
fail:
    cp_topo_free(t);
    return NULL;
}

int cp_topo_subset(const cp_topo *src, int per_host, cp_topo **out, cp_err *e)
{
    int *map = malloc(((size_t)src->nnodes + 1) * sizeof *map);
    int *seen = calloc((size_t)src->nhosts + 1, sizeof *seen);
    char name[300];
    cp_topo *t = NULL;
    int i, h, rc = CP_OK, bad, peer, via;
    *out = NULL;
    if (!map || !seen)
        goto oom;
    for (i = 0; i < src->nnodes; i++) {
        const cp_node *n = &src->nodes[i];
        int hh = n->host >= 0 && n->host < src->nhosts ? n->host : 0;
        map[i] = n->kind == CP_GPU && seen[hh]++ >= per_host ? -1 : 0;
    }
    for (h = 0; h < src->nhosts; h++)
        if (seen[h] > 0 && seen[h] < per_host) {
            rc = cp_fail_at(e, CP_EINPUT, src->src_path, 0, 0, NULL,
                            "--gpus %d: host %d has %d GPU%s", per_host, h, seen[h],
                            seen[h] == 1 ? "" : "s");
            goto done;
        }
    snprintf(name, sizeof name, "%s %dgpu", src->name, per_host);
    if (!(t = topo_like(src, name)))
        goto oom;
    for (i = 0; i < src->nnodes; i++)
        if (map[i] >= 0 && (map[i] = copy_node_same(t, &src->nodes[i])) < 0)
            goto oom;
    for (i = 0; i < src->nlinks; i++) {
        const cp_link *l = &src->links[i];
        int k;
        if (map[l->a] < 0 || map[l->b] < 0)
            continue;
        if ((k = cp_topo_add_link(t, map[l->a], map[l->b], l->kind, l->gbs[0], l->gbs[1],
                                  l->lat_us)) < 0)
            goto oom;
        t->links[k].src_line = l->src_line;
    }
    if ((rc = cp_topo_index(t, e)))
        goto done;
    if ((bad = cp_topo_unreachable_gpu(t, &peer, &via)) != -1) {
        if (bad == -2)
            goto oom;
        rc = cp_fail_at(e, CP_EINPUT, src->src_path, 0, 0, NULL,
                        "--gpus %d: gpu \"%s\" cannot reach gpu \"%s\" without the GPUs "
                        "left out (routes never pass through a GPU)",
                        per_host, t->nodes[bad].id, t->nodes[peer].id);
        goto done;
    }
    goto done;
oom:
    rc = cp_fail(e, CP_EINTERNAL, "out of memory");
done:
    free(map);
    free(seen);
    if (rc)
        cp_topo_free(t);
    else
        *out = t;
    return rc;
}

int cp_topo_pick(const cp_topo *src, const int *keep, const double *nic_scale, const char *name,
                 cp_topo **out, cp_err *e)
{
    int *map = malloc(((size_t)src->nnodes + 1) * sizeof *map);
    cp_topo *t = NULL;
    int i, rc = CP_OK;
    *out = NULL;
    if (!map || !(t = topo_like(src, name)))
        goto oom;
    for (i = 0; i < src->nnodes; i++) {
        map[i] = -1;
        if (keep[i] && (map[i] = copy_node_same(t, &src->nodes[i])) < 0)
            goto oom;
        if (keep[i] && nic_scale && src->nodes[i].kind == CP_NIC)
            t->nodes[map[i]].net_gbs *= nic_scale[i];
    }
    for (i = 0; i < src->nlinks; i++) {
        const cp_link *l = &src->links[i];
        int k;
        if (map[l->a] < 0 || map[l->b] < 0)
            continue;
        if ((k = cp_topo_add_link(t, map[l->a], map[l->b], l->kind, l->gbs[0], l->gbs[1],
                                  l->lat_us)) < 0)
            goto oom;
        t->links[k].src_line = l->src_line;
    }
    if ((rc = cp_topo_index(t, e)))
        goto done;
    goto done;
oom:
    rc = cp_fail(e, CP_EINTERNAL, "out of memory");
done:
    free(map);
    if (rc)
        cp_topo_free(t);
    else
        *out = t;
    return rc;
}

/* Copy node `src` into `dst` as host h with a prefixed id, every other
 * field as it is. */
static int copy_node(cp_topo *dst, const cp_node *src, int h)
{
    char id[320];
    char *own;
    int k;
    snprintf(id, sizeof id, "h%d/%s", h, src->id);
    k = cp_topo_add_node(dst, id, src->kind, h);
    if (k < 0)
        return -1;
    own = dst->nodes[k].id;
    dst->nodes[k] = *src;
    dst->nodes[k].id = own;
    dst->nodes[k].host = h;
    dst->nodes[k].model = NULL;
    if (src->model && !(dst->nodes[k].model = strdup(src->model)))
        return -1;
    return k;
}

/* An oversubscribed network: host h's NICs (nodes map[i]) join a leaf
 * switch of their own, whose uplink to the spine `sw` carries the NICs'
 * summed rate / taper.  A quarter of each NIC-to-NIC latency on each of the
 * four hops (the uplinks at the fastest NIC's).  The leaf sums data as the
 * spine does (SHARP aggregates at every level). */
static int add_leaf(cp_topo *dst, const cp_topo *src, int h, const int *map, int sw)
{
    char id[64];
    double sum = 0, lat = -1;
    int i, leaf;
    snprintf(id, sizeof id, "h%d/leaf", h);
    if ((leaf = cp_topo_add_node(dst, id, CP_NET_SWITCH, h)) < 0)
        return -1;
    dst->nodes[leaf].reduce_gbs = src->fabric_reduce_gbs;
    for (i = 0; i < src->nnodes; i++) {
        const cp_node *n = &src->nodes[i];
        if (n->kind != CP_NIC)
            continue;
        sum += n->net_gbs;
        if (lat < 0 || n->net_lat_us < lat)
            lat = n->net_lat_us;
        if (cp_topo_add_link(dst, map[i], leaf, CP_NET, n->net_gbs, n->net_gbs,
                             n->net_lat_us / 4) < 0)
            return -1;
    }
    return cp_topo_add_link(dst, leaf, sw, CP_NET, sum / src->fabric_taper,
                            sum / src->fabric_taper, lat / 4) < 0 ? -1 : 0;
}

/* Host h's copies of src's nodes and links, and its NIC uplinks.  Pool
 * nodes (host -1: a CXL switch and the devices behind it) are shared: they
 * were copied once, to pool[i], and host h's ports link to those copies;
 * links inside the pool were copied once too.  map: scratch, one per node. */
static int add_host(cp_topo *dst, const cp_topo *src, int h, int sw, const int *pool, int *map)
{
    int i;
    for (i = 0; i < src->nnodes; i++)
        if ((map[i] = src->nodes[i].host < 0 ? pool[i] : copy_node(dst, &src->nodes[i], h)) < 0)
            return -1;
    for (i = 0; i < src->nlinks; i++) {
        const cp_link *l = &src->links[i];
        int k;
        if (src->nodes[l->a].host < 0 && src->nodes[l->b].host < 0)
            continue;
        k = cp_topo_add_link(dst, map[l->a], map[l->b], l->kind, l->gbs[0], l->gbs[1],
                             l->lat_us);
        if (k < 0)
            return -1;
        dst->links[k].src_line = l->src_line;
    }
    if (src->fabric_taper > 1)
        return add_leaf(dst, src, h, map, sw);
    for (i = 0; i < src->nnodes; i++) {
        const cp_node *n = &src->nodes[i];
        /* half the NIC-to-NIC latency on each side of the switch */
        if (n->kind == CP_NIC &&
            cp_topo_add_link(dst, map[i], sw, CP_NET, n->net_gbs, n->net_gbs,
                             n->net_lat_us / 2) < 0)
            return -1;
    }
    return 0;
}

/* The pool's nodes (host -1) and the links among them, once, under their
 * own ids; pool[i] is node i's copy (-1 for host nodes). */
static int add_pool(cp_topo *dst, const cp_topo *src, int *pool)
{
    int i;
    for (i = 0; i < src->nnodes; i++) {
        pool[i] = -1;
        if (src->nodes[i].host < 0 && (pool[i] = copy_node_same(dst, &src->nodes[i])) < 0)
            return -1;
    }
    for (i = 0; i < src->nlinks; i++) {
        const cp_link *l = &src->links[i];
        int k;
        if (src->nodes[l->a].host >= 0 || src->nodes[l->b].host >= 0)
            continue;
        if ((k = cp_topo_add_link(dst, pool[l->a], pool[l->b], l->kind, l->gbs[0], l->gbs[1],
                                  l->lat_us)) < 0)
            return -1;
        dst->links[k].src_line = l->src_line;
    }
    return 0;
}

int cp_topo_replicate(const cp_topo *src, int nhosts, cp_topo **out, cp_err *e)
{
    cp_topo *t;
    char name[300];
    int h, sw, rc, bad, peer, via, *pool, *map;

    *out = NULL;
    if (nhosts < 1 || nhosts > CP_MAX_HOSTS)
        return cp_fail(e, CP_EINPUT, "--hosts %d: expected 1 to %d", nhosts, CP_MAX_HOSTS);
    if (src->nhosts > 1)
        return cp_fail_at(e, CP_EINPUT, src->src_path, 0, 0, NULL,
                          "--hosts replicates a single-host topology; this one already "
                          "describes %d hosts", src->nhosts);
    if (cp_topo_count(src, CP_NIC) == 0)
        return cp_fail_at(e, CP_EINPUT, src->src_path, 0, 0, NULL,
                          "--hosts %d needs a NIC to join hosts; the topology has none",
                          nhosts);
    if ((long long)(src->nnodes + 1) * nhosts + 1 > CP_MAX_NODES ||
        (long long)(src->nlinks + src->nnodes + 1) * nhosts > CP_MAX_LINKS ||
        (long long)src->ngpus * nhosts > CP_MAX_GPUS)
        return cp_fail(e, CP_EINPUT, "--hosts %d: %d nodes per host would exceed the limit of "
                       "%d nodes / %d GPUs", nhosts, src->nnodes, CP_MAX_NODES, CP_MAX_GPUS);
    snprintf(name, sizeof name, "%s x%d", src->name, nhosts);
    t = topo_like(src, name);
    if (!t)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    pool = malloc(2 * ((size_t)src->nnodes + 1) * sizeof *pool);
    map = pool + src->nnodes + 1;
    sw = pool ? cp_topo_add_node(t, "netsw", CP_NET_SWITCH, -1) : -1;
    if (sw < 0 || add_pool(t, src, pool)) {
        free(pool);
        goto oom;
    }
    t->nodes[sw].reduce_gbs = src->fabric_reduce_gbs;
    for (h = 0; h < nhosts; h++)
        if (add_host(t, src, h, sw, pool, map)) {
            free(pool);
            goto oom;
        }
    free(pool);
    rc = cp_topo_index(t, e);
    if (rc) {
        cp_topo_free(t);
        return rc;
    }
    /* One host can be connected while its NICs hang apart from its GPUs;
     * joined over those NICs, the hosts would not reach each other. */
    if (nhosts > 1 && (bad = cp_topo_unreachable_gpu(t, &peer, &via)) != -1) {
        if (bad == -2) {
            cp_topo_free(t);
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
        rc = cp_fail_at(e, CP_EINPUT, src->src_path, 0, 0, NULL,
                        "--hosts %d: gpu \"%s\" cannot reach gpu \"%s\": no chain of links "
                        "joins a GPU to a NIC, so the hosts cannot reach each other",
                        nhosts, t->nodes[bad].id, t->nodes[peer].id);
        cp_topo_free(t);
        return rc;
    }
    t->rep_hosts = nhosts;
    t->rep_base = cp_topo_clone(src);
    if (!t->rep_base)
        goto oom;
    *out = t;
    return CP_OK;
oom:
    cp_topo_free(t);
    return cp_fail(e, CP_EINTERNAL, "out of memory");
}
