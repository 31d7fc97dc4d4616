/* map.h - open-addressing hash map from a 64-bit key to a 32-bit index,
 * used to find threads and processes by (pid, tid) / pid. */
#ifndef DIAL9_DECODER_MAP_H
#define DIAL9_DECODER_MAP_H

#include <stddef.h>
#include <stdint.h>

struct d9_map {
    uint64_t *keys;
    uint32_t *vals; /* value + 1; 0 marks an empty slot */
    size_t cap, n;  /* cap: power of two or 0 */
};

/* 1 and *val set when found, 0 otherwise. */
int d9_map_get(const struct d9_map *m, uint64_t key, uint32_t *val);
/* Inserts or replaces. 0 ok, -1 out of memory. */
int d9_map_put(struct d9_map *m, uint64_t key, uint32_t val);
void d9_map_free(struct d9_map *m);

static inline uint64_t d9_key2(uint32_t hi, uint32_t lo) { return (uint64_t)hi << 32 | lo; }

#endif
