/* ring.h - single-producer single-consumer ring of raw events.
 * The producer is the thread that owns the slot; the consumer is the writer
 * thread. Lock-free and without a shared head or tail: each entry says
 * itself whether it holds an event. The producer fills a free entry and
 * publishes it with one release store of its word (type, call, len, x;
 * type 0, D9_EV_INVALID, never recorded, marks a free entry); the consumer
 * copies published entries in order and frees each with a release store of
 * a zero word. So the producer touches only its cursor (kept in the
 * thread's TLS by the agent) and the entry it writes, no line of the slot
 * (reading the slot after each park cost Tokio 1.8% more CPU per request
 * on the bench VM: BENCHMARKS.md, "Rings without a shared head"). No
 * syscalls.
 *
 * Entries are consumed in order, so when entry h + k is free, so are the
 * entries before it: one load checks the room for k more. A ring must start
 * all free (zeroed memory); the consumer leaves it so once drained.
 */
#ifndef DIAL9_RING_H
#define DIAL9_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "dial9_format.h"

/* The consumer's side, and what both sides share. */
struct d9_ring {
    struct d9_raw_event *buf; /* cap entries, zeroed; mapped once per slot, reused */
    uint32_t cap;             /* power of two, at least 16 */
    uint32_t mask;            /* cap - 1 */
    _Atomic uint64_t tail;    /* consumer: events taken so far (read by the crash dump) */
};

/* The producer's cursor. */
struct d9_ring_head {
    struct d9_raw_event *buf;
    uint64_t head;  /* events published so far */
    uint32_t mask;  /* cap - 1 */
    uint32_t check; /* cap / 8 - 1: every cap / 8 pushes, d9_ring_publish
                     * looks whether the ring is half full */
};

static inline void d9_ring_head_init(struct d9_ring_head *p, const struct d9_ring *r)
{
    *p = (struct d9_ring_head){.buf = r->buf, .head = 0, .mask = r->mask, .check = r->cap / 8 - 1};
}

static inline int d9_ring_entry_used(const struct d9_raw_event *e)
{
    return __atomic_load_n(&e->word, __ATOMIC_ACQUIRE) != 0;
}

/* Producer: the free entry to fill, or NULL when the ring is full (the
 * caller counts a drop). keep: entries that must stay free after this push
 * (1 for ordinary events, so a thread's final THREAD_EXIT always finds
 * room; 0 for that event). */
static inline struct d9_raw_event *d9_ring_reserve(const struct d9_ring_head *p, uint32_t keep)
{
    if (d9_ring_entry_used(&p->buf[(p->head + keep) & p->mask]))
        return NULL;
    return &p->buf[p->head & p->mask];
}

/* The word of an entry: its type, call, len and x. */
static inline uint64_t d9_ring_word(uint8_t type, uint8_t call, uint16_t len, int32_t x)
{
    struct d9_raw_event w = {.type = type, .call = call, .len = len, .x = x};
    return w.word;
}

/* 1 when the next push is one of the check points of d9_ring_publish (the
 * agent's inline push leaves those to its slow path). */
static inline int d9_ring_next_checks(const struct d9_ring_head *p)
{
    return ((p->head + 1) & p->check) == 0;
}

/* Publishes e, the entry d9_ring_reserve returned, with its word (the
 * entry's other members already stored), and moves the cursor on. */
static inline void d9_ring_commit(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    __atomic_store_n(&e->word, word, __ATOMIC_RELEASE);
    p->head++;
}

/* d9_ring_commit, then: 1 at a check point when the ring holds more than
 * half its capacity, so the caller kicks the writer: at most every cap / 8
 * pushes while the writer lags. */
static inline int d9_ring_publish(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    d9_ring_commit(p, e, word);
    uint64_t h = p->head;
    if (__builtin_expect((h & p->check) != 0, 1))
        return 0;
    return d9_ring_entry_used(&p->buf[(h + (p->mask >> 1)) & p->mask]);
}

/* Consumer: copies up to max events into out, frees their entries, returns n. */
static inline uint32_t d9_ring_pop(struct d9_ring *r, struct d9_raw_event *out, uint32_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t n = 0;
    while (n < max) {
        struct d9_raw_event *e = &r->buf[(t + n) & r->mask];
        if (!d9_ring_entry_used(e))
            break;
        out[n] = *e;
        __atomic_store_n(&e->word, 0, __ATOMIC_RELEASE);
        n++;
    }
    atomic_store_explicit(&r->tail, t + n, memory_order_relaxed);
    return n;
}

#endif
