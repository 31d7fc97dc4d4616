/* topk.c - see topk.h. Linear scans: k is 10. */
#include "topk.h"

#include <string.h>

void d9_topk_init(struct d9_topk *t, void *items, size_t size)
{
    memset(t, 0, sizeof(*t));
    t->items = items;
    t->size = size;
}

/* Index of the entry to evict: smallest key, latest offered. */
static size_t weakest(const struct d9_topk *t)
{
    size_t w = 0;
    for (size_t i = 1; i < t->n; i++)
        if (t->key[i] < t->key[w] || (t->key[i] == t->key[w] && t->seq[i] > t->seq[w]))
            w = i;
    return w;
}

/* Most offers lose to the weakest entry, known without a scan. */
void d9_topk_offer_at(struct d9_topk *t, uint64_t key, uint64_t seq, const void *item)
{
    size_t i = t->n;
    if (t->n == D9_TOPK_MAX) {
        i = t->weak;
        if (key < t->key[i] || (key == t->key[i] && seq >= t->seq[i]))
            return;
    } else
        t->n++;
    t->key[i] = key;
    t->seq[i] = seq;
    memcpy(t->items + i * t->size, item, t->size);
    if (t->n == D9_TOPK_MAX)
        t->weak = weakest(t);
}

void d9_topk_offer(struct d9_topk *t, uint64_t key, const void *item)
{
    d9_topk_offer_at(t, key, t->offered++, item);
}

static void swap(struct d9_topk *t, size_t a, size_t b)
{
    unsigned char tmp[256];
    uint64_t k = t->key[a], s = t->seq[a];
    t->key[a] = t->key[b], t->seq[a] = t->seq[b];
    t->key[b] = k, t->seq[b] = s;
    for (size_t off = 0; off < t->size; off += sizeof(tmp)) { /* items of any size */
        size_t n = t->size - off < sizeof(tmp) ? t->size - off : sizeof(tmp);
        memcpy(tmp, t->items + a * t->size + off, n);
        memcpy(t->items + a * t->size + off, t->items + b * t->size + off, n);
        memcpy(t->items + b * t->size + off, tmp, n);
    }
}

void d9_topk_sort(struct d9_topk *t)
{
    for (size_t i = 1; i < t->n; i++) /* insertion sort: key desc, seq asc */
        for (size_t j = i; j > 0; j--) {
            int before = t->key[j] > t->key[j - 1] || (t->key[j] == t->key[j - 1] && t->seq[j] < t->seq[j - 1]);
            if (!before)
                break;
            swap(t, j, j - 1);
        }
    t->weak = weakest(t); /* entries moved */
}
