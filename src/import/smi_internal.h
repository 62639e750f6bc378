/*
 * smi_internal.h - what the stages of import smi-topo share (private to
 * src/import/smi_*.c): the limits and conventions, the matrix as read (one
 * token, cell and device record each), and the converter's state.
 *
 *     smi_read.c   1-2: the header row, the rows and their cells, checked;
 *                  the error and note helpers every stage uses
 *     smi_tree.c   3-4: devices on sockets, the PCIe tree checked against
 *                  every cell
 *     smi_write.c  5-6: the nodes and links of the topology JSON
 *     smi_topo.c   the --gpu table, the options and cp_import_smi_topo,
 *                  which runs the stages in order
 *
 * Ownership: the smi state owns its arrays and JSON arrays
 * (cp_import_smi_topo releases them); it borrows the text and options.
 */
#ifndef CP_SMI_INTERNAL_H
#define CP_SMI_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "core/err.h"

/* The options by their tag: smi_topo.c includes this header, so it does
 * not include smi_topo.h (tools/include-cycles.sh); the stages that read
 * the options include both. */
struct cp_smi_opts;

/* Hop latencies: the conventions of the shipped topologies and of
 * import nccl-topo (docs/topologies.md): NVLink 0.7, PCIe 0.5, socket 0.3 us. */
#define LAT_NVLINK 0.7
#define LAT_PCIE 0.5
#define LAT_SOCKET 0.3

/* PCIe Gen3 x16 as NCCL computes it (width x GT/s / 80 = 12 GB/s): the
 * rate when neither --gpu nor --pcie-gbs says otherwise. */
#define PCIE_GEN3_GBS 12.0

/* The matrix names no CPU.  import nccl-topo gives a CPU it cannot place
 * NCCL's Skylake figure, 10 GB/s (SKL_QPI_BW, src/graph/topo.h); so do we. */
#define SOCKET_GBS 10.0

/* Most devices (GPUs and NICs) in one matrix: the collective model takes
 * 256 GPUs per host, plus as many NICs.  The cells take n^2 memory. */
#define MAX_DEV 512

/* Longest device name (mlx5_0, NIC12, GPU511): node models are at most 128
 * bytes in the loader, and nvidia-smi's names are short. */
#define MAX_NAME 64

/* Most NVLinks one cell may bond: NV18 on H100; 64 as import nccl-topo
 * accepts for an <nvlink count>. */
#define MAX_NV 64

/* NVLinks per GPU assumed without --gpu: the most any generation of the
 * --gpu table (smi_topo.c) has. */
#define MAX_LINKS_ANY 18

/* A GPU generation as --gpu names it (the table and its sources:
 * smi_topo.c). */
struct smi_gen {
    const char *name, *label;
    double nvlink_gbs;
    int links;
    double pcie_gbs;
    const char *pcie_what;
    const char *sxm, *pcie;
    double sxm_tflops, pcie_tflops, sxm_mem_gbs, pcie_mem_gbs, sxm_fp16, pcie_fp16;
    double sxm_fp8, pcie_fp8; /* dense FP8 TFLOP/s, 0: no FP8 tensor cores */
    int sxm_sms, pcie_sms;    /* streaming multiprocessors */
};

/* Cell kinds, from closest to farthest as nvidia-smi's legend orders them. */
enum rel { R_NONE, R_X, R_NV, R_PIX, R_PXB, R_PHB, R_NODE, R_SYS };

/* The trailing columns of the header. */
enum { AFF_CPU, AFF_NUMA, AFF_OTHER, MAX_TRAIL = 8 };

typedef struct tok {
    const char *s; /* into the text; not NUL-terminated */
    int len;
    int line, col; /* 1-based; the column counts bytes */
} tok;

typedef struct cell {
    unsigned char rel; /* enum rel */
    unsigned char nv;  /* NVLinks of an R_NV cell */
    int line, col;
} cell;

typedef struct dev {
    char name[MAX_NAME + 1];  /* as the header has it: GPU3, mlx5_0, NIC1 */
    char model[MAX_NAME + 1]; /* a NIC's name in the NIC Legend, else its header name */
    int gpu;                  /* 1: GPU, 0: NIC */
    int line, col;            /* header position */
    tok aff[2];               /* CPU Affinity and NUMA Affinity values (len 0: none) */
} dev;

typedef struct smi {
    const char *path, *text;
    size_t len;
    const struct cp_smi_opts *o;
    const struct smi_gen *gen; /* NULL without --gpu */
    double capacity_gb;    /* every GPU's device memory, GB; 0 = unknown */
    const char *capacity_source; /* where it came from, for the note */
    double nv_gbs;         /* per NVLink; 0 = unknown */
    double pcie_gbs;
    cp_err *e;
    size_t pos;            /* reading: offset of the next line */
    int lineno;            /* reading: number of the line last read */
    tok *tok;              /* tokens of the line last read */
    int ntrail, trail[MAX_TRAIL];
    int ndev, ngpu;        /* GPUs are dev[0 .. ngpu), NICs follow */
    dev *dev;
    cell *cell;            /* ndev x ndev, row-major */
    int *sock;             /* socket of each device */
    int *pix, *pxb;        /* union-find: PIX groups, PIX-or-PXB groups */
    int nsock, any_nv;
    char notes[2048];
    json_t *nodes, *links;
} smi;

#define TOK_CAP (MAX_DEV + 16)

/* ---------------------------------------------------------------- smi_read.c */

/* An input error at a position of the file, with that line kept for the
 * caret display; always CP_EINPUT. */
__attribute__((format(printf, 4, 5)))
int smi_fail_at(smi *m, int line, int col, const char *fmt, ...);
int smi_oom(smi *m); /* CP_EINTERNAL, "out of memory" */
/* Append one assumption to the note, once; the note stays bounded. */
void smi_note(smi *m, const char *text);
int smi_tok_is(const tok *t, const char *w); /* 1 when the token is the word w */
/* Stage 1: the header row, the device rows and the trailer, into m. */
int smi_read_matrix(smi *m);
cell *smi_at(const smi *m, int i, int j); /* the cell of row i, column j */
/* The cell as nvidia-smi prints it, into buf. */
const char *smi_cell_text(const cell *c, char *buf, size_t cap);
/* Stage 2: X on the diagonal only, symmetry, NVLink between GPUs with a
 * known rate; the first offending cell in reading order is reported. */
int smi_check_cells(smi *m);

/* ---------------------------------------------------------------- smi_tree.c */

int smi_find(int *p, int x);          /* union-find root, the group's first device */
void smi_unite(int *p, int a, int b);
/* Stage 3: m->sock and m->nsock, from the affinity column or the cells. */
int smi_sockets(smi *m);
/* Stage 4: m->pix and m->pxb, the PIX and PIX-or-PXB groups ... */
void smi_pcie_groups(smi *m);
/* ... and every cell but NV checked against the tree they make. */
int smi_check_tree(smi *m);

/* ---------------------------------------------------------------- smi_write.c */

/* Stages 5 and 6: m->nodes and m->links (cpus, PCIe switches, nvswitches,
 * GPUs, NICs; NVLinks, PCIe, sockets) and the notes on what was assumed. */
int smi_write(smi *m);

#endif
