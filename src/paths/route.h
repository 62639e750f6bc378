/*
 * route.h - how one GPU's bytes reach another endpoint, as a weighted set of
 * arcs, the way NCCL would send them.
 *
 * A route is a list of arcs, each with the fraction of the route's bytes
 * that crosses it (1 for a single path; less when the bytes are spread, as
 * over bonded NVLinks or the NVSwitches of an HGX board).  Rules, in NCCL's
 * order of preference (its path classes NVL < PIX/PXB < PHB < SYS < NET):
 *   1. direct NVLink(s) between the two endpoints: spread over them in
 *      proportion to bandwidth;
 *   2. through NVSwitches both endpoints are linked to: spread over the
 *      switches in proportion to the narrower of the two links (NCCL treats
 *      all NVSwitches of a board as one fabric, the hardware sprays traffic
 *      over the links);
 *   3. otherwise the widest single path over PCIe, CPU sockets and the
 *      network (paths.h), which never passes through a GPU or memory device.
 * Capacities are effective: link GB/s times the topology's calibrated
 * bandwidth efficiency for the link kind.
 */
#ifndef CP_ROUTE_H
#define CP_ROUTE_H

#include "paths/paths.h"

/* Most arcs one route may use: 18 NVSwitch branches x 2 arcs, or a
 * 16-hop path through PCIe, sockets and the network, both fit. */
#define CP_ROUTE_MAX_ARCS 40

typedef struct cp_route {
    int narcs;
    int arc[CP_ROUTE_MAX_ARCS];      /* arc ids */
    double frac[CP_ROUTE_MAX_ARCS];  /* share of the route's bytes on each arc */
    double gbs;        /* effective GB/s for this flow alone: min over arcs of cap / frac */
    double lat_us;     /* hardware latency along the route (longest branch) */
    double step_us;    /* calibrated software latency of one step: max over kinds used */
    unsigned kinds;    /* bit (1 << kind) for each link kind used */
} cp_route;

/* Effective capacity of an arc: gbs x calibration bw_eff of its kind. */
double cp_arc_cap(const cp_topo *t, int arc);

/* The route from node src to node dst.  `reach` may be a finished
 * cp_reach_from(t, src) to reuse, or NULL.  Returns CP_OK, CP_EINPUT when dst
 * cannot be reached (e->msg names both), CP_EINTERNAL when out of memory. */
int cp_route_find(const cp_topo *t, int src, int dst, const cp_reach *reach, cp_route *out,
                  cp_err *e);

/* Latency one algorithm step over this route costs: hardware + software. */
static inline double cp_route_hop_us(const cp_route *r)
{
    return r->lat_us + r->step_us;
}

/* Append `scale` x route's arc shares to a per-arc load vector (length
 * 2 x nlinks). */
void cp_route_add_load(const cp_route *r, double scale, double *load);

/* Find the route from -> to and add it `scale` times to `load`; returns its
 * hop latency (cp_route_hop_us), -1 when there is no route, -2 when the
 * search ran out of memory (not "no route"). */
double cp_route_load(const cp_topo *t, int from, int to, double scale, double *load);

#endif
