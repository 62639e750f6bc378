/*
 * fabrics.c - the named network calibrations (fabrics.h).  Adding a fabric
 * is one row here, its source in docs/calibration.md, and its name in
 * tools/topogen.py for the machines that have it.
 */
#include <string.h>

#include "topo/fabrics.h"

static const cp_fabric fabrics[] = {
    /* calibrate on ../shared/data/nccl-tests/aws-p3dn-2node-16xV100_efa.txt (aws-p3dn,
     * 2 hosts, Volta's launch held; NCCL 2.4.8, aws-ofi-nccl, EFA v1): every row from
     * 1 KB within 9.2%, docs/calibration.md */
    {"efa-2019", {0.6748, 0.979, 29.681, 0.4196}, "fit to the p3dn table (NCCL 2.4, 2019)"},
    /* the two-node rows of ../shared/data/nccl-tests/p5-48xlarge_awsome.csv on aws-p5
     * (NCCL 2.20.3, aws-ofi-nccl 1.8.1, EFA v2): bw_eff the least that carries the
     * 16 GB row (its in-host NVLS binds above it), simple_us the minimax fit, step_us
     * and ll_eff kept from 2019 (no small rows): docs/calibration.md */
    {"efa-2024", {0.65, 0.979, 129.4, 0.4196}, "fit to the p5 two-node rows (NCCL 2.20, 2024)"},
    /* NCCL's maintainers: a healthy system reaches ~12 GB/s per 100 Gb/s NIC, ~24 per
     * 200 Gb/s, 46-48 per 400 Gb/s (NOTES.md; nccl-tests issues 119, 290, 319); per
     * step NCCL's own network latencies (hwLatencies NET Ring: LL 2.7 us, Simple 14.0,
     * so 11.3 more, TUNING-FACTS A1): no InfiniBand table to fit */
    {"ib-edr", {12.0 / 12.5, 2.7, 11.3, 0}, "NCCL's per-NIC ceiling, 12 of 12.5 GB/s (100 Gb/s)"},
    {"ib-hdr", {24.0 / 25.0, 2.7, 11.3, 0}, "NCCL's per-NIC ceiling, 24 of 25 GB/s (200 Gb/s)"},
    {"ib-ndr", {47.0 / 50.0, 2.7, 11.3, 0}, "NCCL's per-NIC ceiling, 46-48 of 50 GB/s (400 Gb/s)"},
};

const cp_fabric *cp_fabric_find(const char *name)
{
    size_t k;
    for (k = 0; name && k < sizeof fabrics / sizeof *fabrics; k++)
        if (strcmp(fabrics[k].name, name) == 0)
            return &fabrics[k];
    return NULL;
}

const char *cp_fabric_names(void)
{
    return "efa-2019, efa-2024, ib-edr, ib-hdr, ib-ndr";
}
