/* latency.c - see latency.h. Intervals are sorted by (pid, class, target,
 * unpark); each wake binary-searches its key and takes unmatched intervals
 * in unpark order. */
#include "latency.h"

#include <stdlib.h>

#include "vec.h"

/* Field positions, per D9_SCHEMA_TABLE. */
enum { F_CALL = 0, F_TARGET = 1, F_COUNT = 2, F_OP = 0, F_EPFD = 1, F_FD = 2 };
#define EPOLL_OP_ADD 1
#define EPOLL_OP_DEL 2
#define SCAN_CAP 4096 /* intervals looked at per wake: bounds pathological inputs */

uint8_t d9_park_class(uint64_t call)
{
    switch (call) {
    case D9_CALL_EPOLL_WAIT: case D9_CALL_EPOLL_PWAIT: case D9_CALL_EPOLL_PWAIT2: return D9_CLS_EPOLL;
    case D9_CALL_FUTEX: case D9_CALL_COND_WAIT: case D9_CALL_SEM_WAIT: return D9_CLS_ADDR;
    default: return D9_CLS_NONE;
    }
}

static int key_cmp(const struct d9_park_iv *a, uint32_t pid, uint8_t cls, uint64_t target)
{
    if (a->pid != pid)
        return a->pid < pid ? -1 : 1;
    if (a->cls != cls)
        return a->cls < cls ? -1 : 1;
    return (a->target > target) - (a->target < target);
}

static int by_key(const void *x, const void *y)
{
    const struct d9_park_iv *a = x, *b = y;
    int k = key_cmp(a, b->pid, b->cls, b->target);
    return k ? k : (a->unpark_ts > b->unpark_ts) - (a->unpark_ts < b->unpark_ts);
}

struct ctx {
    struct d9_park_iv *iv;
    size_t niv;
    struct d9_wake *out;
    size_t nout, cap;
};

/* First interval with this key and unpark_ts >= ts. */
static size_t lower_bound(const struct ctx *c, uint32_t pid, uint8_t cls, uint64_t target, uint64_t ts)
{
    size_t lo = 0, hi = c->niv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int k = key_cmp(&c->iv[mid], pid, cls, target);
        if (k < 0 || (k == 0 && c->iv[mid].unpark_ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The next unmatched interval of the key, by another thread, parked at the
 * wake's ts, from index *from on; -1 if none. */
static long next_candidate(const struct ctx *c, size_t *from, const struct d9_event *e, uint8_t cls,
                           uint64_t target)
{
    for (size_t n = 0; *from < c->niv && n < SCAN_CAP; (*from)++, n++) {
        const struct d9_park_iv *v = &c->iv[*from];
        if (key_cmp(v, e->pid, cls, target) != 0)
            break;
        if (!v->matched && v->park_ts <= e->ts && v->tid != e->tid)
            return (long)(*from)++;
    }
    return -1;
}

static size_t first_of(const struct ctx *c, const struct d9_event *e, uint8_t cls, uint64_t target)
{
    uint64_t from_ts = e->ts > D9_WAKE_SKEW_NS ? e->ts - D9_WAKE_SKEW_NS : 0;
    return lower_bound(c, e->pid, cls, target, from_ts);
}

static int receive(struct ctx *c, size_t ev, const struct d9_event *e, long k)
{
    struct d9_park_iv *v = &c->iv[k];
    v->matched = 1;
    if (d9_grow((void **)&c->out, &c->cap, c->nout, sizeof(*c->out)) < 0)
        return -1;
    c->out[c->nout++] = (struct d9_wake){
        .ts = e->ts, .target = e->f[F_TARGET], .latency_ns = v->unpark_ts > e->ts ? v->unpark_ts - e->ts : 0,
        .ev = ev, .pid = e->pid, .waker_tid = e->tid, .wakee_tid = v->tid, .wakee = v->thread,
        .call = (uint8_t)e->f[F_CALL]};
    return 0;
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
    if (d9_grow((void **)&r->v, &r->cap, r->n, sizeof(*r->v)) < 0)
        return -1;
    r->v[r->n++] = (struct reg){e->pid, fd, epfd};
    return 0;
}

/* Credits one WAKE to the unpark(s) it caused. */
static int match_wake(struct ctx *c, const struct regs *r, size_t ev, const struct d9_event *e)
{
    uint64_t call = e->f[F_CALL], target = e->f[F_TARGET], count = e->f[F_COUNT];
    if (call == D9_CALL_EVENTFD_WRITE || call == D9_CALL_PIPE_WRITE) {
        /* the earliest epoll unpark on an epfd watching the fd */
        long best = -1;
        for (size_t i = 0; i < r->n; i++) {
            if (r->v[i].pid != e->pid || r->v[i].fd != target)
                continue;
            size_t from = first_of(c, e, D9_CLS_EPOLL, r->v[i].epfd);
            long k = next_candidate(c, &from, e, D9_CLS_EPOLL, r->v[i].epfd);
            if (k >= 0 && (best < 0 || c->iv[k].unpark_ts < c->iv[best].unpark_ts))
                best = k;
        }
        return best >= 0 ? receive(c, ev, e, best) : 0;
    }
    uint64_t limit = call == D9_CALL_COND_BROADCAST ? UINT64_MAX
                   : call == D9_CALL_FUTEX         ? (count ? count : 1)
                                                   : 1;
    size_t from = first_of(c, e, D9_CLS_ADDR, target);
    for (uint64_t n = 0; n < limit; n++) {
        long k = next_candidate(c, &from, e, D9_CLS_ADDR, target);
        if (k < 0)
            break;
        if (receive(c, ev, e, k) < 0)
            return -1;
    }
    return 0;
}

int d9_match_wakes(const struct d9_model *m, struct d9_park_iv *iv, size_t niv, struct d9_wake **out,
                   size_t *nout)
{
    struct ctx c = {.iv = iv, .niv = niv};
    struct regs r = {0};
    int rc = 0;
    if (niv)
        qsort(iv, niv, sizeof(*iv), by_key);
    for (size_t i = 0; rc == 0 && i < m->nev; i++) {
        const struct d9_event *e = &m->ev[i];
        if (e->type == D9_EV_EPOLL_CTL && e->nfields >= 3)
            rc = regs_update(&r, e);
        else if (e->type == D9_EV_WAKE && e->nfields >= 3)
            rc = match_wake(&c, &r, i, e);
    }
    free(r.v);
    if (rc < 0) {
        free(c.out);
        c.out = NULL;
        c.nout = 0;
    }
    *out = c.out;
    *nout = c.nout;
    return rc;
}
