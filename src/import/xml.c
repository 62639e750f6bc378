/*
 * xml.c - recursive-descent reader for the XML subset of xml.h.
 */
#include <stdlib.h>
#include <string.h>

#include "import/xml.h"

typedef struct rd {
    const char *path, *s;
    size_t n, i;
    int line, col;
    int elements;
    cp_err *e;
} rd;

static int at(const rd *r, const char *lit)
{
    size_t k = strlen(lit);
    return r->i + k <= r->n && memcmp(r->s + r->i, lit, k) == 0;
}

static void adv(rd *r, size_t k)
{
    while (k-- > 0 && r->i < r->n) {
        if (r->s[r->i] == '\n') {
            r->line++;
            r->col = 1;
        } else {
            r->col++;
        }
        r->i++;
    }
}

static int fail(rd *r, const char *msg, const char *detail)
{
    return cp_fail_at(r->e, CP_EINPUT, r->path, r->line, r->col, NULL, "%s%s%s", msg,
                      detail ? ": " : "", detail ? detail : "");
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':';
}

/* Skip whitespace, comments and text until the next '<' that starts an
 * element or an end tag. */
static int skip_misc(rd *r)
{
    for (;;) {
        while (r->i < r->n && r->s[r->i] != '<')
            adv(r, 1);
        if (at(r, "<!--")) {
            const char *end = strstr(r->s + r->i + 4, "-->");
            if (!end)
                return fail(r, "unterminated comment", NULL);
            adv(r, (size_t)(end - (r->s + r->i)) + 3);
        } else if (at(r, "<?")) {
            const char *end = strstr(r->s + r->i + 2, "?>");
            if (!end)
                return fail(r, "unterminated <?...?>", NULL);
            adv(r, (size_t)(end - (r->s + r->i)) + 2);
        } else if (at(r, "<!")) {
            return fail(r, "DTDs and CDATA sections are not supported", NULL);
        } else {
            return CP_OK;
        }
    }
}

static char *take_name(rd *r)
{
    size_t start = r->i;
    char *name;
    while (r->i < r->n && is_name(r->s[r->i]))
        adv(r, 1);
    if (r->i == start)
        return NULL;
    name = malloc(r->i - start + 1);
    if (name) {
        memcpy(name, r->s + start, r->i - start);
        name[r->i - start] = '\0';
    }
    return name;
}

/* The quoted value at the cursor, entities decoded (new string). */
static int take_value(rd *r, char **out)
{
    char q, *v;
    size_t k = 0;
    if (r->i >= r->n || (r->s[r->i] != '"' && r->s[r->i] != '\''))
        return fail(r, "expected a quoted attribute value", NULL);
    q = r->s[r->i];
    adv(r, 1);
    v = malloc(r->n - r->i + 1);
    if (!v)
        return cp_fail(r->e, CP_EINTERNAL, "out of memory");
    while (r->i < r->n && r->s[r->i] != q) {
        static const struct { const char *ent; char c; } ents[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        size_t j;
        if (r->s[r->i] == '<') {
            free(v);
            return fail(r, "'<' inside an attribute value", NULL);
        }
        if (r->s[r->i] == '&') {
            for (j = 0; j < 5 && !at(r, ents[j].ent); j++)
                ;
            if (j == 5) {
                free(v);
                return fail(r, "unknown entity in an attribute value", NULL);
            }
            v[k++] = ents[j].c;
            adv(r, strlen(ents[j].ent));
            continue;
        }
        v[k++] = r->s[r->i];
        adv(r, 1);
    }
    if (r->i >= r->n) {
        free(v);
        return fail(r, "unterminated attribute value", NULL);
    }
    adv(r, 1);
    v[k] = '\0';
    *out = v;
    return CP_OK;
}

static int element(rd *r, int depth, cp_xml **out);

static int attributes(rd *r, cp_xml *x)
{
    for (;;) {
        char *k, *v = NULL;
        int rc;
        while (r->i < r->n && is_space(r->s[r->i]))
            adv(r, 1);
        if (r->i >= r->n)
            return fail(r, "unterminated start tag", x->name);
        if (r->s[r->i] == '>' || at(r, "/>"))
            return CP_OK;
        if (x->nattr >= CP_XML_MAX_ATTRS)
            return fail(r, "too many attributes (at most 32)", x->name);
        if (!(k = take_name(r)))
            return fail(r, "expected an attribute name", x->name);
        x->key[x->nattr] = k;
        if (cp_xml_attr(x, k)) { /* XML 1.0 3.1: an attribute name appears once */
            x->val[x->nattr++] = NULL;
            return fail(r, "repeated attribute", k);
        }
        while (r->i < r->n && is_space(r->s[r->i]))
            adv(r, 1);
        if (r->i >= r->n || r->s[r->i] != '=') {
            x->val[x->nattr++] = NULL;
            return fail(r, "expected '=' after attribute", k);
        }
        adv(r, 1);
        while (r->i < r->n && is_space(r->s[r->i]))
            adv(r, 1);
        rc = take_value(r, &v);
        x->val[x->nattr++] = rc ? NULL : v;
        if (rc)
            return rc;
    }
}

static int add_kid(rd *r, cp_xml *x, cp_xml *kid)
{
    /* p is a cp_xml **: the size of one pointer is what is meant */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
    cp_xml **p = realloc(x->kid, (size_t)(x->nkid + 1) * sizeof *p);
    if (!p) {
        cp_xml_free(kid);
        return cp_fail(r->e, CP_EINTERNAL, "out of memory");
    }
    x->kid = p;
    x->kid[x->nkid++] = kid;
    return CP_OK;
}

static int children(rd *r, int depth, cp_xml *x)
{
    for (;;) {
        cp_xml *kid;
        int rc = skip_misc(r);
        if (rc)
            return rc;
        if (r->i >= r->n)
            return fail(r, "missing end tag for", x->name);
        if (at(r, "</")) {
            char *name;
            adv(r, 2);
            name = take_name(r);
            if (!name || strcmp(name, x->name) != 0) {
                rc = fail(r, "end tag does not match the open element", x->name);
                free(name);
                return rc;
            }
            free(name);
            while (r->i < r->n && is_space(r->s[r->i]))
                adv(r, 1);
            if (r->i >= r->n || r->s[r->i] != '>')
                return fail(r, "expected '>' to close the end tag", x->name);
            adv(r, 1);
            return CP_OK;
        }
        if ((rc = element(r, depth + 1, &kid)) || (rc = add_kid(r, x, kid)))
            return rc;
    }
}

static int element(rd *r, int depth, cp_xml **out)
{
    cp_xml *x;
    int rc;
    *out = NULL;
    if (depth > CP_XML_MAX_DEPTH)
        return fail(r, "elements nested deeper than 64", NULL);
    if (++r->elements > CP_XML_MAX_ELEMENTS)
        return fail(r, "more than 100,000 elements", NULL);
    if (!at(r, "<"))
        return fail(r, "expected an element", NULL);
    x = calloc(1, sizeof *x);
    if (!x)
        return cp_fail(r->e, CP_EINTERNAL, "out of memory");
    x->line = r->line;
    x->col = r->col;
    adv(r, 1);
    if (!(x->name = take_name(r))) {
        cp_xml_free(x);
        return fail(r, "expected an element name after '<'", NULL);
    }
    rc = attributes(r, x);
    if (rc == CP_OK && at(r, "/>"))
        adv(r, 2);
    else if (rc == CP_OK) {
        adv(r, 1);
        rc = children(r, depth, x);
    }
    if (rc) {
        cp_xml_free(x);
        return rc;
    }
    *out = x;
    return CP_OK;
}

int cp_xml_parse(const char *path, const char *text, size_t len, cp_xml **root, cp_err *e)
{
    rd r;
    int rc;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.s = text;
    r.n = len;
    r.line = r.col = 1;
    r.e = e;
    *root = NULL;
    if (memchr(text, '\0', len))
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "the file contains a NUL byte");
    if ((rc = skip_misc(&r)))
        return rc;
    if (r.i >= r.n)
        return fail(&r, "no element in the file", NULL);
    if ((rc = element(&r, 1, root)))
        return rc;
    if ((rc = skip_misc(&r)) == CP_OK && r.i < r.n) {
        cp_xml_free(*root);
        *root = NULL;
        return fail(&r, "content after the root element", NULL);
    }
    if (rc) {
        cp_xml_free(*root);
        *root = NULL;
    }
    return rc;
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
