/* latency.h - wake matching: which parked thread each WAKE released, and
 * its wake-to-run latency = wakee's UNPARK ts - WAKE ts (the WAKE is stamped
 * at the start of the waking call, the UNPARK on return from the park).
 *
 * A wake releases a park of another thread of its process that began at or
 * before the wake and ended at or after it: futex, condvar and semaphore
 * parks by address; eventfd and pipe writes through the epoll sets their fd
 * was registered in (EPOLL_CTL events) at the time, and the blocking reads
 * parked on the fd itself (a pipe write's target is its read end); a thread's
 * THREAD_EXIT the join parked on its tid (the exit is stamped as the thread
 * ends, before the kernel clears its tid and wakes the joiner). An UNPARK up to
 * D9_WAKE_SKEW_NS before the wake still matches, with latency 0: causally the
 * wakee returns after the wake call starts, so an earlier stamp is clock read
 * order across CPUs. The window is kept small: a wider one would credit the
 * wake to a park that ended for another reason (a thread parking again on a
 * level-triggered fd made ready before its park is not matched at all). Among
 * candidates the earliest unpark wins; a broadcast releases them all, a futex
 * wake as many as it reported woken (at least one).
 *
 * Online, in time order: a wake first takes the candidates that unparked
 * within the skew window, then waits (pending) for the parks it may still
 * release; each UNPARK goes to the earliest pending wake it is a candidate
 * of, which is the batch rule above (wakes in time order, each taking the
 * earliest unparks). A pending wake is dropped as soon as no park can reach
 * it any more (older pending wakes absorb every candidate). State: per
 * thread its open park, per (process, class, target) the parked threads,
 * the recent unparks (skew window) and the pending wakes - bounded by
 * threads, not trace length. */
#ifndef DIAL9_DECODER_LATENCY_H
#define DIAL9_DECODER_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define D9_WAKE_SKEW_NS 1000u
#define D9_WAKE_EPFDS 8 /* epoll sets an eventfd/pipe write is followed through */

/* What a park can be woken through. */
enum d9_wake_cls { D9_CLS_NONE, D9_CLS_ADDR, D9_CLS_EPOLL, D9_CLS_FD, D9_CLS_THREAD, D9_CLS_COUNT };
uint8_t d9_park_class(uint64_t call);

/* One matched (wake, wakee) pair. A THREAD_EXIT's match has call
 * D9_CALL_JOIN, target the exiting tid (= waker_tid). */
struct d9_wake {
    uint64_t ts, target, latency_ns;
    uint64_t ev;                /* the WAKE's position in time order (0-based) */
    uint32_t pid, waker_tid, wakee_tid, wakee; /* wakee: the caller's thread index */
    uint32_t nth;               /* 0: the wake's first match (earliest unpark), 1, ... */
    uint8_t call;
};

/* Called per decided match, in unpark order. 0 ok, -1 out of memory. */
typedef int (*d9_match_fn)(void *ctx, const struct d9_wake *w);

struct d9_matcher;

struct d9_matcher *d9_matcher_new(d9_match_fn fn, void *ctx);
void d9_matcher_free(struct d9_matcher *mt);

/* The events, in time order; thread: the caller's index for the event's
 * thread (dense, from 0). Each returns 0, or -1 out of memory. */
int d9_matcher_park(struct d9_matcher *mt, uint32_t thread, const struct d9_event *e);
int d9_matcher_unpark(struct d9_matcher *mt, uint32_t thread, const struct d9_event *e);
int d9_matcher_epoll_ctl(struct d9_matcher *mt, const struct d9_event *e);
/* An event the matcher takes as a wake, whose matches the wake log
 * holds at its position: a WAKE, or a THREAD_EXIT (of a joined thread). */
static inline int d9_event_wakes(const struct d9_event *e)
{
    return e->type == D9_EV_WAKE || e->type == D9_EV_THREAD_EXIT;
}

/* ev: the WAKE's (or THREAD_EXIT's) position in time order. */
int d9_matcher_wake(struct d9_matcher *mt, const struct d9_event *e, uint64_t ev);
int d9_matcher_exit(struct d9_matcher *mt, const struct d9_event *e, uint64_t ev);

/* Position of the oldest wake that may still get a match (UINT64_MAX:
 * none): every match of an older wake has been given to fn. */
uint64_t d9_matcher_oldest(const struct d9_matcher *mt);
/* Gives up on the oldest pending wake (its remaining candidates unmatched). */
void d9_matcher_retire_oldest(struct d9_matcher *mt);

#endif
