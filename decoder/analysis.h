/* analysis.h - the statistics behind `summary` and `verdict`. Per thread:
 * parks by call, time parked vs busy, park / busy-period distributions,
 * wakes sent and received with wake-to-run latency (latency.h), kernel
 * scheduling delay, preemption, slow syscalls, lock waits, drops,
 * zero-timeout polls and a role guess. Over the whole input: the worst wakes,
 * slow syscalls by call and the worst ones, contended locks by address, the
 * longest busy periods, and application events by process and name. All
 * durations are ns. */
#ifndef DIAL9_DECODER_ANALYSIS_H
#define DIAL9_DECODER_ANALYSIS_H

#include <stdint.h>

#include "app_events.h"
#include "hist.h"
#include "latency.h"
#include "model.h"
#include "topk.h"
#include "vec.h"
#include "wakelog.h"

enum d9_role { D9_ROLE_OTHER, D9_ROLE_WORKER, D9_ROLE_BLOCKING };

/* The verdict's thresholds (verdict.h). The analysis counts the values above
 * them per thread (d9_tstats.over); every comparison is strictly "above".
 * A sched_delay reading is above when its wait is above sched_ns and above
 * sched_pct % of the window it covers: the agent reads at most once per
 * DIAL9_SCHED_GAP_MS, so a fixed duration alone would flag a lower share of
 * waiting the longer the gap. Readings without a window (traces of agents
 * before window_ns) are judged by sched_ns alone. */
struct d9_limits {
    uint64_t wake_ns, sched_ns, slow_ns, busy_ns, lock_ns; /* durations, ns */
    uint64_t max_drops;                                    /* events */
    uint64_t sched_pct;                                    /* % of a reading's window, 0-100; 0: any share */
};

/* wake 5 ms, sched 1 ms and 10% of the window, slow syscall 10 ms, busy 50 ms, lock 10 ms, 0 drops. */
#define D9_LIMITS_DEFAULT {5000000, 1000000, 10000000, 50000000, 10000000, 0, 10}

/* The durations the thresholds apply to, as indices of d9_tstats.over. */
enum d9_over { D9_OVER_WAKE, D9_OVER_SCHED, D9_OVER_SLOW, D9_OVER_BUSY, D9_OVER_LOCK, D9_OVER_KINDS };

struct d9_tstats {
    uint32_t pid, tid;
    const char *name;      /* the model's, "" when unknown */
    enum d9_role role;
    uint64_t events, first_ts, last_ts;
    uint64_t parks, parks_by_call[D9_CALL_COUNT + 1]; /* last: calls this decoder does not know */
    uint64_t parked_ns, busy_ns;  /* busy = span between first and last event - parked */
    uint64_t wakes_sent, wakes_received, nowait_polls, dropped;
    uint64_t app_events; /* APP events (dial9_event) */
    struct d9_dist park_ns, busy_period_ns, wake_latency_ns; /* from park, busy, wake_lat */
    /* Distributions (hist.h: exact count, sum, min, max; quantiles within
     * 3.1%): park durations, busy periods (thread start or unpark -> next
     * park), latencies of the wakes received, sched_delay readings, slow
     * syscall durations, lock waits. The d9_dist above are exact while a
     * distribution holds at most 64 values. */
    struct d9_hist park, busy, wake_lat, sched, slow, lockw;
    uint64_t over[D9_OVER_KINDS]; /* values above d9_summary.lim */
    /* The sched_delay reading furthest above its threshold (largest wait /
     * threshold), when over[D9_OVER_SCHED]: its wait, the threshold it had
     * (ns) and its window (ns; 0 unknown). */
    uint64_t sched_worst, sched_worst_limit, sched_worst_window;
    /* The sched_delay reading with the largest share of its window waited
     * (readings with a window only): its wait and window, ns; 0 when none. */
    uint64_t sched_share_delay, sched_share_window;
    uint64_t sched_total, lock_total, preempts, preempt_total, preempt_max, slow_max, lock_max;
    uint8_t slow_worst_call, lock_worst_call; /* call of the longest one */
};

struct d9_sys_stat {
    uint64_t count, total_ns, max_ns;
};

struct d9_slow {
    uint64_t ts, duration_ns; /* ts: call start */
    int64_t fd;               /* -1: none */
    uint32_t pid, tid;
    uint8_t call, fd_kind;
};

struct d9_lock {
    uint64_t target, count, total_ns, max_ns;
    uint32_t pid;
    uint8_t call;
};

struct d9_busy {
    uint64_t start_ts, duration_ns, slow_syscalls, preempt_ns;
    uint32_t pid, tid;
};

struct d9_summary {
    struct d9_tstats *t; /* ordered by pid, then tid */
    size_t nt;
    uint64_t events, dropped;
    size_t nwakes;             /* matched (wake, wakee) pairs */
    struct d9_wakelog *wakelog; /* each of them in wake order, when asked for (opts); .wakee is internal */
    struct d9_limits lim;          /* thresholds of tstats.over */
    uint64_t first_ts, last_ts;    /* of all events (0 when none) */
    struct d9_wake worst_wakes[D9_TOPK_MAX]; /* longest latency first */
    size_t nworst_wakes;
    struct d9_sys_stat sys[D9_CALL_COUNT + 1]; /* slow syscalls by call (last: unknown calls) */
    struct d9_slow worst_slow[D9_TOPK_MAX];
    size_t nworst_slow;
    struct d9_lock *locks; /* by (pid, address, call), most total wait first */
    size_t nlocks;
    struct d9_busy long_busy[D9_TOPK_MAX];
    size_t nlong_busy;
    struct d9_apps apps; /* application events per process and name */
};

struct d9_analysis_opts {
    const struct d9_limits *lim; /* thresholds of tstats.over; NULL: D9_LIMITS_DEFAULT */
    int wakelog;                 /* keep every match in s->wakelog */
};

/* One pass over m's events (an in-memory m must be sorted). 0 ok, -1 out of
 * memory. d9_analyse: default options. */
int d9_analyse_opts(const struct d9_model *m, struct d9_summary *s, const struct d9_analysis_opts *o);
int d9_analyse(const struct d9_model *m, struct d9_summary *s);
void d9_summary_free(struct d9_summary *s);
const char *d9_role_name(enum d9_role r);

#endif
