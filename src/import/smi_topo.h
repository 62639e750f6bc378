/*
 * smi_topo.h - converting the matrix `nvidia-smi topo -m` prints into
 * coarse-plan topology JSON.
 *
 * The matrix says, for every pair of devices (GPUs, then NICs), how they
 * are joined: NV# (# bonded NVLinks), PIX (one PCIe switch), PXB (several
 * switches, no host bridge), PHB (through a host bridge), NODE (between
 * host bridges of one NUMA node), SYS (across CPU sockets).  It gives no
 * rates, no CPU model, and hides the PCIe place of two GPUs joined by
 * NVLink.  The importer rebuilds a PCIe tree that agrees with every cell
 * (PIX groups under one switch, PXB groups under a common upstream switch,
 * the rest on their socket's CPU), places devices on sockets from the
 * affinity column or the SYS cells, takes the rates from the GPU generation
 * or the flags, and lists every assumption in the output's "note".  The
 * mapping, in full: docs/import.md.
 */
#ifndef CP_SMI_TOPO_H
#define CP_SMI_TOPO_H

#include <jansson.h>
#include <stddef.h>

#include "core/err.h"
#include "import/nccl_topo.h" /* cp_import_opts: --name and the NIC defaults */

typedef struct cp_smi_opts {
    cp_import_opts base; /* name, net_gbs, net_lat_us: as import nccl-topo */
    const char *gpu;     /* GPU generation: "p100", "v100", "a100", "h100"; NULL = not given */
    double nvlink_gbs;   /* GB/s per NVLink per direction; 0 = from gpu (needed when NV cells exist) */
    double pcie_gbs;     /* GB/s per direction of every PCIe link; 0 = from gpu, else Gen3 x16 (12) */
} cp_smi_opts;

/* Defaults: nothing given, NIC figures as cp_import_opts_default. */
void cp_smi_opts_default(cp_smi_opts *o);

/* 1 when `gpu` is a generation the importer knows (p100 v100 a100 h100). */
int cp_smi_gpu_known(const char *gpu);

/* Convert the text of `path` (len bytes, NUL-terminated as cp_read_file
 * gives it) into a topology JSON object: *out is a new reference, NULL on
 * error.  CP_EINPUT with the line and column of the offending header or
 * cell (and that line in e->src_line for the caret); CP_EINTERNAL when out
 * of memory. */
int cp_import_smi_topo(const char *path, const char *text, size_t len,
                       const cp_smi_opts *o, json_t **out, cp_err *e);

#endif
