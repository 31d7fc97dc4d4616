/* analysis.c - see analysis.h. One pass over the time-ordered events: per
 * thread park state, busy periods, slow syscalls, locks and scheduling go
 * into histograms and counters; parks, unparks and wakes feed the online
 * wake matcher (latency.c), whose matches are credited to the wakees as they
 * are decided. Then top-10 lists and roles. Memory: per thread, per lock
 * address and the matcher's state; nothing per event. */
#include "analysis.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "roles.h"

/* Field positions, per D9_SCHEMA_TABLE (fields are only ever appended). */
enum { F_CALL = 0, F_TARGET = 1, F_COUNT = 0, F_NOWAIT = 1, F_SYS_FD = 1, F_SYS_KIND = 2, F_SYS_DUR = 3,
       F_LOCK_WAIT = 2, F_DELAY = 0, F_WINDOW = 2, F_PREEMPT = 0 };

/* Field i, 0 when the event does not carry it. */
static uint64_t fld(const struct d9_event *e, unsigned i) { return i < e->nfields ? e->f[i] : 0; }

static unsigned call_slot(uint64_t call) { return call < D9_CALL_COUNT ? (unsigned)call : D9_CALL_COUNT; }

/* Per-thread state while replaying. */
/* The first values of a distribution are also kept as they are: up to
 * FEW of them, its p50/p99 are exact (small traces read as before). */
#define FEW 64
enum { FEW_PARK, FEW_BUSY, FEW_WAKE, FEW_KINDS };

struct work {
    int parked, running;          /* running: a busy period is open (since run_ts) */
    uint64_t park_ts, park_target, run_ts, run_slow, run_preempt;
    uint8_t park_call;
    uint64_t few[FEW_KINDS][FEW];
};

/* A WAKE is matched after the events that share its ts: a park stamped
 * with the same ns is "at or before" the wake even if it sorts after it.
 * Held only when the next event of the span does not show that ts over. */
struct held {
    struct d9_event e;
    uint64_t pos;
};

struct ctx {
    struct d9_summary *s;
    struct work *w;
    size_t cap;
    struct d9_map idx; /* (pid, tid) -> stats index */
    uint32_t last;     /* the previous event's thread */
    struct d9_matcher *mt;
    uint64_t pos;      /* events so far: the position of the current one */
    struct held *held; /* wakes of the current ts, matched once it is over */
    size_t nheld, held_cap;
    struct d9_lock *locks; /* one per (pid, address, call) */
    size_t nlocks, locks_cap;
    struct d9_map lock_idx; /* hash of the lock's key -> locks index (probed on a clash) */
    struct d9_topk worst_wakes, worst_slow, long_busy;
};

/* The duration threshold of kind k (sched_delay's share rule: sched_delay()). */
static inline uint64_t limit_of(const struct d9_limits *l, enum d9_over k)
{
    switch (k) {
    case D9_OVER_WAKE: return l->wake_ns;
    case D9_OVER_SCHED: return l->sched_ns;
    case D9_OVER_SLOW: return l->slow_ns;
    case D9_OVER_BUSY: return l->busy_ns;
    default: return l->lock_ns;
    }
}

/* Adds v to h, counting it in t->over[k] when above the threshold. */
static int put(struct ctx *c, struct d9_tstats *t, struct d9_hist *h, enum d9_over k, uint64_t v)
{
    t->over[k] += v > limit_of(&c->s->lim, k);
    return d9_hist_add(h, v);
}

/* A sched_delay reading: over when its wait is above sched_ns and above
 * sched_pct of its window (analysis.h); the worst is the one furthest
 * above its own threshold. Also keeps the largest share of a window. */
static int sched_delay(struct ctx *c, struct d9_tstats *t, uint64_t delay, uint64_t window)
{
    const struct d9_limits *l = &c->s->lim;
    uint64_t share = window ? (uint64_t)((unsigned __int128)window * l->sched_pct / 100) : 0;
    uint64_t limit = share > l->sched_ns ? share : l->sched_ns;
    t->sched_total += delay;
    if (window && (!t->sched_share_window || (unsigned __int128)delay * t->sched_share_window >
                                                 (unsigned __int128)t->sched_share_delay * window)) {
        t->sched_share_delay = delay;
        t->sched_share_window = window;
    }
    if (delay > limit) {
        unsigned __int128 a = (unsigned __int128)delay * t->sched_worst_limit,
                          b = (unsigned __int128)t->sched_worst * limit;
        if (!t->over[D9_OVER_SCHED]++ || a > b || (a == b && delay > t->sched_worst)) {
            t->sched_worst = delay;
            t->sched_worst_limit = limit;
            t->sched_worst_window = window;
        }
    }
    return d9_hist_add(&t->sched, delay);
}

static int hold_wake(struct ctx *c, const struct d9_event *e)
{
    if (c->nheld == c->held_cap && d9_grow((void **)&c->held, &c->held_cap, c->nheld, sizeof(*c->held)) < 0)
        return -1;
    struct held *h = &c->held[c->nheld++];
    memcpy(&h->e, e, offsetof(struct d9_event, name)); /* most events are wakes: the name is not needed */
    h->e.name_len = 0;
    h->pos = c->pos;
    return 0;
}

/* A WAKE, or a THREAD_EXIT (the wake of a join parked on its tid). */
static int wake_of(struct ctx *c, const struct d9_event *e, uint64_t pos)
{
    return e->type == D9_EV_WAKE ? d9_matcher_wake(c->mt, e, pos) : d9_matcher_exit(c->mt, e, pos);
}

static int match_held(struct ctx *c)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->nheld; i++)
        rc = wake_of(c, &c->held[i].e, c->held[i].pos);
    c->nheld = 0;
    return rc;
}

/* Keeps v (about to go into h) while h holds few values. */
static void few(uint64_t *keep, const struct d9_hist *h, uint64_t v)
{
    if (h->n < FEW)
        keep[h->n] = v;
}

static long thread_index(struct ctx *c, const struct d9_event *e)
{
    uint32_t i;
    if (c->s->nt && c->last < c->s->nt && c->s->t[c->last].tid == e->tid && c->s->t[c->last].pid == e->pid)
        return c->last; /* runs of one thread's events are common */
    if (d9_map_get(&c->idx, d9_key2(e->pid, e->tid), &i))
        return c->last = i;
    if (c->s->nt == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct d9_tstats *t = realloc(c->s->t, cap * sizeof(*t));
        if (t)
            c->s->t = t;
        struct work *w = realloc(c->w, cap * sizeof(*w));
        if (w)
            c->w = w;
        if (!t || !w)
            return -1;
        c->cap = cap;
    }
    if (d9_map_put(&c->idx, d9_key2(e->pid, e->tid), (uint32_t)c->s->nt) < 0)
        return -1;
    struct d9_tstats *t = &c->s->t[c->s->nt];
    memset(t, 0, sizeof(*t));
    memset(&c->w[c->s->nt], 0, sizeof(c->w[0]));
    t->pid = e->pid;
    t->tid = e->tid;
    t->name = ""; /* the model's, once every name is known (finish) */
    t->first_ts = e->ts;
    return (long)c->s->nt++;
}

static void run_start(struct work *w, uint64_t ts)
{
    w->running = 1;
    w->run_ts = ts;
    w->run_slow = w->run_preempt = 0;
}

/* A PARK ends the open busy period. */
static int run_end(struct ctx *c, struct d9_tstats *t, struct work *w, uint64_t ts)
{
    if (!w->running)
        return 0;
    w->running = 0;
    struct d9_busy b = {w->run_ts, ts - w->run_ts, w->run_slow, w->run_preempt, t->pid, t->tid};
    d9_topk_offer(&c->long_busy, b.duration_ns, &b);
    few(w->few[FEW_BUSY], &t->busy, b.duration_ns);
    return put(c, t, &t->busy, D9_OVER_BUSY, b.duration_ns);
}

static int slow_syscall(struct ctx *c, struct d9_tstats *t, struct work *w, const struct d9_event *e)
{
    struct d9_slow x = {e->ts, fld(e, F_SYS_DUR), (int64_t)fld(e, F_SYS_FD), t->pid, t->tid,
                        (uint8_t)call_slot(fld(e, F_CALL)), (uint8_t)fld(e, F_SYS_KIND)};
    struct d9_sys_stat *st = &c->s->sys[x.call];
    st->count++;
    st->total_ns += x.duration_ns;
    st->max_ns = x.duration_ns > st->max_ns ? x.duration_ns : st->max_ns;
    if (!t->slow.n || x.duration_ns > t->slow_max) {
        t->slow_max = x.duration_ns;
        t->slow_worst_call = x.call;
    }
    w->run_slow += w->running;
    d9_topk_offer(&c->worst_slow, x.duration_ns, &x);
    return put(c, t, &t->slow, D9_OVER_SLOW, x.duration_ns);
}

static uint64_t lock_hash(uint32_t pid, uint64_t target, uint8_t call)
{
    uint64_t h = (target ^ ((uint64_t)pid << 8 | call)) * 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

/* The (pid, address, call) entry, added empty when new; NULL out of memory. */
static struct d9_lock *lock_of(struct ctx *c, uint32_t pid, uint64_t target, uint8_t call)
{
    uint32_t i;
    uint64_t h = lock_hash(pid, target, call);
    for (; d9_map_get(&c->lock_idx, h, &i); h = h * 31 + 1) { /* a clash of hashes: probe on */
        struct d9_lock *l = &c->locks[i];
        if (l->pid == pid && l->target == target && l->call == call)
            return l;
    }
    if (d9_grow((void **)&c->locks, &c->locks_cap, c->nlocks, sizeof(*c->locks)) < 0 ||
        d9_map_put(&c->lock_idx, h, (uint32_t)c->nlocks) < 0)
        return NULL;
    c->locks[c->nlocks] = (struct d9_lock){target, 0, 0, 0, pid, call};
    return &c->locks[c->nlocks++];
}

static int lock_wait(struct ctx *c, struct d9_tstats *t, const struct d9_event *e)
{
    uint64_t wait = fld(e, F_LOCK_WAIT);
    uint8_t call = (uint8_t)call_slot(fld(e, F_CALL));
    if (!t->lockw.n || wait > t->lock_max) {
        t->lock_max = wait;
        t->lock_worst_call = call;
    }
    t->lock_total += wait;
    struct d9_lock *l = lock_of(c, t->pid, fld(e, F_TARGET), call);
    if (!l)
        return -1;
    l->count++;
    l->total_ns += wait;
    l->max_ns = wait > l->max_ns ? wait : l->max_ns;
    return put(c, t, &t->lockw, D9_OVER_LOCK, wait);
}

/* Pass 1: one event of thread i, whose stats are t and state w; next_ts:
 * the next event's ts, 0 when not known yet. */
static inline int account(struct ctx *c, uint32_t i, struct d9_tstats *t, struct work *w, const struct d9_event *e,
                          uint64_t next_ts)
{
    t->events++;
    t->last_ts = e->ts;
    switch (e->type) {
    case D9_EV_THREAD_START: run_start(w, e->ts); break;
    case D9_EV_PARK:
        t->parks++;
        t->parks_by_call[call_slot(fld(e, F_CALL))]++;
        if (run_end(c, t, w, e->ts) < 0)
            return -1;
        w->parked = 1; /* a PARK without UNPARK (lost) is superseded */
        w->park_ts = e->ts;
        w->park_call = (uint8_t)fld(e, F_CALL);
        w->park_target = fld(e, F_TARGET);
        return d9_matcher_park(c->mt, i, e);
    case D9_EV_UNPARK:
        if (w->parked) { /* else the park happened before the recording */
            uint64_t d = e->ts - w->park_ts;
            t->parked_ns += d;
            few(w->few[FEW_PARK], &t->park, d);
            if (d9_hist_add(&t->park, d) < 0 || d9_matcher_unpark(c->mt, i, e) < 0)
                return -1;
        }
        w->parked = 0;
        run_start(w, e->ts);
        break;
    case D9_EV_WAKE: /* matched at once when no event of its ts can follow (nor is held) */
        t->wakes_sent++;
        /* fall through */
    case D9_EV_THREAD_EXIT: return !c->nheld && next_ts > e->ts ? wake_of(c, e, c->pos) : hold_wake(c, e);
    case D9_EV_EPOLL_CTL: return d9_matcher_epoll_ctl(c->mt, e);
    case D9_EV_DROP: t->dropped += fld(e, F_COUNT); break;
    case D9_EV_POLL_NOWAIT: t->nowait_polls += fld(e, F_NOWAIT); break;
    case D9_EV_SLOW_SYSCALL: return slow_syscall(c, t, w, e);
    case D9_EV_LOCK_WAIT: return lock_wait(c, t, e);
    case D9_EV_SCHED_DELAY: return sched_delay(c, t, fld(e, F_DELAY), fld(e, F_WINDOW));
    case D9_EV_APP: t->app_events++; return d9_apps_add(&c->s->apps, e);
    case D9_EV_PREEMPT: {
        uint64_t d = fld(e, F_PREEMPT);
        t->preempts++;
        t->preempt_total += d;
        t->preempt_max = d > t->preempt_max ? d : t->preempt_max;
        if (w->running)
            w->run_preempt += d;
        break;
    }
    default: break;
    }
    return 0;
}

/* A decided match: credited to the wakee, logged when asked. */
static int credit(void *ctx, const struct d9_wake *k)
{
    struct ctx *c = ctx;
    struct d9_summary *s = c->s;
    struct d9_tstats *t = &s->t[k->wakee];
    t->wakes_received++;
    s->nwakes++;
    /* offered in wake order, as if all matches were known at the wake */
    d9_topk_offer_at(&c->worst_wakes, k->latency_ns, k->ev << 20 | (k->nth < 0xfffff ? k->nth : 0xfffff), k);
    if (s->wakelog && d9_wakelog_add(s->wakelog, k) < 0)
        return -1;
    few(c->w[k->wakee].few[FEW_WAKE], &t->wake_lat, k->latency_ns);
    return put(c, t, &t->wake_lat, D9_OVER_WAKE, k->latency_ns);
}

/* Moves the matches no pending wake can precede to the log; past its bound
 * the oldest pending wake is given up. */
static int log_matches(struct ctx *c)
{
    struct d9_wakelog *l = c->s->wakelog;
    if (d9_wakelog_flush(l, d9_matcher_oldest(c->mt)) < 0)
        return -1;
    while (d9_wakelog_held(l) > D9_WAKELOG_HELD) {
        d9_matcher_retire_oldest(c->mt);
        if (d9_wakelog_flush(l, d9_matcher_oldest(c->mt)) < 0)
            return -1;
    }
    return 0;
}

static int by_total_wait(const void *x, const void *y)
{
    const struct d9_lock *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->target != b->target)
        return a->target < b->target ? -1 : 1;
    return (a->call > b->call) - (a->call < b->call);
}

static int by_thread(const void *x, const void *y)
{
    const struct d9_tstats *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

/* p50/p99/max: exact from the values kept while few, else the histogram's. */
static struct d9_dist dist(const struct d9_hist *h, uint64_t *keep)
{
    if (h->n <= FEW) {
        struct d9_vec x = {keep, h->n, FEW};
        return d9_vec_dist(&x);
    }
    return (struct d9_dist){d9_hist_quantile(h, 0.5), d9_hist_quantile(h, 0.99), h->max, h->n};
}

static void finish_thread(const struct d9_model *m, struct d9_tstats *t, struct work *w)
{
    uint64_t span = t->last_ts - t->first_ts;
    t->busy_ns = span > t->parked_ns ? span - t->parked_ns : 0;
    t->park_ns = dist(&t->park, w->few[FEW_PARK]);
    t->busy_period_ns = dist(&t->busy, w->few[FEW_BUSY]);
    t->wake_latency_ns = dist(&t->wake_lat, w->few[FEW_WAKE]);
    const struct d9_thread *th = d9_model_thread(m, t->pid, t->tid);
    t->name = th ? th->name : "";
}

static size_t take(struct d9_topk *k)
{
    d9_topk_sort(k);
    return k->n;
}

/* A span of one thread's events: its stats are looked up once (only
 * thread_index moves them). */
static int one_span(void *ctx, const struct d9_event *ev, size_t n)
{
    struct ctx *c = ctx;
    long k = thread_index(c, ev);
    if (k < 0)
        return -1;
    struct d9_tstats *t = &c->s->t[k];
    struct work *w = &c->w[k];
    const struct d9_wakelog *log = c->s->wakelog;
    for (size_t i = 0; i < n; i++) {
        const struct d9_event *e = &ev[i];
        if (c->nheld && e->ts > c->held[0].e.ts && match_held(c) < 0)
            return -1;
        int rc = account(c, (uint32_t)k, t, w, e, i + 1 < n ? ev[i + 1].ts : 0);
        c->pos++;
        if (rc == 0 && log && d9_wakelog_held(log))
            rc = log_matches(c);
        if (rc)
            return rc;
    }
    return 0;
}

int d9_analyse_opts(const struct d9_model *m, struct d9_summary *s, const struct d9_analysis_opts *o)
{
    static const struct d9_limits defaults = D9_LIMITS_DEFAULT;
    memset(s, 0, sizeof(*s));
    s->lim = o->lim ? *o->lim : defaults;
    struct ctx c = {.s = s, .mt = d9_matcher_new(credit, &c)};
    d9_topk_init(&c.worst_wakes, s->worst_wakes, sizeof(s->worst_wakes[0]));
    d9_topk_init(&c.worst_slow, s->worst_slow, sizeof(s->worst_slow[0]));
    d9_topk_init(&c.long_busy, s->long_busy, sizeof(s->long_busy[0]));
    int rc = c.mt && (!o->wakelog || (s->wakelog = d9_wakelog_new())) ? 0 : -1;
    if (rc == 0)
        rc = d9_model_each_span(m, one_span, &c) || match_held(&c) ? -1 : 0;
    if (rc == 0 && s->wakelog && d9_wakelog_held(s->wakelog))
        rc = log_matches(&c);
    if (rc == 0 && s->wakelog && d9_wakelog_rewind(s->wakelog) < 0)
        rc = -1;
    if (c.nlocks)
        qsort(c.locks, c.nlocks, sizeof(*c.locks), by_total_wait);
    s->locks = c.locks;
    s->nlocks = c.nlocks;
    for (size_t i = 0; i < s->nt; i++) {
        finish_thread(m, &s->t[i], &c.w[i]);
        s->dropped += s->t[i].dropped;
        if (i == 0 || s->t[i].first_ts < s->first_ts)
            s->first_ts = s->t[i].first_ts;
        if (s->t[i].last_ts > s->last_ts)
            s->last_ts = s->t[i].last_ts;
    }
    for (size_t i = 0; i < s->nt; i++)
        s->t[i].role = d9_guess_role(s, i);
    if (s->nt)
        qsort(s->t, s->nt, sizeof(*s->t), by_thread);
    s->events = c.pos;
    s->nworst_wakes = take(&c.worst_wakes);
    s->nworst_slow = take(&c.worst_slow);
    s->nlong_busy = take(&c.long_busy);
    d9_apps_sort(&s->apps);
    free(c.w);
    free(c.held);
    d9_matcher_free(c.mt);
    d9_map_free(&c.idx);
    d9_map_free(&c.lock_idx);
    return rc;
}

int d9_analyse(const struct d9_model *m, struct d9_summary *s)
{
    struct d9_analysis_opts o = {0};
    return d9_analyse_opts(m, s, &o);
}

void d9_summary_free(struct d9_summary *s)
{
    for (size_t i = 0; i < s->nt; i++) {
        struct d9_tstats *t = &s->t[i];
        d9_hist_free(&t->park);
        d9_hist_free(&t->busy);
        d9_hist_free(&t->wake_lat);
        d9_hist_free(&t->sched);
        d9_hist_free(&t->slow);
        d9_hist_free(&t->lockw);
    }
    free(s->t);
    d9_wakelog_free(s->wakelog);
    free(s->locks);
    d9_apps_free(&s->apps);
    memset(s, 0, sizeof(*s));
}
