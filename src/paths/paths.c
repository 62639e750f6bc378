/*
 * paths.c - widest-route search from one source (see paths.h).
 *
 * Cost: O(A log V) per source with a binary heap, A arcs and V nodes; for
 * all GPU pairs of a 1024-GPU cluster (40k nodes) that is well under a second.
 */
#include <stdlib.h>
#include <string.h>

#include "paths/paths.h"

/* Max-heap of nodes keyed by (bottleneck desc, latency asc), lazy deletion. */
typedef struct heap_item {
    double bott, lat;
    int node;
} heap_item;

typedef struct heap {
    heap_item *a;
    int n, cap;
} heap;

static int better(const heap_item *x, const heap_item *y)
{
    if (x->bott != y->bott)
        return x->bott > y->bott;
    return x->lat < y->lat;
}

static int heap_push(heap *h, heap_item it)
{
    int i;
    if (h->n == h->cap) {
        int ncap = h->cap ? h->cap * 2 : 64;
        heap_item *p = realloc(h->a, (size_t)ncap * sizeof *p);
        if (!p)
            return -1;
        h->a = p;
        h->cap = ncap;
    }
    i = h->n++;
    while (i > 0 && better(&it, &h->a[(i - 1) / 2])) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = it;
    return 0;
}

static heap_item heap_pop(heap *h)
{
    heap_item top = h->a[0], last = h->a[--h->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && better(&h->a[c + 1], &h->a[c]))
            c++;
        if (!better(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = last;
    return top;
}

void cp_reach_free(cp_reach *r)
{
    free(r->bott);
    free(r->lat_us);
    free(r->pred);
    free(r->hops);
    memset(r, 0, sizeof *r);
}

/* Relax every arc leaving v; 0 or -1 out of memory. */
static int relax(const cp_topo *t, cp_reach *r, heap *h, int v)
{
    int k;
    for (k = t->adj_off[v]; k < t->adj_off[v + 1]; k++) {
        int arc = t->adj_arc[k], w = cp_arc_head(t, arc);
        double b = cp_arc_gbs(t, arc), lat = r->lat_us[v] + t->links[arc >> 1].lat_us;
        heap_item it;
        if (r->bott[v] < b)
            b = r->bott[v];
        if (b < r->bott[w] || (b == r->bott[w] && lat >= r->lat_us[w]))
            continue;
        r->bott[w] = b;
        r->lat_us[w] = lat;
        r->pred[w] = arc;
        r->hops[w] = r->hops[v] + 1;
        it.bott = b;
        it.lat = lat;
        it.node = w;
        if (heap_push(h, it))
            return -1;
    }
    return 0;
}

int cp_reach_from(const cp_topo *t, int src, cp_reach *r, cp_err *e)
{
    heap h = {0};
    int i, n = t->nnodes, rc = CP_OK;
    heap_item it;

    memset(r, 0, sizeof *r);
    r->src = src;
    r->bott = calloc((size_t)n, sizeof *r->bott);
    r->lat_us = calloc((size_t)n, sizeof *r->lat_us);
    r->pred = malloc((size_t)n * sizeof *r->pred);
    r->hops = calloc((size_t)n, sizeof *r->hops);
    if (!r->bott || !r->lat_us || !r->pred || !r->hops) {
        cp_reach_free(r);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < n; i++)
        r->pred[i] = -1;
    r->bott[src] = 1e300; /* the source itself is not a bottleneck */
    it.bott = r->bott[src];
    it.lat = 0;
    it.node = src;
    if (heap_push(&h, it))
        rc = CP_EINTERNAL;
    while (rc == CP_OK && h.n > 0) {
        it = heap_pop(&h);
        if (it.bott < r->bott[it.node] ||
            (it.bott == r->bott[it.node] && it.lat > r->lat_us[it.node]))
            continue; /* stale entry */
        if (it.node != src && !cp_is_transit(t->nodes[it.node].kind))
            continue; /* endpoints receive but do not forward */
        if (relax(t, r, &h, it.node))
            rc = CP_EINTERNAL;
    }
    free(h.a);
    r->bott[src] = 0;
    if (rc) {
        cp_reach_free(r);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    return CP_OK;
}

int cp_reach_bottleneck_arc(const cp_topo *t, const cp_reach *r, int dst)
{
    int v = dst, best = -1;
    if (dst == r->src || r->bott[dst] <= 0)
        return -1;
    while (v != r->src) {
        int arc = r->pred[v];
        if (best < 0 || cp_arc_gbs(t, arc) <= cp_arc_gbs(t, best))
            best = arc;
        v = cp_arc_tail(t, arc);
    }
    return best;
}
