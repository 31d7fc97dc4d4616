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

/* The producer's cursor: the entry the next push fills, as a pointer, so a
 * push neither masks an index nor shifts it (9 instructions an event less
 * than a head count: BENCHMARKS.md, "The producer's cursor as a pointer").
 * All zero: no ring; every push then fails at its check point test. */
struct d9_ring_head {
    struct d9_raw_event *next; /* the entry the next push fills */
    struct d9_raw_event *buf;  /* the ring's first entry */
    struct d9_raw_event *end;  /* buf + cap */
    uintptr_t check;           /* an entry is a check point of d9_ring_publish when its
                                * address & check is 0: every cap / 8 entries */
};

/* Every cap / 8 entries whatever the buffer's alignment: the bits that
 * count entries of 32 bytes, below cap / 8 of them. */
static inline void d9_ring_head_init(struct d9_ring_head *p, const struct d9_ring *r)
{
    uintptr_t span = (uintptr_t)r->cap / 8 * sizeof(struct d9_raw_event);
    *p = (struct d9_ring_head){
        .next = r->buf, .buf = r->buf, .end = r->buf + r->cap, .check = (span - 1) & ~(uintptr_t)(sizeof(struct d9_raw_event) - 1)};
}

static inline int d9_ring_entry_used(const struct d9_raw_event *e)
{
    return __atomic_load_n(&e->word, __ATOMIC_ACQUIRE) != 0;
}

/* The entry after e, as an address (e may be the NULL of no ring). */
static inline uintptr_t d9_ring_after(const struct d9_ring_head *p, const struct d9_raw_event *e)
{
    uintptr_t n = (uintptr_t)e + sizeof(*e);
    return n == (uintptr_t)p->end ? (uintptr_t)p->buf : n;
}

/* Producer: the free entry to fill, or NULL when the ring is full (the
 * caller counts a drop) or there is none. keep: entries that must stay
 * free after this push (1 for ordinary events, so a thread's final
 * THREAD_EXIT always finds room; 0 for that event). */
static inline struct d9_raw_event *d9_ring_reserve(const struct d9_ring_head *p, uint32_t keep)
{
    if (!p->next)
        return NULL;
    const struct d9_raw_event *room = keep ? (const struct d9_raw_event *)d9_ring_after(p, p->next) : p->next;
    return d9_ring_entry_used(room) ? NULL : p->next;
}

/* The word of an entry: its type, call, len and x. */
static inline uint64_t d9_ring_word(uint8_t type, uint8_t call, uint16_t len, int32_t x)
{
    struct d9_raw_event w = {.type = type, .call = call, .len = len, .x = x};
    return w.word;
}

/* Publishes e, the entry d9_ring_reserve returned, with its word (the
 * entry's other members already stored), and moves the cursor on. */
static inline void d9_ring_commit(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    __atomic_store_n(&e->word, word, __ATOMIC_RELEASE);
    p->next = (struct d9_raw_event *)d9_ring_after(p, e);
}

/* d9_ring_commit, then: 1 at a check point when the ring holds more than
 * half its capacity, so the caller kicks the writer: at most every cap / 8
 * pushes while the writer lags. */
static inline int d9_ring_publish(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    d9_ring_commit(p, e, word);
    if (__builtin_expect(((uintptr_t)p->next & p->check) != 0, 1))
        return 0;
    size_t cap = (size_t)(p->end - p->buf);
    /* The entry cap/2 + 1 back from the cursor: in use when more than half are. */
    return d9_ring_entry_used(&p->buf[((size_t)(p->next - p->buf) + cap / 2 - 1) % cap]);
}

/* The agent's inline push (agent.h): 1 and *e, the entry to fill, when
 * this push is no check point (the slow path makes those) and leaves an
 * entry free for THREAD_EXIT; else 0. *after: the cursor once *e is
 * committed. One load of the ring: the word of the entry after *e. */
static inline int d9_ring_reserve_fast(const struct d9_ring_head *p, struct d9_raw_event **e, uintptr_t *after)
{
    struct d9_raw_event *cur = p->next; /* read once: the acquire load below would make it twice */
    uintptr_t n = d9_ring_after(p, cur);
    if (__builtin_expect((n & p->check) == 0, 0) ||
        __builtin_expect(d9_ring_entry_used((const struct d9_raw_event *)n), 0))
        return 0;
    *e = cur;
    *after = n;
    return 1;
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
