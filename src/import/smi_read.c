/*
 * smi_read.c - stages 1 and 2 of import smi-topo (smi_internal.h,
 * docs/import.md): find the header row (GPU0 followed by the other
 * devices, anywhere in the file), then one row per device; cells are
 * separated by tabs or spaces and keep their line and column; then the
 * cells are checked (X on the diagonal only, symmetry, NVLink only between
 * GPUs, an NVLink rate when NV cells exist).  Also the error and note
 * helpers of every stage.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/smi_internal.h"

/* ------------------------------------------------------------------------ */
/* Errors and notes                                                          */

/* An input error at a position of the file, with that line kept for the
 * caret display; always CP_EINPUT. */
int smi_fail_at(smi *m, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_vfail_at(m->e, CP_EINPUT, m->path, line, col, NULL, fmt, ap);
    va_end(ap);
    if (line > 0 && m->e)
        cp_err_set_source(m->e, m->text, m->len, line);
    return CP_EINPUT;
}

int smi_oom(smi *m)
{
    return cp_fail(m->e, CP_EINTERNAL, "out of memory");
}

/* Append one assumption to the note, once; the note stays bounded. */
void smi_note(smi *m, const char *text)
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

int smi_tok_is(const tok *t, const char *w)
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
        if (smi_tok_is(t, words[k].w))
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
    return n >= 1 && smi_tok_is(&m->tok[0], "GPU0") && (n == 1 || parse_cell(&m->tok[1], &nv) == 0);
}

/* A trailing column title starting at token k: its kind and how many
 * tokens it spans (0 when none). */
static int trailing_title(const smi *m, int n, int k, int *kind)
{
    const tok *t = m->tok;
    if (k + 1 < n && smi_tok_is(&t[k], "CPU") && smi_tok_is(&t[k + 1], "Affinity")) {
        *kind = AFF_CPU;
        return 2;
    }
    if (k + 1 < n && smi_tok_is(&t[k], "NUMA") && smi_tok_is(&t[k + 1], "Affinity")) {
        *kind = AFF_NUMA;
        return 2;
    }
    if (k + 2 < n && smi_tok_is(&t[k], "GPU") && smi_tok_is(&t[k + 1], "NUMA") &&
        smi_tok_is(&t[k + 2], "ID")) {
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
        return smi_fail_at(m, t->line, t->col, "more than %d devices in the header", MAX_DEV);
    if (t->len > MAX_NAME)
        return smi_fail_at(m, t->line, t->col, "device name longer than %d bytes", MAX_NAME);
    d->gpu = is_gpu_name(t);
    if (d->gpu) {
        char want[16];
        snprintf(want, sizeof want, "GPU%d", m->ngpu);
        if (m->ndev > m->ngpu)
            return smi_fail_at(m, t->line, t->col, "'%.*s' after a NIC column: nvidia-smi lists "
                               "the GPUs first", t->len, t->s);
        if (!smi_tok_is(t, want))
            return smi_fail_at(m, t->line, t->col, "expected the column %s, found '%.*s' (GPUs are "
                               "numbered from 0, in order)", want, t->len, t->s);
        m->ngpu++;
    }
    memcpy(d->name, t->s, (size_t)t->len);
    d->name[t->len] = '\0';
    memcpy(d->model, d->name, (size_t)t->len + 1);
    for (k = 0; k < m->ndev; k++)
        if (strcmp(m->dev[k].name, d->name) == 0)
            return smi_fail_at(m, t->line, t->col, "device '%s' appears twice in the header",
                               d->name);
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
        return smi_fail_at(m, m->tok[TOK_CAP - 1].line, m->tok[TOK_CAP - 1].col,
                           "more than %d columns in the header", TOK_CAP);
    for (k = 0; k < n; k++) {
        const tok *t = &m->tok[k];
        int kind, span = trailing_title(m, n, k, &kind), j;
        if (span) {
            for (j = 0; j < m->ntrail; j++)
                if (m->trail[j] == kind && kind != AFF_OTHER)
                    return smi_fail_at(m, t->line, t->col, "the column '%.*s %.*s' appears twice",
                                       t->len, t->s, t[1].len, t[1].s);
            if (m->ntrail >= MAX_TRAIL)
                return smi_fail_at(m, t->line, t->col, "more than %d affinity columns", MAX_TRAIL);
            m->trail[m->ntrail++] = kind;
            k += span - 1;
            continue;
        }
        if (m->ntrail > 0)
            return smi_fail_at(m, t->line, t->col, "unexpected column '%.*s' after the affinity "
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
    if (!smi_tok_is(&t[0], d->name))
        return smi_fail_at(m, t[0].line, t[0].col, "expected the row of %s (rows follow the "
                           "header's order), found '%.*s'", d->name, t[0].len, t[0].s);
    if (n - 1 < m->ndev) {
        const tok *last = &t[n - 1];
        return smi_fail_at(m, last->line, last->col + last->len, "row %s has %d cell%s, the "
                           "header lists %d devices", d->name, n - 1, n == 2 ? "" : "s",
                           m->ndev);
    }
    if (n - 1 - m->ndev > m->ntrail) {
        const tok *x = &t[1 + m->ndev + m->ntrail];
        return smi_fail_at(m, x->line, x->col, "row %s: '%.*s' is past the last column of the "
                           "header (%d devices, %d affinity column%s)", d->name, x->len, x->s,
                           m->ndev, m->ntrail, m->ntrail == 1 ? "" : "s");
    }
    for (j = 0; j < m->ndev; j++) {
        const tok *x = &t[1 + j];
        cell *c = &m->cell[(size_t)r * (size_t)m->ndev + (size_t)j];
        int nv, rel = parse_cell(x, &nv);
        if (rel == 0)
            return smi_fail_at(m, x->line, x->col, "unknown cell '%.*s' (expected X, NV#, PIX, "
                               "PXB, PHB, NODE or SYS)", x->len, x->s);
        if (rel < 0)
            return smi_fail_at(m, x->line, x->col, "'%.*s': expected NV1 to NV%d (the number of "
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
                if (smi_tok_is(&t[0], m->dev[k].name) || is_gpu_name(&t[0]))
                    return smi_fail_at(m, t[0].line, t[0].col, "a row after the last device of the "
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
    return smi_fail_at(m, line, (int)(nul - ls) + 1, "NUL byte (a text file was expected)");
}

int smi_read_matrix(smi *m)
{
    int n, r, rc;
    if ((rc = reject_nul(m)))
        return rc;
    while ((n = next_line(m)) >= 0 && !is_header(m, n))
        ;
    if (n < 0)
        return smi_fail_at(m, 0, 0, "no nvidia-smi topo -m matrix found (a header line starting "
                           "GPU0, followed by one row per device)");
    if ((rc = read_header(m, n)))
        return rc;
    m->cell = calloc((size_t)m->ndev * (size_t)m->ndev, sizeof *m->cell);
    if (!m->cell)
        return smi_oom(m);
    for (r = 0; r < m->ndev; r++) {
        n = next_line(m);
        if (n <= 0 || (n == 1 && smi_tok_is(&m->tok[0], "Legend:")))
            return smi_fail_at(m, m->dev[r].line, m->dev[r].col, "%s: no row for this column (the "
                               "matrix ends after %d rows)", m->dev[r].name, r);
        if ((rc = read_row(m, r, n)))
            return rc;
    }
    return read_trailer(m);
}

/* ------------------------------------------------------------------------ */
/* 2. Checking the cells                                                     */

cell *smi_at(const smi *m, int i, int j)
{
    return &m->cell[(size_t)i * (size_t)m->ndev + (size_t)j];
}

/* The cell as nvidia-smi prints it. */
const char *smi_cell_text(const cell *c, char *buf, size_t cap)
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
int smi_check_cells(smi *m)
{
    int i, j;
    char a[16], b[16];
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < m->ndev; j++) {
            const cell *c = smi_at(m, i, j), *t = smi_at(m, j, i);
            const char *di = m->dev[i].name, *dj = m->dev[j].name;
            if (i == j && c->rel != R_X)
                return smi_fail_at(m, c->line, c->col, "%s -> %s is %s: expected X on the diagonal "
                                   "(a device and itself)", di, dj, smi_cell_text(c, a, sizeof a));
            if (i != j && c->rel == R_X)
                return smi_fail_at(m, c->line, c->col, "%s -> %s is X, which only the diagonal (a "
                                   "device and itself) may be", di, dj);
            if (c->rel == R_NV && (!m->dev[i].gpu || !m->dev[j].gpu))
                return smi_fail_at(m, c->line, c->col, "%s -> %s is %s: NVLink joins GPUs only", di,
                                   dj, smi_cell_text(c, a, sizeof a));
            if (c->rel == R_NV && !(m->nv_gbs > 0))
                return smi_fail_at(m, c->line, c->col, "%s -> %s is %s, but the NVLink rate is "
                                   "unknown: give --gpu p100|v100|a100|h100 or --nvlink-gbs X", di,
                                   dj, smi_cell_text(c, a, sizeof a));
            if (j < i && (c->rel != t->rel || c->nv != t->nv))
                return smi_fail_at(m, c->line, c->col, "%s -> %s is %s, but %s -> %s (line %d, "
                                   "column %d) is %s: the matrix must be symmetric", di, dj,
                                   smi_cell_text(c, a, sizeof a), dj, di, t->line, t->col,
                                   smi_cell_text(t, b, sizeof b));
            m->any_nv |= c->rel == R_NV;
        }
    return CP_OK;
}
