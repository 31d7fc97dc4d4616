/* stream_int.h - the parts of a d9_stream (stream.h), shared by its files:
 * stream.c (the public calls, passes, progress), stream_index.c (opening:
 * headers and the block index), stream_boots.c (the clocks of several
 * boots made one), stream_block.c (reading and decoding one
 * block), stream_ahead.c (decoding blocks ahead of the merge, on a second
 * thread and on the caller's while it would wait) and stream_merge.c (the
 * heap merge, on the caller's thread). Writing out a block's events is
 * most of a decode; the merge and a summary's analysis cost less, so the
 * caller decodes the blocks it would otherwise wait for and the two
 * threads stay busy. */
#ifndef DIAL9_DECODER_STREAM_INT_H
#define DIAL9_DECODER_STREAM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "stream.h"

#define POOL 8  /* decoded blocks kept for reuse: no page faults per block */
#define QUEUE 3 /* blocks decoded, or being decoded, ahead of the merge */

struct sfile {
    char *path;
    int fd;
    uint8_t reported; /* its stderr line was written */
    struct d9_seg seg;
    size_t b0, nblk; /* its blocks, s->b[b0..b0+nblk) until the index is sorted */
    uint64_t shift;  /* ns added to its timestamps: another boot's clock (stream_index.c) */
};

struct sblock {
    struct d9_block_ref ref;
    uint32_t file;
};

/* A decoded block: its events in file order, cut in runs (chunks). The
 * merge reads each event's ts where it is: the caller reads the same
 * lines next. (A ts array beside the events, read instead, cost the decode
 * thread, whose time goes into writing events out, 8 more bytes an event.) */
struct dblock {
    struct d9_sink out; /* the events, decoded in place */
    size_t *run;        /* run starts */
    size_t nrun, run_cap;
    size_t live;    /* runs not yet merged out */
    uint64_t order; /* input order of the block: file, slot */
};

/* A run of one block: one thread's events in ts order. Its next event's
 * sort key is held here: the heap compares without touching the events. */
struct run {
    uint64_t ts;    /* of *ev */
    uint64_t who;   /* pid << 32 | tid, of every event of the run */
    uint64_t order; /* input order: file, block slot, chunk */
    const struct d9_event *ev, *end;
    struct dblock *blk;
};

/* What a thread decoding blocks owns: one for each of the two. */
struct decoder {
    struct d9_inflater *z;
    uint8_t *buf; /* a block's payload, read */
    size_t buf_cap;
};

struct d9_stream {
    struct d9_model *m;
    int *bad;
    struct sfile *f;
    size_t nf;
    struct sblock *b; /* the block index, in first_ts order */
    size_t nb, b_cap;
    struct decoder dec[2]; /* [0] the decode-ahead thread's, [1] the caller's */
    int pass, passes;
    /* Recycled blocks (their arrays reused), shared by both threads. */
    pthread_mutex_t pool_mu;
    struct dblock *pool[POOL];
    size_t npool;
    /* The merge, on the caller's thread. */
    struct run *heap;
    size_t nheap, heap_cap;
    size_t next;         /* the first block of the pass not taken yet (moved under mu) */
    struct dblock *done; /* recycled on the next call: its last event is out */
    /* The decoding of a pass; mu guards slot, ready, claim, quit,
     * bytes_done, the files' d9_seg outcome and the moves of next while the
     * thread runs. Block k goes to slot[k % QUEUE]; no block past next +
     * QUEUE is claimed. */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct dblock *slot[QUEUE]; /* NULL once ready: out of memory */
    uint8_t ready[QUEUE];
    size_t claim; /* the next block nobody decodes yet */
    int quit, running;
    /* progress */
    uint64_t bytes_total, bytes_done;
    struct timespec start, shown;
    double after_s; /* decoding time before progress shows */
    int tty, showing;
};

/* stream_index.c: fills s->f and s->b (sorted) from paths. 0, -1 out of memory. */
int d9s_index(struct d9_stream *s, char *const *paths, int npaths);
/* One stderr line about a damaged input, counted in *s->bad. */
void d9s_report(struct d9_stream *s, struct sfile *f);

/* stream_boots.c: sets each file's shift when the inputs come from several
 * boots (one stderr line per boot moved). 0, -1 out of memory. */
int d9s_align_boots(struct d9_stream *s);

/* stream_block.c */
struct dblock *d9s_block_get(struct d9_stream *s);
void d9s_block_put(struct d9_stream *s, struct dblock *d);
void d9s_block_free(struct dblock *d);
/* Reads and decodes s->b[k] into d with dec (d->out.n 0: nothing usable),
 * s->mu not held: damage goes to the file's d9_seg under it. 0, -1 out of
 * memory. */
int d9s_decode(struct d9_stream *s, size_t k, struct dblock *d, struct decoder *dec);

/* stream_ahead.c: the decoding of a pass: start (the decode-ahead
 * thread), stop (blocks decoded but not taken are recycled), and the next
 * decoded block in index order, s->next (decoded by the caller, or waited
 * for; NULL out of memory), moving s->next on. */
int d9s_ahead_start(struct d9_stream *s);
void d9s_ahead_stop(struct d9_stream *s);
struct dblock *d9s_ahead_take(struct d9_stream *s);

/* stream_merge.c: d's runs join the merge (0, -1 out of memory); drops the
 * runs left. */
int d9s_merge_add(struct d9_stream *s, struct dblock *d);
void d9s_merge_drop(struct d9_stream *s);

/* The merge's per-span part, inline: it runs once per span of events. */
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

/* The next events in time order (the heap must not be empty): the root
 * run's, as long as they sort before every other run's next event and
 * come before bound (the first_ts of the next block not taken yet, whose
 * runs may sort before them). One thread's events mostly come in bursts
 * (95% of the events of a 4-thread trace continue the root run): a span
 * costs a key compare per event, not a pop. Returns their count. */
static inline size_t d9s_merge_span(struct d9_stream *s, uint64_t bound, const struct d9_event **ev)
{
    struct run *h = s->heap, x = h[0];
    const struct run *y = s->nheap < 2 ? NULL : s->nheap > 2 && run_less(&h[2], &h[1]) ? &h[2] : &h[1];
    uint64_t fast = y && y->ts < bound ? y->ts : bound; /* a key below it is in */
    size_t n = 1, left = (size_t)(x.end - x.ev);
    for (const struct d9_event *k = x.ev + 1; n < left; k++, n++) {
        if (k->ts < fast)
            continue;
        if (k->ts >= bound || !y || k->ts > y->ts)
            break;
        struct run z = {.ts = k->ts, .who = x.who, .order = x.order};
        if (!run_less(&z, y))
            break;
    }
    *ev = x.ev;
    x.ev += n;
    if (x.ev == x.end) {
        if (--x.blk->live == 0)
            s->done = x.blk;
        if (--s->nheap == 0)
            return n;
        x = h[s->nheap];
    } else {
        x.ts = x.ev->ts;
    }
    sift_down(h, s->nheap, x);
    return n;
}

/* stream.c: progress on stderr (the caller's thread, s->mu held). */
void d9s_progress(struct d9_stream *s);

#endif
