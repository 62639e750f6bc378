/*
 * busshare.h - how much of a machine's bus bandwidth a ring AllReduce
 * keeps busy: the COARSE paper's side figure (ring AllReduce used ~34% of
 * a DGX-1's bus bandwidth, ../shared/data/cxl/README.md, secondhand),
 * from the collective model's own packed rings (docs/collectives.md,
 * "Bus share").
 */
#ifndef CP_BUSSHARE_H
#define CP_BUSSHARE_H

#include "cost/collective.h"

typedef struct cp_bus_share {
    double ring_gbs;      /* packed ring bandwidth (GB/s of ring traffic) */
    double used_gbs;      /* GB/s the packed rings put on all GPU buses at once */
    double total_gbs;     /* capacity of every direction of every NVLink and of every
                             PCIe link with a GPU at one end (calibrated) */
    double nvlink_used_gbs, nvlink_total_gbs; /* the same over the NVLinks alone */
} cp_bus_share;

/* The share of one host's bus bandwidth the packed AllReduce rings use
 * (used / total); 0 and *s zeroed when the model has no per-arc rings
 * (several hosts, one GPU). */
double cp_coll_bus_share(const cp_coll *c, cp_bus_share *s);

#endif
