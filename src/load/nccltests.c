/*
 * nccltests.c - the nccl-tests table parser (see nccltests.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/units.h"
#include "load/nccltests.h"

/* Most rows we keep: nccl-tests sweeps at most a few hundred sizes. */
#define MAX_ROWS 100000

/* Sanity bounds on a row, refused as corrupt: no buffer is larger than
 * 1 PiB (the command line's own limit, units.h), and no collective takes
 * longer than 1e12 us (11.6 days).  Beyond them the fit's sums of squares
 * overflow to infinity. */
#define MAX_ROW_BYTES 1125899906842624.0 /* 2^50 */
#define MAX_ROW_US 1e12

/* Split `line` (modified) into at most `max` whitespace-separated fields;
 * the start column of each (1-based) goes to col[]. */
static int split(char *line, char **f, int *col, int max)
{
    int n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            break;
        f[n] = p;
        col[n] = (int)(p - line) + 1;
        n++;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static int is_uint(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* "# nThread 1 nGpus 8 minBytes ..." */
static void parse_header(char **f, int n, cp_nccl_table *t)
{
    int i;
    long v;
    for (i = 1; i + 1 < n; i++) {
        if (strcmp(f[i], "nGpus") == 0 && cp_parse_long(f[i + 1], 1, 1 << 16, &v) == 0)
            t->gpus_per_thread = (int)v;
        if (strcmp(f[i], "nThread") == 0 && cp_parse_long(f[i + 1], 1, 1 << 16, &v) == 0)
            t->nthreads = (int)v;
    }
}

static int add_row(const char *path, int lineno, char **f, int *col, int n,
                   cp_nccl_table *t, cp_err *e)
{
    int base = 4; /* size count type redop [root] time algbw busbw ... */
    double time_us, busbw;
    cp_nccl_row *r;
    if (n >= 13)
        base = 5; /* newer layout with a root column */
    if (n < base + 3)
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[n - 1], NULL,
                          "data row has %d fields; expected size, count, type, redop, time, "
                          "algbw, busbw, ...", n);
    if (cp_parse_double(f[base], &time_us) || !(time_us > 0) || time_us > MAX_ROW_US)
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[base], NULL,
                          "time: expected a positive number of microseconds up to %g, got "
                          "'%s'", MAX_ROW_US, f[base]);
    if (cp_parse_double(f[base + 2], &busbw) || busbw < 0)
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[base + 2], NULL,
                          "busbw: expected a number of GB/s, got '%s'", f[base + 2]);
    if (t->nrows >= MAX_ROWS)
        return cp_fail_at(e, CP_EINPUT, path, lineno, 1, NULL, "more than %d rows", MAX_ROWS);
    if (t->nrows % 64 == 0) {
        cp_nccl_row *p = realloc(t->rows, (size_t)(t->nrows + 64) * sizeof *p);
        if (!p)
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        t->rows = p;
    }
    r = &t->rows[t->nrows++];
    r->bytes = strtod(f[0], NULL);
    r->time_us = time_us;
    r->busbw = busbw;
    r->line = lineno;
    if (r->bytes <= 0)
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[0], NULL, "size must be positive");
    if (!(r->bytes <= MAX_ROW_BYTES))
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[0], NULL,
                          "size %.40s%s is over 1 PiB (2^50 bytes): not an nccl-tests size",
                          f[0], strlen(f[0]) > 40 ? "..." : "");
    if (t->nrows > 1 && r->bytes <= t->rows[t->nrows - 2].bytes)
        return cp_fail_at(e, CP_EINPUT, path, lineno, col[0], NULL,
                          "sizes must increase from row to row (%s after %.0f)", f[0],
                          t->rows[t->nrows - 2].bytes);
    return CP_OK;
}

int cp_nccl_load(const char *path, cp_nccl_table *t, cp_err *e)
{
    char *text, *line, *next;
    size_t len;
    int lineno = 0, rc;

    memset(t, 0, sizeof *t);
    t->gpus_per_thread = t->nthreads = 1;
    rc = cp_read_file(path, &text, &len, e);
    if (rc)
        return rc;
    for (line = text; line && rc == CP_OK; line = next) {
        char *f[24];
        int col[24], n;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        n = split(line, f, col, 24);
        if (n >= 2 && strcmp(f[0], "#") == 0)
            parse_header(f, n, t);
        else if (n >= 3 && is_uint(f[0]) && is_uint(f[1]) && isalpha((unsigned char)f[2][0]))
            rc = add_row(path, lineno, f, col, n, t, e);
    }
    free(text);
    if (rc == CP_OK && t->nrows == 0)
        rc = cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                        "no nccl-tests data rows found (expected lines like '8 2 float sum "
                        "48.46 0.00 0.00 1e-07 ...')");
    if (rc)
        cp_nccl_free(t);
    return rc;
}

void cp_nccl_free(cp_nccl_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
