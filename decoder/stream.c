/* stream.c - the time-ordered merge of every input (see stream.h): the
 * public calls, passes and progress. Opening is stream_index.c, decoding
 * a block stream_block.c, the decode-ahead thread stream_ahead.c, the
 * merge stream_merge.c. */
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "stream_int.h"

/* DIAL9_DECODE_PROGRESS_MS: ms of decoding before progress shows (default
 * 1000, 0..3600000). A bad value is named once and the default used. */
static double progress_after_s(void)
{
    static int warned;
    const char *v = getenv("DIAL9_DECODE_PROGRESS_MS");
    if (!v || !*v)
        return 1.0;
    char *end;
    errno = 0;
    unsigned long ms = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || ms > 3600000) {
        if (!warned++)
            fprintf(stderr, "dial9-decode: DIAL9_DECODE_PROGRESS_MS=%s is not a number of ms in 0..3600000; using 1000\n", v);
        return 1.0;
    }
    return (double)ms / 1000.0;
}

int d9_stream_open(struct d9_stream **out, struct d9_model *m, char *const *paths, int npaths, int *bad)
{
    struct d9_stream *s = calloc(1, sizeof(*s));
    *out = s;
    if (!s)
        return -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->m = m;
    s->bad = bad;
    s->passes = 1;
    s->tty = isatty(STDERR_FILENO);
    s->after_s = progress_after_s();
    s->dec[0].z = d9_inflater_new();
    s->dec[1].z = d9_inflater_new();
    int rc = s->dec[0].z && s->dec[1].z ? d9s_index(s, paths, npaths) : -1;
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

/* Rewritten in place every 0.2 s once the decode has taken after_s (a
 * second by default). */
void d9s_progress(struct d9_stream *s)
{
    if (!s->tty)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (since(&s->start, &now) < s->after_s || (s->showing && since(&s->shown, &now) < 0.2))
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

/* ---- Passes --------------------------------------------------------------- */

static int by_offset(const void *x, const void *y)
{
    const struct d9_problem *a = x, *b = y;
    return (a->offset > b->offset) - (a->offset < b->offset);
}

/* The pass is over: damage found while decoding (first pass) is reported. */
static void end_pass(struct d9_stream *s)
{
    d9s_ahead_stop(s);
    if (s->pass == 0)
        for (size_t i = 0; i < s->nf; i++) {
            struct sfile *f = &s->f[i];
            uint32_t kept = f->seg.nproblems < D9_MAX_PROBLEMS ? f->seg.nproblems : D9_MAX_PROBLEMS;
            if (kept > 1) /* decode-time problems came after the scan's */
                qsort(f->seg.problems, kept, sizeof(f->seg.problems[0]), by_offset);
            if (f->seg.status != D9_SEG_OK && !f->reported) {
                progress_clear(s);
                d9s_report(s, f);
            }
        }
    s->pass++;
    s->next = 0;
}

/* Takes the next decoded block: its runs join the merge, its thread names
 * the model (as the merge point reaches the block). */
static int take(struct d9_stream *s)
{
    if (!s->running && d9s_ahead_start(s) < 0)
        return -1;
    struct dblock *d = d9s_ahead_take(s); /* s->next moves on */
    if (!d)
        return -1;
    for (size_t i = 0; d->out.names && i < d->out.n; i++)
        if (d->out.ev[i].type == D9_EV_THREAD_NAME && d9_model_note_name(s->m, &d->out.ev[i]) < 0)
            return -1;
    if (!d->out.n) {
        d9s_block_put(s, d);
        return 0;
    }
    return d9s_merge_add(s, d);
}

int d9_stream_next(struct d9_stream *s, const struct d9_event **ev, size_t *n)
{
    if (s->done) {
        d9s_block_put(s, s->done);
        s->done = NULL;
    }
    while (s->next < s->nb && (!s->nheap || s->b[s->next].ref.first_ts <= s->heap[0].ts))
        if (take(s) < 0)
            return -1;
    if (!s->nheap) {
        end_pass(s);
        return 0;
    }
    *n = d9s_merge_span(s, s->next < s->nb ? s->b[s->next].ref.first_ts : UINT64_MAX, ev);
    return 1;
}

static void drop_pass(struct d9_stream *s)
{
    d9s_ahead_stop(s);
    d9s_merge_drop(s);
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
        d9s_block_free(s->pool[--s->npool]);
    for (size_t i = 0; i < s->nf; i++) {
        if (s->f[i].fd >= 0)
            close(s->f[i].fd);
        free(s->f[i].path);
        d9_seg_free(&s->f[i].seg);
    }
    for (int i = 0; i < 2; i++) {
        d9_inflater_free(s->dec[i].z);
        free(s->dec[i].buf);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_cond_destroy(&s->cv);
    free(s->f);
    free(s->b);
    free(s->heap);
    free(s);
}
