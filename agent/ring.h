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
 * on the bench VM: docs/BENCH-HISTORY.md, "Rings without a shared head"). No
 * syscalls.
 *
 * Entries are consumed in order, so when entry h + k is free, so are the
 * entries before it: one load checks the room for k more (the limit below). A ring must start
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
 * than a head count: docs/BENCH-HISTORY.md, "The producer's cursor as a pointer").
 * The inline push checks one thing, next != limit: the entries from next to
 * limit were seen free when limit was set, and stay so (only the producer
 * fills them). limit is the next check point, one every cap / 8 entries
 * from buf (end is one); the push that reaches it takes the exact path,
 * which wraps, tests the half-full signal and sets the next limit (6
 * instructions an event less than checking the wrap, the check point and
 * the room on every push: docs/BENCH-HISTORY.md, session 21).
 * All zero: no ring; every push then fails. */
struct d9_ring_head {
    struct d9_raw_event *next;  /* the entry the next push fills; end after the inline push of
                                 * the last entry, until the exact path wraps it */
    struct d9_raw_event *limit; /* the inline push stops here (next == limit) */
    struct d9_raw_event *buf;   /* the ring's first entry */
    struct d9_raw_event *end;   /* buf + cap */
    uintptr_t span;             /* bytes from one check point to the next: cap / 8 entries */
};

/* A fresh cursor: limit == next, so the first push takes the exact path. */
static inline void d9_ring_head_init(struct d9_ring_head *p, const struct d9_ring *r)
{
    *p = (struct d9_ring_head){.next = r->buf,
                               .limit = r->buf,
                               .buf = r->buf,
                               .end = r->buf + r->cap,
                               .span = (uintptr_t)r->cap / 8 * sizeof(struct d9_raw_event)};
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

/* The entry before e (e: an entry, or the cursor's next, which may be end). */
static inline const struct d9_raw_event *d9_ring_before(const struct d9_ring_head *p, const struct d9_raw_event *e)
{
    return (e == p->buf ? p->end : e) - 1;
}

/* Producer, exact path: the free entry to fill, or NULL when the ring is
 * full (the caller counts a drop) or there is none. keep: entries that must
 * stay free after this push (1 for ordinary events, so a thread's final
 * THREAD_EXIT always finds room; 0 for that event). */
static inline struct d9_raw_event *d9_ring_reserve(struct d9_ring_head *p, uint32_t keep)
{
    if (p->next == p->end) /* after the inline push of the last entry; limit follows,
                            * or a full ring would let the inline push wrap over it */
        p->next = p->limit = p->buf;
    if (!p->next)
        return NULL;
    const struct d9_raw_event *room = keep ? (const struct d9_raw_event *)d9_ring_after(p, p->next) : p->next;
    return d9_ring_entry_used(room) ? NULL : p->next;
}

/* The word of an entry: its type, call, len and x. Little-endian, their
 * bytes in order, made in registers: through the union, a push whose call
 * is not a constant (epoll_ctl's op) built it in memory. check_ring
 * compares the two. */
static inline uint64_t d9_ring_word(uint8_t type, uint8_t call, uint16_t len, int32_t x)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint64_t)type | (uint64_t)call << 8 | (uint64_t)len << 16 | (uint64_t)(uint32_t)x << 32;
#else
    struct d9_raw_event w = {.type = type, .call = call, .len = len, .x = x};
    return w.word;
#endif
}

/* Publishes e, the entry d9_ring_reserve returned, with its word (the
 * entry's other members already stored), and moves the cursor on. */
static inline void d9_ring_commit(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    __atomic_store_n(&e->word, word, __ATOMIC_RELEASE);
    p->next = (struct d9_raw_event *)d9_ring_after(p, e);
}

/* Sets limit after an exact push: the next check point after next, if its
 * entry (buf for end) is free, so that every entry up to it is free and the
 * inline pushes up to it keep one free after them; else next (the ring is
 * nearly full: every push takes the exact path). */
static inline void d9_ring_refill(struct d9_ring_head *p)
{
    uintptr_t off = (uintptr_t)p->next - (uintptr_t)p->buf; /* below cap entries: next is wrapped */
    struct d9_raw_event *cp = (struct d9_raw_event *)((uintptr_t)p->buf + (off & ~(p->span - 1)) + p->span);
    p->limit = d9_ring_entry_used(cp == p->end ? p->buf : cp) ? p->next : cp;
}

/* The exact path's publish: d9_ring_commit, then the next limit, and 1 when
 * e is a check point and the ring holds more than half its capacity, so
 * the caller kicks the writer: at most every cap / 8 pushes while the
 * writer lags. */
static inline int d9_ring_publish(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    d9_ring_commit(p, e, word);
    d9_ring_refill(p);
    if (__builtin_expect((((uintptr_t)e - (uintptr_t)p->buf) & (p->span - 1)) != 0, 1))
        return 0;
    size_t cap = (size_t)(p->end - p->buf);
    /* The entry cap/2 + 1 back from the cursor: in use when more than half are. */
    return d9_ring_entry_used(&p->buf[((size_t)(p->next - p->buf) + cap / 2 - 1) % cap]);
}

/* The agent's inline push (agent.h): 1 and *e, the entry to fill, or 0
 * when the exact path must make this push (a check point, the wrap, a
 * nearly full ring, no ring). Reads no ring memory. Publish *e with
 * d9_ring_commit_fast. (A flag, not a NULL entry: that would cost a second
 * test.) */
static inline int d9_ring_reserve_fast(const struct d9_ring_head *p, struct d9_raw_event **e)
{
    *e = p->next;
    return __builtin_expect(*e != p->limit, 1);
}

/* Publishes e, the entry d9_ring_reserve_fast returned: no wrap (limit is
 * end at most), no limit to set. */
static inline void d9_ring_commit_fast(struct d9_ring_head *p, struct d9_raw_event *e, uint64_t word)
{
    __atomic_store_n(&e->word, word, __ATOMIC_RELEASE);
    p->next = e + 1;
}

/* Consumer, one entry at a time: the entry t (a count of events taken) when
 * it is published, else NULL. The caller copies it, then frees it with
 * d9_ring_free and, when done, stores its new tail (the writer's drain). */
static inline struct d9_raw_event *d9_ring_at(const struct d9_ring *r, uint64_t t)
{
    struct d9_raw_event *e = &r->buf[t & r->mask];
    return d9_ring_entry_used(e) ? e : NULL;
}

static inline void d9_ring_free(struct d9_raw_event *e) { __atomic_store_n(&e->word, 0, __ATOMIC_RELEASE); }

#endif
