/* stream_merge.c - the merge thread of a pass: it decodes the blocks in
 * first_ts order, each when the merge point reaches its first_ts, and merges
 * their runs through a heap ordered by (ts, pid, tid, input order) into
 * batches of event pointers for the caller's thread. Decoding and merging
 * here leaves the caller's thread only its own work per event (on two
 * cores: the analysis runs beside the decode). A block with THREAD_NAME
 * events starts a new batch, so the caller notes its names exactly when the
 * merge reached it. */
#include <stdlib.h>

#include "stream_int.h"
#include "vec.h"

/* A run of one block: its next event's sort key is held here, so the heap
 * compares without touching the events, and read from the block's keys, so
 * the merge never touches them at all. */
struct run {
    uint64_t ts, who; /* of *ev: ts, pid << 32 | tid */
    uint64_t order;   /* input order: file, block slot, chunk */
    const struct d9_event *ev, *end;
    const struct dkey *key; /* of *ev */
    struct dblock *blk;
};

/* The merge thread's state for a pass. */
struct merge {
    struct run *heap;
    size_t nheap, cap;
    size_t next;           /* the first block not decoded yet */
    struct dblock *pending; /* a block with names, for the next batch */
};

static inline int run_less(const struct run *a, const struct run *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->who != b->who)
        return a->who < b->who;
    return a->order < b->order;
}

static inline void run_key(struct run *r)
{
    r->ts = r->key->ts;
    r->who = r->key->who;
}

static void sift_down(struct run *h, size_t n, size_t i)
{
    struct run x = h[i];
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

static int heap_push(struct merge *w, struct run r)
{
    if (d9_grow((void **)&w->heap, &w->cap, w->nheap, sizeof(*w->heap)) < 0)
        return -1;
    size_t i = w->nheap++;
    for (; i && run_less(&r, &w->heap[(i - 1) / 2]); i = (i - 1) / 2)
        w->heap[i] = w->heap[(i - 1) / 2];
    w->heap[i] = r;
    return 0;
}

/* d's runs join the heap (runs already pushed keep d alive on failure). */
static int push_runs(struct merge *w, struct dblock *d)
{
    for (size_t i = 0; i < d->nrun; i++) {
        size_t end = i + 1 < d->nrun ? d->run[i + 1] : d->n;
        struct run r = {0, 0, d->order | (i < 0xffff ? i : 0xffff), &d->ev[d->run[i]], &d->ev[end],
                        &d->key[d->run[i]], d};
        run_key(&r);
        if (heap_push(w, r) < 0)
            return -1;
        d->live++;
    }
    return 0;
}

/* Fills b with the next merged events: 0, -1 out of memory. */
static int fill(struct d9_stream *s, struct merge *w, struct batch *b)
{
    b->n = b->ndone = 0;
    b->names = NULL;
    b->end = b->err = 0;
    if (w->pending) {
        b->names = w->pending;
        w->pending = NULL;
        if (push_runs(w, b->names) < 0)
            return -1;
    }
    for (;;) {
        while (w->next < s->nb && (!w->nheap || s->b[w->next].ref.first_ts <= w->heap[0].ts)) {
            struct dblock *d = d9s_block_get(s);
            if (!d || d9s_decode(s, w->next, d) < 0) {
                d9s_block_free(d);
                return -1;
            }
            w->next++;
            if (!d->n) {
                d9s_block_put(s, d);
                continue;
            }
            if (d->names && (b->n || b->names)) {
                w->pending = d;
                return 0;
            }
            if (d->names)
                b->names = d;
            if (push_runs(w, d) < 0)
                return -1;
        }
        if (b->n == BATCH)
            return 0;
        if (!w->nheap) {
            b->end = 1;
            return 0;
        }
        struct run *top = &w->heap[0];
        if (top->ev + 1 == top->end) { /* its last event: room for the block in b->done first */
            if (top->blk->live == 1 && d9_grow((void **)&b->done, &b->done_cap, b->ndone, sizeof(*b->done)) < 0)
                return -1;
            b->ev[b->n++] = top->ev;
            if (--top->blk->live == 0)
                b->done[b->ndone++] = top->blk;
            w->heap[0] = w->heap[--w->nheap];
        } else {
            b->ev[b->n++] = top->ev++;
            top->key++;
            run_key(top);
        }
        if (w->nheap > 1)
            sift_down(w->heap, w->nheap, 0);
    }
}

/* The next free batch slot, NULL when told to quit. */
static struct batch *slot(struct d9_stream *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->filled - s->released == NBATCH && !s->quit)
        pthread_cond_wait(&s->cv, &s->mu);
    struct batch *b = s->quit ? NULL : &s->ring[s->filled % NBATCH];
    pthread_mutex_unlock(&s->mu);
    return b;
}

static void *merge_main(void *arg)
{
    struct d9_stream *s = arg;
    struct merge w = {0};
    struct batch *b;
    while ((b = slot(s))) {
        if (fill(s, &w, b) < 0)
            b->err = 1;
        int last = b->end || b->err;
        pthread_mutex_lock(&s->mu);
        s->filled++;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (last)
            break;
    }
    for (size_t i = 0; i < w.nheap; i++) /* stopped early: blocks no batch holds */
        if (--w.heap[i].blk->live == 0)
            d9s_block_put(s, w.heap[i].blk);
    d9s_block_put(s, w.pending);
    free(w.heap);
    return NULL;
}

int d9s_merge_start(struct d9_stream *s)
{
    s->filled = s->released = s->taken = 0;
    s->quit = 0;
    if (pthread_create(&s->th, NULL, merge_main, s) != 0)
        return -1;
    s->running = 1;
    return 0;
}

struct batch *d9s_batch_take(struct d9_stream *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->taken == s->filled)
        pthread_cond_wait(&s->cv, &s->mu);
    struct batch *b = &s->ring[s->taken++ % NBATCH];
    pthread_mutex_unlock(&s->mu);
    return b;
}

void d9s_batch_release(struct d9_stream *s, struct batch *b)
{
    for (size_t i = 0; i < b->ndone; i++)
        d9s_block_put(s, b->done[i]);
    b->ndone = 0;
    pthread_mutex_lock(&s->mu);
    s->released++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void d9s_merge_stop(struct d9_stream *s)
{
    if (!s->running)
        return;
    pthread_mutex_lock(&s->mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    s->running = 0;
    while (s->taken < s->filled) /* published, never handed out */
        d9s_batch_release(s, &s->ring[s->taken++ % NBATCH]);
}
