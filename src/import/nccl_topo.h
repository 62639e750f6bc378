/*
 * nccl_topo.h - converting NCCL's topology XML (NCCL_TOPO_FILE hints and
 * NCCL_TOPO_DUMP_FILE dumps) into coarse-plan topology JSON.
 *
 * What maps to what (docs/import.md): <cpu> -> cpu node (socket links
 * between every pair, NCCL's per-architecture bandwidth); <pci class
 * 0x0604..> -> pcie_switch; a <pci> holding a <gpu> (or of display class
 * 0x03..) -> gpu; <nic>/<net> (or network class 0x02..) -> nic; every <pci>
 * joins its parent by a pcie link of width x speed (NCCL's effective rates:
 * Gen3 x16 12 GB/s, Gen4 24, Gen5 48); <nvlink target count> -> NVLink
 * links to the target GPU or to one nvswitch node per distinct target, count
 * x the per-link rate of the GPU's generation (sm).  What a file does not
 * say is assumed and listed in the output's "note": virtual bridges that
 * report 2.5 GT/s x1 or width 0 take their children's rate, NICs without a
 * speed get --net-gbs, an NVLink from a GPU to itself (a vendor tuning hack)
 * is dropped, and hint files without NVLink say so.  A hint file lists no
 * NVLink because NCCL learns it from the driver; when its GPUs are eight
 * A100-SXM4 or eight H100-SXM5 (by PCI device id), they sit on an HGX
 * baseboard and get its NVSwitch fabric (unless no_fabric).
 */
#ifndef CP_NCCL_TOPO_H
#define CP_NCCL_TOPO_H

#include <jansson.h>

#include "core/err.h"

typedef struct cp_import_opts {
    const char *name;     /* topology name; default: the file's base name */
    double net_gbs;       /* NIC speed when the file gives none, GB/s (default 12.5) */
    double net_lat_us;    /* NIC-to-NIC latency when the file gives none (default 1.5) */
    int no_fabric;        /* 1: a hint file without NVLink stays PCIe-only even when its
                           * GPUs name a baseboard with an NVSwitch fabric (0) */
    double gpu_memory_gb; /* every GPU's device memory, GB (--gpu-memory-gb); 0: by the
                           * part (import/gpu_memory.h) */
} cp_import_opts;

void cp_import_opts_default(cp_import_opts *o);

/* Convert the XML text of `path` into a topology JSON object (new
 * reference).  CP_EINPUT with the position of what cannot be converted. */
int cp_import_nccl_topo(const char *path, const char *text, size_t len,
                        const cp_import_opts *o, json_t **out, cp_err *e);

#endif
