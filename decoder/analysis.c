/* analysis.c - see analysis.h. Pass 1 walks the time-ordered events per
 * thread (park state, busy periods, slow syscalls, locks, scheduling); pass 2
 * matches wakes (latency.c) and credits each wakee; then distributions,
 * top-10 lists and roles. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#include "roles.h"

/* Field positions, per D9_SCHEMA_TABLE (fields are only ever appended). */
enum { F_CALL = 0, F_TARGET = 1, F_COUNT = 0, F_NOWAIT = 1, F_SYS_FD = 1, F_SYS_KIND = 2, F_SYS_DUR = 3,
       F_LOCK_WAIT = 2, F_DELAY = 0, F_PREEMPT = 0 };

/* Field i, 0 when the event does not carry it. */
static uint64_t fld(const struct d9_event *e, unsigned i) { return i < e->nfields ? e->f[i] : 0; }

static unsigned call_slot(uint64_t call) { return call < D9_CALL_COUNT ? (unsigned)call : D9_CALL_COUNT; }

/* Per-thread state while replaying. */
struct work {
    int parked, running;          /* running: a busy period is open (since run_ts) */
    uint64_t park_ts, park_target, run_ts, run_slow, run_preempt;
    uint8_t park_call;
    struct d9_vec parks;
};

struct ctx {
    const struct d9_model *m;
    struct d9_summary *s;
    struct work *w;
    size_t cap;
    struct d9_map idx; /* (pid, tid) -> stats index */
    struct d9_park_iv *iv;
    size_t niv, iv_cap;
    struct d9_lock *locks; /* one per LOCK_WAIT until merged */
    size_t nlocks, locks_cap;
    struct d9_topk worst_wakes, worst_slow, long_busy;
};

static long thread_index(struct ctx *c, const struct d9_event *e)
{
    uint32_t i;
    if (d9_map_get(&c->idx, d9_key2(e->pid, e->tid), &i))
        return i;
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
    const struct d9_thread *th = d9_model_thread(c->m, e->pid, e->tid);
    t->name = th ? th->name : "";
    t->first_ts = e->ts;
    return (long)c->s->nt++;
}

static int add_interval(struct ctx *c, uint32_t thread, const struct work *w, uint64_t unpark_ts)
{
    uint8_t k = d9_park_class(w->park_call);
    if (k == D9_CLS_NONE)
        return 0;
    if (d9_grow((void **)&c->iv, &c->iv_cap, c->niv, sizeof(*c->iv)) < 0)
        return -1;
    const struct d9_tstats *t = &c->s->t[thread];
    c->iv[c->niv++] = (struct d9_park_iv){w->park_target, w->park_ts, unpark_ts, t->pid, t->tid, thread, k, 0};
    return 0;
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
    return d9_vec_push(&t->busy, b.duration_ns);
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
    return d9_vec_push(&t->slow, x.duration_ns);
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
    if (d9_grow((void **)&c->locks, &c->locks_cap, c->nlocks, sizeof(*c->locks)) < 0)
        return -1;
    c->locks[c->nlocks++] = (struct d9_lock){fld(e, F_TARGET), 1, wait, wait, t->pid, call};
    return d9_vec_push(&t->lockw, wait);
}

/* Pass 1: one event of thread i. */
static int account(struct ctx *c, uint32_t i, const struct d9_event *e)
{
    struct d9_tstats *t = &c->s->t[i];
    struct work *w = &c->w[i];
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
        break;
    case D9_EV_UNPARK:
        if (w->parked) { /* else the park happened before the recording */
            uint64_t d = e->ts - w->park_ts;
            t->parked_ns += d;
            if (d9_vec_push(&w->parks, d) < 0 || add_interval(c, i, w, e->ts) < 0)
                return -1;
        }
        w->parked = 0;
        run_start(w, e->ts);
        break;
    case D9_EV_WAKE: t->wakes_sent++; break;
    case D9_EV_DROP: t->dropped += fld(e, F_COUNT); break;
    case D9_EV_POLL_NOWAIT: t->nowait_polls += fld(e, F_NOWAIT); break;
    case D9_EV_SLOW_SYSCALL: return slow_syscall(c, t, w, e);
    case D9_EV_LOCK_WAIT: return lock_wait(c, t, e);
    case D9_EV_SCHED_DELAY:
        t->sched_total += fld(e, F_DELAY);
        return d9_vec_push(&t->sched, fld(e, F_DELAY));
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

/* Pass 2: wake matching, credited to the wakees. */
static int credit_wakes(struct ctx *c)
{
    struct d9_summary *s = c->s;
    if (d9_match_wakes(c->m, c->iv, c->niv, &s->wakes, &s->nwakes) < 0)
        return -1;
    for (size_t i = 0; i < s->nwakes; i++) {
        const struct d9_wake *k = &s->wakes[i];
        struct d9_tstats *t = &s->t[k->wakee];
        t->wakes_received++;
        if (d9_vec_push(&t->wake_lat, k->latency_ns) < 0)
            return -1;
        d9_topk_offer(&c->worst_wakes, k->latency_ns, k);
    }
    return 0;
}

static int lock_key_cmp(const void *x, const void *y)
{
    const struct d9_lock *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->target != b->target)
        return a->target < b->target ? -1 : 1;
    return (a->call > b->call) - (a->call < b->call);
}

static int by_total_wait(const void *x, const void *y)
{
    const struct d9_lock *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return lock_key_cmp(x, y);
}

/* Merges the per-wait entries by (pid, address, call). */
static void merge_locks(struct ctx *c)
{
    size_t n = 0;
    if (c->nlocks)
        qsort(c->locks, c->nlocks, sizeof(*c->locks), lock_key_cmp);
    for (size_t i = 0; i < c->nlocks; i++) {
        struct d9_lock *l = &c->locks[i];
        if (n && lock_key_cmp(&c->locks[n - 1], l) == 0) {
            struct d9_lock *o = &c->locks[n - 1];
            o->count++;
            o->total_ns += l->total_ns;
            o->max_ns = l->max_ns > o->max_ns ? l->max_ns : o->max_ns;
        } else
            c->locks[n++] = *l;
    }
    if (n)
        qsort(c->locks, n, sizeof(*c->locks), by_total_wait);
    c->s->locks = c->locks;
    c->s->nlocks = n;
    c->locks = NULL;
}

static int by_thread(const void *x, const void *y)
{
    const struct d9_tstats *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

static void finish_thread(struct d9_tstats *t, struct work *w)
{
    uint64_t span = t->last_ts - t->first_ts;
    t->busy_ns = span > t->parked_ns ? span - t->parked_ns : 0;
    t->park_ns = d9_vec_dist(&w->parks);
    t->busy_period_ns = d9_vec_dist(&t->busy);
    t->wake_latency_ns = d9_vec_dist(&t->wake_lat);
    d9_vec_dist(&t->sched); /* sorted, for the verdict */
    d9_vec_dist(&t->slow);
    d9_vec_dist(&t->lockw);
    d9_vec_free(&w->parks);
}

static size_t take(struct d9_topk *k)
{
    d9_topk_sort(k);
    return k->n;
}

int d9_analyse(const struct d9_model *m, struct d9_summary *s)
{
    memset(s, 0, sizeof(*s));
    struct ctx c = {.m = m, .s = s};
    d9_topk_init(&c.worst_wakes, s->worst_wakes, sizeof(s->worst_wakes[0]));
    d9_topk_init(&c.worst_slow, s->worst_slow, sizeof(s->worst_slow[0]));
    d9_topk_init(&c.long_busy, s->long_busy, sizeof(s->long_busy[0]));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->nev; i++) {
        long k = thread_index(&c, &m->ev[i]);
        rc = k < 0 ? -1 : account(&c, (uint32_t)k, &m->ev[i]);
    }
    if (rc == 0)
        rc = credit_wakes(&c);
    merge_locks(&c);
    for (size_t i = 0; i < s->nt; i++) {
        finish_thread(&s->t[i], &c.w[i]);
        s->dropped += s->t[i].dropped;
    }
    for (size_t i = 0; i < s->nt; i++)
        s->t[i].role = d9_guess_role(s, i);
    if (s->nt)
        qsort(s->t, s->nt, sizeof(*s->t), by_thread);
    s->events = m->nev;
    s->nworst_wakes = take(&c.worst_wakes);
    s->nworst_slow = take(&c.worst_slow);
    s->nlong_busy = take(&c.long_busy);
    free(c.w);
    free(c.iv);
    d9_map_free(&c.idx);
    return rc;
}

void d9_summary_free(struct d9_summary *s)
{
    for (size_t i = 0; i < s->nt; i++) {
        struct d9_tstats *t = &s->t[i];
        d9_vec_free(&t->busy);
        d9_vec_free(&t->wake_lat);
        d9_vec_free(&t->sched);
        d9_vec_free(&t->slow);
        d9_vec_free(&t->lockw);
    }
    free(s->t);
    free(s->wakes);
    free(s->locks);
    memset(s, 0, sizeof(*s));
}
