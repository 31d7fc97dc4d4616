/* vec.h - growable arrays of u64 durations and the exact percentile helper
 * (nearest rank); bounded distributions are hist.h. */
#ifndef DIAL9_DECODER_VEC_H
#define DIAL9_DECODER_VEC_H

#include <stddef.h>
#include <stdint.h>

struct d9_vec {
    uint64_t *v;
    size_t n, cap;
};

struct d9_dist {
    uint64_t p50, p99, max; /* ns, nearest rank; 0 when empty */
    uint64_t n;
};

/* 0 ok, -1 out of memory. */
int d9_vec_push(struct d9_vec *x, uint64_t v);
/* Sorts x ascending and returns its distribution. */
struct d9_dist d9_vec_dist(struct d9_vec *x);
void d9_vec_free(struct d9_vec *x);

/* Grows *v (elements of size bytes) so that index n fits. 0 ok, -1 out of memory. */
int d9_grow(void **v, size_t *cap, size_t n, size_t size);

#endif
