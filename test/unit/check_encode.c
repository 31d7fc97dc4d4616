/* check_encode.c - agent/encode.c against an independent walker written
 * here from the format description (dial9_format.h, version 3: columnar
 * chunks, 'r' columns): every field of every event type round-trips, the chunk bytes
 * are the documented layout, long runs split into chunks, no-room leaves a
 * valid payload, blocks decompress with liblz4 and carry valid crcs,
 * headers have magic, length and crc. */
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>

#include "app_names.h"
#include "encode.h"
#include "unit.h"

/* ---- Local walker ------------------------------------------------------ */

struct decoded {
    uint32_t tid;
    uint64_t ts;
    uint8_t type;
    uint64_t f[D9_MAX_FIELDS]; /* integer fields, zigzag undone for 's' */
    char name[17];             /* the 'b' field */
};

static const char *kinds_of(uint8_t type)
{
    static const struct d9_schema_entry t[] = D9_SCHEMA_TABLE;
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++)
        if (t[i].type == type)
            return t[i].kinds;
    return NULL;
}

static uint64_t var(const uint8_t *p, size_t len, size_t *i)
{
    uint64_t v;
    size_t n = d9_get_varint(p + *i, len - *i, &v);
    ck_assert_uint_gt(n, 0);
    *i += n;
    return v;
}

/* An 'r' column's recent values, most recent first. */
struct recent {
    uint64_t v[D9_RECENT];
    unsigned n;
};

/* Reads one field of kind k into d (field f); rc is the column's list. */
static void field(const uint8_t *p, size_t len, size_t *i, char k, int f, struct decoded *d, struct recent *rc)
{
    uint64_t v = var(p, len, i);
    if (k == 'r') {
        unsigned at;
        if (v == 0) { /* a new value follows; the oldest of a full list goes */
            v = var(p, len, i);
            at = rc->n < D9_RECENT ? rc->n++ : D9_RECENT - 1;
        } else {
            ck_assert_uint_le(v, rc->n);
            at = (unsigned)v - 1;
            v = rc->v[at];
        }
        for (; at > 0; at--)
            rc->v[at] = rc->v[at - 1];
        rc->v[0] = v;
        d->f[f] = v;
    } else if (k == 'b') {
        ck_assert_uint_le(v, 16);
        ck_assert_uint_le(*i + v, len);
        memcpy(d->name, p + *i, v);
        *i += v;
    } else {
        d->f[f] = k == 's' ? (uint64_t)d9_unzigzag(v) : v;
    }
}

/* Walks a version 2 payload; returns the number of events, fills out[]
 * (up to max). Asserts the payload ends exactly after the end marker. */
static size_t walk(const uint8_t *p, size_t len, struct decoded *out, size_t max)
{
    size_t i = 0, total = 0;
    for (;;) {
        uint32_t tid = (uint32_t)var(p, len, &i);
        if (!tid)
            break;
        uint64_t ts = var(p, len, &i), n = var(p, len, &i);
        ck_assert_uint_gt(n, 0);
        ck_assert_uint_le(i + n, len);
        struct decoded *d = calloc(n, sizeof(*d));
        ck_assert_ptr_nonnull(d);
        for (size_t k = 0; k < n; k++) { /* types */
            d[k] = (struct decoded){.tid = tid, .type = p[i++]};
            ck_assert_ptr_nonnull(kinds_of(d[k].type));
        }
        for (size_t k = 0; k < n; k++) /* timestamp deltas */
            d[k].ts = ts += var(p, len, &i);
        for (unsigned t = 1; t < 256; t++) { /* per type present, ascending: its field columns */
            const char *kinds = kinds_of((uint8_t)t);
            for (int f = 0; kinds && kinds[f]; f++) {
                struct recent rc = {.n = 0};
                for (size_t k = 0; k < n; k++)
                    if (d[k].type == t)
                        field(p, len, &i, kinds[f], f, &d[k], &rc);
            }
        }
        for (size_t k = 0; k < n; k++)
            if (total + k < max)
                out[total + k] = d[k];
        total += n;
        free(d);
    }
    ck_assert_uint_eq(i, len);
    return total;
}

static struct d9_raw_event raw(uint64_t ts, uint8_t type, uint8_t call, uint64_t a, uint64_t b)
{
    return (struct d9_raw_event){.ts = ts, .type = type, .call = call, .a = a, .b = b};
}

static struct d9_raw_event name_ev(uint64_t ts, const char *name)
{
    struct d9_raw_event e = {.ts = ts, .type = D9_EV_THREAD_NAME, .len = (uint16_t)strlen(name)};
    memcpy(&e.a, name, strlen(name) < 8 ? strlen(name) : 8);
    if (strlen(name) > 8)
        memcpy(&e.b, name + 8, strlen(name) - 8);
    return e;
}

/* ---- Payloads ---------------------------------------------------------- */

START_TEST(every_type_round_trips)
{
    uint8_t buf[4096];
    struct d9_enc e;
    d9_enc_init(&e, buf, sizeof(buf));
    uint64_t t0 = 1700000000123456789ull;
    int app = d9_app_register("req.start"); /* the ring holds the id; the payload the name */
    ck_assert_int_ge(app, 1);
    struct d9_raw_event evs[] = {
        raw(t0, D9_EV_THREAD_START, 0, 4242, 0),
        name_ev(t0, "worker-fifteen!"), /* 15 bytes: the longest name */
        raw(t0 + 10, D9_EV_PARK, D9_CALL_EPOLL_WAIT, 7, (uint64_t)-1),
        raw(t0 + 1000010, D9_EV_UNPARK, D9_CALL_EPOLL_WAIT, 0, (uint64_t)-4), /* -EINTR */
        raw(t0 + 1000020, D9_EV_WAKE, D9_CALL_FUTEX, 0x7fff12345678ull, 1),
        raw(t0 + 1000030, D9_EV_DROP, 0, 99, 0),
        raw(t0 + 1000040, D9_EV_POLL_NOWAIT, D9_CALL_POLL, 4096, 0),
        raw(t0 + 1000050, D9_EV_EPOLL_CTL, 1, 5, 9),
        raw(t0 + 1000060, D9_EV_PARK, D9_CALL_NANOSLEEP, 0, 2500000000ll),
        raw(t0 + 3500060, D9_EV_UNPARK, D9_CALL_NANOSLEEP, 0, 0),
        {.ts = t0 + 3500061, .type = D9_EV_SLOW_SYSCALL, .call = D9_CALL_READ, .x = 12, .len = D9_FD_SOCKET, .b = 123456},
        {.ts = t0 + 3500062, .type = D9_EV_SLOW_SYSCALL, .call = D9_CALL_GETADDRINFO, .x = -1, .b = 9000000},
        raw(t0 + 3500063, D9_EV_LOCK_WAIT, D9_CALL_MUTEX_LOCK, 0x5555aaaa0000ull, 77000),
        raw(t0 + 3500064, D9_EV_SCHED_DELAY, D9_SCHED_SCHEDSTAT, 31000, 0),
        raw(t0 + 3500065, D9_EV_PREEMPT, 0, 420000, 0),
        raw(t0 + 3500066, D9_EV_APP, 0, (uint64_t)app, (uint64_t)-42),
        raw(t0 + 3500070, D9_EV_THREAD_EXIT, 0, 0, 0),
    };
    size_t nev = sizeof(evs) / sizeof(evs[0]);
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 777, t0), 0);
    for (size_t i = 0; i < nev; i++)
        ck_assert_int_eq(d9_enc_event(&e, &evs[i]), 0);
    /* A second chunk for another thread, based before its first event. */
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 1u << 30, t0 - 5), 0); /* ends the first */
    struct d9_raw_event w = raw(t0 + 1, D9_EV_WAKE, D9_CALL_COND_SIGNAL, 1, 0);
    ck_assert_int_eq(d9_enc_event(&e, &w), 0);
    size_t len = d9_enc_finish(&e);
    ck_assert_uint_eq(len, e.len);
    ck_assert_uint_eq(e.events, nev + 1);
    ck_assert_uint_eq(e.first_ts, t0);
    ck_assert_uint_eq(e.last_ts, t0 + 3500070);

    struct decoded d[32];
    ck_assert_uint_eq(walk(buf, len, d, 32), nev + 1);
    for (size_t i = 0; i < nev; i++) {
        ck_assert_uint_eq(d[i].tid, 777);
        ck_assert_uint_eq(d[i].type, evs[i].type);
        ck_assert_uint_eq(d[i].ts, evs[i].ts);
    }
    ck_assert_uint_eq(d[0].f[0], 4242);
    ck_assert_str_eq(d[1].name, "worker-fifteen!");
    ck_assert_uint_eq(d[2].f[0], D9_CALL_EPOLL_WAIT);
    ck_assert_uint_eq(d[2].f[1], 7);
    ck_assert_int_eq((int64_t)d[2].f[2], -1);
    ck_assert_uint_eq(d[3].f[0], D9_CALL_EPOLL_WAIT);
    ck_assert_int_eq((int64_t)d[3].f[1], -4);
    ck_assert_uint_eq(d[4].f[0], D9_CALL_FUTEX);
    ck_assert_uint_eq(d[4].f[1], 0x7fff12345678ull);
    ck_assert_uint_eq(d[4].f[2], 1);
    ck_assert_uint_eq(d[5].f[0], 99);
    ck_assert_uint_eq(d[6].f[0], D9_CALL_POLL);
    ck_assert_uint_eq(d[6].f[1], 4096);
    ck_assert_uint_eq(d[7].f[0], 1);
    ck_assert_uint_eq(d[7].f[1], 5);
    ck_assert_uint_eq(d[7].f[2], 9);
    ck_assert_int_eq((int64_t)d[8].f[2], 2500000000ll);
    ck_assert_int_eq((int64_t)d[9].f[1], 0);
    ck_assert_uint_eq(d[10].f[0], D9_CALL_READ);
    ck_assert_int_eq((int64_t)d[10].f[1], 12);
    ck_assert_uint_eq(d[10].f[2], D9_FD_SOCKET);
    ck_assert_uint_eq(d[10].f[3], 123456);
    ck_assert_uint_eq(d[11].f[0], D9_CALL_GETADDRINFO);
    ck_assert_int_eq((int64_t)d[11].f[1], -1);
    ck_assert_uint_eq(d[11].f[3], 9000000);
    ck_assert_uint_eq(d[12].f[0], D9_CALL_MUTEX_LOCK);
    ck_assert_uint_eq(d[12].f[1], 0x5555aaaa0000ull);
    ck_assert_uint_eq(d[12].f[2], 77000);
    ck_assert_uint_eq(d[13].f[0], 31000);
    ck_assert_uint_eq(d[13].f[1], D9_SCHED_SCHEDSTAT);
    ck_assert_uint_eq(d[14].f[0], 420000);
    ck_assert_str_eq(d[15].name, "req.start");
    ck_assert_int_eq((int64_t)d[15].f[1], -42);
    /* Every type of the vocabulary went through. */
    uint32_t seen = 0;
    for (size_t i = 0; i < nev; i++)
        seen |= 1u << d[i].type;
    ck_assert_uint_eq(seen, ((1u << D9_EV_TYPE_MAX) - 1) & ~1u);
    ck_assert_uint_eq(d[nev].tid, 1u << 30);
    ck_assert_uint_eq(d[nev].ts, t0 + 1);
    ck_assert_uint_eq(d[nev].f[0], D9_CALL_COND_SIGNAL);
}
END_TEST

/* The byte layout of docs/FORMAT.md, spelled out for a small chunk. */
START_TEST(chunk_layout_is_columnar)
{
    uint8_t buf[128];
    struct d9_enc e;
    d9_enc_init(&e, buf, sizeof(buf));
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 300, 1000), 0);
    struct d9_raw_event evs[] = {
        raw(1000, D9_EV_PARK, D9_CALL_FUTEX, 0x40, (uint64_t)-1),
        raw(1005, D9_EV_WAKE, D9_CALL_FUTEX, 0x50, 1),
        raw(1300, D9_EV_UNPARK, D9_CALL_FUTEX, 0, 0),
        raw(1302, D9_EV_PARK, D9_CALL_EPOLL_WAIT, 0x41, 7),
    };
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(d9_enc_event(&e, &evs[i]), 0);
    static const uint8_t want[] = {
        0xac, 0x02, 0xe8, 0x07, 4,              /* tid 300, base_ts 1000, 4 events */
        D9_EV_PARK, D9_EV_WAKE, D9_EV_UNPARK, D9_EV_PARK, /* types */
        0, 5, 0xa7, 0x02, 2,                     /* ts deltas: 0 5 295 2 */
        D9_CALL_FUTEX, D9_CALL_EPOLL_WAIT,       /* park: call */
        0, 0x40, 0, 0x41,                        /* park: target ('r': two new values) */
        1, 14,                                   /* park: timeout_ns, zigzag (-1, 7) */
        D9_CALL_FUTEX, 0,                        /* unpark: call, result */
        D9_CALL_FUTEX, 0, 0x50, 1,               /* wake: call, target (new), count */
        0,                                       /* block end */
    };
    ck_assert_uint_eq(d9_enc_finish(&e), sizeof(want));
    ck_assert_mem_eq(buf, want, sizeof(want));
}
END_TEST

/* A run longer than a chunk holds goes on in chunks of the same thread. */
START_TEST(long_run_splits_into_chunks)
{
    size_t cap = 64 << 10, nev = 3 * D9_ENC_CHUNK_MAX + 5;
    uint8_t *buf = malloc(cap);
    struct decoded *d = malloc(nev * sizeof(*d));
    static struct d9_enc e;
    d9_enc_init(&e, buf, cap);
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 42, 10), 0);
    for (size_t i = 0; i < nev; i++) {
        struct d9_raw_event ev = raw(10 + i * 3, i % 2 ? D9_EV_WAKE : D9_EV_DROP, D9_CALL_FUTEX, i, i % 5);
        ck_assert_int_eq(d9_enc_event(&e, &ev), 0);
    }
    ck_assert_uint_eq(walk(buf, d9_enc_finish(&e), d, nev), nev);
    for (size_t i = 0; i < nev; i++) {
        ck_assert_uint_eq(d[i].tid, 42);
        ck_assert_uint_eq(d[i].ts, 10 + i * 3);
        ck_assert_uint_eq(d[i].f[i % 2], i); /* wake: target (field 2); drop: count (field 1) */
    }
    free(d);
    free(buf);
}
END_TEST

/* The writer's way (agent/writer.c, put_next): a run of d9_enc_run_event,
 * and on a refusal the run ended, d9_enc_event, a new run. It must give
 * the payload, counts and refusals of d9_enc_event called for each event:
 * across chunk ends (D9_ENC_CHUNK_MAX), the room bound, a full payload,
 * unknown types, a name and ts going backwards. */
START_TEST(run_matches_event_by_event)
{
    size_t nev = 2 * D9_ENC_CHUNK_MAX + 77;
    struct d9_raw_event *evs = malloc(nev * sizeof(*evs));
    for (size_t i = 0; i < nev; i++) {
        uint64_t ts = 1000 + i * 37 - (i % 11 == 3 ? 500 : 0); /* now and then behind the one before */
        static const uint8_t types[] = {D9_EV_WAKE, D9_EV_PARK, D9_EV_UNPARK, D9_EV_POLL_NOWAIT, 0, D9_EV_TYPE_MAX + 3};
        evs[i] = raw(ts, types[i % 6], D9_CALL_FUTEX, (i % 7) << 12, i * 1000003);
        if (i == 500)
            evs[i] = name_ev(ts, "renamed");
    }
    static const size_t caps[] = {24, 100, 333, 1000, 4096, 20000, 256 << 10};
    static uint8_t one[256 << 10], runs[256 << 10];
    static struct d9_enc a, b;
    for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
        d9_enc_init(&a, one, caps[c]);
        d9_enc_init(&b, runs, caps[c]);
        ck_assert_int_eq(d9_enc_begin_chunk(&a, 9, 500), d9_enc_begin_chunk(&b, 9, 500));
        struct d9_enc_run r;
        d9_enc_run_begin(&b, &r);
        size_t refused = 0;
        for (size_t i = 0; i < nev; i++) {
            int want = d9_enc_event(&a, &evs[i]), got = 0;
            if (d9_enc_run_event(&b, &r, &evs[i]) != 0) {
                d9_enc_run_end(&b, &r);
                got = d9_enc_event(&b, &evs[i]);
                d9_enc_run_begin(&b, &r);
            }
            ck_assert_int_eq(got, want);
            refused += want != 0;
        }
        d9_enc_run_end(&b, &r);
        ck_assert_uint_eq(b.events, a.events);
        size_t la = d9_enc_finish(&a), lb = d9_enc_finish(&b);
        ck_assert_uint_eq(lb, la);
        ck_assert_int_eq(memcmp(runs, one, la), 0);
        if (caps[c] < 4096)
            ck_assert_uint_gt(refused, 0); /* the small payloads filled up */
        else if (caps[c] == 256 << 10)
            ck_assert_uint_eq(refused, 0);
    }
    free(evs);
}
END_TEST

START_TEST(backwards_ts_clamped)
{
    uint8_t buf[256];
    struct d9_enc e;
    d9_enc_init(&e, buf, sizeof(buf));
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 5, 1000), 0);
    struct d9_raw_event a = raw(2000, D9_EV_DROP, 0, 1, 0), b = raw(1500, D9_EV_DROP, 0, 2, 0),
                        c = raw(900, D9_EV_DROP, 0, 3, 0), f = raw(2100, D9_EV_DROP, 0, 4, 0);
    d9_enc_event(&e, &a);
    d9_enc_event(&e, &b);
    d9_enc_event(&e, &c);
    d9_enc_event(&e, &f);
    struct decoded d[4];
    ck_assert_uint_eq(walk(buf, d9_enc_finish(&e), d, 4), 4);
    ck_assert_uint_eq(d[0].ts, 2000);
    ck_assert_uint_eq(d[1].ts, 2000);
    ck_assert_uint_eq(d[2].ts, 2000);
    ck_assert_uint_eq(d[3].ts, 2100);
    ck_assert_uint_eq(d[3].f[0], 4);
}
END_TEST

START_TEST(no_room_keeps_payload_valid)
{
    for (size_t cap = 3; cap < 120; cap++) {
        uint8_t buf[128];
        struct d9_enc e;
        d9_enc_init(&e, buf, cap);
        size_t accepted = 0;
        if (d9_enc_begin_chunk(&e, 300, 1ull << 40) == 0) {
            for (uint64_t i = 0; i < 100; i++) {
                struct d9_raw_event ev = raw((1ull << 40) + i * 1000, D9_EV_PARK, D9_CALL_FUTEX, i << 20, i);
                if (d9_enc_event(&e, &ev) < 0)
                    break;
                accepted++;
            }
        }
        ck_assert_uint_lt(accepted, 100);
        size_t len = d9_enc_finish(&e);
        ck_assert_uint_le(len, cap);
        /* As full as exact sizes allow (the per-event bound must not cost
         * room): one more event, encoded with room to spare, would not fit. */
        uint8_t big[4096];
        struct d9_enc more;
        d9_enc_init(&more, big, sizeof(big));
        if (accepted && d9_enc_begin_chunk(&more, 300, 1ull << 40) == 0) {
            for (uint64_t i = 0; i <= accepted; i++) {
                struct d9_raw_event ev = raw((1ull << 40) + i * 1000, D9_EV_PARK, D9_CALL_FUTEX, i << 20, i);
                ck_assert_int_eq(d9_enc_event(&more, &ev), 0);
            }
            ck_assert_uint_gt(d9_enc_finish(&more), cap);
        }
        ck_assert_uint_eq(e.events, accepted);
        struct decoded d[100];
        ck_assert_uint_eq(walk(buf, len, d, 100), accepted);
        for (size_t i = 0; i < accepted; i++)
            ck_assert_uint_eq(d[i].f[1], (uint64_t)i << 20);
    }
}
END_TEST

START_TEST(event_without_chunk_refused)
{
    uint8_t buf[64];
    struct d9_enc e;
    d9_enc_init(&e, buf, sizeof(buf));
    struct d9_raw_event ev = raw(1, D9_EV_DROP, 0, 1, 0);
    ck_assert_int_eq(d9_enc_event(&e, &ev), -1);
    ck_assert_int_eq(d9_enc_begin_chunk(&e, 0, 1), -1); /* tid 0 would read as the end marker */
    ck_assert_uint_eq(d9_enc_finish(&e), 1);
    ck_assert_uint_eq(buf[0], 0);
}
END_TEST

/* ---- Blocks ------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

START_TEST(block_decompresses_with_valid_crcs)
{
    size_t cap = 256 << 10;
    uint8_t *buf = malloc(cap), *back = malloc(cap);
    struct d9_enc e;
    d9_enc_init(&e, buf, cap);
    uint64_t n = 0;
    for (uint32_t tid = 1; tid <= 8; tid++) {
        ck_assert_int_eq(d9_enc_begin_chunk(&e, tid, 5000), 0);
        for (uint64_t i = 0; i < 2000; i++, n++) {
            struct d9_raw_event ev = raw(5000 + i * 37, D9_EV_UNPARK, D9_CALL_EPOLL_WAIT, 0, i % 3);
            ck_assert_int_eq(d9_enc_event(&e, &ev), 0);
        }
    }
    size_t len = d9_enc_finish(&e);
    size_t bound = d9_block_bound(len);
    uint8_t *blk = malloc(bound);
    ck_assert_uint_eq(d9_block_build(&e, blk, D9_BLOCK_HEADER_SIZE + 10), 0); /* too small */
    size_t bl = d9_block_build(&e, blk, bound);
    ck_assert_uint_gt(bl, D9_BLOCK_HEADER_SIZE);
    ck_assert_uint_lt(bl, len / 2); /* repetitive events compress */
    ck_assert_uint_eq(le32(blk), D9_BLOCK_MAGIC);
    ck_assert_uint_eq(le32(blk + 4), bl - D9_BLOCK_HEADER_SIZE);
    ck_assert_uint_eq(le32(blk + 8), len);
    ck_assert_uint_eq(le32(blk + 12), d9_crc32c(0, blk + D9_BLOCK_HEADER_SIZE, bl - D9_BLOCK_HEADER_SIZE));
    ck_assert_uint_eq(le32(blk + 16), n);
    ck_assert_uint_eq(le32(blk + 20), d9_crc32c(d9_crc32c(0, blk, 20), blk + 24, 16));
    ck_assert_uint_eq(le64(blk + 24), 5000);
    ck_assert_uint_eq(le64(blk + 32), 5000 + 1999 * 37);

    LZ4F_dctx *dc;
    ck_assert(!LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)));
    size_t dst = cap, srcn = bl - D9_BLOCK_HEADER_SIZE;
    size_t r = LZ4F_decompress(dc, back, &dst, blk + D9_BLOCK_HEADER_SIZE, &srcn, NULL);
    ck_assert_uint_eq(r, 0); /* frame complete, content checksum verified */
    ck_assert_uint_eq(dst, len);
    ck_assert_mem_eq(back, buf, len);
    LZ4F_freeDecompressionContext(dc);
    free(blk);
    free(back);
    free(buf);
}
END_TEST

/* ---- Headers ----------------------------------------------------------- */

/* Finds TLV tag in the header's TLV area; returns its value or NULL. */
static const uint8_t *tlv(const uint8_t *h, size_t tlvs_len, uint16_t tag, uint32_t *len)
{
    const uint8_t *p = h + 16, *end = p + tlvs_len;
    while (p + 6 <= end) {
        uint16_t t = (uint16_t)(p[0] | p[1] << 8);
        uint32_t l = le32(p + 2);
        ck_assert(p + 6 + l <= end);
        if (t == tag) {
            *len = l;
            return p + 6;
        }
        p += 6 + l;
    }
    return NULL;
}

START_TEST(header_has_magic_tlvs_and_crc)
{
    static const char names[2][16] = {"main", "worker-1"};
    uint32_t tids[2] = {100, 101};
    const char cmd[] = "svc\0--port\0" "80";
    struct d9_header_info hi = {.pid = 100, .seq = 7, .exe = "/usr/bin/svc", .hostname = "host1",
                                .clock = "monotonic", .agent_version = "0.1.0", .cmdline = cmd,
                                .cmdline_len = sizeof(cmd), .anchor_real_ns = 1700000000000000000ull,
                                .anchor_mono_ns = 12345, .nthreads = 2, .tids = tids, .names = names};
    uint8_t h[1024];
    size_t n = d9_header_build(h, sizeof(h), &hi);
    ck_assert_uint_gt(n, 16);
    ck_assert_mem_eq(h, D9_SEG_MAGIC, D9_SEG_MAGIC_LEN);
    ck_assert_uint_eq(le32(h + 8), D9_FORMAT_VERSION);
    uint32_t hl = le32(h + 12);
    ck_assert_uint_eq(16 + hl, n);
    ck_assert_uint_eq(le32(h + n - 4), d9_crc32c(0, h + 16, hl - 4));

    uint32_t l;
    const uint8_t *v = tlv(h, hl - 4, D9_TLV_PID, &l);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(l, 4);
    ck_assert_uint_eq(le32(v), 100);
    v = tlv(h, hl - 4, D9_TLV_SEQ, &l);
    ck_assert_uint_eq(le32(v), 7);
    v = tlv(h, hl - 4, D9_TLV_CMDLINE, &l);
    ck_assert_uint_eq(l, sizeof(cmd));
    ck_assert_mem_eq(v, cmd, sizeof(cmd));
    v = tlv(h, hl - 4, D9_TLV_ANCHOR, &l);
    ck_assert_uint_eq(l, 16);
    ck_assert_uint_eq(le64(v), 1700000000000000000ull);
    ck_assert_uint_eq(le64(v + 8), 12345);
    v = tlv(h, hl - 4, D9_TLV_EXE, &l);
    ck_assert_uint_eq(l, strlen("/usr/bin/svc"));
    v = tlv(h, hl - 4, D9_TLV_THREADS, &l);
    ck_assert_uint_eq(l, (4 + 1 + 4) + (4 + 1 + 8));
    ck_assert_uint_eq(le32(v), 100);
    ck_assert_uint_eq(v[4], 4);
    ck_assert_mem_eq(v + 5, "main", 4);
    ck_assert_uint_eq(le32(v + 9), 101);
    ck_assert_mem_eq(v + 14, "worker-1", 8);
    v = tlv(h, hl - 4, D9_TLV_SCHEMA, &l); /* every entry, kinds as in the table */
    static const struct d9_schema_entry t[] = D9_SCHEMA_TABLE;
    size_t off = 0;
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        ck_assert_uint_eq(v[off], t[i].type);
        ck_assert_uint_eq(v[off + 1], strlen(t[i].kinds));
        ck_assert_mem_eq(v + off + 2, t[i].kinds, strlen(t[i].kinds));
        off += 2 + strlen(t[i].kinds);
    }
    ck_assert_uint_eq(off, l);

    ck_assert_uint_eq(d9_header_build(h, n - 1, &hi), 0); /* one byte short */
    ck_assert_uint_eq(d9_header_build(h, n, &hi), n);
    h[20] ^= 1; /* any change in the TLVs breaks the crc */
    ck_assert_uint_ne(le32(h + n - 4), d9_crc32c(0, h + 16, hl - 4));
}
END_TEST

D9_SUITE(encode)
{
    TCase *tc = tcase_create("encode");
    tcase_add_test(tc, every_type_round_trips);
    tcase_add_test(tc, chunk_layout_is_columnar);
    tcase_add_test(tc, long_run_splits_into_chunks);
    tcase_add_test(tc, run_matches_event_by_event);
    tcase_add_test(tc, backwards_ts_clamped);
    tcase_add_test(tc, no_room_keeps_payload_valid);
    tcase_add_test(tc, event_without_chunk_refused);
    tcase_add_test(tc, block_decompresses_with_valid_crcs);
    tcase_add_test(tc, header_has_magic_tlvs_and_crc);
    suite_add_tcase(s, tc);
    return s;
}
