/* map.c - see map.h. Linear probing, grown at half full. */
#include "map.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33; /* murmur3 finaliser: tids and pids are dense */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

int d9_map_get(const struct d9_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return 0;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i])
            return 0;
        if (m->keys[i] == key) {
            *val = m->vals[i] - 1;
            return 1;
        }
    }
}

static void place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t stored)
{
    size_t i = slot_of(key, cap);
    while (vals[i] && keys[i] != key)
        i = (i + 1) & (cap - 1);
    keys[i] = key;
    vals[i] = stored;
}

static int grow(struct d9_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint32_t *vals = calloc(cap, sizeof(*vals));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i])
            place(keys, vals, cap, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int d9_map_put(struct d9_map *m, uint64_t key, uint32_t val)
{
    uint32_t old;
    if (d9_map_get(m, key, &old)) {
        place(m->keys, m->vals, m->cap, key, val + 1);
        return 0;
    }
    if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
        return -1;
    place(m->keys, m->vals, m->cap, key, val + 1);
    m->n++;
    return 0;
}

void d9_map_free(struct d9_map *m)
{
    free(m->keys);
    free(m->vals);
    *m = (struct d9_map){0};
}
