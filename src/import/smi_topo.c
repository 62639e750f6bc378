/*
 * smi_topo.c - `nvidia-smi topo -m` matrices to coarse-plan JSON (see
 * smi_topo.h; the mapping and every assumption: docs/import.md).
 *
 * Stages, one section each:
 *   1. reading: find the header row (GPU0 followed by the other devices,
 *      anywhere in the file), then one row per device; cells are separated
 *      by tabs or spaces; every cell keeps its line and column;
 *   2. checking the cells: X on the diagonal only, symmetry, NVLink only
 *      between GPUs, an NVLink rate when NV cells exist;
 *   3. sockets: the NUMA/CPU affinity column when it agrees with the cells,
 *      else the cells (PIX/PXB/PHB/NODE: same socket, SYS: different ones,
 *      NV: unknown, placed first-fit);
 *   4. the PCIe tree: PIX groups under one switch, PXB groups under a
 *      common upstream switch, everything else on its socket's CPU; then
 *      every cell is checked against the tree, so a matrix no tree explains
 *      is refused at the first cell that disagrees;
 *   5. NVLinks: one link per NV cell, or one nvswitch node when a GPU shows
 *      more NVLinks than its generation has (NVSwitch systems print NV#
 *      between every pair);
 *   6. writing the nodes and links.
 * Cost: O(n^2) time and memory in the n devices (at most MAX_DEV).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/units.h"
#include "import/smi_topo.h"

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

/* What --gpu means: NVLink per link per direction (nominal, the README's
 * bus table: P100 20, V100 25, A100 and H100 25), NVLinks per GPU (P100 4,
 * V100 6, A100 12, H100 18: NVIDIA's specifications), the x16 host link as
 * NCCL computes it (Gen3 12, Gen4 24, Gen5 48), and the SXM and PCIe parts
 * with their peak dense FP32 TFLOP/s and device-memory GB/s (datasheets; the
 * figures of nccl_topo.c's table; A100 as the 40 GB part). */
static const struct gen {
    const char *name, *label;
    double nvlink_gbs;
    int links;
    double pcie_gbs;
    const char *pcie_what;
    const char *sxm, *pcie;
    double sxm_tflops, pcie_tflops, sxm_mem_gbs, pcie_mem_gbs, sxm_fp16, pcie_fp16;
} gens[] = {
    {"p100", "P100", 20, 4, 12, "Gen3 x16", "P100-SXM2", "P100-PCIE", 10.6, 9.3, 732, 732, 21.2,
     18.7},
    {"v100", "V100", 25, 6, 12, "Gen3 x16", "V100-SXM2", "V100-PCIE", 15.7, 14.0, 900, 900, 125,
     112},
    {"a100", "A100", 25, 12, 24, "Gen4 x16", "A100-SXM4", "A100-PCIE", 19.5, 19.5, 1555, 1555,
     312, 312},
    {"h100", "H100", 25, 18, 48, "Gen5 x16", "H100-SXM5", "H100-PCIE", 67.0, 51.0, 3350, 2000,
     989, 756},
};

/* NVLinks per GPU assumed without --gpu: the most any generation above has. */
#define MAX_LINKS_ANY 18

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
    const cp_smi_opts *o;
    const struct gen *gen; /* NULL without --gpu */
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

/* ------------------------------------------------------------------------ */
/* Errors and notes                                                          */

/* An input error at a position of the file, with that line kept for the
 * caret display; always CP_EINPUT. */
__attribute__((format(printf, 4, 5)))
static int fail_at(smi *m, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_vfail_at(m->e, CP_EINPUT, m->path, line, col, NULL, fmt, ap);
    va_end(ap);
    if (line > 0 && m->e)
        cp_err_set_source(m->e, m->text, m->len, line);
    return CP_EINPUT;
}

static int oom(smi *m)
{
    return cp_fail(m->e, CP_EINTERNAL, "out of memory");
}

/* Append one assumption to the note, once; the note stays bounded. */
static void note(smi *m, const char *text)
{
    size_t used = strlen(m->notes);
    if (strstr(m->notes, text) || used + strlen(text) + 3 >= sizeof m->notes)
        return;
    snprintf(m->notes + used, sizeof m->notes - used, "%s%s", used ? "; " : "", text);
}

/* ------------------------------------------------------------------------ */
/* 1. Reading                                                                */

static int is_sep(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Past an ANSI escape sequence (ESC [ parameters final-byte): nvidia-smi
 * underlines the header when it writes to a terminal, and copies keep it. */
static size_t skip_escape(const char *t, size_t i, size_t end)
{
    i++;
    if (i < end && t[i] == '[') {
        i++;
        while (i < end && (unsigned char)t[i] >= 0x20 && (unsigned char)t[i] <= 0x3f)
            i++;
        if (i < end)
            i++;
    }
    return i;
}

/* Read the next line into m->tok (at most TOK_CAP tokens kept); returns the
 * number of tokens on it, or -1 at the end of the text. */
static int next_line(smi *m)
{
    size_t start = m->pos, end, i;
    int n = 0;
    if (start >= m->len)
        return -1;
    for (end = start; end < m->len && m->text[end] != '\n'; end++)
        ;
    m->pos = end + 1;
    m->lineno++;
    i = start;
    if (start == 0 && end >= 3 && memcmp(m->text, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* a UTF-8 byte-order mark */
    while (i < end) {
        size_t b;
        if (is_sep((unsigned char)m->text[i])) {
            i++;
            continue;
        }
        if (m->text[i] == '\x1b') {
            i = skip_escape(m->text, i, end);
            continue;
        }
        b = i;
        while (i < end && !is_sep((unsigned char)m->text[i]) && m->text[i] != '\x1b')
            i++;
        if (n < TOK_CAP) {
            m->tok[n].s = m->text + b;
            m->tok[n].len = (int)(i - b); /* inputs are under 256 MiB (fileio.h) */
            m->tok[n].line = m->lineno;
            m->tok[n].col = (int)(b - start + 1);
        }
        n++;
    }
    return n;
}

static int tok_is(const tok *t, const char *w)
{
    return (size_t)t->len == strlen(w) && memcmp(t->s, w, (size_t)t->len) == 0;
}

/* "GPU" and digits only. */
static int is_gpu_name(const tok *t)
{
    int k;
    if (t->len < 4 || memcmp(t->s, "GPU", 3) != 0)
        return 0;
    for (k = 3; k < t->len; k++)
        if (t->s[k] < '0' || t->s[k] > '9')
            return 0;
    return 1;
}

/* A cell word: its enum rel (and NVLink count in *nv); 0 when the token is
 * no cell word; -1 when it is NV with a count outside 1..MAX_NV.  SOC is
 * what drivers before 2017 printed for SYS. */
static int parse_cell(const tok *t, int *nv)
{
    static const struct { const char *w; int rel; } words[] = {
        {"X", R_X}, {"PIX", R_PIX}, {"PXB", R_PXB}, {"PHB", R_PHB},
        {"NODE", R_NODE}, {"SYS", R_SYS}, {"SOC", R_SYS},
    };
    size_t k;
    int n = 0, i;
    *nv = 0;
    for (k = 0; k < sizeof words / sizeof words[0]; k++)
        if (tok_is(t, words[k].w))
            return words[k].rel;
    if (t->len < 2 || memcmp(t->s, "NV", 2) != 0)
        return 0;
    for (i = 2; i < t->len; i++) {
        if (t->s[i] < '0' || t->s[i] > '9')
            return i == 2 ? 0 : -1; /* NVx: no cell; NV1x: a bad count */
        if (n <= MAX_NV)
            n = n * 10 + (t->s[i] - '0');
    }
    if (t->len == 2 || n < 1 || n > MAX_NV)
        return -1;
    *nv = n;
    return R_NV;
}

/* The header line: GPU0 first, and not a row (a row's second token is a
 * cell word). */
static int is_header(const smi *m, int n)
{
    int nv;
    return n >= 1 && tok_is(&m->tok[0], "GPU0") && (n == 1 || parse_cell(&m->tok[1], &nv) == 0);
}

/* A trailing column title starting at token k: its kind and how many
 * tokens it spans (0 when none). */
static int trailing_title(const smi *m, int n, int k, int *kind)
{
    const tok *t = m->tok;
    if (k + 1 < n && tok_is(&t[k], "CPU") && tok_is(&t[k + 1], "Affinity")) {
        *kind = AFF_CPU;
        return 2;
    }
    if (k + 1 < n && tok_is(&t[k], "NUMA") && tok_is(&t[k + 1], "Affinity")) {
        *kind = AFF_NUMA;
        return 2;
    }
    if (k + 2 < n && tok_is(&t[k], "GPU") && tok_is(&t[k + 1], "NUMA") && tok_is(&t[k + 2], "ID")) {
        *kind = AFF_OTHER;
        return 3;
    }
    return 0;
}

/* One device column of the header. */
static int header_device(smi *m, const tok *t)
{
    dev *d = &m->dev[m->ndev];
    int k;
    if (m->ndev >= MAX_DEV)
        return fail_at(m, t->line, t->col, "more than %d devices in the header", MAX_DEV);
    if (t->len > MAX_NAME)
        return fail_at(m, t->line, t->col, "device name longer than %d bytes", MAX_NAME);
    d->gpu = is_gpu_name(t);
    if (d->gpu) {
        char want[16];
        snprintf(want, sizeof want, "GPU%d", m->ngpu);
        if (m->ndev > m->ngpu)
            return fail_at(m, t->line, t->col, "'%.*s' after a NIC column: nvidia-smi lists "
                           "the GPUs first", t->len, t->s);
        if (!tok_is(t, want))
            return fail_at(m, t->line, t->col, "expected the column %s, found '%.*s' (GPUs are "
                           "numbered from 0, in order)", want, t->len, t->s);
        m->ngpu++;
    }
    memcpy(d->name, t->s, (size_t)t->len);
    d->name[t->len] = '\0';
    memcpy(d->model, d->name, (size_t)t->len + 1);
    for (k = 0; k < m->ndev; k++)
        if (strcmp(m->dev[k].name, d->name) == 0)
            return fail_at(m, t->line, t->col, "device '%s' appears twice in the header", d->name);
    d->line = t->line;
    d->col = t->col;
    m->ndev++;
    return CP_OK;
}

/* The header: device columns, then the trailing columns (CPU Affinity,
 * NUMA Affinity, GPU NUMA ID). */
static int read_header(smi *m, int n)
{
    int k, rc;
    if (n > TOK_CAP)
        return fail_at(m, m->tok[TOK_CAP - 1].line, m->tok[TOK_CAP - 1].col,
                       "more than %d columns in the header", TOK_CAP);
    for (k = 0; k < n; k++) {
        const tok *t = &m->tok[k];
        int kind, span = trailing_title(m, n, k, &kind), j;
        if (span) {
            for (j = 0; j < m->ntrail; j++)
                if (m->trail[j] == kind && kind != AFF_OTHER)
                    return fail_at(m, t->line, t->col, "the column '%.*s %.*s' appears twice",
                                   t->len, t->s, t[1].len, t[1].s);
            if (m->ntrail >= MAX_TRAIL)
                return fail_at(m, t->line, t->col, "more than %d affinity columns", MAX_TRAIL);
            m->trail[m->ntrail++] = kind;
            k += span - 1;
            continue;
        }
        if (m->ntrail > 0)
            return fail_at(m, t->line, t->col, "unexpected column '%.*s' after the affinity "
                           "columns (expected CPU Affinity, NUMA Affinity or GPU NUMA ID)",
                           t->len, t->s);
        if ((rc = header_device(m, t)))
            return rc;
    }
    return CP_OK;
}

/* The row of device r, in m->tok (n tokens). */
static int read_row(smi *m, int r, int n)
{
    const dev *d = &m->dev[r];
    const tok *t = m->tok;
    int j, k;
    if (!tok_is(&t[0], d->name))
        return fail_at(m, t[0].line, t[0].col, "expected the row of %s (rows follow the header's "
                       "order), found '%.*s'", d->name, t[0].len, t[0].s);
    if (n - 1 < m->ndev) {
        const tok *last = &t[n - 1];
        return fail_at(m, last->line, last->col + last->len, "row %s has %d cell%s, the header "
                       "lists %d devices", d->name, n - 1, n == 2 ? "" : "s", m->ndev);
    }
    if (n - 1 - m->ndev > m->ntrail) {
        const tok *x = &t[1 + m->ndev + m->ntrail];
        return fail_at(m, x->line, x->col, "row %s: '%.*s' is past the last column of the header "
                       "(%d devices, %d affinity column%s)", d->name, x->len, x->s, m->ndev,
                       m->ntrail, m->ntrail == 1 ? "" : "s");
    }
    for (j = 0; j < m->ndev; j++) {
        const tok *x = &t[1 + j];
        cell *c = &m->cell[(size_t)r * (size_t)m->ndev + (size_t)j];
        int nv, rel = parse_cell(x, &nv);
        if (rel == 0)
            return fail_at(m, x->line, x->col, "unknown cell '%.*s' (expected X, NV#, PIX, PXB, "
                           "PHB, NODE or SYS)", x->len, x->s);
        if (rel < 0)
            return fail_at(m, x->line, x->col, "'%.*s': expected NV1 to NV%d (the number of "
                           "bonded NVLinks)", x->len, x->s, MAX_NV);
        c->rel = (unsigned char)rel;
        c->nv = (unsigned char)nv;
        c->line = x->line;
        c->col = x->col;
    }
    for (k = 0; k < n - 1 - m->ndev; k++) {
        int kind = m->trail[k];
        if (kind == AFF_CPU || kind == AFF_NUMA)
            m->dev[r].aff[kind] = t[1 + m->ndev + k];
    }
    return CP_OK;
}

/* After the rows: a further row is an error; "NIC0: mlx5_0" lines of the
 * NIC Legend name the NICs. */
static int read_trailer(smi *m)
{
    int n, k, first = 1;
    while ((n = next_line(m)) >= 0) {
        const tok *t = m->tok;
        if (n == 0) {
            first = 0;
            continue;
        }
        if (first) {
            for (k = 0; k < m->ndev; k++)
                if (tok_is(&t[0], m->dev[k].name) || is_gpu_name(&t[0]))
                    return fail_at(m, t[0].line, t[0].col, "a row after the last device of the "
                                   "header (%d devices)", m->ndev);
            first = 0;
        }
        if (n < 2 || t[0].len < 2 || t[0].s[t[0].len - 1] != ':' || t[1].len > MAX_NAME)
            continue;
        for (k = m->ngpu; k < m->ndev; k++)
            if ((int)strlen(m->dev[k].name) == t[0].len - 1 &&
                memcmp(m->dev[k].name, t[0].s, (size_t)t[0].len - 1) == 0) {
                memcpy(m->dev[k].model, t[1].s, (size_t)t[1].len);
                m->dev[k].model[t[1].len] = '\0';
            }
    }
    return CP_OK;
}

/* A NUL byte means this is not a text file; say where. */
static int reject_nul(smi *m)
{
    const char *nul = memchr(m->text, '\0', m->len);
    const char *ls;
    int line = 1;
    if (!nul)
        return CP_OK;
    for (ls = m->text; ls < nul; ls++)
        line += *ls == '\n';
    for (ls = nul; ls > m->text && ls[-1] != '\n'; ls--)
        ;
    return fail_at(m, line, (int)(nul - ls) + 1, "NUL byte (a text file was expected)");
}

static int read_matrix(smi *m)
{
    int n, r, rc;
    if ((rc = reject_nul(m)))
        return rc;
    while ((n = next_line(m)) >= 0 && !is_header(m, n))
        ;
    if (n < 0)
        return fail_at(m, 0, 0, "no nvidia-smi topo -m matrix found (a header line starting "
                       "GPU0, followed by one row per device)");
    if ((rc = read_header(m, n)))
        return rc;
    m->cell = calloc((size_t)m->ndev * (size_t)m->ndev, sizeof *m->cell);
    if (!m->cell)
        return oom(m);
    for (r = 0; r < m->ndev; r++) {
        n = next_line(m);
        if (n <= 0 || (n == 1 && tok_is(&m->tok[0], "Legend:")))
            return fail_at(m, m->dev[r].line, m->dev[r].col, "%s: no row for this column (the "
                           "matrix ends after %d rows)", m->dev[r].name, r);
        if ((rc = read_row(m, r, n)))
            return rc;
    }
    return read_trailer(m);
}

/* ------------------------------------------------------------------------ */
/* 2. Checking the cells                                                     */

static cell *at(const smi *m, int i, int j)
{
    return &m->cell[(size_t)i * (size_t)m->ndev + (size_t)j];
}

/* The cell as nvidia-smi prints it. */
static const char *cell_text(const cell *c, char *buf, size_t cap)
{
    static const char *const names[] = {"?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (c->rel == R_NV)
        snprintf(buf, cap, "NV%d", c->nv);
    else
        snprintf(buf, cap, "%s", names[c->rel]);
    return buf;
}

/* In reading order, so that the first offending cell of the file is the
 * one reported. */
static int check_cells(smi *m)
{
    int i, j;
    char a[16], b[16];
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < m->ndev; j++) {
            const cell *c = at(m, i, j), *t = at(m, j, i);
            const char *di = m->dev[i].name, *dj = m->dev[j].name;
            if (i == j && c->rel != R_X)
                return fail_at(m, c->line, c->col, "%s -> %s is %s: expected X on the diagonal "
                               "(a device and itself)", di, dj, cell_text(c, a, sizeof a));
            if (i != j && c->rel == R_X)
                return fail_at(m, c->line, c->col, "%s -> %s is X, which only the diagonal (a "
                               "device and itself) may be", di, dj);
            if (c->rel == R_NV && (!m->dev[i].gpu || !m->dev[j].gpu))
                return fail_at(m, c->line, c->col, "%s -> %s is %s: NVLink joins GPUs only", di,
                               dj, cell_text(c, a, sizeof a));
            if (c->rel == R_NV && !(m->nv_gbs > 0))
                return fail_at(m, c->line, c->col, "%s -> %s is %s, but the NVLink rate is "
                               "unknown: give --gpu p100|v100|a100|h100 or --nvlink-gbs X", di,
                               dj, cell_text(c, a, sizeof a));
            if (j < i && (c->rel != t->rel || c->nv != t->nv))
                return fail_at(m, c->line, c->col, "%s -> %s is %s, but %s -> %s (line %d, "
                               "column %d) is %s: the matrix must be symmetric", di, dj,
                               cell_text(c, a, sizeof a), dj, di, t->line, t->col,
                               cell_text(t, b, sizeof b));
            m->any_nv |= c->rel == R_NV;
        }
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* 3. Sockets                                                                */

/* Union-find with the smallest index as the root, so a group is named by
 * its first device in the header's order. */
static int find(int *p, int x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static void unite(int *p, int a, int b)
{
    a = find(p, a);
    b = find(p, b);
    if (a < b)
        p[b] = a;
    else if (b < a)
        p[a] = b;
}

static int same_socket_cell(int rel)
{
    return rel == R_PIX || rel == R_PXB || rel == R_PHB || rel == R_NODE;
}

/* A usable affinity value: present and not N/A. */
static int aff_ok(const tok *t)
{
    return t->len > 0 && !tok_is(t, "N/A");
}

static int aff_eq(const tok *a, const tok *b)
{
    return a->len == b->len && memcmp(a->s, b->s, (size_t)a->len) == 0;
}

/* The affinity column to group GPUs by: NUMA Affinity when every GPU has
 * one, else CPU Affinity likewise, else -1. */
static int pick_affinity(const smi *m)
{
    int kind, g;
    for (kind = AFF_NUMA; kind >= AFF_CPU; kind--) {
        for (g = 0; g < m->ngpu && aff_ok(&m->dev[g].aff[kind]); g++)
            ;
        if (g == m->ngpu && m->ngpu > 0)
            return kind;
    }
    return -1;
}

/* Groups that must share a socket: the same-socket cells, and (aff >= 0)
 * GPUs with one affinity value.  0 when the affinity contradicts the cells
 * (two values in a group, or SYS inside one). */
static int socket_groups(const smi *m, int aff, int *p)
{
    int i, j;
    for (i = 0; i < m->ndev; i++)
        p[i] = i;
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++)
            if (same_socket_cell(at(m, i, j)->rel) ||
                (aff >= 0 && i < m->ngpu && aff_eq(&m->dev[i].aff[aff], &m->dev[j].aff[aff])))
                unite(p, i, j);
    if (aff < 0)
        return 1;
    for (i = 0; i < m->ndev && m->dev[i].gpu; i++) { /* one value per group (GPUs first) */
        int r = find(p, i);
        for (j = 0; j < i; j++)
            if (find(p, j) == r && !aff_eq(&m->dev[i].aff[aff], &m->dev[j].aff[aff]))
                return 0;
    }
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++)
            if (at(m, i, j)->rel == R_SYS && find(p, i) == find(p, j))
                return 0;
    return 1;
}

/* May group r (root of p) join socket s?  Not when a SYS cell separates
 * them, nor when both carry different affinity values. */
static int fits(const smi *m, const int *root, int r, int s, int aff)
{
    int a, b;
    for (a = r; a < m->ndev; a++) {
        if (root[a] != r)
            continue;
        for (b = 0; b < m->ndev; b++) {
            if (m->sock[b] != s)
                continue;
            if (at(m, a, b)->rel == R_SYS)
                return 0;
            if (aff >= 0 && a < m->ngpu && b < m->ngpu &&
                !aff_eq(&m->dev[a].aff[aff], &m->dev[b].aff[aff]))
                return 0;
        }
    }
    return 1;
}

/* Every group on the first socket it fits, in the header's order; a group
 * that fits none opens a new socket. */
static void place_sockets(smi *m, int *p, int aff)
{
    int i, s, joined = 0;
    for (i = 0; i < m->ndev; i++) {
        p[i] = find(p, i);
        m->sock[i] = -1;
    }
    for (i = 0; i < m->ndev; i++) {
        int a;
        if (p[i] != i)
            continue;
        for (s = 0; s < m->nsock && !fits(m, p, i, s, aff); s++)
            ;
        if (s == m->nsock)
            m->nsock++;
        else
            joined = 1;
        for (a = i; a < m->ndev; a++)
            if (p[a] == i)
                m->sock[a] = s;
    }
    if (joined && aff < 0)
        note(m, "devices with no PCIe cell between them (joined by NVLink only) share a socket "
                "unless a SYS cell separates them");
}

static int sockets(smi *m)
{
    int *p = calloc((size_t)m->ndev, sizeof *p);
    int aff = pick_affinity(m);
    static const char *const col[] = {"CPU Affinity", "NUMA Affinity"};
    char buf[512];
    if (!p)
        return oom(m);
    if (aff >= 0 && !socket_groups(m, aff, p)) {
        snprintf(buf, sizeof buf, "the %s column disagrees with the cells (one value across a "
                 "SYS cell, or two values on one socket): ignored, sockets from the cells",
                 col[aff]);
        note(m, buf);
        aff = -1;
    }
    if (aff < 0)
        socket_groups(m, -1, p);
    else {
        snprintf(buf, sizeof buf, "sockets from the %s column", col[aff]);
        note(m, buf);
    }
    place_sockets(m, p, aff);
    free(p);
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* 4. The PCIe tree                                                          */

static void pcie_groups(smi *m)
{
    int i, j;
    for (i = 0; i < m->ndev; i++)
        m->pix[i] = m->pxb[i] = i;
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++) {
            int rel = at(m, i, j)->rel;
            if (rel == R_PIX)
                unite(m->pix, i, j);
            if (rel == R_PIX || rel == R_PXB)
                unite(m->pxb, i, j);
        }
    for (i = 0; i < m->ndev; i++) {
        m->pix[i] = find(m->pix, i);
        m->pxb[i] = find(m->pxb, i);
    }
}

/* What the tree says device i and j are joined by. */
static int tree_rel(const smi *m, int i, int j)
{
    if (m->pix[i] == m->pix[j])
        return R_PIX;
    if (m->pxb[i] == m->pxb[j])
        return R_PXB;
    return m->sock[i] == m->sock[j] ? R_PHB : R_SYS;
}

/* Every cell but NV must say what the tree says (PHB and NODE alike). */
static int check_tree(smi *m)
{
    static const char *const why[] = {
        [R_PIX] = "under one PCIe switch (PIX)",
        [R_PXB] = "under switches with a common upstream switch (PXB)",
        [R_PHB] = "on one CPU socket under no common switch (PHB or NODE)",
        [R_SYS] = "on different CPU sockets (SYS)",
    };
    int i, j;
    char a[16];
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < m->ndev; j++) {
            const cell *c = at(m, i, j);
            int want = tree_rel(m, i, j);
            if (i == j || c->rel == R_NV || c->rel == want || (want == R_PHB && c->rel == R_NODE))
                continue;
            return fail_at(m, c->line, c->col, "%s -> %s is %s, but other cells put %s and %s %s: "
                           "no PCIe tree fits every cell", m->dev[i].name, m->dev[j].name,
                           cell_text(c, a, sizeof a), m->dev[i].name, m->dev[j].name, why[want]);
        }
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* 5, 6. Nodes and links                                                     */

static int add_node(smi *m, const char *id, const char *kind, json_t *extra)
{
    json_t *n = json_object();
    if (!n)
        return oom(m);
    json_object_set_new(n, "id", json_string(id));
    json_object_set_new(n, "kind", json_string(kind));
    if (extra)
        json_object_update(n, extra);
    json_decref(extra);
    return json_array_append_new(m->nodes, n) ? oom(m) : CP_OK;
}

static int add_link(smi *m, const char *a, const char *b, const char *kind, double gbs,
                    double lat)
{
    json_t *l = json_object();
    if (!l)
        return oom(m);
    json_object_set_new(l, "a", json_string(a));
    json_object_set_new(l, "b", json_string(b));
    json_object_set_new(l, "kind", json_string(kind));
    json_object_set_new(l, "gbs", json_real(cp_round(gbs, 4)));
    json_object_set_new(l, "latency_us", json_real(lat));
    return json_array_append_new(m->links, l) ? oom(m) : CP_OK;
}

/* Node id of device i: gpuK or nicK. */
static void dev_id(const smi *m, int i, char *buf, size_t cap)
{
    if (i < m->ngpu)
        snprintf(buf, cap, "gpu%d", i);
    else
        snprintf(buf, cap, "nic%d", i - m->ngpu);
}

/* Switch numbering: a leaf switch per PIX group of two or more devices,
 * then an upstream switch per PXB group holding two or more PIX groups
 * (or lone devices), each in the order of its first device. */
typedef struct tree {
    int *leaf; /* per device that roots a PIX group: its switch number, else -1 */
    int *up;   /* per device that roots a PXB group: its upstream switch number, else -1 */
    int nsw;
} tree;

static int count_switches(smi *m, tree *t)
{
    int i, j, *size = calloc((size_t)m->ndev, sizeof *size);
    t->leaf = calloc((size_t)m->ndev, sizeof *t->leaf);
    t->up = calloc((size_t)m->ndev, sizeof *t->up);
    t->nsw = 0;
    if (!size || !t->leaf || !t->up) {
        free(size);
        return oom(m);
    }
    for (i = 0; i < m->ndev; i++) {
        size[m->pix[i]]++;
        t->leaf[i] = t->up[i] = -1;
    }
    for (i = 0; i < m->ndev; i++)
        if (m->pix[i] == i && size[i] >= 2)
            t->leaf[i] = t->nsw++;
    for (i = 0; i < m->ndev; i++) {
        int units = 0;
        if (m->pxb[i] != i)
            continue;
        for (j = i; j < m->ndev; j++)
            units += m->pxb[j] == i && m->pix[j] == j;
        if (units >= 2)
            t->up[i] = t->nsw++;
    }
    free(size);
    return CP_OK;
}

/* The node a device (or its PIX group's switch, when leaf_up) hangs from:
 * its leaf switch, its upstream switch, or its socket's CPU. */
static void parent_of(const smi *m, const tree *t, int i, int leaf_up, char *buf, size_t cap)
{
    if (!leaf_up && t->leaf[m->pix[i]] >= 0)
        snprintf(buf, cap, "sw%d", t->leaf[m->pix[i]]);
    else if (t->up[m->pxb[i]] >= 0)
        snprintf(buf, cap, "sw%d", t->up[m->pxb[i]]);
    else
        snprintf(buf, cap, "cpu%d", m->sock[i]);
}

/* CPU and PCIe switch nodes. */
static int add_hubs(smi *m, const tree *t)
{
    char id[32];
    int rc, s;
    for (s = 0; s < m->nsock; s++) {
        snprintf(id, sizeof id, "cpu%d", s);
        if ((rc = add_node(m, id, "cpu", NULL)))
            return rc;
    }
    for (s = 0; s < t->nsw; s++) {
        snprintf(id, sizeof id, "sw%d", s);
        if ((rc = add_node(m, id, "pcie_switch", NULL)))
            return rc;
    }
    return CP_OK;
}

/* GPU and NIC nodes.  With --gpu a GPU gets its part and peak FP32 rate:
 * the SXM part when the matrix shows NVLink, else the PCIe card. */
static int add_endpoints(smi *m)
{
    char id[32];
    int i, rc;
    for (i = 0; i < m->ndev; i++) {
        json_t *x = json_object();
        if (!x)
            return oom(m);
        if (i < m->ngpu && m->gen) {
            int sxm = m->any_nv;
            json_object_set_new(x, "model", json_string(sxm ? m->gen->sxm : m->gen->pcie));
            json_object_set_new(x, "tflops",
                                json_real(sxm ? m->gen->sxm_tflops : m->gen->pcie_tflops));
            json_object_set_new(x, "tflops_fp16",
                                json_real(sxm ? m->gen->sxm_fp16 : m->gen->pcie_fp16));
            json_object_set_new(x, "mem_gbs",
                                json_real(sxm ? m->gen->sxm_mem_gbs : m->gen->pcie_mem_gbs));
        } else if (i >= m->ngpu) {
            json_object_set_new(x, "model", json_string(m->dev[i].model));
            json_object_set_new(x, "net_gbs", json_real(cp_round(m->o->base.net_gbs, 4)));
            json_object_set_new(x, "net_latency_us", json_real(m->o->base.net_lat_us));
        }
        dev_id(m, i, id, sizeof id);
        if ((rc = add_node(m, id, i < m->ngpu ? "gpu" : "nic", x)))
            return rc;
    }
    return CP_OK;
}

/* NVLink groups: GPUs joined by NV cells, directly or not. */
typedef struct nvgroups {
    int *root; /* per GPU: the first GPU of its group */
    int *sw;   /* per group root: 1 + its nvswitch number, or 0 for point-to-point links */
    int nsw;
} nvgroups;

/* Which groups need a switch: some GPU shows more NVLinks than its
 * generation has, and every pair of the group shows NV#, as nvidia-smi
 * prints NVSwitch systems (NV12 between all eight GPUs of a DGX A100,
 * though each has 12 links in all).  Point-to-point links there would
 * give a GPU seven times the bandwidth it has. */
static void nvswitch_groups(smi *m, nvgroups *g)
{
    int i, j, links = m->gen ? m->gen->links : MAX_LINKS_ANY;
    char buf[512];
    for (i = 0; i < m->ngpu; i++)
        g->root[i] = i;
    for (i = 0; i < m->ngpu; i++)
        for (j = 0; j < i; j++)
            if (at(m, i, j)->rel == R_NV)
                unite(g->root, i, j);
    for (i = 0; i < m->ngpu; i++) {
        g->root[i] = find(g->root, i);
        g->sw[i] = 0;
    }
    for (i = 0; i < m->ngpu; i++) {
        int sum = 0, complete = 1;
        for (j = 0; j < m->ngpu; j++) {
            sum += at(m, i, j)->nv;
            if (j != i && g->root[j] == g->root[i] && at(m, i, j)->rel != R_NV)
                complete = 0;
        }
        if (sum <= links)
            continue;
        if (complete)
            g->sw[g->root[i]] = 1;
        else {
            snprintf(buf, sizeof buf, "GPU%d shows %d NVLinks, more than a GPU has (%s: %d), but not "
                     "NV# to every GPU it reaches: kept as point-to-point links", i, sum,
                     m->gen ? m->gen->label : "any GPU", links);
            note(m, buf);
        }
    }
    g->nsw = 0;
    for (i = 0; i < m->ngpu; i++)
        if (g->root[i] == i && g->sw[i])
            g->sw[i] = ++g->nsw;
    if (g->nsw > 0) {
        snprintf(buf, sizeof buf, "GPUs showing NV# to every GPU of their group and more "
                 "NVLinks in all than a GPU has (%s: %d) reach each other through one nvswitch node "
                 "standing for the NVSwitch chips, each on a link of the largest NV# in its "
                 "row; no NVSwitch reduction (add reduce_gbs by hand for NVLS)",
                 m->gen ? m->gen->label : "any GPU", links);
        note(m, buf);
    }
}

/* The most NVLinks GPU i shows to one peer: its ports into the fabric. */
static int max_nv(const smi *m, int i)
{
    int j, best = 0;
    for (j = 0; j < m->ngpu; j++)
        if (at(m, i, j)->nv > best)
            best = at(m, i, j)->nv;
    return best;
}

static int add_nvswitches(smi *m, const nvgroups *g)
{
    char id[32];
    int k, rc;
    for (k = 0; k < g->nsw; k++) {
        snprintf(id, sizeof id, "nvsw%d", k);
        if ((rc = add_node(m, id, "nvswitch", NULL)))
            return rc;
    }
    return CP_OK;
}

/* One link per NV cell (added once, from the lower GPU), or one link from
 * each GPU of a switched group to its nvswitch. */
static int add_nvlinks(smi *m, const nvgroups *g)
{
    int i, j, rc = CP_OK;
    char a[32], b[32];
    for (i = 0; i < m->ngpu && rc == CP_OK; i++) {
        snprintf(a, sizeof a, "gpu%d", i);
        if (g->sw[g->root[i]]) {
            snprintf(b, sizeof b, "nvsw%d", g->sw[g->root[i]] - 1);
            rc = add_link(m, a, b, "nvlink", max_nv(m, i) * m->nv_gbs, LAT_NVLINK);
            continue;
        }
        for (j = i + 1; j < m->ngpu && rc == CP_OK; j++)
            if (at(m, i, j)->rel == R_NV) {
                snprintf(b, sizeof b, "gpu%d", j);
                rc = add_link(m, a, b, "nvlink", at(m, i, j)->nv * m->nv_gbs, LAT_NVLINK);
            }
    }
    return rc;
}

static int add_pcie(smi *m, const tree *t)
{
    char a[32], b[32];
    int i, j, rc = CP_OK;
    for (i = 0; i < m->ndev && rc == CP_OK; i++) { /* endpoints */
        dev_id(m, i, a, sizeof a);
        parent_of(m, t, i, 0, b, sizeof b);
        rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
    }
    for (i = 0; i < m->ndev && rc == CP_OK; i++) /* leaf switch uplinks */
        if (t->leaf[i] >= 0) {
            snprintf(a, sizeof a, "sw%d", t->leaf[i]);
            parent_of(m, t, i, 1, b, sizeof b);
            rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
        }
    for (i = 0; i < m->ndev && rc == CP_OK; i++) /* upstream switch uplinks */
        if (t->up[i] >= 0) {
            snprintf(a, sizeof a, "sw%d", t->up[i]);
            snprintf(b, sizeof b, "cpu%d", m->sock[i]);
            rc = add_link(m, a, b, "pcie", m->pcie_gbs, LAT_PCIE);
        }
    for (i = 0; i < m->nsock && rc == CP_OK; i++)
        for (j = i + 1; j < m->nsock && rc == CP_OK; j++) {
            snprintf(a, sizeof a, "cpu%d", i);
            snprintf(b, sizeof b, "cpu%d", j);
            rc = add_link(m, a, b, "socket", SOCKET_GBS, LAT_SOCKET);
        }
    return rc;
}

/* Where the rates and the GPU part came from. */
static void rate_notes(smi *m)
{
    char buf[512];
    if (m->any_nv) {
        if (m->o->nvlink_gbs > 0)
            snprintf(buf, sizeof buf, "NV# = # x %g GB/s per direction (--nvlink-gbs)", m->nv_gbs);
        else
            snprintf(buf, sizeof buf, "NV# = # x %g GB/s per direction (nominal %s NVLink, "
                     "--gpu %s)", m->nv_gbs, m->gen->label, m->gen->name);
        note(m, buf);
    }
    if (m->o->pcie_gbs > 0)
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (--pcie-gbs)", m->pcie_gbs);
    else if (m->gen)
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (%s as NCCL computes it, --gpu %s)",
                 m->pcie_gbs, m->gen->pcie_what, m->gen->name);
    else
        snprintf(buf, sizeof buf, "every PCIe link %g GB/s (Gen3 x16 as NCCL computes it; "
                 "--gpu or --pcie-gbs to change)", m->pcie_gbs);
    note(m, buf);
    if (m->gen) {
        snprintf(buf, sizeof buf, "GPUs taken as %s (%s; --gpu %s), tflops, tflops_fp16 and "
                 "mem_gbs from its datasheet",
                 m->any_nv ? m->gen->sxm : m->gen->pcie,
                 m->any_nv ? "the matrix shows NVLink" : "no NVLink in the matrix", m->gen->name);
        note(m, buf);
    }
}

/* What the layout took for granted: devices on a CPU, flat PXB trees, the
 * socket rate, the NIC figures. */
static void layout_notes(smi *m, const tree *t)
{
    char buf[512];
    int i, direct = 0, upstream = 0;
    for (i = 0; i < m->ndev; i++) {
        direct += t->leaf[m->pix[i]] < 0 && t->up[m->pxb[i]] < 0;
        upstream += t->up[i] >= 0;
    }
    if (direct)
        note(m, "devices under no common switch with another (PHB, NODE, or NVLink only) hang "
                "straight off their socket's CPU; host bridges are not modelled");
    if (upstream)
        note(m, "each PXB group is one upstream switch over its PIX switches and lone devices, "
                "whatever its depth");
    if (m->nsock > 1) {
        snprintf(buf, sizeof buf, "the matrix names no CPU: socket links %g GB/s (NCCL's "
                 "Skylake figure, as import nccl-topo gives an unknown CPU)", SOCKET_GBS);
        note(m, buf);
    }
    if (m->ndev > m->ngpu) {
        snprintf(buf, sizeof buf, "NICs at --net-gbs %g GB/s and --net-latency-us %g",
                 m->o->base.net_gbs, m->o->base.net_lat_us);
        note(m, buf);
    }
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                    */

void cp_smi_opts_default(cp_smi_opts *o)
{
    cp_import_opts_default(&o->base);
    o->gpu = NULL;
    o->nvlink_gbs = 0;
    o->pcie_gbs = 0;
}

static const struct gen *find_gen(const char *gpu)
{
    size_t k;
    for (k = 0; gpu && k < sizeof gens / sizeof gens[0]; k++)
        if (strcmp(gpu, gens[k].name) == 0)
            return &gens[k];
    return NULL;
}

int cp_smi_gpu_known(const char *gpu)
{
    return find_gen(gpu) != NULL;
}


/* Stages 2 to 6, once the matrix is read.  Nodes go out as cpus, PCIe
 * switches, nvswitches, GPUs, NICs; links as NVLinks, PCIe (endpoints,
 * then switch uplinks), sockets. */
static int convert(smi *m)
{
    tree t = {NULL, NULL, 0};
    nvgroups g = {NULL, NULL, 0};
    int rc;
    if ((rc = check_cells(m)) || (rc = sockets(m)))
        return rc;
    pcie_groups(m);
    if ((rc = check_tree(m)) || (rc = count_switches(m, &t)))
        goto done;
    m->nodes = json_array();
    m->links = json_array();
    g.root = calloc((size_t)m->ngpu + 1, sizeof *g.root);
    g.sw = calloc((size_t)m->ngpu + 1, sizeof *g.sw);
    if (!m->nodes || !m->links || !g.root || !g.sw) {
        rc = oom(m);
        goto done;
    }
    rate_notes(m);
    layout_notes(m, &t);
    nvswitch_groups(m, &g);
    if ((rc = add_hubs(m, &t)) || (rc = add_nvswitches(m, &g)) || (rc = add_endpoints(m)) ||
        (rc = add_nvlinks(m, &g)))
        goto done;
    rc = add_pcie(m, &t);
done:
    free(t.leaf);
    free(t.up);
    free(g.root);
    free(g.sw);
    return rc;
}

static json_t *result(const smi *m)
{
    json_t *t = json_object();
    char name[256], full[2600];
    if (!t)
        return NULL;
    if (m->o->base.name)
        snprintf(name, sizeof name, "%s", m->o->base.name);
    else
        cp_base_name(m->path, 1, name, sizeof name);
    snprintf(full, sizeof full, "imported from %s by coarse-plan import smi-topo (docs/"
             "import.md). Assumed: %s", m->path, m->notes);
    json_object_set_new(t, "name", json_string(name));
    json_object_set_new(t, "note", json_string(full));
    json_object_set_new(t, "nodes", json_incref(m->nodes));
    json_object_set_new(t, "links", json_incref(m->links));
    return t;
}

int cp_import_smi_topo(const char *path, const char *text, size_t len,
                       const cp_smi_opts *o, json_t **out, cp_err *e)
{
    smi m;
    int rc;
    *out = NULL;
    memset(&m, 0, sizeof m);
    m.path = path;
    m.text = text;
    m.len = len;
    m.o = o;
    m.e = e;
    if (o->gpu && !(m.gen = find_gen(o->gpu)))
        return cp_fail(e, CP_EINPUT, "--gpu: expected p100, v100, a100 or h100, got '%s'", o->gpu);
    m.nv_gbs = o->nvlink_gbs > 0 ? o->nvlink_gbs : m.gen ? m.gen->nvlink_gbs : 0;
    m.pcie_gbs = o->pcie_gbs > 0 ? o->pcie_gbs : m.gen ? m.gen->pcie_gbs : PCIE_GEN3_GBS;
    m.tok = malloc(TOK_CAP * sizeof *m.tok);
    m.dev = calloc(MAX_DEV, sizeof *m.dev);
    if (!m.tok || !m.dev)
        rc = oom(&m);
    else
        rc = read_matrix(&m);
    if (rc == CP_OK) {
        m.sock = calloc((size_t)m.ndev, sizeof *m.sock);
        m.pix = calloc((size_t)m.ndev, sizeof *m.pix);
        m.pxb = calloc((size_t)m.ndev, sizeof *m.pxb);
        rc = m.sock && m.pix && m.pxb ? convert(&m) : oom(&m);
    }
    if (rc == CP_OK && !(*out = result(&m)))
        rc = oom(&m);
    json_decref(m.nodes);
    json_decref(m.links);
    free(m.tok);
    free(m.dev);
    free(m.cell);
    free(m.sock);
    free(m.pix);
    free(m.pxb);
    return rc;
}
