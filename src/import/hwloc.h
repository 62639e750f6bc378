/*
 * hwloc.h - a machine as hwloc sees it (an `lstopo --of xml` file, or the
 * running machine) converted into coarse-plan topology JSON through
 * libhwloc: the XML is loaded by hwloc_topology_set_xmlbuffer and the
 * importer walks hwloc's objects, never the XML.
 *
 * What maps to what (docs/import.md, "hwloc"): each Package -> a cpu node
 * (socket links between every pair at NCCL's per-architecture rate); a PCI
 * bridge with two or more kept devices below it -> a pcie_switch (the link
 * they share); a GPU (a PCI device with a CUDA/NVML/RSMI/OpenCL OS device,
 * or an NVIDIA display-class device) -> gpu, its part from GPUModel; a
 * network-class device -> nic; a CXL memory device (class 0x0502 or a
 * CXLMem OS device) -> memdev with its CXLRAMSize + CXLPMEMSize capacity on
 * a cxl link; every link at the rate hwloc gives in GB/s, scaled to NCCL's
 * effective PCIe rate.  NVLinks come from an NVLinkBandwidth distances
 * matrix when the file has one, else from the NVSwitch PCI devices and the
 * GPUs' generation (GPUModel, or --gpu, and --nvlink-gbs).  Everything
 * assumed is listed in the output's "note".  A machine without GPUs is
 * refused with need_gpu (the command), else gives a topology of its CPUs,
 * PCIe tree, NICs and memory devices whose note says no GPUs were found
 * (which the topology loader refuses).
 *
 * Ownership: *out is a new reference, NULL on error.
 */
#ifndef CP_HWLOC_IMPORT_H
#define CP_HWLOC_IMPORT_H

#include <jansson.h>
#include <stddef.h>

#include "core/err.h"
#include "import/nccl_topo.h" /* cp_import_opts: --name and the NIC defaults */

typedef struct cp_hwloc_opts {
    cp_import_opts base; /* name, net_gbs, net_lat_us: as import nccl-topo */
    const char *gpu;     /* GPU generation "p100", "v100", "a100", "h100" for GPUs the
                          * file does not name; NULL = not given */
    double nvlink_gbs;   /* GB/s per NVLink per direction; 0 = by the generation */
    int need_gpu;        /* 1: a machine without GPUs is CP_EINPUT (what `import hwloc`
                          * does: no command accepts such a topology); 0 (the default):
                          * it converts, its note saying so (the tests count its
                          * devices) */
} cp_hwloc_opts;

void cp_hwloc_opts_default(cp_hwloc_opts *o);

/* 1 when `gpu` is a generation the importer knows (p100 v100 a100 h100). */
int cp_hwloc_gpu_known(const char *gpu);

/* Convert the hwloc XML text of `path` (len bytes, NUL-terminated as
 * cp_read_file gives it).  CP_EINPUT with the position of what is not well
 * formed (read by expat first, src/import/xml.c) or not an hwloc topology;
 * CP_EINTERNAL when out of memory. */
int cp_import_hwloc(const char *path, const char *text, size_t len, const cp_hwloc_opts *o,
                    json_t **out, cp_err *e);

/* The running machine, discovered by libhwloc (sysfs and the PCI bus; no
 * CUDA or NVML backend, so GPUs are found by PCI class and vendor). */
int cp_import_hwloc_this_machine(const cp_hwloc_opts *o, json_t **out, cp_err *e);

/* Number of nodes of kind "gpu" in a converted topology (borrowed). */
int cp_hwloc_count_gpus(const json_t *topo);

#endif
