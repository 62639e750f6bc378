/*
 * topo_load.c - reading and validating topology JSON (schema: docs/formats.md).
 *
 * Checks, each with the line and column of the offending value: unknown
 * keys and kinds, duplicate node ids, links whose endpoint does not exist or
 * that join a node to itself, bandwidths and latencies that are not positive
 * finite numbers of sane size, capabilities on kinds that cannot have them,
 * and GPUs that cannot reach the others.  The pool (CXL switches, the
 * memory devices behind them, the hosts' ports, the `pool` block) is read
 * and checked by pool_load.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"
#include "load/load.h"
#include "topo/fabrics.h"
#include "load/pool_load.h"

/* Longest node id, in bytes; ids are printed in tables. */
#define ID_MAX_BYTES 128

/* Sanity bounds: no bus or network link runs at 100 TB/s per direction, and
 * no hop takes a second.  Larger values are typos (units) and are refused. */
#define MAX_GBS 1e5
#define MAX_LAT_US 1e6

/* No bus, port or reducer of interest is slower than 1 MB/s (1 Gb Ethernet
 * is 0.125 GB/s).  Smaller positive values are unit mistakes, and the
 * smallest doubles (1e-320) would turn every predicted time into infinity. */
#define MIN_GBS 1e-3

/* No GPU computes slower than 1 GFLOP/s; below that the compute estimate
 * (FLOPs / tflops) overflows to infinity. */
#define MIN_TFLOPS 1e-3

/* Streaming multiprocessors per GPU: P100 56, V100 80, A100 108, H100 SXM
 * 132, B200 148 (datasheets); 1024 leaves room for any part and refuses a
 * count typed as cores (thousands). */
#define MAX_SMS 1024

static const char *const top_keys[] = {"name", "nodes", "links", "calibration", "fabric",
                                       "pool", NULL};
static const char *const fabric_keys[] = {"reduce_gbs", "taper", "note", NULL};
static const char *const node_keys[] = {"id", "kind", "host", "model", "reduce_gbs",
                                        "mem_gbs", "capacity_gb", "net_gbs",
                                        "net_latency_us", "tflops", "tflops_fp16",
                                        "tflops_fp8", "sms", "read_gbs", "write_gbs",
                                        "access_latency_us", NULL};
static const char *const link_keys[] = {"a", "b", "kind", "gbs", "gbs_ba", "latency_us", NULL};
static const char *const node_kind_names[] = {"gpu", "cpu", "pcie_switch", "nvswitch", "nic",
                                              "net_switch", "memdev", "cxl_switch", NULL};
static const char *const link_kind_names[] = {"nvlink", "pcie", "cxl", "socket", "upi", "qpi",
                                              "net", NULL};
static const int link_kind_ids[] = {CP_NVLINK, CP_PCIE, CP_CXL, CP_SOCKET, CP_SOCKET, CP_SOCKET,
                                    CP_NET};
static const char *const calib_keys[] = {"launch_us", "nvlink", "pcie", "cxl", "socket", "net",
                                         "nvls_eff", "net_fabric",
                                         "pool", NULL};
static const char *const calib_kind_keys[] = {"bw_eff", "step_us", "simple_us", "ll_eff", NULL};

/* A number that must be positive (or >= 0 with CP_NONNEG), at least `min` and
 * at most `max`.  *out is left untouched when the member is absent. */
static int get_bounded(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                       const char *key, unsigned flags, double min, double max,
                       const char *expect, double *out)
{
    unsigned sign = (flags & CP_NONNEG) ? 0 : CP_POS; /* positive unless >= 0 asked */
    return cp_jget_num_range(d, e, obj, where, key, flags | sign, min, max, expect, out);
}

/* Fields that only some kinds of node may carry. */
static int check_node_caps(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                           const cp_node *n)
{
    int can_reduce = n->kind == CP_GPU || n->kind == CP_CPU || n->kind == CP_NVSWITCH ||
                     n->kind == CP_NET_SWITCH || n->kind == CP_MEMDEV;
    if (n->reduce_gbs > 0 && !can_reduce)
        return cp_jdoc_fail(d, e, obj, "reduce_gbs", where,
                            "a %s cannot reduce (reduce_gbs is for gpu, cpu, nvswitch, "
                            "net_switch and memdev nodes)", cp_node_kind_name(n->kind));
    if (n->kind != CP_GPU && json_object_get(obj, "tflops"))
        return cp_jdoc_fail(d, e, obj, "tflops", where, "tflops is for gpu nodes only");
    if (n->kind != CP_GPU && json_object_get(obj, "tflops_fp16"))
        return cp_jdoc_fail(d, e, obj, "tflops_fp16", where, "tflops_fp16 is for gpu nodes only");
    if (n->kind != CP_GPU && json_object_get(obj, "tflops_fp8"))
        return cp_jdoc_fail(d, e, obj, "tflops_fp8", where, "tflops_fp8 is for gpu nodes only");
    if (n->kind != CP_GPU && json_object_get(obj, "sms"))
        return cp_jdoc_fail(d, e, obj, "sms", where, "sms is for gpu nodes only");
    if (n->kind != CP_NIC && json_object_get(obj, "net_gbs"))
        return cp_jdoc_fail(d, e, obj, "net_gbs", where, "net_gbs is for nic nodes only");
    if (n->kind != CP_NIC && json_object_get(obj, "net_latency_us"))
        return cp_jdoc_fail(d, e, obj, "net_latency_us", where,
                            "net_latency_us is for nic nodes only");
    return cp_pool_check_node_caps(d, e, obj, where, n);
}

static int read_node(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                     cp_topo *t)
{
    const char *id = NULL, *model = NULL;
    int kind = 0, k, rc;
    int64_t host = 0, sms = 0;
    cp_node *n;

    if (!json_is_object(obj))
        return cp_jdoc_fail(d, e, obj, NULL, where, "expected a node object");
    if ((rc = cp_jdoc_check_keys(d, e, obj, where, node_keys)) ||
        (rc = cp_jget_str(d, e, obj, where, "id", CP_REQ, ID_MAX_BYTES, &id)) ||
        (rc = cp_jget_enum(d, e, obj, where, "kind", CP_REQ, node_kind_names, NULL, &kind)) ||
        (rc = cp_jget_int(d, e, obj, where, "host", 0, 0, CP_MAX_HOSTS - 1, &host)) ||
        (rc = cp_jget_str(d, e, obj, where, "model", 0, ID_MAX_BYTES, &model)))
        return rc;
    k = cp_topo_add_node(t, id, (cp_node_kind)kind, (int)host);
    if (k < 0)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    n = &t->nodes[k];
    if (model && !(n->model = strdup(model)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = get_bounded(d, e, obj, where, "reduce_gbs", 0, MIN_GBS, MAX_GBS,
                          "a positive number (GB/s of input it can sum)", &n->reduce_gbs)) ||
        (rc = get_bounded(d, e, obj, where, "mem_gbs", 0, MIN_GBS, MAX_GBS,
                          "a positive number (GB/s, read+write combined)", &n->mem_gbs)) ||
        (rc = get_bounded(d, e, obj, where, "capacity_gb", 0, 0, 1e9,
                          "a positive number (GB)", &n->capacity_gb)) ||
        (rc = get_bounded(d, e, obj, where, "net_gbs", kind == CP_NIC ? CP_REQ : 0,
                          MIN_GBS, MAX_GBS,
                          "a positive number (network GB/s per direction)", &n->net_gbs)) ||
        (rc = get_bounded(d, e, obj, where, "net_latency_us", kind == CP_NIC ? CP_REQ : 0,
                          0, MAX_LAT_US, "a positive number (one-way network latency, us)",
                          &n->net_lat_us)) ||
        (rc = get_bounded(d, e, obj, where, "tflops", 0, MIN_TFLOPS, 1e5,
                          "a positive number (peak dense FP32 TFLOP/s)", &n->tflops)) ||
        (rc = get_bounded(d, e, obj, where, "tflops_fp16", 0, MIN_TFLOPS, 1e5,
                          "a positive number (peak dense FP16/BF16 TFLOP/s)",
                          &n->tflops_fp16)) ||
        (rc = get_bounded(d, e, obj, where, "tflops_fp8", 0, MIN_TFLOPS, 1e5,
                          "a positive number (peak dense FP8 TFLOP/s)", &n->tflops_fp8)) ||
        (rc = cp_jget_int(d, e, obj, where, "sms", 0, 1, MAX_SMS, &sms)) ||
        (rc = cp_pool_read_device(d, e, obj, where, 0, n)))
        return rc;
    n->sms = (int)sms;
    return check_node_caps(d, e, obj, where, n);
}

static int read_nodes(const cp_jdoc *d, cp_err *e, const json_t *arr, cp_topo *t,
                      cp_strmap *ids)
{
    size_t i, n = json_array_size(arr);
    int rc;
    if (n == 0)
        return cp_jdoc_fail(d, e, d->root, "nodes", "", "no nodes (expected at least one gpu)");
    if (n > CP_MAX_NODES)
        return cp_jdoc_fail(d, e, d->root, "nodes", "", "%zu nodes; the limit is %d", n,
                            CP_MAX_NODES);
    if (cp_strmap_init(ids, n) != 0)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < n; i++) {
        char where[64];
        const json_t *obj = json_array_get(arr, i);
        int prev;
        cp_jpath_index(where, sizeof where, "nodes", i);
        if ((rc = read_node(d, e, obj, where, t)))
            return rc;
        prev = cp_strmap_put(ids, t->nodes[i].id, (int)i);
        if (prev == -2)
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        if (prev >= 0)
            return cp_jdoc_fail(d, e, obj, "id", where,
                                "duplicate node id \"%s\" (first at nodes[%d])",
                                t->nodes[i].id, prev);
    }
    return CP_OK;
}

/* Resolve one endpoint name to a node index. */
static int endpoint(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                    const char *key, const cp_strmap *ids, int *out)
{
    const char *name = NULL;
    int rc = cp_jget_str(d, e, obj, where, key, CP_REQ, ID_MAX_BYTES, &name);
    if (rc)
        return rc;
    *out = cp_strmap_get(ids, name);
    if (*out < 0)
        return cp_jdoc_fail(d, e, obj, key, where,
                            "no node with id \"%s\" (a link endpoint must be a node id)", name);
    return CP_OK;
}

static int read_link(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                     cp_topo *t, const cp_strmap *ids)
{
    int a, b, kind = 0, k, rc;
    double gbs = 0, gbs_ba = 0, lat = 0;

    if (!json_is_object(obj))
        return cp_jdoc_fail(d, e, obj, NULL, where, "expected a link object");
    if ((rc = cp_jdoc_check_keys(d, e, obj, where, link_keys)) ||
        (rc = endpoint(d, e, obj, where, "a", ids, &a)) ||
        (rc = endpoint(d, e, obj, where, "b", ids, &b)) ||
        (rc = cp_jget_enum(d, e, obj, where, "kind", CP_REQ, link_kind_names, link_kind_ids,
                           &kind)) ||
        (rc = get_bounded(d, e, obj, where, "gbs", CP_REQ, MIN_GBS, MAX_GBS,
                          "a positive number (GB/s per direction)", &gbs)) ||
        (rc = get_bounded(d, e, obj, where, "gbs_ba", 0, MIN_GBS, MAX_GBS,
                          "a positive number (GB/s from b to a)", &gbs_ba)) ||
        (rc = get_bounded(d, e, obj, where, "latency_us", CP_REQ, 0, MAX_LAT_US,
                          "a positive number (one-way latency, us)", &lat)))
        return rc;
    if (a == b)
        return cp_jdoc_fail(d, e, obj, "b", where, "link joins \"%s\" to itself",
                            t->nodes[a].id);
    k = cp_topo_add_link(t, a, b, (cp_link_kind)kind, gbs, gbs_ba, lat);
    return k < 0 ? cp_fail(e, CP_EINTERNAL, "out of memory") : CP_OK;
}

/* A link by its unordered pair of endpoints and kind, and its place in the
 * file. */
typedef struct link_pair {
    int lo, hi, kind, idx;
} link_pair;

static int cmp_pair(const void *x, const void *y)
{
    const link_pair *p = x, *q = y;
    if (p->lo != q->lo)
        return p->lo < q->lo ? -1 : 1;
    if (p->hi != q->hi)
        return p->hi < q->hi ? -1 : 1;
    if (p->kind != q->kind)
        return p->kind < q->kind ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

static int same_pair(const link_pair *p, const link_pair *q)
{
    return p->lo == q->lo && p->hi == q->hi && p->kind == q->kind;
}

/* Refuse a second link of one kind between the same two nodes, at the
 * second one (the first such in file order).  Two such links would be two
 * parallel resources to the collective model but one route to the
 * widest-path search, so the answer depended on which looked; bonded links
 * (two NVLinks) are written as one link of the summed bandwidth
 * (docs/formats.md).  Links of different kinds may join one pair: a POWER8
 * GPU has both an NVLink and PCIe to its CPU.  O(L log L). */
static int refuse_duplicate_links(const cp_jdoc *d, cp_err *e, const json_t *arr,
                                  const cp_topo *t)
{
    link_pair *p;
    int i, dup = -1, first = -1, line = 0, col = 0;
    char where[64];
    if (t->nlinks < 2)
        return CP_OK;
    if (!(p = malloc((size_t)t->nlinks * sizeof *p)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < t->nlinks; i++) {
        int a = t->links[i].a, b = t->links[i].b;
        p[i].lo = a < b ? a : b;
        p[i].hi = a < b ? b : a;
        p[i].kind = (int)t->links[i].kind;
        p[i].idx = i;
    }
    qsort(p, (size_t)t->nlinks, sizeof *p, cmp_pair);
    for (i = 1; i < t->nlinks; i++) /* the second of each group (sorted by file order) */
        if (same_pair(&p[i], &p[i - 1]) && (i == 1 || !same_pair(&p[i], &p[i - 2])) &&
            (dup < 0 || p[i].idx < dup)) {
            dup = p[i].idx;
            first = p[i - 1].idx;
        }
    free(p);
    if (dup < 0)
        return CP_OK;
    cp_jpath_index(where, sizeof where, "links", (size_t)dup);
    cp_jdoc_locate(d, json_array_get(arr, (size_t)first), NULL, &line, &col);
    return cp_jdoc_fail(d, e, json_array_get(arr, (size_t)dup), NULL, where,
                        "a second %s link between \"%s\" and \"%s\" (the first is "
                        "links[%d], line %d); bonded links (two NVLinks between the same "
                        "GPUs) are one link with the summed bandwidth (docs/formats.md)",
                        cp_link_kind_name(t->links[dup].kind), t->nodes[t->links[dup].a].id,
                        t->nodes[t->links[dup].b].id, first, line);
}

static int read_links(const cp_jdoc *d, cp_err *e, const json_t *arr, cp_topo *t,
                      const cp_strmap *ids)
{
    size_t i, n = json_array_size(arr);
    int rc;
    if (n > CP_MAX_LINKS)
        return cp_jdoc_fail(d, e, d->root, "links", "", "%zu links; the limit is %d", n,
                            CP_MAX_LINKS);
    for (i = 0; i < n; i++) {
        char where[64];
        cp_jpath_index(where, sizeof where, "links", i);
        if ((rc = read_link(d, e, json_array_get(arr, i), where, t, ids)))
            return rc;
    }
    return refuse_duplicate_links(d, e, arr, t);
}

/* calibration.net_fabric: a named network calibration (topo/fabrics.h) into
 * the network's kind, which an explicit `net` object then overrides. */
static int read_net_fabric(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_calib *c)
{
    const char *name = NULL;
    const cp_fabric *f;
    int rc = cp_jget_str(d, e, obj, "calibration", "net_fabric", 0, sizeof c->net_fabric - 1,
                         &name);
    if (rc || !name)
        return rc;
    if (!(f = cp_fabric_find(name)))
        return cp_jdoc_fail(d, e, obj, "net_fabric", "calibration",
                            "expected one of %s, got '%s'", cp_fabric_names(), name);
    c->kind[CP_NET] = f->net;
    snprintf(c->net_fabric, sizeof c->net_fabric, "%s", f->name);
    return CP_OK;
}

static int read_calibration(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_calib *c)
{
    int k, rc;
    if (!obj)
        return CP_OK;
    c->given = 1;
    if ((rc = read_net_fabric(d, e, obj, c)))
        return rc;
    if ((rc = cp_jdoc_check_keys(d, e, obj, "calibration", calib_keys)) ||
        (rc = cp_pool_read_calib(d, e, obj, &c->pool)) ||
        (rc = get_bounded(d, e, obj, "calibration", "launch_us", CP_NONNEG, 0, MAX_LAT_US,
                          "a non-negative number (us per collective call)", &c->launch_us)) ||
        (rc = get_bounded(d, e, obj, "calibration", "nvls_eff", 0, CP_MIN_BW_EFF, 1,
                          "a fraction in (0, 1] (NVLS achieved / effective NVLink rate)",
                          &c->nvls_eff)))
        return rc;
    for (k = 0; k < CP_LINK_KINDS; k++) {
        const json_t *sub = NULL;
        char where[64];
        const char *kn = cp_link_kind_name((cp_link_kind)k);
        cp_jpath(where, sizeof where, "calibration", kn);
        if ((rc = cp_jget_object(d, e, obj, "calibration", kn, 0, &sub)))
            return rc;
        if (!sub)
            continue;
        if ((rc = cp_jdoc_check_keys(d, e, sub, where, calib_kind_keys)) ||
            (rc = cp_jget_num(d, e, sub, where, "bw_eff", CP_POS,
                              "a fraction in (0, 1] (achieved / nominal bandwidth)",
                              &c->kind[k].bw_eff)) ||
            (rc = get_bounded(d, e, sub, where, "step_us", CP_NONNEG, 0, CP_MAX_STEP_US,
                              "a non-negative number (us per algorithm step)",
                              &c->kind[k].step_us)) ||
            (rc = get_bounded(d, e, sub, where, "simple_us", CP_NONNEG, 0, CP_MAX_STEP_US,
                              "a non-negative number (us per algorithm step of NCCL's "
                              "Simple protocol)",
                              &c->kind[k].simple_us)) ||
            (rc = get_bounded(d, e, sub, where, "ll_eff", 0, CP_MIN_BW_EFF, 1,
                              "a fraction in (0, 1] (LL's achieved / nominal bandwidth)",
                              &c->kind[k].ll_eff)))
            return rc;
        if (c->kind[k].bw_eff > 1)
            return cp_jdoc_fail(d, e, sub, "bw_eff", where,
                                "expected a fraction in (0, 1], got %g", c->kind[k].bw_eff);
        if (c->kind[k].bw_eff < CP_MIN_BW_EFF)
            return cp_jdoc_fail(d, e, sub, "bw_eff", where,
                                "expected a fraction in (0, 1], got %g (under the sanity "
                                "limit %g: the calibration does not fit this machine)",
                                c->kind[k].bw_eff, CP_MIN_BW_EFF);
    }
    return CP_OK;
}

/* Remember the source line of every node and link, for messages from later
 * stages (one pass over the text). */
static int record_lines(const cp_jdoc *d, const json_t *nodes, const json_t *links,
                        cp_topo *t, cp_err *e)
{
    int i, n = t->nnodes > t->nlinks ? t->nnodes : t->nlinks;
    int *lines = malloc((size_t)(n ? n : 1) * sizeof *lines);
    if (!lines)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    cp_jdoc_elem_lines(d, nodes, lines);
    for (i = 0; i < t->nnodes; i++)
        t->nodes[i].src_line = lines[i];
    cp_jdoc_elem_lines(d, links, lines);
    for (i = 0; i < t->nlinks; i++)
        t->links[i].src_line = lines[i];
    free(lines);
    return CP_OK;
}

/* Point an "unreachable GPU" error at the node's object, saying which GPU
 * or memory device a route would have to pass through when a chain of
 * links exists. */
static int fail_unreachable(const cp_jdoc *d, cp_err *e, const cp_topo *t, int bad, int peer,
                            int via)
{
    const json_t *nodes = json_object_get(d->root, "nodes");
    char where[64];
    cp_jpath_index(where, sizeof where, "nodes", (size_t)bad);
    if (via >= 0)
        return cp_jdoc_fail(d, e, json_array_get(nodes, (size_t)bad), "id", where,
                            "gpu \"%s\" reaches gpu \"%s\" only through %s \"%s\", and "
                            "routes never pass through a GPU or a memory device (nor a ring "
                            "through one GPU twice): link it to a switch or CPU the others "
                            "reach (docs/formats.md)",
                            t->nodes[bad].id, t->nodes[peer].id,
                            cp_node_kind_name(t->nodes[via].kind), t->nodes[via].id);
    return cp_jdoc_fail(d, e, json_array_get(nodes, (size_t)bad), "id", where,
                        "gpu \"%s\" cannot reach gpu \"%s\": no chain of links joins them",
                        t->nodes[bad].id, t->nodes[peer].id);
}

/* The network --hosts builds: whether its switch reduces (SHARP). */
static int read_fabric(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_topo *t)
{
    int rc;
    if (!obj)
        return CP_OK;
    if ((rc = cp_jdoc_check_keys(d, e, obj, "fabric", fabric_keys)) ||
        (rc = get_bounded(d, e, obj, "fabric", "reduce_gbs", 0, MIN_GBS, MAX_GBS,
                          "a positive number (GB/s the network switch sums, SHARP)",
                          &t->fabric_reduce_gbs)) ||
        (rc = get_bounded(d, e, obj, "fabric", "taper", 0, 1, 64,
                          "an oversubscription ratio from 1 (non-blocking) to 64",
                          &t->fabric_taper)))
        return rc;
    return CP_OK;
}

static int read_topo(const cp_jdoc *d, cp_err *e, cp_topo *t)
{
    const json_t *root = d->root, *nodes = NULL, *links = NULL, *calib = NULL, *fabric = NULL;
    const char *name = NULL;
    cp_strmap ids = {0};
    int rc, bad, peer, via;

    if ((rc = cp_jdoc_check_keys(d, e, root, "", top_keys)) ||
        (rc = cp_jget_str(d, e, root, "", "name", CP_REQ, 256, &name)) ||
        (rc = cp_jget_array(d, e, root, "", "nodes", CP_REQ, &nodes)) ||
        (rc = cp_jget_array(d, e, root, "", "links", CP_REQ, &links)) ||
        (rc = cp_jget_object(d, e, root, "", "calibration", 0, &calib)) ||
        (rc = cp_jget_object(d, e, root, "", "fabric", 0, &fabric)) ||
        (rc = read_fabric(d, e, fabric, t)))
        return rc;
    free(t->name);
    if (!(t->name = strdup(name)) || !(t->src_path = strdup(d->path)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    rc = read_nodes(d, e, nodes, t, &ids);
    if (rc == CP_OK)
        rc = read_links(d, e, links, t, &ids);
    cp_strmap_free(&ids);
    if (rc || (rc = read_calibration(d, e, calib, &t->calib)) ||
        (rc = record_lines(d, nodes, links, t, e)) ||
        (rc = cp_pool_load(d, e, nodes, links, t)))
        return rc;
    if ((rc = cp_topo_index(t, e))) {
        if (rc == CP_EINPUT) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return cp_jdoc_fail(d, e, root, "nodes", "", "%s", msg);
        }
        return rc;
    }
    bad = cp_topo_unreachable_gpu(t, &peer, &via);
    if (bad == -2)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (bad >= 0)
        return fail_unreachable(d, e, t, bad, peer, via);
    return CP_OK;
}

int cp_topo_load_doc(const cp_jdoc *d, cp_topo **out, cp_err *e)
{
    cp_topo *t = cp_topo_new(NULL);
    int rc;
    *out = NULL;
    if (!t)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    rc = read_topo(d, e, t);
    if (rc) {
        cp_topo_free(t);
        return rc;
    }
    *out = t;
    return CP_OK;
}

int cp_topo_load(const char *path, cp_topo **out, cp_err *e)
{
    cp_jdoc d;
    int rc;
    *out = NULL;
    rc = cp_jdoc_load(&d, path, e);
    if (rc == CP_OK)
        rc = cp_topo_load_doc(&d, out, e);
    cp_jdoc_free(&d);
    return rc;
}

int cp_topo_load_hosts(const char *path, int nhosts, cp_topo **out, cp_err *e)
{
    return cp_topo_load_machine(path, 0, nhosts, out, e);
}

int cp_topo_load_machine(const char *path, int gpus, int nhosts, cp_topo **out, cp_err *e)
{
    cp_topo *t, *s;
    int rc = cp_topo_load(path, &t, e);
    *out = NULL;
    if (rc)
        return rc;
    if (gpus > 0) {
        rc = cp_topo_subset(t, gpus, &s, e);
        cp_topo_free(t);
        if (rc)
            return rc;
        t = s;
    }
    if (nhosts <= 1) {
        *out = t;
        return CP_OK;
    }
    rc = cp_topo_replicate(t, nhosts, out, e);
    cp_topo_free(t);
    return rc;
}

cp_file_kind cp_detect_kind(const cp_jdoc *d)
{
    if (json_object_get(d->root, "format"))
        return CP_FILE_PLAN;
    if (json_object_get(d->root, "tensors") || cp_is_hf_config(d))
        return CP_FILE_MODEL;
    if (json_object_get(d->root, "nodes") || json_object_get(d->root, "links"))
        return CP_FILE_TOPO;
    return CP_FILE_UNKNOWN;
}
