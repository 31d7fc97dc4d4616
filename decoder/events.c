/* events.c - `dial9-decode events`: every event in time order, as text or
 * JSON Lines. In JSON a wake also names the thread it released and the
 * wake-to-run latency (latency.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "fmt.h"
#include "json.h"
#include "pidkey.h"
#include "schema.h"
#include "stream.h"

/* One output line: text (" key=value") when w is NULL, else JSON members. */
struct line {
    FILE *out;
    struct d9_jw *w;
};

static void put_str(struct line *l, const char *key, const char *s, size_t n)
{
    if (l->w)
        d9_jw_strn(l->w, key, s, n);
    else
        fprintf(l->out, " %s=%.*s", key, (int)n, s);
}

static void put_u64(struct line *l, const char *key, uint64_t v, int hex)
{
    if (l->w)
        d9_jw_u64(l->w, key, v);
    else
        fprintf(l->out, hex ? " %s=0x%" PRIx64 : " %s=%" PRIu64, key, v);
}

static void put_i64(struct line *l, const char *key, int64_t v)
{
    if (l->w)
        d9_jw_i64(l->w, key, v);
    else
        fprintf(l->out, " %s=%" PRId64, key, v);
}

static void put_name(struct line *l, const char *key, const char *name) { put_str(l, key, name, strlen(name)); }

static const char *op_name(uint64_t op)
{
    static const char *const ops[] = {"?", "add", "del", "mod"}; /* EPOLL_CTL_ADD.. */
    return op < 4 ? ops[op] : "?";
}

/* Calls whose target is a memory address (hex in text); other targets are fds. */
static int address_call(uint64_t call)
{
    switch (call) {
    case D9_CALL_FUTEX: case D9_CALL_COND_WAIT: case D9_CALL_SEM_WAIT: case D9_CALL_COND_SIGNAL:
    case D9_CALL_COND_BROADCAST: case D9_CALL_SEM_POST: case D9_CALL_MUTEX_LOCK: case D9_CALL_RWLOCK_RDLOCK:
    case D9_CALL_RWLOCK_WRLOCK:
        return 1;
    default:
        return 0;
    }
}

/* How print_fields writes a field, by its name in the schema: worked out once
 * per type and field rather than by string compares on every event. */
enum role { PLAIN, CALL, FD_KIND, SOURCE, OP, TARGET };

static enum role field_role(unsigned type, unsigned i)
{
    static uint8_t roles[D9_EV_TYPE_MAX][D9_MAX_FIELDS]; /* role + 1; 0: not worked out yet */
    if (type >= D9_EV_TYPE_MAX || i >= D9_MAX_FIELDS)
        return PLAIN;
    if (!roles[type][i]) {
        const char *f = d9_field_name(type, i);
        enum role r = !strcmp(f, "call")                                  ? CALL
                      : !strcmp(f, "fd_kind")                             ? FD_KIND
                      : !strcmp(f, "source") && type == D9_EV_SCHED_DELAY ? SOURCE
                      : !strcmp(f, "op")                                  ? OP
                      : !strcmp(f, "target")                              ? TARGET
                                                                          : PLAIN;
        roles[type][i] = (uint8_t)(r + 1);
    }
    return (enum role)(roles[type][i] - 1);
}

static void print_fields(struct line *l, const struct d9_event *e)
{
    int first_bytes = 1;
    for (unsigned i = 0; i < e->nfields; i++) {
        const char *f = d9_field_name(e->type, i);
        uint64_t v = e->f[i];
        enum role r = field_role(e->type, i);
        if (e->kinds[i] == 'b' && first_bytes) {
            put_str(l, f, e->name, e->name_len);
            first_bytes = 0;
        } else if (e->kinds[i] == 'b') { /* only the first bytes field is kept: say how long */
            if (l->w) {
                d9_jw_obj(l->w, f);
                d9_jw_u64(l->w, "bytes", v);
                d9_jw_end(l->w);
            } else
                fprintf(l->out, " %s=<%" PRIu64 " bytes>", f, v);
        } else if (r == CALL)
            put_name(l, f, d9_call_name((unsigned)v));
        else if (r == FD_KIND)
            put_name(l, f, d9_fd_kind_name(v));
        else if (r == SOURCE)
            put_name(l, f, d9_sched_source_name(v));
        else if (!l->w && r == OP)
            put_name(l, f, op_name(v));
        else if (e->kinds[i] == 's')
            put_i64(l, f, (int64_t)v);
        else
            put_u64(l, f, v, r == TARGET && address_call(e->f[0]));
    }
}

/* JSON: wakee and latency_ns of a WAKE or THREAD_EXIT (the join it
 * released), from its first match (earliest unpark), or null. Text lines
 * stay the raw record: a line then depends only on its own event, so
 * traces compare line by line. */
static void print_wakee(struct d9_jw *w, const struct d9_wake *k)
{
    if (k) {
        d9_jw_u64(w, "wakee", k->wakee_tid);
        d9_jw_u64(w, "latency_ns", k->latency_ns);
    } else {
        d9_jw_null(w, "wakee");
        d9_jw_null(w, "latency_ns");
    }
}

static void print_event(FILE *out, const struct d9_model *m, const struct d9_event *e, const struct d9_wake *k,
                        int json)
{
    const struct d9_thread *t = d9_model_thread(m, e->pid, e->tid);
    const char *name = t ? t->name : "";
    char unknown[24], buf[32];
    const char *tn = unknown;
    if (e->type > 0 && e->type < D9_EV_TYPE_MAX)
        tn = d9_type_name(e->type);
    else
        snprintf(unknown, sizeof(unknown), "unknown_%u", e->type);
    struct d9_jw w;
    struct line l = {out, json ? &w : NULL};
    if (json) {
        d9_jw_init(&w, out);
        d9_jw_obj(&w, NULL);
        d9_jw_u64(&w, "ts", e->ts);
        d9_jw_pid(&w, e->pid);
        d9_jw_u64(&w, "tid", e->tid);
        d9_jw_str(&w, "thread", name);
        d9_jw_str(&w, "type", tn);
    } else {
        char nb[24];
        fprintf(out, "%s %s %" PRIu32 " %s %s", d9_fmt_ts(buf, sizeof(buf), e->ts), D9_PID_STR(e->pid), e->tid,
                d9_fmt_name(nb, sizeof(nb), name), tn);
    }
    print_fields(&l, e);
    if (json && d9_event_wakes(e))
        print_wakee(&w, k);
    if (json)
        d9_jw_end(&w);
    putc_unlocked('\n', out); /* only this thread writes out (json.c) */
}

struct printer {
    struct d9_model *m;
    struct d9_wakelog *log; /* NULL: text */
    uint64_t pos;
};

static int print_one(void *ctx, const struct d9_event *e)
{
    struct printer *p = ctx;
    struct d9_wake k;
    int has = p->log && d9_event_wakes(e) && d9_wakelog_next_of(p->log, p->pos, &k);
    p->pos++;
    print_event(stdout, p->m, e, has ? &k : NULL, p->log != NULL);
    return ferror_unlocked(stdout) ? 1 : 0;
}

static int no_op(void *ctx, const struct d9_event *e)
{
    (void)ctx;
    (void)e;
    return 0;
}

/* Two passes: the first learns every thread name (and, for JSON, matches
 * the wakes), the second prints. */
int d9_cmd_events(char *const *paths, int npaths, int json)
{
    struct d9_model m = {0};
    struct d9_summary s = {0};
    struct d9_analysis_opts o = {.wakelog = 1};
    int bad = 0;
    int rc = d9_load(&m, paths, npaths, &bad);
    if (rc == 0) {
        d9_stream_set_passes(m.src, 2);
        rc = json ? d9_analyse_opts(&m, &s, &o) : d9_model_each(&m, no_op, NULL);
    }
    struct printer p = {&m, s.wakelog, 0};
    if (rc == 0)
        rc = d9_model_each(&m, print_one, &p);
    if (rc < 0)
        fprintf(stderr, "dial9-decode: out of memory\n");
    d9_summary_free(&s);
    d9_model_free(&m);
    return rc || bad ? 1 : 0;
}
