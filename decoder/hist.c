/* hist.c - see hist.h. Bucket group 0 holds 0..D9_HIST_SUB-1 one value
 * each; group g >= 1 holds [2^e, 2^(e+1)), e = g + SUB_BITS - 1, split in
 * D9_HIST_SUB equal parts by the D9_HIST_SUB_BITS bits below the leading one. */
#include "hist.h"

#include <stdlib.h>

size_t d9_hist_index(uint64_t v)
{
    if (v < D9_HIST_SUB)
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    if (e >= D9_HIST_MAX_BITS)
        return D9_HIST_BUCKETS - 1;
    size_t g = e - D9_HIST_SUB_BITS + 1;
    return g * D9_HIST_SUB + (size_t)((v >> (e - D9_HIST_SUB_BITS)) & (D9_HIST_SUB - 1));
}

static void range(size_t i, uint64_t *lo, uint64_t *hi)
{
    size_t g = i / D9_HIST_SUB, s = i % D9_HIST_SUB;
    if (g == 0) {
        *lo = *hi = s;
        return;
    }
    unsigned shift = (unsigned)g - 1;
    *lo = (uint64_t)(D9_HIST_SUB + s) << shift;
    *hi = i == D9_HIST_BUCKETS - 1 ? UINT64_MAX : *lo + (1ull << shift) - 1;
}

int d9_hist_add(struct d9_hist *h, uint64_t v)
{
    if (!h->b && !(h->b = calloc(D9_HIST_BUCKETS, sizeof(*h->b))))
        return -1;
    h->b[d9_hist_index(v)]++;
    if (!h->n || v < h->min)
        h->min = v;
    if (!h->n || v > h->max)
        h->max = v;
    h->n++;
    h->sum += v;
    return 0;
}

int d9_hist_merge(struct d9_hist *dst, const struct d9_hist *src)
{
    if (!src->n)
        return 0;
    if (!dst->b && !(dst->b = calloc(D9_HIST_BUCKETS, sizeof(*dst->b))))
        return -1;
    for (size_t i = 0; i < D9_HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
    if (!dst->n || src->min < dst->min)
        dst->min = src->min;
    if (!dst->n || src->max > dst->max)
        dst->max = src->max;
    dst->n += src->n;
    dst->sum += src->sum;
    return 0;
}

uint64_t d9_hist_quantile(const struct d9_hist *h, double q)
{
    if (!h->n)
        return 0;
    if (q >= 1.0)
        return h->max;
    uint64_t rank = (uint64_t)(q * (double)h->n);
    if ((double)rank < q * (double)h->n)
        rank++;
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < D9_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            range(i, &lo, &hi);
            return hi > h->max ? h->max : hi < h->min ? h->min : hi;
        }
    }
    return h->max;
}

uint64_t d9_hist_bucket(const struct d9_hist *h, size_t i, uint64_t *lo, uint64_t *hi)
{
    range(i, lo, hi);
    return h->b && i < D9_HIST_BUCKETS ? h->b[i] : 0;
}

void d9_hist_free(struct d9_hist *h)
{
    free(h->b);
    *h = (struct d9_hist){0};
}
