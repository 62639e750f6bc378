/*
 * busshare.c - a ring AllReduce's share of the GPU buses (see busshare.h).
 *
 * The collective model knows, for one host, how many GB/s its packed rings
 * put on every link direction per GB/s of ring bandwidth (cp_coll.ring_use,
 * the simulator's footprint); times the packed bandwidth that is what the
 * rings keep busy while they run.  The total is every direction of every
 * bus a GPU sits on: its NVLinks and its own PCIe link.
 */
#include <string.h>

#include "cost/busshare.h"
#include "paths/route.h"

double cp_coll_bus_share(const cp_coll *c, cp_bus_share *s)
{
    const cp_topo *t = cp_coll_arcs(c);
    const cp_alg_cost *ring = &c->cost[CP_OP_ALLREDUCE][CP_ALG_RING];
    int arc;
    memset(s, 0, sizeof *s);
    if (!c->ring_use || !ring->available || ring->nphases < 1)
        return 0;
    s->ring_gbs = ring->phase[0].bw_gbs;
    for (arc = 0; arc < 2 * t->nlinks; arc++) {
        const cp_link *l = &t->links[arc >> 1];
        int gpu_end = t->nodes[l->a].kind == CP_GPU || t->nodes[l->b].kind == CP_GPU;
        double cap = cp_arc_cap(t, arc), used = c->ring_use[arc] * s->ring_gbs;
        if (l->kind == CP_NVLINK) {
            s->nvlink_total_gbs += cap;
            s->nvlink_used_gbs += used;
        }
        if (l->kind == CP_NVLINK || (l->kind == CP_PCIE && gpu_end)) {
            s->total_gbs += cap;
            s->used_gbs += used;
        }
    }
    return s->total_gbs > 0 ? s->used_gbs / s->total_gbs : 0;
}
