/* latency.c - online wake matching (see latency.h). Keys are (pid, class,
 * target) in an open-addressing table whose entries are freed as soon as
 * nothing is parked, recently unparked or pending on them. */
#include "latency.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* Field positions, per D9_SCHEMA_TABLE. */
enum { F_CALL = 0, F_TARGET = 1, F_COUNT = 2, F_OP = 0, F_EPFD = 1, F_FD = 2 };
#define EPOLL_OP_ADD 1
#define EPOLL_OP_DEL 2
#define SWEEP_EVERY 65536u /* unparks between sweeps of keys left holding only expired unparks */
#define PENDING_MAX 65536 /* live pending wakes: past it the oldest is given up (pathological inputs) */

uint8_t d9_park_class(uint64_t call)
{
    switch (call) {
    case D9_CALL_EPOLL_WAIT: case D9_CALL_EPOLL_PWAIT: case D9_CALL_EPOLL_PWAIT2: return D9_CLS_EPOLL;
    case D9_CALL_FUTEX: case D9_CALL_COND_WAIT: case D9_CALL_SEM_WAIT: return D9_CLS_ADDR;
    case D9_CALL_READ: return D9_CLS_FD; /* a blocking read of a pipe or an eventfd (or a socket) */
    case D9_CALL_JOIN: return D9_CLS_THREAD; /* target: the joined tid */
    default: return D9_CLS_NONE;
    }
}

static uint64_t fld(const struct d9_event *e, unsigned i) { return i < e->nfields ? e->f[i] : 0; }

struct mthread {
    uint64_t park_ts;
    uint32_t key, tid;
    uint8_t open; /* parked on key (a class other than NONE) */
};

/* A finished, unmatched park within the skew window of later wakes. */
struct recent {
    uint64_t park_ts, unpark_ts;
    uint32_t tid, thread;
};

/* A pending wake as listed by a key: valid while the slot holds that ev. */
struct pref {
    uint64_t ev;
    uint32_t slot;
};

struct key {
    uint64_t target;
    uint32_t pid;
    uint8_t cls;
    uint32_t *parked; /* thread indices, in park order */
    size_t nparked, parked_cap;
    struct recent *rec; /* in unpark order */
    size_t nrec, rec_cap;
    struct pref *pend; /* in wake order */
    size_t npend, pend_cap;
};

struct pwake {
    struct d9_wake w; /* the wake's fields; the wakee's are filled per match */
    uint64_t left;    /* parks it may still release */
    uint32_t keys[D9_WAKE_EPFDS];
    uint8_t nkeys, live;
};

struct reg {
    uint32_t pid;
    uint64_t fd, epfd;
};

struct d9_matcher {
    d9_match_fn fn;
    void *ctx;
    struct mthread *th;
    size_t nth, th_cap;
    struct key *keys;
    size_t nkeys, keys_cap;
    uint32_t *free_keys;
    size_t nfree_keys, free_keys_cap;
    uint32_t *slot; /* hash table: key index + 1, 0 empty */
    size_t slots, used;
    size_t ncls[D9_CLS_COUNT]; /* keys in use per class: a wake skips the lookup when none can match */
    struct pwake *wk;
    size_t nwk, wk_cap;
    uint32_t *free_wk;
    size_t nfree_wk, free_wk_cap;
    size_t live;         /* pending wakes */
    uint64_t unparks;    /* a sweep of stale keys every SWEEP_EVERY */
    uint64_t oldest;     /* ev of the oldest pending wake, valid unless dirty */
    int oldest_dirty;
    struct reg *regs;
    size_t nregs, regs_cap;
};

struct d9_matcher *d9_matcher_new(d9_match_fn fn, void *ctx)
{
    struct d9_matcher *mt = calloc(1, sizeof(*mt));
    if (mt) {
        mt->fn = fn;
        mt->ctx = ctx;
        mt->oldest = UINT64_MAX;
    }
    return mt;
}

void d9_matcher_free(struct d9_matcher *mt)
{
    if (!mt)
        return;
    for (size_t i = 0; i < mt->nkeys; i++) {
        free(mt->keys[i].parked);
        free(mt->keys[i].rec);
        free(mt->keys[i].pend);
    }
    free(mt->keys);
    free(mt->free_keys);
    free(mt->slot);
    free(mt->th);
    free(mt->wk);
    free(mt->free_wk);
    free(mt->regs);
    free(mt);
}

/* ---- Keys ------------------------------------------------------------------ */

static size_t home(const struct d9_matcher *mt, uint32_t pid, uint8_t cls, uint64_t target)
{
    uint64_t h = target * 0x9e3779b97f4a7c15ull ^ ((uint64_t)pid << 8 | cls);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & (mt->slots - 1);
}

/* The table slot holding the key, or the empty slot where it would go. */
static size_t probe(const struct d9_matcher *mt, uint32_t pid, uint8_t cls, uint64_t target)
{
    size_t i = home(mt, pid, cls, target);
    for (; mt->slot[i]; i = (i + 1) & (mt->slots - 1)) {
        const struct key *k = &mt->keys[mt->slot[i] - 1];
        if (k->target == target && k->pid == pid && k->cls == cls)
            break;
    }
    return i;
}

static long key_find(const struct d9_matcher *mt, uint32_t pid, uint8_t cls, uint64_t target)
{
    if (!mt->ncls[cls])
        return -1;
    size_t i = probe(mt, pid, cls, target);
    return mt->slot[i] ? (long)mt->slot[i] - 1 : -1;
}

static int rehash(struct d9_matcher *mt, size_t slots)
{
    uint32_t *s = calloc(slots, sizeof(*s)), *old = mt->slot;
    if (!s)
        return -1;
    size_t n = mt->slots;
    mt->slot = s;
    mt->slots = slots;
    for (size_t i = 0; i < n; i++)
        if (old[i]) {
            const struct key *k = &mt->keys[old[i] - 1];
            mt->slot[probe(mt, k->pid, k->cls, k->target)] = old[i];
        }
    free(old);
    return 0;
}

static long key_get(struct d9_matcher *mt, uint32_t pid, uint8_t cls, uint64_t target)
{
    long k = key_find(mt, pid, cls, target);
    if (k >= 0)
        return k;
    if ((mt->used + 1) * 2 > mt->slots && rehash(mt, mt->slots ? mt->slots * 2 : 64) < 0)
        return -1;
    uint32_t idx;
    if (mt->nfree_keys)
        idx = mt->free_keys[--mt->nfree_keys];
    else {
        if (d9_grow((void **)&mt->keys, &mt->keys_cap, mt->nkeys, sizeof(*mt->keys)) < 0)
            return -1;
        idx = (uint32_t)mt->nkeys++;
        memset(&mt->keys[idx], 0, sizeof(mt->keys[idx]));
    }
    struct key *kk = &mt->keys[idx];
    kk->pid = pid;
    kk->cls = cls;
    kk->target = target;
    mt->slot[probe(mt, pid, cls, target)] = idx + 1;
    mt->used++;
    mt->ncls[cls]++;
    return idx;
}

/* Frees a key nothing refers to any more (backward-shift deletion). */
static void key_gc(struct d9_matcher *mt, uint32_t idx)
{
    struct key *k = &mt->keys[idx];
    if (k->cls == D9_CLS_NONE || k->nparked || k->nrec || k->npend)
        return; /* free already, or in use */
    if (d9_grow((void **)&mt->free_keys, &mt->free_keys_cap, mt->nfree_keys, sizeof(*mt->free_keys)) < 0)
        return; /* kept: harmless */
    size_t mask = mt->slots - 1, i = probe(mt, k->pid, k->cls, k->target), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!mt->slot[j])
            break;
        const struct key *o = &mt->keys[mt->slot[j] - 1];
        size_t h = home(mt, o->pid, o->cls, o->target);
        if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
            mt->slot[i] = mt->slot[j];
            i = j;
        }
    }
    mt->slot[i] = 0;
    mt->used--;
    mt->ncls[k->cls]--;
    free(k->parked);
    free(k->rec);
    free(k->pend);
    memset(k, 0, sizeof(*k));
    mt->free_keys[mt->nfree_keys++] = idx;
}

/* ---- Pending wakes ---------------------------------------------------------- */

static int valid(const struct d9_matcher *mt, const struct pref *p)
{
    return mt->wk[p->slot].live && mt->wk[p->slot].w.ev == p->ev;
}

static void kill(struct d9_matcher *mt, struct pwake *w)
{
    if (!w->live)
        return;
    w->live = 0;
    mt->live--;
    if (w->w.ev == mt->oldest)
        mt->oldest_dirty = 1;
    if (d9_grow((void **)&mt->free_wk, &mt->free_wk_cap, mt->nfree_wk, sizeof(*mt->free_wk)) == 0)
        mt->free_wk[mt->nfree_wk++] = (uint32_t)(w - mt->wk);
}

uint64_t d9_matcher_oldest(const struct d9_matcher *mt)
{
    struct d9_matcher *m = (struct d9_matcher *)mt; /* the cache only */
    if (m->oldest_dirty) {
        m->oldest = UINT64_MAX;
        for (size_t i = 0; i < m->nwk; i++)
            if (m->wk[i].live && m->wk[i].w.ev < m->oldest)
                m->oldest = m->wk[i].w.ev;
        m->oldest_dirty = 0;
    }
    return m->live ? m->oldest : UINT64_MAX;
}

void d9_matcher_retire_oldest(struct d9_matcher *mt)
{
    uint64_t ev = d9_matcher_oldest(mt);
    for (size_t i = 0; ev != UINT64_MAX && i < mt->nwk; i++)
        if (mt->wk[i].live && mt->wk[i].w.ev == ev)
            kill(mt, &mt->wk[i]);
}

static int give(struct d9_matcher *mt, struct pwake *w, const struct recent *r)
{
    struct d9_wake d = w->w;
    d.latency_ns = r->unpark_ts > d.ts ? r->unpark_ts - d.ts : 0;
    d.wakee_tid = r->tid;
    d.wakee = r->thread;
    w->w.nth++;
    if (--w->left == 0)
        kill(mt, w);
    return mt->fn(mt->ctx, &d);
}

static int waker_parked(const struct d9_matcher *mt, const struct key *k, uint32_t tid)
{
    for (size_t i = 0; i < k->nparked; i++)
        if (mt->th[k->parked[i]].tid == tid)
            return 1;
    return 0;
}

/* Drops k's pending wakes no parked thread can reach any more: walking them
 * in wake order, each absorbs up to its capacity of the threads parked
 * before it (older wakes take an unpark first); one left with nothing can
 * never match. A wake listed by several keys (epoll), or whose waker counts
 * among the parked (same-ns stamps, a lost UNPARK), absorbs nothing here, so
 * the others are never dropped too early. */
static void prune(struct d9_matcher *mt, struct key *k)
{
    size_t p = 0, out = 0;
    uint64_t avail = 0;
    for (size_t i = 0; i < k->npend; i++) {
        if (!valid(mt, &k->pend[i]))
            continue;
        struct pwake *w = &mt->wk[k->pend[i].slot];
        while (p < k->nparked && mt->th[k->parked[p]].park_ts <= w->w.ts) {
            avail++;
            p++;
        }
        uint64_t take = avail < w->left ? avail : w->left;
        if (take == 0) {
            if (--w->nkeys == 0) /* no key left to reach it through */
                kill(mt, w);
            continue;
        }
        if (w->nkeys == 1 && !waker_parked(mt, k, w->w.waker_tid))
            avail -= take;
        k->pend[out++] = k->pend[i];
    }
    k->npend = out;
}

/* ---- Parks ------------------------------------------------------------------ */

static int thread_slot(struct d9_matcher *mt, uint32_t thread)
{
    while (mt->nth <= thread) {
        if (d9_grow((void **)&mt->th, &mt->th_cap, mt->nth, sizeof(*mt->th)) < 0)
            return -1;
        memset(&mt->th[mt->nth++], 0, sizeof(*mt->th));
    }
    return 0;
}

/* Takes the thread off its key's parked list. */
static void unlist(struct d9_matcher *mt, uint32_t thread)
{
    struct mthread *t = &mt->th[thread];
    struct key *k = &mt->keys[t->key];
    for (size_t i = 0; i < k->nparked; i++)
        if (k->parked[i] == thread) {
            memmove(&k->parked[i], &k->parked[i + 1], (k->nparked - i - 1) * sizeof(*k->parked));
            k->nparked--;
            break;
        }
    t->open = 0;
}

int d9_matcher_park(struct d9_matcher *mt, uint32_t thread, const struct d9_event *e)
{
    if (thread_slot(mt, thread) < 0)
        return -1;
    struct mthread *t = &mt->th[thread];
    if (t->open) { /* its UNPARK was lost: that park is no interval */
        uint32_t old = t->key;
        unlist(mt, thread);
        prune(mt, &mt->keys[old]);
        key_gc(mt, old);
    }
    uint8_t cls = d9_park_class(fld(e, F_CALL));
    if (cls == D9_CLS_NONE)
        return 0;
    long k = key_get(mt, e->pid, cls, fld(e, F_TARGET));
    if (k < 0)
        return -1;
    struct key *kk = &mt->keys[k];
    if (d9_grow((void **)&kk->parked, &kk->parked_cap, kk->nparked, sizeof(*kk->parked)) < 0)
        return -1;
    kk->parked[kk->nparked++] = thread;
    *t = (struct mthread){e->ts, (uint32_t)k, e->tid, 1};
    return 0;
}

/* Forgets recent unparks the skew window no longer reaches at ts. */
static void expire(struct key *k, uint64_t ts)
{
    size_t n = 0;
    while (n < k->nrec && k->rec[n].unpark_ts + D9_WAKE_SKEW_NS < ts)
        n++;
    if (n) {
        memmove(k->rec, k->rec + n, (k->nrec - n) * sizeof(*k->rec));
        k->nrec -= n;
    }
}

/* Keys are looked at only when used: one parked on once keeps its last
 * unpark until swept. */
static void sweep(struct d9_matcher *mt, uint64_t ts)
{
    for (size_t i = 0; i < mt->nkeys; i++)
        if (mt->keys[i].nrec) {
            expire(&mt->keys[i], ts);
            key_gc(mt, (uint32_t)i);
        }
}

int d9_matcher_unpark(struct d9_matcher *mt, uint32_t thread, const struct d9_event *e)
{
    if (thread >= mt->nth || !mt->th[thread].open)
        return 0;
    if (++mt->unparks % SWEEP_EVERY == 0)
        sweep(mt, e->ts);
    struct mthread *t = &mt->th[thread];
    uint32_t ki = t->key;
    struct recent r = {t->park_ts, e->ts, t->tid, thread};
    unlist(mt, thread);
    struct key *k = &mt->keys[ki];
    int rc = 0, given = 0;
    for (size_t i = 0; i < k->npend && !given; i++) { /* the earliest wake it is a candidate of */
        struct pwake *w = &mt->wk[k->pend[i].slot];
        if (valid(mt, &k->pend[i]) && r.park_ts <= w->w.ts && r.tid != w->w.waker_tid) {
            rc = give(mt, w, &r);
            given = 1;
        }
    }
    expire(k, e->ts);
    if (!given && rc == 0) {
        if (d9_grow((void **)&k->rec, &k->rec_cap, k->nrec, sizeof(*k->rec)) < 0)
            return -1;
        k->rec[k->nrec++] = r;
    }
    prune(mt, k);
    key_gc(mt, ki);
    return rc;
}

/* ---- Wakes ------------------------------------------------------------------ */

int d9_matcher_epoll_ctl(struct d9_matcher *mt, const struct d9_event *e)
{
    if (e->nfields < 3)
        return 0;
    uint64_t op = e->f[F_OP], epfd = e->f[F_EPFD], fd = e->f[F_FD];
    for (size_t i = 0; i < mt->nregs; i++)
        if (mt->regs[i].pid == e->pid && mt->regs[i].fd == fd && mt->regs[i].epfd == epfd) {
            if (op == EPOLL_OP_DEL)
                mt->regs[i] = mt->regs[--mt->nregs];
            return 0;
        }
    if (op != EPOLL_OP_ADD)
        return 0;
    if (d9_grow((void **)&mt->regs, &mt->regs_cap, mt->nregs, sizeof(*mt->regs)) < 0)
        return -1;
    mt->regs[mt->nregs++] = (struct reg){e->pid, fd, epfd};
    return 0;
}

/* A pipe or eventfd write: it releases epoll parks (through the fd's
 * registrations) and reads parked on the fd; any other wake the parks on
 * its address. */
static int fd_wake(uint64_t call) { return call == D9_CALL_EVENTFD_WRITE || call == D9_CALL_PIPE_WRITE; }

/* The keys a wake can release parks through; returns how many. */
static unsigned wake_keys(const struct d9_matcher *mt, const struct d9_event *e, uint32_t *keys)
{
    uint64_t target = e->f[F_TARGET];
    unsigned n = 0;
    long k;
    if (fd_wake(e->f[F_CALL])) {
        if ((k = key_find(mt, e->pid, D9_CLS_FD, target)) >= 0)
            keys[n++] = (uint32_t)k;
        for (size_t i = 0; i < mt->nregs && n < D9_WAKE_EPFDS; i++) {
            if (mt->regs[i].pid == e->pid && mt->regs[i].fd == target &&
                (k = key_find(mt, e->pid, D9_CLS_EPOLL, mt->regs[i].epfd)) >= 0)
                keys[n++] = (uint32_t)k;
        }
        return n;
    }
    if ((k = key_find(mt, e->pid, e->f[F_CALL] == D9_CALL_JOIN ? D9_CLS_THREAD : D9_CLS_ADDR, target)) >= 0)
        keys[n++] = (uint32_t)k;
    return n;
}

/* Takes the recent unparks the wake reaches, earliest unpark first. */
static int take_recent(struct d9_matcher *mt, struct pwake *w, const struct d9_event *e)
{
    while (w->left) {
        struct key *best = NULL;
        size_t at = 0;
        for (unsigned j = 0; j < w->nkeys; j++) {
            struct key *k = &mt->keys[w->keys[j]];
            expire(k, e->ts);
            for (size_t i = 0; i < k->nrec; i++)
                if (k->rec[i].park_ts <= e->ts && k->rec[i].tid != e->tid) {
                    if (!best || k->rec[i].unpark_ts < best->rec[at].unpark_ts) {
                        best = k;
                        at = i;
                    }
                    break; /* in unpark order: the first is the key's earliest */
                }
        }
        if (!best)
            return 0;
        struct recent r = best->rec[at];
        memmove(&best->rec[at], &best->rec[at + 1], (best->nrec - at - 1) * sizeof(*best->rec));
        best->nrec--;
        int rc = give(mt, w, &r); /* not live yet: give() only counts it down */
        if (rc)
            return rc;
    }
    return 0;
}

/* A wake of a class that has keys: it takes recent unparks, or waits for
 * parks. Apart from d9_matcher_wake, so a wake of a class without keys
 * (most of them, e.g. condvar signals where every thread parks on epoll)
 * sets up no frame: that was 18 of its 32 instructions. */
static __attribute__((noinline)) int wake_keyed(struct d9_matcher *mt, const struct d9_event *e, uint64_t ev)
{
    uint32_t keys[D9_WAKE_EPFDS];
    unsigned nkeys = wake_keys(mt, e, keys);
    if (!nkeys) /* no key: no recent unpark to take, nobody parked */
        return 0;
    struct pwake w = {.w = {.ts = e->ts, .target = e->f[F_TARGET], .ev = ev, .pid = e->pid, .waker_tid = e->tid,
                            .call = (uint8_t)e->f[F_CALL]}};
    uint64_t call = e->f[F_CALL], count = e->f[F_COUNT];
    w.left = call == D9_CALL_COND_BROADCAST ? UINT64_MAX : call == D9_CALL_FUTEX ? (count ? count : 1) : 1;
    w.nkeys = (uint8_t)nkeys;
    memcpy(w.keys, keys, nkeys * sizeof(keys[0]));
    int rc = take_recent(mt, &w, e);
    size_t parked = 0;
    for (unsigned j = 0; j < w.nkeys; j++)
        parked += mt->keys[w.keys[j]].nparked;
    if (rc || !w.left || !parked) { /* done, or nobody left to release */
        for (unsigned j = 0; j < w.nkeys; j++)
            key_gc(mt, w.keys[j]);
        return rc;
    }
    uint32_t slot;
    if (mt->nfree_wk)
        slot = mt->free_wk[--mt->nfree_wk];
    else {
        if (d9_grow((void **)&mt->wk, &mt->wk_cap, mt->nwk, sizeof(*mt->wk)) < 0)
            return -1;
        slot = (uint32_t)mt->nwk++;
    }
    w.live = 1;
    mt->wk[slot] = w;
    if (mt->live++ == 0) { /* wakes come in ev order: a newer one is never the oldest */
        mt->oldest = ev;
        mt->oldest_dirty = 0;
    }
    for (unsigned j = 0; j < w.nkeys; j++) {
        struct key *k = &mt->keys[w.keys[j]];
        if (d9_grow((void **)&k->pend, &k->pend_cap, k->npend, sizeof(*k->pend)) < 0)
            return -1;
        k->pend[k->npend++] = (struct pref){ev, slot};
    }
    for (unsigned j = 0; j < w.nkeys; j++) {
        prune(mt, &mt->keys[w.keys[j]]);
        key_gc(mt, w.keys[j]);
    }
    if (mt->live > PENDING_MAX)
        d9_matcher_retire_oldest(mt);
    return 0;
}

int d9_matcher_wake(struct d9_matcher *mt, const struct d9_event *e, uint64_t ev)
{
    if (e->nfields < 3)
        return 0;
    int keyed = fd_wake(e->f[F_CALL]) ? mt->ncls[D9_CLS_EPOLL] || mt->ncls[D9_CLS_FD] : mt->ncls[D9_CLS_ADDR] != 0;
    return keyed ? wake_keyed(mt, e, ev) : 0;
}

/* A thread's exit as the wake of the join parked on its tid (one joiner:
 * POSIX leaves a second concurrent join undefined). */
int d9_matcher_exit(struct d9_matcher *mt, const struct d9_event *e, uint64_t ev)
{
    if (!mt->ncls[D9_CLS_THREAD])
        return 0;
    struct d9_event w = {.ts = e->ts, .pid = e->pid, .tid = e->tid, .type = D9_EV_WAKE, .nfields = 3};
    w.f[F_CALL] = D9_CALL_JOIN;
    w.f[F_TARGET] = e->tid;
    w.f[F_COUNT] = 1;
    return wake_keyed(mt, &w, ev);
}
