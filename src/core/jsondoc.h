/*
 * jsondoc.h - a decoded JSON input file that can say where each value is.
 *
 * jansson gives a line and column for syntax errors but not for the values
 * it decodes, and most of our errors are semantic ("links[3].gbs is
 * negative").  A cp_jdoc keeps the file text beside the tree; when a loader
 * rejects a value, cp_jdoc_fail walks the text and the tree together (object
 * members appear in the tree in text order: jansson preserves insertion order
 * and we reject duplicate keys) until it reaches that value, and reports its
 * line and column.  The walk runs only on the error path, so loading costs
 * nothing extra.
 *
 * The typed getters below read one member of an object, check its type and
 * range, and report a positioned error naming the field, the bad value and
 * what was expected.  The loaders are strict: cp_jdoc_check_keys rejects any
 * key that is not in the schema (every object may carry a "note" string).
 */
#ifndef CP_JSONDOC_H
#define CP_JSONDOC_H

#include <jansson.h>
#include <stdint.h>

#include "core/err.h"

typedef struct cp_jdoc {
    char *path;     /* file name as given by the user, owned */
    char *text;     /* the whole file, NUL-terminated, owned */
    size_t len;     /* bytes in text */
    json_t *root;   /* decoded top-level object, owned (one reference) */
} cp_jdoc;

/* Read and decode `path`.  The top level must be an object.  Syntax errors
 * come back as CP_EINPUT with jansson's line and column.  On error the
 * document is left empty (cp_jdoc_free is still safe). */
int cp_jdoc_load(cp_jdoc *d, const char *path, cp_err *e);

/* Decode `text` (copied) as if read from `path`; for tests and importers. */
int cp_jdoc_load_text(cp_jdoc *d, const char *path, const char *text, size_t len,
                      cp_err *e);

/* Release everything; a zeroed or already-freed document is a no-op. */
void cp_jdoc_free(cp_jdoc *d);

/* Report a CP_EINPUT error about `obj` (or, when `key` is not NULL and obj
 * has that member, about the member's value) with its line and column.
 * `where` is the path of obj, e.g. "links[3]"; the key is appended to it.
 * Returns CP_EINPUT. */
int cp_jdoc_fail(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *key,
                 const char *where, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The analyzer's view (see err.h): cp_jdoc_fail always returns CP_EINPUT. */
#if defined(__clang_analyzer__) && !defined(CP_JSONDOC_IMPLEMENTATION)
#define cp_jdoc_fail(...) (cp_jdoc_fail(__VA_ARGS__), CP_EINPUT)
#endif

/* Line and column (1-based) of `obj` or of its member `key`; 0,0 if not found. */
void cp_jdoc_locate(const cp_jdoc *d, const json_t *obj, const char *key, int *line,
                    int *col);

/* The 1-based line of each element of array `arr` into lines[0..size-1], in
 * one linear pass (0 for any not found). */
void cp_jdoc_elem_lines(const cp_jdoc *d, const json_t *arr, int *lines);

/* Flags for the getters. */
enum {
    CP_REQ = 1 << 0,      /* the member must be present */
    CP_POS = 1 << 1,      /* number must be > 0 */
    CP_NONNEG = 1 << 2,   /* number must be >= 0 (and not -0) */
};

/* Reject any member of `obj` whose key is not in `allowed` (NULL-terminated).
 * "note" is always allowed and must be a string. */
int cp_jdoc_check_keys(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                       const char *const *allowed);

/* A string member.  *out is borrowed from the tree (valid while the document
 * lives) and left untouched when the member is absent and not required.
 * Strings must be non-empty and at most `maxlen` bytes. */
int cp_jget_str(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, size_t maxlen, const char **out);

/* A finite number member; `expect` says what was expected in words, e.g.
 * "a positive number of GB/s per direction". */
int cp_jget_num(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, const char *expect, double *out);

/* A finite number member in [lo, hi] (and > 0 with CP_POS, >= 0 and not -0
 * with CP_NONNEG); out of range it is refused as "over/under the sanity
 * limit", which tells the user to check the units.  *out is left untouched
 * when the member is absent and not required. */
int cp_jget_num_range(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                      const char *key, unsigned flags, double lo, double hi,
                      const char *expect, double *out);

/* An integer member in [lo, hi]. */
int cp_jget_int(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, int64_t lo, int64_t hi, int64_t *out);

/* A string member that must be one of `names` (NULL-terminated); *out is the
 * index.  Aliases can be listed by repeating a target index in `ids` (same
 * length as names) or passing NULL for the identity. */
int cp_jget_enum(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                 const char *key, unsigned flags, const char *const *names,
                 const int *ids, int *out);

/* An array member (borrowed), possibly required and non-empty. */
int cp_jget_array(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                  const char *key, unsigned flags, const json_t **out);

/* A boolean member: JSON true or false (1 or 0 in *out, untouched when
 * absent and not required); anything else is refused at its position. */
int cp_jget_bool(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                 const char *key, unsigned flags, int *out);

/* An object member (borrowed). */
int cp_jget_object(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                   const char *key, unsigned flags, const json_t **out);

/* Write "where.key" (or "key") into buf; returns buf.  For error paths. */
const char *cp_jpath(char *buf, size_t cap, const char *where, const char *key);

/* Write "where[i]" into buf; returns buf. */
const char *cp_jpath_index(char *buf, size_t cap, const char *where, size_t i);

/* A short rendering of a value for messages ("-25", "\"gpux\"", "an object"). */
void cp_jshow(const json_t *v, char *buf, size_t cap);

#endif
