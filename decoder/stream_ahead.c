/* stream_ahead.c - decoding blocks ahead of the merge: during a pass the
 * decode-ahead thread and the caller (in d9s_ahead_take, instead of
 * waiting) claim blocks in first_ts order, at most QUEUE past the last one
 * the merge took, and decode each with their own decoder. The merge takes
 * them in that order. */
#include <stdint.h>

#include "stream_int.h"

/* Decodes block k with dec into its slot. Called and returns with s->mu
 * held; released while decoding. */
static void decode_one(struct d9_stream *s, size_t k, struct decoder *dec)
{
    pthread_mutex_unlock(&s->mu);
    struct dblock *d = d9s_block_get(s);
    if (d && d9s_decode(s, k, d, dec) < 0) {
        d9s_block_free(d);
        d = NULL;
    }
    pthread_mutex_lock(&s->mu);
    s->slot[k % QUEUE] = d;
    s->ready[k % QUEUE] = 1;
    s->bytes_done += s->b[k].ref.payload_len;
    pthread_cond_broadcast(&s->cv);
}

static void *ahead_main(void *arg)
{
    struct d9_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->quit && s->claim < s->nb) {
        if (s->claim >= s->next + QUEUE) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        size_t k = s->claim++;
        decode_one(s, k, &s->dec[0]);
        if (!s->slot[k % QUEUE])
            break; /* out of memory: the merge finds the NULL */
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int d9s_ahead_start(struct d9_stream *s)
{
    for (size_t i = 0; i < QUEUE; i++)
        s->ready[i] = 0;
    s->claim = 0; /* s->next is 0: the pass starts */
    s->quit = 0;
    if (pthread_create(&s->th, NULL, ahead_main, s) != 0)
        return -1;
    s->running = 1;
    return 0;
}

void d9s_ahead_stop(struct d9_stream *s)
{
    if (!s->running)
        return;
    pthread_mutex_lock(&s->mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    s->running = 0;
    for (size_t i = 0; i < QUEUE; i++)
        if (s->ready[i]) {
            d9s_block_put(s, s->slot[i]);
            s->ready[i] = 0;
        }
}

struct dblock *d9s_ahead_take(struct d9_stream *s)
{
    pthread_mutex_lock(&s->mu);
    size_t k = s->next;
    while (!s->ready[k % QUEUE]) {
        if (s->claim < s->nb && s->claim < k + QUEUE)
            decode_one(s, s->claim++, &s->dec[1]);
        else
            pthread_cond_wait(&s->cv, &s->mu);
    }
    struct dblock *d = s->slot[k % QUEUE];
    s->ready[k % QUEUE] = 0;
    s->next = k + 1;
    pthread_cond_broadcast(&s->cv);
    d9s_progress(s);
    pthread_mutex_unlock(&s->mu);
    return d;
}
