/* emit.c - the hot path: per-thread state and event recording.
 * No malloc, no lock, no syscall except the futex wake of d9_writer_kick
 * once per half-filled ring. Timestamps are stamps (clock.h): the TSC where
 * it is invariant, converted to CLOCK_MONOTONIC ns by the writer. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core.h"

_Atomic int d9_recording;
D9_TLS struct d9_tls d9_tls;
uint64_t d9_slow_stamps, d9_lock_stamps, d9_min_park_stamps, d9_stat_gap_stamps;

/* Rare: the ring holds more than half its capacity at a check point
 * (ring.h). The kick may make a syscall; the application's errno survives
 * it. Not marked cold: GCC then moved the whole push after the publish,
 * PARK's included, into .text.unlikely. */
__attribute__((noinline)) static void kick(void)
{
    int err = errno;
    d9_writer_kick();
    errno = err;
}

__attribute__((noinline, cold)) static void count_drop(struct d9_slot *s)
{
    atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
}

/* The event is written in place into the ring entry (no temporary, no second
 * copy) and published with one release store. The last entry is kept for
 * THREAD_EXIT: every thread's trace ends with its exit even when its ring
 * filled up (its losses are DROP counts). s is the calling thread's slot. */
static inline __attribute__((always_inline)) int push_at(struct d9_slot *s, uint64_t ts, uint8_t type,
                                                         uint8_t call, uint16_t len, int32_t x, uint64_t a,
                                                         uint64_t b)
{
    struct d9_raw_event *e = d9_ring_reserve(&d9_tls.ring, type != D9_EV_THREAD_EXIT);
    if (D9_UNLIKELY(!e)) {
        count_drop(s);
        return -1;
    }
    e->ts = ts;
    e->a = a;
    e->b = b;
    if (D9_UNLIKELY(d9_ring_publish(&d9_tls.ring, e, d9_ring_word(type, call, len, x))))
        kick();
    return 0;
}

static int push_ev(struct d9_slot *s, const struct d9_raw_event *ev)
{
    return push_at(s, ev->ts, ev->type, ev->call, ev->len, ev->x, ev->a, ev->b);
}

int d9_slot_push(struct d9_slot *s, uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    return push_at(s, ts, type, call, 0, 0, a, b);
}

void d9_name_event(struct d9_raw_event *ev, uint64_t ts, const char *name)
{
    uint64_t ab[2] = {0, 0};
    size_t n = strnlen(name, 15);
    memcpy(ab, name, n);
    *ev = (struct d9_raw_event){.ts = ts, .type = D9_EV_THREAD_NAME, .len = (uint16_t)n, .a = ab[0], .b = ab[1]};
}

int d9_slot_push_name(struct d9_slot *s, uint64_t ts, const char *name)
{
    struct d9_raw_event ev;
    d9_name_event(&ev, ts, name);
    return push_ev(s, &ev);
}

/* d9_busy is held across every push: a signal handler that interrupts a
 * push and records too would be a second producer on this thread's ring.
 * The signal fences keep the compiler from moving the flag across the push. */
static inline void enter(void)
{
    d9_busy++;
    atomic_signal_fence(memory_order_seq_cst);
}

static inline void leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    d9_busy--;
}

/* The calling thread's slot when it may record now, else NULL. */
static inline struct d9_slot *recording_slot(void)
{
    if (d9_busy || d9_exited || !atomic_load_explicit(&d9_recording, memory_order_relaxed))
        return NULL;
    struct d9_slot *s = d9_self;
    return D9_LIKELY(s != NULL) ? s : d9_register_self(0);
}

void d9_emit_raw(const struct d9_raw_event *ev)
{
    struct d9_slot *s = recording_slot();
    if (!s)
        return;
    enter();
    push_ev(s, ev);
    leave();
}

/* d9_emit_at's every other case (agent.h): the exact checks of push_at. */
void d9_emit_slow(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    struct d9_slot *s = recording_slot();
    if (!s)
        return;
    enter();
    push_at(s, ts, type, call, 0, 0, a, b);
    leave();
}

long d9_emit_slow_ret(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b, long ret)
{
    d9_emit_slow(ts, type, call, a, b);
    return ret;
}

/* ts: the stamp of the flush (0: now). */
static void flush_nowait_at(struct d9_slot *s, uint64_t ts)
{
    if (d9_tls.nowait_count) {
        d9_slot_push(s, ts ? ts : d9_stamp(), D9_EV_POLL_NOWAIT, d9_tls.nowait_call, d9_tls.nowait_count, 0);
        d9_tls.nowait_count = 0;
    }
}

void d9_flush_nowait(struct d9_slot *s) { flush_nowait_at(s, 0); }

void d9_sched_poke(void)
{
    struct d9_slot *s = d9_self;
    if (s && !d9_busy)
        d9_sched_check();
}

void d9_note_nowait(uint8_t call)
{
    struct d9_slot *s = recording_slot();
    if (!s)
        return;
    enter();
    d9_tls.nowait_call = call;
    if (++d9_tls.nowait_count >= D9_NOWAIT_FLUSH)
        d9_flush_nowait(s);
    d9_sched_check();
    leave();
}

/* Park and unpark are every event loop's per-iteration cost: the pushes are
 * inlined here, and the pending-poll flush is only called when one is due. */
int d9_park_at(uint64_t ts, uint8_t call, uint64_t target, int64_t timeout_ns)
{
    struct d9_slot *s = recording_slot();
    if (!s)
        return 0;
    enter();
    if (D9_UNLIKELY(d9_tls.nowait_count))
        flush_nowait_at(s, ts);
    uint64_t now = ts ? ts : d9_stamp();
    int ok = push_at(s, now, D9_EV_PARK, call, 0, 0, target, (uint64_t)timeout_ns) == 0;
    d9_sched_park(now);
    leave();
    return ok;
}

int d9_park(uint8_t call, uint64_t target, int64_t timeout_ns) { return d9_park_at(0, call, target, timeout_ns); }

#define JUST_POLLED_SCAN 16 /* entries looked back at, at most */

int d9_just_polled_scan(void)
{
    const struct d9_ring_head *p = &d9_tls.ring;
    if (d9_tls.nowait_count)
        return 1;
    const struct d9_raw_event *e = p->next;
    if (!e)
        return 0;
    /* Back past wakes, lock waits, futex, condvar and semaphore waits
     * (Python takes its GIL back between its poll and its read) and the
     * like, to the latest park or unpark of an I/O wait. The writer zeroes
     * an entry's word once it has taken it (and writes nothing else
     * there): the scan stops at the first such. */
    for (int i = 0; i < JUST_POLLED_SCAN; i++) {
        e = d9_ring_before(p, e);
        struct d9_raw_event h = {.word = __atomic_load_n(&e->word, __ATOMIC_ACQUIRE)};
        if (!h.word)
            return 0;
        if ((h.type == D9_EV_PARK || h.type == D9_EV_UNPARK) && !d9_call_syncs(h.call))
            return h.type == D9_EV_UNPARK && d9_call_polls(h.call) && (int64_t)e->b > 0;
    }
    return 0;
}

void d9_unpark(uint8_t call, int64_t result)
{
    struct d9_slot *s = recording_slot();
    if (!s)
        return;
    enter();
    uint64_t now = d9_stamp();
    push_at(s, now, D9_EV_UNPARK, call, 0, 0, 0, (uint64_t)result);
    if (d9_sched_due(now))
        d9_sched_unpark(s, now); /* a syscall */
    d9_sched_check();
    leave();
}

void d9_unpark_schedstat(struct d9_slot *s, uint64_t ts)
{
    enter();
    d9_sched_unpark(s, ts);
    leave();
}

void d9_emit_name(const char *name)
{
    struct d9_slot *s = recording_slot();
    if (!s || !name)
        return;
    enter();
    d9_slot_push_name(s, d9_stamp(), name);
    leave();
}
