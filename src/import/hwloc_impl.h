/*
 * hwloc_impl.h - what the two halves of the hwloc importer share
 * (hwloc.c: devices, PCIe, sockets, the driver; hwloc_nvlink.c: NVLinks
 * and NVSwitches).  Private to src/import/hwloc*.c.  It names the options
 * by their tag rather than include import/hwloc.h: hwloc.c includes both
 * (no include circle); a file that reads the options includes hwloc.h.
 */
#ifndef CP_HWLOC_IMPL_H
#define CP_HWLOC_IMPL_H

#include <hwloc.h>
#include <jansson.h>

#include "core/err.h"

/* Hop latencies, the conventions of the shipped topologies and the other
 * importers (docs/topologies.md): NVLink 0.7, PCIe 0.5, socket 0.3 us. */
#define CP_HW_LAT_NVLINK 0.7
#define CP_HW_LAT_PCIE 0.5
#define CP_HW_LAT_SOCKET 0.3

#define CP_HW_MAX 1024    /* most GPUs, and most NVSwitches, one import maps */
#define CP_HW_MAX_CPU 256 /* most sockets (hwloc Packages) */

typedef enum { HW_OTHER, HW_GPU, HW_NIC, HW_MEMDEV, HW_NVSWITCH } cp_hw_kind;

/* A GPU generation: the --gpu word and the substring of a model name that
 * names it; NVLink GB/s per link per direction, NVLinks per GPU; SXM and
 * PCIe FP32, FP16/BF16 and FP8 TFLOP/s (FP8 0: none), device-memory GB/s
 * and streaming multiprocessors. */
typedef struct cp_hw_gen {
    const char *name, *label;
    double nvlink_gbs;
    int links;
    double sxm_tflops, pcie_tflops, sxm_fp16, pcie_fp16, sxm_mem_gbs, pcie_mem_gbs;
    double sxm_fp8, pcie_fp8;
    int sxm_sms, pcie_sms;
} cp_hw_gen;

extern const cp_hw_gen cp_hw_gens[]; /* ends with a NULL name */

typedef struct cp_hw_gpu {
    hwloc_obj_t obj;        /* its PCI device */
    const cp_hw_gen *gen;   /* NULL when neither the file nor --gpu names it */
    int sxm;                /* an SXM (NVLink) part */
    int cpu;                /* the socket it hangs under */
} cp_hw_gpu;

typedef struct cp_hw {
    hwloc_topology_t topo;
    const struct cp_hwloc_opts *o; /* hwloc.h (by its tag: hwloc.c includes this) */
    const char *path;        /* for messages ("this machine" when read live) */
    int root_line, root_col; /* the <topology> element, for messages about the file */
    cp_err *e;
    json_t *nodes, *links;   /* what is written (owned until convert hands them over) */
    char notes[2048];        /* every assumption, "; "-separated */
    int ncpu, nsw, ngpu, nnic, nmem, nnvsw, cur_cpu;
    hwloc_obj_t cpu[CP_HW_MAX_CPU]; /* the Package of cpu<k> (NULL: the machine) */
    cp_hw_gpu gpu[CP_HW_MAX];       /* gpu<k> */
    hwloc_obj_t nvsw[CP_HW_MAX];    /* NVSwitch PCI devices, in walk order */
    int nvsw_cpu[CP_HW_MAX];        /* the socket each hangs under */
    int nvsw_node[CP_HW_MAX];       /* 1 once its node nvsw<k> is written */
    int nvsw_rep[CP_HW_MAX];        /* the switch whose node stands for it (itself, or
                                     * its partner on the first board) */
    int nvsw_boards;                /* boards merged into each node (1: none) */
} cp_hw;

void cp_hw_note(cp_hw *m, const char *text);
int cp_hw_add_node(cp_hw *m, const char *id, const char *kind, const char *model,
                   json_t *extra);
int cp_hw_add_link(cp_hw *m, const char *a, const char *b, const char *kind, double gbs,
                   double lat_us);
cp_hw_kind cp_hw_classify(hwloc_obj_t pci);

/* Record an NVSwitch PCI device (its node is written when a link uses it). */
int cp_hw_add_nvswitch(cp_hw *m, hwloc_obj_t pci);

/* The NVLinks, once every GPU and NVSwitch is known. */
int cp_hw_nvlinks(cp_hw *m);

#endif
