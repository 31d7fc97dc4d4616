/* dial9.h - the public C ABI of libdial9.so, the dial9 flight recorder.
 *
 * The recorder needs no code changes: LD_PRELOAD=libdial9.so ./service.
 * These functions let a program that knows about dial9 ask for more:
 * whether it is recording, that everything recorded so far be on disk now
 * (before taking a snapshot of DIAL9_DIR, say), a dump, and events of its
 * own (application events) in the trace.
 *
 * Linking: either link with -ldial9, or compile with -DDIAL9_WEAK so the
 * declarations are weak and the program also runs without the agent: test
 * the function's address first (if (dial9_flush) dial9_flush();).
 *
 * All functions are thread-safe and never abort the process.
 */
#ifndef DIAL9_H
#define DIAL9_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef DIAL9_WEAK
#define DIAL9_API __attribute__((weak))
#else
#define DIAL9_API
#endif

/* 1 when the agent is recording this process, 0 when it is disabled
 * (DIAL9_ENABLED=0, secure execution, unusable DIAL9_DIR, a write error
 * that stopped recording, or process exit in progress). */
DIAL9_API int dial9_is_recording(void);

/* Asks the writer thread to drain every thread's buffer and write the
 * events to the current segment file now, and waits for it: up to 1 s.
 * Events the calling thread recorded before the call are included.
 * Returns 0 when they were written, -1 when not recording, on timeout, or
 * after a write error. errno is preserved. The segment stays open
 * (NNNNNN.d9.open) until rotation or exit; its blocks are complete and
 * readable as written. */
DIAL9_API int dial9_flush(void);

/* Writes a dump now (docs/FLIGHT.md). With DIAL9_MODE=flight: the history
 * kept in memory (at most DIAL9_FLIGHT_MAX_BYTES bytes, the last
 * DIAL9_FLIGHT_MIN_AGE_MS milliseconds), including events the calling
 * thread recorded before the call, as sealed segments in the process's
 * trace directory; the next dump starts where this one ended. With
 * DIAL9_MODE=continuous: drains every buffer to the current segment, like
 * dial9_flush. reason: a NUL-terminated string, copied (up to 63 bytes) into
 * the dump's log line; NULL or "" means "dial9_dump". Waits up to 2 s.
 * Returns 0 when the dump was written; -1 with errno set otherwise:
 *   ENOTCONN  not recording          EBUSY   rate limit (DIAL9_DUMP_MIN_INTERVAL_MS)
 *   ENODATA   nothing recorded since the last dump
 *   ETIMEDOUT the writer did not answer within 2 s (the dump may still follow)
 *   EIO       a write error (recording stopped).
 * Not async-signal-safe: from a signal handler, raise DIAL9_DUMP_SIGNAL. */
DIAL9_API int dial9_dump(const char *reason);

/* Application events: marks a program puts in its own trace, beside its
 * threads' parks and wakes, e.g. a request's start and end, a cache flush,
 * a queue's length. Shown by dial9-decode's events (type "app", name=,
 * value=), summary (count and values per name) and export (an instant on
 * the thread's track, named by the name, with its value).
 *
 * dial9_event_id returns the id of an event name, to pass to dial9_event:
 * name is 1 to 15 bytes of [A-Za-z0-9_.:/-], NUL-terminated, copied (the
 * caller keeps ownership). The same name gives the same id; ids are 1 to
 * 256 and stay valid for the life of the process (and of its forked
 * children). Works whether or not the agent records. Returns -1 with errno
 * EINVAL (a bad name) or ENOSPC (256 names registered already).
 * Async-signal-safe, no lock. */
DIAL9_API int dial9_event_id(const char *name);

/* Records an application event on the calling thread's buffer, stamped
 * now (CLOCK_MONOTONIC ns, as every event): id from dial9_event_id, value
 * any signed 64-bit number the program chooses (a request id, a size, a
 * duration in ns). Returns 0 when recorded, or counted as dropped when the
 * thread's buffer is full (as every event is); -1 with errno EINVAL (an id
 * dial9_event_id did not return) or ENOTCONN (not recording, or called
 * from a signal handler that interrupted the agent itself). No malloc,
 * lock or system call (a thread's first event of any kind registers it
 * with the agent, once); async-signal-safe. Adds about 8 ns and 49 instructions to an empty call
 * (bench/hotpath app; BENCHMARKS.md's hot-path tables). */
DIAL9_API int dial9_event(int id, long long value);

/* The agent's version, e.g. "0.1.0": a static string, never freed. */
DIAL9_API const char *dial9_version(void);

#ifdef __cplusplus
}
#endif
#endif
