/* stream_block.c - one indexed block read (pread) and decoded into a
 * dblock: its events in file order, cut in runs of one thread in ts order
 * (what the merge needs). Decoded blocks are recycled through a small pool
 * so their arrays are reused rather than faulted in per block. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream_int.h"
#include "vec.h"

static int add_run(struct dblock *d, size_t at)
{
    if (d9_grow((void **)&d->run, &d->run_cap, d->nrun, sizeof(*d->run)) < 0)
        return -1;
    d->run[d->nrun++] = at;
    return 0;
}

/* After each chunk the reader wrote into d->out: its runs, one thread's
 * in ts order. One from the chunk's start; more only where the reader saw
 * time go back. */
static int chunk_runs(void *ctx, size_t from, int back)
{
    struct dblock *d = ctx;
    const struct d9_event *ev = d->out.ev;
    if (add_run(d, from) < 0)
        return -1;
    for (size_t i = from + 1; back && i < d->out.n; i++)
        if (ev[i].ts < ev[i - 1].ts && add_run(d, i) < 0)
            return -1;
    return 0;
}

void d9s_block_free(struct dblock *d)
{
    if (!d)
        return;
    free(d->out.ev);
    free(d->run);
    free(d);
}

struct dblock *d9s_block_get(struct d9_stream *s)
{
    pthread_mutex_lock(&s->pool_mu);
    struct dblock *d = s->npool ? s->pool[--s->npool] : NULL;
    pthread_mutex_unlock(&s->pool_mu);
    if (!d)
        d = calloc(1, sizeof(*d));
    if (d)
        d->out.n = d->out.names = d->nrun = d->live = 0;
    return d;
}

void d9s_block_put(struct d9_stream *s, struct dblock *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&s->pool_mu);
    int keep = s->npool < POOL;
    if (keep)
        s->pool[s->npool++] = d;
    pthread_mutex_unlock(&s->pool_mu);
    if (!keep)
        d9s_block_free(d);
}

/* The outcome of decoding a block, from was to now (copies of a file's
 * d9_seg), added to f (which the other thread may have changed since). */
static void seg_apply(struct d9_seg *f, const struct d9_seg *was, const struct d9_seg *now)
{
    f->blocks += now->blocks - was->blocks;
    f->events += now->events - was->events;
    f->skipped += now->skipped - was->skipped;
    for (uint32_t i = was->nproblems; i < now->nproblems; i++, f->nproblems++)
        if (f->nproblems < D9_MAX_PROBLEMS && i < D9_MAX_PROBLEMS)
            f->problems[f->nproblems] = now->problems[i];
    if (now->status > f->status)
        f->status = now->status;
}

/* Decoded into a copy of the file's d9_seg (the other thread may decode
 * another block of the file); on the first pass its damage then goes to
 * the file's report, later passes decode quietly. */
int d9s_decode(struct d9_stream *s, size_t k, struct dblock *d, struct decoder *dec)
{
    const struct sblock *b = &s->b[k];
    struct sfile *f = &s->f[b->file];
    size_t n = b->ref.payload_len;
    if (dec->buf_cap < n + 1) {
        uint8_t *p = realloc(dec->buf, n + 1);
        if (!p)
            return -1;
        dec->buf = p;
        dec->buf_cap = n + 1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(f->fd, dec->buf + got, n - got, (off_t)(b->ref.off + D9_BLOCK_HEADER_SIZE + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    struct d9_seg was, now;
    pthread_mutex_lock(&s->mu);
    was = f->seg; /* shallow: only counts and problems change */
    pthread_mutex_unlock(&s->mu);
    now = was;
    /* The header's count, when believable (an event takes at least 2 raw
     * bytes): one allocation. A lie only means growing as it decodes. */
    if (b->ref.events <= b->ref.raw_len / 2)
        (void)d9_sink_reserve(&d->out, b->ref.events); /* out of memory: found again as it decodes */
    d->order = (uint64_t)b->file << 40 | (uint64_t)(b->ref.index & 0xffffff) << 16;
    int rc = 0;
    if (got < n || d9_crc32c(0, dec->buf, n) != b->ref.crc) /* changed since it was indexed */
        d9_seg_block_lost(&now, &b->ref, got < n ? "block unreadable" : "payload changed since it was indexed");
    else {
        d->out.chunk = chunk_runs;
        d->out.ctx = d;
        rc = d9_decode_block_into(&now, dec->z, &b->ref, dec->buf, &d->out) < 0 ? -1 : 0;
        if (f->shift) /* another boot's clock (stream_boots.c) */
            for (size_t i = 0; i < d->out.n; i++)
                d->out.ev[i].ts += f->shift;
    }
    if (s->pass == 0) {
        pthread_mutex_lock(&s->mu);
        seg_apply(&f->seg, &was, &now);
        pthread_mutex_unlock(&s->mu);
    }
    return rc;
}
