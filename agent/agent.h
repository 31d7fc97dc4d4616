/* agent.h - the agent's internal interface between the interposers (hooks_*.c)
 * and the recorder core (registry, rings, writer). Nothing here is exported:
 * the library is built with -fvisibility=hidden and only D9_EXPORT symbols
 * (interposers and the dial9_* C ABI) are visible.
 */
#ifndef DIAL9_AGENT_H
#define DIAL9_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "clock.h"
#include "dial9_format.h"
#include "ring.h"
#include "scheduling.h"

#define D9_EXPORT __attribute__((visibility("default")))
/* On extern declarations the hot path reads: one pc-relative load, no GOT. */
#define D9_HIDDEN __attribute__((visibility("hidden")))
#define D9_LIKELY(x) __builtin_expect(!!(x), 1)
#define D9_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define D9_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- Global state ------------------------------------------------------ */

/* Set once by the constructor (or the first event, whichever is first);
 * 0 means the agent records nothing (disabled, secure-exec, bad dir, ...).
 * On, it also says how stamps are taken (clock.h), so that one load answers
 * both for a hook's stamp (d9_stamp_if_recording: 4 instructions an event
 * less than two flags). */
enum { D9_REC_OFF = 0, D9_REC_CLOCK = 1 /* clock_gettime stamps */, D9_REC_TSC = 2 /* TSC stamps */ };
extern _Atomic int d9_recording D9_HIDDEN;

/* ---- Per-thread state -------------------------------------------------- */

enum d9_slot_state { D9_SLOT_FREE = 0, D9_SLOT_LIVE = 1, D9_SLOT_EXITED = 2 };

struct d9_tls;

/* One per thread that emitted at least one event. Owned by that thread
 * (producer side of the ring) and by the writer (consumer side). */
struct d9_slot {
    _Atomic uint32_t state;   /* enum d9_slot_state; writer frees EXITED slots */
    uint32_t tid;             /* gettid() of the owning thread */
    _Atomic uint64_t dropped; /* events lost to a full ring, total */
    uint64_t drop_reported;   /* writer side: dropped already written */
    uint64_t last_ns;         /* writer side: ts of the last ring event converted (clock.h) */
    char name[16];            /* writer side: last name written, NUL-terminated */
    struct d9_sched sched;    /* schedstat fd and perf ring (scheduling.h) */
    pthread_t owner;          /* pthread_self() of the owning thread */
    struct d9_tls *tls;       /* its TLS block, read by d9_direct_cancelled */
    _Atomic uint32_t kicking; /* 1 while d9_direct_cancelled reads tls: the exit waits */
    /* Host closes the owner began and ended (segment.c's close gate):
     * written by the owner only, one instruction each; equal on release. */
    uint32_t closes_begun, closes_ended;
    struct d9_ring ring;
};

/* A slot's owner and tid as another thread reads them (a join's
 * d9_tid_of, a cancel's direct.c): atomic, as claim and reset store them,
 * because the slot may change hands during the read. */
static inline pthread_t d9_slot_owner(const struct d9_slot *s)
{
    return __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
}
static inline uint32_t d9_slot_tid(const struct d9_slot *s) { return __atomic_load_n(&s->tid, __ATOMIC_RELAXED); }

/* Per-thread agent state (initial-exec TLS: no allocation, async-signal-
 * safe). Everything the owner's hot path reads or writes is here, next to
 * libc's own thread data, not in the slot, whose lines a thread coming back
 * from a park finds cold (ring.h). Set up by d9_register_self. */
struct d9_tls {
    struct d9_slot *self;      /* NULL until the first event */
    int busy;                  /* >0 while inside the agent: no recording */
    int exited;                /* the thread passed its exit: record nothing */
    struct d9_ring_head ring;  /* producer's cursor into self's ring; all zero while self is NULL */
    uint64_t stat_after;       /* stamp from which an UNPARK may read schedstat; UINT64_MAX:
                                * never (no schedstat fd, or it broke; scheduling.h) */
    uint64_t park_due;         /* stamp from which the last PARK counts as long (d9_sched_park) */
    struct perf_event_mmap_page *perf; /* self's perf ring, NULL without one (scheduling.h) */
    uint32_t nowait_count;     /* zero-timeout polls not yet written */
    uint8_t nowait_call;       /* call of the latest zero-timeout poll */
    _Atomic uint16_t in_direct; /* the system call of the direct wait it is in, or 0 (direct.h) */
    _Atomic uint8_t kicked;     /* set by d9_direct_cancel_requested before its signal */
    uintptr_t direct_sp;        /* the stack pointer of the latest direct wait's hook (d9_direct_jumped) */
};
/* One TLS block: its offset is one GOT load in a shared library, where
 * three variables took three. The names below are its members. */
extern D9_TLS struct d9_tls d9_tls;
#define d9_self (d9_tls.self)
#define d9_busy (d9_tls.busy)
#define d9_exited (d9_tls.exited)

/* Slow path: registers the calling thread (emits THREAD_START with parent 0
 * when it was not created through our pthread_create trampoline, and its
 * current name from /proc/thread-self/comm). Returns NULL when recording is
 * off or every slot is taken. Preserves errno. */
struct d9_slot *d9_register_self(uint32_t parent_tid);

/* Marks the calling thread as exited: emits THREAD_EXIT and hands the slot to
 * the writer, which frees it once drained. Called from the TLS destructor. */
void d9_thread_exit(void);

/* ---- Emitting events (hot path: no malloc, no lock, no syscall) -------- */

/* Thresholds in stamp units (clock.h), set by the constructor before
 * recording starts: hot-path durations are compared without converting. */
extern uint64_t d9_slow_stamps D9_HIDDEN;     /* DIAL9_SLOW_SYSCALL_US */
extern uint64_t d9_lock_stamps D9_HIDDEN;     /* DIAL9_LOCK_WAIT_US */
extern uint64_t d9_min_park_stamps D9_HIDDEN; /* D9_SCHED_MIN_PARK_NS */
extern uint64_t d9_stat_gap_stamps D9_HIDDEN; /* DIAL9_SCHED_GAP_MS */

/* d9_emit_at's every other case: first event of the thread, inside the
 * agent, recording off, the cursor at its limit (ring.h: the exact checks,
 * the kick, the next limit), THREAD_EXIT. */
__attribute__((cold)) void d9_emit_slow(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b);
/* d9_emit_slow, then ret: for a hook that tail-calls it after its real
 * call, so that nothing (ret included) is kept across a call of its own. */
__attribute__((cold)) long d9_emit_slow_ret(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b,
                                            long ret);

/* The in-place push of the common case through t, the calling thread's
 * &d9_tls: 1 when stored, 0 when the cursor is at its limit (ring.h: a
 * check point, the wrap, a nearly full ring; the slow path then does the
 * exact checks, keeps the entry for THREAD_EXIT, kicks, sets the next
 * limit). Only the thread's TLS and the ring entry are touched. */
static inline __attribute__((always_inline)) int d9_push_fast_at(struct d9_tls *t, uint64_t ts, uint8_t type,
                                                                  uint8_t call, uint64_t a, uint64_t b)
{
    struct d9_ring_head *p = &t->ring;
    t->busy = 1; /* before the cursor is read: a signal handler's push cannot interleave */
    atomic_signal_fence(memory_order_seq_cst);
    struct d9_raw_event *e;
    int fits = d9_ring_reserve_fast(p, &e);
    if (D9_LIKELY(fits)) {
        e->ts = ts;
        e->a = a;
        e->b = b;
        d9_ring_commit_fast(p, e, d9_ring_word(type, call, 0, 0)); /* a constant word */
    }
    atomic_signal_fence(memory_order_seq_cst);
    t->busy = 0;
    return fits;
}

static inline __attribute__((always_inline)) int d9_push_fast(uint64_t ts, uint8_t type, uint8_t call, uint64_t a,
                                                               uint64_t b)
{
    return d9_push_fast_at(&d9_tls, ts, type, call, a, b);
}

/* &d9_tls, its address made now: taken before a system call, so that the
 * push after it loads no TLS offset from the GOT, a page more to walk on
 * a guest whose system calls empty the TLB (direct.h). */
static inline struct d9_tls *d9_tls_here(void)
{
    struct d9_tls *t = &d9_tls;
    __asm__("" : "+r"(t));
    return t;
}

/* Records one event with stamp ts (clock.h) on the calling thread. Drops and
 * counts when the ring is full. Never blocks; preserves errno (only the slow
 * path's kick makes a syscall, and it saves errno). Inline, so an
 * interposer's constant type and call become one store. Neither d9_self nor
 * d9_exited needs a check here: without a slot the cursor is all zero and
 * the inline push fails (ring.h), so the slow path decides. Not for
 * THREAD_EXIT (registry.c pushes it). */
static inline void d9_emit_at(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    if (D9_LIKELY(!d9_busy) && D9_LIKELY(atomic_load_explicit(&d9_recording, memory_order_relaxed)) &&
        D9_LIKELY(d9_push_fast(ts, type, call, a, b)))
        return;
    d9_emit_slow(ts, type, call, a, b);
}

/* d9_emit_at for a stamp taken when d9_busy was 0 and recording on, with
 * only the real call in between (it cannot enter the agent, and a signal
 * handler leaves d9_busy as it found it): the checks are not repeated.
 * Recording may have stopped since; the event then stays in the ring. */
static inline void d9_emit_since(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    if (D9_LIKELY(d9_push_fast(ts, type, call, a, b)))
        return;
    d9_emit_slow(ts, type, call, a, b);
}

/* Records a complete raw event (for types that use the len and x members). */
void d9_emit_raw(const struct d9_raw_event *ev);

static inline void d9_emit(uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    d9_emit_at(d9_stamp(), type, call, a, b);
}

/* Name change of the calling thread (prctl / pthread_setname_np on self). */
void d9_emit_name(const char *name);

/* Some thread renamed another one: the writer re-reads /proc/self/task/N/comm
 * of every live slot on its next cycle and writes the names that changed. */
void d9_names_changed(void);

/* A blocking wait that is no park ended (a contended lock): wakes the writer
 * when the thread's perf ring of switches is half full (scheduling.h). */
void d9_sched_poke(void);

/* Zero-timeout poll: counted in the slot, written as one POLL_NOWAIT event
 * before the thread's next park (or every D9_NOWAIT_FLUSH polls). */
void d9_note_nowait(uint8_t call);

/* ---- Park / unpark helpers used by every blocking interposer ----------- */

void d9_writer_kick(void); /* a ring is more than half full: drain soon (writer.c) */
/* A thread ended a long park: kicks the writer when it sleeps its idle
 * sleep (writer.c, idle_sleep); one relaxed load otherwise. */
void d9_writer_doorbell(void);

/* Owner: wakes the writer when its perf ring of switches is half full
 * (loads, no syscall unless the writer sleeps; scheduling.h). Checked at
 * each recorded PARK and UNPARK, zero-timeout poll and contended lock: a
 * thread that polls without parking (node's loop) is still switched out at
 * every wake-up preemption and lock wait, and its records must not wait for
 * the writer's next period (2048 records: ~100 ms of node's main thread at
 * 12k requests/s). */
static inline void d9_sched_check(void)
{
    struct perf_event_mmap_page *pg = d9_tls.perf;
    if (D9_UNLIKELY(pg != NULL)) {
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_RELAXED);
        uint64_t tail = __atomic_load_n(&pg->data_tail, __ATOMIC_RELAXED);
        if (head - tail >= pg->data_size / 2)
            d9_writer_kick();
    }
}

/* Owner, at a recorded PARK stamped ts: notes when the park becomes long
 * enough to read schedstat at its UNPARK, and checks the perf ring. The
 * global threshold is read here, before the wait: after it, a page not
 * touched since the system call costs a page walk (this VM's system calls
 * empty the TLB). */
static inline void d9_sched_park(uint64_t ts)
{
    d9_tls.park_due = ts + d9_min_park_stamps;
    d9_sched_check();
}

/* Owner, at an UNPARK stamped now: 1 when it reads schedstat (scheduling.h):
 * the park lasted D9_SCHED_MIN_PARK_NS or more and the last reading is
 * DIAL9_SCHED_GAP_MS old. Both gates are in the TLS block, so a park that
 * does not read touches no line of the slot (cold after a park; ring.h) and
 * no global. */
static inline int d9_sched_due(uint64_t now)
{
    return D9_UNLIKELY(now >= d9_tls.park_due) && D9_UNLIKELY(now >= d9_tls.stat_after);
}

/* Emits PARK (flushing pending POLL_NOWAIT first). Returns 1 when recorded,
 * so the caller knows to emit the matching UNPARK. Both preserve errno. */
int d9_park(uint8_t call, uint64_t target, int64_t timeout_ns);
/* d9_park stamped ts (a d9_stamp_if_recording() taken earlier, 0: now), the
 * POLL_NOWAIT it flushes too: a park recorded after the call it was
 * (socket_wait.h). */
int d9_park_at(uint64_t ts, uint8_t call, uint64_t target, int64_t timeout_ns);
void d9_unpark(uint8_t call, int64_t result);
/* d9_unpark's schedstat read when d9_sched_due, out of line (d9_busy held inside). */
void d9_unpark_schedstat(struct d9_slot *s, uint64_t ts);

/* d9_park for a caller that took now = d9_stamp_if_recording() (not 0),
 * with its every-loop-turn case inline: the thread registered, no
 * zero-timeout polls pending, the cursor not at its limit (ring.h). Every
 * other case is d9_park's. Same events, same result. */
static inline int d9_park_fast(uint64_t now, uint8_t call, uint64_t target, int64_t timeout_ns)
{
    if (D9_LIKELY(!d9_tls.nowait_count)) {
        if (D9_LIKELY(d9_push_fast(now, D9_EV_PARK, call, target, (uint64_t)timeout_ns))) {
            d9_sched_park(now);
            return 1;
        }
    }
    return d9_park(call, target, timeout_ns);
}

/* d9_unpark after d9_park_fast(park_ts, ...) returned 1, inline likewise;
 * the schedstat read, when due, stays out of line. Stamped on park_ts's
 * clock: after the wait it touches the TLS block and the ring only. */
static inline __attribute__((always_inline)) void d9_unpark_fast(uint8_t call, int64_t result, uint64_t park_ts)
{
    uint64_t now = d9_stamp_like(park_ts);
    if (D9_LIKELY(d9_push_fast(now, D9_EV_UNPARK, call, 0, (uint64_t)result))) {
        if (d9_sched_due(now))
            d9_unpark_schedstat(d9_self, now);
        d9_sched_check();
        return;
    }
    d9_unpark(call, result);
}

/* d9_just_polled past its thread's cursor: the scan back (emit.c). */
int d9_just_polled_scan(void);

/* 1 when the calling thread has just polled: its latest I/O wait (not a
 * futex, condvar or semaphore wait) was an epoll_wait, poll or select
 * that returned ready fds, read back from the last entries of its ring
 * (16 at most, while the writer has not taken them), or it has
 * zero-timeout polls not yet written. A read of a blocking fd then most
 * likely returns at once (socket_wait.h). No syscall. Inline, the case of
 * a thread that waits in its reads: its last entry is the UNPARK of one. */
static inline int d9_just_polled(void)
{
    const struct d9_ring_head *p = &d9_tls.ring;
    if (D9_LIKELY(p->next && !d9_tls.nowait_count)) {
        uint64_t w = __atomic_load_n(&d9_ring_before(p, p->next)->word, __ATOMIC_ACQUIRE);
        unsigned call = (uint8_t)(w >> 8);
        if ((uint8_t)w == D9_EV_UNPARK && !d9_call_polls(call) && !d9_call_syncs(call))
            return 0;
    }
    return d9_just_polled_scan();
}

/* ---- Writer (agent/writer.c) ------------------------------------------- */

int d9_writer_start(void);  /* creates the writer thread, all signals blocked */
/* The start's form: the thread makes DIAL9_DIR (d9_seg_open_dir), then
 * waits for d9_writer_go (the constructor is through) or d9_writer_cancel
 * (it failed: the thread ends, joined within 100 ms or left to end). */
int d9_writer_start_held(void);
void d9_writer_go(void);
void d9_writer_cancel(void);
void d9_writer_stop(void);  /* final drain, seal, join (given up after 5 s without a block written); idempotent */
void d9_writer_after_fork_child(void);

#endif
