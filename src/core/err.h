/*
 * err.h - the one error record every stage fills and main prints.
 *
 * Nothing below main() prints or exits.  A function that can fail returns an
 * int status (CP_OK, CP_EINTERNAL or CP_EINPUT: the same numbers as the
 * process exit codes) and, on failure, fills a cp_err with where the problem
 * is (file, line, column, field path) and what is wrong.  main prints it once,
 * in one format that editors understand:
 *
 *     topo.json:14:9: error: links[3].gbs: expected a positive number (GB/s), got -25
 *
 * followed by the offending source line and a caret when the line is known.
 */
#ifndef CP_ERR_H
#define CP_ERR_H

#include <stddef.h>
#include <stdio.h>

/* Status codes double as exit codes (see DESIGN.md section 3). */
enum cp_status {
    CP_OK = 0,        /* success */
    CP_EINTERNAL = 1, /* our fault or the system's: out of memory, I/O, solver failure */
    CP_EINPUT = 2     /* the user's input or usage is wrong */
};

typedef struct cp_err {
    int status;          /* enum cp_status of the failure; CP_OK when unset */
    char file[256];      /* input file the error is about, "" when none */
    int line, col;       /* 1-based position in file, 0 when unknown */
    char where[192];     /* field path such as links[3].gbs, "" when none */
    char msg[640];       /* what is wrong and what was expected */
    char src_line[200];  /* the text of line `line`, for the caret display */
    int src_col;         /* the caret's column in src_line when a long line is shown
                          * as a window around `col`; 0 when it is `col` */
} cp_err;

/* Reset to "no error". */
void cp_err_clear(cp_err *e);

/* Record an error that has no position; returns `status` so callers can
 * write `return cp_fail(e, CP_EINPUT, "...")`. */
int cp_fail(cp_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record an error about a file with an optional position (0 = unknown) and an
 * optional field path (NULL or ""). */
int cp_fail_at(cp_err *e, int status, const char *file, int line, int col,
               const char *where, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Same as cp_fail_at with a va_list. */
int cp_vfail_at(cp_err *e, int status, const char *file, int line, int col,
                const char *where, const char *fmt, va_list ap);

/* Show line `line` of `text` (len bytes; the input the error is about) under
 * the message, with a caret at e->col: copies it into e->src_line.  Long
 * lines are cut to a window around the column.  A line past the end of the
 * text is a no-op.  Used by every reader that keeps its input's text (the
 * JSON documents, the nvidia-smi matrix importer). */
void cp_err_set_source(cp_err *e, const char *text, size_t len, int line);

/* Print the error in the one format described above. */
void cp_err_print(const cp_err *e, FILE *out);

/* For the static analyzer only (make lint): it reads one file at a time, so
 * it cannot see that the helpers above return their `status` argument, and
 * follows "return cp_fail(...)" as if it could return CP_OK, past the
 * failure into code that reads what was never computed.  Saying so here
 * removes that class of false report everywhere.  Compilers never see it. */
#if defined(__clang_analyzer__) && !defined(CP_ERR_IMPLEMENTATION)
#define cp_fail(e, status, ...) (cp_fail((e), (status), __VA_ARGS__), (status))
#define cp_fail_at(e, status, ...) (cp_fail_at((e), (status), __VA_ARGS__), (status))
#define cp_vfail_at(e, status, ...) (cp_vfail_at((e), (status), __VA_ARGS__), (status))
#endif

#endif
