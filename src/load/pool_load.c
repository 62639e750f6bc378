/*
 * pool_load.c - reading and checking a CXL memory pool in a topology file
 * (schema: docs/formats.md, "Pools").
 *
 * A pool is one or more `cxl_switch` nodes, the `memdev` nodes linked to
 * them (the devices "behind" a switch) and the `cxl` links from each host's
 * CPU or PCIe switch to them (the hosts' ports).  A file describing several
 * hosts writes them out; a single-host file may instead carry a `pool`
 * block (switches, devices per switch, the device, which of the host's
 * nodes links to which switch), expanded here into the same nodes and
 * links, so that `--hosts N` (cp_topo_replicate) gives N hosts sharing one
 * pool.  Either way the same checks follow, each pointing at the offending
 * value: devices behind a switch need read and write bandwidths; a switch
 * links only to devices and host ports, by `cxl` links; every switch has a
 * device and a port; every host with a GPU has a port.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/pool_load.h"

/* The bounds of topo_load.c, for the same reasons: nothing of interest is
 * slower than 1 MB/s or faster than 100 TB/s, no hop takes a second. */
#define MIN_GBS 1e-3
#define MAX_GBS 1e5
#define MAX_LAT_US 1e6

/* Longest node id, as in topo_load.c. */
#define ID_MAX_BYTES 128

/* A pool block's limits: the largest CXL 3.x fabrics announced join a few
 * thousand devices; 256 switches x 4096 devices leaves room and keeps the
 * node count far below CP_MAX_NODES. */
#define MAX_SWITCHES 256
#define MAX_DEV_PER_SWITCH 4096

static const char *const pool_keys[] = {"switches", "switch_model", "devices_per_switch",
                                        "device", "device_link", "ports", NULL};
static const char *const device_keys[] = {"model", "capacity_gb", "read_gbs", "write_gbs",
                                          "mem_gbs", "access_latency_us", "reduce_gbs",
                                          NULL};
static const char *const dlink_keys[] = {"gbs", "latency_us", NULL};
static const char *const port_keys[] = {"node", "switch", "gbs", "latency_us", NULL};
static const char *const calib_pool_keys[] = {"copy_gbs", "copy_read_gbs", "duplex", "chunks",
                                              "chunk_us", "chunk_read_us", "small_copy_bytes",
                                              "small_copy_us", NULL};

/* A message is never split into more chunks than this: CCCL splits one
 * into 4 or 8 (docs/pool.md); 65536 leaves room and keeps the chunk
 * counts of a 4 GB message well inside a double's integers. */
#define MAX_CHUNKS 65536

static int num(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
               const char *key, unsigned flags, double lo, double hi, const char *expect,
               double *out)
{
    unsigned sign = (flags & CP_NONNEG) ? 0 : CP_POS;
    return cp_jget_num_range(d, e, obj, where, key, flags | sign, lo, hi, expect, out);
}

int cp_pool_read_device(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                        unsigned flags, cp_node *n)
{
    int rc;
    if ((rc = num(d, e, obj, where, "read_gbs", flags & CP_REQ, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s the device's memory serves to reads)",
                  &n->read_gbs)) ||
        (rc = num(d, e, obj, where, "write_gbs", flags & CP_REQ, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s the device's memory absorbs from writes)",
                  &n->write_gbs)) ||
        (rc = num(d, e, obj, where, "access_latency_us", 0, 0, MAX_LAT_US,
                  "a positive number (load latency at the device, us)", &n->access_lat_us)))
        return rc;
    return CP_OK;
}

int cp_pool_check_node_caps(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                            const cp_node *n)
{
    static const char *const keys[] = {"read_gbs", "write_gbs", "access_latency_us"};
    int k;
    if (n->kind == CP_MEMDEV)
        return CP_OK;
    for (k = 0; k < 3; k++)
        if (json_object_get(obj, keys[k]))
            return cp_jdoc_fail(d, e, obj, keys[k], where, "%s is for memdev nodes only",
                                keys[k]);
    if (n->kind == CP_CXL_SWITCH && json_object_get(obj, "host"))
        return cp_jdoc_fail(d, e, obj, "host", where,
                            "a cxl_switch belongs to no host (the pool is shared by every "
                            "host linked to it): drop \"host\"");
    return CP_OK;
}

int cp_pool_read_calib(const cp_jdoc *d, cp_err *e, const json_t *calib, cp_calib_pool *p)
{
    const json_t *obj = NULL;
    int64_t chunks = 0;
    int rc;
    if ((rc = cp_jget_object(d, e, calib, "calibration", "pool", 0, &obj)) || !obj)
        return rc;
    if ((rc = cp_jdoc_check_keys(d, e, obj, "calibration.pool", calib_pool_keys)) ||
        (rc = num(d, e, obj, "calibration.pool", "copy_gbs", 0, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s of one GPU copy engine publishing)",
                  &p->copy_gbs)) ||
        (rc = num(d, e, obj, "calibration.pool", "copy_read_gbs", 0, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s of one GPU copy engine pulling)",
                  &p->copy_read_gbs)) ||
        (rc = num(d, e, obj, "calibration.pool", "duplex", 0, 1e-3, 1,
                  "a number from 0.001 to 1 (share of its rate the pulling copy engine keeps "
                  "while the publishing one runs)", &p->duplex)) ||
        (rc = cp_jget_int(d, e, obj, "calibration.pool", "chunks", 0, 1, MAX_CHUNKS, &chunks)) ||
        (rc = num(d, e, obj, "calibration.pool", "chunk_us", CP_NONNEG, 0, CP_MAX_STEP_US,
                  "a non-negative number (us of fixed cost per publishing copy)",
                  &p->chunk_us)) ||
        (rc = num(d, e, obj, "calibration.pool", "chunk_read_us", CP_NONNEG, 0, CP_MAX_STEP_US,
                  "a non-negative number (us of fixed cost per pulling copy)",
                  &p->chunk_read_us)) ||
        (rc = num(d, e, obj, "calibration.pool", "small_copy_bytes", CP_NONNEG, 0, 1e12,
                  "a number of bytes from 0 to 1e12 (copies under it cost small_copy_us)",
                  &p->small_copy_bytes)) ||
        (rc = num(d, e, obj, "calibration.pool", "small_copy_us", CP_NONNEG, 0, CP_MAX_STEP_US,
                  "a non-negative number (us one copy under small_copy_bytes takes)",
                  &p->small_copy_us)))
        return rc;
    p->chunks = (int)chunks;
    return CP_OK;
}

/* The block's device: a template every expanded device copies. */
static int read_template(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_node *n,
                         const char **model)
{
    int rc;
    memset(n, 0, sizeof *n);
    n->kind = CP_MEMDEV;
    if ((rc = cp_jdoc_check_keys(d, e, obj, "pool.device", device_keys)) ||
        (rc = cp_jget_str(d, e, obj, "pool.device", "model", 0, ID_MAX_BYTES, model)) ||
        (rc = cp_pool_read_device(d, e, obj, "pool.device", CP_REQ, n)) ||
        (rc = num(d, e, obj, "pool.device", "capacity_gb", 0, 0, 1e9, "a positive number (GB)",
                  &n->capacity_gb)) ||
        (rc = num(d, e, obj, "pool.device", "mem_gbs", 0, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s, read+write combined)", &n->mem_gbs)) ||
        (rc = num(d, e, obj, "pool.device", "reduce_gbs", 0, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s of input it can sum)", &n->reduce_gbs)))
        return rc;
    return CP_OK;
}

/* One port: which of the host's nodes links to which switch, how fast.
 * *node is its index, *sw the switch number. */
static int read_port(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                     const cp_topo *t, int nswitch, int *node, int *sw, double *gbs,
                     double *lat)
{
    const char *id = NULL;
    int64_t s = 0;
    int rc;
    if (!json_is_object(obj))
        return cp_jdoc_fail(d, e, obj, NULL, where, "expected a port object");
    if ((rc = cp_jdoc_check_keys(d, e, obj, where, port_keys)) ||
        (rc = cp_jget_str(d, e, obj, where, "node", CP_REQ, ID_MAX_BYTES, &id)) ||
        (rc = cp_jget_int(d, e, obj, where, "switch", CP_REQ, 0, MAX_SWITCHES - 1, &s)) ||
        (rc = num(d, e, obj, where, "gbs", CP_REQ, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s per direction)", gbs)) ||
        (rc = num(d, e, obj, where, "latency_us", CP_REQ, 0, MAX_LAT_US,
                  "a positive number (one-way latency, us)", lat)))
        return rc;
    if ((*node = cp_topo_find(t, id)) < 0)
        return cp_jdoc_fail(d, e, obj, "node", where,
                            "no node with id \"%s\" (a port is a cpu or pcie_switch node of "
                            "the host)", id);
    if (t->nodes[*node].kind != CP_CPU && t->nodes[*node].kind != CP_PCIE_SWITCH)
        return cp_jdoc_fail(d, e, obj, "node", where,
                            "\"%s\" is a %s; a port is a cpu or pcie_switch node of the host",
                            id, cp_node_kind_name(t->nodes[*node].kind));
    if (s >= nswitch)
        return cp_jdoc_fail(d, e, obj, "switch", where,
                            "no switch %lld: the pool has %d (numbered 0 to %d)",
                            (long long)s, nswitch, nswitch - 1);
    *sw = (int)s;
    return CP_OK;
}

/* Add a named pool node copying `tmpl` (NULL: a bare switch); its index
 * to *out. */
static int add_pool_node(const cp_jdoc *d, cp_err *e, const json_t *pool, cp_topo *t,
                         const char *id, cp_node_kind kind, const cp_node *tmpl,
                         const char *model, int line, int *out)
{
    int k;
    if (cp_topo_find(t, id) >= 0)
        return cp_jdoc_fail(d, e, pool, NULL, "pool",
                            "the pool's node id \"%s\" is taken by a node of the file", id);
    if ((k = cp_topo_add_node(t, id, kind, -1)) < 0)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (tmpl) {
        char *own = t->nodes[k].id;
        t->nodes[k] = *tmpl;
        t->nodes[k].id = own;
        t->nodes[k].host = -1;
        t->nodes[k].model = NULL;
    }
    if (model && !(t->nodes[k].model = strdup(model)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    t->nodes[k].src_line = line;
    *out = k;
    return CP_OK;
}

/* The switches, their devices and the links between them. */
static int expand_devices(const cp_jdoc *d, cp_err *e, const json_t *pool, cp_topo *t,
                          int nsw, int per, int *sw_node)
{
    const json_t *dev = json_object_get(pool, "device"), *dl = json_object_get(pool, "device_link");
    const char *model = NULL, *swmodel = NULL;
    double gbs = 0, lat = 0;
    cp_node tmpl;
    int s, j, line, col, rc;
    if ((rc = cp_jget_str(d, e, pool, "pool", "switch_model", 0, ID_MAX_BYTES, &swmodel)) ||
        (rc = read_template(d, e, dev, &tmpl, &model)) ||
        (rc = cp_jdoc_check_keys(d, e, dl, "pool.device_link", dlink_keys)) ||
        (rc = num(d, e, dl, "pool.device_link", "gbs", CP_REQ, MIN_GBS, MAX_GBS,
                  "a positive number (GB/s per direction of each device's link)", &gbs)) ||
        (rc = num(d, e, dl, "pool.device_link", "latency_us", CP_REQ, 0, MAX_LAT_US,
                  "a positive number (one-way latency, us)", &lat)))
        return rc;
    cp_jdoc_locate(d, pool, NULL, &line, &col);
    for (s = 0; s < nsw; s++) {
        char id[64];
        snprintf(id, sizeof id, "cxlsw%d", s);
        if ((rc = add_pool_node(d, e, pool, t, id, CP_CXL_SWITCH, NULL, swmodel, line,
                                &sw_node[s])))
            return rc;
        for (j = 0; j < per; j++) {
            int m;
            snprintf(id, sizeof id, "cxlsw%d/mem%d", s, j);
            if ((rc = add_pool_node(d, e, pool, t, id, CP_MEMDEV, &tmpl, model, line, &m)))
                return rc;
            if (cp_topo_add_link(t, sw_node[s], m, CP_CXL, gbs, gbs, lat) < 0)
                return cp_fail(e, CP_EINTERNAL, "out of memory");
            t->links[t->nlinks - 1].src_line = line;
        }
    }
    return CP_OK;
}

/* Expand a `pool` block of a single-host file. */
static int expand_block(const cp_jdoc *d, cp_err *e, const json_t *pool, cp_topo *t)
{
    const json_t *ports = NULL, *obj = NULL;
    int64_t nsw = 0, per = 0;
    int i, rc, *sw_node, *used;
    size_t k;
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].host > 0 || t->nodes[i].kind == CP_CXL_SWITCH)
            return cp_jdoc_fail(d, e, d->root, "pool", "",
                                "a pool block describes the pool of a single-host file that "
                                "--hosts replicates; this file %s: describe its pool with "
                                "cxl_switch nodes instead",
                                t->nodes[i].host > 0 ? "has several hosts"
                                                     : "has cxl_switch nodes already");
    if ((rc = cp_jdoc_check_keys(d, e, pool, "pool", pool_keys)) ||
        (rc = cp_jget_int(d, e, pool, "pool", "switches", CP_REQ, 1, MAX_SWITCHES, &nsw)) ||
        (rc = cp_jget_int(d, e, pool, "pool", "devices_per_switch", CP_REQ, 1,
                          MAX_DEV_PER_SWITCH, &per)) ||
        (rc = cp_jget_object(d, e, pool, "pool", "device", CP_REQ, &obj)) ||
        (rc = cp_jget_object(d, e, pool, "pool", "device_link", CP_REQ, &obj)) ||
        (rc = cp_jget_array(d, e, pool, "pool", "ports", CP_REQ, &ports)))
        return rc;
    if (json_array_size(ports) == 0)
        return cp_jdoc_fail(d, e, pool, "ports", "pool",
                            "no ports (expected at least one {\"node\", \"switch\", \"gbs\", "
                            "\"latency_us\"})");
    sw_node = malloc(2 * (size_t)nsw * sizeof *sw_node);
    if (!sw_node)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    used = sw_node + nsw;
    memset(used, 0, (size_t)nsw * sizeof *used);
    rc = expand_devices(d, e, pool, t, (int)nsw, (int)per, sw_node);
    for (k = 0; rc == CP_OK && k < json_array_size(ports); k++) {
        char where[64];
        const json_t *p = json_array_get(ports, k);
        int node = 0, s = 0, line, col;
        double gbs = 0, lat = 0;
        cp_jpath_index(where, sizeof where, "pool.ports", k);
        rc = read_port(d, e, p, where, t, (int)nsw, &node, &s, &gbs, &lat);
        if (rc == CP_OK && cp_topo_add_link(t, node, sw_node[s], CP_CXL, gbs, gbs, lat) < 0)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        if (rc == CP_OK) {
            cp_jdoc_locate(d, p, NULL, &line, &col);
            t->links[t->nlinks - 1].src_line = line;
            used[s] = 1;
        }
    }
    for (i = 0; rc == CP_OK && i < nsw; i++)
        if (!used[i])
            rc = cp_jdoc_fail(d, e, pool, "ports", "pool",
                              "no port links to switch %d: no host could reach its devices",
                              i);
    free(sw_node);
    return rc;
}

/* The JSON object of element i of `arr` when the file wrote it (i < n),
 * else the pool block it was expanded from. */
static const json_t *elem(const cp_jdoc *d, const json_t *arr, int i, int n)
{
    return i < n ? json_array_get(arr, (size_t)i) : json_object_get(d->root, "pool");
}

/* What every link touching a switch must be: a cxl link to a memory device
 * (which is then behind the switch) or to a host port (cpu or pcie_switch).
 * Counts devices and ports per node into ndev / nport, marks pooled
 * devices in `behind`, and host h's ports in has_port[h]. */
static int check_links(const cp_jdoc *d, cp_err *e, const json_t *links, int nfile,
                       const cp_topo *t, int *ndev, int *nport, char *behind, char *has_port)
{
    int i, end;
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        char where[64];
        cp_jpath_index(where, sizeof where, "links", (size_t)i);
        for (end = 0; end < 2; end++) {
            int sw = end ? l->b : l->a, o = end ? l->a : l->b;
            cp_node_kind ok = t->nodes[o].kind;
            if (t->nodes[sw].kind != CP_CXL_SWITCH)
                continue;
            if (ok == CP_CXL_SWITCH)
                return cp_jdoc_fail(d, e, elem(d, links, i, nfile), "b", where,
                                    "a cxl_switch linked to another cxl_switch: cascaded "
                                    "switches are not modelled");
            if (ok != CP_MEMDEV && ok != CP_CPU && ok != CP_PCIE_SWITCH)
                return cp_jdoc_fail(d, e, elem(d, links, i, nfile), end ? "a" : "b", where,
                                    "a cxl_switch links to memdev nodes and to host ports "
                                    "(cpu or pcie_switch nodes), not to a %s",
                                    cp_node_kind_name(ok));
            if (l->kind != CP_CXL)
                return cp_jdoc_fail(d, e, elem(d, links, i, nfile), "kind", where,
                                    "a link to a cxl_switch is a cxl link, not %s",
                                    cp_link_kind_name(l->kind));
            if (ok == CP_MEMDEV) {
                ndev[sw]++;
                behind[o] = 1;
            } else {
                nport[sw]++;
                has_port[t->nodes[o].host] = 1;
            }
        }
    }
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        char where[64];
        int a = behind[l->a] && t->nodes[l->b].kind != CP_CXL_SWITCH;
        if (!a && !(behind[l->b] && t->nodes[l->a].kind != CP_CXL_SWITCH))
            continue;
        cp_jpath_index(where, sizeof where, "links", (size_t)i);
        return cp_jdoc_fail(d, e, elem(d, links, i, nfile), a ? "b" : "a", where,
                            "memory device \"%s\" is behind a cxl_switch: its only links are "
                            "to cxl switches", t->nodes[a ? l->a : l->b].id);
    }
    return CP_OK;
}

/* The nodes: switches with a device and a port, pooled devices with both
 * bandwidths and no host; then every host with a GPU has a port.  Pool
 * nodes get host -1. */
static int check_nodes(const cp_jdoc *d, cp_err *e, const json_t *nodes, int nfile, cp_topo *t,
                       const int *ndev, const int *nport, const char *behind,
                       const char *has_port)
{
    int i;
    for (i = 0; i < t->nnodes; i++) {
        cp_node *n = &t->nodes[i];
        const json_t *obj = elem(d, nodes, i, nfile);
        char where[64];
        cp_jpath_index(where, sizeof where, "nodes", (size_t)i);
        if (n->kind == CP_CXL_SWITCH && ndev[i] == 0)
            return cp_jdoc_fail(d, e, obj, "id", where,
                                "cxl_switch \"%s\" has no memory device behind it", n->id);
        if (n->kind == CP_CXL_SWITCH && nport[i] == 0)
            return cp_jdoc_fail(d, e, obj, "id", where,
                                "no host links to cxl_switch \"%s\" (expected a cxl link from "
                                "a host's cpu or pcie_switch)", n->id);
        if (!behind[i] && n->kind != CP_CXL_SWITCH)
            continue;
        if (i < nfile && behind[i] && json_object_get(obj, "host"))
            return cp_jdoc_fail(d, e, obj, "host", where,
                                "memory device \"%s\" is behind a cxl_switch and belongs to "
                                "no host (the pool is shared): drop \"host\"", n->id);
        if (behind[i] && !(n->read_gbs > 0 && n->write_gbs > 0))
            return cp_jdoc_fail(d, e, obj, "id", where,
                                "memory device \"%s\" is behind a cxl_switch: it needs "
                                "read_gbs and write_gbs (what its memory serves and absorbs)",
                                n->id);
        n->host = -1;
    }
    for (i = 0; i < t->nnodes; i++) {
        const cp_node *n = &t->nodes[i];
        char where[64];
        if (n->kind != CP_GPU || has_port[n->host])
            continue;
        cp_jpath_index(where, sizeof where, "nodes", (size_t)i);
        return cp_jdoc_fail(d, e, elem(d, nodes, i, nfile), "id", where,
                            "host %d (of gpu \"%s\") has no link to the pool (expected a cxl "
                            "link from one of its cpu or pcie_switch nodes to a cxl_switch)",
                            n->host, n->id);
    }
    return CP_OK;
}

int cp_pool_load(const cp_jdoc *d, cp_err *e, const json_t *nodes, const json_t *links,
                 cp_topo *t)
{
    const json_t *pool = json_object_get(d->root, "pool");
    int nfile = t->nnodes, lfile = t->nlinks, i, maxhost = 0, rc, *ndev;
    char *behind, *has_port;
    if (pool && (rc = expand_block(d, e, pool, t)))
        return rc;
    if (cp_topo_count(t, CP_CXL_SWITCH) == 0)
        return CP_OK;
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].host > maxhost)
            maxhost = t->nodes[i].host;
    ndev = calloc(2 * (size_t)t->nnodes, sizeof *ndev);
    behind = calloc((size_t)t->nnodes + (size_t)maxhost + 1, 1);
    if (!ndev || !behind) {
        free(ndev);
        free(behind);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    has_port = behind + t->nnodes;
    rc = check_links(d, e, links, lfile, t, ndev, ndev + t->nnodes, behind, has_port);
    if (rc == CP_OK)
        rc = check_nodes(d, e, nodes, nfile, t, ndev, ndev + t->nnodes, behind, has_port);
    free(ndev);
    free(behind);
    return rc;
}
