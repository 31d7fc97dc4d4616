/* clock.h - the clocks of the agent.
 *
 * The trace's clock is CLOCK_MONOTONIC in ns (docs/FORMAT.md, "Clock"). The
 * hot path does not read it: on x86-64 with an invariant TSC it stores the
 * raw TSC in the ring ("stamps", ~11 ns a read against ~25 ns for the vDSO
 * clock), and the writer turns stamps into CLOCK_MONOTONIC ns before it
 * encodes or looks at them, along a line it re-fits to fresh (TSC,
 * CLOCK_MONOTONIC) pairs every cycle. Elsewhere, or with
 * DIAL9_CLOCK=monotonic, stamps are CLOCK_MONOTONIC ns and nothing converts.
 *
 * Every ring event's ts is a stamp, whoever pushed it; events the writer
 * makes itself (DROP, names it reads, PREEMPT from perf) are ns and never
 * enter a ring. Durations measured on the hot path are differences of
 * stamps, compared with thresholds converted once to stamp units, and
 * stored as stamps too: the writer converts them with the event's ts.
 */
#ifndef DIAL9_CLOCK_H
#define DIAL9_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "dial9_format.h"

/* CLOCK_MONOTONIC in ns through the vDSO: the writer's clock and the trace's. */
static inline uint64_t d9_now(void)
{
    struct timespec ts = {0, 0}; /* 0, not stack garbage, should the call ever fail */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 1 when stamps are TSC ticks. Set by d9_clock_init before recording turns
 * on (the hooks read it only after seeing d9_recording), never changed after;
 * a fork child keeps it with the calibration: the TSC is the machine's. */
extern int d9_clock_tsc __attribute__((visibility("hidden")));

/* d9_now out of line: the inline stamp needs no stack frame. */
uint64_t d9_now_call(void);

/* A stamp says its own clock: TSC ticks are odd, ns even (a tick or a ns
 * is lost). So the stamp that ends a timed call or a park follows the first
 * one's clock (d9_stamp_like) without loading d9_clock_tsc: on a machine
 * where each system call empties the TLB (pti without PCID), a load from
 * one more page after the call costs a page walk, in a real service one to
 * cold memory. */
static inline uint64_t d9_stamp(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(d9_clock_tsc, 1))
        return __builtin_ia32_rdtsc() | 1;
#endif
    return d9_now_call() & ~(uint64_t)1;
}

/* A stamp on the clock of first, a stamp taken earlier by this thread. */
static inline uint64_t d9_stamp_like(uint64_t first)
{
#if defined(__x86_64__)
    if (__builtin_expect(first & 1, 1))
        return __builtin_ia32_rdtsc() | 1;
#endif
    return d9_now_call() & ~(uint64_t)1;
}

/* ---- TSC -> ns lines (pure: unit-tested) ------------------------------ */

#define D9_CLOCK_SHIFT 32 /* mult = ns per tick << 32: 1 ns per 4 s of ticks at 1 GHz */

/* ns(t) = ns + (t - tsc) * mult >> D9_CLOCK_SHIFT, on both sides of the
 * anchor. rt_off: CLOCK_REALTIME minus CLOCK_MONOTONIC, read with it, for
 * deadlines on CLOCK_REALTIME (d9_tmo_relative). */
struct d9_clock_line {
    uint64_t tsc, ns, mult;
    int64_t rt_off;
};

static inline uint64_t d9_ticks_ns(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> D9_CLOCK_SHIFT);
}

static inline uint64_t d9_line_ns(const struct d9_clock_line *l, uint64_t t)
{
    if (t >= l->tsc)
        return l->ns + d9_ticks_ns(t - l->tsc, l->mult);
    uint64_t back = d9_ticks_ns(l->tsc - t, l->mult);
    return back < l->ns ? l->ns - back : 0;
}

/* mult of the line through (t0, n0) and (t1, n1); 0 when t1 <= t0 or n1 < n0. */
static inline uint64_t d9_clock_fit(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1)
{
    if (t1 <= t0 || n1 < n0)
        return 0;
    return (uint64_t)(((unsigned __int128)(n1 - n0) << D9_CLOCK_SHIFT) / (t1 - t0));
}

/* ---- A PARK's timeout in a ring ---------------------------------------
 * Relative ns (0..INT64_MAX), -1 (none), or an absolute deadline the hook
 * passed on without reading a clock: D9_TMO_ABS, D9_TMO_RT when it is on
 * CLOCK_REALTIME (else CLOCK_MONOTONIC), and its ns. The writer makes it ns
 * from the park's ts (d9_tmo_relative), so the trace only holds relative
 * timeouts (docs/FORMAT.md). A deadline past 2116 is clamped there. */
#define D9_TMO_ABS ((uint64_t)1 << 63)
#define D9_TMO_RT ((uint64_t)1 << 62)
#define D9_TMO_NS (D9_TMO_RT - 1)

static inline int64_t d9_tmo_deadline(int realtime, uint64_t ns)
{
    if (ns >= D9_TMO_NS)
        ns = D9_TMO_NS - 1; /* all ones is -1, no timeout */
    return (int64_t)(D9_TMO_ABS | (realtime ? D9_TMO_RT : 0) | ns);
}

/* b of a PARK whose ts is CLOCK_MONOTONIC ns: a tagged deadline becomes
 * the ns left at ts, clamped >= 0; rt_off is CLOCK_REALTIME minus
 * CLOCK_MONOTONIC near ts. Anything else is returned as it is. */
static inline uint64_t d9_tmo_relative(uint64_t b, uint64_t ts, int64_t rt_off)
{
    if (!(b & D9_TMO_ABS) || b == UINT64_MAX)
        return b;
    uint64_t at = (b & D9_TMO_RT) ? ts + (uint64_t)rt_off : ts;
    uint64_t deadline = b & D9_TMO_NS;
    return deadline > at ? deadline - at : 0;
}

/* ---- The agent's clock (clock.c) -------------------------------------- */

enum { D9_CLOCK_AUTO = 0, D9_CLOCK_MONOTONIC = 1 }; /* DIAL9_CLOCK */

/* Picks the stamp unit (TSC when mode is AUTO and the TSC is invariant, and
 * a short calibration agrees) and fits the first line. Constructor only. */
void d9_clock_init(int mode);

/* ns -> stamp units, for the thresholds the hot path compares durations
 * with (the calibration's slope, or 1:1). */
uint64_t d9_ns_stamp(uint64_t ns);

/* Writer, at the start of each cycle: fits the line to a fresh pair, and
 * reads CLOCK_REALTIME's offset for the cycle's deadlines. */
void d9_clock_anchor(void);

/* The line d9_clock_anchor last fitted: the writer takes a copy per drain. */
struct d9_clock_line d9_clock_line_cur(void);

/* Events whose b is a duration in stamps from ts on (hooks_lock.c, hooks_slow.c). */
static inline int d9_has_duration(uint8_t type) { return type == D9_EV_LOCK_WAIT || type == D9_EV_SLOW_SYSCALL; }

/* One ring event along l: when stamps are TSC ticks (tsc, d9_clock_tsc),
 * ts and the durations measured in stamps become ns: LOCK_WAIT and
 * SLOW_SYSCALL's b from ts on, SCHED_DELAY's window up to ts. A duration
 * is converted as the difference of its two ends on the line, so the
 * event's end is where the line puts the closing stamp. Then a PARK's
 * deadline becomes its timeout (d9_tmo_relative). The writer then clamps
 * ts to the thread's previous one (a refit may move the line back a
 * little). */
static inline void d9_clock_event_line(const struct d9_clock_line *l, int tsc, struct d9_raw_event *ev)
{
    if (tsc) {
        uint64_t t0 = ev->ts;
        ev->ts = d9_line_ns(l, t0);
        if (d9_has_duration(ev->type))
            ev->b = d9_line_ns(l, t0 + ev->b) - ev->ts;
        else if (ev->type == D9_EV_SCHED_DELAY)
            ev->b = ev->ts - d9_line_ns(l, ev->b <= t0 ? t0 - ev->b : 0);
    }
    if (ev->type == D9_EV_PARK)
        ev->b = d9_tmo_relative(ev->b, ev->ts, l->rt_off);
}

/* Crash handler (async-signal-safe, no shared line): the same along the
 * line through a pair taken now with the writer's latest slope, and
 * CLOCK_REALTIME's offset read now. */
struct d9_clock_line d9_clock_line_now(void);
static inline void d9_clock_event_on(const struct d9_clock_line *l, struct d9_raw_event *ev)
{
    d9_clock_event_line(l, d9_clock_tsc, ev);
}

#endif
