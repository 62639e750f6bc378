/*
 * strmap.h - a small open-addressing hash from borrowed strings to ints.
 *
 * Used to resolve link endpoints to node indices and to catch duplicate ids
 * and tensor names in O(1) each, so loading 100,000 names stays linear.
 * Keys are borrowed: the caller keeps them alive as long as the map.
 * Cost: lookups and inserts are O(1) expected; the table doubles at 50% load.
 */
#ifndef CP_STRMAP_H
#define CP_STRMAP_H

#include <stddef.h>

typedef struct cp_strmap {
    const char **keys;  /* borrowed; NULL = empty slot */
    int *vals;
    size_t cap;         /* power of two */
    size_t count;
} cp_strmap;

/* Start an empty map; 0 on success, -1 out of memory. */
int cp_strmap_init(cp_strmap *m, size_t expected);

/* Release the table (not the keys).  A zeroed map is a no-op. */
void cp_strmap_free(cp_strmap *m);

/* Value for `key`, or -1 when absent. */
int cp_strmap_get(const cp_strmap *m, const char *key);

/* Insert key -> val.  Returns the existing value (and changes nothing) when
 * the key is already present, -1 when newly inserted, -2 out of memory. */
int cp_strmap_put(cp_strmap *m, const char *key, int val);

#endif
