/* vec.c - see vec.h. */
#include "vec.h"

#include <stdlib.h>

int d9_grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *nv = realloc(*v, c * size);
    if (!nv)
        return -1;
    *v = nv;
    *cap = c;
    return 0;
}

int d9_vec_push(struct d9_vec *x, uint64_t v)
{
    if (d9_grow((void **)&x->v, &x->cap, x->n, sizeof(*x->v)) < 0)
        return -1;
    x->v[x->n++] = v;
    return 0;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rank(const struct d9_vec *x, unsigned pct)
{
    size_t k = (x->n * pct + 99) / 100; /* nearest rank, 1-based */
    return x->v[k ? k - 1 : 0];
}

struct d9_dist d9_vec_dist(struct d9_vec *x)
{
    struct d9_dist d = {0};
    if (!x->n)
        return d;
    qsort(x->v, x->n, sizeof(*x->v), by_u64);
    d.p50 = rank(x, 50);
    d.p99 = rank(x, 99);
    d.max = x->v[x->n - 1];
    d.n = x->n;
    return d;
}

void d9_vec_free(struct d9_vec *x)
{
    free(x->v);
    *x = (struct d9_vec){0};
}
