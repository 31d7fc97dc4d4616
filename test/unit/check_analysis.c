/* check_analysis.c - the decoder's "why was it slow" analysis on synthetic
 * traces encoded with the agent's encoder and read back through the reader:
 * wake-to-run latency, summary sections, verdict thresholds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "encode.h"
#include "fmt.h"
#include "model.h"
#include "reader.h"
#include "unit.h"
#include "verdict.h"

#define PID 4242
#define MAXEV 256
#define MS 1000000ull

/* A trace under construction: raw events, encoded on load. */
struct trace {
    struct d9_raw_event ev[MAXEV];
    uint32_t tid[MAXEV];
    size_t n;
};

static void ev(struct trace *t, uint32_t tid, struct d9_raw_event e)
{
    ck_assert_uint_lt(t->n, MAXEV);
    t->tid[t->n] = tid;
    t->ev[t->n++] = e;
}

static void park(struct trace *t, uint32_t tid, uint64_t ts, uint8_t call, uint64_t target)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_PARK, .call = call, .a = target, .b = (uint64_t)-1});
}

static void unpark(struct trace *t, uint32_t tid, uint64_t ts, uint8_t call)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_UNPARK, .call = call, .b = 1});
}

static void wake(struct trace *t, uint32_t tid, uint64_t ts, uint8_t call, uint64_t target, uint64_t count)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_WAKE, .call = call, .a = target, .b = count});
}

static void slow(struct trace *t, uint32_t tid, uint64_t ts, uint8_t call, int32_t fd, uint16_t kind, uint64_t dur)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_SLOW_SYSCALL, .call = call, .x = fd, .len = kind,
                                     .b = dur});
}

static void lockw(struct trace *t, uint32_t tid, uint64_t ts, uint8_t call, uint64_t addr, uint64_t wait)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_LOCK_WAIT, .call = call, .a = addr, .b = wait});
}

static void sched(struct trace *t, uint32_t tid, uint64_t ts, uint64_t delay, uint64_t window)
{
    ev(t, tid,
       (struct d9_raw_event){.ts = ts, .type = D9_EV_SCHED_DELAY, .call = D9_SCHED_SCHEDSTAT, .a = delay, .b = window});
}

static void preempt(struct trace *t, uint32_t tid, uint64_t ts, uint64_t dur)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_PREEMPT, .a = dur});
}

static void epoll_add(struct trace *t, uint32_t tid, uint64_t ts, uint8_t op, uint64_t epfd, uint64_t fd)
{
    ev(t, tid, (struct d9_raw_event){.ts = ts, .type = D9_EV_EPOLL_CTL, .call = op, .a = epfd, .b = fd});
}

/* Encodes the trace as one segment (a chunk per thread, events in the order
 * given), reads it back into m and analyses it into s at thresholds lim
 * (NULL: the defaults). */
static void load_at(struct trace *t, struct d9_model *m, struct d9_summary *s, const struct d9_limits *lim)
{
    static uint8_t raw[1 << 16], seg[1 << 17];
    static const uint32_t tids[1] = {1};
    static const char names[1][16] = {"main"};
    struct d9_header_info h = {.pid = PID, .exe = "/bin/t", .nthreads = 1, .tids = tids, .names = names};
    size_t len = d9_header_build(seg, sizeof(seg), &h);
    ck_assert_uint_gt(len, 0);
    struct d9_enc e;
    d9_enc_init(&e, raw, sizeof(raw));
    uint32_t done[MAXEV];
    size_t ndone = 0;
    for (size_t i = 0; i < t->n; i++) {
        int seen = 0;
        for (size_t k = 0; k < ndone; k++)
            seen |= done[k] == t->tid[i];
        if (seen)
            continue;
        done[ndone++] = t->tid[i];
        ck_assert_int_eq(d9_enc_begin_chunk(&e, t->tid[i], t->ev[i].ts), 0);
        for (size_t k = i; k < t->n; k++)
            if (t->tid[k] == t->tid[i])
                ck_assert_int_eq(d9_enc_event(&e, &t->ev[k]), 0);
    }
    d9_enc_finish(&e);
    size_t b = d9_block_build(&e, seg + len, sizeof(seg) - len);
    ck_assert_uint_gt(b, 0);
    len += b;
    memset(m, 0, sizeof(*m));
    struct d9_seg sg;
    ck_assert_int_eq(d9_read_segment(seg, len, &sg, d9_model_add_event, m), 0);
    ck_assert_int_eq(sg.status, D9_SEG_OK);
    ck_assert_uint_eq(sg.events, t->n);
    ck_assert_int_eq(d9_model_add_header(m, &sg), 0);
    d9_seg_free(&sg);
    ck_assert_int_eq(d9_model_sort(m), 0);
    struct d9_analysis_opts o = {.lim = lim, .wakelog = 1};
    ck_assert_int_eq(d9_analyse_opts(m, s, &o), 0);
}

static void load(struct trace *t, struct d9_model *m, struct d9_summary *s) { load_at(t, m, s, NULL); }

static void unload(struct d9_model *m, struct d9_summary *s)
{
    d9_summary_free(s);
    d9_model_free(m);
}

static const struct d9_tstats *thread(const struct d9_summary *s, uint32_t tid)
{
    for (size_t i = 0; i < s->nt; i++)
        if (s->t[i].tid == tid)
            return &s->t[i];
    ck_abort_msg("tid %u not in the summary", tid);
    return NULL;
}

/* The match of the WAKE (or THREAD_EXIT) at ts, NULL if none; a wake's matches follow it
 * (as the wake log holds them: in wake order). */
static const struct d9_wake *match_at(const struct d9_model *m, const struct d9_summary *s, uint64_t ts)
{
    static struct d9_wake all[MAXEV];
    size_t n = 0;
    ck_assert_int_eq(d9_wakelog_rewind(s->wakelog), 0);
    while (n < MAXEV && d9_wakelog_next(s->wakelog, &all[n]))
        n++;
    ck_assert_uint_eq(n, s->nwakes);
    for (size_t i = 0; i < n; i++)
        if (m->ev[all[i].ev].ts == ts &&
            (m->ev[all[i].ev].type == D9_EV_WAKE || m->ev[all[i].ev].type == D9_EV_THREAD_EXIT))
            return &all[i];
    return NULL;
}

/* The first match of the wake at ts, which must be there with this wakee
 * and latency. */
static const struct d9_wake *matched(const struct d9_model *m, const struct d9_summary *s, uint64_t ts,
                                     uint32_t wakee, uint64_t latency_ns)
{
    const struct d9_wake *k = match_at(m, s, ts);
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(k->wakee_tid, wakee);
    ck_assert_uint_eq(k->latency_ns, latency_ns);
    return k;
}

START_TEST(wake_latency_from_wake_to_unpark)
{
    static struct trace t;
    t.n = 0;
    /* futex: wake at 1000, wakee 11 returns at 1700 -> 700 ns. */
    park(&t, 11, 500, D9_CALL_FUTEX, 0x1000);
    wake(&t, 10, 1000, D9_CALL_FUTEX, 0x1000, 1);
    unpark(&t, 11, 1700, D9_CALL_FUTEX);
    /* Wake stamped 300 ns after the unpark it caused (clock read order across
     * CPUs): matched, latency clamped at 0. */
    park(&t, 11, 2000, D9_CALL_FUTEX, 0x1000);
    unpark(&t, 11, 2700, D9_CALL_FUTEX);
    wake(&t, 10, 3000, D9_CALL_FUTEX, 0x1000, 1);
    /* Far past the unpark (beyond the skew window): not this park's wake. */
    park(&t, 11, 4000, D9_CALL_FUTEX, 0x1000);
    unpark(&t, 11, 4100, D9_CALL_FUTEX);
    wake(&t, 10, 9000, D9_CALL_FUTEX, 0x1000, 1);
    /* A wake before the park: nobody was waiting. */
    wake(&t, 10, 10000, D9_CALL_COND_SIGNAL, 0x2000, 0);
    park(&t, 11, 10100, D9_CALL_COND_WAIT, 0x2000);
    unpark(&t, 11, 10200, D9_CALL_COND_WAIT);
    /* Broadcast: both waiters, each with its own latency, earliest first. */
    park(&t, 11, 20000, D9_CALL_COND_WAIT, 0x3000);
    park(&t, 12, 20010, D9_CALL_COND_WAIT, 0x3000);
    wake(&t, 10, 21000, D9_CALL_COND_BROADCAST, 0x3000, 0);
    unpark(&t, 12, 21500, D9_CALL_COND_WAIT);
    unpark(&t, 11, 24000, D9_CALL_COND_WAIT);
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    const struct d9_wake *k = matched(&m, &s, 1000, 11, 700);
    ck_assert_uint_eq(k->waker_tid, 10);
    matched(&m, &s, 3000, 11, 0);
    ck_assert_ptr_null(match_at(&m, &s, 9000));
    ck_assert_ptr_null(match_at(&m, &s, 10000));
    k = match_at(&m, &s, 21000);
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(k[0].wakee_tid, 12);
    ck_assert_uint_eq(k[0].latency_ns, 500);
    ck_assert_uint_eq(k[1].ev, k[0].ev);
    ck_assert_uint_eq(k[1].wakee_tid, 11);
    ck_assert_uint_eq(k[1].latency_ns, 3000);
    ck_assert_uint_eq(s.nwakes, 4);
    const struct d9_tstats *w11 = thread(&s, 11);
    ck_assert_uint_eq(w11->wakes_received, 3);
    ck_assert_uint_eq(w11->wake_latency_ns.n, 3);
    ck_assert_uint_eq(w11->wake_latency_ns.p50, 700);
    ck_assert_uint_eq(w11->wake_latency_ns.max, 3000);
    ck_assert_uint_eq(thread(&s, 10)->wakes_sent, 5);
    /* worst list: longest first */
    ck_assert_uint_eq(s.nworst_wakes, 4);
    ck_assert_uint_eq(s.worst_wakes[0].latency_ns, 3000);
    ck_assert_uint_eq(s.worst_wakes[0].wakee_tid, 11);
    ck_assert_uint_eq(s.worst_wakes[0].call, D9_CALL_COND_BROADCAST);
    ck_assert_uint_eq(s.worst_wakes[0].target, 0x3000);
    ck_assert_uint_eq(s.worst_wakes[3].latency_ns, 0);
    unload(&m, &s);
}
END_TEST

START_TEST(pipe_and_eventfd_wakes_through_epoll)
{
    static struct trace t;
    t.n = 0;
    epoll_add(&t, 20, 100, 1, 5, 8);  /* pipe read end 8 -> epfd 5 */
    epoll_add(&t, 20, 110, 1, 6, 9);  /* eventfd 9 -> epfd 6 */
    park(&t, 20, 1000, D9_CALL_EPOLL_WAIT, 5);
    wake(&t, 21, 2000, D9_CALL_PIPE_WRITE, 8, 1);
    unpark(&t, 20, 2600, D9_CALL_EPOLL_WAIT);
    park(&t, 20, 3000, D9_CALL_EPOLL_PWAIT, 6);
    wake(&t, 21, 3500, D9_CALL_PIPE_WRITE, 8, 1); /* fd 8 is not in epfd 6: no match */
    wake(&t, 21, 4000, D9_CALL_EVENTFD_WRITE, 9, 1);
    unpark(&t, 20, 4100, D9_CALL_EPOLL_PWAIT);
    epoll_add(&t, 20, 5000, 2, 5, 8); /* removed */
    park(&t, 20, 6000, D9_CALL_EPOLL_WAIT, 5);
    wake(&t, 21, 6500, D9_CALL_PIPE_WRITE, 8, 1);
    unpark(&t, 20, 7000, D9_CALL_EPOLL_WAIT);
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    ck_assert_uint_eq(matched(&m, &s, 2000, 20, 600)->call, D9_CALL_PIPE_WRITE);
    ck_assert_ptr_null(match_at(&m, &s, 3500));
    matched(&m, &s, 4000, 20, 100);
    ck_assert_ptr_null(match_at(&m, &s, 6500));
    ck_assert_uint_eq(thread(&s, 20)->wakes_received, 2);
    unload(&m, &s);
}
END_TEST

START_TEST(pipe_and_eventfd_wakes_of_blocking_reads)
{
    static struct trace t;
    t.n = 0;
    park(&t, 20, 1000, D9_CALL_READ, 8);          /* a blocking read of pipe read end 8 */
    wake(&t, 21, 2000, D9_CALL_PIPE_WRITE, 8, 1); /* its write end's write names 8 */
    unpark(&t, 20, 2300, D9_CALL_READ);
    park(&t, 20, 3000, D9_CALL_READ, 9);          /* a blocking eventfd */
    wake(&t, 21, 3500, D9_CALL_PIPE_WRITE, 8, 1); /* another fd: no match */
    wake(&t, 21, 4000, D9_CALL_EVENTFD_WRITE, 9, 1);
    unpark(&t, 20, 4400, D9_CALL_READ);
    park(&t, 20, 5000, D9_CALL_READ, 8);
    wake(&t, 21, 5200, D9_CALL_FUTEX, 8, 1);      /* a futex wake of address 8 is no fd's */
    unpark(&t, 20, 9000, D9_CALL_READ);
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    matched(&m, &s, 2000, 20, 300);
    ck_assert_ptr_null(match_at(&m, &s, 3500));
    ck_assert_uint_eq(matched(&m, &s, 4000, 20, 400)->call, D9_CALL_EVENTFD_WRITE);
    ck_assert_ptr_null(match_at(&m, &s, 5200));
    ck_assert_uint_eq(thread(&s, 20)->wakes_received, 2);
    unload(&m, &s);
}
END_TEST

START_TEST(thread_exit_releases_the_join_of_its_tid)
{
    static struct trace t;
    t.n = 0;
    park(&t, 40, 1000, D9_CALL_JOIN, 41);           /* 40 joins 41 while it runs */
    wake(&t, 42, 1500, D9_CALL_FUTEX, 41, 1);       /* a futex wake of address 41 is no exit */
    ev(&t, 41, (struct d9_raw_event){.ts = 2000, .type = D9_EV_THREAD_EXIT});
    unpark(&t, 40, 2600, D9_CALL_JOIN);
    ev(&t, 43, (struct d9_raw_event){.ts = 3000, .type = D9_EV_THREAD_EXIT}); /* nobody joins it yet */
    park(&t, 40, 3500, D9_CALL_JOIN, 43);           /* joined after it exited: returns at once */
    unpark(&t, 40, 3600, D9_CALL_JOIN);
    park(&t, 44, 4000, D9_CALL_JOIN, 45);           /* 44 joins 45, which 40's join of 46 does not see */
    park(&t, 40, 4100, D9_CALL_JOIN, 46);
    ev(&t, 45, (struct d9_raw_event){.ts = 5000, .type = D9_EV_THREAD_EXIT});
    unpark(&t, 44, 5100, D9_CALL_JOIN);
    unpark(&t, 40, 9000, D9_CALL_JOIN);             /* timed out: 46 never exited */
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    const struct d9_wake *k = matched(&m, &s, 2000, 40, 600);
    ck_assert_uint_eq(k->call, D9_CALL_JOIN);
    ck_assert_uint_eq(k->waker_tid, 41);
    ck_assert_uint_eq(k->target, 41);
    ck_assert_ptr_null(match_at(&m, &s, 1500));
    ck_assert_ptr_null(match_at(&m, &s, 3000));
    matched(&m, &s, 5000, 44, 100);
    ck_assert_uint_eq(s.nwakes, 2);
    ck_assert_uint_eq(thread(&s, 40)->wakes_received, 1);
    ck_assert_uint_eq(thread(&s, 41)->wakes_sent, 0); /* sent counts WAKE events only */
    unload(&m, &s);
}
END_TEST

START_TEST(slow_syscalls_locks_sched_busy)
{
    static struct trace t;
    t.n = 0;
    /* Thread 30: a busy period 1000..100000 holding two slow syscalls and a
     * preemption; then a short one. */
    unpark(&t, 30, 1000, D9_CALL_EPOLL_WAIT);
    sched(&t, 30, 1000, 400, 1000);
    slow(&t, 30, 2000, D9_CALL_OPENAT, 7, D9_FD_FILE, 30000);
    preempt(&t, 30, 40000, 20000);
    slow(&t, 30, 70000, D9_CALL_DUP2, 1000, D9_FD_SOCKET, 25000);
    park(&t, 30, 100000, D9_CALL_EPOLL_WAIT, 5);
    unpark(&t, 30, 110000, D9_CALL_EPOLL_WAIT);
    sched(&t, 30, 110000, 9000, 109000);
    slow(&t, 30, 111000, D9_CALL_OPENAT, -1, D9_FD_UNKNOWN, 5000);
    park(&t, 30, 120000, D9_CALL_EPOLL_WAIT, 5);
    /* Thread 31: lock waits on two addresses. */
    ev(&t, 31, (struct d9_raw_event){.ts = 500, .type = D9_EV_THREAD_START, .a = 1});
    lockw(&t, 31, 1000, D9_CALL_MUTEX_LOCK, 0xa000, 300);
    lockw(&t, 31, 2000, D9_CALL_MUTEX_LOCK, 0xa000, 700);
    lockw(&t, 31, 3000, D9_CALL_RWLOCK_WRLOCK, 0xb000, 5000);
    park(&t, 31, 4000, D9_CALL_FUTEX, 0x77);
    lockw(&t, 32, 1500, D9_CALL_MUTEX_LOCK, 0xa000, 2000);
    sched(&t, 32, 1600, 5000, 0); /* no window (an older agent's): no share */
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);

    /* slow syscalls by call, per thread and the worst */
    ck_assert_uint_eq(s.sys[D9_CALL_OPENAT].count, 2);
    ck_assert_uint_eq(s.sys[D9_CALL_OPENAT].total_ns, 35000);
    ck_assert_uint_eq(s.sys[D9_CALL_OPENAT].max_ns, 30000);
    ck_assert_uint_eq(s.sys[D9_CALL_DUP2].count, 1);
    ck_assert_uint_eq(s.nworst_slow, 3);
    ck_assert_uint_eq(s.worst_slow[0].duration_ns, 30000);
    ck_assert_uint_eq(s.worst_slow[0].ts, 2000);
    ck_assert_int_eq(s.worst_slow[0].fd, 7);
    ck_assert_uint_eq(s.worst_slow[0].fd_kind, D9_FD_FILE);
    ck_assert_uint_eq(s.worst_slow[1].call, D9_CALL_DUP2);
    ck_assert_int_eq(s.worst_slow[2].fd, -1);
    const struct d9_tstats *a = thread(&s, 30);
    ck_assert_uint_eq(a->slow.n, 3);
    ck_assert_uint_eq(a->slow_max, 30000);
    ck_assert_uint_eq(a->slow_worst_call, D9_CALL_OPENAT);

    /* scheduling delay and preemption */
    ck_assert_uint_eq(a->sched.n, 2);
    ck_assert_uint_eq(a->sched_total, 9400);
    ck_assert_uint_eq(a->sched.max, 9000);
    ck_assert_uint_eq(a->sched_share_delay, 400); /* 40% of 1000 ns, against 9000 of 109000 */
    ck_assert_uint_eq(a->sched_share_window, 1000);
    ck_assert_uint_eq(thread(&s, 32)->sched.n, 1);
    ck_assert_uint_eq(thread(&s, 32)->sched_share_window, 0);
    char sh[40], want[40], dur[24];
    snprintf(want, sizeof(want), "40.0%% of %s", d9_fmt_dur(dur, sizeof(dur), 1000));
    ck_assert_str_eq(d9_fmt_share(sh, sizeof(sh), a->sched_share_delay, a->sched_share_window), want);
    ck_assert_str_eq(d9_fmt_share(sh, sizeof(sh), 5000, 0), "-");
    ck_assert_uint_eq(a->preempts, 1);
    ck_assert_uint_eq(a->preempt_total, 20000);

    /* busy periods: the long one holds 2 slow syscalls and the preemption */
    ck_assert_uint_eq(a->busy_period_ns.n, 2);
    ck_assert_uint_eq(a->busy_period_ns.max, 99000);
    ck_assert_uint_eq(s.nlong_busy, 3); /* 30 x2, 31 from its start */
    ck_assert_uint_eq(s.long_busy[0].tid, 30);
    ck_assert_uint_eq(s.long_busy[0].start_ts, 1000);
    ck_assert_uint_eq(s.long_busy[0].duration_ns, 99000);
    ck_assert_uint_eq(s.long_busy[0].slow_syscalls, 2);
    ck_assert_uint_eq(s.long_busy[0].preempt_ns, 20000);
    ck_assert_uint_eq(s.long_busy[1].duration_ns, 10000);
    ck_assert_uint_eq(s.long_busy[1].slow_syscalls, 1);
    ck_assert_uint_eq(s.long_busy[2].tid, 31);
    ck_assert_uint_eq(s.long_busy[2].duration_ns, 3500);

    /* locks by (pid, address, call), most total wait first */
    ck_assert_uint_eq(s.nlocks, 2);
    ck_assert_uint_eq(s.locks[0].target, 0xb000);
    ck_assert_uint_eq(s.locks[0].call, D9_CALL_RWLOCK_WRLOCK);
    ck_assert_uint_eq(s.locks[0].total_ns, 5000);
    ck_assert_uint_eq(s.locks[1].target, 0xa000);
    ck_assert_uint_eq(s.locks[1].count, 3);
    ck_assert_uint_eq(s.locks[1].total_ns, 3000);
    ck_assert_uint_eq(s.locks[1].max_ns, 2000);
    ck_assert_uint_eq(s.locks[1].pid, PID);
    const struct d9_tstats *l = thread(&s, 31);
    ck_assert_uint_eq(l->lockw.n, 3);
    ck_assert_uint_eq(l->lock_total, 6000);
    ck_assert_uint_eq(l->lock_max, 5000);
    ck_assert_uint_eq(l->lock_worst_call, D9_CALL_RWLOCK_WRLOCK);
    unload(&m, &s);
}
END_TEST

/* Flags of kind k in a verdict of t analysed at lim; the first in *first. */
static size_t flags_of(struct trace *t, int bad, const struct d9_limits *lim, enum d9_flag_kind k,
                       struct d9_flag *first, size_t *all)
{
    struct d9_model m;
    struct d9_summary s;
    load_at(t, &m, &s, lim);
    struct d9_flag *f;
    size_t n, hits = 0;
    ck_assert_int_eq(d9_verdict(&s, bad, &f, &n), 0);
    for (size_t i = 0; i < n; i++)
        if (f[i].kind == k && !hits++ && first)
            *first = f[i];
    free(f);
    unload(&m, &s);
    if (all)
        *all = n;
    return hits;
}

START_TEST(verdict_thresholds)
{
    static struct trace t;
    t.n = 0;
    park(&t, 41, 0, D9_CALL_FUTEX, 0x10);
    wake(&t, 40, 1 * MS, D9_CALL_FUTEX, 0x10, 1);
    unpark(&t, 41, 6 * MS, D9_CALL_FUTEX); /* wake-to-run 5 ms; busy 6 -> 56 ms */
    sched(&t, 41, 6 * MS, 2 * MS, 0); /* no window: judged by sched_ns alone */
    slow(&t, 41, 7 * MS, D9_CALL_FSYNC, 3, D9_FD_FILE, 10 * MS);
    lockw(&t, 41, 20 * MS, D9_CALL_MUTEX_LOCK, 0x99, 10 * MS);
    park(&t, 41, 56 * MS, D9_CALL_FUTEX, 0x10);
    ev(&t, 41, (struct d9_raw_event){.ts = 57 * MS, .type = D9_EV_DROP, .a = 3});

    struct d9_limits at = {5 * MS, 2 * MS, 10 * MS, 50 * MS, 10 * MS, 3, 10}; /* exactly at: clean */
    size_t n;
    ck_assert_uint_eq(flags_of(&t, 0, &at, D9_FLAG_DROPS, NULL, &n), 0);
    ck_assert_uint_eq(n, 0);
    /* One below each figure: that flag, and only that one. */
    static const enum d9_flag_kind kinds[] = {D9_FLAG_WAKE_LATENCY, D9_FLAG_SCHED_DELAY, D9_FLAG_SLOW_SYSCALL,
                                              D9_FLAG_BUSY_PERIOD, D9_FLAG_LOCK_WAIT, D9_FLAG_DROPS};
    uint64_t *fields[] = {&at.wake_ns, &at.sched_ns, &at.slow_ns, &at.busy_ns, &at.lock_ns, &at.max_drops};
    for (int i = 0; i < 6; i++) {
        struct d9_limits below = at;
        *(uint64_t *)((char *)&below + ((char *)fields[i] - (char *)&at)) -= 1;
        struct d9_flag x;
        ck_assert_uint_eq(flags_of(&t, 0, &below, kinds[i], &x, &n), 1);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(x.value, *fields[i]);
        ck_assert_uint_eq(x.threshold, *fields[i] - 1);
        ck_assert_uint_eq(x.count, 1);
        ck_assert_uint_eq(x.pid, PID);
        ck_assert_uint_eq(x.tid, 41);
        ck_assert_uint_eq(x.window, 0);
        if (kinds[i] == D9_FLAG_SLOW_SYSCALL)
            ck_assert_int_eq(x.call, D9_CALL_FSYNC);
        else if (kinds[i] == D9_FLAG_LOCK_WAIT)
            ck_assert_int_eq(x.call, D9_CALL_MUTEX_LOCK);
        else
            ck_assert_int_eq(x.call, -1);
    }
    /* Damaged input is a flag by itself. */
    struct d9_flag x;
    ck_assert_uint_eq(flags_of(&t, 2, &at, D9_FLAG_DAMAGED_INPUT, &x, NULL), 1);
    ck_assert_uint_eq(x.value, 2);
    ck_assert_ptr_null(x.name);
}
END_TEST

/* A sched_delay reading is over when its wait is above sched_ns and above
 * sched_pct of its window; the flag shows the reading furthest above its
 * own threshold, with that threshold and window. */
START_TEST(verdict_sched_share)
{
    static struct trace t;
    t.n = 0;
    unpark(&t, 50, 0, D9_CALL_FUTEX);
    sched(&t, 50, 50 * MS, 4 * MS, 50 * MS);   /* 8% of 50 ms: under 10% */
    sched(&t, 50, 100 * MS, 6 * MS, 50 * MS);  /* 12% of 50 ms: over 5 ms by 1.2x */
    sched(&t, 50, 110 * MS, 3 * MS, 10 * MS);  /* 30% of 10 ms: over 1 ms by 3x, the worst */
    sched(&t, 50, 111 * MS, 900000, 1 * MS);   /* 90% of 1 ms, but not above 1 ms */
    sched(&t, 50, 300 * MS, 19 * MS, 189 * MS); /* 10.05%: over 18.9 ms */
    park(&t, 50, 301 * MS, D9_CALL_FUTEX, 0x10);
    struct d9_limits lim = D9_LIMITS_DEFAULT;
    struct d9_flag x;
    ck_assert_uint_eq(flags_of(&t, 0, &lim, D9_FLAG_SCHED_DELAY, &x, NULL), 1);
    ck_assert_uint_eq(x.count, 3);
    ck_assert_uint_eq(x.value, 3 * MS);
    ck_assert_uint_eq(x.threshold, 1 * MS);
    ck_assert_uint_eq(x.window, 10 * MS);
    ck_assert_uint_eq(x.tid, 50);
    /* 0%: the duration alone, as for readings without a window */
    lim.sched_pct = 0;
    ck_assert_uint_eq(flags_of(&t, 0, &lim, D9_FLAG_SCHED_DELAY, &x, NULL), 1);
    ck_assert_uint_eq(x.count, 4);
    ck_assert_uint_eq(x.value, 19 * MS);
    ck_assert_uint_eq(x.threshold, 1 * MS);
    /* 100%: a wait can never be longer than its window */
    lim.sched_pct = 100;
    ck_assert_uint_eq(flags_of(&t, 0, &lim, D9_FLAG_SCHED_DELAY, NULL, NULL), 0);
    /* 30% is not above 30% */
    lim.sched_pct = 30;
    ck_assert_uint_eq(flags_of(&t, 0, &lim, D9_FLAG_SCHED_DELAY, NULL, NULL), 0);
    lim.sched_pct = 29;
    ck_assert_uint_eq(flags_of(&t, 0, &lim, D9_FLAG_SCHED_DELAY, &x, NULL), 1);
    ck_assert_uint_eq(x.count, 1);
    ck_assert_uint_eq(x.threshold, 2900000);
}
END_TEST

START_TEST(parse_thresholds)
{
    uint64_t v;
    ck_assert_int_eq(d9_parse_ms("5", &v), 0);
    ck_assert_uint_eq(v, 5 * MS);
    ck_assert_int_eq(d9_parse_ms("0.25", &v), 0);
    ck_assert_uint_eq(v, 250000);
    ck_assert_int_eq(d9_parse_ms("0.000001", &v), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(d9_parse_ms(".5", &v), 0);
    ck_assert_uint_eq(v, 500000);
    ck_assert_int_eq(d9_parse_ms("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    static const char *const bad[] = {"", "-1", "+1", " 1", "1ms", "abc", "nan", "inf", "1e300", "1,5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(d9_parse_ms(bad[i], &v) < 0, "accepted %s", bad[i]);
    ck_assert_int_eq(d9_parse_count("12", &v), 0);
    ck_assert_uint_eq(v, 12);
    ck_assert_int_lt(d9_parse_count("1.5", &v), 0);
    ck_assert_int_lt(d9_parse_count("-1", &v), 0);
    ck_assert_int_lt(d9_parse_count("", &v), 0);
}
END_TEST

START_TEST(topk_and_percentiles)
{
    struct d9_vec x = {0};
    for (uint64_t i = 100; i >= 1; i--)
        ck_assert_int_eq(d9_vec_push(&x, i), 0);
    struct d9_dist d = d9_vec_dist(&x);
    ck_assert_uint_eq(d.p50, 50);
    ck_assert_uint_eq(d.p99, 99);
    ck_assert_uint_eq(d.max, 100);
    ck_assert_uint_eq(d.n, 100);
    d9_vec_free(&x);

    uint64_t items[D9_TOPK_MAX];
    struct d9_topk k;
    d9_topk_init(&k, items, sizeof(items[0]));
    for (uint64_t i = 0; i < 50; i++) {
        uint64_t v = (i * 37) % 50;
        d9_topk_offer(&k, v, &v);
    }
    d9_topk_sort(&k);
    ck_assert_uint_eq(k.n, D9_TOPK_MAX);
    for (size_t i = 0; i < k.n; i++)
        ck_assert_uint_eq(items[i], 49 - i);
    /* Offers after a sort (which moves the entries) still evict the weakest. */
    for (uint64_t v = 100; v < 103; v++)
        d9_topk_offer(&k, v, &v);
    for (uint64_t v = 0; v < 40; v++)
        d9_topk_offer(&k, v, &v);
    d9_topk_sort(&k);
    static const uint64_t want[D9_TOPK_MAX] = {102, 101, 100, 49, 48, 47, 46, 45, 44, 43};
    for (size_t i = 0; i < k.n; i++)
        ck_assert_uint_eq(items[i], want[i]);
}
END_TEST

/* A wake is matched once its ts is over: a park stamped with the same ns
 * counts as before it, whether the wake was the last of its thread's run
 * of events or followed by more of its own at that ns. */
START_TEST(wake_matched_after_its_ts)
{
    static struct trace t;
    t.n = 0;
    wake(&t, 10, 5000, D9_CALL_COND_SIGNAL, 0x4000, 0);
    park(&t, 11, 5000, D9_CALL_COND_WAIT, 0x4000); /* sorts after the wake */
    unpark(&t, 11, 5600, D9_CALL_COND_WAIT);
    wake(&t, 10, 7000, D9_CALL_COND_SIGNAL, 0x5000, 0);
    wake(&t, 10, 7000, D9_CALL_COND_SIGNAL, 0x5000, 0);
    park(&t, 11, 7000, D9_CALL_COND_WAIT, 0x5000);
    unpark(&t, 11, 7300, D9_CALL_COND_WAIT);
    wake(&t, 10, 8000, D9_CALL_COND_SIGNAL, 0x6000, 0); /* followed by its own later event: matched at once */
    wake(&t, 10, 8100, D9_CALL_COND_SIGNAL, 0x7000, 0);
    park(&t, 11, 8200, D9_CALL_COND_WAIT, 0x6000);       /* after the wake: not its wake */
    unpark(&t, 11, 8300, D9_CALL_COND_WAIT);
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    matched(&m, &s, 5000, 11, 600);
    matched(&m, &s, 7000, 11, 300);
    ck_assert_ptr_null(match_at(&m, &s, 8000));
    ck_assert_uint_eq(s.nwakes, 2);
    ck_assert_uint_eq(thread(&s, 10)->wakes_sent, 5);
    ck_assert_uint_eq(thread(&s, 11)->wakes_received, 2);
    unload(&m, &s);
}
END_TEST

static void name(struct trace *t, uint32_t tid, uint64_t ts, const char *n)
{
    struct d9_raw_event e = {.ts = ts, .type = D9_EV_THREAD_NAME, .len = (uint16_t)strlen(n)};
    memcpy(&e.a, n, strlen(n)); /* up to 16 bytes across a and b */
    ev(t, tid, e);
}

START_TEST(tokio_workers_and_blocking_pool_share_a_name)
{
    static struct trace t;
    t.n = 0;
    for (uint32_t tid = 50; tid < 54; tid++)
        name(&t, tid, 10, "tokio-runtime-w");
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t ts = 100 + i * 100;
        park(&t, 50, ts, D9_CALL_EPOLL_WAIT, 5); /* worker 50: the driver */
        unpark(&t, 50, ts + 10, D9_CALL_EPOLL_WAIT);
        park(&t, 51, ts, D9_CALL_FUTEX, 0x51); /* worker 51: mostly futex, some epoll */
        unpark(&t, 51, ts + 10, D9_CALL_FUTEX);
        if (i == 0) {
            park(&t, 51, ts + 20, D9_CALL_EPOLL_WAIT, 5);
            unpark(&t, 51, ts + 30, D9_CALL_EPOLL_WAIT);
        }
        for (uint32_t tid = 52; tid < 54; tid++) { /* blocking pool: futex only */
            park(&t, tid, ts, D9_CALL_FUTEX, 0x52);
            unpark(&t, tid, ts + 10, D9_CALL_FUTEX);
        }
    }
    struct d9_model m;
    struct d9_summary s;
    load(&t, &m, &s);
    ck_assert_str_eq(thread(&s, 50)->name, "tokio-runtime-w");
    ck_assert_int_eq(thread(&s, 50)->role, D9_ROLE_WORKER);
    ck_assert_int_eq(thread(&s, 51)->role, D9_ROLE_WORKER);
    ck_assert_int_eq(thread(&s, 52)->role, D9_ROLE_BLOCKING);
    ck_assert_int_eq(thread(&s, 53)->role, D9_ROLE_BLOCKING);
    unload(&m, &s);
}
END_TEST

D9_SUITE(decoder_analysis)
{
    TCase *tc = tcase_create("why_slow");
    tcase_add_test(tc, wake_latency_from_wake_to_unpark);
    tcase_add_test(tc, pipe_and_eventfd_wakes_through_epoll);
    tcase_add_test(tc, pipe_and_eventfd_wakes_of_blocking_reads);
    tcase_add_test(tc, thread_exit_releases_the_join_of_its_tid);
    tcase_add_test(tc, slow_syscalls_locks_sched_busy);
    tcase_add_test(tc, verdict_thresholds);
    tcase_add_test(tc, verdict_sched_share);
    tcase_add_test(tc, parse_thresholds);
    tcase_add_test(tc, topk_and_percentiles);
    tcase_add_test(tc, wake_matched_after_its_ts);
    tcase_add_test(tc, tokio_workers_and_blocking_pool_share_a_name);
    suite_add_tcase(s, tc);
    return s;
}
