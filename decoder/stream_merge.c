/* stream_merge.c - the k-way merge of the decoded blocks' runs through a
 * heap ordered by (ts, pid, tid, input order). Each run's next key is
 * held in the heap; a span reads the ts of the events it hands out, which
 * the caller reads next. */
#include "stream_int.h"
#include "vec.h"

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
        size_t at = d->run[i], end = i + 1 < d->nrun ? d->run[i + 1] : d->out.n;
        const struct d9_event *e = &d->out.ev[at];
        struct run r = {e->ts, (uint64_t)e->pid << 32 | e->tid, d->order | (i < 0xffff ? i : 0xffff), e,
                        &d->out.ev[end], d};
        if (heap_push(s, r) < 0)
            return -1; /* runs already pushed keep d alive: recycled by d9s_merge_drop */
        d->live++;
    }
    return 0;
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
