/* latency.h - wake matching: which parked thread each WAKE released, and
 * its wake-to-run latency = wakee's UNPARK ts - WAKE ts (the WAKE is stamped
 * at the start of the waking call, the UNPARK on return from the park).
 *
 * A wake releases a park of another thread of its process that began at or
 * before the wake and ended at or after it: futex, condvar and semaphore
 * parks by address; eventfd and pipe writes through the epoll sets their fd
 * was registered in (EPOLL_CTL events) at the time. An UNPARK up to
 * D9_WAKE_SKEW_NS before the wake still matches, with latency 0: causally the
 * wakee returns after the wake call starts, so an earlier stamp is clock read
 * order across CPUs. The window is kept small: a wider one would credit the
 * wake to a park that ended for another reason (a thread parking again on a
 * level-triggered fd made ready before its park is not matched at all). Among
 * candidates the earliest unpark wins; a broadcast releases them all, a futex
 * wake as many as it reported woken (at least one). */
#ifndef DIAL9_DECODER_LATENCY_H
#define DIAL9_DECODER_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define D9_WAKE_SKEW_NS 1000u

/* What a park can be woken through. */
enum d9_wake_cls { D9_CLS_NONE, D9_CLS_ADDR, D9_CLS_EPOLL };
uint8_t d9_park_class(uint64_t call);

/* One finished park (PARK .. UNPARK) of a class other than NONE. */
struct d9_park_iv {
    uint64_t target, park_ts, unpark_ts;
    uint32_t pid, tid, thread; /* thread: the caller's index */
    uint8_t cls, matched;
};

/* One matched (wake, wakee) pair. */
struct d9_wake {
    uint64_t ts, target, latency_ns;
    size_t ev;                  /* index of the WAKE in m->ev */
    uint32_t pid, waker_tid, wakee_tid, wakee; /* wakee: the interval's thread index */
    uint8_t call;
};

/* Matches every WAKE of the sorted model m against iv[0..niv) (reordered,
 * matched flags set). *out gets the pairs in event order (a broadcast's
 * consecutively, earliest unpark first); free it. 0 ok, -1 out of memory. */
int d9_match_wakes(const struct d9_model *m, struct d9_park_iv *iv, size_t niv, struct d9_wake **out,
                   size_t *nout);

#endif
