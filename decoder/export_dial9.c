/* export_dial9.c - the trace format of the Rust dial9 crate (`TRC\0` v1,
 * dial9-rs/dial9 dial9-trace-format/SPEC.md), with the event schemas its
 * viewer and analysis toolkit read (dial9-tokio-telemetry's wire events), so
 * they open our traces. The mapping, and what it cannot carry, is
 * docs/EXPORT-DIAL9.md; in short, every thread is a "worker":
 *   - a park slice: WorkerParkEvent at its start, WorkerUnparkEvent at its
 *     end when an UNPARK ended it, and a ParkCallEvent at its end (the call,
 *     timeout, result, duration: annotated as a single-event span);
 *   - a flow's wake end: WakeEventEvent (waker and woken are thread ids);
 *   - instants: one custom schema per kind (SlowSyscallEvent, ...);
 *   - thread and process names: a SegmentMetadataEvent at time 0.
 * Busy slices and flow wakee ends are not written: the park/unpark pair
 * already bounds the busy time, and the unpark is the wakee end. Times are
 * the walker's ns since the trace start. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "map.h"
#include "trc_read.h" /* the wire constants only */
#include "vec.h"

/* Fixed type ids of the viewer's schemas; custom ones follow. */
enum { T_META = 1, T_PARK, T_UNPARK, T_WAKE, T_PARKCALL, T_CUSTOM };

/* Worker ids the crate reserves (WorkerId::BLOCKING, ::UNKNOWN). */
#define W_BLOCKING 254
#define W_UNKNOWN 255

struct buf {
    uint8_t *p;
    size_t n, cap;
    int oom;
};

struct thr {
    uint32_t pid, tid;
    uint64_t worker;
    char *name;
};

struct proc {
    uint32_t pid;
    char *name;
};

/* A custom instant schema: its signature (kind, then each arg key and s|n). */
struct custom {
    char *sig;
    uint16_t id;
};

struct dial9 {
    FILE *out;
    struct buf f;
    uint64_t base; /* the running timestamp base (SPEC "Timestamp Encoding") */
    struct d9_map idx; /* (pid, tid) -> t index */
    struct thr *t;
    size_t nt, tcap;
    struct proc *p;
    size_t np, pcap;
    uint64_t next_worker;
    char **pool; /* interned strings; pool_id = index */
    size_t npool, poolcap;
    struct custom *c;
    size_t nc, ccap;
    int meta_done, failed;
};

/* ---- frame bytes ---- */

/* d9_grow to any index n (it grows by one doubling per call). */
static int fit(void **v, size_t *cap, size_t n, size_t size)
{
    while (n >= *cap)
        if (d9_grow(v, cap, n, size) < 0)
            return -1;
    return 0;
}


static void put(struct buf *b, const void *p, size_t n)
{
    if (b->oom || fit((void **)&b->p, &b->cap, b->n + n, 1) < 0) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_le(struct buf *b, uint64_t v, int n)
{
    uint8_t x[8];
    for (int i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, (size_t)n);
}

static void put_leb(struct buf *b, uint64_t v)
{
    do {
        uint8_t x = v & 0x7f;
        v >>= 7;
        x |= v ? 0x80 : 0;
        put(b, &x, 1);
    } while (v);
}

/* A u16-length-prefixed name (schema and field names). */
static void put_name16(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    n = n > 65535 ? 65535 : n;
    put_le(b, n, 2);
    put(b, s, n);
}

static void put_str32(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    put_le(b, n, 4);
    put(b, s, n);
}

static void flush_frame(struct dial9 *d)
{
    if (d->f.oom || (d->f.n && fwrite(d->f.p, 1, d->f.n, d->out) != d->f.n))
        d->failed = 1;
    d->f.n = 0;
    d->f.oom = 0;
}

/* ---- schemas ---- */

struct fdef {
    const char *name;
    uint8_t type;
};

static void schema(struct dial9 *d, uint16_t id, const char *name, const struct fdef *f, unsigned n)
{
    put_le(&d->f, TRC_SCHEMA, 1);
    put_le(&d->f, id, 2);
    put_name16(&d->f, name);
    put_le(&d->f, 1, 1); /* every event here has a timestamp */
    put_le(&d->f, n, 2);
    for (unsigned i = 0; i < n; i++) {
        put_name16(&d->f, f[i].name);
        put_le(&d->f, f[i].type, 1);
    }
    flush_frame(d);
}

struct ann {
    uint16_t field;
    const char *key, *value;
};

static void annotate(struct dial9 *d, uint16_t id, const struct ann *a, unsigned n)
{
    if (!n)
        return;
    put_le(&d->f, TRC_ANNOTATIONS, 1);
    put_leb(&d->f, id);
    put_le(&d->f, n, 2);
    for (unsigned i = 0; i < n; i++) {
        put_le(&d->f, a[i].field, 2);
        put_name16(&d->f, a[i].key);
        put_str32(&d->f, a[i].value);
    }
    flush_frame(d);
}

/* The fields are dial9-tokio-telemetry's (src/telemetry/events.rs). */
static const struct fdef meta_f[] = {{"entries", TRC_STRING_MAP}};
static const struct fdef park_f[] = {
    {"worker_id", TRC_VARINT}, {"local_queue", TRC_U8}, {"cpu_time_ns", TRC_VARINT}, {"tid", TRC_U32}};
static const struct fdef unpark_f[] = {{"worker_id", TRC_VARINT},
                                       {"local_queue", TRC_U8},
                                       {"cpu_time_ns", TRC_VARINT},
                                       {"sched_wait_ns", TRC_OPTIONAL | TRC_VARINT},
                                       {"tid", TRC_U32}};
static const struct fdef wake_f[] = {
    {"waker_task_id", TRC_VARINT}, {"woken_task_id", TRC_VARINT}, {"target_worker", TRC_U8}};
/* Ours: a park as a span the viewer places from its end and duration. */
static const struct fdef parkcall_f[] = {{"tid", TRC_U32},          {"worker_id", TRC_VARINT},
                                         {"call", TRC_POOLED_STRING}, {"duration_ns", TRC_VARINT},
                                         {"timeout_ns", TRC_I64},     {"result", TRC_OPTIONAL | TRC_I64}};
static const struct ann parkcall_a[] = {{0, "dial9.role", "thread_id"},     {1, "dial9.role", "tokio.worker_id"},
                                        {2, "dial9.role", "span.name"},     {3, "dial9.role", "span.duration"},
                                        {3, "unit", "ns"},                  {3, "dial9.span.type", "park"},
                                        {4, "unit", "ns"}};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- events ---- */

/* Starts an event frame of type id at ts, after a reset frame when the delta
 * does not fit a u24 or goes back. */
static void event(struct dial9 *d, uint16_t id, uint64_t ts)
{
    if (ts < d->base || ts - d->base > TRC_MAX_DELTA) {
        put_le(&d->f, TRC_TS_RESET, 1);
        put_le(&d->f, ts, 8);
        d->base = ts;
    }
    put_le(&d->f, TRC_EVENT, 1);
    put_le(&d->f, id, 2);
    put_le(&d->f, ts - d->base, 3);
    d->base = ts;
}

/* The pool id of s, written in a pool frame the first time. */
static uint32_t intern(struct dial9 *d, const char *s)
{
    for (size_t i = 0; i < d->npool; i++) /* few distinct strings: call and kind names */
        if (!strcmp(d->pool[i], s))
            return (uint32_t)i;
    char *copy = strdup(s);
    if (!copy || d9_grow((void **)&d->pool, &d->poolcap, d->npool, sizeof(*d->pool)) < 0) {
        free(copy);
        d->failed = 1;
        return 0;
    }
    d->pool[d->npool] = copy;
    put_le(&d->f, TRC_STRING_POOL, 1);
    put_le(&d->f, 1, 4);
    put_le(&d->f, d->npool, 4);
    put_str32(&d->f, s);
    flush_frame(d);
    return (uint32_t)d->npool++;
}

static const struct thr *thread_of(const struct dial9 *d, uint32_t pid, uint32_t tid)
{
    uint32_t i;
    return d9_map_get(&d->idx, d9_key2(pid, tid), &i) ? &d->t[i] : NULL;
}

static uint64_t worker_of(const struct dial9 *d, uint32_t pid, uint32_t tid)
{
    const struct thr *t = thread_of(d, pid, tid);
    return t ? t->worker : W_UNKNOWN;
}

static const struct d9_export_arg *arg_of(const struct d9_export_item *it, const char *key, unsigned from)
{
    for (unsigned i = from; i < it->nargs; i++)
        if (!strcmp(it->args[i].key, key))
            return &it->args[i];
    return NULL;
}

/* Names, as one SegmentMetadataEvent at time 0, once every thread is known
 * (the walker describes them all before the first event). */
static void meta(struct dial9 *d)
{
    if (d->meta_done)
        return;
    d->meta_done = 1;
    char k[96], v[64];
    struct buf e = {0};
    uint32_t n = 0;
#define ENTRY(key, val) (put_str32(&e, key), put_str32(&e, val), n++)
    ENTRY("dial9.exporter", "dial9-decode export --format dial9");
    ENTRY("dial9.clock", "ns since the trace start");
    for (size_t i = 0; i < d->np; i++) {
        /* runtime.NAME -> its worker ids: the viewer groups workers by it */
        snprintf(k, sizeof(k), "runtime.%s[%" PRIu32 "]", d->p[i].name, d->p[i].pid);
        struct buf ids = {0};
        for (size_t j = 0; j < d->nt; j++)
            if (d->t[j].pid == d->p[i].pid) {
                snprintf(v, sizeof(v), "%s%" PRIu64, ids.n ? "," : "", d->t[j].worker);
                put(&ids, v, strlen(v));
            }
        put(&ids, "", 1);
        ENTRY(k, ids.oom ? "" : (char *)ids.p);
        e.oom |= ids.oom;
        free(ids.p);
    }
    for (size_t i = 0; i < d->nt; i++) {
        snprintf(k, sizeof(k), "thread_name.%" PRIu32, d->t[i].tid);
        ENTRY(k, d->t[i].name);
        snprintf(k, sizeof(k), "worker_id.%" PRIu32, d->t[i].tid);
        snprintf(v, sizeof(v), "%" PRIu64, d->t[i].worker);
        ENTRY(k, v);
    }
#undef ENTRY
    event(d, T_META, 0);
    put_le(&d->f, n, 4);
    put(&d->f, e.p, e.n);
    d->f.oom |= e.oom;
    free(e.p);
    flush_frame(d);
}

static void process(void *ctx, uint32_t pid, const char *name)
{
    struct dial9 *d = ctx;
    char buf[32];
    snprintf(buf, sizeof(buf), "pid %" PRIu32, pid);
    char *copy = strdup(*name ? name : buf);
    if (!copy || d9_grow((void **)&d->p, &d->pcap, d->np, sizeof(*d->p)) < 0) {
        free(copy);
        d->failed = 1;
        return;
    }
    d->p[d->np++] = (struct proc){pid, copy};
}

static void thread(void *ctx, uint32_t pid, uint32_t tid, const char *name)
{
    struct dial9 *d = ctx;
    char *copy = strdup(name);
    if (!copy || d9_grow((void **)&d->t, &d->tcap, d->nt, sizeof(*d->t)) < 0 ||
        d9_map_put(&d->idx, d9_key2(pid, tid), (uint32_t)d->nt) < 0) {
        free(copy);
        d->failed = 1;
        return;
    }
    if (d->next_worker == W_BLOCKING) /* keep clear of the crate's sentinels */
        d->next_worker = W_UNKNOWN + 1;
    d->t[d->nt++] = (struct thr){pid, tid, d->next_worker++, copy};
}

static void slice_begin(void *ctx, const struct d9_export_item *s)
{
    struct dial9 *d = ctx;
    meta(d);
    if (!s->park)
        return;
    event(d, T_PARK, s->ts);
    put_leb(&d->f, worker_of(d, s->pid, s->tid));
    put_le(&d->f, 0, 1); /* local_queue: no run queue is seen */
    put_leb(&d->f, 0);   /* cpu_time_ns: not recorded */
    put_le(&d->f, s->tid, 4);
    flush_frame(d);
}

static void slice_end(void *ctx, const struct d9_export_item *s)
{
    struct dial9 *d = ctx;
    meta(d);
    if (!s->park)
        return;
    uint64_t w = worker_of(d, s->pid, s->tid);
    const struct d9_export_arg *res = arg_of(s, "result", s->end_args); /* set only by an UNPARK */
    const struct d9_export_arg *timeout = arg_of(s, "timeout_ns", 0);
    uint32_t call = intern(d, s->name);
    if (res) {
        event(d, T_UNPARK, s->end);
        put_leb(&d->f, w);
        put_le(&d->f, 0, 1);
        put_leb(&d->f, 0);
        put_le(&d->f, 0, 1); /* sched_wait_ns absent: not sampled per unpark */
        put_le(&d->f, s->tid, 4);
        flush_frame(d);
    }
    event(d, T_PARKCALL, s->end);
    put_le(&d->f, s->tid, 4);
    put_leb(&d->f, w);
    put_le(&d->f, call, 4);
    put_leb(&d->f, s->end - s->ts);
    put_le(&d->f, (uint64_t)(timeout ? timeout->v : 0), 8);
    put_le(&d->f, res ? 1 : 0, 1);
    if (res)
        put_le(&d->f, (uint64_t)res->v, 8);
    flush_frame(d);
}

/* The schema name of an instant kind (the first word of its name). */
static const char *kind_schema(const char *kind)
{
    static const char *const map[][2] = {{"slow", "SlowSyscallEvent"}, {"lock_wait", "LockWaitEvent"},
                                         {"drop", "DropEvent"},        {"preempt", "PreemptEvent"},
                                         {"sched_delay", "SchedDelayEvent"}, {"app", "AppEvent"}};
    for (size_t i = 0; i < N(map); i++)
        if (!strcmp(kind, map[i][0]))
            return map[i][1];
    return "InstantEvent";
}

/* The type id of the instant schema it fits, registered on first use. */
static int custom_id(struct dial9 *d, const struct d9_export_item *it)
{
    char sig[256], kind[48];
    size_t k = strcspn(it->name, " ");
    if (it->app) /* one schema for all: the program's name is its name field */
        snprintf(kind, sizeof(kind), "app");
    else
        snprintf(kind, sizeof(kind), "%.*s", (int)(k < 47 ? k : 47), it->name);
    int n = snprintf(sig, sizeof(sig), "%s", kind);
    for (unsigned i = 0; i < it->nargs && n > 0 && (size_t)n < sizeof(sig); i++)
        n += snprintf(sig + n, sizeof(sig) - (size_t)n, " %s:%c", it->args[i].key, it->args[i].str ? 's' : 'n');
    for (size_t i = 0; i < d->nc; i++)
        if (!strcmp(d->c[i].sig, sig))
            return d->c[i].id;
    if (T_CUSTOM + d->nc > 65535 || d9_grow((void **)&d->c, &d->ccap, d->nc, sizeof(*d->c)) < 0 ||
        !(d->c[d->nc].sig = strdup(sig))) {
        d->failed = 1;
        return -1;
    }
    uint16_t id = (uint16_t)(T_CUSTOM + d->nc);
    d->c[d->nc++].id = id;
    struct fdef f[3 + D9_EXPORT_ARGS] = {{"tid", TRC_U32}, {"worker_id", TRC_VARINT}, {"name", TRC_POOLED_STRING}};
    struct ann a[D9_EXPORT_ARGS];
    unsigned na = 0;
    for (unsigned i = 0; i < it->nargs; i++) {
        const char *key = it->args[i].key;
        size_t kl = strlen(key);
        f[3 + i] = (struct fdef){key, it->args[i].str ? TRC_POOLED_STRING : TRC_I64};
        if (kl > 3 && !strcmp(key + kl - 3, "_ns"))
            a[na++] = (struct ann){(uint16_t)(3 + i), "unit", "ns"};
    }
    schema(d, id, kind_schema(kind), f, 3 + it->nargs);
    annotate(d, id, a, na);
    return id;
}

static void instant(void *ctx, const struct d9_export_item *it)
{
    struct dial9 *d = ctx;
    meta(d);
    int id = custom_id(d, it);
    if (id < 0)
        return;
    uint32_t name = intern(d, it->name), strs[D9_EXPORT_ARGS];
    for (unsigned i = 0; i < it->nargs; i++) /* pool frames go before the event frame */
        strs[i] = it->args[i].str ? intern(d, it->args[i].str) : 0;
    event(d, (uint16_t)id, it->ts);
    put_le(&d->f, it->tid, 4);
    put_leb(&d->f, worker_of(d, it->pid, it->tid));
    put_le(&d->f, name, 4);
    for (unsigned i = 0; i < it->nargs; i++)
        if (it->args[i].str)
            put_le(&d->f, strs[i], 4);
        else
            put_le(&d->f, (uint64_t)it->args[i].v, 8);
    flush_frame(d);
}

static void flow(void *ctx, const struct d9_export_item *at, uint64_t id, int end)
{
    struct dial9 *d = ctx;
    meta(d);
    const struct d9_export_arg *wakee = arg_of(at, "wakee", 0);
    if (end != 0 || !wakee)
        return; /* the wakee end is its WorkerUnparkEvent */
    uint64_t w = worker_of(d, at->pid, at->tid);
    event(d, T_WAKE, at->ts);
    put_leb(&d->f, at->tid);
    put_leb(&d->f, (uint64_t)wakee->v);
    put_le(&d->f, w < W_UNKNOWN ? w : W_UNKNOWN, 1); /* a u8 on the wire: 255 = unknown */
    flush_frame(d);
}

static void finish(void *ctx)
{
    meta(ctx);
}

static const struct d9_export_ops dial9_ops = {process, thread, slice_begin, slice_end, instant, flow, finish};

void *d9_dial9_new(FILE *out, const struct d9_export_ops **ops)
{
    struct dial9 *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->out = out;
    put(&d->f, TRC_MAGIC, 4);
    put_le(&d->f, TRC_VERSION, 1);
    flush_frame(d);
    schema(d, T_META, "SegmentMetadataEvent", meta_f, N(meta_f));
    schema(d, T_PARK, "WorkerParkEvent", park_f, N(park_f));
    schema(d, T_UNPARK, "WorkerUnparkEvent", unpark_f, N(unpark_f));
    schema(d, T_WAKE, "WakeEventEvent", wake_f, N(wake_f));
    schema(d, T_PARKCALL, "ParkCallEvent", parkcall_f, N(parkcall_f));
    annotate(d, T_PARKCALL, parkcall_a, N(parkcall_a));
    *ops = &dial9_ops;
    return d;
}

int d9_dial9_free(void *ctx)
{
    struct dial9 *d = ctx;
    int rc = d->failed || fflush(d->out) != 0 || ferror(d->out) ? -1 : 0;
    for (size_t i = 0; i < d->nt; i++)
        free(d->t[i].name);
    for (size_t i = 0; i < d->np; i++)
        free(d->p[i].name);
    for (size_t i = 0; i < d->npool; i++)
        free(d->pool[i]);
    for (size_t i = 0; i < d->nc; i++)
        free(d->c[i].sig);
    free(d->t);
    free(d->p);
    free(d->pool);
    free(d->c);
    free(d->f.p);
    d9_map_free(&d->idx);
    free(d);
    return rc;
}
