/*
 * jsonfmt.c - line-per-element JSON writer (see jsonfmt.h).
 */
#include <stdlib.h>

#include "out/jsonfmt.h"

#define FLAGS (JSON_ENCODE_ANY | JSON_REAL_PRECISION(12))

/* One value on one line. */
static int put_compact(const json_t *v, FILE *f)
{
    char *s = json_dumps(v, FLAGS);
    int rc;
    if (!s)
        return -1;
    rc = fputs(s, f) < 0 ? -1 : 0;
    free(s);
    return rc;
}

static int put_array(const json_t *arr, FILE *f)
{
    size_t i, n = json_array_size(arr);
    if (n == 0)
        return fputs("[]", f) < 0 ? -1 : 0;
    if (fputs("[\n", f) < 0)
        return -1;
    for (i = 0; i < n; i++) {
        if (fputs("    ", f) < 0 || put_compact(json_array_get(arr, i), f) ||
            fputs(i + 1 < n ? ",\n" : "\n", f) < 0)
            return -1;
    }
    return fputs("  ]", f) < 0 ? -1 : 0;
}

int cp_json_write_doc(const json_t *root, FILE *f)
{
    const char *key;
    json_t *v;
    size_t i = 0, n = json_object_size(root);
    if (fputs("{\n", f) < 0)
        return -1;
    json_object_foreach((json_t *)root, key, v) {
        json_t *k = json_string(key);
        int rc = k ? 0 : -1;
        if (rc == 0)
            rc = fputs("  ", f) < 0 || put_compact(k, f) || fputs(": ", f) < 0 ? -1 : 0;
        json_decref(k);
        if (rc)
            return -1;
        rc = json_is_array(v) ? put_array(v, f) : put_compact(v, f);
        if (rc || fputs(++i < n ? ",\n" : "\n", f) < 0)
            return -1;
    }
    return fputs("}\n", f) < 0 ? -1 : 0;
}
