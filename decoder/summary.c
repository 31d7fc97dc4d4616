/* summary.c - `dial9-decode summary`: per process and thread statistics,
 * then the why-was-it-slow sections (summary_*.c), as readable text or one
 * JSON object. The numbers come from analysis.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "files.h"
#include "fmt.h"
#include "pidkey.h"
#include "summary.h"

const char *d9_thread_name(const struct d9_model *m, uint32_t pid, uint32_t tid)
{
    const struct d9_thread *t = d9_model_thread(m, pid, tid);
    return t ? t->name : "";
}

static const char *dist_text(char *buf, size_t n, const struct d9_dist *d)
{
    char a[16], b[16], c[16];
    if (!d->n)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%s/%s/%s", d9_fmt_dur(a, sizeof(a), d->p50), d9_fmt_dur(b, sizeof(b), d->p99),
                 d9_fmt_dur(c, sizeof(c), d->max));
    return buf;
}

static double busy_pct(const struct d9_tstats *t)
{
    uint64_t span = t->busy_ns + t->parked_ns;
    return span ? 100.0 * (double)t->busy_ns / (double)span : 0.0;
}

static void print_text(const struct d9_model *m, const struct d9_summary *s)
{
    printf("%" PRIu64 " events, %" PRIu64 " dropped, %zu processes, %zu threads\n", s->events, s->dropped,
           m->nproc, s->nt);
    uint32_t pid = 0;
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        if (i == 0 || t->pid != pid) {
            const struct d9_proc *p = d9_model_proc(m, t->pid);
            pid = t->pid;
            printf("\nprocess %s  %s  [%s]\n", D9_PID_STR(pid), p && p->exe[0] ? p->exe : "?",
                   p ? p->cmdline : "");
            printf("  %-8s %-16s %-13s %7s %6s  %-24s %-24s %6s %6s %7s %6s  %s\n", "TID", "NAME", "ROLE",
                   "PARKS", "BUSY%", "PARK p50/p99/max", "BUSY p50/p99/max", "WAKES>", ">WAKES", "NOWAIT",
                   "DROPS", "PARKS BY CALL");
        }
        char pd[64], bd[64];
        printf("  %-8" PRIu32 " %-16s %-13s %7" PRIu64 " %5.1f%%  %-24s %-24s %6" PRIu64 " %6" PRIu64 " %7" PRIu64
               " %6" PRIu64 " ",
               t->tid, t->name[0] ? t->name : "-", d9_role_name(t->role), t->parks, busy_pct(t),
               dist_text(pd, sizeof(pd), &t->park_ns), dist_text(bd, sizeof(bd), &t->busy_period_ns),
               t->wakes_sent, t->wakes_received, t->nowait_polls, t->dropped);
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (t->parks_by_call[k])
                printf(" %s=%" PRIu64, d9_call_name(k), t->parks_by_call[k]);
        putchar('\n');
    }
    if (s->nt)
        puts("\nWAKES> sent, >WAKES received (matched to the unpark they caused); BUSY% of the span between "
             "the thread's first and last event");
    d9_wakes_text(m, s);
    d9_sched_text(m, s);
    d9_sys_text(m, s);
    d9_app_text(s);
}

static void json_dist(struct d9_jw *w, const char *key, const struct d9_dist *d)
{
    d9_jw_obj(w, key);
    d9_jw_u64(w, "p50", d->p50);
    d9_jw_u64(w, "p99", d->p99);
    d9_jw_u64(w, "max", d->max);
    d9_jw_u64(w, "count", d->n);
    d9_jw_end(w);
}

/* {count, <total_key>, <max_key>} */
static void json_sum(struct d9_jw *w, const char *key, const char *total_key, const char *max_key, uint64_t count,
                     uint64_t total, uint64_t max)
{
    d9_jw_obj(w, key);
    d9_jw_u64(w, "count", count);
    d9_jw_u64(w, total_key, total);
    d9_jw_u64(w, max_key, max);
    d9_jw_end(w);
}

static void json_thread(struct d9_jw *w, const struct d9_tstats *t)
{
    d9_jw_obj(w, NULL);
    d9_jw_pid(w, t->pid);
    d9_jw_u64(w, "tid", t->tid);
    d9_jw_str(w, "name", t->name);
    d9_jw_str(w, "role", d9_role_name(t->role));
    d9_jw_u64(w, "events", t->events);
    d9_jw_u64(w, "parks", t->parks);
    d9_jw_obj(w, "parks_by_call");
    for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
        if (t->parks_by_call[k])
            d9_jw_u64(w, d9_call_name(k), t->parks_by_call[k]);
    d9_jw_end(w);
    d9_jw_u64(w, "wakes_sent", t->wakes_sent);
    d9_jw_u64(w, "wakes_received", t->wakes_received);
    d9_jw_u64(w, "busy_ns", t->busy_ns);
    d9_jw_u64(w, "parked_ns", t->parked_ns);
    d9_jw_num(w, "busy_pct", busy_pct(t));
    d9_jw_u64(w, "nowait_polls", t->nowait_polls);
    d9_jw_u64(w, "dropped", t->dropped);
    json_dist(w, "park_ns", &t->park_ns);
    json_dist(w, "busy_period_ns", &t->busy_period_ns);
    json_dist(w, "wake_latency_ns", &t->wake_latency_ns);
    d9_jw_obj(w, "sched_delay_ns");
    d9_jw_u64(w, "count", t->sched.n);
    d9_jw_u64(w, "total", t->sched_total);
    d9_jw_u64(w, "max", t->sched.max);
    if (t->sched_share_window) {
        d9_jw_obj(w, "max_share");
        d9_jw_u64(w, "delay_ns", t->sched_share_delay);
        d9_jw_u64(w, "window_ns", t->sched_share_window);
        d9_jw_end(w);
    } else
        d9_jw_null(w, "max_share");
    d9_jw_end(w);
    json_sum(w, "preempt", "total_ns", "max_ns", t->preempts, t->preempt_total, t->preempt_max);
    d9_jw_u64(w, "slow_syscalls", t->slow.n);
    json_sum(w, "lock_waits", "total_ns", "max_ns", t->lockw.n, t->lock_total, t->lock_max);
    d9_jw_u64(w, "app_events", t->app_events);
    d9_jw_end(w);
}

/* Segments written by a dump (D9_TLV_DUMP_REASON), read from the headers
 * in a second, header-only pass: the model keeps no per-segment facts. */
struct dump {
    uint32_t pid, seq;
    char *reason;
};
struct dumps {
    const struct d9_model *m; /* loaded: a dump's process key */
    struct dump *d;
    size_t n, cap;
};

static int stop_at_first_event(void *ctx, const struct d9_event *ev)
{
    (void)ctx;
    (void)ev;
    return 1;
}

static int collect_dump(void *ctx, const char *path, const uint8_t *buf, size_t len)
{
    (void)path;
    struct dumps *ds = ctx;
    struct d9_seg seg;
    int rc = d9_read_segment(buf, len, &seg, stop_at_first_event, NULL);
    if (rc >= 0 && seg.dump_reason) {
        if (ds->n == ds->cap) {
            size_t cap = ds->cap ? 2 * ds->cap : 8;
            struct dump *d = realloc(ds->d, cap * sizeof(*d));
            if (!d) {
                d9_seg_free(&seg);
                return -1;
            }
            ds->d = d;
            ds->cap = cap;
        }
        ds->d[ds->n++] = (struct dump){d9_model_key_of(ds->m, &seg), seg.seq, seg.dump_reason};
        seg.dump_reason = NULL; /* now ours */
    }
    d9_seg_free(&seg);
    return rc < 0 ? -1 : 0;
}

static void print_json(const struct d9_model *m, const struct d9_summary *s, int bad, const struct dumps *ds)
{
    struct d9_jw w;
    d9_jw_init(&w, stdout);
    d9_jw_obj(&w, NULL);
    d9_jw_u64(&w, "events", s->events);
    d9_jw_u64(&w, "dropped", s->dropped);
    d9_jw_u64(&w, "damaged_inputs", (uint64_t)bad);
    d9_jw_arr(&w, "processes");
    for (size_t i = 0; i < m->nproc; i++) {
        const struct d9_proc *p = &m->proc[i];
        size_t nt = 0;
        for (size_t k = 0; k < s->nt; k++)
            nt += s->t[k].pid == p->pid;
        d9_jw_newline(&w);
        d9_jw_obj(&w, NULL);
        d9_jw_pid(&w, p->pid);
        d9_jw_str(&w, "exe", p->exe);
        d9_jw_str(&w, "cmdline", p->cmdline);
        d9_jw_str(&w, "hostname", p->hostname);
        d9_jw_u64(&w, "threads", nt);
        d9_jw_arr(&w, "dumps");
        for (size_t k = 0; k < ds->n; k++) {
            if (ds->d[k].pid != p->pid)
                continue;
            d9_jw_obj(&w, NULL);
            d9_jw_u64(&w, "seq", ds->d[k].seq);
            d9_jw_str(&w, "reason", ds->d[k].reason);
            d9_jw_end(&w);
        }
        d9_jw_end(&w);
        d9_jw_end(&w);
    }
    d9_jw_end(&w);
    d9_jw_arr(&w, "threads");
    for (size_t i = 0; i < s->nt; i++) {
        d9_jw_newline(&w);
        json_thread(&w, &s->t[i]);
    }
    d9_jw_end(&w);
    d9_jw_newline(&w);
    d9_wakes_json(&w, s);
    d9_jw_newline(&w);
    d9_sys_json(&w, s);
    d9_jw_newline(&w);
    d9_sched_json(&w, s);
    d9_jw_newline(&w);
    d9_app_json(&w, s);
    d9_jw_end(&w);
    putchar('\n');
}

int d9_cmd_summary(char *const *paths, int npaths, int json)
{
    struct d9_model m = {0};
    struct d9_summary s = {0};
    int bad = 0, rc = d9_load(&m, paths, npaths, &bad);
    if (rc == 0)
        rc = d9_analyse(&m, &s);
    struct dumps ds = {.m = &m};
    /* No errors pointer: d9_load said and counted what is wrong with the paths. */
    if (rc == 0 && json && d9_for_each_file(paths, npaths, collect_dump, &ds, NULL) < 0)
        rc = -1;
    if (rc < 0)
        fprintf(stderr, "dial9-decode: out of memory\n");
    else if (json)
        print_json(&m, &s, bad, &ds);
    else
        print_text(&m, &s);
    for (size_t k = 0; k < ds.n; k++)
        free(ds.d[k].reason);
    free(ds.d);
    d9_summary_free(&s);
    d9_model_free(&m);
    return rc < 0 || bad ? 1 : 0;
}
