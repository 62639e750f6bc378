/*
 * route.c - NCCL-like routes between two endpoints (see route.h).
 */
#include <stdlib.h>
#include <string.h>

#include "paths/route.h"

double cp_arc_cap(const cp_topo *t, int arc)
{
    const cp_link *l = &t->links[arc >> 1];
    return l->gbs[arc & 1] * t->calib.kind[l->kind].bw_eff;
}

void cp_route_add_load(const cp_route *r, double scale, double *load)
{
    int k;
    for (k = 0; k < r->narcs; k++)
        load[r->arc[k]] += scale * r->frac[k];
}

double cp_route_load(const cp_topo *t, int from, int to, double scale, double *load)
{
    cp_route r;
    cp_err tmp;
    int rc = cp_route_find(t, from, to, NULL, &r, &tmp);
    if (rc == CP_EINTERNAL) /* out of memory: not "no route" (issue 24, item 5) */
        return -2;
    if (rc != CP_OK || r.gbs <= 0)
        return -1;
    cp_route_add_load(&r, scale, load);
    return cp_route_hop_us(&r);
}

/* Append an arc with a share; 0 or -1 when the route is full. */
static int push(cp_route *r, int arc, double frac)
{
    if (r->narcs >= CP_ROUTE_MAX_ARCS)
        return -1;
    r->arc[r->narcs] = arc;
    r->frac[r->narcs] = frac;
    r->narcs++;
    return 0;
}

/* Capacity, kinds and software step latency from the arcs and shares. */
static void finish(const cp_topo *t, cp_route *r)
{
    int k;
    r->gbs = 0;
    r->kinds = 0;
    r->step_us = 0;
    for (k = 0; k < r->narcs; k++) {
        const cp_link *l = &t->links[r->arc[k] >> 1];
        double g = cp_arc_cap(t, r->arc[k]) / r->frac[k];
        double s = t->calib.kind[l->kind].step_us;
        if (k == 0 || g < r->gbs)
            r->gbs = g;
        r->kinds |= 1u << l->kind;
        if (s > r->step_us)
            r->step_us = s;
    }
}

/* Rule 1: direct NVLinks src -> dst. */
static int direct_nvlinks(const cp_topo *t, int src, int dst, cp_route *r)
{
    int k;
    double total = 0;
    for (k = t->adj_off[src]; k < t->adj_off[src + 1]; k++) {
        int arc = t->adj_arc[k];
        if (cp_arc_head(t, arc) == dst && t->links[arc >> 1].kind == CP_NVLINK)
            total += cp_arc_cap(t, arc);
    }
    if (total <= 0)
        return 0;
    for (k = t->adj_off[src]; k < t->adj_off[src + 1]; k++) {
        int arc = t->adj_arc[k];
        if (cp_arc_head(t, arc) == dst && t->links[arc >> 1].kind == CP_NVLINK) {
            if (push(r, arc, cp_arc_cap(t, arc) / total))
                return -1;
            if (t->links[arc >> 1].lat_us > r->lat_us)
                r->lat_us = t->links[arc >> 1].lat_us;
        }
    }
    return 1;
}

/* The NVLink arc from switch `sw` to dst, or -1 (the widest if several). */
static int nvlink_arc_to(const cp_topo *t, int sw, int dst)
{
    int k, best = -1;
    for (k = t->adj_off[sw]; k < t->adj_off[sw + 1]; k++) {
        int arc = t->adj_arc[k];
        if (cp_arc_head(t, arc) == dst && t->links[arc >> 1].kind == CP_NVLINK &&
            (best < 0 || cp_arc_cap(t, arc) > cp_arc_cap(t, best)))
            best = arc;
    }
    return best;
}

/* Rule 2: through the NVSwitches that both ends are linked to. */
static int via_nvswitches(const cp_topo *t, int src, int dst, cp_route *r)
{
    int k, pass;
    double total = 0;
    for (pass = 0; pass < 2; pass++) {
        for (k = t->adj_off[src]; k < t->adj_off[src + 1]; k++) {
            int up = t->adj_arc[k], sw = cp_arc_head(t, up), down;
            double w;
            if (t->nodes[sw].kind != CP_NVSWITCH || t->links[up >> 1].kind != CP_NVLINK)
                continue;
            down = nvlink_arc_to(t, sw, dst);
            if (down < 0)
                continue;
            w = cp_arc_cap(t, up) < cp_arc_cap(t, down) ? cp_arc_cap(t, up) : cp_arc_cap(t, down);
            if (pass == 0) {
                total += w;
                continue;
            }
            if (push(r, up, w / total) || push(r, down, w / total))
                return -1;
            if (t->links[up >> 1].lat_us + t->links[down >> 1].lat_us > r->lat_us)
                r->lat_us = t->links[up >> 1].lat_us + t->links[down >> 1].lat_us;
        }
        if (total <= 0)
            return 0;
    }
    return 1;
}

/* Rule 3: the widest single path. */
static int widest(const cp_topo *t, int src, int dst, const cp_reach *reach, cp_route *r,
                  cp_err *e)
{
    cp_reach own;
    const cp_reach *rr = reach;
    int v, n = 0, rc;
    if (!rr) {
        rc = cp_reach_from(t, src, &own, e);
        if (rc)
            return rc;
        rr = &own;
    }
    if (rr->bott[dst] <= 0) {
        if (rr == &own)
            cp_reach_free(&own);
        return cp_fail(e, CP_EINPUT, "no route from %s to %s over links that forward traffic",
                       t->nodes[src].id, t->nodes[dst].id);
    }
    for (v = dst; v != src; v = cp_arc_tail(t, rr->pred[v]))
        n++;
    if (n > CP_ROUTE_MAX_ARCS) {
        if (rr == &own)
            cp_reach_free(&own);
        return cp_fail(e, CP_EINPUT, "route from %s to %s has %d hops; at most %d supported",
                       t->nodes[src].id, t->nodes[dst].id, n, CP_ROUTE_MAX_ARCS);
    }
    r->narcs = n;
    for (v = dst; v != src; v = cp_arc_tail(t, rr->pred[v])) {
        r->arc[--n] = rr->pred[v];
        r->frac[n] = 1.0;
    }
    r->lat_us = rr->lat_us[dst];
    if (rr == &own)
        cp_reach_free(&own);
    return CP_OK;
}

int cp_route_find(const cp_topo *t, int src, int dst, const cp_reach *reach, cp_route *out,
                  cp_err *e)
{
    int rc;
    memset(out, 0, sizeof *out);
    if (src == dst)
        return cp_fail(e, CP_EINTERNAL, "route from %s to itself", t->nodes[src].id);
    rc = direct_nvlinks(t, src, dst, out);
    if (rc == 0)
        rc = via_nvswitches(t, src, dst, out);
    if (rc < 0)
        return cp_fail(e, CP_EINPUT, "route from %s to %s spreads over more than %d links",
                       t->nodes[src].id, t->nodes[dst].id, CP_ROUTE_MAX_ARCS / 2);
    if (rc == 0) {
        out->narcs = 0;
        out->lat_us = 0;
        rc = widest(t, src, dst, reach, out, e);
        if (rc)
            return rc;
    }
    finish(t, out);
    return CP_OK;
}
