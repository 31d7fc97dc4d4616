/* verdict.h - red flags over an analysed trace, for `dial9-decode verdict`
 * (a CI gate: clean or not). Every comparison is strictly "above". */
#ifndef DIAL9_DECODER_VERDICT_H
#define DIAL9_DECODER_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

enum d9_flag_kind {
    D9_FLAG_WAKE_LATENCY, D9_FLAG_SCHED_DELAY, D9_FLAG_SLOW_SYSCALL, D9_FLAG_BUSY_PERIOD,
    D9_FLAG_LOCK_WAIT, D9_FLAG_DROPS, D9_FLAG_DAMAGED_INPUT
};

struct d9_flag {
    enum d9_flag_kind kind;
    uint64_t value, threshold; /* worst figure and limit: ns, or events / inputs */
    uint64_t count;            /* values above the limit (drops: threads that dropped) */
    uint32_t pid, tid;         /* 0 when not about a thread */
    const char *name;          /* thread name, NULL when not about a thread */
    int call;                  /* the worst one's call, -1 when not about a call */
    uint64_t window;           /* sched_delay: the worst reading's window, ns; 0 unknown or another flag */
};

const char *d9_flag_name(enum d9_flag_kind k);
int d9_flag_is_duration(enum d9_flag_kind k);

/* The flags of s at the thresholds it was analysed with (s->lim; damaged
 * inputs: bad) into *out (malloc'd, free it): per thread for durations,
 * once for drops and damage. 0 ok, -1 out of memory. */
int d9_verdict(const struct d9_summary *s, int bad, struct d9_flag **out, size_t *nout);

/* "X" decimal milliseconds (e.g. 5, 0.25) -> ns; 0 ok, -1 not a number >= 0. */
int d9_parse_ms(const char *s, uint64_t *ns);
/* A decimal count >= 0; 0 ok, -1 otherwise. */
int d9_parse_count(const char *s, uint64_t *n);

#endif
