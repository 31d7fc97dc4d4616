/* topk.h - keeps the k items with the largest keys seen (k small: the
 * "worst 10" lists). Items are copied in; d9_topk_sort orders them by key,
 * largest first (ties: first offered first). */
#ifndef DIAL9_DECODER_TOPK_H
#define DIAL9_DECODER_TOPK_H

#include <stddef.h>
#include <stdint.h>

#define D9_TOPK_MAX 10

struct d9_topk {
    size_t size, n;                /* item size, items held */
    uint64_t key[D9_TOPK_MAX], seq[D9_TOPK_MAX], offered;
    size_t weak;                   /* the entry to evict, once n is D9_TOPK_MAX */
    unsigned char *items;          /* D9_TOPK_MAX * size bytes, caller-owned */
};

void d9_topk_init(struct d9_topk *t, void *items, size_t size);
void d9_topk_offer(struct d9_topk *t, uint64_t key, const void *item);
/* The same with an explicit tie-break (smaller seq first) for items not
 * offered in the order they should rank. */
void d9_topk_offer_at(struct d9_topk *t, uint64_t key, uint64_t seq, const void *item);
void d9_topk_sort(struct d9_topk *t);

#endif
