/*
 * strmap.c - open addressing with linear probing (see strmap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

/* FNV-1a over the string: short keys, good enough spread for probing. */
static size_t hash_str(const char *s)
{
    size_t h = (size_t)1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= (size_t)1099511628211ULL;
    }
    return h;
}

int cp_strmap_init(cp_strmap *m, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->cap = cap;
    m->count = 0;
    if (!m->keys || !m->vals) {
        cp_strmap_free(m);
        return -1;
    }
    return 0;
}

void cp_strmap_free(cp_strmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t slot_of(const cp_strmap *m, const char *key)
{
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int cp_strmap_get(const cp_strmap *m, const char *key)
{
    size_t i;
    if (!m->cap)
        return -1;
    i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

/* Double the table and re-insert every key. */
static int grow(cp_strmap *m)
{
    cp_strmap big;
    size_t i;
    if (cp_strmap_init(&big, m->cap) != 0)
        return -1;
    for (i = 0; i < m->cap; i++) {
        if (m->keys[i]) {
            size_t j = slot_of(&big, m->keys[i]);
            big.keys[j] = m->keys[i];
            big.vals[j] = m->vals[i];
            big.count++;
        }
    }
    cp_strmap_free(m);
    *m = big;
    return 0;
}

int cp_strmap_put(cp_strmap *m, const char *key, int val)
{
    size_t i;
    if (!m->cap && cp_strmap_init(m, 8) != 0)
        return -2;
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return -2;
    i = slot_of(m, key);
    if (m->keys[i])
        return m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return -1;
}
