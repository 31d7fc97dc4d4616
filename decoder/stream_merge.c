/* stream_merge.c - the k-way merge of the decoded blocks' runs through a
 * heap ordered by (ts, pid, tid, input order). The keys come from the
 * blocks' key arrays (16 bytes per event): the merge reads no event, so the
 * events' memory is touched once, by the caller. */
#include "stream_int.h"
#include "vec.h"

static inline int run_less(const struct run *a, const struct run *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->who != b->who)
        return a->who < b->who;
    return a->order < b->order;
}

/* Puts x at the root of h[0..n) and sifts it down. x is passed by value,
 * not re-read from h[0]: reading back a just-written run stalls on store
 * forwarding, which was most of the merge's cost. */
static inline void sift_down(struct run *h, size_t n, struct run x)
{
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && run_less(&h[c + 1], &h[c]))
            c++;
        if (!run_less(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static int heap_push(struct d9_stream *s, struct run r)
{
    if (d9_grow((void **)&s->heap, &s->heap_cap, s->nheap, sizeof(*s->heap)) < 0)
        return -1;
    size_t i = s->nheap++;
    for (; i && run_less(&r, &s->heap[(i - 1) / 2]); i = (i - 1) / 2)
        s->heap[i] = s->heap[(i - 1) / 2];
    s->heap[i] = r;
    return 0;
}

int d9s_merge_add(struct d9_stream *s, struct dblock *d)
{
    for (size_t i = 0; i < d->nrun; i++) {
        size_t at = d->run[i], end = i + 1 < d->nrun ? d->run[i + 1] : d->n;
        struct run r = {d->key[at].ts, d->key[at].who, d->order | (i < 0xffff ? i : 0xffff), &d->ev[at],
                        &d->ev[end], &d->key[at], d};
        if (heap_push(s, r) < 0)
            return -1; /* runs already pushed keep d alive: recycled by d9s_merge_drop */
        d->live++;
    }
    return 0;
}

const struct d9_event *d9s_merge_pop(struct d9_stream *s)
{
    struct run *h = s->heap, x = h[0];
    const struct d9_event *e = x.ev++;
    if (x.ev == x.end) {
        if (--x.blk->live == 0)
            s->done = x.blk;
        if (--s->nheap == 0)
            return e;
        x = h[s->nheap];
    } else {
        /* The run's events go out one per round of the runs: fetched two
         * rounds ahead, an event is in cache when it goes out. */
        __builtin_prefetch(x.ev + 2);
        __builtin_prefetch((const char *)(x.ev + 2) + 63);
        x.key++;
        x.ts = x.key->ts;
        x.who = x.key->who;
    }
    sift_down(h, s->nheap, x);
    return e;
}

void d9s_merge_drop(struct d9_stream *s)
{
    d9s_block_put(s, s->done);
    s->done = NULL;
    for (size_t i = 0; i < s->nheap; i++)
        if (--s->heap[i].blk->live == 0)
            d9s_block_put(s, s->heap[i].blk);
    s->nheap = 0;
}
