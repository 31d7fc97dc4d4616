/* stream_ahead.c - the decode-ahead thread: during a pass it decodes the
 * blocks in first_ts order into a queue of QUEUE decoded blocks, which the
 * merge takes in that order. It owns the inflater, the read buffer and the
 * files' d9_seg during a pass (the caller reads them only after joining it). */
#include "stream_int.h"

static void *ahead_main(void *arg)
{
    struct d9_stream *s = arg;
    for (size_t k = 0; k < s->nb; k++) {
        struct dblock *d = d9s_block_get(s);
        int rc = d ? d9s_decode(s, k, d) : -1;
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
                d9s_block_put(s, d);
            else
                d9s_block_free(d);
            break;
        }
    }
    return NULL;
}

int d9s_ahead_start(struct d9_stream *s)
{
    s->qhead = s->nq = 0;
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
    for (; s->nq; s->nq--, s->qhead = (s->qhead + 1) % QUEUE)
        d9s_block_put(s, s->q[s->qhead]);
}

struct dblock *d9s_ahead_take(struct d9_stream *s)
{
    pthread_mutex_lock(&s->mu);
    while (!s->nq)
        pthread_cond_wait(&s->cv, &s->mu);
    struct dblock *d = s->q[s->qhead];
    s->qhead = (s->qhead + 1) % QUEUE;
    s->nq--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return d;
}
