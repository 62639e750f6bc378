/*
 * rings.c - the ring family of the collective model (coll_internal.h,
 * docs/collectives.md eqs. C1-C4 and C7): the search for rings among one
 * host's GPUs, their packing onto the links, and the ring algorithm on one
 * host and across hosts.
 *
 * It runs first among the families: the tree cuts the packed rings into
 * chains, and the hierarchical scheme, NVLS and CollNet use their packing
 * (b->intra) for the reduce-scatter and all-gather inside each host.
 *
 * Cost: the search visits at most HOP_BUDGET hops; the packing is one LP
 * over at most RING_BUDGET rings (cp_pack).
 */
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "cost/coll_internal.h"
#include "cost/collective.h"

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

/* ------------------------------------------------------------------------ */
/* Ring search (docs/collectives.md, "Finding rings")                        */

typedef struct dfs {
    coll_build *b;
    int *order, *used, *nbr;  /* nbr: [n * n] ranks sorted by route width */
    int cap;
    int nvl_only;             /* only hops whose route is all NVLink */
    long hops;                /* hops tried in this pass, against HOP_BUDGET */
} dfs;

/* A hop the search may take. */
static int usable(const dfs *d, int from, int to)
{
    const cp_route *r = coll_r0(d->b, from, to);
    return r->gbs > 0 && (!d->nvl_only || r->kinds == 1u << CP_NVLINK);
}

/* Keep the ring in d->order (growing the list by doubling); -1 out of memory. */
static int push_ring(dfs *d)
{
    coll_build *b = d->b;
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

/* Extend the path d->order[0 .. depth-1] by every usable hop, widest
 * first, until RING_BUDGET rings or HOP_BUDGET hops; -1 out of memory. */
static int search(dfs *d, int depth)
{
    coll_build *b = d->b;
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

/* qsort has no context argument: the route table and the row being sorted. */
static const coll_build *sort_ctx;
static int sort_from;
static int cmp_width(const void *x, const void *y)
{
    int a = *(const int *)x, c = *(const int *)y;
    double ga = a == sort_from ? -1 : coll_r0(sort_ctx, sort_from, a)->gbs;
    double gc = c == sort_from ? -1 : coll_r0(sort_ctx, sort_from, c)->gbs;
    if (ga != gc)
        return ga > gc ? -1 : 1;
    return a - c;
}

/* Candidate rings of host 0's GPUs into b->rings (see RING_BUDGET). */
static int find_rings(coll_build *b)
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
    return rc ? coll_oom(b) : CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Rings on one host                                                         */

/* One-host ring: every hop's route once (eq. C1). */
static int ring_pattern(coll_build *b, const int *order, cp_pattern *p)
{
    int k, n = b->n;
    double lat = 0;
    coll_clear_load(b);
    for (k = 0; k < n; k++) {
        const cp_route *r = coll_r0(b, order[k], order[(k + 1) % n]);
        cp_route_add_load(r, 1.0, b->load);
        lat += cp_route_hop_us(r);
    }
    return coll_make_pattern(b, order, n, lat, p);
}

/* Ring on one host: AllReduce C2, ReduceScatter/AllGather C3, Broadcast C4. */
static void one_host_ring(coll_build *b)
{
    cp_coll *c = b->c;
    double n = b->n, L = b->intra_lat, B = b->intra.total;
    double sp = coll_simple_step(b, b->ringpat, b->nrings, &b->intra);
    cp_alg_cost *ar = &c->cost[CP_OP_ALLREDUCE][CP_ALG_RING];
    cp_alg_cost *rs = &c->cost[CP_OP_REDUCESCATTER][CP_ALG_RING];
    cp_alg_cost *ag = &c->cost[CP_OP_ALLGATHER][CP_ALG_RING];
    cp_alg_cost *bc = &c->cost[CP_OP_BROADCAST][CP_ALG_RING];
    ar->available = rs->available = ag->available = bc->available = 1;
    ar->ll = rs->ll = ag->ll = bc->ll = 1;
    ar->nphases = rs->nphases = ag->nphases = bc->nphases = 1;
    coll_set_phase(&ar->phase[0], "ring", 2 * (n - 1) / n * L, sp, 2 * (n - 1) / n, B,
                   2 * (b->n - 1), &b->intra);
    coll_set_phase(&rs->phase[0], "ring", (n - 1) / n * L, sp, (n - 1) / n, B, b->n - 1,
                   &b->intra);
    coll_set_phase(&ag->phase[0], "ring", (n - 1) / n * L, sp, (n - 1) / n, B, b->n - 1,
                   &b->intra);
    coll_set_phase(&bc->phase[0], "ring (pipelined chain)", (n - 1) / n * L, sp, 1, B, b->n - 1,
                   &b->intra);
}

/* Pack the one-host rings and remember the slowest used ring's latency. */
static int pack_intra(coll_build *b)
{
    int i, rc;
    b->ringpat = calloc((size_t)(b->nrings ? b->nrings : 1), sizeof *b->ringpat);
    if (!b->ringpat)
        return coll_oom(b);
    for (i = 0; i < b->nrings; i++)
        if ((rc = ring_pattern(b, b->rings + (size_t)i * b->n, &b->ringpat[i])))
            return rc;
    /* b->ringpat is coll_build_free's on every path; the analyzer loses track of
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
            return coll_oom(b);
        b->c->ring_lat_us = b->intra_lat;
        for (i = 0; i < b->nrings; i++)
            for (k = 0; b->intra.rate[i] > 0 && k < b->ringpat[i].nuse; k++)
                b->c->ring_use[b->ringpat[i].arc[k]] +=
                    b->intra.rate[i] / b->intra.total * b->ringpat[i].use[k];
    }
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Rings across hosts                                                        */

/* One flat-ring channel over the window's hosts: the chain on every host,
 * and from each host's last GPU through NIC a to the next host's first GPU
 * through NIC c.  Returns the traversal latency for the real host count.
 * n is the caller's b->n, passed so the chain's length is read once (the
 * analyzer cannot see that coll_make_pattern leaves b->n alone). */
static double ring_load(coll_build *b, const int *chain, int n, int a, int c)
{
    int h, k;
    double inter = 0;
    coll_clear_load(b);
    for (h = 0; h < b->Hw; h++) {
        int nh = (h + 1) % b->Hw;
        double x;
        for (k = 0; k + 1 < n; k++)
            if ((x = coll_add_route(b, b->g[h * n + chain[k]], b->g[h * n + chain[k + 1]], 1)) <
                0)
                return x;
        x = coll_add_inter(b, h, chain[n - 1], a, nh, chain[0], c, 1);
        if (x < 0)
            return x;
        if (h == 0)
            inter = x;
    }
    return b->H * (coll_chain_lat(b, chain, n) + inter);
}

/* The flat-ring channels of one host chain: through every pair of the
 * last GPU's and the first GPU's nearest NICs (n of them, as ring_load).
 * Appends to p (np of cap). */
static int chain_patterns(coll_build *b, const int *chain, int n, cp_pattern *p, int *np,
                          int cap)
{
    const int *na, *nc;
    int ca, cc, qa, qc, rc = CP_OK;
    coll_nic_choices(b, chain[n - 1], &na, &ca);
    coll_nic_choices(b, chain[0], &nc, &cc);
    for (qa = 0; qa < ca && rc == CP_OK; qa++)
        for (qc = 0; qc < cc && rc == CP_OK && *np < cap; qc++) {
            double lat = ring_load(b, chain, n, na[qa], nc[qc]);
            if (lat == -2)
                return coll_oom(b);
            if (lat < 0)
                continue;
            rc = coll_make_pattern(b, chain, n, lat, &p[*np]);
            if (rc == CP_OK)
                (*np)++;
        }
    return rc;
}

/* Flat ring across hosts: each used one-host ring cut at each hop becomes a
 * chain per host, joined host to host over the network through every pair
 * of nearest NICs (eq. C7); with one GPU a host, that GPU is the chain. */
static int multi_host_ring(coll_build *b)
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
        return coll_oom(b);
    }
    if (n == 1) { /* one GPU a host: the ring is the hosts' */
        chain[0] = 0;
        rc = chain_patterns(b, chain, n, p, &np, cap);
    }
    for (i = 0; n > 1 && i < b->nrings && rc == CP_OK; i++) {
        if (b->intra.rate[i] <= 0)
            continue;
        for (j = 0; j < n && rc == CP_OK; j++) {
            coll_chain_of(b, b->rings + (size_t)i * n, j, chain);
            rc = chain_patterns(b, chain, n, p, &np, cap);
        }
    }
    free(chain);
    if (rc == CP_OK && np == 0) {
        coll_free_patterns(p, np);
        return cp_fail(b->e, CP_EINPUT, "no ring can cross from one host to the next: "
                                       "check the NICs and network links");
    }
    if (rc == CP_OK)
        rc = cp_pack(b->win, p, np, &pk, b->e);
    if (rc == CP_OK) {
        double sp = coll_simple_step(b, p, np, &pk);
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
            coll_set_phase(&a->phase[0], "ring across hosts", steps / N * Ltrav, sp,
                           f, pk.total, (int)steps, &pk);
        }
        cp_packing_free(&pk);
    }
    coll_free_patterns(p, np);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The family's builder                                                      */

/* Rings on host 0 (with two GPUs or more), packed; then the ring algorithm
 * for every operation, on one host or across hosts. */
int coll_ring_build(coll_build *b)
{
    int rc;
    if (b->n >= 2) {
        if ((rc = find_rings(b)))
            return rc;
        b->c->ring_candidates = b->nrings;
        if (b->nrings == 0)
            return cp_fail(b->e, CP_EINPUT, "no ring of GPU-to-GPU routes covers the %d GPU%s "
                                            "of host 0", b->n, cp_s(b->n));
        if ((rc = pack_intra(b)))
            return rc;
    }
    if (b->H == 1) {
        one_host_ring(b);
        return CP_OK;
    }
    return multi_host_ring(b);
}
