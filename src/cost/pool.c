/*
 * pool.c - collectives through a shared CXL memory pool (see pool.h; the
 * model and its equations: docs/pool.md).
 *
 * Building finds, for every GPU and every device of the pool, the route
 * the GPU's DMA takes: the widest route inside the GPU's host to a CXL
 * switch the device sits behind, then the switch's port to the device.
 * Evaluating an operation spreads each rank's published and pulled bytes
 * evenly over the devices (software interleaving), loads the routes' arcs
 * and the devices, and takes the slowest resource.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/pool.h"
#include "topo/topo.h" /* cp_is_transit */

static const char *const xop_names[CP_XOPS] = {"allreduce", "reducescatter", "allgather",
                                               "broadcast", "reduce", "gather", "scatter",
                                               "alltoall"};
static const char *const res_names[CP_PRES_KINDS] = {"copy engine (write)", "copy engine (read)",
                                                     "link", "device", "device reduction"};

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
    free(p->copy_gbs);
    free(p->copy_read_gbs);
    free(p->load);
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

int cp_pool_build(const cp_topo *t, const cp_coll *c, cp_pool *p, cp_err *e)
{
    const cp_calib_pool *cal = &t->calib.pool;
    double access = 0;
    int i, rc, reduces = 1;
    memset(p, 0, sizeof *p);
    p->topo = t;
    p->nranks = t->ngpus;
    p->nhosts = t->nhosts;
    if (!cp_pool_present(t))
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, NULL,
                          "%s has no CXL pool (no cxl_switch node, no pool block)", t->name);
    p->dev = calloc((size_t)t->nnodes, sizeof *p->dev);
    p->copy_gbs = calloc((size_t)p->nranks, sizeof *p->copy_gbs);
    p->copy_read_gbs = calloc((size_t)p->nranks, sizeof *p->copy_read_gbs);
    p->load = calloc(2 * (size_t)t->nlinks + 1, sizeof *p->load);
    if (!p->dev || !p->copy_gbs || !p->copy_read_gbs || !p->load) {
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
    for (i = 0; i < p->nranks; i++) {
        p->copy_gbs[i] = cal->copy_gbs;
        p->copy_read_gbs[i] = cal->copy_read_gbs;
    }
    if ((rc = build_routes(t, p, e))) {
        cp_pool_free(p);
        return rc;
    }
    p->device_reduces = reduces;
    p->coll = c;
    if (c && c->nhosts > 1 && c->per_host > 1 && c->per_host * c->nhosts == p->nranks)
        p->per_host = c->per_host;
    p->launch_us = t->calib.launch_us;
    /* eq. PL5: the writer's flag store reaches the device (one path and the
     * access), the reader's poll is a read there and back (two paths and
     * the access) */
    p->doorbell_us = 3 * p->path_lat_us + 2 * access;
    p->chunk_bytes = cal->chunk_bytes > 0 ? cal->chunk_bytes : CP_POOL_CHUNK_BYTES;
    p->chunk_us = cal->chunk_us >= 0 ? cal->chunk_us : p->launch_us + p->doorbell_us;
    return CP_OK;
}

/* What one rank publishes and pulls, in pieces of frac x S bytes (the
 * table of docs/pool.md, eq. PL1). */
typedef struct role {
    double w_pieces, w_frac, r_pieces, r_frac;
} role;

static role mk(double wp, double wf, double rp, double rf)
{
    role r = {wp, wf, rp, rf};
    return r;
}

/* Roles of the root (rank 0) and of every other rank; `dev` when the
 * devices reduce (writers' contributions are summed in place, readers pull
 * one sum). */
static void roles(cp_xop op, int n, int dev, role *root, role *other)
{
    double m = n - 1, f = 1.0 / n;
    switch (op) {
    case CP_XOP_ALLREDUCE: *other = dev ? mk(1, 1, 1, 1) : mk(1, 1, m, 1); break;
    case CP_XOP_REDUCESCATTER: *other = dev ? mk(m, f, 1, f) : mk(m, f, m, f); break;
    case CP_XOP_ALLGATHER: *other = mk(1, f, m, f); break;
    case CP_XOP_ALLTOALL: *other = mk(m, f, m, f); break;
    case CP_XOP_BROADCAST: *root = mk(1, 1, 0, 0); *other = mk(0, 0, 1, 1); return;
    case CP_XOP_REDUCE:
        *root = mk(0, 0, dev ? 1 : m, 1);
        *other = mk(1, 1, 0, 0);
        return;
    case CP_XOP_GATHER: *root = mk(0, 0, m, f); *other = mk(1, f, 0, 0); return;
    case CP_XOP_SCATTER: *root = mk(m, f, 0, 0); *other = mk(0, 0, 1, f); return;
    default: *other = mk(0, 0, 0, 0); break;
    }
    *root = *other;
}

/* Chunks of a stream moving `pieces` pieces of `piece` bytes. */
static double nchunks(double pieces, double piece, double chunk)
{
    return piece > 0 ? pieces * ceil(piece / chunk) : 0;
}

static void set_res(cp_pool_why *w, cp_pool_res k, double us, int where)
{
    if (us > w->res_us[k]) {
        w->res_us[k] = us;
        w->res_where[k] = where;
    }
}

/* The copy engines: each rank's write and read streams, bytes over the
 * engine's rate plus the fixed cost of each chunk (eq. PL2).  The GPU
 * itself reduces what it pulls at device-memory speed, far above any
 * link here (H100: 3.35 TB/s), so that is not a term. */
static void streams(const cp_pool *p, const role *rr, const role *ro, double S, cp_pool_why *w)
{
    int g;
    for (g = 0; g < p->nranks; g++) {
        const role *r = g == 0 ? rr : ro;
        double ce = p->copy_gbs[g] * 1e3, cer = p->copy_read_gbs[g] * 1e3; /* bytes per us */
        double cw = nchunks(r->w_pieces, r->w_frac * S, p->chunk_bytes);
        double cr = nchunks(r->r_pieces, r->r_frac * S, p->chunk_bytes);
        int node = p->topo->gpus[g];
        if (cw > 0)
            set_res(w, CP_PRES_COPY_WRITE, r->w_pieces * r->w_frac * S / ce + cw * p->chunk_us,
                    node);
        if (cr > 0)
            set_res(w, CP_PRES_COPY_READ, r->r_pieces * r->r_frac * S / cer + cr * p->chunk_us,
                    node);
        if (cw > (double)w->chunks || cr > (double)w->chunks)
            w->chunks = (long long)fmax(cw, cr);
    }
}

/* The links: every rank's bytes spread evenly over the devices, written
 * along its routes and read back along their reverse (eq. PL3). */
static void links(cp_pool *p, const role *rr, const role *ro, double S, cp_pool_why *w)
{
    const cp_topo *t = p->topo;
    int g, d, k, narcs = 2 * t->nlinks;
    memset(p->load, 0, (size_t)narcs * sizeof *p->load);
    for (g = 0; g < p->nranks; g++) {
        const role *r = g == 0 ? rr : ro;
        double wb = r->w_pieces * r->w_frac * S / p->ndev, rb = r->r_pieces * r->r_frac * S / p->ndev;
        for (d = 0; d < p->ndev; d++)
            for (k = p->route_off[g * p->ndev + d]; k < p->route_off[g * p->ndev + d + 1]; k++) {
                p->load[p->route_arc[k]] += wb;
                p->load[p->route_arc[k] ^ 1] += rb;
            }
    }
    for (k = 0; k < narcs; k++)
        if (p->load[k] > 0)
            set_res(w, CP_PRES_LINK, p->load[k] / (arc_cap(t, k) * 1e3), k);
}

/* The devices: their share of all writes and reads against their read,
 * write and combined rates; reducing in place, each written byte is also
 * read (a read-modify-write) and summed at reduce_gbs (eq. PL4). */
static void devices(const cp_pool *p, const role *rr, const role *ro, double S, cp_pool_why *w)
{
    double W = rr->w_pieces * rr->w_frac + (p->nranks - 1) * ro->w_pieces * ro->w_frac;
    double R = rr->r_pieces * rr->r_frac + (p->nranks - 1) * ro->r_pieces * ro->r_frac;
    int d;
    W *= S / p->ndev;
    R *= S / p->ndev;
    for (d = 0; d < p->ndev; d++) {
        const cp_node *n = &p->topo->nodes[p->dev[d]];
        double rd = R + (w->device_reduces ? W : 0);
        double us = fmax(rd / (n->read_gbs * 1e3), W / (n->write_gbs * 1e3));
        if (n->mem_gbs > 0)
            us = fmax(us, (rd + W) / (n->mem_gbs * 1e3));
        set_res(w, CP_PRES_DEVICE, us, p->dev[d]);
        if (w->device_reduces)
            set_res(w, CP_PRES_REDUCE, W / (n->reduce_gbs * 1e3), p->dev[d]);
    }
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

double cp_pool_time_us(cp_pool *p, cp_xop op, double bytes, cp_pool_why *why)
{
    cp_pool_why w;
    role rr, ro;
    double piece, ce = INFINITY, worst = 0, S;
    int n, k, dev = p->device_reduces &&
                 (op == CP_XOP_ALLREDUCE || op == CP_XOP_REDUCESCATTER || op == CP_XOP_REDUCE);
    memset(&w, 0, sizeof w);
    for (k = 0; k < CP_PRES_KINDS; k++)
        w.res_where[k] = -1;
    w.launch_us = p->launch_us;
    w.chunk_us = p->chunk_us;
    w.device_reduces = dev;
    if ((unsigned)op >= CP_XOPS || !(bytes >= 0))
        return -1;
    w.intra_us = hierarchy(p, op, bytes, &n, &S);
    if (n > 1 && bytes > 0) {
        roles(op, n, dev, &rr, &ro);
        streams(p, &rr, &ro, S, &w);
        links(p, &rr, &ro, S, &w);
        devices(p, &rr, &ro, S, &w);
        /* eq. PL6: readers start once the first chunk is published and
         * its doorbell seen */
        piece = fmin(p->chunk_bytes,
                     fmax(fmax(rr.w_frac, ro.w_frac), fmax(rr.r_frac, ro.r_frac)) * S);
        for (k = 0; k < p->nranks; k++)
            ce = fmin(ce, fmin(p->copy_gbs[k], p->copy_read_gbs[k]) * 1e3);
        w.fill_us = piece / ce + p->doorbell_us;
        for (k = 0; k < CP_PRES_KINDS; k++)
            if (w.res_us[k] > worst) {
                worst = w.res_us[k];
                w.bind = (cp_pool_res)k;
            }
    }
    if (why)
        *why = w;
    return w.launch_us + w.fill_us + worst + w.intra_us;
}

double cp_pool_copy_us(cp_pool *p, double rd, double wr, cp_pool_why *why)
{
    cp_pool_why w;
    role r = mk(wr > 0, wr, rd > 0, rd);
    double worst = 0;
    int k;
    memset(&w, 0, sizeof w);
    for (k = 0; k < CP_PRES_KINDS; k++)
        w.res_where[k] = -1;
    w.launch_us = p->launch_us;
    w.chunk_us = p->chunk_us;
    if (!(rd >= 0 && wr >= 0))
        return -1;
    streams(p, &r, &r, 1, &w);
    links(p, &r, &r, 1, &w);
    devices(p, &r, &r, 1, &w);
    for (k = 0; k < CP_PRES_KINDS; k++)
        if (w.res_us[k] > worst) {
            worst = w.res_us[k];
            w.bind = (cp_pool_res)k;
        }
    if (why)
        *why = w;
    return w.launch_us + worst;
}
