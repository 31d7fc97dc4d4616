/* test_trc.c - the TRC v1 reader (decoder/trc_read.c) against the spec, and
 * `export --format dial9` (decoder/export_dial9.c) through it.
 *
 * Spec: dial9-rs/dial9, dial9-trace-format/SPEC.md ("Version: 1"; read at
 * commits 939b866ae5f9606402d52a0bdf546dc0beae79c2 and 2c038ad8599b6fb7603fe1
 * ed01ce1fcc9a966c30, same wire format). SPEC.md has no worked hex dumps;
 * its examples are the byte layouts of its tables and the values it states
 * (the 5-byte header 54 52 43 00 01, the 9-byte reset frame, the u24 delta
 * range 0..16,777,215 with the base advancing per event, tag 0x87 = optional
 * PooledString, a u64 LEB128 in at most 10 bytes). The streams below are
 * assembled byte by byte from those tables, each piece citing its section,
 * and the reader must decode exactly the values the spec says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "trc_read.h"
#include "unit.h"

/* ---- byte builder (independent of the writer) ---- */

struct bb {
    uint8_t b[4096];
    size_t n;
    size_t cut[64]; /* frame boundaries: where a prefix is a whole stream */
    size_t ncut;
};

static void b8(struct bb *b, uint64_t v) { b->b[b->n++] = (uint8_t)v; }
static void ble(struct bb *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b8(b, v >> (8 * i));
}
static void bstr(struct bb *b, const char *s, int lenbytes)
{
    size_t n = strlen(s);
    ble(b, n, lenbytes);
    memcpy(b->b + b->n, s, n);
    b->n += n;
}
static void frame_end(struct bb *b) { b->cut[b->ncut++] = b->n; }

/* "Header": magic 0x54 0x52 0x43 0x00, version 0x01. */
static void header(struct bb *b)
{
    static const uint8_t h[] = {0x54, 0x52, 0x43, 0x00, 0x01};
    memcpy(b->b, h, sizeof(h));
    b->n = sizeof(h);
    frame_end(b);
}

/* A schema frame for type_id 1 named A, no timestamp, one field named
 * field of type `type` (the "Schema Frame" layout). */
static void schema_a(struct bb *b, const char *field, uint8_t type)
{
    b8(b, 0x01);
    ble(b, 1, 2);
    bstr(b, "A", 2);
    b8(b, 0);
    ble(b, 1, 2);
    bstr(b, field, 2);
    b8(b, type);
}

static struct trc *parse(const struct bb *b, size_t len, trc_event_fn fn, void *ctx, int *rc)
{
    struct trc *t = malloc(sizeof(*t));
    ck_assert_ptr_nonnull(t);
    *rc = trc_parse(t, b->b, len, fn, ctx);
    return t;
}

static void done(struct trc *t)
{
    trc_free(t);
    free(t);
}

/* The error of parsing b's first len bytes, which must fail. */
static void expect_error(const struct bb *b, size_t len, const char *want)
{
    int rc;
    struct trc *t = parse(b, len, NULL, NULL, &rc);
    ck_assert_msg(rc == -1, "parse of %zu bytes succeeded, wanted error \"%s\"", len, want);
    ck_assert_msg(strstr(t->err, want), "error \"%s\", wanted \"%s\"", t->err, want);
    done(t);
}

#define MAXE 16
struct got {
    size_t n;
    uint16_t type[MAXE];
    uint64_t ts[MAXE];
    struct trc_value v[MAXE][16];
};

static int collect(void *ctx, const struct trc_event *e)
{
    struct got *g = ctx;
    ck_assert_uint_lt(g->n, MAXE);
    g->type[g->n] = e->type_id;
    g->ts[g->n] = e->ts;
    for (uint16_t i = 0; i < e->schema->nfields && i < 16; i++)
        g->v[g->n][i] = e->v[i];
    g->n++;
    return 0;
}

START_TEST(spec_header)
{
    struct bb b = {0};
    int rc;
    header(&b); /* "Total: 5 bytes"; zero frames is a valid stream ("Stream Layout") */
    struct trc *t = parse(&b, b.n, NULL, NULL, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(t->frames, 0);
    done(t);
    /* "A decoder must reject streams whose magic bytes do not match or whose
     * version is unsupported." */
    expect_error(&b, 4, "truncated header");
    b.b[4] = 0x02;
    expect_error(&b, 5, "unsupported version 2");
    b.b[4] = 0x01;
    b.b[3] = 0x01;
    expect_error(&b, 5, "bad magic");
}
END_TEST

/* A stream of every frame type, checked value by value and prefix by prefix. */
START_TEST(spec_frames)
{
    struct bb b = {0};
    header(&b);
    /* "Schema Frame": tag 01, type_id u16, name_len u16, name, has_timestamp
     * u8, field_count u16, then FieldDefs (name_len u16, name, field_type u8). */
    b8(&b, 0x01);
    ble(&b, 7, 2);
    bstr(&b, "Ev", 2);
    b8(&b, 1);
    ble(&b, 3, 2);
    bstr(&b, "v", 2);
    b8(&b, 9); /* Varint */
    bstr(&b, "s", 2);
    b8(&b, 0x87); /* "tag 0x87 is an optional PooledString" */
    bstr(&b, "st", 2);
    b8(&b, 0x86); /* optional PooledStackFrames */
    frame_end(&b);
    /* "Schema Annotations Frame": tag 06, type_id LEB128, count u16, then
     * field_index u16, key_len u16, key, value_len u32, value. */
    b8(&b, 0x06);
    b8(&b, 7);
    ble(&b, 1, 2);
    ble(&b, 0, 2);
    bstr(&b, "unit", 2);
    bstr(&b, "ns", 4);
    frame_end(&b);
    /* "String Pool Frame": tag 03, count u32, entries (pool_id u32, data_len u32, data). */
    b8(&b, 0x03);
    ble(&b, 1, 4);
    ble(&b, 42, 4);
    bstr(&b, "hello", 4);
    frame_end(&b);
    /* "Stack Pool Frame": tag 04, count u32, entries (pool_id u32, frame_count u32, u64 frames). */
    b8(&b, 0x04);
    ble(&b, 1, 4);
    ble(&b, 5, 4);
    ble(&b, 2, 4);
    ble(&b, 0x401000, 8);
    ble(&b, 0x402000, 8);
    frame_end(&b);
    /* "Timestamp Reset Frame": tag 05 + u64; "Total: 9 bytes". */
    size_t before = b.n;
    b8(&b, 0x05);
    ble(&b, 1000000, 8);
    ck_assert_uint_eq(b.n - before, 9);
    frame_end(&b);
    /* "Event Frame" with timestamp: tag 02, type_id u16, u24 delta, values. */
    b8(&b, 0x02);
    ble(&b, 7, 2);
    ble(&b, 16, 3);
    b8(&b, 0xac); /* "LEB128": 300 = 0b10_0101100 -> ac 02 */
    b8(&b, 0x02);
    b8(&b, 0x01); /* "Optional Field Modifier": 0x01 present ... */
    ble(&b, 42, 4);
    b8(&b, 0x01);
    ble(&b, 5, 4);
    frame_end(&b);
    /* The largest delta, 16,777,215 ("u24"), from the advanced base. */
    b8(&b, 0x02);
    ble(&b, 7, 2);
    ble(&b, 0xffffff, 3);
    for (int i = 0; i < 9; i++) /* u64 max: "A u64 requires at most 10 bytes" */
        b8(&b, 0xff);
    b8(&b, 0x01);
    b8(&b, 0x00); /* ... 0x00 absent: no further bytes */
    b8(&b, 0x00);
    frame_end(&b);

    struct got g = {0};
    int rc;
    struct trc *t = parse(&b, b.n, collect, &g, &rc);
    ck_assert_msg(rc == 0, "%s at %zu", t->err, t->err_off);
    ck_assert_uint_eq(t->frames, 7);
    ck_assert_uint_eq(g.n, 2);
    ck_assert_uint_eq(g.type[0], 7);
    /* "Each event's absolute timestamp is computed as base + delta_ns" and
     * the base then advances to it. */
    ck_assert_uint_eq(g.ts[0], 1000016);
    ck_assert_uint_eq(g.ts[1], 1000016 + 16777215);
    ck_assert_uint_eq(g.v[0][0].u, 300);
    ck_assert_int_eq(g.v[0][1].present, 1);
    ck_assert_uint_eq(g.v[0][1].u, 42);
    ck_assert_uint_eq(g.v[0][2].u, 5);
    ck_assert_uint_eq(g.v[1][0].u, UINT64_MAX);
    ck_assert_int_eq(g.v[1][1].present, 0);
    ck_assert_int_eq(g.v[1][2].present, 0);
    size_t n;
    ck_assert_str_eq(trc_string(t, 42, &n), "hello");
    ck_assert_uint_eq(n, 5);
    ck_assert_ptr_null(trc_string(t, 43, NULL));
    const struct trc_schema *s = t->schemas[7];
    ck_assert_str_eq(s->name, "Ev");
    ck_assert_uint_eq(s->nann, 1);
    ck_assert_str_eq(s->ann[0].key, "unit");
    ck_assert_str_eq(s->ann[0].value, "ns");
    done(t);

    /* Every prefix that ends inside a frame is truncated input. */
    for (size_t len = 5; len < b.n; len++) {
        int boundary = 0;
        for (size_t i = 0; i < b.ncut; i++)
            boundary |= b.cut[i] == len;
        t = parse(&b, len, NULL, NULL, &rc);
        ck_assert_msg(boundary ? rc == 0 : rc == -1 && strstr(t->err, "truncated"),
                      "prefix of %zu bytes: rc %d (%s)", len, rc, t->err);
        done(t);
    }
}
END_TEST

/* Each field type's wire encoding ("Field Types" table and its sections). */
START_TEST(spec_field_types)
{
    struct bb b = {0};
    header(&b);
    static const struct { const char *name; uint8_t type; } f[] = {
        {"i", 1}, {"f", 2}, {"b", 3}, {"s", 4}, {"y", 5}, {"sf", 8}, {"m", 10}, {"u8", 11}, {"u16", 12},
        {"u32", 13}, {"l", 14}, {"d", 15}};
    b8(&b, 0x01);
    ble(&b, 3, 2);
    bstr(&b, "All", 2);
    b8(&b, 0); /* no timestamp: the event frame has no delta */
    ble(&b, 12, 2);
    for (int i = 0; i < 12; i++) {
        bstr(&b, f[i].name, 2);
        b8(&b, f[i].type);
    }
    b8(&b, 0x02);
    ble(&b, 3, 2);
    ble(&b, (uint64_t)-2, 8);         /* I64: 8-byte LE signed */
    ble(&b, 0x3ff8000000000000, 8);   /* F64 1.5 */
    b8(&b, 0x07);                     /* Bool: nonzero = true */
    bstr(&b, "str", 4);               /* String: u32 length + bytes */
    bstr(&b, "\x01\x02", 4);          /* Bytes */
    ble(&b, 1, 4);                    /* StackFrames: u32 count + u64 LE */
    ble(&b, 0xdeadbeef, 8);
    ble(&b, 1, 4);                    /* StringMap: count, (u32 len key, u32 len value) */
    bstr(&b, "k", 4);
    bstr(&b, "val", 4);
    b8(&b, 0xfe);                     /* U8 */
    ble(&b, 0xbeef, 2);               /* U16 */
    ble(&b, 0xcafef00d, 4);           /* U32 */
    ble(&b, 2, 4);                    /* DynamicList: count, (u8 tag + value)... */
    b8(&b, 9);
    b8(&b, 0x05);
    b8(&b, 0x0e);                     /* ... nested: "an element tag of 0x0E" */
    ble(&b, 1, 4);
    b8(&b, 11);
    b8(&b, 0x09);
    ble(&b, 1, 4);                    /* DynamicMap: count, (key tag, key, value tag, value) */
    b8(&b, 4);
    bstr(&b, "a", 4);
    b8(&b, 3);
    b8(&b, 1);

    struct got g = {0};
    int rc;
    struct trc *t = parse(&b, b.n, collect, &g, &rc);
    ck_assert_msg(rc == 0, "%s at %zu", t->err, t->err_off);
    ck_assert_uint_eq(g.n, 1);
    const struct trc_value *v = g.v[0];
    ck_assert_int_eq(v[0].i, -2);
    ck_assert(v[1].f == 1.5);
    ck_assert_uint_eq(v[2].u, 1);
    ck_assert_uint_eq(v[3].len, 3);
    ck_assert_int_eq(memcmp(v[3].p, "str", 3), 0);
    ck_assert_uint_eq(v[4].len, 2);
    ck_assert_uint_eq(v[5].u, 1);
    ck_assert_uint_eq(v[5].len, 8);
    const char *k, *val;
    size_t kl, vl;
    ck_assert_int_eq(trc_map_entry(&v[6], 0, &k, &kl, &val, &vl), 0);
    ck_assert_uint_eq(kl, 1);
    ck_assert_uint_eq(vl, 3);
    ck_assert_int_eq(memcmp(val, "val", 3), 0);
    ck_assert_int_eq(trc_map_entry(&v[6], 1, &k, &kl, &val, &vl), -1);
    ck_assert_uint_eq(v[7].u, 0xfe);
    ck_assert_uint_eq(v[8].u, 0xbeef);
    ck_assert_uint_eq(v[9].u, 0xcafef00d);
    ck_assert_uint_eq(v[10].u, 2);
    ck_assert_uint_eq(v[11].u, 1);
    ck_assert_uint_eq(t->frames, 2);
    done(t);
}
END_TEST

/* What the spec says a decoder must refuse. */
START_TEST(spec_rejects)
{
    struct bb b = {0};
    header(&b);
    b8(&b, 0x07); /* "Unknown tags must cause the decoder to stop" */
    expect_error(&b, b.n, "unknown frame tag 0x07");

    b = (struct bb){0};
    header(&b);
    b8(&b, 0x02); /* "If the schema is unknown, decoding must fail." */
    ble(&b, 9, 2);
    expect_error(&b, b.n, "before any schema");

    /* "A type_id must not be registered more than once ... with a different
     * schema"; the same schema again is accepted. */
    b = (struct bb){0};
    header(&b);
    for (int i = 0; i < 3; i++) {
        b8(&b, 0x01);
        ble(&b, 1, 2);
        bstr(&b, i < 2 ? "A" : "B", 2);
        b8(&b, 0);
        ble(&b, 0, 2);
        frame_end(&b);
    }
    int rc;
    struct trc *t = parse(&b, b.cut[2], NULL, NULL, &rc);
    ck_assert_int_eq(rc, 0);
    done(t);
    expect_error(&b, b.n, "different schema");

    /* A field type this reader does not know: "must reject the schema". */
    b = (struct bb){0};
    header(&b);
    schema_a(&b, "x", 0x10);
    expect_error(&b, b.n, "unknown type 0x10");
    b.b[b.n - 1] = 0x80; /* the optional bit alone has no inner type */
    expect_error(&b, b.n, "unknown type 0x80");

    /* Presence byte other than 0x00/0x01; LEB128 past 10 bytes. */
    b.b[b.n - 1] = 0x89;
    size_t schema_end = b.n;
    b8(&b, 0x02);
    ble(&b, 1, 2);
    b8(&b, 0x02);
    expect_error(&b, b.n, "presence byte 0x02");
    b.n = schema_end;
    b8(&b, 0x02);
    ble(&b, 1, 2);
    b8(&b, 0x01);
    for (int i = 0; i < 10; i++)
        b8(&b, 0x80);
    b8(&b, 0x00);
    expect_error(&b, b.n, "longer than 10 bytes");
    b.n = schema_end + 4;
    for (int i = 0; i < 9; i++)
        b8(&b, 0xff);
    b8(&b, 0x02); /* bit 64 */
    expect_error(&b, b.n, "overflows u64");

    /* "A reference to an undefined pool_id is a stream error" (stacks). */
    b = (struct bb){0};
    header(&b);
    schema_a(&b, "st", 6);
    b8(&b, 0x02);
    ble(&b, 1, 2);
    ble(&b, 77, 4);
    expect_error(&b, b.n, "id 77 is never defined");
    /* ... but it may be resolved lazily: defined after its use is fine. */
    b8(&b, 0x04);
    ble(&b, 1, 4);
    ble(&b, 77, 4);
    ble(&b, 0, 4);
    t = parse(&b, b.n, NULL, NULL, &rc);
    ck_assert_msg(rc == 0, "%s", t->err);
    done(t);
}
END_TEST

/* ---- round trip: the dial9 writer, driven as the walker drives it ---- */

#define MS 1000000ull

struct rt {
    struct trc *t;
    size_t n_park[4], n_unpark[4], n_wake[4], n_call[4], n_slow, n_drop, n_meta;
    uint64_t park_ts[8], unpark_ts[8];
    size_t npark, nunpark;
    uint64_t wake[4][4]; /* ts, waker, woken, target_worker */
    size_t nwake;
    uint16_t slow_type;
    char meta[1024];
};

static size_t slot(uint64_t tid)
{
    ck_assert(tid >= 101 && tid <= 103);
    return (size_t)(tid - 100);
}

static uint64_t fu(const struct trc_event *e, const char *name)
{
    const struct trc_value *v = trc_field(e, name);
    ck_assert_msg(v && v->present, "%s has no %s", e->schema->name, name);
    return v->u;
}

static const char *fs(const struct rt *r, const struct trc_event *e, const char *name)
{
    const char *s = trc_string(r->t, (uint32_t)fu(e, name), NULL);
    ck_assert_msg(s != NULL, "%s.%s: pool id not defined before use", e->schema->name, name);
    return s;
}

static int rt_event(void *ctx, const struct trc_event *e)
{
    struct rt *r = ctx;
    const char *name = e->schema->name;
    ck_assert(e->has_ts);
    if (!strcmp(name, "WorkerParkEvent")) {
        size_t i = slot(fu(e, "tid"));
        r->n_park[i]++;
        ck_assert_uint_eq(fu(e, "worker_id"), i - 1);
        r->park_ts[r->npark++] = e->ts;
    } else if (!strcmp(name, "WorkerUnparkEvent")) {
        size_t i = slot(fu(e, "tid"));
        r->n_unpark[i]++;
        ck_assert_uint_eq(fu(e, "worker_id"), i - 1);
        ck_assert_int_eq(trc_field(e, "sched_wait_ns")->present, 0);
        r->unpark_ts[r->nunpark++] = e->ts;
    } else if (!strcmp(name, "WakeEventEvent")) {
        r->n_wake[slot(fu(e, "waker_task_id"))]++;
        uint64_t *w = r->wake[r->nwake++];
        w[0] = e->ts;
        w[1] = fu(e, "waker_task_id");
        w[2] = fu(e, "woken_task_id");
        w[3] = fu(e, "target_worker");
    } else if (!strcmp(name, "ParkCallEvent")) {
        size_t i = slot(fu(e, "tid"));
        r->n_call[i]++;
        const char *call = fs(r, e, "call");
        const struct trc_value *res = trc_field(e, "result");
        if (i == 1) { /* 1000 -> 30 ms + 500: unparked with 1 */
            ck_assert_str_eq(call, "epoll_wait");
            ck_assert_uint_eq(fu(e, "duration_ns"), 30 * MS + 500 - 1000);
            ck_assert_int_eq(trc_field(e, "timeout_ns")->i, 5000 * MS);
            ck_assert_int_eq(res->present, 1);
            ck_assert_int_eq(res->i, 1);
        } else if (i == 3) { /* cut at the end: no result */
            ck_assert_str_eq(call, "nanosleep");
            ck_assert_int_eq(res->present, 0);
        } else {
            ck_assert_str_eq(call, "futex");
            ck_assert_int_eq(trc_field(e, "timeout_ns")->i, -1);
        }
    } else if (!strcmp(name, "SlowSyscallEvent")) {
        ck_assert(r->n_slow == 0 || r->slow_type == e->type_id); /* one schema for both */
        r->slow_type = e->type_id;
        ck_assert_uint_eq(fu(e, "tid"), 103);
        ck_assert_uint_eq(fu(e, "worker_id"), 2);
        ck_assert_str_eq(fs(r, e, "name"), r->n_slow ? "slow write" : "slow read");
        ck_assert_str_eq(fs(r, e, "fd_kind"), r->n_slow ? "pipe" : "socket");
        ck_assert_int_eq(trc_field(e, "fd")->i, r->n_slow ? 6 : 5);
        ck_assert_int_eq(trc_field(e, "duration_ns")->i, r->n_slow ? 1 : 2 * MS);
        r->n_slow++;
    } else if (!strcmp(name, "DropEvent")) {
        ck_assert_int_eq(trc_field(e, "count")->i, 3);
        r->n_drop++;
    } else if (!strcmp(name, "SegmentMetadataEvent")) {
        ck_assert_uint_eq(e->ts, 0);
        const struct trc_value *m = trc_field(e, "entries");
        const char *k, *v;
        size_t kl, vl, n = 0;
        for (uint64_t j = 0; trc_map_entry(m, j, &k, &kl, &v, &vl) == 0; j++)
            n += (size_t)snprintf(r->meta + n, sizeof(r->meta) - n, "%.*s=%.*s;", (int)kl, k, (int)vl, v);
        r->n_meta++;
    } else {
        ck_abort_msg("unexpected event %s", name);
    }
    return 0;
}

static struct d9_export_item it(uint32_t tid, uint64_t ts, const char *name)
{
    return (struct d9_export_item){.pid = 100, .tid = tid, .ts = ts, .name = name};
}

static void add(struct d9_export_item *x, const char *key, const char *str, int64_t v)
{
    x->args[x->nargs++] = (struct d9_export_arg){key, str, v};
}

static struct d9_export_item park(uint32_t tid, uint64_t ts, const char *call, int64_t timeout)
{
    struct d9_export_item x = it(tid, ts, call);
    x.park = 1;
    add(&x, "timeout_ns", NULL, timeout);
    return x;
}

START_TEST(round_trip)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    const struct d9_export_ops *ops;
    void *d = d9_dial9_new(f, &ops);
    ck_assert_ptr_nonnull(d);

    ops->process(d, 100, "svc");
    ops->thread(d, 100, 101, "worker-a");
    ops->thread(d, 100, 102, "worker-b");
    ops->thread(d, 100, 103, "");
    struct d9_export_item busy = it(101, 0, "busy"), x;
    ops->slice_begin(d, &busy); /* busy periods are not written */
    busy.end = 1000;
    ops->slice_end(d, &busy);
    struct d9_export_item p1 = park(101, 1000, "epoll_wait", 5000 * MS), p2 = park(102, 2000, "futex", -1);
    ops->slice_begin(d, &p1);
    ops->slice_begin(d, &p2);
    x = it(103, 30 * MS, "wake futex"); /* a gap past the u24 delta: a reset */
    add(&x, "wakee", NULL, 101);
    add(&x, "latency_ns", NULL, 500);
    ops->flow(d, &x, 1, 0);
    p1.end = 30 * MS + 500;
    p1.end_args = p1.nargs;
    add(&p1, "result", NULL, 1);
    struct d9_export_item wakee = it(101, 30 * MS + 500, "woken");
    ops->flow(d, &wakee, 1, 1); /* the wakee end: its unpark already says it */
    ops->slice_end(d, &p1);
    x = it(103, 30 * MS + 600, "slow read");
    add(&x, "fd", NULL, 5);
    add(&x, "fd_kind", "socket", 0);
    add(&x, "duration_ns", NULL, 2 * MS);
    ops->instant(d, &x);
    x = it(101, 30 * MS + 700, "drop");
    add(&x, "count", NULL, 3);
    ops->instant(d, &x);
    x = it(103, 30 * MS + 800, "slow write");
    add(&x, "fd", NULL, 6);
    add(&x, "fd_kind", "pipe", 0);
    add(&x, "duration_ns", NULL, 1);
    ops->instant(d, &x);
    x = it(101, 30 * MS + 1000, "wake futex");
    add(&x, "wakee", NULL, 102);
    add(&x, "latency_ns", NULL, 1000);
    ops->flow(d, &x, 2, 0);
    p2.end = 30 * MS + 2000;
    p2.end_args = p2.nargs;
    add(&p2, "result", NULL, 0);
    ops->slice_end(d, &p2);
    struct d9_export_item p3 = park(103, 40 * MS, "nanosleep", 1000), p4 = park(102, 35 * MS, "futex", -1);
    ops->slice_begin(d, &p3);
    ops->slice_begin(d, &p4); /* earlier than the last: a reset back */
    p3.end = p4.end = 50 * MS; /* open at the end: no UNPARK, no result */
    p3.end_args = p4.end_args = 1;
    ops->slice_end(d, &p3);
    ops->slice_end(d, &p4);
    ops->finish(d);
    ck_assert_int_eq(d9_dial9_free(d), 0);
    ck_assert_int_eq(fclose(f), 0);

    struct rt r = {0};
    r.t = malloc(sizeof(*r.t));
    ck_assert_ptr_nonnull(r.t);
    int rc = trc_parse(r.t, (const uint8_t *)mem, len, rt_event, &r);
    ck_assert_msg(rc == 0, "%s at byte %zu", r.t->err, r.t->err_off);
    /* per thread 101, 102, 103 */
    static const size_t parks[] = {0, 1, 2, 1}, unparks[] = {0, 1, 1, 0}, wakes[] = {0, 1, 0, 1};
    for (int i = 1; i <= 3; i++) {
        ck_assert_uint_eq(r.n_park[i], parks[i]);
        ck_assert_uint_eq(r.n_unpark[i], unparks[i]);
        ck_assert_uint_eq(r.n_wake[i], wakes[i]);
        ck_assert_uint_eq(r.n_call[i], parks[i]);
    }
    static const uint64_t park_ts[] = {1000, 2000, 40 * MS, 35 * MS}, unpark_ts[] = {30 * MS + 500, 30 * MS + 2000};
    ck_assert_uint_eq(r.npark, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(r.park_ts[i], park_ts[i]);
    ck_assert_uint_eq(r.nunpark, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_uint_eq(r.unpark_ts[i], unpark_ts[i]);
    static const uint64_t wake[2][4] = {{30 * MS, 103, 101, 2}, {30 * MS + 1000, 101, 102, 0}};
    ck_assert_uint_eq(r.nwake, 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            ck_assert_uint_eq(r.wake[i][j], wake[i][j]);
    ck_assert_uint_eq(r.n_slow, 2);
    ck_assert_uint_eq(r.n_drop, 1);
    ck_assert_uint_eq(r.n_meta, 1);
    ck_assert_msg(strstr(r.meta, "runtime.svc[100]=0,1,2;") && strstr(r.meta, "thread_name.101=worker-a;") &&
                      strstr(r.meta, "thread_name.103=;") && strstr(r.meta, "worker_id.102=1;"),
                  "metadata: %s", r.meta);
    /* The ParkCallEvent span roles the viewer reads, and the ns units. */
    const struct trc_schema *pc = NULL, *slow = r.t->schemas[r.slow_type];
    for (size_t i = 0; i < 65536 && !pc; i++)
        if (r.t->schemas[i] && !strcmp(r.t->schemas[i]->name, "ParkCallEvent"))
            pc = r.t->schemas[i];
    ck_assert_ptr_nonnull(pc);
    int dur_role = 0;
    for (size_t i = 0; i < pc->nann; i++)
        dur_role |= !strcmp(pc->f[pc->ann[i].field].name, "duration_ns") && !strcmp(pc->ann[i].key, "dial9.role") &&
                    !strcmp(pc->ann[i].value, "span.duration");
    ck_assert(dur_role);
    ck_assert_uint_eq(slow->nann, 1);
    ck_assert_str_eq(slow->f[slow->ann[0].field].name, "duration_ns");
    trc_free(r.t);
    free(r.t);
    free(mem);
}
END_TEST

D9_SUITE(trc)
{
    TCase *tc = tcase_create("spec");
    tcase_add_test(tc, spec_header);
    tcase_add_test(tc, spec_frames);
    tcase_add_test(tc, spec_field_types);
    tcase_add_test(tc, spec_rejects);
    suite_add_tcase(s, tc);
    tc = tcase_create("export");
    tcase_add_test(tc, round_trip);
    suite_add_tcase(s, tc);
    return s;
}
