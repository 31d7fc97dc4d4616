/* model.c - the merged event store (see model.h). */
#include "model.h"
#include "stream.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

static struct d9_thread *thread_of(struct d9_model *m, uint32_t pid, uint32_t tid)
{
    uint32_t i;
    if (d9_map_get(&m->thr_idx, d9_key2(pid, tid), &i))
        return &m->thr[i];
    if (d9_grow((void **)&m->thr, &m->thr_cap, m->nthr, sizeof(*m->thr)) < 0 ||
        d9_map_put(&m->thr_idx, d9_key2(pid, tid), (uint32_t)m->nthr) < 0)
        return NULL;
    struct d9_thread *t = &m->thr[m->nthr++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->tid = tid;
    return t;
}

/* Newest name wins; on a tie an event beats a header table (prefer_new). */
static void set_name(struct d9_thread *t, const char *name, size_t len, uint64_t ts, int prefer_new)
{
    if (t->name[0] && (ts < t->name_ts || (ts == t->name_ts && !prefer_new)))
        return;
    len = len < sizeof(t->name) - 1 ? len : sizeof(t->name) - 1;
    memcpy(t->name, name, len);
    t->name[len] = 0;
    t->name_ts = ts;
}

int d9_model_note_name(struct d9_model *m, const struct d9_event *ev)
{
    struct d9_thread *t = thread_of(m, ev->pid, ev->tid);
    if (!t)
        return -1;
    set_name(t, ev->name, ev->name_len, ev->ts, 1);
    return 0;
}

int d9_model_add_event(void *model, const struct d9_event *ev)
{
    struct d9_model *m = model;
    if (d9_grow((void **)&m->ev, &m->ev_cap, m->nev, sizeof(*m->ev)) < 0)
        return -1;
    struct d9_event *e = &m->ev[m->nev++];
    *e = *ev;
    if (!thread_of(m, ev->pid, ev->tid))
        return -1;
    return ev->type == D9_EV_THREAD_NAME ? d9_model_note_name(m, ev) : 0;
}

struct each {
    d9_event_fn fn;
    void *ctx;
};

static int each_event(void *ctx, const struct d9_event *ev, size_t n)
{
    const struct each *x = ctx;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = x->fn(x->ctx, &ev[i]);
    return rc;
}

int d9_model_each(const struct d9_model *m, d9_event_fn fn, void *ctx)
{
    struct each x = {fn, ctx};
    return d9_model_each_span(m, each_event, &x);
}

int d9_model_each_span(const struct d9_model *m, d9_span_fn fn, void *ctx)
{
    if (!m->src) {
        int rc = 0;
        for (size_t i = 0, j; rc == 0 && i < m->nev; i = j) {
            for (j = i + 1; j < m->nev && m->ev[j].tid == m->ev[i].tid && m->ev[j].pid == m->ev[i].pid; j++)
                ;
            rc = fn(ctx, &m->ev[i], j - i);
        }
        return rc;
    }
    const struct d9_event *e;
    size_t n;
    int got, rc = 0;
    while (rc == 0 && (got = d9_stream_next(m->src, &e, &n)) > 0)
        rc = fn(ctx, e, n);
    if (rc != 0)
        d9_stream_stop(m->src);
    return rc != 0 ? rc : got < 0 ? -1 : 0;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static int same_identity(const struct d9_proc_identity *a, const struct d9_proc_identity *b)
{
    return a->start_ticks == b->start_ticks && a->pidns == b->pidns &&
           memcmp(a->boot_id, b->boot_id, sizeof(a->boot_id)) == 0;
}

/* The key for seg's process: that of the process with its identity, else
 * the first free instance of its pid (*fresh = 1); one with no identity is
 * the first process of its pid's. The first process met without an identity
 * takes the first identity that comes. */
static uint32_t find_key(const struct d9_model *m, const struct d9_seg *seg, int *fresh)
{
    uint32_t i, key = seg->pid;
    *fresh = 0;
    if (!seg->has_identity || seg->pid >> D9_PID_BITS) /* not a Linux pid: one process */
        return key;
    for (uint32_t n = 1; n <= D9_PID_INSTANCES; n++) {
        key = d9_pid_key(seg->pid, n);
        if (!d9_map_get(&m->proc_idx, key, &i)) {
            *fresh = 1;
            return key;
        }
        const struct d9_proc *p = &m->proc[i];
        if (!p->has_identity || same_identity(&p->identity, &seg->identity))
            return key;
    }
    return key; /* the last instance holds the rest */
}

uint32_t d9_model_key_of(const struct d9_model *m, const struct d9_seg *seg)
{
    int fresh;
    uint32_t key = find_key(m, seg, &fresh);
    return fresh ? seg->pid : key;
}

int d9_model_add_header(struct d9_model *m, struct d9_seg *seg)
{
    uint32_t i;
    int fresh;
    seg->pid = find_key(m, seg, &fresh);
    int later = fresh && d9_pid_instance(seg->pid) > 1;
    if (!d9_map_get(&m->proc_idx, seg->pid, &i)) {
        if (d9_grow((void **)&m->proc, &m->proc_cap, m->nproc, sizeof(*m->proc)) < 0 ||
            d9_map_put(&m->proc_idx, seg->pid, (uint32_t)m->nproc) < 0)
            return -1;
        struct d9_proc *p = &m->proc[m->nproc++];
        p->pid = seg->pid;
        p->has_identity = 0;
        p->exe = dup_or_empty(seg->exe);
        p->hostname = dup_or_empty(seg->hostname);
        p->cmdline = malloc(seg->cmdline_len + 1);
        if (!p->exe || !p->hostname || !p->cmdline)
            return -1;
        size_t n = seg->cmdline_len; /* NUL-separated, usually NUL-terminated */
        while (n && seg->cmdline[n - 1] == 0)
            n--;
        for (size_t k = 0; k < n; k++)
            p->cmdline[k] = seg->cmdline[k] ? seg->cmdline[k] : ' ';
        p->cmdline[n] = 0;
        p->anchor_real_ns = p->anchor_mono_ns = 0;
    }
    struct d9_proc *ap = d9_map_get(&m->proc_idx, seg->pid, &i) ? &m->proc[i] : NULL;
    if (ap && seg->has_identity && !ap->has_identity) {
        ap->identity = seg->identity;
        ap->has_identity = 1;
    }
    if (ap && seg->anchor_real_ns && (!ap->anchor_real_ns || seg->anchor_mono_ns < ap->anchor_mono_ns)) {
        ap->anchor_real_ns = seg->anchor_real_ns; /* the earliest: nearest the trace start */
        ap->anchor_mono_ns = seg->anchor_mono_ns;
    }
    for (uint32_t k = 0; k < seg->nthreads; k++) {
        struct d9_thread *t = thread_of(m, seg->pid, seg->threads[k].tid);
        if (!t)
            return -1;
        set_name(t, seg->threads[k].name, strlen(seg->threads[k].name), seg->anchor_mono_ns, 0);
    }
    return later;
}

/* An event's sort key; at, its input position, is the tie-break: qsort
 * is not stable, and events carry no sequence number (8 bytes more of
 * each, written and read by every pass over a trace). */
struct order {
    uint64_t ts;
    uint32_t pid, tid;
    size_t at;
};

static int by_time(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

int d9_model_sort(struct d9_model *m)
{
    if (!m->nev)
        return 0;
    struct order *o = malloc(m->nev * sizeof(*o));
    struct d9_event *ev = malloc(m->nev * sizeof(*ev));
    if (!o || !ev) {
        free(o);
        free(ev);
        return -1;
    }
    for (size_t i = 0; i < m->nev; i++)
        o[i] = (struct order){m->ev[i].ts, m->ev[i].pid, m->ev[i].tid, i};
    qsort(o, m->nev, sizeof(*o), by_time);
    for (size_t i = 0; i < m->nev; i++)
        ev[i] = m->ev[o[i].at];
    free(o);
    free(m->ev);
    m->ev = ev;
    m->ev_cap = m->nev;
    return 0;
}

const struct d9_thread *d9_model_thread(const struct d9_model *m, uint32_t pid, uint32_t tid)
{
    uint32_t i;
    return d9_map_get(&m->thr_idx, d9_key2(pid, tid), &i) ? &m->thr[i] : NULL;
}

const struct d9_proc *d9_model_proc(const struct d9_model *m, uint32_t pid)
{
    uint32_t i;
    return d9_map_get(&m->proc_idx, pid, &i) ? &m->proc[i] : NULL;
}

void d9_model_free(struct d9_model *m)
{
    for (size_t i = 0; i < m->nproc; i++) {
        free(m->proc[i].exe);
        free(m->proc[i].hostname);
        free(m->proc[i].cmdline);
    }
    free(m->proc);
    free(m->thr);
    d9_stream_close(m->src);
    free(m->ev);
    d9_map_free(&m->thr_idx);
    d9_map_free(&m->proc_idx);
    memset(m, 0, sizeof(*m));
}
