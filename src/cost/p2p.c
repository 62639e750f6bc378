/*
 * p2p.c - Gather, Scatter and AlltoAll over the network as concurrent
 * point-to-point sends, and Reduce as NCCL's ring (see p2p.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/p2p.h"
#include "paths/paths.h"

void cp_p2p_free(cp_p2p *p)
{
    free(p->route_off);
    free(p->route_arc);
    free(p->lat_us);
    free(p->load);
    memset(p, 0, sizeof *p);
}

/* Append the route of search `r` to node `dst` (source first); its
 * latency: hardware plus the slowest kind's step_us and simple_us. */
static double add_route(const cp_topo *t, const cp_reach *r, int dst, int *arcs, int *n)
{
    int v = dst, start = *n, i, j;
    double step = 0;
    while (v != r->src) {
        int a = r->pred[v];
        const cp_calib_kind *k = &t->calib.kind[t->links[a >> 1].kind];
        step = fmax(step, k->step_us + k->simple_us);
        arcs[(*n)++] = a;
        v = cp_arc_tail(t, a);
    }
    for (i = start, j = *n - 1; i < j; i++, j--) {
        int x = arcs[i];
        arcs[i] = arcs[j];
        arcs[j] = x;
    }
    return r->lat_us[dst] + step;
}

int cp_p2p_build(const cp_topo *t, cp_p2p *p, cp_err *e)
{
    int n = t->ngpus, i, j, used = 0, cap;
    memset(p, 0, sizeof *p);
    p->topo = t;
    p->nranks = n;
    p->launch_us = t->calib.launch_us;
    p->route_off = malloc(((size_t)n * n + 1) * sizeof *p->route_off);
    p->lat_us = calloc((size_t)n * n, sizeof *p->lat_us);
    p->load = calloc(2 * (size_t)t->nlinks + 1, sizeof *p->load);
    cap = 64;
    p->route_arc = malloc((size_t)cap * sizeof *p->route_arc);
    if (!p->route_off || !p->lat_us || !p->load || !p->route_arc)
        goto oom;
    for (i = 0; i < n; i++) {
        cp_reach r;
        int rc = cp_reach_from(t, t->gpus[i], &r, e);
        if (rc) {
            cp_p2p_free(p);
            return rc;
        }
        for (j = 0; j < n; j++) {
            int need = used + r.hops[t->gpus[j]];
            p->route_off[i * n + j] = used;
            if (need > cap) {
                int *g;
                cap = need * 2 + 64;
                if (!(g = realloc(p->route_arc, (size_t)cap * sizeof *g))) {
                    cp_reach_free(&r);
                    goto oom;
                }
                p->route_arc = g;
            }
            if (i != j)
                p->lat_us[i * n + j] = add_route(t, &r, t->gpus[j], p->route_arc, &used);
        }
        cp_reach_free(&r);
    }
    p->route_off[(size_t)n * n] = used;
    return CP_OK;
oom:
    cp_p2p_free(p);
    return cp_fail(e, CP_EINTERNAL, "out of memory");
}

/* 1 when rank i sends to rank j in `op` (root 0). */
static int sends(cp_xop op, int i, int j)
{
    if (i == j)
        return 0;
    if (op == CP_XOP_GATHER)
        return j == 0;
    if (op == CP_XOP_SCATTER)
        return i == 0;
    return op == CP_XOP_ALLTOALL;
}

double cp_p2p_time_us(cp_p2p *p, cp_xop op, double bytes, int *bind_arc)
{
    const cp_topo *t = p->topo;
    int n = p->nranks, i, j, k, narcs = 2 * t->nlinks, bind = -1;
    double piece = bytes / n, lat = 0, worst = 0;
    if (bind_arc)
        *bind_arc = -1;
    if (op != CP_XOP_GATHER && op != CP_XOP_SCATTER && op != CP_XOP_ALLTOALL)
        return -1;
    memset(p->load, 0, (size_t)narcs * sizeof *p->load);
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            if (!sends(op, i, j))
                continue;
            lat = fmax(lat, p->lat_us[i * n + j]);
            for (k = p->route_off[i * n + j]; k < p->route_off[i * n + j + 1]; k++)
                p->load[p->route_arc[k]] += piece;
        }
    for (k = 0; k < narcs; k++) {
        const cp_link *l = &t->links[k >> 1];
        double us;
        if (p->load[k] <= 0)
            continue;
        us = p->load[k] / (l->gbs[k & 1] * t->calib.kind[l->kind].bw_eff * 1e3);
        if (us > worst) {
            worst = us;
            bind = k;
        }
    }
    if (bind_arc)
        *bind_arc = bind;
    return n > 1 ? p->launch_us + lat + worst : p->launch_us;
}

double cp_net_time_us(const cp_coll *c, cp_p2p *p, cp_xop op, double bytes, const char **alg)
{
    if (op < CP_XOP_REDUCE) {
        double us;
        cp_coll_alg a = cp_coll_best(c, (cp_coll_op)op, bytes, &us);
        *alg = cp_coll_alg_name(a);
        return us;
    }
    if (op == CP_XOP_REDUCE) {
        *alg = "ring";
        return cp_coll_time_us(c, CP_OP_BROADCAST, CP_ALG_RING, bytes);
    }
    *alg = "p2p";
    return cp_p2p_time_us(p, op, bytes, NULL);
}
