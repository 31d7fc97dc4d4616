/* hist.h - a bounded-memory distribution of u64 values (durations in ns):
 * log-linear buckets, D9_HIST_SUB per power of two, so memory does not grow
 * with the number of values. Count, sum, min and max are exact; a quantile
 * is exact below D9_HIST_SUB and otherwise within 1/D9_HIST_SUB (3.1%) of
 * the true nearest-rank value, never outside [min, max]. Buckets are
 * allocated on the first add (an empty histogram costs sizeof only). */
#ifndef DIAL9_DECODER_HIST_H
#define DIAL9_DECODER_HIST_H

#include <stddef.h>
#include <stdint.h>

#define D9_HIST_SUB_BITS 5
#define D9_HIST_SUB (1u << D9_HIST_SUB_BITS)
#define D9_HIST_MAX_BITS 44 /* values >= 2^44 ns (4.9 h) share the last bucket */
#define D9_HIST_BUCKETS ((D9_HIST_MAX_BITS - D9_HIST_SUB_BITS + 1) * D9_HIST_SUB)

struct d9_hist {
    uint32_t *b; /* D9_HIST_BUCKETS counts, NULL until the first add */
    uint64_t n, sum, min, max;
};

/* 0 ok, -1 out of memory (the value is then not counted). */
int d9_hist_add(struct d9_hist *h, uint64_t v);
/* Adds every value of src to dst. 0 ok, -1 out of memory. */
int d9_hist_merge(struct d9_hist *dst, const struct d9_hist *src);
/* Nearest-rank quantile, q in [0, 1]; 0 when empty. q = 1 gives max. */
uint64_t d9_hist_quantile(const struct d9_hist *h, double q);
/* Bucket i's range [lo, hi] (inclusive) and count, i < D9_HIST_BUCKETS;
 * for charts. Returns the count (0 for an empty histogram). */
uint64_t d9_hist_bucket(const struct d9_hist *h, size_t i, uint64_t *lo, uint64_t *hi);
/* The bucket holding v. */
size_t d9_hist_index(uint64_t v);
void d9_hist_free(struct d9_hist *h);

#endif
