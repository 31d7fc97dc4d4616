/* ring.h - single-producer single-consumer ring of raw events.
 * The producer is the thread that owns the slot; the consumer is the writer
 * thread. Lock-free: the producer publishes with a release store of head,
 * the consumer frees space with a release store of tail. No syscalls.
 */
#ifndef DIAL9_RING_H
#define DIAL9_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "dial9_format.h"

struct d9_ring {
    struct d9_raw_event *buf; /* cap entries; mapped once per slot, reused */
    uint32_t cap;             /* power of two */
    uint32_t half, mask;      /* cap / 2 and cap - 1, for the inline push (d9_emit_at) */
    _Alignas(64) _Atomic uint64_t head; /* written by the producer */
    uint64_t tail_seen;                 /* producer's copy of tail: the consumer's
                                         * line is read only when this looks full */
    _Alignas(64) _Atomic uint64_t tail; /* written by the consumer */
};

/* Producer, in place: returns the free entry to fill, or NULL when full
 * (the caller counts a drop). keep: entries that must stay free after this
 * push (1 for ordinary events, so a thread's final THREAD_EXIT always finds
 * room; 0 for that event). The consumer's tail is read only when the cached
 * copy says the ring is full, or when the push would make it half full. */
static inline struct d9_raw_event *d9_ring_reserve(struct d9_ring *r, uint32_t keep)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (__builtin_expect(h - r->tail_seen + keep >= r->cap, 0)) {
        r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - r->tail_seen + keep >= r->cap)
            return NULL;
    }
    return &r->buf[h & (r->cap - 1)];
}

/* Publishes the entry d9_ring_reserve returned (one release store). Returns
 * 1 when this push is the one that made the ring half full (against the
 * consumer's current tail), so the caller kicks the writer once per fill. */
static inline int d9_ring_publish(struct d9_ring *r)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed) + 1;
    atomic_store_explicit(&r->head, h, memory_order_release);
    if (__builtin_expect(h - r->tail_seen == r->cap / 2, 0)) {
        r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        return h - r->tail_seen == r->cap / 2;
    }
    return 0;
}

/* Producer, by copy: 0 when stored, -1 when full; *half as d9_ring_publish. */
static inline int d9_ring_push_keep(struct d9_ring *r, const struct d9_raw_event *ev, int *half, uint32_t keep)
{
    struct d9_raw_event *e = d9_ring_reserve(r, keep);
    if (!e)
        return -1;
    *e = *ev;
    *half = d9_ring_publish(r);
    return 0;
}

static inline int d9_ring_push(struct d9_ring *r, const struct d9_raw_event *ev, int *half)
{
    return d9_ring_push_keep(r, ev, half, 0);
}

/* Consumer: copies up to max events into out, frees their space, returns n. */
static inline uint32_t d9_ring_pop(struct d9_ring *r, struct d9_raw_event *out, uint32_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint32_t n = 0;
    while (t + n < h && n < max) {
        out[n] = r->buf[(t + n) & (r->cap - 1)];
        n++;
    }
    atomic_store_explicit(&r->tail, t + n, memory_order_release);
    return n;
}

static inline uint64_t d9_ring_used(struct d9_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire) -
           atomic_load_explicit(&r->tail, memory_order_acquire);
}

#endif
