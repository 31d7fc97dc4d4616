/* analysis.c - see analysis.h. Two passes over the time-ordered events:
 * the first builds per-thread park state, distributions and the list of
 * park intervals; the second replays wakes and epoll registrations in time
 * order and credits each wake to the unpark it caused. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/* Field positions, per D9_SCHEMA_TABLE (fields are only ever appended). */
enum { F_CALL = 0, F_TARGET = 1, F_RESULT = 1, F_COUNT_WAKE = 2, F_COUNT = 0, F_NOWAIT = 1,
       F_OP = 0, F_EPFD = 1, F_FD = 2 };
#define EPOLL_OP_ADD 1
#define EPOLL_OP_DEL 2
#define SCAN_CAP 4096 /* intervals looked at per wake: bounds pathological inputs */

/* What a park can be woken through. */
enum cls { CLS_NONE, CLS_ADDR, CLS_EPOLL };

static enum cls park_class(uint64_t call)
{
    switch (call) {
    case D9_CALL_EPOLL_WAIT: case D9_CALL_EPOLL_PWAIT: case D9_CALL_EPOLL_PWAIT2: return CLS_EPOLL;
    case D9_CALL_FUTEX: case D9_CALL_COND_WAIT: case D9_CALL_SEM_WAIT: return CLS_ADDR;
    default: return CLS_NONE;
    }
}

static int is_io_call(unsigned c) { return c >= D9_CALL_EPOLL_WAIT && c <= D9_CALL_PSELECT; }
static int is_sync_call(unsigned c) { return c == D9_CALL_FUTEX || c == D9_CALL_COND_WAIT || c == D9_CALL_SEM_WAIT; }

struct vec {
    uint64_t *v;
    size_t n, cap;
};

static int vec_push(struct vec *x, uint64_t v)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        uint64_t *nv = realloc(x->v, cap * sizeof(*nv));
        if (!nv)
            return -1;
        x->v = nv;
        x->cap = cap;
    }
    x->v[x->n++] = v;
    return 0;
}

struct interval {
    uint64_t target, park_ts, unpark_ts;
    uint32_t pid, thread; /* thread: index into the stats */
    uint8_t cls, matched;
};

/* Per-thread state while replaying. */
struct work {
    int parked, have_unpark;
    uint64_t park_ts, park_target, unpark_ts;
    uint8_t park_call;
    struct vec parks, busy;
};

struct ctx {
    const struct d9_model *m;
    struct d9_summary *s;
    struct work *w;
    size_t cap;
    struct d9_map idx; /* (pid, tid) -> stats index */
    struct interval *iv;
    size_t niv, iv_cap;
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
    enum cls k = park_class(w->park_call);
    if (k == CLS_NONE)
        return 0;
    if (c->niv == c->iv_cap) {
        size_t cap = c->iv_cap ? c->iv_cap * 2 : 256;
        struct interval *iv = realloc(c->iv, cap * sizeof(*iv));
        if (!iv)
            return -1;
        c->iv = iv;
        c->iv_cap = cap;
    }
    c->iv[c->niv++] = (struct interval){w->park_target, w->park_ts, unpark_ts,
                                         c->s->t[thread].pid, thread, (uint8_t)k, 0};
    return 0;
}

/* Pass 1: one event of thread i. */
static int account(struct ctx *c, uint32_t i, const struct d9_event *e)
{
    struct d9_tstats *t = &c->s->t[i];
    struct work *w = &c->w[i];
    t->events++;
    t->last_ts = e->ts;
    switch (e->type) {
    case D9_EV_PARK:
        t->parks++;
        t->parks_by_call[e->f[F_CALL] < D9_CALL_COUNT ? e->f[F_CALL] : D9_CALL_COUNT]++;
        if (w->have_unpark && vec_push(&w->busy, e->ts - w->unpark_ts) < 0)
            return -1;
        w->have_unpark = 0;
        w->parked = 1; /* a PARK without UNPARK (lost) is superseded */
        w->park_ts = e->ts;
        w->park_call = (uint8_t)e->f[F_CALL];
        w->park_target = e->f[F_TARGET];
        break;
    case D9_EV_UNPARK:
        if (w->parked) { /* else the park happened before the recording */
            uint64_t d = e->ts - w->park_ts;
            t->parked_ns += d;
            if (vec_push(&w->parks, d) < 0 || add_interval(c, i, w, e->ts) < 0)
                return -1;
        }
        w->parked = 0;
        w->have_unpark = 1;
        w->unpark_ts = e->ts;
        break;
    case D9_EV_WAKE: t->wakes_sent++; break;
    case D9_EV_DROP: t->dropped += e->f[F_COUNT]; break;
    case D9_EV_POLL_NOWAIT: t->nowait_polls += e->f[F_NOWAIT]; break;
    default: break;
    }
    return 0;
}

static int iv_cmp_key(const struct interval *a, uint32_t pid, uint8_t cls, uint64_t target)
{
    if (a->pid != pid)
        return a->pid < pid ? -1 : 1;
    if (a->cls != cls)
        return a->cls < cls ? -1 : 1;
    return (a->target > target) - (a->target < target);
}

static int by_key(const void *x, const void *y)
{
    const struct interval *a = x, *b = y;
    int k = iv_cmp_key(a, b->pid, b->cls, b->target);
    return k ? k : (a->unpark_ts > b->unpark_ts) - (a->unpark_ts < b->unpark_ts);
}

/* First interval with this key and unpark_ts >= ts. */
static size_t lower_bound(const struct ctx *c, uint32_t pid, uint8_t cls, uint64_t target, uint64_t ts)
{
    size_t lo = 0, hi = c->niv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int k = iv_cmp_key(&c->iv[mid], pid, cls, target);
        if (k < 0 || (k == 0 && c->iv[mid].unpark_ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The next unmatched interval of key (pid, cls, target), by another thread,
 * parked when the wake at ts happened, from index *from on; -1 if none. */
static long next_candidate(const struct ctx *c, size_t *from, uint32_t pid, uint8_t cls, uint64_t target,
                           uint64_t ts, uint32_t waker_tid)
{
    for (size_t n = 0; *from < c->niv && n < SCAN_CAP; (*from)++, n++) {
        const struct interval *v = &c->iv[*from];
        if (iv_cmp_key(v, pid, cls, target) != 0)
            break;
        if (!v->matched && v->park_ts <= ts && c->s->t[v->thread].tid != waker_tid)
            return (long)(*from)++;
    }
    return -1;
}

static void receive(struct ctx *c, long k)
{
    c->iv[k].matched = 1;
    c->s->t[c->iv[k].thread].wakes_received++;
}

/* fd -> epfd registrations seen in EPOLL_CTL events. */
struct reg {
    uint32_t pid;
    uint64_t fd, epfd;
};

struct regs {
    struct reg *v;
    size_t n, cap;
};

static int regs_update(struct regs *r, const struct d9_event *e)
{
    uint64_t op = e->f[F_OP], epfd = e->f[F_EPFD], fd = e->f[F_FD];
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].pid == e->pid && r->v[i].fd == fd && r->v[i].epfd == epfd) {
            if (op == EPOLL_OP_DEL)
                r->v[i] = r->v[--r->n];
            return 0;
        }
    if (op != EPOLL_OP_ADD)
        return 0;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct reg *v = realloc(r->v, cap * sizeof(*v));
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (struct reg){e->pid, fd, epfd};
    return 0;
}

/* Pass 2: credits one WAKE to the unpark(s) it caused. */
static void match_wake(struct ctx *c, const struct regs *r, const struct d9_event *e)
{
    uint64_t call = e->f[F_CALL], target = e->f[F_TARGET], count = e->f[F_COUNT_WAKE];
    if (call == D9_CALL_EVENTFD_WRITE) { /* the first epoll unpark on an epfd watching the fd */
        long best = -1;
        for (size_t i = 0; i < r->n; i++) {
            if (r->v[i].pid != e->pid || r->v[i].fd != target)
                continue;
            size_t from = lower_bound(c, e->pid, CLS_EPOLL, r->v[i].epfd, e->ts);
            long k = next_candidate(c, &from, e->pid, CLS_EPOLL, r->v[i].epfd, e->ts, e->tid);
            if (k >= 0 && (best < 0 || c->iv[k].unpark_ts < c->iv[best].unpark_ts))
                best = k;
        }
        if (best >= 0)
            receive(c, best);
        return;
    }
    uint64_t limit = call == D9_CALL_COND_BROADCAST ? UINT64_MAX
                   : call == D9_CALL_FUTEX         ? (count ? count : 1)
                                                   : 1;
    size_t from = lower_bound(c, e->pid, CLS_ADDR, target, e->ts);
    for (uint64_t n = 0; n < limit; n++) {
        long k = next_candidate(c, &from, e->pid, CLS_ADDR, target, e->ts, e->tid);
        if (k < 0)
            break;
        receive(c, k);
    }
}

static int match_wakes(struct ctx *c)
{
    struct regs r = {0};
    if (c->niv)
        qsort(c->iv, c->niv, sizeof(*c->iv), by_key);
    for (size_t i = 0; i < c->m->nev; i++) {
        const struct d9_event *e = &c->m->ev[i];
        if (e->type == D9_EV_EPOLL_CTL && e->nfields >= 3 && regs_update(&r, e) < 0) {
            free(r.v);
            return -1;
        }
        if (e->type == D9_EV_WAKE && e->nfields >= 3)
            match_wake(c, &r, e);
    }
    free(r.v);
    return 0;
}

static int by_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static uint64_t rank(const struct vec *x, unsigned pct)
{
    size_t k = (x->n * pct + 99) / 100; /* nearest rank, 1-based */
    return x->v[k ? k - 1 : 0];
}

static struct d9_dist dist_of(struct vec *x)
{
    struct d9_dist d = {0};
    if (!x->n)
        return d;
    qsort(x->v, x->n, sizeof(*x->v), by_u64);
    d.p50 = rank(x, 50);
    d.p99 = rank(x, 99);
    d.max = x->v[x->n - 1];
    d.n = x->n;
    return d;
}

static int has_word(const char *name, const char *const *words)
{
    for (; *words; words++)
        if (strcasestr(name, *words))
            return 1;
    return 0;
}

static void sums(const struct d9_tstats *t, uint64_t *io, uint64_t *sync)
{
    *io = *sync = 0;
    for (unsigned k = 0; k < D9_CALL_COUNT; k++) {
        *io += is_io_call(k) ? t->parks_by_call[k] : 0;
        *sync += is_sync_call(k) ? t->parks_by_call[k] : 0;
    }
}

static int mostly_sync(const struct d9_tstats *t)
{
    uint64_t io, sync;
    sums(t, &io, &sync);
    return t->parks && sync * 2 > t->parks;
}

/* worker: an event loop (parks mostly in epoll/poll/select) or named like
 * one; blocking pool: parks mostly on cond/futex/sem and is named like a
 * pool, or shares its name with another such thread of its process. */
static enum d9_role guess_role(const struct d9_summary *s, size_t i)
{
    static const char *const pool_words[] = {"pool", "blocking", "bio", NULL};
    static const char *const worker_words[] = {"worker", "tokio-runtime-w", NULL};
    const struct d9_tstats *t = &s->t[i];
    uint64_t io, sync;
    sums(t, &io, &sync);
    if (mostly_sync(t) && has_word(t->name, pool_words))
        return D9_ROLE_BLOCKING;
    if (has_word(t->name, worker_words) || (t->parks && io * 2 > t->parks))
        return D9_ROLE_WORKER;
    if (mostly_sync(t) && t->name[0])
        for (size_t j = 0; j < s->nt; j++)
            if (j != i && s->t[j].pid == t->pid && strcmp(s->t[j].name, t->name) == 0 && mostly_sync(&s->t[j]))
                return D9_ROLE_BLOCKING;
    return D9_ROLE_OTHER;
}

static int by_thread(const void *x, const void *y)
{
    const struct d9_tstats *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

int d9_analyse(const struct d9_model *m, struct d9_summary *s)
{
    memset(s, 0, sizeof(*s));
    struct ctx c = {.m = m, .s = s};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->nev; i++) {
        long k = thread_index(&c, &m->ev[i]);
        rc = k < 0 ? -1 : account(&c, (uint32_t)k, &m->ev[i]);
    }
    if (rc == 0)
        rc = match_wakes(&c);
    for (size_t i = 0; i < s->nt; i++) {
        struct d9_tstats *t = &s->t[i];
        uint64_t span = t->last_ts - t->first_ts;
        t->busy_ns = span > t->parked_ns ? span - t->parked_ns : 0;
        t->park_ns = dist_of(&c.w[i].parks);
        t->busy_period_ns = dist_of(&c.w[i].busy);
        free(c.w[i].parks.v);
        free(c.w[i].busy.v);
        s->dropped += t->dropped;
    }
    for (size_t i = 0; i < s->nt; i++)
        s->t[i].role = guess_role(s, i);
    if (s->nt)
        qsort(s->t, s->nt, sizeof(*s->t), by_thread);
    s->events = m->nev;
    free(c.w);
    free(c.iv);
    d9_map_free(&c.idx);
    return rc;
}

void d9_summary_free(struct d9_summary *s)
{
    free(s->t);
    memset(s, 0, sizeof(*s));
}

const char *d9_role_name(enum d9_role r)
{
    return r == D9_ROLE_WORKER ? "worker" : r == D9_ROLE_BLOCKING ? "blocking_pool" : "other";
}
