/* stream_int.h - the parts of a d9_stream (stream.h), shared by its files:
 * stream.c (the public calls, passes, progress), stream_index.c (opening:
 * headers and the block index), stream_block.c (reading and decoding one
 * block) and stream_merge.c (the merge thread). Threads: during a pass the
 * merge thread decodes blocks and merges their events into batches of
 * event pointers; the caller's thread takes the batches in order and hands
 * the events out one at a time. */
#ifndef DIAL9_DECODER_STREAM_INT_H
#define DIAL9_DECODER_STREAM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "stream.h"

#define POOL 8      /* decoded blocks kept for reuse: no page faults per block */
#define NBATCH 16    /* batches in the ring: the merge thread is at most 3 ahead */
#define BATCH 4096  /* events per batch: one handoff per BATCH events */

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

/* An event's merge key, kept apart from the events so the merge reads 16
 * bytes per event, not the event's 80 (memory traffic is the cost). */
struct dkey {
    uint64_t ts, who; /* who: pid << 32 | tid */
};

/* A decoded block: its events in file order, cut in runs (chunks). */
struct dblock {
    struct d9_event *ev;
    struct dkey *key; /* key[i]: of ev[i] */
    size_t n, cap, key_cap;
    size_t *run; /* run starts */
    size_t nrun, run_cap;
    size_t live;    /* runs not yet merged out */
    size_t names;   /* THREAD_NAME events in it */
    uint64_t order; /* input order of the block: file, slot */
};

/* Merged events handed from the merge thread to the caller's thread. */
struct batch {
    const struct d9_event *ev[BATCH];
    size_t n;
    struct dblock *names; /* its THREAD_NAME events are noted before ev[0] */
    struct dblock **done; /* blocks whose last event is in ev[]: recycled after it */
    size_t ndone, done_cap;
    uint8_t end; /* the pass ends after ev[] */
    uint8_t err; /* out of memory: the pass fails after ev[] */
};

struct d9_stream {
    struct d9_model *m;
    int *bad;
    struct sfile *f;
    size_t nf;
    struct sblock *b; /* the block index, in first_ts order */
    size_t nb, b_cap;
    struct d9_inflater *z;
    uint8_t *buf;
    size_t buf_cap;
    int pass, passes;
    /* Recycled blocks (their arrays reused), shared by both threads. */
    pthread_mutex_t pool_mu;
    struct dblock *pool[POOL];
    size_t npool;
    /* The batch ring of the pass: batch i is ring[i % NBATCH]; mu guards
     * filled, released and quit. */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct batch ring[NBATCH];
    uint64_t filled, released; /* batches published by the merge thread / recycled by the caller */
    uint64_t taken;            /* batches taken by the caller */
    int quit, running;
    struct batch *cur; /* the batch being handed out, NULL: none */
    size_t pos;
    /* progress */
    uint64_t bytes_total, bytes_done;
    struct timespec start, shown;
    int tty, showing;
};

/* stream_index.c: fills s->f and s->b (sorted) from paths. 0, -1 out of memory. */
int d9s_index(struct d9_stream *s, char *const *paths, int npaths);
/* One stderr line about a damaged input, counted in *s->bad. */
void d9s_report(struct d9_stream *s, struct sfile *f);

/* stream_block.c */
struct dblock *d9s_block_get(struct d9_stream *s);
void d9s_block_put(struct d9_stream *s, struct dblock *d);
void d9s_block_free(struct dblock *d);
/* Reads and decodes s->b[k] into d (d->n 0: nothing usable). 0, -1 out of memory. */
int d9s_decode(struct d9_stream *s, size_t k, struct dblock *d);

/* stream_merge.c: starts the merge thread of a pass; stops it (batches not
 * handed out are dropped, their blocks recycled). */
int d9s_merge_start(struct d9_stream *s);
void d9s_merge_stop(struct d9_stream *s);
/* The next filled batch (waits for it); releases it when done. */
struct batch *d9s_batch_take(struct d9_stream *s);
void d9s_batch_release(struct d9_stream *s, struct batch *b);

/* stream.c: progress on stderr (from the merge thread too). */
void d9s_progress(struct d9_stream *s);

#endif
