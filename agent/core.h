/* core.h - declarations shared by the recorder core (emit, registry,
 * writer, segment, init, api). The interposers use agent.h only. */
#ifndef DIAL9_CORE_H
#define DIAL9_CORE_H

#include "agent.h"
#include "config.h"

#define D9_AGENT_VERSION "0.1.0"
/* Zero-timeout polls counted before one POLL_NOWAIT is written even
 * without a park, so a spinning thread still shows up. */
#define D9_NOWAIT_FLUSH 4096
/* Slot state between FREE and LIVE while its owner sets it up; the writer
 * ignores it (agent.h states are 0..2). */
#define D9_SLOT_CLAIMING 3u

extern struct d9_config d9_cfg; /* init.c: read once by the constructor */

/* ---- emit.c ------------------------------------------------------------ */
/* Pushes one event into s's ring; s is the calling thread's own slot (the
 * producer's cursor is in its TLS). Counts a drop when full, kicks the
 * writer when the ring is more than half full at a check point (ring.h).
 * 0 or -1 (dropped). */
int d9_slot_push(struct d9_slot *s, uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b);
/* THREAD_NAME of name (up to 15 bytes) at ts: builds it / pushes it. */
void d9_name_event(struct d9_raw_event *ev, uint64_t ts, const char *name);
int d9_slot_push_name(struct d9_slot *s, uint64_t ts, const char *name);
/* Writes s's pending zero-timeout poll count as one POLL_NOWAIT event. */
void d9_flush_nowait(struct d9_slot *s);

/* ---- registry.c -------------------------------------------------------- */
int d9_registry_init(uint32_t max_threads, uint32_t ring_events); /* 0 or -1 (logged) */
uint32_t d9_slot_limit(void);           /* slots ever claimed: scan [0, limit) */
struct d9_slot *d9_slot_at(uint32_t i);
void d9_slot_release(struct d9_slot *s); /* writer: drained EXITED slot -> FREE */
void d9_registry_after_fork_child(void); /* every slot FREE, calling thread unregistered */
uint64_t d9_registry_unrecorded(void);   /* threads that found no free slot */
/* The tid of the recorded thread whose pthread_self() is th, live or
 * exited with its slot not yet freed; 0 when none (not recorded, or freed).
 * Scans every slot ever claimed: for rare calls (a join), not the hot
 * path. */
uint32_t d9_tid_of(pthread_t th);
/* Reads /proc/self/task/TID/FILE of thread tid (/proc/thread-self/FILE
 * when tid is 0) into buf, at most size - 1 bytes, NUL-terminated, through
 * libc (callers hold d9_busy, and off a host's cancellation point turn
 * cancellation off). Returns its length, -1 on error. */
int d9_read_task(uint32_t tid, const char *file, char *buf, size_t size);
/* The name of thread tid (its comm file, without the newline; at most 15
 * bytes). Returns its length, -1 on error. */
int d9_read_comm(uint32_t tid, char name[16]);

/* ---- writer.c ---------------------------------------------------------- */
/* Makes the writer drain every ring and write a block now; waits up to
 * timeout_ms. 0 when done, -1 on timeout or when the writer is not running. */
int d9_writer_flush(int timeout_ms);
/* d9_writer_flush, and in the same cycle d9_seg_hand_to(uid, gid)
 * (segment.h): before the program switches to that user. */
int d9_writer_hand_to(uid_t uid, gid_t gid, int timeout_ms);

#endif
