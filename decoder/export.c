/* export.c - the walker every export format shares (see export.h); the
 * command's options are export_cmd.c. It streams a second pass over the
 * inputs after the analysis, taking each wake's matches from the analysis'
 * wake log (wakelog.h) at the wake. Memory: per-thread state, plus the flows
 * whose wakee end is still ahead of the walk; nothing per event. */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "pidkey.h"
#include "stream.h"

/* Field positions, per D9_SCHEMA_TABLE. */
enum { F_CALL = 0, F_TIMEOUT = 2, F_RESULT = 1, F_COUNT = 0, F_SYS_FD = 1, F_SYS_KIND = 2, F_SYS_DUR = 3,
       F_LOCK_TARGET = 1, F_LOCK_WAIT = 2, F_DELAY = 0, F_SOURCE = 1, F_WINDOW = 2, F_PREEMPT = 0,
       F_APP_VALUE = 1 };

static uint64_t fld(const struct d9_event *e, unsigned i) { return i < e->nfields ? e->f[i] : 0; }

enum { OPEN_NONE, OPEN_BUSY, OPEN_PARK };

struct tstate {
    uint8_t sel, seen, open, begun; /* begun: the begin callback ran (at from_ts) */
    uint8_t call;
    int64_t timeout;
    uint64_t start, from_ts, last;
};

/* A flow whose wakee end is still to be written. */
struct pend {
    uint64_t ts, id;
    uint32_t pid, tid;
};

struct walk {
    const struct d9_model *m;
    const struct d9_summary *s;
    const struct d9_export_ops *ops;
    void *ctx;
    uint64_t t0, F, T; /* absolute ns: trace start, window */
    struct d9_map idx; /* (pid, tid) -> s->t index */
    struct tstate *st;
    struct pend *heap; /* min-heap by (ts, id) */
    size_t nheap, heap_cap;
    uint64_t pos;      /* events walked */
    int crossed, stopped;
};

static struct d9_export_item item(const struct walk *w, uint32_t pid, uint32_t tid, uint64_t ts, const char *name)
{
    return (struct d9_export_item){.pid = d9_pid_track(pid), .tid = tid, .ts = ts - w->t0, .name = name};
}

static void arg(struct d9_export_item *it, const char *key, const char *str, int64_t v)
{
    if (it->nargs < D9_EXPORT_ARGS)
        it->args[it->nargs++] = (struct d9_export_arg){key, str, v};
}

static struct d9_export_item slice_item(const struct walk *w, const struct d9_tstats *t, const struct tstate *s)
{
    struct d9_export_item it = item(w, t->pid, t->tid, s->from_ts, s->open == OPEN_PARK ? d9_call_name(s->call) : "busy");
    it.park = s->open == OPEN_PARK;
    if (it.park)
        arg(&it, "timeout_ns", NULL, s->timeout);
    return it;
}

static void slice_begin(struct walk *w, const struct d9_tstats *t, struct tstate *s, uint64_t at)
{
    s->begun = 1;
    s->from_ts = at;
    struct d9_export_item it = slice_item(w, t, s);
    w->ops->slice_begin(w->ctx, &it);
}

static void slice_open(struct walk *w, const struct d9_tstats *t, struct tstate *s, int kind, uint64_t ts)
{
    s->open = (uint8_t)kind;
    s->begun = 0;
    s->start = ts;
    if (ts >= w->F && ts <= w->T)
        slice_begin(w, t, s, ts);
}

/* Ends the open slice at ts (cut to the window); result < 0 with has_result. */
static void slice_close(struct walk *w, const struct d9_tstats *t, struct tstate *s, uint64_t ts, int has_result,
                        int64_t result)
{
    if (s->open != OPEN_NONE && s->begun) {
        struct d9_export_item it = slice_item(w, t, s);
        uint64_t end = ts < w->T ? ts : w->T;
        it.end = (end > s->from_ts ? end : s->from_ts) - w->t0;
        it.end_args = it.nargs;
        if (has_result)
            arg(&it, "result", NULL, result);
        w->ops->slice_end(w->ctx, &it);
    }
    s->open = OPEN_NONE;
    s->begun = 0;
}

static int pend_less(const struct pend *a, const struct pend *b)
{
    return a->ts != b->ts ? a->ts < b->ts : a->id < b->id;
}

static int heap_push(struct walk *w, struct pend p)
{
    if (d9_grow((void **)&w->heap, &w->heap_cap, w->nheap, sizeof(*w->heap)) < 0)
        return -1;
    size_t i = w->nheap++;
    for (; i && pend_less(&p, &w->heap[(i - 1) / 2]); i = (i - 1) / 2)
        w->heap[i] = w->heap[(i - 1) / 2];
    w->heap[i] = p;
    return 0;
}

static struct pend heap_pop(struct walk *w)
{
    struct pend top = w->heap[0], last = w->heap[--w->nheap];
    size_t i = 0, n = w->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && pend_less(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!pend_less(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n)
        w->heap[i] = last;
    return top;
}

/* Writes the wakee ends due before ts. */
static void flush_flows(struct walk *w, uint64_t ts)
{
    while (w->nheap && w->heap[0].ts < ts) {
        struct pend p = heap_pop(w);
        struct d9_export_item it = item(w, p.pid, p.tid, p.ts, "woken");
        w->ops->flow(w->ctx, &it, p.id, 1);
    }
}

static const struct tstate *thread_of(const struct walk *w, uint32_t pid, uint32_t tid)
{
    uint32_t i;
    return d9_map_get(&w->idx, d9_key2(pid, tid), &i) ? &w->st[i] : NULL;
}

/* The flows of the WAKE (or THREAD_EXIT) e at position pos, from the wake log. */
static int wake_flows(struct walk *w, const struct d9_event *e)
{
    struct d9_wakelog *log = w->s->wakelog;
    struct d9_wake x;
    while (log && d9_wakelog_next_of(log, w->pos, &x)) {
        uint64_t id = d9_wakelog_read(log); /* 1, 2, ...: the match's rank in wake order */
        const struct tstate *wakee = thread_of(w, x.pid, x.wakee_tid);
        uint64_t end = x.ts + x.latency_ns;
        if (!wakee || !wakee->sel || e->ts < w->F || end > w->T)
            continue;
        char name[48];
        snprintf(name, sizeof(name), "wake %s", d9_call_name(x.call));
        struct d9_export_item it = item(w, e->pid, e->tid, e->ts, name);
        arg(&it, "wakee", NULL, x.wakee_tid);
        arg(&it, "latency_ns", NULL, (int64_t)x.latency_ns);
        w->ops->flow(w->ctx, &it, id, 0);
        if (heap_push(w, (struct pend){end, id, x.pid, x.wakee_tid}) < 0)
            return -1;
    }
    return 0;
}

static void instant(struct walk *w, const struct d9_event *e)
{
    char name[48];
    struct d9_export_item it = item(w, e->pid, e->tid, e->ts, name);
    switch (e->type) {
    case D9_EV_SLOW_SYSCALL:
        snprintf(name, sizeof(name), "slow %s", d9_call_name((unsigned)fld(e, F_CALL)));
        arg(&it, "fd", NULL, (int64_t)fld(e, F_SYS_FD));
        arg(&it, "fd_kind", d9_fd_kind_name(fld(e, F_SYS_KIND)), 0);
        arg(&it, "duration_ns", NULL, (int64_t)fld(e, F_SYS_DUR));
        break;
    case D9_EV_LOCK_WAIT:
        snprintf(name, sizeof(name), "lock_wait %s", d9_call_name((unsigned)fld(e, F_CALL)));
        arg(&it, "target", NULL, (int64_t)fld(e, F_LOCK_TARGET));
        arg(&it, "wait_ns", NULL, (int64_t)fld(e, F_LOCK_WAIT));
        break;
    case D9_EV_DROP:
        snprintf(name, sizeof(name), "drop");
        arg(&it, "count", NULL, (int64_t)fld(e, F_COUNT));
        break;
    case D9_EV_APP: /* named by the program (dial9_event) */
        snprintf(name, sizeof(name), "%.*s", (int)e->name_len, e->name);
        it.app = 1;
        arg(&it, "value", NULL, (int64_t)fld(e, F_APP_VALUE));
        break;
    case D9_EV_PREEMPT:
        snprintf(name, sizeof(name), "preempt");
        arg(&it, "duration_ns", NULL, (int64_t)fld(e, F_PREEMPT));
        break;
    case D9_EV_SCHED_DELAY:
        snprintf(name, sizeof(name), "sched_delay");
        arg(&it, "delay_ns", NULL, (int64_t)fld(e, F_DELAY));
        arg(&it, "source", d9_sched_source_name(fld(e, F_SOURCE)), 0);
        if (e->nfields > F_WINDOW) /* traces of older agents lack it */
            arg(&it, "window_ns", NULL, (int64_t)fld(e, F_WINDOW));
        break;
    default:
        return;
    }
    w->ops->instant(w->ctx, &it);
}

/* One event of a selected thread: its slices and instants. */
static void replay(struct walk *w, const struct d9_tstats *t, struct tstate *s, const struct d9_event *e)
{
    if (!s->seen && e->type != D9_EV_PARK && e->type != D9_EV_THREAD_EXIT && e->type != D9_EV_THREAD_START)
        slice_open(w, t, s, OPEN_BUSY, e->ts); /* running when the recording began */
    s->seen = 1;
    s->last = e->ts;
    switch (e->type) {
    case D9_EV_THREAD_START:
        slice_close(w, t, s, e->ts, 0, 0);
        slice_open(w, t, s, OPEN_BUSY, e->ts);
        break;
    case D9_EV_THREAD_EXIT: slice_close(w, t, s, e->ts, 0, 0); break;
    case D9_EV_PARK: /* ends the busy period, or a park whose UNPARK was lost */
        slice_close(w, t, s, e->ts, 0, 0);
        s->call = (uint8_t)(fld(e, F_CALL) < D9_CALL_COUNT ? fld(e, F_CALL) : D9_CALL_COUNT);
        s->timeout = (int64_t)fld(e, F_TIMEOUT);
        slice_open(w, t, s, OPEN_PARK, e->ts);
        break;
    case D9_EV_UNPARK:
        if (s->open == OPEN_PARK)
            slice_close(w, t, s, e->ts, 1, (int64_t)fld(e, F_RESULT));
        if (s->open == OPEN_NONE) /* also: parked since before the recording */
            slice_open(w, t, s, OPEN_BUSY, e->ts);
        break;
    default:
        if (e->ts >= w->F)
            instant(w, e);
        break;
    }
}

/* Slices still open when the walk ends (at the window's end, or the trace's). */
static void close_all(struct walk *w, const struct d9_summary *s, int cut, uint64_t trace_end)
{
    for (size_t i = 0; i < s->nt; i++) {
        struct tstate *st = &w->st[i];
        if (st->sel && st->open != OPEN_NONE && !st->begun && cut && st->start < w->F)
            slice_begin(w, &s->t[i], st, w->F); /* spans the whole window */
        uint64_t end = cut ? w->T : st->open == OPEN_PARK ? trace_end : st->last;
        if (st->sel)
            slice_close(w, &s->t[i], st, end, 0, 0);
    }
}

static int selected(const struct d9_export_opts *o, uint32_t tid)
{
    for (int i = 0; i < o->ntids; i++)
        if (o->tids[i] == tid)
            return 1;
    return o->ntids == 0;
}

/* A process before its selected threads (threads are sorted by pid), also
 * when --tid leaves out the process's first thread. */
static void describe(struct walk *w, const struct d9_summary *s)
{
    const struct d9_tstats *prev = NULL;
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        if (!w->st[i].sel)
            continue;
        if (!prev || t->pid != prev->pid) {
            const struct d9_proc *p = d9_model_proc(w->m, t->pid);
            const char *exe = p && p->exe ? p->exe : "";
            const char *base = strrchr(exe, '/');
            char name[300];
            if (d9_pid_instance(t->pid) > 1) /* the viewer's pid is not the real one: say it */
                snprintf(name, sizeof(name), "%.255s (pid %s)", base ? base + 1 : exe, D9_PID_STR(t->pid));
            else
                snprintf(name, sizeof(name), "%s", base ? base + 1 : exe);
            w->ops->process(w->ctx, d9_pid_track(t->pid), name);
        }
        w->ops->thread(w->ctx, d9_pid_track(t->pid), t->tid, t->name);
        prev = t;
    }
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* One event of the walk; 1 stops it (past the window). */
static int walk_event(void *ctx, const struct d9_event *e)
{
    struct walk *w = ctx;
    const struct d9_summary *s = w->s;
    if (e->ts > w->T) {
        w->stopped = 1;
        return 1;
    }
    uint64_t pos = w->pos;
    flush_flows(w, e->ts);
    if (!w->crossed && e->ts >= w->F) { /* slices open across the window start */
        w->crossed = 1;
        for (size_t j = 0; j < s->nt; j++)
            if (w->st[j].sel && w->st[j].open != OPEN_NONE && !w->st[j].begun)
                slice_begin(w, &s->t[j], &w->st[j], w->F);
    }
    uint32_t ti;
    int rc = 0;
    if (d9_map_get(&w->idx, d9_key2(e->pid, e->tid), &ti) && w->st[ti].sel) {
        if (d9_event_wakes(e))
            rc = wake_flows(w, e);
        replay(w, &s->t[ti], &w->st[ti], e);
    }
    w->pos = pos + 1;
    return rc;
}

int d9_export_analyse(const struct d9_model *m, struct d9_summary *s)
{
    struct d9_analysis_opts o = {.wakelog = 1};
    if (m->src)
        d9_stream_set_passes(m->src, 2);
    return d9_analyse_opts(m, s, &o);
}

int d9_export_walk(const struct d9_model *m, const struct d9_summary *s, const struct d9_export_opts *o,
                   const struct d9_export_ops *ops, void *ctx)
{
    struct walk w = {.m = m, .s = s, .ops = ops, .ctx = ctx, .t0 = s->first_ts};
    w.F = sat_add(w.t0, o->from);
    w.T = sat_add(w.t0, o->to);
    int rc = 0;
    w.st = calloc(s->nt ? s->nt : 1, sizeof(*w.st));
    if (!w.st)
        return -1;
    for (size_t i = 0; i < s->nt && rc == 0; i++) {
        w.st[i].sel = (uint8_t)selected(o, s->t[i].tid);
        rc = d9_map_put(&w.idx, d9_key2(s->t[i].pid, s->t[i].tid), (uint32_t)i);
    }
    if (rc == 0) {
        describe(&w, s);
        rc = d9_model_each(m, walk_event, &w);
        rc = rc < 0 ? -1 : 0;
    }
    if (rc == 0) {
        flush_flows(&w, UINT64_MAX);
        int cut = w.stopped && w.T != UINT64_MAX && s->nt && s->last_ts > w.T;
        close_all(&w, s, cut && w.F <= w.T, s->last_ts);
        ops->finish(ctx);
    }
    free(w.st);
    free(w.heap);
    d9_map_free(&w.idx);
    return rc;
}
