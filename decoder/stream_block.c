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

/* After each chunk the reader wrote into d->out:
 * its runs, one thread's in ts order: one from the chunk's start, and where
 * time goes back when the reader saw it do so. */
static int chunk_runs(void *ctx, size_t from, int back)
{
    struct dblock *d = ctx;
    const struct d9_event *ev = d->out.ev;
    for (size_t i = from; i < d->out.n; i++)
        if (i == from || (back && ev[i].ts < ev[i - 1].ts)) {
            if (d9_grow((void **)&d->run, &d->run_cap, d->nrun, sizeof(*d->run)) < 0)
                return -1;
            d->run[d->nrun++] = i;
        } else if (!back)
            break;
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

/* On the first pass damage goes to the file's report; later passes decode
 * quietly. */
int d9s_decode(struct d9_stream *s, size_t k, struct dblock *d)
{
    const struct sblock *b = &s->b[k];
    struct sfile *f = &s->f[b->file];
    size_t n = b->ref.payload_len;
    s->bytes_done += n;
    d9s_progress(s);
    if (s->buf_cap < n + 1) {
        uint8_t *p = realloc(s->buf, n + 1);
        if (!p)
            return -1;
        s->buf = p;
        s->buf_cap = n + 1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(f->fd, s->buf + got, n - got, (off_t)(b->ref.off + D9_BLOCK_HEADER_SIZE + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    struct d9_seg quiet, *seg = &f->seg;
    if (s->pass > 0) {
        quiet = f->seg; /* shallow: only counts and problems change */
        seg = &quiet;
    }
    /* The header's count, when believable (an event takes at least 2 raw
     * bytes): one allocation. A lie only means growing as it decodes. */
    if (b->ref.events <= b->ref.raw_len / 2)
        (void)d9_sink_reserve(&d->out, b->ref.events); /* out of memory: found again as it decodes */
    d->order = (uint64_t)b->file << 40 | (uint64_t)(b->ref.index & 0xffffff) << 16;
    if (got < n || d9_crc32c(0, s->buf, n) != b->ref.crc) { /* changed since it was indexed */
        d9_seg_block_lost(seg, &b->ref, got < n ? "block unreadable" : "payload changed since it was indexed");
        return 0;
    }
    d->out.chunk = chunk_runs;
    d->out.ctx = d;
    int rc = d9_decode_block_into(seg, s->z, &b->ref, s->buf, &d->out);
    return rc < 0 ? -1 : 0;
}
