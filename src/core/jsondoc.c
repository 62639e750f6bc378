/*
 * jsondoc.c - JSON documents that remember where each value sits
 * (see jsondoc.h for why and how).
 *
 * The position walk is a small recursive scanner over text that jansson has
 * already accepted, advancing through the decoded tree in step.  It is only
 * run when reporting an error; cost is linear in the bytes before the value.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CP_ERR_IMPLEMENTATION      /* cp_vfail_at is called with a va_list */
#define CP_JSONDOC_IMPLEMENTATION  /* the definitions below, not the analyzer's view */
#include "core/fileio.h"
#include "core/jsondoc.h"

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */

static void offset_to_linecol(const char *text, size_t off, int *line, int *col);

/* JSON text never holds a raw NUL byte, but jansson accepts one right after
 * a number ("1\0"), and everything downstream treats text as a C string.
 * Refuse it with its position before decoding. */
static int reject_nul(const char *path, const char *text, size_t len, cp_err *e)
{
    const char *nul = memchr(text, '\0', len);
    int line, col;
    if (!nul)
        return CP_OK;
    offset_to_linecol(text, (size_t)(nul - text), &line, &col);
    cp_fail_at(e, CP_EINPUT, path, line, col, NULL,
               "invalid JSON: NUL byte (a file of text was expected)");
    cp_err_set_source(e, text, len, line);
    return CP_EINPUT;
}

/* jansson drops a character from a string whose buffer it cannot grow
 * and goes on ("Meta" read as "Met", issue 24 item 5's allocation-failure
 * sweep): its allocations go through this watch, and a parse during
 * which one failed is out of memory, whatever jansson returned. */
static _Thread_local int parse_oom;

static void *watch_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        parse_oom = 1;
    return p;
}

static void watch_free(void *p)
{
    free(p);
}

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

static void watch_install(void)
{
    json_set_alloc_funcs(watch_malloc, watch_free);
}

int cp_jdoc_load_text(cp_jdoc *d, const char *path, const char *text, size_t len,
                      cp_err *e)
{
    json_error_t jerr;

    memset(d, 0, sizeof *d);
    if (reject_nul(path, text, len, e))
        return CP_EINPUT;
    d->path = strdup(path);
    d->text = malloc(len + 1);
    if (!d->path || !d->text) {
        cp_jdoc_free(d);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    memcpy(d->text, text, len);
    d->text[len] = '\0';
    d->len = len;
    pthread_once(&watch_once, watch_install);
    parse_oom = 0;
    d->root = json_loadb(d->text, d->len, JSON_REJECT_DUPLICATES, &jerr);
    if (parse_oom) {
        cp_jdoc_free(d);
        return cp_fail(e, CP_EINTERNAL, "%s: out of memory reading JSON", path);
    }
    if (!d->root && json_error_code(&jerr) != json_error_out_of_memory) {
        /* jansson reports a failed allocation inside a string or a number as
         * a syntax error there; the text is at fault only if a second parse
         * fails too (issue 24, item 5: out of memory is not bad input) */
        json_error_t again;
        json_t *v = json_loadb(d->text, d->len, JSON_REJECT_DUPLICATES, &again);
        if (v) {
            json_decref(v);
            cp_jdoc_free(d);
            return cp_fail(e, CP_EINTERNAL, "%s: reading JSON failed (out of memory?): %s",
                           path, jerr.text);
        }
        jerr = again;
    }
    if (!d->root && json_error_code(&jerr) == json_error_out_of_memory) {
        cp_jdoc_free(d);
        return cp_fail(e, CP_EINTERNAL, "%s: out of memory reading JSON", path);
    }
    if (!d->root) {
        cp_fail_at(e, CP_EINPUT, path, jerr.line > 0 ? jerr.line : 1,
                   jerr.column > 0 ? jerr.column : 1, NULL, "invalid JSON: %s", jerr.text);
        cp_err_set_source(e, d->text, d->len, e->line);
        cp_jdoc_free(d);
        return CP_EINPUT;
    }
    if (!json_is_object(d->root)) {
        cp_jdoc_fail(d, e, d->root, NULL, "", "expected a JSON object at the top level");
        cp_jdoc_free(d);
        return CP_EINPUT;
    }
    return CP_OK;
}

int cp_jdoc_load(cp_jdoc *d, const char *path, cp_err *e)
{
    char *text;
    size_t len;
    int rc;

    memset(d, 0, sizeof *d);
    rc = cp_read_file(path, &text, &len, e);
    if (rc)
        return rc;
    rc = cp_jdoc_load_text(d, path, text, len, e);
    free(text);
    return rc;
}

void cp_jdoc_free(cp_jdoc *d)
{
    if (!d)
        return;
    json_decref(d->root);
    free(d->text);
    free(d->path);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------------------ */
/* Finding a value's offset in the text                                      */

typedef struct scan {
    const char *s;  /* text */
    size_t n;       /* its length */
    size_t i;       /* cursor */
} scan;

/* What we look for: a value, or one member (by key) of an object. */
typedef struct target {
    const json_t *value;
    const char *key;   /* NULL: the value itself */
} target;

static void skip_ws(scan *sc)
{
    while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
                             sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
        sc->i++;
}

static void skip_string(scan *sc)
{
    sc->i++; /* opening quote */
    while (sc->i < sc->n && sc->s[sc->i] != '"') {
        if (sc->s[sc->i] == '\\')
            sc->i++;
        sc->i++;
    }
    sc->i++; /* closing quote */
    if (sc->i > sc->n) /* unterminated: the callers index text[i - 1] */
        sc->i = sc->n;
}

/* A number or literal ends at a delimiter.  memchr, not strchr: jansson
 * accepts a NUL byte right after a number ("1\0"), and strchr would call
 * the NUL a delimiter, leaving the cursor stuck on it. */
static void skip_scalar(scan *sc)
{
    static const char delim[] = ",]} \t\r\n";
    if (sc->i < sc->n && sc->s[sc->i] == '"') {
        skip_string(sc);
        return;
    }
    while (sc->i < sc->n && !memchr(delim, sc->s[sc->i], sizeof delim - 1))
        sc->i++;
}

static int walk(scan *sc, const json_t *node, const target *t, size_t *out);

/* Members of an object; `node` may be NULL when the tree is out of step
 * (it never should be, but the scanner must not trust that). */
static int walk_object(scan *sc, const json_t *node, const target *t, size_t *out)
{
    void *it = node ? json_object_iter((json_t *)node) : NULL;
    size_t last = (size_t)-1;
    sc->i++; /* '{' */
    for (;;) {
        const json_t *child = NULL;
        skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] == '}' || sc->i == last) {
            sc->i++;
            return 0;
        }
        last = sc->i; /* text we do not understand must not stop the cursor */
        skip_string(sc);
        skip_ws(sc);
        sc->i++; /* ':' */
        skip_ws(sc);
        if (it) {
            child = json_object_iter_value(it);
            if (t->key && node == t->value && strcmp(json_object_iter_key(it), t->key) == 0) {
                *out = sc->i;
                return 1;
            }
        }
        if (walk(sc, child, t, out))
            return 1;
        if (it)
            it = json_object_iter_next((json_t *)node, it);
        skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',')
            sc->i++;
    }
}

static int walk_array(scan *sc, const json_t *node, const target *t, size_t *out)
{
    size_t idx = 0, last = (size_t)-1;
    sc->i++; /* '[' */
    for (;;) {
        skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] == ']' || sc->i == last) {
            sc->i++;
            return 0;
        }
        last = sc->i; /* text we do not understand must not stop the cursor */
        if (walk(sc, node ? json_array_get(node, idx) : NULL, t, out))
            return 1;
        idx++;
        skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',')
            sc->i++;
    }
}

static int walk(scan *sc, const json_t *node, const target *t, size_t *out)
{
    skip_ws(sc);
    if (sc->i >= sc->n)
        return 0;
    if (node && node == t->value && !t->key) {
        *out = sc->i;
        return 1;
    }
    if (sc->s[sc->i] == '{')
        return walk_object(sc, json_is_object(node) ? node : NULL, t, out);
    if (sc->s[sc->i] == '[')
        return walk_array(sc, json_is_array(node) ? node : NULL, t, out);
    skip_scalar(sc);
    return 0;
}

/* Offset of the target in the text, or -1. */
static long find_offset(const cp_jdoc *d, const json_t *obj, const char *key)
{
    scan sc = {d->text, d->len, 0};
    target t = {obj, key};
    size_t off;
    if (!d->text || !d->root || !obj)
        return -1;
    if (walk(&sc, d->root, &t, &off))
        return (long)off;
    return -1;
}

static void offset_to_linecol(const char *text, size_t off, int *line, int *col)
{
    size_t i, bol = 0;
    int ln = 1;
    for (i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ln++;
            bol = i + 1;
        }
    }
    *line = ln;
    *col = (int)(off - bol) + 1;
}

void cp_jdoc_locate(const cp_jdoc *d, const json_t *obj, const char *key, int *line,
                    int *col)
{
    long off = -1;
    *line = *col = 0;
    if (key)
        off = find_offset(d, obj, key);
    if (off < 0)
        off = find_offset(d, obj, NULL);
    if (off >= 0)
        offset_to_linecol(d->text, (size_t)off, line, col);
}

/* Lines of the elements of array `arr`, in one pass: find the array, then
 * step over its elements counting newlines.  Unfound elements get 0. */
void cp_jdoc_elem_lines(const cp_jdoc *d, const json_t *arr, int *lines)
{
    long off = find_offset(d, arr, NULL);
    size_t n = json_array_size(arr), idx = 0, last;
    int line, col;
    scan sc;
    for (idx = 0; idx < n; idx++)
        lines[idx] = 0;
    if (off < 0 || d->text[off] != '[')
        return;
    offset_to_linecol(d->text, (size_t)off, &line, &col);
    sc.s = d->text;
    sc.n = d->len;
    sc.i = (size_t)off + 1;
    last = sc.i;
    for (idx = 0; idx < n; idx++) {
        target none = {NULL, NULL};
        size_t dummy, k;
        skip_ws(&sc);
        for (k = last; k < sc.i; k++)
            line += d->text[k] == '\n';
        last = sc.i;
        if (sc.i >= sc.n || d->text[sc.i] == ']')
            return;
        lines[idx] = line;
        walk(&sc, NULL, &none, &dummy);
        skip_ws(&sc);
        if (sc.i < sc.n && d->text[sc.i] == ',')
            sc.i++;
    }
}

int cp_jdoc_fail(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *key,
                 const char *where, const char *fmt, ...)
{
    va_list ap;
    int line, col;
    char path[192];

    cp_jdoc_locate(d, obj, key, &line, &col);
    va_start(ap, fmt);
    cp_vfail_at(e, CP_EINPUT, d->path, line, col,
                key ? cp_jpath(path, sizeof path, where, key) : where, fmt, ap);
    va_end(ap);
    if (e && line > 0)
        cp_err_set_source(e, d->text, d->len, line);
    return CP_EINPUT;
}

/* ------------------------------------------------------------------------ */
/* Paths and value rendering for messages                                    */

const char *cp_jpath(char *buf, size_t cap, const char *where, const char *key)
{
    if (where && where[0])
        snprintf(buf, cap, "%s.%s", where, key);
    else
        snprintf(buf, cap, "%s", key);
    return buf;
}

const char *cp_jpath_index(char *buf, size_t cap, const char *where, size_t i)
{
    snprintf(buf, cap, "%s[%zu]", where ? where : "", i);
    return buf;
}

void cp_jshow(const json_t *v, char *buf, size_t cap)
{
    char *s;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, cap, "an object");
        return;
    case JSON_ARRAY:
        snprintf(buf, cap, "an array");
        return;
    default:
        break;
    }
    s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
    if (!s) {
        snprintf(buf, cap, "?");
        return;
    }
    if (strlen(s) > 60)
        snprintf(buf, cap, "%.57s...", s);
    else
        snprintf(buf, cap, "%s", s);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* Strict schema checking and typed getters                                  */

/* "a, b, c" from a NULL-terminated list, for messages. */
static void join_names(const char *const *names, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (; *names && used + 1 < cap; names++) {
        int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", *names);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int cp_jdoc_check_keys(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                       const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        const char *const *a;
        int ok = strcmp(key, "note") == 0;
        for (a = allowed; !ok && *a; a++)
            ok = strcmp(key, *a) == 0;
        if (!ok) {
            char names[400];
            join_names(allowed, names, sizeof names);
            return cp_jdoc_fail(d, e, obj, key, where,
                                "unknown key \"%s\" (allowed here: %s, note)", key, names);
        }
        if (strcmp(key, "note") == 0 && !json_is_string(val))
            return cp_jdoc_fail(d, e, obj, key, where, "expected a string");
    }
    return CP_OK;
}

/* The member, or a "missing" error when required; *v NULL when absent. */
static int member(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                  const char *key, unsigned flags, const char *expect, json_t **v)
{
    *v = json_object_get(obj, key);
    if (!*v && (flags & CP_REQ)) {
        int line, col;
        cp_jdoc_locate(d, obj, NULL, &line, &col);
        cp_fail_at(e, CP_EINPUT, d->path, line, col, where,
                   "missing required key \"%s\" (%s)", key, expect);
        if (line > 0)
            cp_err_set_source(e, d->text, d->len, line);
        return CP_EINPUT;
    }
    return CP_OK;
}

int cp_jget_str(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, size_t maxlen, const char **out)
{
    json_t *v;
    char got[80];
    size_t n;
    int rc = member(d, e, obj, where, key, flags, "a non-empty string", &v);
    if (rc || !v)
        return rc;
    if (!json_is_string(v)) {
        cp_jshow(v, got, sizeof got);
        return cp_jdoc_fail(d, e, obj, key, where, "expected a string, got %s", got);
    }
    n = json_string_length(v);
    if (n == 0)
        return cp_jdoc_fail(d, e, obj, key, where, "expected a non-empty string");
    if (n > maxlen)
        return cp_jdoc_fail(d, e, obj, key, where,
                            "string is %zu bytes long; at most %zu allowed", n, maxlen);
    if (strlen(json_string_value(v)) != n)
        return cp_jdoc_fail(d, e, obj, key, where, "string contains a NUL character");
    *out = json_string_value(v);
    return CP_OK;
}

int cp_jget_num(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, const char *expect, double *out)
{
    json_t *v;
    char got[80];
    double x;
    int rc = member(d, e, obj, where, key, flags, expect, &v);
    if (rc || !v)
        return rc;
    cp_jshow(v, got, sizeof got);
    if (!json_is_number(v))
        return cp_jdoc_fail(d, e, obj, key, where, "expected %s, got %s", expect, got);
    x = json_number_value(v);
    if (!isfinite(x) || ((flags & CP_POS) && !(x > 0)) ||
        ((flags & CP_NONNEG) && (x < 0 || signbit(x))))
        return cp_jdoc_fail(d, e, obj, key, where, "expected %s, got %s", expect, got);
    *out = x;
    return CP_OK;
}

int cp_jget_num_range(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                      const char *key, unsigned flags, double lo, double hi,
                      const char *expect, double *out)
{
    double x = 0;
    int rc = cp_jget_num(d, e, obj, where, key, flags, expect, &x);
    if (rc || !json_object_get(obj, key))
        return rc;
    if (x > hi)
        return cp_jdoc_fail(d, e, obj, key, where, "expected %s, got %g (over the sanity "
                            "limit %g: check the units)", expect, x, hi);
    if (x < lo)
        return cp_jdoc_fail(d, e, obj, key, where, "expected %s, got %g (under the sanity "
                            "limit %g: check the units)", expect, x, lo);
    *out = x;
    return CP_OK;
}

int cp_jget_int(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                const char *key, unsigned flags, int64_t lo, int64_t hi, int64_t *out)
{
    json_t *v;
    char got[80];
    json_int_t x;
    int rc = member(d, e, obj, where, key, flags, "an integer", &v);
    if (rc || !v)
        return rc;
    cp_jshow(v, got, sizeof got);
    if (!json_is_integer(v))
        return cp_jdoc_fail(d, e, obj, key, where,
                            "expected an integer from %lld to %lld, got %s", (long long)lo,
                            (long long)hi, got);
    x = json_integer_value(v);
    if (x < lo || x > hi)
        return cp_jdoc_fail(d, e, obj, key, where,
                            "expected an integer from %lld to %lld, got %s", (long long)lo,
                            (long long)hi, got);
    *out = (int64_t)x;
    return CP_OK;
}

int cp_jget_enum(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                 const char *key, unsigned flags, const char *const *names,
                 const int *ids, int *out)
{
    const char *s = NULL;
    char list[400];
    int i, rc = cp_jget_str(d, e, obj, where, key, flags, 64, &s);
    if (rc || !s)
        return rc;
    for (i = 0; names[i]; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = ids ? ids[i] : i;
            return CP_OK;
        }
    }
    join_names(names, list, sizeof list);
    return cp_jdoc_fail(d, e, obj, key, where, "unknown value \"%s\" (expected one of: %s)",
                        s, list);
}

int cp_jget_array(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                  const char *key, unsigned flags, const json_t **out)
{
    json_t *v;
    char got[80];
    int rc = member(d, e, obj, where, key, flags, "an array", &v);
    if (rc || !v)
        return rc;
    if (!json_is_array(v)) {
        cp_jshow(v, got, sizeof got);
        return cp_jdoc_fail(d, e, obj, key, where, "expected an array, got %s", got);
    }
    *out = v;
    return CP_OK;
}

int cp_jget_bool(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                 const char *key, unsigned flags, int *out)
{
    json_t *v;
    char got[80];
    int rc = member(d, e, obj, where, key, flags, "true or false", &v);
    if (rc || !v)
        return rc;
    if (!json_is_boolean(v)) {
        cp_jshow(v, got, sizeof got);
        return cp_jdoc_fail(d, e, obj, key, where, "expected true or false, got %s", got);
    }
    *out = json_is_true(v);
    return CP_OK;
}

int cp_jget_object(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                   const char *key, unsigned flags, const json_t **out)
{
    json_t *v;
    char got[80];
    int rc = member(d, e, obj, where, key, flags, "an object", &v);
    if (rc || !v)
        return rc;
    if (!json_is_object(v)) {
        cp_jshow(v, got, sizeof got);
        return cp_jdoc_fail(d, e, obj, key, where, "expected an object, got %s", got);
    }
    *out = v;
    return CP_OK;
}
