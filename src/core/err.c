/*
 * err.c - filling and printing the error record (see err.h).
 */
#include <stdarg.h>
#include <string.h>

#define CP_ERR_IMPLEMENTATION /* the definitions below, not the analyzer's view */
#include "core/err.h"

void cp_err_clear(cp_err *e)
{
    memset(e, 0, sizeof *e);
}

/* snprintf into a fixed field; truncation is acceptable for messages. */
static void copy_field(char *dst, size_t cap, const char *src)
{
    if (!src)
        src = "";
    snprintf(dst, cap, "%s", src);
}

int cp_vfail_at(cp_err *e, int status, const char *file, int line, int col,
                const char *where, const char *fmt, va_list ap)
{
    if (!e)
        return status;
    cp_err_clear(e);
    e->status = status;
    copy_field(e->file, sizeof e->file, file);
    e->line = line;
    e->col = col;
    copy_field(e->where, sizeof e->where, where);
    /* clang 14's va_list checker calls `ap` uninitialised when it follows a
     * va_list parameter into this function; every caller (cp_fail,
     * cp_fail_at, cp_jdoc_fail) has called va_start.  A false positive. */
    vsnprintf(e->msg, sizeof e->msg, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
    return status;
}

int cp_fail_at(cp_err *e, int status, const char *file, int line, int col,
               const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_vfail_at(e, status, file, line, col, where, fmt, ap);
    va_end(ap);
    return status;
}

int cp_fail(cp_err *e, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_vfail_at(e, status, NULL, 0, 0, NULL, fmt, ap);
    va_end(ap);
    return status;
}

/* Copy line `line` of the text into e->src_line.  Long lines are shown as a
 * window around the column; e->src_col is the caret's place in that window
 * (e->col stays the column in the file, for editors).  Lines end
 * at '\n' only (columns count from there, as jansson's do); a CR before it
 * is dropped, and other CRs and NULs inside the line are shown as spaces.
 * The column may lie past the line's end (an error at the end of the file):
 * the window then shows the line's tail. */
void cp_err_set_source(cp_err *e, const char *text, size_t len, int line)
{
    size_t i = 0, end, start, k;
    int ln = 1, width = (int)sizeof e->src_line - 1;
    while (i < len && ln < line) {
        if (text[i++] == '\n')
            ln++;
    }
    if (ln != line || i >= len)
        return;
    end = i;
    while (end < len && text[end] != '\n')
        end++;
    if (end > i && text[end - 1] == '\r')
        end--;
    start = i;
    e->src_col = 0;
    if (e->col > width - 20) {
        size_t shift = (size_t)(e->col - width / 2);
        if (shift > end - start)
            shift = end - start;
        start += shift;
        e->src_col = e->col - (int)shift;
    }
    if (end > start + (size_t)width)
        end = start + (size_t)width;
    memcpy(e->src_line, text + start, end - start);
    e->src_line[end - start] = '\0';
    for (k = 0; k < end - start; k++)
        if (e->src_line[k] == '\r' || e->src_line[k] == '\0')
            e->src_line[k] = ' ';
}

/* The source line with tabs kept (so the caret lines up) and a caret under
 * column `col`.  Column counts bytes, as jansson's do. */
static void print_caret(const cp_err *e, FILE *out)
{
    int i, col = e->src_col > 0 ? e->src_col : e->col;
    if (!e->src_line[0] || col <= 0)
        return;
    fprintf(out, "  %s\n  ", e->src_line);
    for (i = 1; i < col && e->src_line[i - 1]; i++)
        fputc(e->src_line[i - 1] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

void cp_err_print(const cp_err *e, FILE *out)
{
    const char *kind = e->status == CP_EINTERNAL ? "internal error" : "error";
    if (e->file[0] && e->line > 0)
        fprintf(out, "%s:%d:%d: %s: ", e->file, e->line, e->col > 0 ? e->col : 1, kind);
    else if (e->file[0])
        fprintf(out, "%s: %s: ", e->file, kind);
    else
        fprintf(out, "coarse-plan: %s: ", kind);
    if (e->where[0])
        fprintf(out, "%s: ", e->where);
    fprintf(out, "%s\n", e->msg[0] ? e->msg : "unknown error");
    print_caret(e, out);
}
