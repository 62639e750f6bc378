/*
 * xml.c - the element tree of xml.h, read by libexpat.
 *
 * expat tokenises, checks well-formedness, decodes entities and character
 * references and converts declared encodings to UTF-8.  What stays here is
 * what expat does not do for us:
 *   - building the cp_xml tree (start/end handlers) with the depth, element
 *     and attribute limits of xml.h;
 *   - refusing DTDs and CDATA sections (no entity declarations can be read,
 *     so nothing can expand), and NUL bytes;
 *   - positions in bytes: expat counts columns in characters, and its error
 *     position is the start of the token it could not read.  The messages
 *     and positions of the reader this replaced (which tests/data/bad/ncclxml
 *     and the import cases pin) point at the offending byte, so an error's
 *     offset is moved from the token's start to that byte by looking at the
 *     text around it (fix_error), and every offset becomes LINE:COL by
 *     counting newlines (where).
 * Cost: one pass of expat, plus one forward pass for the element positions
 * (the offsets of start tags only grow).
 */
#include <expat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/xml.h"

typedef struct rd {
    const char *path, *s;
    size_t n;
    XML_Parser p;
    cp_xml *root;
    cp_xml *open[CP_XML_MAX_DEPTH + 1]; /* the open elements, open[0] the root */
    int depth, elements;
    size_t pos_off;   /* the last offset turned into a position ... */
    int pos_line, pos_col; /* ... and its line and column (where) */
    int failed;       /* a handler stopped the parser and filled e */
    int flags;        /* CP_XML_* */
    cp_err *e;
} rd;

/* Line and column (1-based, columns in bytes) of byte `off`.  Offsets asked
 * for in document order continue from the last one; an earlier one starts
 * over from the top. */
static void where(rd *r, size_t off, int *line, int *col)
{
    if (off > r->n)
        off = r->n;
    if (off < r->pos_off) {
        r->pos_off = 0;
        r->pos_line = r->pos_col = 1;
    }
    for (; r->pos_off < off; r->pos_off++) {
        if (r->s[r->pos_off] == '\n') {
            r->pos_line++;
            r->pos_col = 1;
        } else {
            r->pos_col++;
        }
    }
    *line = r->pos_line;
    *col = r->pos_col;
}

static int fail_off(rd *r, size_t off, const char *msg, const char *detail)
{
    int line, col;
    where(r, off, &line, &col);
    return cp_fail_at(r->e, CP_EINPUT, r->path, line, col, NULL, "%s%s%s", msg,
                      detail ? ": " : "", detail ? detail : "");
}

/* Stop expat from a handler with an input error at the current event. */
static void stop(rd *r, const char *msg, const char *detail)
{
    long off = XML_GetCurrentByteIndex(r->p);
    fail_off(r, off < 0 ? 0 : (size_t)off, msg, detail);
    r->failed = 1;
    XML_StopParser(r->p, XML_FALSE);
}

static void stop_oom(rd *r)
{
    cp_fail(r->e, CP_EINTERNAL, "out of memory");
    r->failed = 1;
    XML_StopParser(r->p, XML_FALSE);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':' || (unsigned char)c >= 0x80;
}

/* In the start tag at `tag` (its '<'), the offset of the k-th attribute's
 * name (k from 0) and its length; -1 when the tag has fewer.  Only used on
 * start tags expat has read whole or stopped inside, to place a message
 * where the replaced reader did. */
static long attr_at(const rd *r, size_t tag, int k, size_t *namelen)
{
    size_t i = tag + 1;
    int a;
    while (i < r->n && is_name(r->s[i]))
        i++;
    for (a = 0;; a++) {
        size_t start;
        char q;
        while (i < r->n && is_space(r->s[i]))
            i++;
        start = i;
        while (i < r->n && is_name(r->s[i]))
            i++;
        if (i == start)
            return -1;
        if (a == k) {
            *namelen = i - start;
            return (long)start;
        }
        while (i < r->n && (is_space(r->s[i]) || r->s[i] == '='))
            i++;
        if (i >= r->n || (r->s[i] != '"' && r->s[i] != '\''))
            return -1;
        q = r->s[i++];
        while (i < r->n && r->s[i] != q)
            i++;
        i++;
    }
}

static void XMLCALL on_start(void *u, const XML_Char *name, const XML_Char **atts)
{
    rd *r = u;
    cp_xml *x, *parent = r->depth > 0 ? r->open[r->depth - 1] : NULL;
    long off = XML_GetCurrentByteIndex(r->p);
    int k;
    if (r->depth + 1 > CP_XML_MAX_DEPTH)
        return stop(r, "elements nested deeper than 64", NULL);
    if (++r->elements > CP_XML_MAX_ELEMENTS)
        return stop(r, "more than 100,000 elements", NULL);
    for (k = 0; atts[k]; k += 2)
        if (k / 2 >= CP_XML_MAX_ATTRS) { /* placed at the 33rd attribute's name */
            size_t len;
            long at = attr_at(r, (size_t)off, CP_XML_MAX_ATTRS, &len);
            fail_off(r, at < 0 ? (size_t)off : (size_t)at, "too many attributes (at most 32)",
                     name);
            r->failed = 1;
            XML_StopParser(r->p, XML_FALSE);
            return;
        }
    if (!(x = calloc(1, sizeof *x)) || !(x->name = strdup(name))) {
        free(x);
        return stop_oom(r);
    }
    if (parent) {
        /* p is a cp_xml **: the size of one pointer is what is meant */
        /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
        cp_xml **p = realloc(parent->kid, (size_t)(parent->nkid + 1) * sizeof *p);
        if (!p) {
            cp_xml_free(x);
            return stop_oom(r);
        }
        parent->kid = p;
        parent->kid[parent->nkid++] = x;
    } else {
        r->root = x;
    }
    r->open[r->depth++] = x;
    where(r, off < 0 ? 0 : (size_t)off, &x->line, &x->col);
    for (k = 0; atts[k]; k += 2, x->nattr++) {
        x->key[x->nattr] = strdup(atts[k]);
        x->val[x->nattr] = strdup(atts[k + 1]);
        if (!x->key[x->nattr] || !x->val[x->nattr]) {
            x->nattr++; /* freed with the tree */
            return stop_oom(r);
        }
    }
}

static void XMLCALL on_end(void *u, const XML_Char *name)
{
    rd *r = u;
    (void)name; /* expat has matched it to the start tag */
    r->depth--;
}

/* A DOCTYPE could declare entities (and so expand them without bound): it
 * is refused before its subset is read, as is CDATA, which NCCL never
 * writes.  CP_XML_EXTERNAL_DOCTYPE lets one without a subset through: expat
 * reads no external DTD unless asked to. */
static void XMLCALL on_doctype(void *u, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    rd *r = u;
    long off = XML_GetCurrentByteIndex(r->p);
    (void)name;
    (void)sysid;
    (void)pubid;
    if ((r->flags & CP_XML_EXTERNAL_DOCTYPE) && !has_internal_subset)
        return;
    /* expat is past the name: report at the "<!DOCTYPE" */
    while (off > 0 && r->s[off] != '<')
        off--;
    fail_off(r, off < 0 ? 0 : (size_t)off, "DTDs and CDATA sections are not supported", NULL);
    r->failed = 1;
    XML_StopParser(r->p, XML_FALSE);
}

static void XMLCALL on_cdata(void *u)
{
    stop(u, "DTDs and CDATA sections are not supported", NULL);
}

/* Index of the next '<' at or after off, or n. */
static size_t next_lt(const rd *r, size_t off)
{
    const char *lt = off < r->n ? memchr(r->s + off, '<', r->n - off) : NULL;
    return lt ? (size_t)(lt - r->s) : r->n;
}

/* Inside a start tag, an attribute value is open at `off`: an odd number
 * of quotes since the last '<' (a '>' may sit inside the value). */
static int in_value(const rd *r, size_t off)
{
    size_t i = off, quotes = 0;
    while (i > 0 && r->s[i - 1] != '<')
        quotes += r->s[--i] == '"';
    return i > 0 && r->s[i - 1] == '<' && quotes % 2 == 1;
}

/* The first '&' at or after off that starts no predefined entity and no
 * character reference; off when none (expat knows better). */
static size_t unknown_entity(const rd *r, size_t off)
{
    static const char *const known[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"};
    size_t i, k;
    for (i = off; i < r->n; i++) {
        if (r->s[i] != '&')
            continue;
        for (k = 0; k < sizeof known / sizeof known[0]; k++)
            if (r->n - i >= strlen(known[k]) && memcmp(r->s + i, known[k], strlen(known[k])) == 0)
                break;
        if (k == sizeof known / sizeof known[0])
            return i;
    }
    return off;
}

/* The message and byte offset for an invalid token at `off`. */
static int invalid_token(rd *r, size_t off)
{
    size_t b = off;
    if (off < r->n && r->s[off] == '<' && in_value(r, off))
        return fail_off(r, off, "'<' inside an attribute value", NULL);
    while (b > 0 && is_space(r->s[b - 1]))
        b--;
    if (b > 0 && r->s[b - 1] == '=')
        return fail_off(r, off, "expected a quoted attribute value", NULL);
    return fail_off(r, off, "not well-formed XML", NULL);
}

/* An expat error, as the message and position the replaced reader gave
 * (see the file's opening paragraph). */
static int fix_error(rd *r)
{
    enum XML_Error code = XML_GetErrorCode(r->p);
    long at = XML_GetCurrentByteIndex(r->p);
    size_t off = at < 0 ? r->n : (size_t)at, len = 0;
    size_t rest = r->n - (off < r->n ? off : r->n);
    const char *open = r->depth > 0 ? r->open[r->depth - 1]->name : NULL;
    if (code == XML_ERROR_NO_MEMORY)
        return cp_fail(r->e, CP_EINTERNAL, "out of memory");
    if (!r->root && next_lt(r, 0) == r->n) /* text only, or nothing */
        return fail_off(r, r->n, "no element in the file", NULL);
    switch (code) {
    case XML_ERROR_NO_ELEMENTS:
        return open ? fail_off(r, r->n, "missing end tag for", open)
                    : fail_off(r, r->n, "no element in the file", NULL);
    case XML_ERROR_TAG_MISMATCH: /* after "</" and the name, where it differs */
        for (off += 2; off < r->n && is_name(r->s[off]); off++)
            ;
        return fail_off(r, off, "end tag does not match the open element", open);
    case XML_ERROR_JUNK_AFTER_DOC_ELEMENT:
        return fail_off(r, next_lt(r, off) < r->n ? next_lt(r, off) : off,
                        "content after the root element", NULL);
    case XML_ERROR_DUPLICATE_ATTRIBUTE: { /* expat is at the second name: after it */
        char name[64];
        for (len = 0; off + len < r->n && is_name(r->s[off + len]); len++)
            ;
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), r->s + off);
        return fail_off(r, off + len, "repeated attribute", name);
    }
    case XML_ERROR_UNDEFINED_ENTITY: { /* at its '&' */
        int in_tag = off < r->n && r->s[off] == '<';
        size_t amp = unknown_entity(r, off);
        return fail_off(r, amp, in_tag ? "unknown entity in an attribute value"
                                       : "unknown entity", NULL);
    }
    case XML_ERROR_UNCLOSED_TOKEN:
    case XML_ERROR_PARTIAL_CHAR:
        if (rest >= 4 && memcmp(r->s + off, "<!--", 4) == 0)
            return fail_off(r, off, "unterminated comment", NULL);
        if (rest >= 2 && memcmp(r->s + off, "<?", 2) == 0)
            return fail_off(r, off, "unterminated <?...?>", NULL);
        if (in_value(r, r->n))
            return fail_off(r, r->n, "unterminated attribute value", NULL);
        if (rest > 1 && r->s[off] == '<' && is_name(r->s[off + 1])) { /* name the tag */
            char name[64];
            for (len = 1; off + len < r->n && len < 63 && is_name(r->s[off + len]); len++)
                ;
            snprintf(name, sizeof name, "%.*s", (int)len - 1, r->s + off + 1);
            return fail_off(r, r->n, "unterminated start tag", name);
        }
        return fail_off(r, r->n, "unterminated start tag", NULL);
    case XML_ERROR_INVALID_TOKEN:
        return invalid_token(r, off);
    default:
        return fail_off(r, off, "not well-formed XML", XML_ErrorString(code));
    }
}

/* Feed the text to expat; INT_MAX bytes at a time (its length is an int). */
static int run(rd *r)
{
    size_t done = 0;
    do {
        size_t chunk = r->n - done > INT_MAX ? INT_MAX : r->n - done;
        int last = done + chunk == r->n;
        if (XML_Parse(r->p, r->s + done, (int)chunk, last) != XML_STATUS_OK)
            return r->failed ? r->e->status : fix_error(r);
        done += chunk;
    } while (done < r->n);
    return CP_OK;
}

int cp_xml_parse(const char *path, const char *text, size_t len, cp_xml **root, cp_err *e)
{
    return cp_xml_parse_ex(path, text, len, 0, root, e);
}

int cp_xml_parse_ex(const char *path, const char *text, size_t len, int flags, cp_xml **root,
                    cp_err *e)
{
    rd r;
    int rc;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.s = text;
    r.n = len;
    r.pos_line = r.pos_col = 1;
    r.e = e;
    r.flags = flags;
    *root = NULL;
    if (memchr(text, '\0', len))
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "the file contains a NUL byte");
    if (!(r.p = XML_ParserCreate(NULL)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    XML_SetUserData(r.p, &r);
    XML_SetElementHandler(r.p, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(r.p, on_doctype);
    XML_SetStartCdataSectionHandler(r.p, on_cdata);
    rc = run(&r);
    XML_ParserFree(r.p);
    if (rc) {
        cp_xml_free(r.root);
        return rc;
    }
    *root = r.root;
    return CP_OK;
}

void cp_xml_free(cp_xml *x)
{
    int i;
    if (!x)
        return;
    for (i = 0; i < x->nattr; i++) {
        free(x->key[i]);
        free(x->val[i]);
    }
    for (i = 0; i < x->nkid; i++)
        cp_xml_free(x->kid[i]);
    free(x->kid);
    free(x->name);
    free(x);
}

const char *cp_xml_attr(const cp_xml *x, const char *key)
{
    int i;
    for (i = 0; i < x->nattr; i++)
        if (strcmp(x->key[i], key) == 0)
            return x->val[i];
    return NULL;
}
