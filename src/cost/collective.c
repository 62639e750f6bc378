/*
 * collective.c - the collective cost model (see collective.h and
 * docs/collectives.md, whose equation numbers the comments cite).
 *
 * Build order: routes among one host's GPUs -> candidate rings (all
 * Hamiltonian cycles up to a budget, widest hops first) -> ring packing on
 * one host -> for several hosts, rings broken into chains and joined over
 * the network, trees, and the hierarchical scheme, each packed on a window
 * of two hosts -> NVLS when the NVSwitches can reduce.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/collective.h"
#include "cost/pack.h"
#include "paths/route.h"

/* Rings offered to the packing LP: every Hamiltonian cycle of an 8-GPU host
 * is 5,040, all offered; beyond 8 GPUs the search visits the widest hops first, so the first 5,040 hold
 * the rings NCCL would find, and the LP stays under ~20 ms (performance.md). */
#define RING_BUDGET 5040

/* Hops the ring search may try per pass.  When no ring closes (NVLink
 * misses one GPU, say) the search would otherwise try every Hamiltonian path
 * of the rest: 16 GPUs took minutes.  2^20 hops is ~10 ms and well beyond
 * what the shipped hosts need (an 8-GPU host enumerates all 5,040 rings in
 * ~14,000 hops; a 16-GPU NVSwitch host meets RING_BUDGET in ~80,000). */
#define HOP_BUDGET (1L << 20)

/* GPUs per host the collective model accepts: it keeps an n x n route table
 * (~0.5 KB a route), 34 MB at 256.  The largest NVLink domain shipped as one
 * host today is 72 GPUs. */
#define MAX_GPUS_PER_HOST 256

static const char *const op_names[CP_OPS] = {"allreduce", "reducescatter", "allgather",
                                             "broadcast"};
static const char *const alg_names[CP_ALGS] = {"ring", "tree", "nvls", "hier", "ps", "collnet"};

const char *cp_coll_op_name(cp_coll_op op)
{
    return (unsigned)op < CP_OPS ? op_names[op] : "?";
}

const char *cp_coll_alg_name(cp_coll_alg alg)
{
    return (unsigned)alg < CP_ALGS ? alg_names[alg] : "?";
}

double cp_coll_busbw_factor(cp_coll_op op, int n)
{
    if (n <= 1)
        return 1;
    switch (op) {
    case CP_OP_ALLREDUCE: return 2.0 * (n - 1) / n;
    case CP_OP_REDUCESCATTER:
    case CP_OP_ALLGATHER: return (double)(n - 1) / n;
    default: return 1;
    }
}

/* ------------------------------------------------------------------------ */
/* Build state                                                               */

typedef struct build {
    cp_coll *c;
    const cp_topo *win;   /* window topology: the machine, or two of its hosts */
    cp_topo *win_owned;   /* set when we made the window */
    int H, Hw, n, N;      /* real hosts, window hosts, GPUs per host, ranks */
    int *g;               /* [Hw * n] node id of rank k on window host h */
    int *nic;             /* [Hw * nn] node id of NIC i on window host h */
    int nn;               /* NICs per host */
    int *near_off;        /* [n + 1] rank k's nearest NICs: near[near_off[k] ..] */
    int *near;            /* NIC indices (0 .. nn-1) of equal best route bandwidth */
    cp_route *R;          /* [n * n] routes among host 0's GPUs */
    int *rings;           /* [nrings * n] candidate ring orders (ranks) */
    int nrings;
    cp_pattern *ringpat;  /* [nrings] one-host ring patterns */
    cp_packing intra;     /* packing of one-host rings */
    double intra_lat;     /* traversal latency of the slowest used ring */
    double *load;         /* scratch per-arc vector */
    cp_err *e;
} build;

static int fail_oom(build *b)
{
    return cp_fail(b->e, CP_EINTERNAL, "out of memory");
}

/* NICs of each window host, in file order; every host must have as many. */
static int collect_nics(build *b)
{
    const cp_topo *w = b->win;
    int i, h, *fill = calloc((size_t)b->Hw + 1, sizeof *fill);
    if (!fill)
        return fail_oom(b);
    for (i = 0; i < w->nnodes; i++)
        if (w->nodes[i].kind == CP_NIC && w->nodes[i].host >= 0 && w->nodes[i].host < b->Hw)
            fill[w->nodes[i].host]++;
    b->nn = fill[0];
    for (h = 1; h < b->Hw; h++)
        if (fill[h] != b->nn) {
            int got = fill[h];
            free(fill);
            return cp_fail(b->e, CP_EINPUT, "host %d has %d NICs and host 0 has %d: "
                                            "hosts must be alike", h, got, b->nn);
        }
    b->nic = malloc((size_t)(b->Hw * b->nn + 1) * sizeof *b->nic);
    if (!b->nic) {
        free(fill);
        return fail_oom(b);
    }
    memset(fill, 0, (size_t)b->Hw * sizeof *fill);
    for (i = 0; i < w->nnodes; i++)
        if (w->nodes[i].kind == CP_NIC && w->nodes[i].host >= 0 && w->nodes[i].host < b->Hw)
            b->nic[w->nodes[i].host * b->nn + fill[w->nodes[i].host]++] = i;
    free(fill);
    return CP_OK;
}

/* GPUs of each window host in rank order, checking that every host of the
 * real machine has the same number of GPUs. */
static int collect_gpus(build *b, const cp_topo *t)
{
    int h, i, *count = calloc((size_t)t->nhosts + 1, sizeof *count);
    if (!count)
        return fail_oom(b);
    for (i = 0; i < t->ngpus; i++)
        count[t->nodes[t->gpus[i]].host]++;
    for (h = 1; h < t->nhosts; h++) {
        if (count[h] != count[0]) {
            int c0 = count[0], ch = count[h];
            free(count);
            return cp_fail(b->e, CP_EINPUT,
                           "host %d has %d GPUs and host 0 has %d: collectives are modelled "
                           "for hosts with equal GPU counts", h, ch, c0);
        }
    }
    free(count);
    if (t->nhosts < 1 || t->ngpus < t->nhosts)
        return cp_fail(b->e, CP_EINPUT, "every host needs a GPU for a collective");
    b->n = t->ngpus / t->nhosts;
    if (b->n > MAX_GPUS_PER_HOST)
        return cp_fail(b->e, CP_EINPUT, "host 0 has %d GPUs: the collective model handles "
                                        "at most %d per host", b->n, MAX_GPUS_PER_HOST);
    b->H = t->nhosts;
    b->N = t->ngpus;
    b->Hw = b->win->nhosts;
    b->g = calloc((size_t)b->Hw * b->n + 1, sizeof *b->g);
    if (!b->g)
        return fail_oom(b);
    {
        int *fill = calloc((size_t)b->Hw, sizeof *fill);
        if (!fill)
            return fail_oom(b);
        for (i = 0; i < b->win->ngpus; i++) {
            int v = b->win->gpus[i], hh = b->win->nodes[v].host;
            b->g[hh * b->n + fill[hh]++] = v;
        }
        free(fill);
    }
    return collect_nics(b);
}

/* Routes among host 0's GPUs; unroutable pairs get gbs 0. */
static int build_routes(build *b)
{
    int i, j, n = b->n;
    b->R = calloc((size_t)n * n + 1, sizeof *b->R);
    if (!b->R)
        return fail_oom(b);
    for (i = 0; i < n; i++) {
        cp_reach r;
        int rc = cp_reach_from(b->win, b->g[i], &r, b->e);
        if (rc)
            return rc;
        for (j = 0; j < n; j++) {
            cp_err tmp;
            if (i == j)
                continue;
            if (cp_route_find(b->win, b->g[i], b->g[j], &r, &b->R[i * n + j], &tmp) != CP_OK)
                b->R[i * n + j].gbs = 0;
        }
        cp_reach_free(&r);
    }
    return CP_OK;
}

static const cp_route *R0(const build *b, int from, int to)
{
    return &b->R[from * b->n + to];
}

/* ------------------------------------------------------------------------ */
/* Ring search (docs/collectives.md, "Finding rings")                        */

typedef struct dfs {
    build *b;
    int *order, *used, *nbr;  /* nbr: [n * n] ranks sorted by route width */
    int cap;
    int nvl_only;             /* only hops whose route is all NVLink */
    long hops;                /* hops tried in this pass, against HOP_BUDGET */
} dfs;

/* A hop the search may take. */
static int usable(const dfs *d, int from, int to)
{
    const cp_route *r = R0(d->b, from, to);
    return r->gbs > 0 && (!d->nvl_only || r->kinds == 1u << CP_NVLINK);
}

static int push_ring(dfs *d)
{
    build *b = d->b;
    if (b->nrings == d->cap) {
        int ncap = d->cap ? d->cap * 2 : 64;
        int *p = realloc(b->rings, (size_t)ncap * b->n * sizeof *p);
        if (!p)
            return -1;
        b->rings = p;
        d->cap = ncap;
    }
    memcpy(b->rings + (size_t)b->nrings * b->n, d->order, (size_t)b->n * sizeof *d->order);
    b->nrings++;
    return 0;
}

static int search(dfs *d, int depth)
{
    build *b = d->b;
    int k, cur = d->order[depth - 1];
    if (b->nrings >= RING_BUDGET || d->hops >= HOP_BUDGET)
        return 0;
    if (depth == b->n)
        return usable(d, cur, d->order[0]) ? push_ring(d) : 0;
    for (k = 0; k < b->n; k++) {
        int nx = d->nbr[cur * b->n + k];
        if (nx < 0 || d->used[nx] || !usable(d, cur, nx))
            continue;
        if (++d->hops > HOP_BUDGET)
            return 0;
        d->used[nx] = 1;
        d->order[depth] = nx;
        if (search(d, depth + 1))
            return -1;
        d->used[nx] = 0;
    }
    return 0;
}

static const build *sort_ctx;
static int sort_from;
static int cmp_width(const void *x, const void *y)
{
    int a = *(const int *)x, c = *(const int *)y;
    double ga = a == sort_from ? -1 : R0(sort_ctx, sort_from, a)->gbs;
    double gc = c == sort_from ? -1 : R0(sort_ctx, sort_from, c)->gbs;
    if (ga != gc)
        return ga > gc ? -1 : 1;
    return a - c;
}

static int find_rings(build *b)
{
    dfs d;
    int i, k, n = b->n, rc = 0;
    if (n < 1)
        return CP_OK;
    memset(&d, 0, sizeof d);
    d.b = b;
    d.order = calloc((size_t)n, sizeof *d.order);
    d.used = calloc((size_t)n, sizeof *d.used);
    d.nbr = malloc((size_t)n * (size_t)n * sizeof *d.nbr);
    if (!d.order || !d.used || !d.nbr)
        rc = -1;
    for (i = 0; rc == 0 && i < n; i++) {
        int *row = d.nbr + (size_t)i * (size_t)n;
        for (k = 0; k < n; k++)
            row[k] = k;
        sort_ctx = b;
        sort_from = i;
        qsort(row, (size_t)n, sizeof *row, cmp_width);
    }
    /* NCCL's rule: rings stay on NVLink when NVLink alone can close one;
     * only otherwise do PCIe, socket or network hops enter. */
    for (d.nvl_only = 1; rc == 0 && n >= 2 && d.nvl_only >= 0 && b->nrings == 0; d.nvl_only--) {
        memset(d.used, 0, (size_t)n * sizeof *d.used);
        d.order[0] = 0;
        d.used[0] = 1;
        d.hops = 0;
        rc = search(&d, 1);
    }
    free(d.order);
    free(d.used);
    free(d.nbr);
    return rc ? fail_oom(b) : CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Patterns                                                                  */

static void clear_load(build *b)
{
    memset(b->load, 0, (size_t)2 * b->win->nlinks * sizeof *b->load);
}

/* Add the route between two nodes (any hosts of the window) to the load;
 * returns its hop latency, or a negative value when there is no route. */
static double add_route(build *b, int from, int to, double scale)
{
    return cp_route_load(b->win, from, to, scale, b->load);
}

/* For each rank of host 0, the NICs it reaches with the widest route (all of
 * them when several tie: NCCL spreads channels over such NICs). */
static int find_near_nics(build *b)
{
    int k, i, n = b->n;
    b->near_off = calloc((size_t)n + 1, sizeof *b->near_off);
    b->near = malloc((size_t)(n * b->nn + 1) * sizeof *b->near);
    if (!b->near_off || !b->near)
        return fail_oom(b);
    for (k = 0; k < n; k++) {
        double best = 0, *w = malloc((size_t)(b->nn + 1) * sizeof *w);
        if (!w)
            return fail_oom(b);
        for (i = 0; i < b->nn; i++) {
            cp_route r;
            cp_err tmp;
            w[i] = cp_route_find(b->win, b->g[k], b->nic[i], NULL, &r, &tmp) == CP_OK ? r.gbs : 0;
            if (w[i] > best)
                best = w[i];
        }
        b->near_off[k + 1] = b->near_off[k];
        for (i = 0; i < b->nn; i++)
            if (best > 0 && w[i] >= best * (1 - 1e-9))
                b->near[b->near_off[k + 1]++] = i;
        free(w);
    }
    return CP_OK;
}

/* Rank e of window host hf to rank s of host ht through NIC a of hf and NIC
 * c of ht: three routes, loaded `scale` times.  Returns the hop latency
 * (hardware along all three plus the slowest step), or -1 without a route.
 * Without NICs, the direct route. */
static double add_inter(build *b, int hf, int e, int a, int ht, int s, int c, double scale)
{
    int from[3], to[3], k;
    double lat = 0, step = 0;
    if (b->nn == 0 || a < 0)
        return add_route(b, b->g[hf * b->n + e], b->g[ht * b->n + s], scale);
    from[0] = b->g[hf * b->n + e];
    to[0] = from[1] = b->nic[hf * b->nn + a];
    to[1] = from[2] = b->nic[ht * b->nn + c];
    to[2] = b->g[ht * b->n + s];
    for (k = 0; k < 3; k++) {
        cp_route r;
        cp_err tmp;
        if (cp_route_find(b->win, from[k], to[k], NULL, &r, &tmp) != CP_OK || r.gbs <= 0)
            return -1;
        cp_route_add_load(&r, scale, b->load);
        lat += r.lat_us;
        if (r.step_us > step)
            step = r.step_us;
    }
    return lat + step;
}

static int make_pattern(build *b, const int *order, int len, double lat, cp_pattern *p)
{
    int *nodes = malloc((size_t)(len ? len : 1) * sizeof *nodes), k, rc;
    if (!nodes)
        return fail_oom(b);
    for (k = 0; k < len; k++)
        nodes[k] = b->g[order[k]];
    rc = cp_pattern_from_load(b->win, b->load, nodes, len, lat, p);
    free(nodes);
    return rc ? fail_oom(b) : CP_OK;
}

/* One-host ring: every hop's route once (eq. C1). */
static int ring_pattern(build *b, const int *order, cp_pattern *p)
{
    int k, n = b->n;
    double lat = 0;
    clear_load(b);
    for (k = 0; k < n; k++) {
        const cp_route *r = R0(b, order[k], order[(k + 1) % n]);
        cp_route_add_load(r, 1.0, b->load);
        lat += cp_route_hop_us(r);
    }
    return make_pattern(b, order, n, lat, p);
}

/* The chain that ring `order` becomes when hop j -> j+1 is cut:
 * order[j+1], ..., order[j]. */
static void chain_of(const build *b, const int *order, int j, int *chain)
{
    int k;
    for (k = 0; k < b->n; k++)
        chain[k] = order[(j + 1 + k) % b->n];
}

/* Latency of walking a chain of n ranks one way on host 0 (n is the
 * caller's b->n, passed so the chain's length is read once). */
static double chain_lat(const build *b, const int *chain, int n)
{
    int k;
    double lat = 0;
    for (k = 0; k + 1 < n; k++)
        lat += cp_route_hop_us(R0(b, chain[k], chain[k + 1]));
    return lat;
}

static void free_patterns(cp_pattern *p, int n)
{
    int i;
    for (i = 0; p && i < n; i++)
        cp_pattern_free(&p[i]);
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Phases                                                                    */

/* Simple's per-step cost over the channels a packing used: the largest
 * simple_us among the link kinds their arcs belong to, since every step
 * waits for its slowest hop (eq. C11).  Reducer resources (ids past the
 * arcs) have no kind and add nothing. */
static double simple_step(const build *b, const cp_pattern *p, int npat, const cp_packing *pk)
{
    const cp_topo *t = b->win;
    double x = 0;
    int i, k;
    for (i = 0; i < npat; i++) {
        if (pk && pk->npat == npat && !(pk->rate[i] > 0))
            continue;
        for (k = 0; k < p[i].nuse; k++) {
            double y;
            if (p[i].arc[k] >= 2 * t->nlinks)
                continue;
            y = t->calib.kind[t->links[p[i].arc[k] >> 1].kind].simple_us;
            if (y > x)
                x = y;
        }
    }
    return x;
}

static void set_phase(cp_phase *ph, const char *label, double lat, double simple,
                      double factor, double bw, int steps, const cp_packing *pk)
{
    int k;
    memset(ph, 0, sizeof *ph);
    ph->label = label;
    ph->lat_us = lat;
    ph->simple_us = steps * simple;
    ph->factor = factor;
    ph->bw_gbs = bw;
    ph->steps = steps;
    if (!pk)
        return;
    for (k = 0; k < pk->npat; k++)
        ph->nchannels += pk->rate[k] > 0;
    if (pk->npat == 0)
        ph->nchannels = 1; /* closed form, one pattern */
    for (k = 0; k < pk->nbind && k < CP_COLL_MAX_BIND; k++) {
        ph->bind_arc[k] = pk->bind_arc[k];
        ph->bind_dual[k] = pk->bind_dual[k];
    }
    ph->nbind = k;
}

static void unavailable(cp_coll *c, cp_coll_alg alg, const char *why)
{
    int op;
    for (op = 0; op < CP_OPS; op++) {
        if (c->cost[op][alg].available)
            continue;
        snprintf(c->cost[op][alg].why_not, sizeof c->cost[op][alg].why_not, "%s", why);
    }
}

/* Ring on one host: AllReduce C2, ReduceScatter/AllGather C3, Broadcast C4. */
static void one_host_ring(build *b)
{
    cp_coll *c = b->c;
    double n = b->n, L = b->intra_lat, B = b->intra.total;
    double sp = simple_step(b, b->ringpat, b->nrings, &b->intra);
    cp_alg_cost *ar = &c->cost[CP_OP_ALLREDUCE][CP_ALG_RING];
    cp_alg_cost *rs = &c->cost[CP_OP_REDUCESCATTER][CP_ALG_RING];
    cp_alg_cost *ag = &c->cost[CP_OP_ALLGATHER][CP_ALG_RING];
    cp_alg_cost *bc = &c->cost[CP_OP_BROADCAST][CP_ALG_RING];
    ar->available = rs->available = ag->available = bc->available = 1;
    ar->ll = rs->ll = ag->ll = bc->ll = 1;
    ar->nphases = rs->nphases = ag->nphases = bc->nphases = 1;
    set_phase(&ar->phase[0], "ring", 2 * (n - 1) / n * L, sp, 2 * (n - 1) / n, B,
              2 * (b->n - 1), &b->intra);
    set_phase(&rs->phase[0], "ring", (n - 1) / n * L, sp, (n - 1) / n, B, b->n - 1, &b->intra);
    set_phase(&ag->phase[0], "ring", (n - 1) / n * L, sp, (n - 1) / n, B, b->n - 1, &b->intra);
    set_phase(&bc->phase[0], "ring (pipelined chain)", (n - 1) / n * L, sp, 1, B, b->n - 1,
              &b->intra);
}

/* Pack the one-host rings and remember the slowest used ring's latency. */
static int pack_intra(build *b)
{
    int i, rc;
    b->ringpat = calloc((size_t)(b->nrings ? b->nrings : 1), sizeof *b->ringpat);
    if (!b->ringpat)
        return fail_oom(b);
    for (i = 0; i < b->nrings; i++)
        if ((rc = ring_pattern(b, b->rings + (size_t)i * b->n, &b->ringpat[i])))
            return rc;
    /* b->ringpat is build_free's on every path; the analyzer loses track of
     * it across this call into another file and reports a leak. */
    rc = cp_pack(b->win, b->ringpat, b->nrings, &b->intra, b->e); /* NOLINT(clang-analyzer-unix.Malloc) */
    if (rc)
        return rc;
    b->intra_lat = 0;
    for (i = 0; i < b->nrings; i++)
        if (b->intra.rate[i] > 0 && b->ringpat[i].lat_us > b->intra_lat)
            b->intra_lat = b->ringpat[i].lat_us;
    if (b->H == 1) { /* per-arc use of the packed rings, for the simulator */
        int k;
        b->c->ring_use = calloc((size_t)2 * b->win->nlinks + 1, sizeof *b->c->ring_use);
        if (!b->c->ring_use)
            return fail_oom(b);
        for (i = 0; i < b->nrings; i++)
            for (k = 0; b->intra.rate[i] > 0 && k < b->ringpat[i].nuse; k++)
                b->c->ring_use[b->ringpat[i].arc[k]] +=
                    b->intra.rate[i] / b->intra.total * b->ringpat[i].use[k];
    }
    return CP_OK;
}

/* NIC choices for rank k: its nearest NICs, or a single "no NIC" (-1). */
static int nic_choices(const build *b, int k, const int **list, int *count)
{
    static const int none = -1;
    if (b->nn == 0 || b->near_off[k + 1] == b->near_off[k]) {
        *list = &none;
        *count = 1;
        return b->nn == 0;
    }
    *list = b->near + b->near_off[k];
    *count = b->near_off[k + 1] - b->near_off[k];
    return 1;
}

/* One tree channel: chain arcs both ways once (eq. C5) and, across hosts,
 * the head's network hop both ways `net` times through NIC a. */
static double tree_load(build *b, const int *chain, int a, double net)
{
    int k, n = b->n;
    double up = 0;
    int depth = (int)ceil(log2((double)b->H));
    clear_load(b);
    for (k = 0; k + 1 < n; k++) {
        cp_route_add_load(R0(b, chain[k], chain[k + 1]), 1.0, b->load);
        cp_route_add_load(R0(b, chain[k + 1], chain[k]), 1.0, b->load);
    }
    if (b->H > 1) {
        up = add_inter(b, 0, chain[0], a, 1, chain[0], a, net);
        if (up < 0 || add_inter(b, 1, chain[0], a, 0, chain[0], a, net) < 0)
            return -1;
    }
    return 2 * (chain_lat(b, chain, n) + depth * up); /* eq. C6 */
}

/* Chain patterns for the tree: every used one-host ring cut at every hop,
 * headed by its first GPU, through each of that GPU's nearest NICs. */
static int tree_patterns(build *b, cp_pattern **out, int *count, double *lat_max)
{
    int i, j, q, n = b->n, np = 0, rc, cap = b->nrings * n * (b->nn + 1) + 1;
    int *chain = malloc((size_t)n * sizeof *chain);
    cp_pattern *p = calloc((size_t)cap, sizeof *p);
    /* Network bytes per byte through each host's NIC, each way: the double
     * binary tree's interior hosts pass 1.5 and leaves 0.5 (eq. C6).  With two
     * hosts the bound is 1, but NCCL's pipeline sends every chunk through one
     * channel up and down and its tuner credits trees with the ring's algbw;
     * we follow the tuner (docs/collectives.md, "Trees"). */
    double net = 2.0;
    *lat_max = 0;
    if (!chain || !p) {
        free(chain);
        free(p);
        return fail_oom(b);
    }
    for (i = 0; i < b->nrings; i++) {
        if (b->intra.rate[i] <= 0)
            continue;
        for (j = 0; j < n; j++) {
            const int *nics;
            int nc;
            chain_of(b, b->rings + (size_t)i * n, j, chain);
            nic_choices(b, chain[0], &nics, &nc);
            for (q = 0; q < nc && np < cap; q++) {
                double lat = tree_load(b, chain, nics[q], net);
                if (lat < 0)
                    continue;
                if ((rc = make_pattern(b, chain, n, lat, &p[np]))) {
                    free_patterns(p, np);
                    free(chain);
                    return rc;
                }
                if (lat > *lat_max)
                    *lat_max = lat;
                np++;
            }
        }
    }
    free(chain);
    *out = p;
    *count = np;
    return CP_OK;
}

static int tree_alg(build *b)
{
    cp_pattern *p = NULL;
    cp_packing pk;
    int np = 0, rc;
    double lat, sp;
    cp_alg_cost *ar = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_TREE];
    rc = tree_patterns(b, &p, &np, &lat);
    if (rc)
        return rc;
    if (np == 0) {
        free_patterns(p, np);
        unavailable(b->c, CP_ALG_TREE, "no chain of GPUs reaches the network");
        return CP_OK;
    }
    rc = cp_pack(b->win, p, np, &pk, b->e);
    sp = rc ? 0 : simple_step(b, p, np, &pk);
    free_patterns(p, np);
    if (rc)
        return rc;
    ar->available = 1;
    ar->ll = 1;
    ar->nphases = 1;
    set_phase(&ar->phase[0], b->H > 1 ? "double binary tree" : "chain", lat, sp, 1.0, pk.total,
              2 * (b->n - 1 + (int)ceil(log2((double)b->H))), &pk);
    cp_packing_free(&pk);
    unavailable(b->c, CP_ALG_TREE, "tree is an AllReduce algorithm");
    return CP_OK;
}

/* One flat-ring channel over the window's hosts: the chain on every host,
 * and from each host's last GPU through NIC a to the next host's first GPU
 * through NIC c.  Returns the traversal latency for the real host count. */
static double ring_load(build *b, const int *chain, int a, int c)
{
    int h, k, n = b->n;
    double inter = 0;
    clear_load(b);
    for (h = 0; h < b->Hw; h++) {
        int nh = (h + 1) % b->Hw;
        double x;
        for (k = 0; k + 1 < n; k++)
            if (add_route(b, b->g[h * n + chain[k]], b->g[h * n + chain[k + 1]], 1) < 0)
                return -1;
        x = add_inter(b, h, chain[n - 1], a, nh, chain[0], c, 1);
        if (x < 0)
            return -1;
        if (h == 0)
            inter = x;
    }
    return b->H * (chain_lat(b, chain, n) + inter);
}

/* The flat-ring channels of one host chain: through every pair of the
 * last GPU's and the first GPU's nearest NICs.  Appends to p (np of cap). */
static int chain_patterns(build *b, const int *chain, cp_pattern *p, int *np, int cap)
{
    const int *na, *nc;
    int ca, cc, qa, qc, n = b->n, rc = CP_OK;
    nic_choices(b, chain[n - 1], &na, &ca);
    nic_choices(b, chain[0], &nc, &cc);
    for (qa = 0; qa < ca && rc == CP_OK; qa++)
        for (qc = 0; qc < cc && rc == CP_OK && *np < cap; qc++) {
            double lat = ring_load(b, chain, na[qa], nc[qc]);
            if (lat < 0)
                continue;
            rc = make_pattern(b, chain, n, lat, &p[*np]);
            if (rc == CP_OK)
                (*np)++;
        }
    return rc;
}

/* Flat ring across hosts: each used one-host ring cut at each hop becomes a
 * chain per host, joined host to host over the network through every pair
 * of nearest NICs (eq. C7); with one GPU a host, that GPU is the chain. */
static int multi_host_ring(build *b)
{
    cp_coll *c = b->c;
    int i, j, k, n = b->n, np = 0, rc = CP_OK;
    int cap = (b->nrings > 0 ? b->nrings : 1) * n * (b->nn * b->nn + 1) + 1;
    int *chain = malloc((size_t)n * sizeof *chain);
    cp_pattern *p = calloc((size_t)cap, sizeof *p);
    cp_packing pk;
    double Ltrav = 0, N = b->N;
    if (!chain || !p) {
        free(chain);
        free(p);
        return fail_oom(b);
    }
    if (n == 1) { /* one GPU a host: the ring is the hosts' */
        chain[0] = 0;
        rc = chain_patterns(b, chain, p, &np, cap);
    }
    for (i = 0; n > 1 && i < b->nrings && rc == CP_OK; i++) {
        if (b->intra.rate[i] <= 0)
            continue;
        for (j = 0; j < n && rc == CP_OK; j++) {
            chain_of(b, b->rings + (size_t)i * n, j, chain);
            rc = chain_patterns(b, chain, p, &np, cap);
        }
    }
    free(chain);
    if (rc == CP_OK && np == 0) {
        free_patterns(p, np);
        return cp_fail(b->e, CP_EINPUT, "no ring can cross from one host to the next: "
                                       "check the NICs and network links");
    }
    if (rc == CP_OK)
        rc = cp_pack(b->win, p, np, &pk, b->e);
    if (rc == CP_OK) {
        double sp = simple_step(b, p, np, &pk);
        for (i = 0; i < np; i++)
            if (pk.rate[i] > 0 && p[i].lat_us > Ltrav)
                Ltrav = p[i].lat_us;
        for (k = 0; k < CP_OPS; k++) {
            cp_alg_cost *a = &c->cost[k][CP_ALG_RING];
            double f = k == CP_OP_ALLREDUCE ? 2 * (N - 1) / N : k == CP_OP_BROADCAST ? 1 : (N - 1) / N;
            double steps = k == CP_OP_ALLREDUCE ? 2 * (N - 1) : N - 1;
            a->available = 1;
            a->ll = 1;
            a->nphases = 1;
            set_phase(&a->phase[0], "ring across hosts", steps / N * Ltrav, sp,
                      f, pk.total, (int)steps, &pk);
        }
        cp_packing_free(&pk);
    }
    free_patterns(p, np);
    return rc;
}

/* The inter-host step of the hierarchical scheme: GPU k of every host in a
 * ring with its peers, all n rings at once, each carrying S/n (eq. C8).
 * Each GPU takes the least-used of its nearest NICs, as NCCL assigns one
 * NIC per GPU when there are enough. */
static int inter_pattern(build *b, cp_pattern *p, double *hop_us)
{
    int k, q, n = b->n, *used = calloc((size_t)b->nn + 1, sizeof *used);
    *hop_us = 0;
    if (!used)
        return fail_oom(b);
    clear_load(b);
    for (k = 0; k < n; k++) {
        const int *nics;
        int nc, pick = 0;
        double x, y;
        nic_choices(b, k, &nics, &nc);
        for (q = 1; q < nc; q++)
            if (used[nics[q]] < used[nics[pick]])
                pick = q;
        if (nics[pick] >= 0)
            used[nics[pick]]++;
        x = add_inter(b, 0, k, nics[pick], 1, k, nics[pick], 1);
        y = add_inter(b, 1, k, nics[pick], 0, k, nics[pick], 1);
        if (x < 0 || y < 0) {
            free(used);
            return cp_fail(b->e, CP_EINPUT, "GPU %s has no route to its peer on host 1",
                           b->win->nodes[b->g[k]].id);
        }
        if (x > *hop_us)
            *hop_us = x;
    }
    free(used);
    return make_pattern(b, NULL, 0, *hop_us, p);
}

/* NVLS on one host: per-unit arc loads and the switches' reduce limit.
 * Returns 0 when the host's GPUs are not all attached to reducing switches. */
static int nvls_limits(build *b, double *bw_reduce, double *bw_bcast, double *hop_us,
                       cp_packing *bind)
{
    const cp_topo *t = b->win;
    int k, q, n = b->n;
    double *share_sum = calloc((size_t)t->nnodes, sizeof *share_sum);
    double arcmin = -1;
    int arcbind = -1;
    *bw_reduce = *bw_bcast = -1;
    *hop_us = 0;
    memset(bind, 0, sizeof *bind);
    if (!share_sum)
        return -1;
    for (k = 0; k < n; k++) {
        int v = b->g[k];
        double tot = 0;
        for (q = t->adj_off[v]; q < t->adj_off[v + 1]; q++) {
            int a = t->adj_arc[q], sw = cp_arc_head(t, a);
            if (t->nodes[sw].kind == CP_NVSWITCH && t->nodes[sw].reduce_gbs > 0)
                tot += cp_arc_cap(t, a);
        }
        if (tot <= 0) {
            free(share_sum);
            return 0;
        }
        for (q = t->adj_off[v]; q < t->adj_off[v + 1]; q++) {
            int a = t->adj_arc[q], sw = cp_arc_head(t, a);
            double sh, lim;
            if (t->nodes[sw].kind != CP_NVSWITCH || t->nodes[sw].reduce_gbs <= 0)
                continue;
            sh = cp_arc_cap(t, a) / tot;
            share_sum[sw] += sh;
            lim = cp_arc_cap(t, a) / sh; /* = tot, both directions alike */
            if (arcmin < 0 || lim < arcmin) {
                arcmin = lim;
                arcbind = a;
            }
            if (2 * t->links[a >> 1].lat_us + t->calib.kind[CP_NVLINK].step_us > *hop_us)
                *hop_us = 2 * t->links[a >> 1].lat_us + t->calib.kind[CP_NVLINK].step_us;
        }
    }
    *bw_reduce = *bw_bcast = arcmin;
    for (k = 0; k < t->nnodes; k++) {
        if (share_sum[k] > 0 && t->nodes[k].reduce_gbs / share_sum[k] < *bw_reduce) {
            *bw_reduce = t->nodes[k].reduce_gbs / share_sum[k];
        }
    }
    free(share_sum);
    bind->bind_arc = malloc(sizeof *bind->bind_arc);
    bind->bind_dual = malloc(sizeof *bind->bind_dual);
    if (!bind->bind_arc || !bind->bind_dual) {
        free(bind->bind_arc);
        free(bind->bind_dual);
        bind->bind_arc = NULL;
        bind->bind_dual = NULL;
        return -1;
    }
    bind->nbind = 1;
    bind->bind_arc[0] = arcbind;
    bind->bind_dual[0] = 1;
    return 1;
}

/* The least reduce rate of the window's network switches; 0 when one of
 * them does not reduce (or there is none). */
static double net_reduce_gbs(const build *b)
{
    const cp_topo *t = b->win;
    double r = -1;
    int v;
    for (v = 0; v < t->nnodes; v++)
        if (t->nodes[v].kind == CP_NET_SWITCH && (r < 0 || t->nodes[v].reduce_gbs < r))
            r = t->nodes[v].reduce_gbs;
    return r > 0 ? r : 0;
}

/* CollNet (eq. C12): reduce-scatter inside each host, every GPU's shard up
 * through its NIC to the switches that sum it over the hosts and back down,
 * all-gather inside.  The shard's trip loads the arcs the ring of peers
 * does per unit (ipk: GPU -> NIC -> switch and back), S/n each way instead
 * of 2(H-1)/H x S/n; the switches sum H x S bytes, so their rate R caps the
 * phase at R / (n H) per unit of factor 1/n.  Simple only, as in NCCL. */
static void collnet(build *b, const cp_packing *ipk, double ihop, double isp)
{
    cp_alg_cost *a = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_COLLNET];
    double n = b->n, H = b->H, R = net_reduce_gbs(b), Lr = b->intra_lat;
    double bw, sp = simple_step(b, b->ringpat, b->nrings, &b->intra);
    if (!(R > 0) || !(ipk->total > 0))
        return;
    bw = ipk->total < R / (n * H) ? ipk->total : R / (n * H);
    a->available = 1;
    a->ll = 0;
    a->pipelined = 1;
    a->pipe_factor = 2 * (n - 1) / n; /* reduce-scatter and all-gather rings, both ways */
    a->pipe_bw = b->intra.total;
    a->nphases = 3;
    set_phase(&a->phase[0], "reduce-scatter in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
              b->intra.total, b->n - 1, &b->intra);
    set_phase(&a->phase[1], "in-network reduction (up, sum in the switches, down)", ihop, isp,
              1 / n, bw, 2, ipk);
    if (bw < ipk->total)
        a->phase[1].nbind = 0; /* the switches' summation binds, not a link */
    set_phase(&a->phase[2], "all-gather in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
              b->intra.total, b->n - 1, &b->intra);
}

/* NVLS: one host eq. C9; several hosts: NVLS inside, ring of peers across. */
static int nvls_and_hier(build *b)
{
    cp_coll *c = b->c;
    double red, bc, hop, n = b->n, H = b->H, ihop = 0, isp = 0;
    double nsp = b->win->calib.kind[CP_NVLINK].simple_us; /* NVLS runs Simple only */
    cp_packing nb, ipk;
    cp_pattern ip;
    int have = nvls_limits(b, &red, &bc, &hop, &nb), rc;
    cp_alg_cost *ar = &c->cost[CP_OP_ALLREDUCE][CP_ALG_NVLS];
    if (have < 0)
        return fail_oom(b);
    memset(&ipk, 0, sizeof ipk);
    if (b->H > 1) {
        rc = inter_pattern(b, &ip, &ihop);
        if (rc == CP_OK) {
            rc = cp_pack(b->win, &ip, 1, &ipk, b->e);
            isp = simple_step(b, &ip, 1, NULL);
            cp_pattern_free(&ip);
        }
        if (rc) {
            cp_packing_free(&nb);
            return rc;
        }
    }
    if (have) {
        /* AllReduce per GPU and direction: (1 + 1/n) x S; reduce-scatter and
         * all-gather alone: S.  bw below is per unit of that load. */
        double bw_ar = red < bc ? red : bc;
        cp_alg_cost *rs = &c->cost[CP_OP_REDUCESCATTER][CP_ALG_NVLS];
        cp_alg_cost *ag = &c->cost[CP_OP_ALLGATHER][CP_ALG_NVLS];
        if (b->H == 1) {
            ar->nphases = rs->nphases = ag->nphases = 1;
            set_phase(&ar->phase[0], "nvls (in-switch reduce + multicast)", 2 * hop, nsp,
                      1 + 1 / n, bw_ar, 2, &nb);
            set_phase(&rs->phase[0], "nvls reduce", hop, nsp, 1, red, 1, &nb);
            set_phase(&ag->phase[0], "nvls multicast", hop, nsp, 1, bc, 1, &nb);
            rs->available = ag->available = 1;
        } else {
            ar->nphases = 3;
            ar->pipelined = 1;
            ar->pipe_factor = 1 + 1 / n; /* as eq. C9: reduce out, multicast in */
            ar->pipe_bw = bw_ar;
            set_phase(&ar->phase[0], "nvls reduce-scatter in each host", hop, nsp, 1, red, 1,
                      &nb);
            set_phase(&ar->phase[1], "ring of peers across hosts", 2 * (H - 1) * ihop, isp,
                      2 * (H - 1) / (H * n), ipk.total, 2 * (b->H - 1), &ipk);
            set_phase(&ar->phase[2], "nvls all-gather in each host", hop, nsp, 1, bc, 1, &nb);
        }
        ar->available = 1;
    }
    unavailable(c, CP_ALG_NVLS, have ? "NVLS covers allreduce, reducescatter and allgather on one host"
                                     : "needs NVSwitches with reduce_gbs (in-switch reduction)");
    cp_packing_free(&nb);
    if (b->H > 1) {
        cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
        double Lr = b->intra_lat, Bi = b->intra.total;
        double sp = simple_step(b, b->ringpat, b->nrings, &b->intra);
        h->available = 1;
        h->ll = 1;
        h->nphases = 3;
        set_phase(&h->phase[0], "reduce-scatter in each host", (n - 1) / n * Lr, sp,
                  (n - 1) / n, Bi, b->n - 1, &b->intra);
        set_phase(&h->phase[1], "ring of peers across hosts", 2 * (H - 1) * ihop, isp,
                  2 * (H - 1) / (H * n), ipk.total, 2 * (b->H - 1), &ipk);
        set_phase(&h->phase[2], "all-gather in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
                  Bi, b->n - 1, &b->intra);
        { /* the peers as a double binary tree (eq. C6, one GPU a host) */
            int depth = (int)ceil(log2(H));
            set_phase(&c->peers_tree, "double binary tree of peers across hosts",
                      2 * depth * ihop, isp, 2 / n, ipk.total, 2 * depth, &ipk);
        }
        collnet(b, &ipk, ihop, isp);
        cp_packing_free(&ipk);
    }
    unavailable(c, CP_ALG_HIER, b->H > 1 ? "hier is an AllReduce algorithm"
                                         : "hierarchical AllReduce needs several hosts");
    unavailable(c, CP_ALG_COLLNET,
                b->H > 1 ? "collnet needs network switches that reduce (a net_switch with "
                           "reduce_gbs, or fabric.reduce_gbs with --hosts), and is an "
                           "AllReduce algorithm"
                         : "CollNet reduces in the network: it needs several hosts");
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Parameter server in CPU memory (eq. C10)                                  */

/* CPU sockets of window host h that can reduce (reduce_gbs > 0). */
static int host_servers(const build *b, int h, int *out)
{
    int i, k = 0;
    for (i = 0; i < b->win->nnodes; i++)
        if (b->win->nodes[i].kind == CP_CPU && b->win->nodes[i].host == h &&
            b->win->nodes[i].reduce_gbs > 0)
            out[k++] = i;
    return k;
}

/* BytePS-style summation service: every GPU pushes 1/(K H) of its gradient
 * to each of the K sockets of every host, the sockets sum the N pushes, and
 * every GPU pulls the sums back; push, sum and pull pipeline over chunks, so
 * the slowest of the three sets the pace.  In the two-host window, the other
 * host's sockets stand for all H-1 remote hosts (shares scaled by H-1). */
static int ps_alg(build *b)
{
    cp_alg_cost *ps = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_PS];
    int *srv = malloc((size_t)b->win->nnodes * sizeof *srv), K, h, j, k, q, rc = CP_OK;
    double hop = 0, red = -1, n = b->n, H = b->H;
    cp_pattern p;
    cp_packing pk;
    if (!srv)
        return fail_oom(b);
    K = host_servers(b, 0, srv);
    for (q = 0; q < K; q++)
        if (red < 0 || b->win->nodes[srv[q]].reduce_gbs < red)
            red = b->win->nodes[srv[q]].reduce_gbs;
    if (K == 0) {
        free(srv);
        unavailable(b->c, CP_ALG_PS, "needs CPU sockets with reduce_gbs (a parameter server "
                                     "sums in host memory)");
        return CP_OK;
    }
    clear_load(b);
    for (h = 0; h < b->Hw && rc == CP_OK; h++) {
        for (j = 0; j < b->Hw && rc == CP_OK; j++) {
            int ks = host_servers(b, j, srv);
            double share = (j == h ? 1.0 : (H - 1) / (b->Hw - 1)) / (ks * H);
            for (k = 0; k < b->n && rc == CP_OK; k++)
                for (q = 0; q < ks; q++) {
                    double up = add_route(b, b->g[h * b->n + k], srv[q], share);
                    double down = add_route(b, srv[q], b->g[h * b->n + k], share);
                    if (up < 0 || down < 0) {
                        rc = cp_fail(b->e, CP_EINPUT, "GPU %s cannot reach CPU %s",
                                     b->win->nodes[b->g[h * b->n + k]].id,
                                     b->win->nodes[srv[q]].id);
                        break;
                    }
                    if (up + down > hop)
                        hop = up + down;
                }
        }
    }
    free(srv);
    if (rc == CP_OK)
        rc = make_pattern(b, NULL, 0, hop, &p);
    if (rc)
        return rc;
    rc = cp_pack(b->win, &p, 1, &pk, b->e);
    cp_pattern_free(&p);
    if (rc)
        return rc;
    /* each socket sums n x (1/K) bytes per byte of gradient: K red / n GB/s */
    ps->available = 1;
    ps->nphases = 1;
    set_phase(&ps->phase[0], "push, sum in host memory, pull", hop, 0, 1.0,
              pk.total < K * red / n ? pk.total : K * red / n, 2, &pk);
    if (K * red / n < pk.total)
        ps->phase[0].nbind = 0; /* the sockets' summation binds, not a link */
    cp_packing_free(&pk);
    unavailable(b->c, CP_ALG_PS, "the parameter server is an AllReduce strategy");
    return CP_OK;
}

/* The packed rate of every GPU of host 0 copying one unit to (up) or from
 * its nearest socket of srv[0..K-1] at once; *lat the slowest route's
 * latency.  CP_OK or an error. */
static int host_copy_rate(build *b, const int *srv, int K, int up, double *gbs, double *lat)
{
    cp_pattern p;
    cp_packing pk;
    int k, q, rc;
    clear_load(b);
    *lat = 0;
    for (k = 0; k < b->n; k++) {
        cp_route r, best;
        cp_err tmp;
        int found = 0;
        for (q = 0; q < K; q++) /* the widest route, then the nearest: the GPU's own socket */
            if ((up ? cp_route_find(b->win, b->g[k], srv[q], NULL, &r, &tmp)
                    : cp_route_find(b->win, srv[q], b->g[k], NULL, &r, &tmp)) == CP_OK &&
                (!found || r.gbs > best.gbs * (1 + 1e-9) ||
                 (r.gbs > best.gbs * (1 - 1e-9) && cp_route_hop_us(&r) < cp_route_hop_us(&best)))) {
                best = r;
                found = 1;
            }
        if (!found)
            return cp_fail(b->e, CP_EINPUT, "GPU %s reaches no CPU socket",
                           b->win->nodes[b->g[k]].id);
        cp_route_add_load(&best, 1.0, b->load);
        if (cp_route_hop_us(&best) > *lat)
            *lat = cp_route_hop_us(&best);
    }
    if ((rc = make_pattern(b, NULL, 0, *lat, &p)))
        return rc;
    rc = cp_pack(b->win, &p, 1, &pk, b->e);
    cp_pattern_free(&p);
    if (rc)
        return rc;
    *gbs = pk.total;
    cp_packing_free(&pk);
    return CP_OK;
}

/* Optimizer offload's host side (cp_coll.d2h_gbs ...): unknown (0) when
 * no socket of host 0 says how fast it streams memory. */
static int host_memory(build *b)
{
    int *srv = malloc((size_t)b->win->nnodes * sizeof *srv), K, q, rc = CP_OK;
    double lat_up = 0, lat_down = 0;
    if (!srv)
        return fail_oom(b);
    K = host_servers(b, 0, srv);
    if (K > 0 && ((rc = host_copy_rate(b, srv, K, 1, &b->c->d2h_gbs, &lat_up)) == CP_OK) &&
        (rc = host_copy_rate(b, srv, K, 0, &b->c->h2d_gbs, &lat_down)) == CP_OK) {
        b->c->host_lat_us = lat_up > lat_down ? lat_up : lat_down;
        for (q = 0; q < K; q++)
            b->c->host_mem_gbs += 3 * b->win->nodes[srv[q]].reduce_gbs;
    }
    free(srv);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                    */

static void build_free(build *b)
{
    free_patterns(b->ringpat, b->nrings);
    cp_packing_free(&b->intra);
    free(b->g);
    free(b->nic);
    free(b->near_off);
    free(b->near);
    free(b->R);
    free(b->rings);
    free(b->load);
}

/* One GPU in all: nothing to move. */
static void single_rank(cp_coll *c)
{
    int op, alg;
    for (op = 0; op < CP_OPS; op++)
        for (alg = 0; alg < CP_ALGS; alg++) {
            c->cost[op][alg].available = alg == CP_ALG_RING;
            c->cost[op][alg].nphases = 0;
            snprintf(c->cost[op][alg].why_not, sizeof c->cost[op][alg].why_not,
                     "one GPU: nothing to synchronise");
        }
}

/* Window: the machine itself, or two of its hosts when it is a replica. */
static int make_window(build *b, const cp_topo *t)
{
    b->win = t;
    if (t->rep_base && t->rep_hosts > 2) {
        int rc = cp_topo_replicate(t->rep_base, 2, &b->win_owned, b->e);
        if (rc)
            return rc;
        b->win_owned->calib = t->calib;
        b->win = b->win_owned;
    }
    return CP_OK;
}

int cp_coll_build(const cp_topo *t, int gpus_per_thread, cp_coll *c, cp_err *e)
{
    build b;
    int rc, several;
    memset(c, 0, sizeof *c);
    memset(&b, 0, sizeof b);
    c->topo = t;
    c->nranks = t->ngpus;
    c->nhosts = t->nhosts;
    c->launch_us = t->calib.launch_us * (gpus_per_thread > 0 ? gpus_per_thread : 1);
    b.c = c;
    b.e = e;
    if ((rc = make_window(&b, t)) || (rc = collect_gpus(&b, t)))
        goto done;
    b.load = calloc((size_t)2 * b.win->nlinks + 1, sizeof *b.load);
    if (!b.load) {
        rc = fail_oom(&b);
        goto done;
    }
    if (t->ngpus == 1) { /* nothing to synchronise; optimizer offload still copies */
        c->per_host = 1;
        single_rank(c);
        rc = host_memory(&b);
        goto done;
    }
    c->per_host = b.n;
    several = b.n >= 2; /* read once: no step below changes b.n */
    if (several) {
        if ((rc = build_routes(&b)) || (rc = find_rings(&b)))
            goto done;
    }
    if ((rc = find_near_nics(&b)))
        goto done;
    if (several) {
        c->ring_candidates = b.nrings;
        if (b.nrings == 0) {
            rc = cp_fail(e, CP_EINPUT, "no ring of GPU-to-GPU routes covers the %d GPUs of "
                                       "host 0", b.n);
            goto done;
        }
        if ((rc = pack_intra(&b)))
            goto done;
    }
    if (b.H == 1)
        one_host_ring(&b);
    else if ((rc = multi_host_ring(&b)))
        goto done;
    if (several && (rc = tree_alg(&b)))
        goto done;
    if ((rc = nvls_and_hier(&b)))
        goto done;
    if ((rc = ps_alg(&b)))
        goto done;
    rc = host_memory(&b);
done:
    if (rc == CP_OK)
        rc = cp_mpi_build(b.win, c, &c->mpi, e); /* after host_memory: it uses d2h/h2d */
    build_free(&b);
    if (rc == CP_OK) {
        c->window = b.win_owned;
        b.win_owned = NULL;
    }
    cp_topo_free(b.win_owned);
    if (rc)
        cp_coll_free(c);
    return rc;
}

void cp_coll_free(cp_coll *c)
{
    if (!c)
        return;
    cp_topo_free(c->window);
    c->window = NULL;
    free(c->ring_use);
    c->ring_use = NULL;
}

const char *cp_proto_name(cp_proto p)
{
    return p == CP_PROTO_LL ? "LL" : "Simple";
}

/* Time in us to move `factor` bytes per byte of a `bytes` buffer at bw
 * GB/s under protocol p (LL carries half its bytes as flags); a phase that
 * moves nothing (one GPU a host) costs nothing. */
static double move_us(double factor, double bw, cp_proto p, double bytes)
{
    double eff = p == CP_PROTO_LL ? CP_LL_EFF : 1;
    return factor > 0 ? factor * bytes / (eff * bw * 1e3) : 0; /* GB/s -> bytes/us */
}

/* A phase's latency under protocol p: Simple adds its per-step cost. */
static double fixed_us(const cp_phase *ph, cp_proto p)
{
    return ph->lat_us + (p == CP_PROTO_SIMPLE ? ph->simple_us : 0);
}

/* The faster of a call's Simple and LL times (ll < 0: LL cannot run); ties
 * go to Simple: uncalibrated, LL never wins.  Its protocol to *proto. */
static double faster(double simple, double ll, cp_proto *proto)
{
    int use_ll = ll >= 0 && ll < simple;
    if (proto)
        *proto = use_ll ? CP_PROTO_LL : CP_PROTO_SIMPLE;
    return use_ll ? ll : simple;
}

double cp_coll_proto_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                             double bytes)
{
    const cp_alg_cost *a = &c->cost[op][alg];
    double t = c->launch_us, net = 0;
    int k;
    if (!a->available || (p == CP_PROTO_LL && !a->ll))
        return -1;
    for (k = 0; k < a->nphases; k++) {
        const cp_phase *ph = &a->phase[k];
        double x = move_us(ph->factor, ph->bw_gbs, p, bytes);
        t += fixed_us(ph, p);
        if (!a->pipelined)
            t += x;
        else if (k == 1)
            net = x;
    }
    if (a->pipelined) { /* the hosts' phases together, overlapped by the network's */
        double host = move_us(a->pipe_factor, a->pipe_bw, p, bytes);
        t += host > net ? host : net;
    }
    return t;
}

/* A phase run alone as one call on `bytes` under protocol p (LL only when
 * `ll`); negative when it cannot run p. */
static double phase_alone_us(const cp_coll *c, const cp_phase *ph, int ll, cp_proto p,
                             double bytes)
{
    if (p == CP_PROTO_LL && !ll)
        return -1;
    return c->launch_us + fixed_us(ph, p) + move_us(ph->factor, ph->bw_gbs, p, bytes);
}

/* The faster protocol for a phase alone; negative when it cannot run. */
static double phase_best_us(const cp_coll *c, const cp_phase *ph, int ll, double bytes,
                            cp_proto *proto)
{
    return faster(phase_alone_us(c, ph, ll, CP_PROTO_SIMPLE, bytes),
                  phase_alone_us(c, ph, ll, CP_PROTO_LL, bytes), proto);
}

double cp_coll_phase_us(const cp_coll *c, cp_coll_alg alg, int k, double bytes,
                        cp_proto *proto)
{
    const cp_alg_cost *a = &c->cost[CP_OP_ALLREDUCE][alg];
    if (!a->available || k < 0 || k >= a->nphases)
        return -1;
    return phase_best_us(c, &a->phase[k], a->ll, bytes, proto);
}

double cp_coll_peers_us(const cp_coll *c, double bytes, int tree_ok, cp_proto *proto,
                        int *tree)
{
    const cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
    cp_proto pr = CP_PROTO_SIMPLE, pt;
    double r, t;
    if (tree)
        *tree = 0;
    if (!h->available || h->nphases < 2)
        return -1;
    r = phase_best_us(c, &h->phase[1], h->ll, bytes, &pr);
    if (tree_ok && c->peers_tree.bw_gbs > 0 &&
        (t = phase_best_us(c, &c->peers_tree, 1, bytes, &pt)) < r) {
        r = t;
        pr = pt;
        if (tree)
            *tree = 1;
    }
    if (proto)
        *proto = pr;
    return r;
}

double cp_coll_time_proto_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes,
                             cp_proto *proto)
{
    return faster(cp_coll_proto_time_us(c, op, alg, CP_PROTO_SIMPLE, bytes),
                  cp_coll_proto_time_us(c, op, alg, CP_PROTO_LL, bytes), proto);
}

double cp_coll_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes)
{
    return cp_coll_time_proto_us(c, op, alg, bytes, NULL);
}

cp_coll_alg cp_coll_best(const cp_coll *c, cp_coll_op op, double bytes, double *us)
{
    return cp_coll_best_proto(c, op, bytes, -1, us);
}

cp_coll_alg cp_coll_best_proto(const cp_coll *c, cp_coll_op op, double bytes, int proto,
                               double *us)
{
    int alg;
    cp_coll_alg best = CP_ALG_RING;
    double bt = -1;
    for (alg = 0; alg < CP_ALGS; alg++) {
        double x;
        if (alg == CP_ALG_HIER || alg == CP_ALG_PS || (alg == CP_ALG_TREE && c->nhosts == 1))
            continue; /* not NCCL's (hier, ps); no NCCL tree inside a node */
        x = proto < 0 ? cp_coll_time_us(c, op, (cp_coll_alg)alg, bytes)
                      : cp_coll_proto_time_us(c, op, (cp_coll_alg)alg, (cp_proto)proto, bytes);
        if (x >= 0 && (bt < 0 || x < bt)) {
            bt = x;
            best = (cp_coll_alg)alg;
        }
    }
    if (us)
        *us = bt;
    return best;
}
