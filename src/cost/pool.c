/*
 * pool.c - collectives through a shared CXL memory pool (see pool.h; the
 * model and its equations: docs/pool.md).
 *
 * Building finds, for every GPU and every device of the pool, the route
 * the GPU's DMA takes: the widest route inside the GPU's host to a CXL
 * switch the device sits behind, then the switch's port to the device;
 * and the rate one copy along it can reach.  Evaluating an operation
 * takes one pipeline step (one chunk of every piece each rank publishes
 * and pulls): each GPU's two streams of copies, each copy to one device
 * at the rate of its engine and path, its two engines together, every
 * link direction and every device loaded by the step's copies (spread
 * over the devices by software placement, except the readers of one chunk,
 * who meet at its device); the busiest sets the step.  The scan over
 * GPUs and devices costs O(GPUs x devices x route length) per call.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/pool.h"
#include "topo/topo.h" /* cp_is_transit */

static const char *const xop_names[CP_XOPS] = {"allreduce", "reducescatter", "allgather",
                                               "broadcast", "reduce", "gather", "scatter",
                                               "alltoall"};
static const char *const res_names[CP_PRES_KINDS] = {
    "copy engine (write)", "copy engine (read)", "copy engines (both ways)", "link", "device",
    "device reduction"};

const char *cp_xop_name(cp_xop op)
{
    return (unsigned)op < CP_XOPS ? xop_names[op] : "?";
}

const char *cp_pool_res_name(cp_pool_res r)
{
    return (unsigned)r < CP_PRES_KINDS ? res_names[r] : "?";
}

double cp_xop_busbw_factor(cp_xop op, int n)
{
    if (op < CP_XOP_REDUCE)
        return cp_coll_busbw_factor((cp_coll_op)op, n);
    if (op == CP_XOP_REDUCE)
        return 1;
    return n > 0 ? (double)(n - 1) / n : 0; /* nccl-tests gather, scatter, alltoall */
}

int cp_pool_present(const cp_topo *t)
{
    return cp_topo_count(t, CP_CXL_SWITCH) > 0;
}

const char *cp_pool_arc_role(const cp_topo *t, int arc)
{
    cp_node_kind a = t->nodes[cp_arc_tail(t, arc)].kind, b = t->nodes[cp_arc_head(t, arc)].kind;
    if (a == CP_MEMDEV || b == CP_MEMDEV)
        return "switch port";
    if (a == CP_CXL_SWITCH || b == CP_CXL_SWITCH)
        return "host link";
    return "GPU link";
}

static double arc_cap(const cp_topo *t, int arc)
{
    const cp_link *l = &t->links[arc >> 1];
    return l->gbs[arc & 1] * t->calib.kind[l->kind].bw_eff;
}

void cp_pool_free(cp_pool *p)
{
    free(p->dev);
    free(p->route_off);
    free(p->route_arc);
    free(p->path_w_gbs);
    free(p->path_r_gbs);
    free(p->copy_gbs);
    free(p->copy_read_gbs);
    free(p->load);
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

/* A widest-route search from one GPU that stays inside the GPU's host (a
 * GPU's DMA goes through its own host's port, never over the network):
 * bottleneck first, then latency, as paths.c; CXL switches are reached
 * but not crossed.  Label-correcting over a queue: a host has a few dozen
 * nodes.  Arrays of t->nnodes, reset for the nodes touched. */
typedef struct hsearch {
    double *bott, *lat;
    int *pred, *queue, *touched, ntouched;
} hsearch;

static int hsearch_init(hsearch *h, int n)
{
    int i;
    h->bott = malloc((size_t)n * sizeof *h->bott);
    h->lat = malloc((size_t)n * sizeof *h->lat);
    h->pred = malloc((size_t)n * sizeof *h->pred);
    h->queue = malloc(((size_t)n + 1) * sizeof *h->queue);
    h->touched = malloc(((size_t)n + 1) * sizeof *h->touched);
    h->ntouched = 0;
    if (!h->bott || !h->lat || !h->pred || !h->queue || !h->touched)
        return -1;
    for (i = 0; i < n; i++) {
        h->bott[i] = 0;
        h->pred[i] = -1;
    }
    return 0;
}

static void hsearch_free(hsearch *h)
{
    free(h->bott);
    free(h->lat);
    free(h->pred);
    free(h->queue);
    free(h->touched);
}

static void touch(hsearch *h, int v, char *in_list)
{
    if (!in_list[v]) {
        in_list[v] = 1;
        h->touched[h->ntouched++] = v;
    }
}

/* Search from GPU node g; `mark` is scratch of t->nnodes zeros, left zero. */
static void hsearch_run(const cp_topo *t, hsearch *h, int g, char *mark)
{
    int head = 0, tail = 0, i, n = t->nnodes, host = t->nodes[g].host;
    for (i = 0; i < h->ntouched; i++) {
        h->bott[h->touched[i]] = 0;
        h->pred[h->touched[i]] = -1;
    }
    h->ntouched = 0;
    h->bott[g] = INFINITY;
    h->lat[g] = 0;
    touch(h, g, mark);
    h->queue[tail++] = g;
    while (head != tail) {
        int v = h->queue[head], k;
        head = (head + 1) % (n + 1);
        if (v != g && (t->nodes[v].kind == CP_CXL_SWITCH || !cp_is_transit(t->nodes[v].kind)))
            continue;
        for (k = t->adj_off[v]; k < t->adj_off[v + 1]; k++) {
            int a = t->adj_arc[k], w = cp_arc_head(t, a);
            double b = fmin(h->bott[v], cp_arc_gbs(t, a)), l = h->lat[v] + t->links[a >> 1].lat_us;
            if (t->nodes[w].host != host && t->nodes[w].kind != CP_CXL_SWITCH)
                continue;
            if (b > h->bott[w] || (b == h->bott[w] && l < h->lat[w])) {
                h->bott[w] = b;
                h->lat[w] = l;
                h->pred[w] = a;
                touch(h, w, mark);
                h->queue[tail] = w;
                tail = (tail + 1) % (n + 1);
            }
        }
    }
    for (i = 0; i < h->ntouched; i++)
        mark[h->touched[i]] = 0;
}

/* The arc from a switch to device `d` that best extends the search (the
 * widest of min(route to the switch, switch port)); -1 when no switch of
 * d is reached. */
static int best_port(const cp_topo *t, const hsearch *h, int d)
{
    int k, best = -1;
    double bw = 0;
    for (k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
        int in = t->adj_arc[k] ^ 1, sw = cp_arc_tail(t, in);
        double w = fmin(h->bott[sw], cp_arc_gbs(t, in));
        if (t->nodes[sw].kind == CP_CXL_SWITCH && h->bott[sw] > 0 && w > bw) {
            bw = w;
            best = in;
        }
    }
    return best;
}

/* Append GPU g's route to device d: the search's arcs to the switch, then
 * `port`, GPU first.  *lat gets the route's latency. */
static int add_route(const cp_topo *t, const hsearch *h, int g, int port, int *arcs, int *n,
                     int cap, double *lat)
{
    int v = cp_arc_tail(t, port), start = *n, i, j;
    *lat = h->lat[v] + t->links[port >> 1].lat_us;
    while (v != g) {
        int a = h->pred[v];
        if (*n >= cap)
            return -1;
        arcs[(*n)++] = a;
        v = cp_arc_tail(t, a);
    }
    for (i = start, j = *n - 1; i < j; i++, j--) {
        int x = arcs[i];
        arcs[i] = arcs[j];
        arcs[j] = x;
    }
    if (*n >= cap)
        return -1;
    arcs[(*n)++] = port;
    return 0;
}

/* Every GPU's route to every device; the copy engines' default rate (the
 * GPU's own first link) and the slowest route's latency. */
static int build_routes(const cp_topo *t, cp_pool *p, cp_err *e)
{
    int g, d, n = 0, rc = CP_OK, cap = 32 * p->nranks * p->ndev;
    hsearch h;
    char *mark = calloc((size_t)t->nnodes, 1);
    p->route_off = calloc((size_t)p->nranks * p->ndev + 1, sizeof *p->route_off);
    p->route_arc = calloc((size_t)cap + 1, sizeof *p->route_arc);
    if (hsearch_init(&h, t->nnodes) || !mark || !p->route_off || !p->route_arc) {
        hsearch_free(&h);
        free(mark);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (g = 0; g < p->nranks && rc == CP_OK; g++) {
        int gpu = t->gpus[g];
        hsearch_run(t, &h, gpu, mark);
        for (d = 0; d < p->ndev && rc == CP_OK; d++) {
            int port = best_port(t, &h, p->dev[d]);
            double lat = 0;
            p->route_off[(size_t)g * p->ndev + d] = n;
            if (port < 0)
                rc = cp_fail_at(e, CP_EINPUT, t->src_path, t->nodes[gpu].src_line, 0, NULL,
                                "gpu \"%s\" cannot reach pool device \"%s\" through its own "
                                "host (a GPU's DMA goes through its host's port)",
                                t->nodes[gpu].id, t->nodes[p->dev[d]].id);
            else if (add_route(t, &h, gpu, port, p->route_arc, &n, cap, &lat))
                rc = cp_fail(e, CP_EINTERNAL, "pool route table overflow");
            if (rc == CP_OK && lat > p->path_lat_us)
                p->path_lat_us = lat;
        }
        if (rc == CP_OK && p->copy_gbs[g] <= 0)
            p->copy_gbs[g] = arc_cap(t, p->route_arc[p->route_off[(size_t)g * p->ndev]]);
        if (rc == CP_OK && p->copy_read_gbs[g] <= 0)
            p->copy_read_gbs[g] = p->copy_gbs[g];
    }
    p->route_off[(size_t)p->nranks * p->ndev] = n;
    hsearch_free(&h);
    free(mark);
    return rc;
}

/* The rate one copy reaches from GPU g to device d and back: the slowest
 * effective link direction of the route (the GPU's link, its host's port,
 * the switch's port to the device) and the device's memory, which one copy
 * has to itself: the cards have no hardware interleaving. */
static void path_rates(const cp_topo *t, cp_pool *p)
{
    int g, d, k;
    for (g = 0; g < p->nranks; g++)
        for (d = 0; d < p->ndev; d++) {
            const cp_node *dv = &t->nodes[p->dev[d]];
            size_t i = (size_t)g * p->ndev + d;
            double w = dv->write_gbs, r = dv->read_gbs;
            for (k = p->route_off[i]; k < p->route_off[i + 1]; k++) {
                w = fmin(w, arc_cap(t, p->route_arc[k]));
                r = fmin(r, arc_cap(t, p->route_arc[k] ^ 1));
            }
            p->path_w_gbs[i] = w;
            p->path_r_gbs[i] = r;
        }
}

/* calibration.pool or its defaults (docs/pool.md, "Defaults"). */
static void set_costs(const cp_topo *t, cp_pool *p, double access)
{
    const cp_calib_pool *cal = &t->calib.pool;
    p->launch_us = t->calib.launch_us;
    /* eq. PL5: the writer's flag store reaches the device (one path and the
     * access), the reader's poll is a read there and back (two paths and
     * the access) */
    p->doorbell_us = 3 * p->path_lat_us + 2 * access;
    p->chunks = cal->chunks > 0 ? cal->chunks : CP_POOL_CHUNKS;
    p->chunk_us = cal->chunk_us >= 0 ? cal->chunk_us : p->launch_us + p->doorbell_us;
    p->chunk_read_us = cal->chunk_read_us >= 0 ? cal->chunk_read_us : p->chunk_us;
    p->duplex = cal->duplex > 0 ? cal->duplex : 1;
    p->small_bytes = cal->small_copy_bytes;
    p->small_us = cal->small_copy_us;
}

int cp_pool_build(const cp_topo *t, const cp_coll *c, cp_pool *p, cp_err *e)
{
    const cp_calib_pool *cal = &t->calib.pool;
    double access = 0;
    int i, rc, reduces = 1;
    size_t narcs = 2 * (size_t)t->nlinks + 1;
    memset(p, 0, sizeof *p);
    p->topo = t;
    p->nranks = t->ngpus;
    p->nhosts = t->nhosts;
    if (!cp_pool_present(t))
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, NULL,
                          "%s has no CXL pool (no cxl_switch node, no pool block)", t->name);
    p->dev = calloc((size_t)t->nnodes, sizeof *p->dev);
    p->copy_gbs = calloc((size_t)p->nranks + 1, sizeof *p->copy_gbs);
    p->copy_read_gbs = calloc((size_t)p->nranks + 1, sizeof *p->copy_read_gbs);
    p->load = calloc(narcs, sizeof *p->load);
    p->scratch = calloc(2 * narcs, sizeof *p->scratch);
    if (!p->dev || !p->copy_gbs || !p->copy_read_gbs || !p->load || !p->scratch) {
        cp_pool_free(p);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_MEMDEV && t->nodes[i].host < 0) {
            p->dev[p->ndev++] = i;
            reduces &= t->nodes[i].reduce_gbs > 0;
            access = fmax(access, t->nodes[i].access_lat_us);
        }
    if (p->ndev == 0) {
        cp_pool_free(p);
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, NULL,
                          "%s: the CXL pool has no memory device", t->name);
    }
    p->path_w_gbs = calloc((size_t)p->nranks * p->ndev + 1, sizeof *p->path_w_gbs);
    p->path_r_gbs = calloc((size_t)p->nranks * p->ndev + 1, sizeof *p->path_r_gbs);
    if (!p->path_w_gbs || !p->path_r_gbs) {
        cp_pool_free(p);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < p->nranks; i++) {
        p->copy_gbs[i] = cal->copy_gbs;
        p->copy_read_gbs[i] = cal->copy_read_gbs;
    }
    if ((rc = build_routes(t, p, e))) {
        cp_pool_free(p);
        return rc;
    }
    path_rates(t, p);
    p->device_reduces = reduces;
    p->coll = c;
    if (c && c->nhosts > 1 && c->per_host > 1 && c->per_host * c->nhosts == p->nranks)
        p->per_host = c->per_host;
    set_costs(t, p, access);
    return CP_OK;
}

/* What one rank does in one pipeline step: publishes nw copies of bw
 * bytes and pulls nr copies of br bytes (the table of docs/pool.md, eq.
 * PL1, over the chunks). */
typedef struct role {
    double nw, bw, nr, br;
} role;

static role mk(double nw, double bw, double nr, double br)
{
    role r = {nw, bw, nr, br};
    return r;
}

/* Roles of the root (rank 0) and of every other rank of n in one of k
 * steps of `op` on S bytes; `dev` when the devices reduce (writers'
 * contributions are summed in place, readers pull one sum); *fanout the
 * readers that pull one chunk from its one device at the same time. */
static void roles(cp_xop op, int n, int dev, double S, int k, role *root, role *other,
                  int *fanout)
{
    double m = n - 1, c = S / k, q = S / n / k; /* a chunk of the buffer, of a piece */
    *fanout = 1;
    switch (op) {
    case CP_XOP_ALLREDUCE:
        *other = dev ? mk(1, c, 1, c) : mk(1, c, m, c);
        *fanout = dev ? n : 1; /* every rank reads the sum's chunk at once */
        break;
    case CP_XOP_REDUCESCATTER: *other = dev ? mk(m, q, 1, q) : mk(m, q, m, q); break;
    case CP_XOP_ALLGATHER: *other = mk(1, q, m, q); break;
    case CP_XOP_ALLTOALL: *other = mk(m, q, m, q); break;
    case CP_XOP_BROADCAST:
        *root = mk(1, c, 0, 0);
        *other = mk(0, 0, 1, c);
        *fanout = n - 1; /* every reader waits for the same doorbell */
        return;
    case CP_XOP_REDUCE:
        *root = mk(0, 0, dev ? 1 : m, c);
        *other = mk(1, c, 0, 0);
        return;
    case CP_XOP_GATHER: *root = mk(0, 0, m, q); *other = mk(1, q, 0, 0); return;
    case CP_XOP_SCATTER: *root = mk(m, q, 0, 0); *other = mk(0, 0, 1, q); return;
    default: *other = mk(0, 0, 0, 0); break;
    }
    *root = *other;
}

static void set_res(cp_pool_call *c, cp_pool_res k, double us, int where)
{
    if (us > c->res_us[k]) {
        c->res_us[k] = us;
        c->res_where[k] = where;
    }
}

/* One copy of b bytes: its fixed cost and its bytes at inv_us a byte, or,
 * under small_bytes, what such a copy takes (eq. PL2). */
static double copy_us(const cp_pool *p, double b, double fixed, double inv_us)
{
    if (!(b > 0))
        return 0;
    if (b < p->small_bytes)
        return p->small_us;
    return fixed + b * inv_us;
}

/* us a byte of GPU g's copies in one direction, each to one device at the
 * slower of its engine and its path, the copies rotating over the devices
 * (software placement): the mean over the devices. */
static double inv_rate(const cp_pool *p, int g, int write)
{
    const double *path = write ? p->path_w_gbs : p->path_r_gbs;
    double eng = write ? p->copy_gbs[g] : p->copy_read_gbs[g], s = 0;
    int d;
    for (d = 0; d < p->ndev; d++)
        s += 1 / (fmin(eng, path[(size_t)g * p->ndev + d]) * 1e3);
    return s / p->ndev;
}

/* The slowest publishing and pulling streams: their step (a[0], b[0])
 * and one of their copies (a[1], b[1]). */
typedef struct slowest {
    double a[2], b[2];
} slowest;

/* One step of every GPU's streams (eq. PL2): its publishing copies one
 * after another, its pulling copies likewise, and the two engines at
 * once, where the pull keeps `duplex` of its engine's rate while the
 * publishing engine runs.  The GPU sums what it pulled at device-memory
 * speed, far above any link here (H100: 3.35 TB/s), so that is not a
 * term. */
static void streams(const cp_pool *p, const role *rr, const role *ro, cp_pool_call *c,
                    slowest *sl)
{
    int g;
    memset(sl, 0, sizeof *sl);
    for (g = 0; g < p->nranks; g++) {
        const role *r = g == 0 ? rr : ro;
        int node = p->topo->gpus[g];
        double w1 = copy_us(p, r->bw, p->chunk_us, inv_rate(p, g, 1));
        double r1 = copy_us(p, r->br, p->chunk_read_us, inv_rate(p, g, 0));
        double pub = r->nw * w1, pull = r->nr * r1;
        set_res(c, CP_PRES_COPY_WRITE, pub, node);
        set_res(c, CP_PRES_COPY_READ, pull, node);
        if (pub > 0 && pull > 0 && p->duplex < 1)
            set_res(c, CP_PRES_DUPLEX,
                    r->nr * copy_us(p, r->br, p->chunk_read_us, 1 / (p->copy_read_gbs[g] * 1e3)) +
                        (1 - p->duplex) * r->nw * r->bw / (p->copy_gbs[g] * 1e3),
                    node);
        sl->a[0] = fmax(sl->a[0], pub);
        sl->a[1] = fmax(sl->a[1], w1);
        sl->b[0] = fmax(sl->b[0], pull);
        sl->b[1] = fmax(sl->b[1], r1);
    }
}

/* One step's bytes on the links: every rank's copies spread evenly over
 * the devices (software placement), published along its routes and pulled
 * along their reverse, into load[]; then each arc's time, where the `fan`
 * readers of one chunk pull it from its one device's port at once (eq.
 * PL3). */
static void links(const cp_pool *p, const role *rr, const role *ro, int fan, double *load,
                  cp_pool_call *c)
{
    const cp_topo *t = p->topo;
    int g, d, k, narcs = 2 * t->nlinks;
    memset(load, 0, (size_t)narcs * sizeof *load);
    for (g = 0; g < p->nranks; g++) {
        const role *r = g == 0 ? rr : ro;
        double wb = r->nw * r->bw / p->ndev, rb = r->nr * r->br / p->ndev;
        for (d = 0; d < p->ndev; d++)
            for (k = p->route_off[g * p->ndev + d]; k < p->route_off[g * p->ndev + d + 1]; k++) {
                load[p->route_arc[k]] += wb;
                load[p->route_arc[k] ^ 1] += rb;
            }
    }
    for (k = 0; k < narcs; k++)
        if (load[k] > 0)
            set_res(c, CP_PRES_LINK, load[k] / (arc_cap(t, k) * 1e3), k);
    for (g = 0; fan > 1 && g < p->nranks; g++)
        for (d = 0; d < p->ndev; d++) {
            int port = p->route_arc[p->route_off[g * p->ndev + d + 1] - 1] ^ 1;
            set_res(c, CP_PRES_LINK, fmax(load[port], fan * ro->br) / (arc_cap(t, port) * 1e3),
                    port);
        }
}

/* One step on the devices: their share of all writes and reads (the
 * readers of one chunk meet at its device) against their read, write and
 * combined rates; reducing in place, each written byte is also read (a
 * read-modify-write) and summed at reduce_gbs (eq. PL4). */
static void devices(const cp_pool *p, const role *rr, const role *ro, int fan, int reduces,
                    cp_pool_call *c)
{
    double W = rr->nw * rr->bw + (p->nranks - 1) * ro->nw * ro->bw;
    double R = rr->nr * rr->br + (p->nranks - 1) * ro->nr * ro->br;
    int d;
    W /= p->ndev;
    R = fmax(R / p->ndev, fan > 1 ? fan * ro->br : 0);
    for (d = 0; d < p->ndev; d++) {
        const cp_node *n = &p->topo->nodes[p->dev[d]];
        double rd = R + (reduces ? W : 0);
        double us = fmax(rd / (n->read_gbs * 1e3), W / (n->write_gbs * 1e3));
        if (n->mem_gbs > 0)
            us = fmax(us, (rd + W) / (n->mem_gbs * 1e3));
        set_res(c, CP_PRES_DEVICE, us, p->dev[d]);
        if (reduces)
            set_res(c, CP_PRES_REDUCE, W / (n->reduce_gbs * 1e3), p->dev[d]);
    }
}

/* The step of roles rr, ro: every resource's share (c->res_us, per step
 * for now), the busiest (c->step_us, c->bind), one step's bytes on each
 * arc (load), *sl as streams'. */
static void step(const cp_pool *p, const role *rr, const role *ro, int fan, int reduces,
                 double *load, cp_pool_call *c, slowest *sl)
{
    int k;
    for (k = 0; k < CP_PRES_KINDS; k++) {
        c->res_us[k] = 0;
        c->res_where[k] = -1;
    }
    streams(p, rr, ro, c, sl);
    links(p, rr, ro, fan, load, c);
    devices(p, rr, ro, fan, reduces, c);
    c->step_us = 0;
    c->bind = CP_PRES_COPY_WRITE;
    for (k = 0; k < CP_PRES_KINDS; k++)
        if (c->res_us[k] > c->step_us) {
            c->step_us = c->res_us[k];
            c->bind = (cp_pool_res)k;
        }
    c->fanout = fan;
    c->copies = (long long)fmax(fmax(rr->nw, rr->nr), fmax(ro->nw, ro->nr));
    c->copy_bytes = fmax(fmax(rr->bw, rr->br), fmax(ro->bw, ro->br));
    c->copy_us = fmax(rr->nr, ro->nr) >= fmax(rr->nw, ro->nw) ? p->chunk_read_us : p->chunk_us;
}

/* Every step's share times the steps, the step's loads times the steps:
 * what the whole call needs of each resource and puts on each arc. */
static void over_steps(const cp_pool *p, cp_pool_call *c, double *load)
{
    int k, narcs = 2 * p->topo->nlinks;
    for (k = 0; k < CP_PRES_KINDS; k++)
        c->res_us[k] *= c->steps;
    for (k = 0; k < narcs; k++)
        load[k] *= c->steps;
    c->copies *= c->steps;
}

/* The chunks a piece of `piece` bytes is cut into: the pool's count, but
 * no copy smaller than the small-copy threshold where the piece holds one
 * at least that large (cut below it, every chunk would pay the cliff);
 * at least one. */
static int steps_for(const cp_pool *p, double piece)
{
    double most = p->small_bytes > 0 ? floor(piece / p->small_bytes) : p->chunks;
    return most >= p->chunks ? p->chunks : most >= 1 ? (int)most : 1;
}

/* One call of `op` among n ranks on S bytes each group (eq. PL6): the
 * launch, the first doorbell, the steps one after another, and one copy of
 * the stream that does not bind: readers start once the first copy is
 * published (staggered, each reader's first chunk is some writer's first
 * copy), and when publishing binds the last copy's pull ends after the
 * last publication. */
static void pool_call(const cp_pool *p, cp_xop op, int n, double S, int reduces, double *load,
                      cp_pool_call *c)
{
    role rr, ro;
    slowest sl;
    int fan, whole = op == CP_XOP_ALLREDUCE || op == CP_XOP_BROADCAST || op == CP_XOP_REDUCE;
    memset(c, 0, sizeof *c);
    c->op = op;
    c->steps = steps_for(p, whole ? S : S / n);
    roles(op, n, reduces, S, c->steps, &rr, &ro, &fan);
    step(p, &rr, &ro, fan, reduces, load, c, &sl);
    c->launch_us = p->launch_us;
    c->fill_us = p->doorbell_us + (sl.a[0] <= sl.b[0] ? sl.a[1] : sl.b[1]);
    c->us = c->launch_us + c->fill_us + c->steps * c->step_us;
    over_steps(p, c, load);
}

/* In-host phase k (0: reduce-scatter, 2: all-gather) of a hierarchical
 * all-reduce on `bytes`, as one call: the faster of the ring (hier) and
 * the NVSwitch (nvls) forms the machine has. */
static double intra_us(const cp_coll *c, int k, double bytes)
{
    double r = cp_coll_phase_us(c, CP_ALG_HIER, k, bytes, NULL);
    double v = cp_coll_phase_us(c, CP_ALG_NVLS, k, bytes, NULL);
    return v > 0 && (r < 0 || v < r) ? v : r > 0 ? r : 0;
}

/* eq. PL7: the hierarchical form's in-host phases, and the pool's share:
 * *n ranks per peer group, *S bytes of each group's buffer.  0 when the
 * operation runs flat. */
static double hierarchy(const cp_pool *p, cp_xop op, double bytes, int *n, double *S)
{
    double us = 0;
    *n = p->nranks;
    *S = bytes;
    if (!p->per_host || !(op == CP_XOP_ALLREDUCE || op == CP_XOP_REDUCESCATTER ||
                          op == CP_XOP_ALLGATHER))
        return 0;
    if (op != CP_XOP_ALLGATHER)
        us += intra_us(p->coll, 0, bytes);
    if (op != CP_XOP_REDUCESCATTER)
        us += intra_us(p->coll, 2, bytes);
    *n = p->nranks / p->per_host;
    *S = bytes / p->per_host;
    return us;
}

static void why_init(const cp_pool *p, cp_pool_why *w)
{
    int k;
    memset(w, 0, sizeof *w);
    for (k = 0; k < CP_PRES_KINDS; k++)
        w->res_where[k] = -1;
    w->launch_us = p->launch_us;
    w->pool_us = p->launch_us;
    w->chunk_us = p->chunk_us;
}

/* The calls' summary: times summed, the binding resource the largest of
 * the summed resources, where it binds in the longer call. */
static void summarise(cp_pool_why *w)
{
    int i, k, longer = w->ncalls > 1 && w->call[1].us > w->call[0].us;
    double worst = 0;
    w->pool_us = w->launch_us = w->fill_us = 0;
    w->chunks = 0;
    for (k = 0; k < CP_PRES_KINDS; k++)
        w->res_us[k] = 0;
    for (i = 0; i < w->ncalls; i++) {
        const cp_pool_call *c = &w->call[i];
        w->pool_us += c->us;
        w->launch_us += c->launch_us;
        w->fill_us += c->fill_us;
        w->chunks += c->copies;
        for (k = 0; k < CP_PRES_KINDS; k++)
            w->res_us[k] += c->res_us[k];
    }
    for (k = 0; k < CP_PRES_KINDS; k++) {
        w->res_where[k] = w->call[longer].res_where[k];
        if (w->res_us[k] > worst) {
            worst = w->res_us[k];
            w->bind = (cp_pool_res)k;
        }
    }
    w->chunk_us = w->call[longer].copy_us;
}

/* AllReduce's second form: a reduce-scatter, then an all-gather, two calls
 * through the pool; taken (with its loads) when faster than the direct
 * form already in w->call[0] and p->load. */
static void try_rsag(cp_pool *p, int n, double S, int reduces, cp_pool_why *w)
{
    int k, narcs = 2 * p->topo->nlinks;
    double *A = p->scratch, *B = p->scratch + narcs;
    cp_pool_call rs, ag;
    pool_call(p, CP_XOP_REDUCESCATTER, n, S, reduces, A, &rs);
    pool_call(p, CP_XOP_ALLGATHER, n, S, 0, B, &ag);
    w->direct_us = w->call[0].us;
    w->rsag_us = rs.us + ag.us;
    if (!(w->rsag_us < w->direct_us))
        return;
    w->rsag = 1;
    w->call[0] = rs;
    w->call[1] = ag;
    w->ncalls = 2;
    for (k = 0; k < narcs; k++)
        p->load[k] = A[k] + B[k];
}

double cp_pool_time_us(cp_pool *p, cp_xop op, double bytes, cp_pool_why *why)
{
    cp_pool_why w;
    double S;
    int n, dev = p->device_reduces &&
                 (op == CP_XOP_ALLREDUCE || op == CP_XOP_REDUCESCATTER || op == CP_XOP_REDUCE);
    if ((unsigned)op >= CP_XOPS || !(bytes >= 0))
        return -1;
    why_init(p, &w);
    w.device_reduces = dev;
    w.intra_us = hierarchy(p, op, bytes, &n, &S);
    memset(p->load, 0, 2 * (size_t)p->topo->nlinks * sizeof *p->load);
    if (n > 1 && bytes > 0) {
        pool_call(p, op, n, S, dev, p->load, &w.call[0]);
        w.ncalls = 1;
        if (op == CP_XOP_ALLREDUCE)
            try_rsag(p, n, S, dev, &w);
        summarise(&w);
    }
    if (why)
        *why = w;
    return w.pool_us + w.intra_us;
}

double cp_pool_copy_us(cp_pool *p, double rd, double wr, cp_pool_why *why)
{
    cp_pool_why w;
    cp_pool_call *c = &w.call[0];
    role r;
    slowest sl;
    int k = steps_for(p, fmax(rd, wr));
    if (!(rd >= 0 && wr >= 0))
        return -1;
    why_init(p, &w);
    r = mk(wr > 0, wr / k, rd > 0, rd / k);
    memset(c, 0, sizeof *c);
    c->steps = k;
    step(p, &r, &r, 1, 0, p->load, c, &sl);
    c->launch_us = p->launch_us;
    c->us = c->launch_us + k * c->step_us;
    over_steps(p, c, p->load);
    w.ncalls = 1;
    summarise(&w);
    if (why)
        *why = w;
    return w.pool_us;
}

double cp_pool_chunk_bytes(const cp_pool *p, double bytes)
{
    double piece = bytes / (p->per_host > 0 ? p->per_host : 1);
    return piece / steps_for(p, piece);
}

int cp_pool_copy_limit(const cp_pool *p, int g, int d, int write, double *gbs)
{
    const cp_topo *t = p->topo;
    const cp_node *dv = &t->nodes[p->dev[d]];
    size_t i = (size_t)g * p->ndev + d;
    double eng = write ? p->copy_gbs[g] : p->copy_read_gbs[g];
    int k, at = -2;
    *gbs = write ? dv->write_gbs : dv->read_gbs;
    for (k = p->route_off[i]; k < p->route_off[i + 1]; k++) {
        int a = write ? p->route_arc[k] : p->route_arc[k] ^ 1;
        if (arc_cap(t, a) < *gbs) {
            *gbs = arc_cap(t, a);
            at = a;
        }
    }
    if (eng <= *gbs) {
        *gbs = eng;
        at = -1;
    }
    return at;
}
