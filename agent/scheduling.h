/* scheduling.h - what the kernel did to a recorded thread: its run-queue
 * wait (SCHED_DELAY, from /proc/thread-self/schedstat) and its involuntary
 * switch-outs (PREEMPT, from perf PERF_RECORD_SWITCH). Off with DIAL9_SCHED=0.
 *
 * SCHED_DELAY: the owner reads run_delay with one pread on a kept fd, but
 * only on an UNPARK ending a park of at least D9_SCHED_MIN_PARK_NS: the
 * wake-to-run wait of a park is part of its duration, so a shorter park
 * cannot hide a longer delay. And at most one read per DIAL9_SCHED_GAP_MS
 * (default 50 ms) per thread (a park longer than that always reads: the
 * last read came before it). The read is a syscall through procfs, 1.5-5 us
 * on the bench VM: at one per ms per thread it cost Tokio 2% more CPU per
 * request; at one per 10 ms still 0.8-1.3% on nginx, memcached, Tokio and
 * node at a fixed rate, where their threads read that often (docs/BENCH-HISTORY.md,
 * "The schedstat gate", "Scheduling delay read less often"). Both gates
 * are checked in the owner's TLS (d9_sched_due), not in this slot's lines.
 * The event carries the run_delay increase since the previous reading:
 * run-queue waits of the busy period and of parks too short to read, as
 * well as the wake-up's; and the window it covers (stamps until the writer
 * converts it, clock.c), so the decoder can judge the wait as a share of
 * that window whatever the gap.
 *
 * PREEMPT (only with DIAL9_PREEMPT=1): a per-thread perf event (software
 * dummy, context_switch=1, times on CLOCK_MONOTONIC) fills a ring the
 * kernel maps for us; the writer pairs each preempting switch-out with the
 * next switch-in. The records carry their own times, so the writer puts
 * them in a chunk of their own: the decoder orders events by time. Off by
 * default: a per-task perf event puts the kernel's perf switch-out/in work
 * on every context switch of the thread, about 1.5 us each on the bench
 * VM (node served 26% fewer requests with it; docs/BENCH-HISTORY.md). The
 * busy-period run-queue waits still show in the next SCHED_DELAY.
 */
#ifndef DIAL9_SCHEDULING_H
#define DIAL9_SCHEDULING_H

#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dial9_format.h"
#include "scheduling_parse.h"

#define D9_SCHED_MIN_PARK_NS 20000u   /* 20 us: shorter parks do not read schedstat */
#define D9_PERF_DATA_PAGES 8u       /* perf ring: 32 KiB, 2048 switch records of 16 bytes */

/* What a slot's owner set up (struct d9_sched.on). */
#define D9_SCHED_STAT 1u
#define D9_SCHED_PERF 2u

struct d9_sched {
    _Atomic uint32_t on;  /* D9_SCHED_*: published by the owner (release) once set up */
    int stat_fd;          /* owner's /proc/thread-self/schedstat, kept open */
    int perf_fd;          /* owner's perf event */
    uint64_t stat_ino;    /* fstat inode and device of stat_fd, and */
    uint64_t stat_dev;
    uint64_t perf_id;     /* PERF_EVENT_IOC_ID of perf_fd: closed only if still ours */
    uint64_t run_delay;   /* owner: run_delay at the last reading, ns */
    uint64_t read_stamp;  /* owner: stamp taken just before the last reading (clock.h) */
    struct perf_event_mmap_page *perf; /* 1 + D9_PERF_DATA_PAGES pages */
    _Atomic uint64_t exit_ts; /* owner at THREAD_EXIT, ns: later switches are not the thread's life */
    struct d9_switch_state sw; /* writer: preemption awaiting its switch-in */
};

struct d9_slot;

/* Owner, registering (d9_busy held): opens the schedstat fd and the perf
 * event of the calling thread. Failures degrade with one stderr line. */
void d9_sched_register(struct d9_slot *s);

/* Owner, right after pushing the UNPARK stamped ts, when d9_sched_due(ts)
 * (agent.h; d9_busy held): reads run_delay, pushes SCHED_DELAY at ts when
 * it grew (a: the increase in ns, b: ts less the previous reading's stamp),
 * and sets when the next reading is due. */
void d9_sched_unpark(struct d9_slot *s, uint64_t ts);

/* Owner, at THREAD_EXIT, before the slot is marked EXITED; ts: CLOCK_MONOTONIC
 * ns (not a stamp), compared with perf's times. */
void d9_sched_exit(struct d9_slot *s, uint64_t ts);

/* Writer: turns s's new perf records into up to max PREEMPT events in out;
 * call again while it returns max. Lost records are added to s->dropped. */
uint32_t d9_sched_drain(struct d9_slot *s, struct d9_raw_event *out, uint32_t max);

/* Writer, freeing the slot (or the fork child, where the perf ring was not
 * inherited, so only the fds are closed): releases what register set up. */
void d9_sched_release(struct d9_slot *s, int fork_child);

#endif
