/* stream.c - the time-ordered merge of every input (see stream.h). */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "model.h"
#include "report.h"
#include "vec.h"

#define POOL 8  /* decoded blocks kept for reuse: no page faults per block */
#define QUEUE 2 /* blocks the decoder thread may be ahead of the merge */

struct sfile {
    char *path;
    int fd;
    uint8_t reported; /* its stderr line was written */
    struct d9_seg seg;
};

struct sblock {
    struct d9_block_ref ref;
    uint32_t file;
};

/* A decoded block: its events in file order, cut in runs (chunks). */
struct dblock {
    struct d9_event *ev;
    size_t n, cap;
    size_t *run; /* run starts */
    size_t nrun, run_cap;
    size_t live;    /* runs not yet merged out */
    size_t names;   /* THREAD_NAME events in it */
    uint64_t order; /* input order of the block: file, slot */
};

struct run {
    const struct d9_event *ev, *end;
    uint64_t order; /* input order: file, block slot, chunk */
    struct dblock *blk;
};

struct d9_stream {
    struct d9_model *m;
    int *bad;
    struct sfile *f;
    size_t nf;
    struct sblock *b;
    size_t nb, b_cap, next; /* next: the first block not decoded in this pass */
    struct run *heap;
    size_t nheap, heap_cap;
    struct dblock *done;    /* recycled on the next call: its last event is out */
    struct dblock *pool[POOL]; /* recycled blocks: their arrays are reused */
    size_t npool;
    /* the decoder thread of the current pass */
    pthread_t th;
    pthread_mutex_t mu; /* guards q, nq, qhead, quit, pool */
    pthread_cond_t cv;
    struct dblock *q[QUEUE];
    size_t qhead, nq;
    int quit, running;
    struct d9_inflater *z;
    uint8_t *buf;
    size_t buf_cap;
    int pass, passes;
    /* progress */
    uint64_t bytes_total, bytes_done;
    struct timespec start, shown;
    int tty, showing;
};

/* ---- Opening: headers and the block index -------------------------------- */

struct index_ctx {
    struct d9_stream *s;
    uint32_t file;
    const uint8_t *base;
};

static int index_block(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct index_ctx *c = ctx;
    struct d9_stream *s = c->s;
    (void)payload;
    if (d9_grow((void **)&s->b, &s->b_cap, s->nb, sizeof(*s->b)) < 0)
        return -1;
    s->b[s->nb++] = (struct sblock){*b, c->file};
    s->bytes_total += b->payload_len;
    d9_drop_pages(c->base, (size_t)b->off); /* what the scan passed */
    return 0;
}

static void report(struct d9_stream *s, struct sfile *f)
{
    f->reported = 1;
    (*s->bad)++;
    fputs("dial9-decode: ", stderr);
    d9_report_segment(stderr, f->path, &f->seg, 0);
}

static int open_file(struct d9_stream *s, const char *path)
{
    const uint8_t *buf;
    size_t len;
    if (d9_map_file(path, &buf, &len) < 0) {
        int err = errno;
        fprintf(stderr, "dial9-decode: %s: %s\n", path, strerror(err));
        (*s->bad)++;
        return err == ENOMEM ? -1 : 0;
    }
    struct sfile *f = &s->f[s->nf];
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    struct index_ctx c = {s, (uint32_t)s->nf, buf};
    int rc = d9_scan_segment(buf, len, &f->seg, index_block, &c);
    d9_unmap_file(buf, len);
    if (rc == 0 && !(f->path = strdup(path)))
        rc = -1;
    if (rc == 0 && f->seg.status != D9_SEG_INVALID) {
        rc = d9_model_add_header(s->m, &f->seg);
        if (rc == 0 && (f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
            fprintf(stderr, "dial9-decode: %s: %s\n", path, strerror(errno));
            (*s->bad)++;
            f->reported = 1;
            while (s->nb && s->b[s->nb - 1].file == s->nf) /* nothing of it can be read */
                s->bytes_total -= s->b[--s->nb].ref.payload_len;
        }
    }
    s->nf++;
    if (rc == 0 && f->seg.status != D9_SEG_OK && !f->reported)
        report(s, f);
    return rc;
}

static int by_first_ts(const void *x, const void *y)
{
    const struct sblock *a = x, *b = y;
    if (a->ref.first_ts != b->ref.first_ts)
        return a->ref.first_ts < b->ref.first_ts ? -1 : 1;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return (a->ref.off > b->ref.off) - (a->ref.off < b->ref.off);
}

int d9_stream_open(struct d9_stream **out, struct d9_model *m, char *const *paths, int npaths, int *bad)
{
    struct d9_stream *s = calloc(1, sizeof(*s));
    char **files = NULL;
    size_t n = 0;
    *out = s;
    if (!s)
        return -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (d9_list_files(paths, npaths, &files, &n, bad) < 0)
        return -1;
    s->m = m;
    s->bad = bad;
    s->passes = 1;
    s->tty = isatty(STDERR_FILENO);
    s->f = calloc(n ? n : 1, sizeof(*s->f));
    int rc = s->f && (s->z = d9_inflater_new()) ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = open_file(s, files[i]);
    d9_free_files(files, n);
    if (rc == 0 && s->nb)
        qsort(s->b, s->nb, sizeof(*s->b), by_first_ts);
    clock_gettime(CLOCK_MONOTONIC, &s->start);
    return rc;
}

uint64_t d9_stream_first_ts(const struct d9_stream *s) { return s->nb ? s->b[0].ref.first_ts : 0; }

uint64_t d9_stream_last_ts(const struct d9_stream *s)
{
    uint64_t t = 0;
    for (size_t i = 0; i < s->nb; i++)
        t = s->b[i].ref.last_ts > t ? s->b[i].ref.last_ts : t;
    return t;
}

void d9_stream_set_passes(struct d9_stream *s, int passes) { s->passes = passes > 0 ? passes : 1; }

/* ---- Progress ------------------------------------------------------------ */

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Rewritten in place every 0.2 s once the decode has taken a second. */
static void progress(struct d9_stream *s)
{
    if (!s->tty)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (since(&s->start, &now) < 1.0 || (s->showing && since(&s->shown, &now) < 0.2))
        return;
    s->shown = now;
    s->showing = 1;
    uint64_t total = s->bytes_total * (uint64_t)s->passes;
    fprintf(stderr, "\rdial9-decode: %3u%% ", total ? (unsigned)(100 * s->bytes_done / total) : 100);
}

static void progress_clear(struct d9_stream *s)
{
    if (s->showing)
        fputs("\r\033[K", stderr);
    s->showing = 0;
}

/* ---- Decoding blocks: a second thread, a few blocks ahead ------------------
 * The decoder thread decodes the blocks of a pass in first_ts order into a
 * queue of QUEUE decoded blocks; the merge takes them in that order. It owns
 * the inflater, the read buffer and the files' d9_seg during a pass (the
 * merge reads them only after joining it). Thread names are noted by the
 * merge, as it takes a block. */

static int collect(void *ctx, const struct d9_event *ev)
{
    struct dblock *d = ctx;
    if (d->n == d->cap && d9_grow((void **)&d->ev, &d->cap, d->n, sizeof(*d->ev)) < 0)
        return -1;
    if (!d->n || ev->tid != d->ev[d->n - 1].tid || ev->ts < d->ev[d->n - 1].ts) {
        if (d9_grow((void **)&d->run, &d->run_cap, d->nrun, sizeof(*d->run)) < 0)
            return -1;
        d->run[d->nrun++] = d->n;
    }
    d->ev[d->n++] = *ev;
    d->names += ev->type == D9_EV_THREAD_NAME;
    return 0;
}

static void dblock_free(struct dblock *d)
{
    if (!d)
        return;
    free(d->ev);
    free(d->run);
    free(d);
}

static struct dblock *dblock_get(struct d9_stream *s)
{
    pthread_mutex_lock(&s->mu);
    struct dblock *d = s->npool ? s->pool[--s->npool] : NULL;
    pthread_mutex_unlock(&s->mu);
    if (!d)
        d = calloc(1, sizeof(*d));
    if (d)
        d->n = d->nrun = d->live = d->names = 0;
    return d;
}

static void dblock_put(struct d9_stream *s, struct dblock *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&s->mu);
    int keep = s->npool < POOL;
    if (keep)
        s->pool[s->npool++] = d;
    pthread_mutex_unlock(&s->mu);
    if (!keep)
        dblock_free(d);
}

/* Reads and decodes block s->b[k] into d (d->n 0: nothing usable). On the
 * first pass damage goes to the file's report; later passes decode quietly. */
static int decode(struct d9_stream *s, size_t k, struct dblock *d)
{
    const struct sblock *b = &s->b[k];
    struct sfile *f = &s->f[b->file];
    size_t n = b->ref.payload_len;
    s->bytes_done += n;
    progress(s);
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
    if (d->cap < b->ref.events && b->ref.events <= b->ref.raw_len / 2) {
        struct d9_event *ev = realloc(d->ev, b->ref.events * sizeof(*ev));
        if (ev) {
            d->ev = ev;
            d->cap = b->ref.events;
        }
    }
    d->order = (uint64_t)b->file << 40 | (uint64_t)(b->ref.index & 0xffffff) << 16;
    if (got < n || d9_crc32c(0, s->buf, n) != b->ref.crc) { /* changed since it was indexed */
        d9_seg_block_lost(seg, &b->ref, got < n ? "block unreadable" : "payload changed since it was indexed");
        return 0;
    }
    int rc = d9_decode_block(seg, s->z, &b->ref, s->buf, collect, d);
    return rc < 0 ? -1 : 0;
}

static void *decoder_main(void *arg)
{
    struct d9_stream *s = arg;
    for (size_t k = 0; k < s->nb; k++) {
        struct dblock *d = dblock_get(s);
        int rc = d ? decode(s, k, d) : -1;
        pthread_mutex_lock(&s->mu);
        while (s->nq == QUEUE && !s->quit)
            pthread_cond_wait(&s->cv, &s->mu);
        int quit = s->quit;
        if (!quit) {
            s->q[(s->qhead + s->nq++) % QUEUE] = rc < 0 ? NULL : d; /* NULL: out of memory */
            pthread_cond_broadcast(&s->cv);
        }
        pthread_mutex_unlock(&s->mu);
        if (quit || rc < 0) {
            if (quit)
                dblock_put(s, d);
            else if (d)
                dblock_free(d);
            break;
        }
    }
    return NULL;
}

static int start_pass(struct d9_stream *s)
{
    s->qhead = s->nq = 0;
    s->quit = 0;
    if (!s->nb)
        return 0;
    if (pthread_create(&s->th, NULL, decoder_main, s) != 0)
        return -1;
    s->running = 1;
    return 0;
}

static void join(struct d9_stream *s)
{
    if (!s->running)
        return;
    pthread_mutex_lock(&s->mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    s->running = 0;
    for (; s->nq; s->nq--, s->qhead = (s->qhead + 1) % QUEUE)
        dblock_put(s, s->q[s->qhead]);
}

static int run_less(const struct run *a, const struct run *b)
{
    const struct d9_event *x = a->ev, *y = b->ev;
    if (x->ts != y->ts)
        return x->ts < y->ts;
    if (x->pid != y->pid)
        return x->pid < y->pid;
    if (x->tid != y->tid)
        return x->tid < y->tid;
    return a->order < b->order;
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

/* Takes the next decoded block from the decoder thread: its runs join the
 * heap, its thread names the model. */
static int take(struct d9_stream *s)
{
    if (!s->running && start_pass(s) < 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    while (!s->nq)
        pthread_cond_wait(&s->cv, &s->mu);
    struct dblock *d = s->q[s->qhead];
    s->qhead = (s->qhead + 1) % QUEUE;
    s->nq--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    s->next++;
    if (!d)
        return -1;
    for (size_t i = 0; d->names && i < d->n; i++)
        if (d->ev[i].type == D9_EV_THREAD_NAME && d9_model_note_name(s->m, &d->ev[i]) < 0)
            return -1;
    if (!d->n) {
        dblock_put(s, d);
        return 0;
    }
    for (size_t i = 0; i < d->nrun; i++) {
        size_t end = i + 1 < d->nrun ? d->run[i + 1] : d->n;
        struct run r = {&d->ev[d->run[i]], &d->ev[end], d->order | (i < 0xffff ? i : 0xffff), d};
        if (heap_push(s, r) < 0)
            return -1; /* runs already pushed keep d alive: freed at close */
        d->live++;
    }
    return 0;
}

/* ---- The merge ------------------------------------------------------------ */

static int by_offset(const void *x, const void *y)
{
    const struct d9_problem *a = x, *b = y;
    return (a->offset > b->offset) - (a->offset < b->offset);
}

/* The pass is over: damage found while decoding (first pass) is reported. */
static void end_pass(struct d9_stream *s)
{
    join(s);
    if (s->pass == 0)
        for (size_t i = 0; i < s->nf; i++) {
            struct sfile *f = &s->f[i];
            uint32_t kept = f->seg.nproblems < D9_MAX_PROBLEMS ? f->seg.nproblems : D9_MAX_PROBLEMS;
            if (kept > 1) /* decode-time problems came after the scan's */
                qsort(f->seg.problems, kept, sizeof(f->seg.problems[0]), by_offset);
            if (f->seg.status != D9_SEG_OK && !f->reported) {
                progress_clear(s);
                report(s, f);
            }
        }
    s->pass++;
    s->next = 0;
}

int d9_stream_next(struct d9_stream *s, const struct d9_event **ev)
{
    if (s->done) {
        dblock_put(s, s->done);
        s->done = NULL;
    }
    while (s->next < s->nb && (!s->nheap || s->b[s->next].ref.first_ts <= s->heap[0].ev->ts))
        if (take(s) < 0)
            return -1;
    if (!s->nheap) {
        end_pass(s);
        return 0;
    }
    struct run *top = &s->heap[0];
    *ev = top->ev++;
    if (top->ev == top->end) {
        if (--top->blk->live == 0)
            s->done = top->blk;
        s->heap[0] = s->heap[--s->nheap];
    }
    if (s->nheap > 1)
        sift_down(s->heap, s->nheap, 0);
    return 1;
}

static void drop_pass(struct d9_stream *s)
{
    join(s);
    dblock_put(s, s->done);
    s->done = NULL;
    for (size_t i = 0; i < s->nheap; i++)
        if (--s->heap[i].blk->live == 0)
            dblock_put(s, s->heap[i].blk);
    s->nheap = 0;
}

void d9_stream_stop(struct d9_stream *s)
{
    if (s->next == 0 && !s->nheap && !s->done && !s->running)
        return; /* between passes */
    drop_pass(s);
    s->bytes_done = s->bytes_total * (uint64_t)(s->pass + 1); /* the pass counts as done */
    end_pass(s);
}

void d9_stream_close(struct d9_stream *s)
{
    if (!s)
        return;
    drop_pass(s);
    progress_clear(s);
    while (s->npool)
        dblock_free(s->pool[--s->npool]);
    for (size_t i = 0; i < s->nf; i++) {
        if (s->f[i].fd >= 0)
            close(s->f[i].fd);
        free(s->f[i].path);
        d9_seg_free(&s->f[i].seg);
    }
    d9_inflater_free(s->z);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->f);
    free(s->b);
    free(s->heap);
    free(s->buf);
    free(s);
}
