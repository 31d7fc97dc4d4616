/* export_chrome.c - Chrome Trace Event JSON (chrome://tracing, Perfetto's
 * JSON importer, speedscope): {"displayTimeUnit":"ns","traceEvents":[...]}
 * with M (process/thread names), X (parks, busy periods: written at their
 * end), i (thread-scoped instants) and s/f flow events (cat and name "wake",
 * bound to the enclosing slice), and per process the counters of
 * export_counters.h as C events: "busy" (arg "threads") and "dropped" (arg
 * "events"), which Perfetto's JSON importer names "busy threads" and
 * "dropped events" as in the protobuf export. ts and dur are µs with 3
 * decimals (exact ns), since the trace start. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_counters.h"
#include "json.h"

#define WARN_BYTES (200ull << 20) /* viewers fail near 256 MB */

struct chrome {
    FILE *out;
    struct d9_counters *counters;
    uint64_t bytes; /* written so far (names counted by their raw length) */
    int any, warned, failed;
};

static void count(struct chrome *c, int n)
{
    if (n > 0)
        c->bytes += (uint64_t)n;
    if (c->bytes > WARN_BYTES && !c->warned) {
        c->warned = 1;
        fprintf(stderr, "dial9-decode export: warning: the Chrome JSON is over 200 MB, more than trace viewers "
                        "load; narrow it with --from/--to or --tid, or use --format perfetto\n");
    }
}

static void put(struct chrome *c, const char *s)
{
    fputs(s, c->out);
    count(c, (int)strlen(s));
}

/* A JSON string (counted by its raw length). */
static void jstr(struct chrome *c, const char *s)
{
    d9_json_str(c->out, s, strlen(s));
    count(c, (int)strlen(s) + 2);
}

/* Starts an event object: {"ph":"X","pid":P,"tid":T */
static void head(struct chrome *c, const char *ph, uint32_t pid, uint32_t tid)
{
    count(c, fprintf(c->out, "%s{\"ph\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, c->any ? ",\n" : "", ph,
                     pid, tid));
    c->any = 1;
}

static void us(struct chrome *c, const char *key, uint64_t ns)
{
    count(c, fprintf(c->out, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000)));
}

static void str(struct chrome *c, const char *key, const char *s)
{
    count(c, fprintf(c->out, ",\"%s\":", key));
    jstr(c, s);
}

static void args(struct chrome *c, const struct d9_export_item *it)
{
    put(c, ",\"args\":{");
    for (unsigned i = 0; i < it->nargs; i++) {
        const struct d9_export_arg *a = &it->args[i];
        count(c, fprintf(c->out, "%s\"%s\":", i ? "," : "", a->key));
        if (a->str)
            jstr(c, a->str);
        else
            count(c, fprintf(c->out, "%" PRId64, a->v));
    }
    put(c, "}}");
}

static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    head(c, "M", pid, tid);
    str(c, "name", what);
    put(c, ",\"args\":{\"name\":");
    jstr(c, name);
    put(c, "}}");
}

static void process(void *ctx, uint32_t pid, const char *name)
{
    char buf[32];
    if (!*name)
        snprintf(buf, sizeof(buf), "pid %" PRIu32, pid);
    meta(ctx, "process_name", pid, pid, *name ? name : buf);
}

static void thread(void *ctx, uint32_t pid, uint32_t tid, const char *name)
{
    char buf[32];
    if (!*name)
        snprintf(buf, sizeof(buf), "tid %" PRIu32, tid);
    meta(ctx, "thread_name", pid, tid, *name ? name : buf);
}

/* A counter sample (rc from d9_counters_*: 1 a sample, -1 out of memory). */
static void counter(struct chrome *c, int rc, const struct d9_counter_sample *x)
{
    static const char *const name[D9_CTR_COUNT][2] = {{"busy", "threads"}, {"dropped", "events"}};
    if (rc < 0)
        c->failed = 1;
    if (rc <= 0)
        return;
    head(c, "C", x->pid, x->pid);
    us(c, "ts", x->ts);
    str(c, "name", name[x->which][0]);
    count(c, fprintf(c->out, ",\"args\":{\"%s\":%" PRId64 "}}", name[x->which][1], x->value));
}

static void slice_begin(void *ctx, const struct d9_export_item *s)
{
    struct chrome *c = ctx;
    struct d9_counter_sample x;
    counter(c, d9_counters_slice(c->counters, s, 0, &x), &x);
}

static void slice_end(void *ctx, const struct d9_export_item *s)
{
    struct chrome *c = ctx;
    struct d9_counter_sample x;
    head(c, "X", s->pid, s->tid);
    us(c, "ts", s->ts);
    us(c, "dur", s->end - s->ts);
    str(c, "cat", s->park ? "park" : "busy");
    str(c, "name", s->name);
    args(c, s);
    counter(c, d9_counters_slice(c->counters, s, 1, &x), &x);
}

static void instant(void *ctx, const struct d9_export_item *i)
{
    struct chrome *c = ctx;
    struct d9_counter_sample x;
    head(c, "i", i->pid, i->tid);
    us(c, "ts", i->ts);
    put(c, ",\"s\":\"t\"");
    str(c, "cat", "event");
    str(c, "name", i->name);
    args(c, i);
    counter(c, d9_counters_instant(c->counters, i, &x), &x);
}

static void flow(void *ctx, const struct d9_export_item *at, uint64_t id, int end)
{
    struct chrome *c = ctx;
    head(c, end ? "f" : "s", at->pid, at->tid);
    us(c, "ts", at->ts);
    count(c, fprintf(c->out, ",\"id\":%" PRIu64 "%s,\"cat\":\"wake\",\"name\":\"wake\"", id, end ? ",\"bp\":\"e\"" : ""));
    args(c, at);
}

static void finish(void *ctx)
{
    struct chrome *c = ctx;
    put(c, "\n]}\n");
}

static const struct d9_export_ops chrome_ops = {process, thread, slice_begin, slice_end, instant, flow, finish};

void *d9_chrome_new(FILE *out, const struct d9_export_ops **ops)
{
    struct chrome *c = calloc(1, sizeof(*c));
    if (c && !(c->counters = d9_counters_new())) {
        free(c);
        c = NULL;
    }
    if (!c)
        return NULL;
    c->out = out;
    put(c, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    *ops = &chrome_ops;
    return c;
}

int d9_chrome_free(void *ctx)
{
    struct chrome *c = ctx;
    int rc = c->failed || fflush(c->out) != 0 || ferror(c->out) ? -1 : 0;
    d9_counters_free(c->counters);
    free(c);
    return rc;
}
