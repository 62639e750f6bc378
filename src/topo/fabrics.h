/*
 * fabrics.h - named network calibrations: the `calibration.net_fabric` a
 * topology names instead of carrying its own `net` numbers
 * (docs/formats.md, docs/calibration.md "Fabrics").
 *
 * Each is the network's cp_calib_kind for one fabric and software stack,
 * with where its numbers came from: a fit to a measured nccl-tests table
 * (EFA 2019, EFA 2024) or NCCL's maintainers' per-NIC ceilings (InfiniBand,
 * ../shared/data/nccl-tests/NOTES.md).  Static data; nothing is owned.
 */
#ifndef CP_FABRICS_H
#define CP_FABRICS_H

#include "topo/topo.h"

typedef struct cp_fabric {
    const char *name;    /* "efa-2019", ... */
    cp_calib_kind net;   /* bw_eff, step_us, simple_us of the network */
    const char *source;  /* where the numbers came from */
} cp_fabric;

/* The fabric called `name`; NULL when there is none. */
const cp_fabric *cp_fabric_find(const char *name);

/* The known names, comma-separated ("efa-2019, efa-2024, ..."), for messages. */
const char *cp_fabric_names(void);

#endif
