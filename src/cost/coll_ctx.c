/*
 * coll_ctx.c - the collective model's build context (coll_internal.h): the
 * window, each window host's GPUs and NICs, the routes among host 0's GPUs
 * and each GPU's nearest NICs, and the helpers every algorithm family uses
 * to load routes into a pattern and to write its phases.
 *
 * Cost: one route search per GPU of host 0 (n searches for n^2 routes),
 * done once per build; the families then read routes from the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "cost/coll_internal.h"
#include "cost/collective.h"

/* GPUs per host the collective model accepts: it keeps an n x n route table
 * (~0.5 KB a route), 34 MB at 256.  The largest NVLink domain shipped as one
 * host today is 72 GPUs. */
#define MAX_GPUS_PER_HOST 256

/* ------------------------------------------------------------------------ */
/* The context                                                               */

/* NICs of each window host, in file order; every host must have as many. */
static int collect_nics(coll_build *b)
{
    const cp_topo *w = b->win;
    int i, h, *fill = calloc((size_t)b->Hw + 1, sizeof *fill);
    if (!fill)
        return coll_oom(b);
    for (i = 0; i < w->nnodes; i++)
        if (w->nodes[i].kind == CP_NIC && w->nodes[i].host >= 0 && w->nodes[i].host < b->Hw)
            fill[w->nodes[i].host]++;
    b->nn = fill[0];
    for (h = 1; h < b->Hw; h++)
        if (fill[h] != b->nn) {
            int got = fill[h];
            free(fill);
            return cp_fail(b->e, CP_EINPUT, "host %d has %d NIC%s and host 0 has %d: "
                                            "hosts must be alike", h, got, cp_s(got), b->nn);
        }
    b->nic = malloc((size_t)(b->Hw * b->nn + 1) * sizeof *b->nic);
    if (!b->nic) {
        free(fill);
        return coll_oom(b);
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
int coll_collect_gpus(coll_build *b, const cp_topo *t)
{
    int h, i, *count = calloc((size_t)t->nhosts + 1, sizeof *count);
    if (!count)
        return coll_oom(b);
    for (i = 0; i < t->ngpus; i++)
        count[t->nodes[t->gpus[i]].host]++;
    for (h = 1; h < t->nhosts; h++) {
        if (count[h] != count[0]) {
            int c0 = count[0], ch = count[h];
            free(count);
            return cp_fail(b->e, CP_EINPUT,
                           "host %d has %d GPU%s and host 0 has %d: collectives are modelled "
                           "for hosts with equal GPU counts", h, ch, cp_s(ch), c0);
        }
    }
    free(count);
    if (t->nhosts < 1 || t->ngpus < t->nhosts)
        return cp_fail(b->e, CP_EINPUT, "every host needs a GPU for a collective");
    b->n = t->ngpus / t->nhosts;
    if (b->n > MAX_GPUS_PER_HOST)
        return cp_fail(b->e, CP_EINPUT, "host 0 has %d GPUs: the collective model handles "
                                        "at most %d per host", b->n, MAX_GPUS_PER_HOST);
    b->H = b->H_given > 0 ? b->H_given : t->nhosts;
    b->N = b->H * b->n;
    b->Hw = b->win->nhosts;
    b->g = calloc((size_t)b->Hw * b->n + 1, sizeof *b->g);
    if (!b->g)
        return coll_oom(b);
    {
        int *fill = calloc((size_t)b->Hw, sizeof *fill);
        if (!fill)
            return coll_oom(b);
        for (i = 0; i < b->win->ngpus; i++) {
            int v = b->win->gpus[i], hh = b->win->nodes[v].host;
            b->g[hh * b->n + fill[hh]++] = v;
        }
        free(fill);
    }
    return collect_nics(b);
}

/* Routes among host 0's GPUs; unroutable pairs get gbs 0. */
int coll_build_routes(coll_build *b)
{
    int i, j, n = b->n;
    b->R = calloc((size_t)n * n + 1, sizeof *b->R);
    if (!b->R)
        return coll_oom(b);
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

/* For each rank of host 0, the NICs it reaches with the widest route (all of
 * them when several tie: NCCL spreads channels over such NICs). */
int coll_find_near_nics(coll_build *b)
{
    int k, i, n = b->n;
    b->near_off = calloc((size_t)n + 1, sizeof *b->near_off);
    b->near = malloc((size_t)(n * b->nn + 1) * sizeof *b->near);
    if (!b->near_off || !b->near)
        return coll_oom(b);
    for (k = 0; k < n; k++) {
        double best = 0, *w = malloc((size_t)(b->nn + 1) * sizeof *w);
        if (!w)
            return coll_oom(b);
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
double coll_add_inter(coll_build *b, int hf, int e, int a, int ht, int s, int c,
                      double scale)
{
    int from[3], to[3], k;
    double lat = 0, step = 0;
    if (b->nn == 0 || a < 0)
        return coll_add_route(b, b->g[hf * b->n + e], b->g[ht * b->n + s], scale);
    from[0] = b->g[hf * b->n + e];
    to[0] = from[1] = b->nic[hf * b->nn + a];
    to[1] = from[2] = b->nic[ht * b->nn + c];
    to[2] = b->g[ht * b->n + s];
    for (k = 0; k < 3; k++) {
        cp_route r;
        cp_err tmp;
        int rc = cp_route_find(b->win, from[k], to[k], NULL, &r, &tmp);
        if (rc == CP_EINTERNAL) /* out of memory is not a missing route */
            return -2;
        if (rc != CP_OK || r.gbs <= 0)
            return -1;
        cp_route_add_load(&r, scale, b->load);
        lat += r.lat_us;
        if (r.step_us > step)
            step = r.step_us;
    }
    return lat + step;
}

int coll_make_pattern(coll_build *b, const int *order, int len, double lat,
                      cp_pattern *p)
{
    int *nodes = malloc((size_t)(len ? len : 1) * sizeof *nodes), k, rc;
    if (!nodes)
        return coll_oom(b);
    for (k = 0; k < len; k++)
        nodes[k] = b->g[order[k]];
    rc = cp_pattern_from_load(b->win, b->load, nodes, len, lat, p);
    free(nodes);
    return rc ? coll_oom(b) : CP_OK;
}

/* The chain that ring `order` becomes when hop j -> j+1 is cut:
 * order[j+1], ..., order[j]. */
void coll_chain_of(const coll_build *b, const int *order, int j, int *chain)
{
    int k;
    for (k = 0; k < b->n; k++)
        chain[k] = order[(j + 1 + k) % b->n];
}

/* Latency of walking a chain of n ranks one way on host 0 (n is the
 * caller's b->n, passed so the chain's length is read once). */
double coll_chain_lat(const coll_build *b, const int *chain, int n)
{
    int k;
    double lat = 0;
    for (k = 0; k + 1 < n; k++)
        lat += cp_route_hop_us(coll_r0(b, chain[k], chain[k + 1]));
    return lat;
}

/* Release n patterns and the array that holds them (NULL: nothing). */
void coll_free_patterns(cp_pattern *p, int n)
{
    int i;
    for (i = 0; p && i < n; i++)
        cp_pattern_free(&p[i]);
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Phases: what every family writes into its cp_alg_cost                     */

/* Simple's per-step cost over the channels a packing used: the largest
 * simple_us among the link kinds their arcs belong to, since every step
 * waits for its slowest hop (eq. C11).  Reducer resources (ids past the
 * arcs) have no kind and add nothing. */
double coll_simple_step(const coll_build *b, const cp_pattern *p, int npat,
                        const cp_packing *pk)
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

void coll_set_phase(cp_phase *ph, const char *label, double lat, double simple,
                    double factor, double bw, int steps, const cp_packing *pk)
{
    int k;
    memset(ph, 0, sizeof *ph);
    ph->label = label;
    ph->lat_us = lat;
    ph->simple_us = steps * simple;
    ph->factor = factor;
    ph->bw_gbs = bw;
    ph->ll_bw_gbs = bw * CP_LL_EFF; /* nccl_size.c refines it where NCCL runs the phase */
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

void coll_unavailable(cp_coll *c, int alg, const char *why)
{
    int op;
    for (op = 0; op < CP_OPS; op++) {
        if (c->cost[op][alg].available)
            continue;
        snprintf(c->cost[op][alg].why_not, sizeof c->cost[op][alg].why_not, "%s", why);
    }
}

/* NIC choices for rank k: its nearest NICs, or a single "no NIC" (-1). */
int coll_nic_choices(const coll_build *b, int k, const int **list, int *count)
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

/* Release what the context owns (not the window: the caller keeps or frees
 * win_owned). */
void coll_build_free(coll_build *b)
{
    coll_free_patterns(b->ringpat, b->nrings);
    cp_packing_free(&b->intra);
    cp_packing_free(&b->peers);
    free(b->g);
    free(b->nic);
    free(b->near_off);
    free(b->near);
    free(b->R);
    free(b->rings);
    free(b->load);
}

/* Window: the machine itself, or two of its hosts when it is a replica. */
int coll_make_window(coll_build *b, const cp_topo *t)
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
