/*
 * paths.h - for every pair of endpoints, the best route through the bus
 * graph with its bottleneck bandwidth and latency.
 *
 * One search per source: a Dijkstra variant that maximises the bottleneck
 * (the slowest arc on the way) and, among equally wide routes, minimises the
 * summed latency.  Data may pass through switches, CPUs and NICs but not
 * through GPUs or memory devices: those are endpoints (a GPU cannot forward
 * a peer's PCIe transaction).  A route's bandwidth is what one flow alone
 * would get; sharing between concurrent flows is the planner's business.
 */
#ifndef CP_PATHS_H
#define CP_PATHS_H

#include "topo/topo.h"

/* Result of one single-source search over the nodes of a topology. */
typedef struct cp_reach {
    int src;          /* source node */
    double *bott;     /* [node] bottleneck GB/s of the widest route, 0 if unreachable */
    double *lat_us;   /* [node] summed latency of that route */
    int *pred;        /* [node] arc entering the node on that route, -1 at src */
    int *hops;        /* [node] arcs on the route */
} cp_reach;

/* Run the search from node `src`.  The arrays are allocated here and freed
 * by cp_reach_free.  Returns CP_OK or CP_EINTERNAL (out of memory). */
int cp_reach_from(const cp_topo *t, int src, cp_reach *r, cp_err *e);

void cp_reach_free(cp_reach *r);

/* The arc with the smallest bandwidth on the route from r->src to `dst`
 * (the first one, walking from the source), or -1 when dst is the source or
 * unreachable. */
int cp_reach_bottleneck_arc(const cp_topo *t, const cp_reach *r, int dst);

#endif
