/* agent.h - the agent's internal interface between the interposers (hooks_*.c)
 * and the recorder core (registry, rings, writer). Nothing here is exported:
 * the library is built with -fvisibility=hidden and only D9_EXPORT symbols
 * (interposers and the dial9_* C ABI) are visible.
 */
#ifndef DIAL9_AGENT_H
#define DIAL9_AGENT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dial9_format.h"
#include "ring.h"
#include "scheduling.h"

#define D9_EXPORT __attribute__((visibility("default")))
#define D9_LIKELY(x) __builtin_expect(!!(x), 1)
#define D9_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define D9_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- Global state ------------------------------------------------------ */

/* Set once by the constructor (or the first event, whichever is first);
 * 0 means the agent records nothing (disabled, secure-exec, bad dir, ...). */
extern _Atomic int d9_recording;

/* ---- Per-thread state -------------------------------------------------- */

enum d9_slot_state { D9_SLOT_FREE = 0, D9_SLOT_LIVE = 1, D9_SLOT_EXITED = 2 };

/* One per thread that emitted at least one event. Owned by that thread
 * (producer side of the ring) and by the writer (consumer side). */
struct d9_slot {
    _Atomic uint32_t state;   /* enum d9_slot_state; writer frees EXITED slots */
    uint32_t tid;             /* gettid() of the owning thread */
    _Atomic uint64_t dropped; /* events lost to a full ring, total */
    uint64_t drop_reported;   /* writer side: dropped already written */
    uint32_t nowait_count;    /* zero-timeout polls not yet written */
    uint8_t nowait_call;      /* call of the latest zero-timeout poll */
    char name[16];            /* writer side: last name written, NUL-terminated */
    struct d9_sched sched;    /* schedstat fd and perf ring (scheduling.h) */
    struct d9_ring ring;
};

/* Per-thread agent flags (initial-exec TLS: no allocation, async-signal-safe). */
extern D9_TLS struct d9_slot *d9_self; /* NULL until the first event */
extern D9_TLS int d9_busy;             /* >0 while inside the agent: no recording */
extern D9_TLS int d9_exited;           /* the thread passed its exit: record nothing */

/* Slow path: registers the calling thread (emits THREAD_START with parent 0
 * when it was not created through our pthread_create trampoline, and its
 * current name from /proc/thread-self/comm). Returns NULL when recording is
 * off or every slot is taken. Preserves errno. */
struct d9_slot *d9_register_self(uint32_t parent_tid);

/* Marks the calling thread as exited: emits THREAD_EXIT and hands the slot to
 * the writer, which frees it once drained. Called from the TLS destructor. */
void d9_thread_exit(void);

/* ---- Emitting events (hot path: no malloc, no lock, no syscall) -------- */

/* CLOCK_MONOTONIC in ns through the vDSO (see docs/FORMAT.md, "Clock").
 * Inline: one call less on every recorded event. */
static inline uint64_t d9_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Records one event with timestamp ts on the calling thread. Drops and counts
 * when the ring is full. Never blocks; preserves errno. */
void d9_emit_at(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b);

/* Records a complete raw event (for types that use the len and x members). */
void d9_emit_raw(const struct d9_raw_event *ev);

static inline void d9_emit(uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    d9_emit_at(d9_now(), type, call, a, b);
}

/* Name change of the calling thread (prctl / pthread_setname_np on self). */
void d9_emit_name(const char *name);

/* Some thread renamed another one: the writer re-reads /proc/self/task/N/comm
 * of every live slot on its next cycle and writes the names that changed. */
void d9_names_changed(void);

/* Zero-timeout poll: counted in the slot, written as one POLL_NOWAIT event
 * before the thread's next park (or every D9_NOWAIT_FLUSH polls). */
void d9_note_nowait(uint8_t call);

/* ---- Park / unpark helpers used by every blocking interposer ----------- */

/* result: the call's return value when >= 0, else -errno. */
static inline int64_t d9_result(long ret, int err) { return ret >= 0 ? ret : -(int64_t)err; }

/* Emits PARK (flushing pending POLL_NOWAIT first). Returns 1 when recorded,
 * so the caller knows to emit the matching UNPARK. */
int d9_park(uint8_t call, uint64_t target, int64_t timeout_ns);
void d9_unpark(uint8_t call, int64_t result);

/* ---- Writer (agent/writer.c) ------------------------------------------- */

int d9_writer_start(void);  /* creates the writer thread, all signals blocked */
void d9_writer_stop(void);  /* final drain, seal, join; idempotent */
void d9_writer_kick(void);  /* a ring is half full: drain soon */
void d9_writer_after_fork_child(void);

#endif
