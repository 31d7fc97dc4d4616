/* check_reader.c - the decoder's segment reader against segments built in
 * memory with the agent's encoder: round trip, damage, truncation, garbage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "analysis.h"
#include "encode.h"
#include "json.h"
#include "model.h"
#include "reader.h"
#include "unit.h"

#define SEG_CAP (1 << 20)

/* A segment under construction, with the offset of every block. */
struct seg {
    uint8_t *buf;
    size_t len;
    size_t block_off[16];
    int nblocks;
};

static void seg_header(struct seg *s)
{
    static const uint32_t tids[2] = {101, 102};
    static const char names[2][16] = {"main", "pool-1"};
    static const char cmdline[] = "svc\0--port\0" "8080";
    struct d9_header_info h = {
        .pid = 4242, .seq = 3, .exe = "/usr/bin/svc", .hostname = "host", .clock = "monotonic",
        .agent_version = "test", .cmdline = cmdline, .cmdline_len = sizeof(cmdline),
        .anchor_real_ns = 1700000000000000000ull, .anchor_mono_ns = 1000, .nthreads = 2,
        .tids = tids, .names = names};
    s->buf = malloc(SEG_CAP);
    ck_assert_ptr_nonnull(s->buf);
    s->len = d9_header_build(s->buf, SEG_CAP, &h);
    ck_assert_uint_gt(s->len, 16);
    s->nblocks = 0;
}

/* A finished payload in raw[0..4096) holding evs (one chunk for tid). */
static void encode_payload(struct d9_enc *e, uint8_t raw[4096], uint32_t tid, const struct d9_raw_event *evs,
                           size_t n)
{
    d9_enc_init(e, raw, 4096);
    ck_assert_int_eq(d9_enc_begin_chunk(e, tid, evs[0].ts), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(d9_enc_event(e, &evs[i]), 0);
    d9_enc_finish(e);
}

/* Appends a block holding evs (one chunk for tid). */
static void seg_block(struct seg *s, uint32_t tid, const struct d9_raw_event *evs, size_t n)
{
    static uint8_t raw[4096];
    struct d9_enc e;
    encode_payload(&e, raw, tid, evs, n);
    s->block_off[s->nblocks++] = s->len;
    size_t b = d9_block_build(&e, s->buf + s->len, SEG_CAP - s->len);
    ck_assert_uint_gt(b, 0);
    s->len += b;
}

/* 10 park/unpark pairs (20 events) starting at ts. */
static void simple_events(struct d9_raw_event ev[20], uint64_t ts)
{
    for (int i = 0; i < 20; i++)
        ev[i] = (struct d9_raw_event){.ts = ts + (uint64_t)i * 100, .type = i % 2 ? D9_EV_UNPARK : D9_EV_PARK,
                                      .call = D9_CALL_EPOLL_WAIT, .a = 5, .b = i % 2 ? 1 : (uint64_t)-1};
}

/* A block of simple_events starting at ts. */
static void seg_simple_block(struct seg *s, uint64_t ts)
{
    struct d9_raw_event ev[20];
    simple_events(ev, ts);
    seg_block(s, 101, ev, 20);
}

static struct seg build(int nblocks)
{
    struct seg s;
    seg_header(&s);
    for (int i = 0; i < nblocks; i++)
        seg_simple_block(&s, 10000 + (uint64_t)i * 10000);
    return s;
}

/* Collects delivered events. */
struct sink {
    struct d9_event ev[256];
    size_t n;
};

static int collect(void *ctx, const struct d9_event *ev)
{
    struct sink *k = ctx;
    if (k->n < 256)
        k->ev[k->n++] = *ev;
    return 0;
}

/* Decoding into a d9_sink (the stream's way), block by block. */
struct into {
    struct d9_seg *seg;
    struct d9_inflater *z;
    struct d9_sink out;
};

/* A chunk said not to go back is in ts order (the merge's runs rely on it). */
static int chunk_seen(void *ctx, size_t from, int back)
{
    struct into *t = ctx;
    ck_assert_uint_lt(from, t->out.n);
    for (size_t i = from + 1; !back && i < t->out.n; i++)
        ck_assert_uint_ge(t->out.ev[i].ts, t->out.ev[i - 1].ts);
    return 0;
}

static int decode_into(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct into *t = ctx;
    return d9_decode_block_into(t->seg, t->z, b, payload, &t->out);
}

static void same_event(const struct d9_event *a, const struct d9_event *b)
{
    ck_assert_uint_eq(a->ts, b->ts);
    ck_assert_uint_eq(a->pid, b->pid);
    ck_assert_uint_eq(a->tid, b->tid);
    ck_assert_uint_eq(a->type, b->type);
    ck_assert_uint_eq(a->nfields, b->nfields);
    ck_assert_mem_eq(a->kinds, b->kinds, a->nfields);
    ck_assert_mem_eq(a->f, b->f, sizeof(a->f));
    ck_assert_uint_eq(a->name_len, b->name_len);
    ck_assert_mem_eq(a->name, b->name, a->name_len);
}

/* The segment decoded into a sink: the same outcome, problems and events
 * (k: those delivered one by one; NULL when only counted). */
static void same_into(const uint8_t *buf, size_t len, const struct d9_seg *want, const struct sink *k)
{
    struct d9_seg seg;
    struct into t = {&seg, d9_inflater_new(), {.chunk = chunk_seen}};
    t.out.ctx = &t;
    ck_assert_ptr_nonnull(t.z);
    ck_assert_int_eq(d9_scan_segment(buf, len, &seg, decode_into, &t), 0);
    ck_assert_int_eq(seg.status, want->status);
    ck_assert_uint_eq(seg.blocks, want->blocks);
    ck_assert_uint_eq(seg.events, want->events);
    ck_assert_uint_eq(t.out.n, want->events);
    ck_assert_uint_eq(seg.nproblems, want->nproblems);
    for (uint32_t i = 0; i < seg.nproblems && i < D9_MAX_PROBLEMS; i++)
        ck_assert_str_eq(seg.problems[i].reason, want->problems[i].reason);
    size_t names = 0;
    for (size_t i = 0; i < t.out.n; i++)
        names += t.out.ev[i].type == D9_EV_THREAD_NAME;
    ck_assert_uint_eq(t.out.names, names);
    for (size_t i = 0; k && i < k->n; i++)
        same_event(&t.out.ev[i], &k->ev[i]);
    free(t.out.ev);
    d9_inflater_free(t.z);
    d9_seg_free(&seg);
}

/* Reads an exact-size copy, so ASan sees any read past the end; and checks
 * that decoding into a sink gives the same. */
static int read_copy(const uint8_t *buf, size_t len, struct d9_seg *out, struct sink *k)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    if (k)
        k->n = 0;
    int rc = d9_read_segment(copy, len, out, k ? collect : NULL, k);
    if (rc == 0 && out->status != D9_SEG_INVALID)
        same_into(copy, len, out, k);
    free(copy);
    return rc;
}

START_TEST(round_trip)
{
    struct seg s;
    seg_header(&s);
    struct d9_raw_event ev[] = {
        {.ts = 5000, .type = D9_EV_THREAD_START, .a = 100},
        {.ts = 5001, .type = D9_EV_THREAD_NAME, .len = 15},
        {.ts = 5002, .type = D9_EV_PARK, .call = D9_CALL_FUTEX, .a = 0xfffffffff1234567ull, .b = (uint64_t)-1},
        {.ts = 6000, .type = D9_EV_UNPARK, .call = D9_CALL_FUTEX, .b = (uint64_t)-110},
        {.ts = 6001, .type = D9_EV_WAKE, .call = D9_CALL_COND_BROADCAST, .a = 0x7fff00001000ull, .b = UINT64_MAX},
        {.ts = 6002, .type = D9_EV_DROP, .a = 77},
        {.ts = 6003, .type = D9_EV_POLL_NOWAIT, .call = D9_CALL_PPOLL, .a = 9},
        {.ts = 6004, .type = D9_EV_EPOLL_CTL, .call = 1, .a = 4, .b = 6},
        {.ts = 6004, .type = D9_EV_PARK, .call = D9_CALL_SEM_WAIT, .a = 1, .b = 123456789012ull},
        {.ts = 9000000000ull, .type = D9_EV_THREAD_EXIT},
    };
    memcpy(&ev[1].a, "a-long-thread-n", 15); /* 15 bytes across a and b */
    seg_block(&s, 102, ev, sizeof(ev) / sizeof(ev[0]));

    struct d9_seg seg;
    static struct sink k;
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, &k), 0);
    ck_assert_int_eq(seg.status, D9_SEG_OK);
    ck_assert_uint_eq(seg.blocks, 1);
    ck_assert_uint_eq(seg.events, 10);
    ck_assert_uint_eq(seg.pid, 4242);
    ck_assert_uint_eq(seg.seq, 3);
    ck_assert_str_eq(seg.exe, "/usr/bin/svc");
    ck_assert_str_eq(seg.hostname, "host");
    ck_assert_str_eq(seg.agent_version, "test");
    ck_assert_uint_eq(seg.cmdline_len, 16);
    ck_assert_mem_eq(seg.cmdline, "svc\0--port\0" "8080", 16);
    ck_assert_uint_eq(seg.anchor_mono_ns, 1000);
    ck_assert_uint_eq(seg.anchor_real_ns, 1700000000000000000ull);
    ck_assert_uint_eq(seg.nthreads, 2);
    ck_assert_uint_eq(seg.threads[1].tid, 102);
    ck_assert_str_eq(seg.threads[1].name, "pool-1");

    ck_assert_uint_eq(k.n, 10);
    for (size_t i = 0; i < k.n; i++) {
        ck_assert_uint_eq(k.ev[i].ts, ev[i].ts);
        ck_assert_uint_eq(k.ev[i].type, ev[i].type);
        ck_assert_uint_eq(k.ev[i].pid, 4242);
        ck_assert_uint_eq(k.ev[i].tid, 102);
    }
    ck_assert_uint_eq(k.ev[0].f[0], 100);
    ck_assert_uint_eq(k.ev[1].name_len, 15);
    ck_assert_mem_eq(k.ev[1].name, "a-long-thread-n", 15);
    ck_assert_int_eq(k.ev[2].kinds[2], 's');
    ck_assert_uint_eq(k.ev[2].f[0], D9_CALL_FUTEX);
    ck_assert_uint_eq(k.ev[2].f[1], 0xfffffffff1234567ull);
    ck_assert_int_eq((int64_t)k.ev[2].f[2], -1);
    ck_assert_int_eq((int64_t)k.ev[3].f[1], -110);
    ck_assert_uint_eq(k.ev[4].f[0], D9_CALL_COND_BROADCAST);
    ck_assert_uint_eq(k.ev[4].f[1], 0x7fff00001000ull);
    ck_assert_uint_eq(k.ev[4].f[2], UINT64_MAX);
    ck_assert_uint_eq(k.ev[5].f[0], 77);
    ck_assert_uint_eq(k.ev[6].f[0], D9_CALL_PPOLL);
    ck_assert_uint_eq(k.ev[6].f[1], 9);
    ck_assert_uint_eq(k.ev[7].f[0], 1);
    ck_assert_uint_eq(k.ev[7].f[1], 4);
    ck_assert_uint_eq(k.ev[7].f[2], 6);
    ck_assert_int_eq((int64_t)k.ev[8].f[2], 123456789012ll);
    ck_assert_uint_eq(k.ev[9].nfields, 0);
    d9_seg_free(&seg);
    free(s.buf);
}
END_TEST

START_TEST(damaged_payload_resyncs)
{
    struct seg s = build(5);
    s.buf[s.block_off[2] + D9_BLOCK_HEADER_SIZE + 10] ^= 0x40;
    struct d9_seg seg;
    static struct sink k;
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, &k), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(seg.blocks, 4);
    ck_assert_uint_eq(seg.events, 80);
    ck_assert_uint_eq(k.n, 80);
    ck_assert_uint_eq(seg.nproblems, 1);
    ck_assert_uint_eq(seg.problems[0].block, 2);
    ck_assert_uint_eq(seg.problems[0].offset, s.block_off[2]);
    ck_assert_str_eq(seg.problems[0].reason, "payload crc mismatch");
    ck_assert_uint_eq(seg.skipped, s.block_off[3] - s.block_off[2]);
    /* block 3's events follow block 1's: nothing of block 2 leaked in */
    ck_assert_uint_eq(k.ev[40].ts, 40000);
    d9_seg_free(&seg);
    free(s.buf);
}
END_TEST

/* The writer's LZ4 frames carry no content checksum (the block's CRC-32C is
 * the check); agents before 2026-11-28 wrote one. A block of either kind
 * decodes to the same events. */
START_TEST(frame_content_checksum_either_way)
{
    struct seg now = build(1);
    const uint8_t *hdr = now.buf + now.block_off[0];
    ck_assert_uint_eq(hdr[D9_BLOCK_HEADER_SIZE + 4] & 0x04, 0); /* the frame's FLG byte: no content checksum */

    /* The same block as an older agent wrote it. */
    struct d9_raw_event ev[20];
    simple_events(ev, 10000);
    static uint8_t raw[4096];
    struct d9_enc e;
    encode_payload(&e, raw, 101, ev, 20);
    size_t raw_len = e.len;
    struct seg old;
    seg_header(&old);
    uint8_t *blk = old.buf + old.len;
    LZ4F_preferences_t p = {.frameInfo = {.contentChecksumFlag = LZ4F_contentChecksumEnabled, .contentSize = raw_len}};
    size_t z = LZ4F_compressFrame(blk + D9_BLOCK_HEADER_SIZE, SEG_CAP - old.len - D9_BLOCK_HEADER_SIZE, raw, raw_len, &p);
    ck_assert(!LZ4F_isError(z));
    ck_assert_uint_eq(blk[D9_BLOCK_HEADER_SIZE + 4] & 0x04, 0x04);
    d9_block_seal(&e, blk, z);
    old.len += D9_BLOCK_HEADER_SIZE + z;

    struct d9_seg a, b;
    static struct sink ka, kb;
    ck_assert_int_eq(read_copy(now.buf, now.len, &a, &ka), 0);
    ck_assert_int_eq(read_copy(old.buf, old.len, &b, &kb), 0);
    ck_assert_int_eq(b.status, D9_SEG_OK);
    ck_assert_int_eq(a.status, D9_SEG_OK);
    ck_assert_uint_eq(kb.n, 20);
    ck_assert_uint_eq(ka.n, 20);
    for (size_t i = 0; i < 20; i++)
        same_event(&kb.ev[i], &ka.ev[i]);
    d9_seg_free(&a);
    d9_seg_free(&b);
    free(now.buf);
    free(old.buf);
}
END_TEST

START_TEST(damaged_block_header)
{
    struct seg s = build(5);
    s.buf[s.block_off[1] + 16] ^= 1; /* the events count */
    struct d9_seg seg;
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(seg.blocks, 4);
    ck_assert_uint_eq(seg.events, 80);
    ck_assert_uint_eq(seg.problems[0].block, 1);
    ck_assert_str_eq(seg.problems[0].reason, "block header crc mismatch");
    d9_seg_free(&seg);

    free(s.buf);
    s = build(5);
    s.buf[s.block_off[4]] ^= 0xff; /* the magic of the last block */
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(seg.blocks, 4);
    ck_assert_uint_eq(seg.problems[0].block, 4);
    ck_assert_uint_eq(seg.skipped, s.len - s.block_off[4]);
    d9_seg_free(&seg);

    free(s.buf);
    s = build(2);
    s.buf[20] ^= 1; /* inside the TLVs: header crc */
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(seg.problems[0].block, D9_PROBLEM_HEADER);
    ck_assert_uint_eq(seg.blocks, 2); /* blocks still decode */
    d9_seg_free(&seg);
    free(s.buf);
}
END_TEST

START_TEST(truncated_everywhere)
{
    struct seg s = build(3);
    for (size_t cut = 0; cut <= s.len; cut++) {
        struct d9_seg seg;
        ck_assert_int_eq(read_copy(s.buf, cut, &seg, NULL), 0);
        uint32_t complete = 0;
        int boundary = cut == s.block_off[0];
        for (int b = 0; b < 3; b++) {
            size_t end = b + 1 < 3 ? s.block_off[b + 1] : s.len;
            complete += end <= cut;
            boundary |= end == cut;
        }
        ck_assert_uint_eq(seg.blocks, complete);
        ck_assert_uint_eq(seg.events, complete * 20u);
        if (cut < D9_SEG_MAGIC_LEN)
            ck_assert_int_eq(seg.status, D9_SEG_INVALID);
        else if (boundary)
            ck_assert_int_eq(seg.status, D9_SEG_OK);
        else
            ck_assert_msg(seg.status == D9_SEG_TRUNCATED, "cut %zu: status %d", cut, seg.status);
        d9_seg_free(&seg);
    }
    free(s.buf);
}
END_TEST

START_TEST(garbage_and_empty)
{
    struct d9_seg seg;
    ck_assert_int_eq(read_copy((const uint8_t *)"", 0, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_INVALID);
    ck_assert_str_eq(seg.error, "empty file");
    d9_seg_free(&seg);

    const char text[] = "this is a text file, not a segment\n";
    ck_assert_int_eq(read_copy((const uint8_t *)text, sizeof(text) - 1, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_INVALID);
    ck_assert_str_eq(seg.error, "not a dial9 segment (bad magic)");
    d9_seg_free(&seg);

    /* A valid header followed by noise: damaged, nothing decoded, all skipped. */
    struct seg s = build(0);
    srand(7);
    for (int i = 0; i < 5000; i++)
        s.buf[s.len++] = (uint8_t)rand();
    ck_assert_int_eq(read_copy(s.buf, s.len, &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(seg.blocks, 0);
    ck_assert_uint_eq(seg.skipped, 5000);
    d9_seg_free(&seg);
    free(s.buf);

    /* Random byte flips anywhere: never a crash, never more than what was written. */
    s = build(3);
    uint8_t *copy = malloc(s.len);
    for (int i = 0; i < 3000; i++) {
        memcpy(copy, s.buf, s.len);
        for (int f = 0; f <= i % 4; f++)
            copy[(size_t)rand() % s.len] ^= (uint8_t)(1 + rand() % 255);
        ck_assert_int_eq(read_copy(copy, s.len - (size_t)(i % 7), &seg, NULL), 0);
        ck_assert_uint_le(seg.blocks, 3);
        d9_seg_free(&seg);
    }
    free(copy);
    free(s.buf);
}
END_TEST

/* Hand-made payloads: a park, an event of type 20 (kinds ub, described by
 * the segment's schema; with no_entry type 21, which it does not describe),
 * an unpark; ts 1000, 1007, 1012. Return their length. */
static size_t payload_v1(uint8_t *raw, int no_entry)
{
    size_t r = 0;
    r += d9_put_varint(raw + r, 9);    /* tid */
    r += d9_put_varint(raw + r, 1000); /* base ts */
    raw[r++] = D9_EV_PARK, raw[r++] = 0, raw[r++] = D9_CALL_POLL, raw[r++] = 3, raw[r++] = 1;
    raw[r++] = no_entry ? 21 : 20, raw[r++] = 7;
    r += d9_put_varint(raw + r, 300); /* u field, 2 bytes */
    raw[r++] = 3, raw[r++] = 'x', raw[r++] = 'y', raw[r++] = 'z';
    raw[r++] = D9_EV_UNPARK, raw[r++] = 5, raw[r++] = D9_CALL_POLL, raw[r++] = 2;
    raw[r++] = 0; /* chunk end */
    raw[r++] = 0; /* block end */
    return r;
}

/* Version 2 (or 3: the park's target is an 'r' value, a new one). */
static size_t payload_v2(uint8_t *raw, int no_entry, uint32_t version)
{
    size_t r = 0;
    r += d9_put_varint(raw + r, 9);    /* tid */
    r += d9_put_varint(raw + r, 1000); /* base ts */
    raw[r++] = 3;                      /* events */
    raw[r++] = D9_EV_PARK, raw[r++] = no_entry ? 21 : 20, raw[r++] = D9_EV_UNPARK;
    raw[r++] = 0, raw[r++] = 7, raw[r++] = 5;         /* ts deltas */
    raw[r++] = D9_CALL_POLL;                             /* park: call, */
    if (version >= 3)
        raw[r++] = 0;                                    /* (a new 'r' value:) */
    raw[r++] = 3, raw[r++] = 1;                          /* target, timeout -1 */
    raw[r++] = D9_CALL_POLL, raw[r++] = 2;               /* unpark: call, result 1 */
    r += d9_put_varint(raw + r, 300);                    /* type 20: u field, 2 bytes */
    raw[r++] = 3, raw[r++] = 'x', raw[r++] = 'y', raw[r++] = 'z'; /* and its b field */
    raw[r++] = 0; /* block end */
    return r;
}

/* A hand-made segment of the given version: the built-in schema plus
 * type 20 (kinds ub), then one block of raw[0..rlen) said to hold events. */
static size_t handmade_block(uint8_t *out, size_t cap, uint32_t version, uint8_t *raw, size_t rlen, uint32_t events)
{
    uint8_t tlv[256];
    size_t n = 0;
    uint32_t pid = 77;
    tlv[n++] = D9_TLV_PID, tlv[n++] = 0;
    tlv[n++] = 4, tlv[n++] = 0, tlv[n++] = 0, tlv[n++] = 0;
    memcpy(tlv + n, &pid, 4), n += 4;
    static const struct d9_schema_entry table[] = D9_SCHEMA_TABLE;
    size_t len_at = n + 2;
    tlv[n++] = D9_TLV_SCHEMA, tlv[n++] = 0, n += 4;
    size_t start = n;
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        tlv[n++] = table[i].type;
        tlv[n++] = (uint8_t)strlen(table[i].kinds);
        memcpy(tlv + n, table[i].kinds, strlen(table[i].kinds)), n += strlen(table[i].kinds);
    }
    tlv[n++] = 20, tlv[n++] = 2, tlv[n++] = 'u', tlv[n++] = 'b';
    uint32_t l = (uint32_t)(n - start);
    memcpy(tlv + len_at, &l, 4);
    uint32_t crc = d9_crc32c(0, tlv, n);
    memcpy(tlv + n, &crc, 4), n += 4;

    size_t o = 0;
    memcpy(out, D9_SEG_MAGIC, 8), o += 8;
    uint32_t hl = (uint32_t)n;
    memcpy(out + o, &version, 4), o += 4;
    memcpy(out + o, &hl, 4), o += 4;
    memcpy(out + o, tlv, n), o += n;

    struct d9_enc e = {.buf = raw, .cap = rlen, .len = rlen, .events = events, .first_ts = 1000, .last_ts = 1012};
    size_t b = d9_block_build(&e, out + o, cap - o);
    ck_assert_uint_gt(b, 0);
    return o + b;
}

static size_t handmade_seg(uint8_t *out, size_t cap, uint32_t version, uint8_t *raw, size_t rlen)
{
    return handmade_block(out, cap, version, raw, rlen, 3);
}

static size_t handmade(uint8_t *out, size_t cap, uint32_t version, int no_entry)
{
    uint8_t raw[64];
    size_t r = version == 1 ? payload_v1(raw, no_entry) : payload_v2(raw, no_entry, version);
    return handmade_seg(out, cap, version, raw, r);
}

/* A version 3 chunk of 3 parks on futex, their targets an 'r' column:
 * codes (code, value...) as given; the other columns plain. */
static size_t recent_seg(uint8_t *buf, size_t cap, size_t n, const uint8_t *codes, size_t ncodes)
{
    uint8_t raw[512];
    size_t r = 0;
    ck_assert_uint_lt(n, 128);
    ck_assert_uint_le(4 * n + ncodes + 4, sizeof(raw));
    raw[r++] = 9, raw[r++] = 0, raw[r++] = (uint8_t)n; /* tid 9, base_ts 0, n events */
    memset(raw + r, D9_EV_PARK, n), r += n;
    memset(raw + r, 1, n), r += n;             /* ts deltas */
    memset(raw + r, D9_CALL_FUTEX, n), r += n; /* calls */
    memcpy(raw + r, codes, ncodes), r += ncodes; /* targets */
    memset(raw + r, 1, n), r += n;             /* timeouts -1 */
    raw[r++] = 0;
    return handmade_block(buf, cap, 3, raw, r, (uint32_t)n);
}

/* Kind 'r': 0 + value is a new value, n the n-th most recent one. */
START_TEST(recent_values_decode)
{
    static uint8_t buf[4096];
    struct d9_seg seg;
    static struct sink k;
    static const uint8_t ok[] = {0, 0x80, 0x01, 0, 5, 2}; /* 128, 5, then the 2nd most recent: 128 */
    ck_assert_int_eq(read_copy(buf, recent_seg(buf, sizeof(buf), 3, ok, sizeof(ok)), &seg, &k), 0);
    ck_assert_int_eq(seg.status, D9_SEG_OK);
    ck_assert_uint_eq(k.n, 3);
    ck_assert_uint_eq(k.ev[0].f[1], 128);
    ck_assert_uint_eq(k.ev[1].f[1], 5);
    ck_assert_uint_eq(k.ev[2].f[1], 128);
    ck_assert_int_eq(k.ev[2].kinds[1], 'u'); /* consumers see an unsigned value */
    d9_seg_free(&seg);
    static const uint8_t bad_code[] = {0, 7, 1, 2}; /* 7, 7, then a 2nd recent value that is not there */
    ck_assert_int_eq(read_copy(buf, recent_seg(buf, sizeof(buf), 3, bad_code, sizeof(bad_code)), &seg, &k), 0);
    ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
    ck_assert_uint_eq(k.n, 0); /* a bad column: nothing of the chunk */
    ck_assert_ptr_nonnull(strstr(seg.problems[0].reason, "column of type"));
    d9_seg_free(&seg);
    /* Long runs (read eight at a time): the front value repeated, broken
     * by a code 2 mid-run; one-byte deltas, calls and timeouts. */
    static uint8_t runs[40];
    size_t nc = 0;
    runs[nc++] = 0, runs[nc++] = 0x80, runs[nc++] = 0x01; /* 128 */
    runs[nc++] = 0, runs[nc++] = 5;                        /* 5 */
    for (int i = 0; i < 9; i++)
        runs[nc++] = 1;                                    /* 5 nine times */
    runs[nc++] = 2;                                        /* 128 */
    for (int i = 0; i < 17; i++)
        runs[nc++] = 1;                                    /* 128 seventeen times */
    ck_assert_int_eq(read_copy(buf, recent_seg(buf, sizeof(buf), 29, runs, nc), &seg, &k), 0);
    ck_assert_int_eq(seg.status, D9_SEG_OK);
    ck_assert_uint_eq(k.n, 29);
    for (size_t i = 0; i < 29; i++) {
        ck_assert_uint_eq(k.ev[i].ts, i + 1);
        ck_assert_uint_eq(k.ev[i].f[0], D9_CALL_FUTEX);
        ck_assert_uint_eq(k.ev[i].f[1], i == 0 || i >= 11 ? 128 : 5);
        ck_assert_int_eq((int64_t)k.ev[i].f[2], -1);
    }
    d9_seg_free(&seg);
}
END_TEST

START_TEST(unknown_type_skipped)
{
    static uint8_t buf[4096];
    struct d9_seg seg;
    static struct sink k;
    /* Versions 1 and 2: older traces still read (the schema's 'r' kind is a
     * plain varint before version 3). */
    for (uint32_t version = 1; version <= 3; version++) {
        size_t len = handmade(buf, sizeof(buf), version, 0);
        ck_assert_int_eq(read_copy(buf, len, &seg, &k), 0);
        ck_assert_int_eq(seg.status, D9_SEG_OK);
        ck_assert_uint_eq(seg.version, version);
        ck_assert_uint_eq(seg.pid, 77);
        ck_assert_uint_eq(k.n, 3);
        ck_assert_uint_eq(k.ev[0].type, D9_EV_PARK);
        ck_assert_uint_eq(k.ev[0].f[1], 3);
        ck_assert_int_eq((int64_t)k.ev[0].f[2], -1);
        ck_assert_uint_eq(k.ev[1].type, 20);
        ck_assert_uint_eq(k.ev[1].ts, 1007);
        ck_assert_uint_eq(k.ev[1].f[0], 300);
        ck_assert_uint_eq(k.ev[1].name_len, 3);
        ck_assert_mem_eq(k.ev[1].name, "xyz", 3);
        ck_assert_uint_eq(k.ev[2].type, D9_EV_UNPARK);
        ck_assert_uint_eq(k.ev[2].ts, 1012);
        ck_assert_int_eq((int64_t)k.ev[2].f[1], 1);
        d9_seg_free(&seg);

        len = handmade(buf, sizeof(buf), version, 1); /* no schema entry: rest of the block unreadable */
        ck_assert_int_eq(read_copy(buf, len, &seg, &k), 0);
        ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
        ck_assert_uint_eq(seg.blocks, 0);
        ck_assert_uint_eq(k.n, version == 1 ? 1 : 0); /* columns: a bad chunk delivers nothing */
        ck_assert_ptr_nonnull(strstr(seg.problems[0].reason, "type 21 not in the schema"));
        d9_seg_free(&seg);
    }
    uint8_t v4[8] = {0};
    ck_assert_int_eq(read_copy(buf, handmade_seg(buf, sizeof(buf), D9_FORMAT_VERSION + 1, v4, 1), &seg, NULL), 0);
    ck_assert_int_eq(seg.status, D9_SEG_INVALID); /* a newer format: refused, not misread */
    d9_seg_free(&seg);
}
END_TEST

/* Version 2 and 3 chunks with a bad count, cut columns or any garbled byte: a
 * damaged block, none of the bad chunk's events, never a crash (ASan). */
START_TEST(garbled_columns_damaged)
{
    static uint8_t buf[4096];
    static struct sink k;
    struct d9_seg seg;
    uint8_t good[64], raw[64];
    for (uint32_t ver = 2; ver <= 3; ver++) { /* 3: the park target is an 'r' column */
        size_t n = payload_v2(good, 0, ver);
        static const struct {
            uint8_t count;
            const char *reason;
        } counts[] = {{0, "bad event count"}, {200, "bad event count"}, {4, "not in the schema"}};
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            memcpy(raw, good, n);
            raw[3] = counts[i].count; /* after tid (1 byte) and base ts (2) */
            ck_assert_int_eq(read_copy(buf, handmade_seg(buf, sizeof(buf), ver, raw, n), &seg, &k), 0);
            ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
            ck_assert_uint_eq(seg.blocks, 0);
            ck_assert_uint_eq(seg.events, 0);
            ck_assert_uint_eq(k.n, 0);
            ck_assert_msg(strstr(seg.problems[0].reason, counts[i].reason), "count %u: %s", counts[i].count,
                          seg.problems[0].reason);
            d9_seg_free(&seg);
        }
        for (size_t cut = 0; cut < n; cut++) { /* cut anywhere: columns end early */
            memcpy(raw, good, cut);
            ck_assert_int_eq(read_copy(buf, handmade_seg(buf, sizeof(buf), ver, raw, cut), &seg, &k), 0);
            ck_assert_int_eq(seg.status, D9_SEG_DAMAGED);
            ck_assert_uint_eq(k.n, cut == n - 1 ? 3 : 0); /* only the end marker missing: the chunk is whole */
            ck_assert_uint_eq(seg.events, k.n);
            if (cut >= 7 && cut < n - 1) /* past the header and the types */
                ck_assert_msg(strstr(seg.problems[0].reason, "cut short"), "cut %zu: %s", cut, seg.problems[0].reason);
            d9_seg_free(&seg);
        }
        for (size_t at = 0; at < n; at++) { /* every value of every byte */
            for (unsigned v = 0; v < 256; v++) {
                memcpy(raw, good, n);
                raw[at] = (uint8_t)v;
                ck_assert_int_eq(read_copy(buf, handmade_seg(buf, sizeof(buf), ver, raw, n), &seg, &k), 0);
                ck_assert_uint_le(k.n, 3);
                ck_assert_uint_eq(seg.events, k.n);
                if (seg.status == D9_SEG_OK)
                    ck_assert_uint_eq(k.n, 3);
                d9_seg_free(&seg);
            }
        }
    }
}
END_TEST

/* ---- Model + analysis: wake matching, roles, distributions ------------- */

static void add(struct d9_model *m, uint32_t tid, uint64_t ts, uint8_t type, uint64_t f0, uint64_t f1, uint64_t f2)
{
    struct d9_event e = {.ts = ts, .pid = 1, .tid = tid, .type = type, .nfields = 3,
                         .kinds = {'u', 'u', 'u'}, .f = {f0, f1, f2}};
    ck_assert_int_eq(d9_model_add_event(m, &e), 0);
}

static void add_name(struct d9_model *m, uint32_t tid, uint64_t ts, const char *name)
{
    struct d9_event e = {.ts = ts, .pid = 1, .tid = tid, .type = D9_EV_THREAD_NAME, .nfields = 1,
                         .kinds = {'b'}, .name_len = (uint8_t)strlen(name)};
    memcpy(e.name, name, strlen(name));
    ck_assert_int_eq(d9_model_add_event(m, &e), 0);
}

static const struct d9_tstats *stats_of(const struct d9_summary *s, uint32_t tid)
{
    for (size_t i = 0; i < s->nt; i++)
        if (s->t[i].tid == tid)
            return &s->t[i];
    ck_abort_msg("tid %u not in the summary", tid);
    return NULL;
}

/* Events that tie on (ts, pid, tid) keep the order they were added in. */
START_TEST(model_sort_keeps_ties_in_order)
{
    struct d9_model m = {0};
    for (uint64_t i = 0; i < 40; i++) /* 8 ties of 5, added newest ts first */
        add(&m, 7, 1000 - (i / 5) * 10, D9_EV_WAKE, D9_CALL_FUTEX, i, 1);
    add(&m, 6, 930, D9_EV_WAKE, D9_CALL_FUTEX, 99, 1); /* sorts before tid 7's tie at 930 */
    ck_assert_int_eq(d9_model_sort(&m), 0);
    ck_assert_uint_eq(m.nev, 41);
    ck_assert_uint_eq(m.ev[0].f[1], 99); /* (930, tid 6) first */
    ck_assert_uint_eq(m.ev[1].f[1], 35);
    for (size_t i = 1; i < m.nev; i++) {
        const struct d9_event *a = &m.ev[i - 1], *b = &m.ev[i];
        ck_assert(a->ts < b->ts || (a->ts == b->ts && a->tid <= b->tid));
        if (a->ts == b->ts && a->tid == b->tid)
            ck_assert_uint_lt(a->f[1], b->f[1]); /* input order */
    }
    d9_model_free(&m);
}
END_TEST

START_TEST(wake_matching_and_roles)
{
    struct d9_model m = {0};
    /* Added out of order on purpose: the model sorts. */
    add(&m, 10, 200, D9_EV_UNPARK, D9_CALL_EPOLL_WAIT, 1, 0);
    add(&m, 10, 100, D9_EV_PARK, D9_CALL_EPOLL_WAIT, 5, (uint64_t)-1);
    add_name(&m, 10, 1, "io-loop");
    add(&m, 11, 50, D9_EV_EPOLL_CTL, 1, 5, 6);       /* fd 6 -> epfd 5 */
    add(&m, 11, 150, D9_EV_WAKE, D9_CALL_EVENTFD_WRITE, 6, 1);
    add_name(&m, 12, 2, "blk");
    add_name(&m, 13, 2, "blk");
    add(&m, 12, 300, D9_EV_PARK, D9_CALL_COND_WAIT, 0x1000, (uint64_t)-1);
    add(&m, 13, 310, D9_EV_PARK, D9_CALL_COND_WAIT, 0x1000, (uint64_t)-1);
    add(&m, 11, 350, D9_EV_WAKE, D9_CALL_COND_SIGNAL, 0x1000, 1);
    add(&m, 12, 400, D9_EV_UNPARK, D9_CALL_COND_WAIT, 0, 0);
    add(&m, 13, 420, D9_EV_UNPARK, D9_CALL_COND_WAIT, 0, 0);
    add(&m, 12, 450, D9_EV_PARK, D9_CALL_COND_WAIT, 0x2000, (uint64_t)-1);
    add(&m, 13, 460, D9_EV_PARK, D9_CALL_COND_WAIT, 0x2000, (uint64_t)-1);
    add(&m, 11, 500, D9_EV_WAKE, D9_CALL_COND_BROADCAST, 0x2000, 0);
    add(&m, 12, 600, D9_EV_UNPARK, D9_CALL_COND_WAIT, 0, 0);
    add(&m, 13, 610, D9_EV_UNPARK, D9_CALL_COND_WAIT, 0, 0);
    add(&m, 11, 700, D9_EV_DROP, 3, 0, 0);
    add(&m, 11, 710, D9_EV_POLL_NOWAIT, D9_CALL_POLL, 4, 0);
    ck_assert_int_eq(d9_model_sort(&m), 0);
    for (size_t i = 1; i < m.nev; i++)
        ck_assert_uint_le(m.ev[i - 1].ts, m.ev[i].ts);

    struct d9_summary s;
    ck_assert_int_eq(d9_analyse(&m, &s), 0);
    ck_assert_uint_eq(s.nt, 4);
    ck_assert_uint_eq(s.dropped, 3);
    const struct d9_tstats *io = stats_of(&s, 10), *waker = stats_of(&s, 11);
    const struct d9_tstats *b12 = stats_of(&s, 12), *b13 = stats_of(&s, 13);
    ck_assert_str_eq(io->name, "io-loop");
    ck_assert_int_eq(io->role, D9_ROLE_WORKER);
    ck_assert_int_eq(b12->role, D9_ROLE_BLOCKING);
    ck_assert_int_eq(b13->role, D9_ROLE_BLOCKING);
    ck_assert_int_eq(waker->role, D9_ROLE_OTHER);
    ck_assert_uint_eq(waker->wakes_sent, 3);
    ck_assert_uint_eq(waker->wakes_received, 0);
    ck_assert_uint_eq(waker->nowait_polls, 4);
    ck_assert_uint_eq(io->wakes_received, 1);  /* eventfd through epfd 5 */
    ck_assert_uint_eq(b12->wakes_received, 2); /* the signal (first unpark after it) + the broadcast */
    ck_assert_uint_eq(b13->wakes_received, 1); /* the broadcast only */
    ck_assert_uint_eq(io->parked_ns, 100);
    ck_assert_uint_eq(b12->parks, 2);
    ck_assert_uint_eq(b12->parks_by_call[D9_CALL_COND_WAIT], 2);
    ck_assert_uint_eq(b12->park_ns.p50, 100);
    ck_assert_uint_eq(b12->park_ns.max, 150);
    ck_assert_uint_eq(b12->busy_period_ns.max, 50);
    ck_assert_uint_eq(b12->parked_ns, 250);
    ck_assert_uint_eq(b12->busy_ns, (600 - 2) - 250);
    d9_summary_free(&s);
    d9_model_free(&m);
}
END_TEST

/* A pass over a loaded trace: events and spans seen, each span checked. */
struct pass {
    size_t events, spans;
    uint64_t last_ts;
};

static int on_span(void *ctx, const struct d9_event *ev, size_t n)
{
    struct pass *p = ctx;
    ck_assert_uint_ge(n, 1);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(ev[i].tid, ev[0].tid); /* one thread's */
        ck_assert_uint_eq(ev[i].pid, ev[0].pid);
        ck_assert_uint_ge(ev[i].ts, p->last_ts); /* time order */
        p->last_ts = ev[i].ts;
    }
    p->events += n;
    p->spans++;
    return 0;
}

/* A trace of many blocks, decoded by the decode-ahead thread and by the
 * caller while it would wait (run under TSan too): every event once, in
 * order, on every pass; the block whose header lies about its count (its
 * events kept) makes the input damaged, counted once. */
START_TEST(stream_passes_over_many_blocks)
{
    char dir[] = "/tmp/d9-stream-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/svc.1.d9", dir);
    struct seg sg;
    seg_header(&sg);
    for (int i = 0; i < 16; i++) {
        struct d9_raw_event ev[40];
        for (int j = 0; j < 40; j++) /* two threads: spans of several events */
            ev[j] = (struct d9_raw_event){.ts = 10000 + (uint64_t)i * 10000 + (uint64_t)j * 50,
                                          .type = j % 2 ? D9_EV_UNPARK : D9_EV_PARK, .call = D9_CALL_EPOLL_WAIT,
                                          .a = 5, .b = j % 2 ? 1 : (uint64_t)-1};
        static uint8_t raw[8192];
        struct d9_enc e;
        d9_enc_init(&e, raw, sizeof(raw));
        ck_assert_int_eq(d9_enc_begin_chunk(&e, 101, ev[0].ts), 0);
        for (int j = 0; j < 40; j += 8)
            for (int k = j; k < j + 4; k++)
                ck_assert_int_eq(d9_enc_event(&e, &ev[k]), 0);
        ck_assert_int_eq(d9_enc_begin_chunk(&e, 102, ev[4].ts), 0);
        for (int j = 4; j < 40; j += 8)
            for (int k = j; k < j + 4; k++)
                ck_assert_int_eq(d9_enc_event(&e, &ev[k]), 0);
        d9_enc_finish(&e);
        if (i == 9)
            e.events++; /* said to hold one more than it does */
        size_t b = d9_block_build(&e, sg.buf + sg.len, SEG_CAP - sg.len);
        ck_assert_uint_gt(b, 0);
        sg.len += b;
    }
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(sg.buf, 1, sg.len, f), sg.len);
    fclose(f);
    free(sg.buf);

    struct d9_model m = {0};
    int bad = 0;
    char *paths[] = {dir};
    ck_assert_int_eq(d9_load(&m, paths, 1, &bad), 0);
    ck_assert_int_eq(bad, 0); /* the lie is found decoding */
    for (int pass = 0; pass < 3; pass++) {
        struct pass p = {0};
        ck_assert_int_eq(d9_model_each_span(&m, on_span, &p), 0);
        ck_assert_uint_eq(p.events, 16 * 40);
        ck_assert_uint_ge(p.spans, 16 * 10); /* the threads alternate every 4 events */
        ck_assert_int_eq(bad, 1);
    }
    d9_model_free(&m);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* One segment file at path: pid's thread 101, on boot boot_id, its clock
 * anchored at (real, mono), two events at ts0 and ts0 + 100. */
static void boot_segment(const char *path, uint32_t pid, const char *boot_id, uint64_t real, uint64_t mono,
                         uint64_t ts0)
{
    static const uint32_t tids[1] = {101};
    static const char names[1][16] = {"main"};
    struct d9_proc_identity id = {.start_ticks = 5, .pidns = 4026531836u};
    snprintf(id.boot_id, sizeof(id.boot_id), "%s", boot_id);
    struct d9_header_info h = {.pid = pid, .exe = "/usr/bin/svc", .clock = "monotonic", .anchor_real_ns = real,
                               .anchor_mono_ns = mono, .nthreads = 1, .tids = tids, .names = names,
                               .identity = &id};
    static uint8_t buf[16384];
    size_t len = d9_header_build(buf, sizeof(buf), &h);
    ck_assert_uint_gt(len, 0);
    struct d9_raw_event ev[2] = {{.ts = ts0, .type = D9_EV_PARK, .call = D9_CALL_EPOLL_WAIT, .a = 5, .b = (uint64_t)-1},
                                 {.ts = ts0 + 100, .type = D9_EV_UNPARK, .call = D9_CALL_EPOLL_WAIT, .a = 1}};
    uint8_t raw[4096];
    struct d9_enc e;
    encode_payload(&e, raw, 101, ev, 2);
    size_t b = d9_block_build(&e, buf + len, sizeof(buf) - len);
    ck_assert_uint_gt(b, 0);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len + b, f), len + b);
    fclose(f);
}

/* A directory of up to 4 segments (boot_segment), loaded, its events seen
 * in merge order. bad outlives the model, as d9_load needs. */
struct boots {
    char dir[32], path[4][64];
    int n, bad;
    struct d9_model m;
    uint32_t pid[8];
    uint64_t ts[8];
    size_t seen;
};

static void boots_init(struct boots *b, int n)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->dir, sizeof(b->dir), "/tmp/d9-boots-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(b->dir));
    b->n = n;
    for (int i = 0; i < n; i++) {
        char dir[sizeof(b->dir)]; /* a copy: gcc's -Wrestrict sees dir and path in one object */
        memcpy(dir, b->dir, sizeof(dir));
        snprintf(b->path[i], sizeof(b->path[i]), "%s/svc.%d.d9", dir, i);
    }
}

static int boots_span(void *ctx, const struct d9_event *ev, size_t n)
{
    struct boots *b = ctx;
    for (size_t i = 0; i < n && b->seen < 8; i++, b->seen++) {
        b->pid[b->seen] = ev[i].pid;
        b->ts[b->seen] = ev[i].ts;
    }
    return 0;
}

static void boots_load(struct boots *b)
{
    char *paths[] = {b->dir};
    ck_assert_int_eq(d9_load(&b->m, paths, 1, &b->bad), 0);
    ck_assert_int_eq(b->bad, 0);
    ck_assert_int_eq(d9_model_each_span(&b->m, boots_span, b), 0);
}

static void boots_free(struct boots *b)
{
    d9_model_free(&b->m);
    for (int i = 0; i < b->n; i++)
        unlink(b->path[i]);
    rmdir(b->dir);
}

/* realtime - monotonic of pid's anchor. */
static uint64_t anchor_off(const struct d9_model *m, uint32_t pid)
{
    const struct d9_proc *p = d9_model_proc(m, pid);
    ck_assert_ptr_nonnull(p);
    return p->anchor_real_ns - p->anchor_mono_ns;
}

/* Segments of three boots: each boot's monotonic clock restarts, so its
 * events move onto the earliest boot's clock by the realtime anchors
 * (boot B began 50 s of wall clock after boot A's anchor, C 80 s); the
 * wall-clock anchor of each process then names the same instant as A's.
 * Boot C's second segment, whose anchor was read after a clock step of
 * 2 s, moves by the boot's least offset, as its first. */
START_TEST(stream_boots_follow_each_other)
{
    static struct boots b;
    const uint64_t R = 1700000000000000000ull, S = 1000000000ull;
    boots_init(&b, 4);
    /* Listed first, but of a later boot: the earliest is found by anchor. */
    boot_segment(b.path[0], 300, "bbbbbbbb-0000-0000-0000-000000000000", R + 50 * S, 1000, 1 * S);
    boot_segment(b.path[1], 200, "aaaaaaaa-0000-0000-0000-000000000000", R, 1000, 2 * S);
    boot_segment(b.path[2], 400, "cccccccc-0000-0000-0000-000000000000", R + 80 * S, 2000, 3 * S);
    boot_segment(b.path[3], 401, "cccccccc-0000-0000-0000-000000000000", R + 80 * S + 2 * S + 4 * S, 4 * S, 5 * S);
    boots_load(&b);
    ck_assert_uint_eq(b.seen, 8);
    const uint32_t pid[8] = {200, 200, 300, 300, 400, 400, 401, 401};
    const uint64_t ts[8] = {2 * S, 2 * S + 100, 51 * S, 51 * S + 100, 83 * S - 1000, 83 * S - 1000 + 100,
                            85 * S - 1000, 85 * S - 1000 + 100};
    for (size_t i = 0; i < 8; i++) {
        ck_assert_uint_eq(b.pid[i], pid[i]);
        ck_assert_uint_eq(b.ts[i], ts[i]);
    }
    /* Every process's anchor: A's (but for the clock step of C's later
     * segment, which stays). */
    ck_assert_uint_eq(anchor_off(&b.m, 200), R - 1000);
    ck_assert_uint_eq(anchor_off(&b.m, 300), R - 1000);
    ck_assert_uint_eq(anchor_off(&b.m, 400), R - 1000);
    ck_assert_uint_eq(anchor_off(&b.m, 401), (R + 86 * S) - (4 * S + 80 * S - 1000));
    boots_free(&b);
}
END_TEST

/* One boot: nothing moves. */
START_TEST(stream_one_boot_unmoved)
{
    static struct boots b;
    const uint64_t R = 1700000000000000000ull, S = 1000000000ull;
    boots_init(&b, 2);
    boot_segment(b.path[0], 300, "aaaaaaaa-0000-0000-0000-000000000000", R + 50 * S, 50 * S, 60 * S);
    boot_segment(b.path[1], 200, "aaaaaaaa-0000-0000-0000-000000000000", R, 1000, 2 * S);
    boots_load(&b);
    ck_assert_uint_eq(b.seen, 4);
    ck_assert_uint_eq(b.ts[0], 2 * S);
    ck_assert_uint_eq(b.ts[2], 60 * S);
    ck_assert_uint_eq(d9_model_proc(&b.m, 300)->anchor_mono_ns, 50 * S);
    boots_free(&b);
}
END_TEST

/* JSON strings: plain runs as they are, quotes and backslashes escaped,
 * control and non-ASCII bytes as \u00XX, the length given (NULs kept). */
START_TEST(json_strings_escaped)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    static const char in[] = "plain \"q\" back\\slash\x01\x7f\xc3\xa9\0end";
    d9_json_str(f, in, sizeof(in) - 1);
    d9_json_str(f, "", 0);
    d9_json_str(f, "\"", 1);
    fclose(f);
    ck_assert_str_eq(buf, "\"plain \\\"q\\\" back\\\\slash\\u0001\\u007f\\u00c3\\u00a9\\u0000end\"\"\"\"\\\"\"");
    free(buf);
}
END_TEST

/* JSON numbers: the writer's own decimal formatting, at the edges of both
 * ranges, inside an object and an array (commas and keys placed). */
START_TEST(json_integers_formatted)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    struct d9_jw w;
    d9_jw_init(&w, f);
    d9_jw_obj(&w, NULL);
    d9_jw_u64(&w, "z", 0);
    d9_jw_u64(&w, "u", 1234567890);
    d9_jw_u64(&w, "max", UINT64_MAX);
    d9_jw_u64(&w, "a", 7);
    d9_jw_u64(&w, "b", 10);
    d9_jw_u64(&w, "c", 99);
    d9_jw_u64(&w, "d", 100);
    d9_jw_u64(&w, "e", 1000);
    d9_jw_arr(&w, "s");
    d9_jw_i64(&w, NULL, 0);
    d9_jw_i64(&w, NULL, -1);
    d9_jw_i64(&w, NULL, -110);
    d9_jw_i64(&w, NULL, INT64_MAX);
    d9_jw_i64(&w, NULL, INT64_MIN);
    d9_jw_end(&w);
    d9_jw_end(&w);
    fclose(f);
    ck_assert_str_eq(buf, "{\"z\":0,\"u\":1234567890,\"max\":18446744073709551615,"
                          "\"a\":7,\"b\":10,\"c\":99,\"d\":100,\"e\":1000,"
                          "\"s\":[0,-1,-110,9223372036854775807,-9223372036854775808]}");
    free(buf);
}
END_TEST

D9_SUITE(decoder_model)
{
    TCase *tc = tcase_create("analysis");
    tcase_add_test(tc, model_sort_keeps_ties_in_order);
    tcase_add_test(tc, wake_matching_and_roles);
    tcase_add_test(tc, stream_passes_over_many_blocks);
    tcase_add_test(tc, stream_boots_follow_each_other);
    tcase_add_test(tc, stream_one_boot_unmoved);
    tcase_add_test(tc, json_strings_escaped);
    tcase_add_test(tc, json_integers_formatted);
    suite_add_tcase(s, tc);
    return s;
}

D9_SUITE(reader)
{
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, damaged_payload_resyncs);
    tcase_add_test(tc, damaged_block_header);
    tcase_add_test(tc, frame_content_checksum_either_way);
    tcase_add_test(tc, truncated_everywhere);
    tcase_add_test(tc, garbage_and_empty);
    tcase_add_test(tc, unknown_type_skipped);
    tcase_add_test(tc, recent_values_decode);
    tcase_add_test(tc, garbled_columns_damaged);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
