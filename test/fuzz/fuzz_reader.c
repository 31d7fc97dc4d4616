/* fuzz_reader.c - libFuzzer target for the decoder: one input is one segment
 * file held in memory. Each run
 *   1. decodes it with d9_read_segment (no callback, then into a model) and
 *      checks what the reader promises: the status agrees with the problem
 *      list, counts agree between the two reads, skipped bytes fit the input;
 *   2. runs the analysis on whatever decoded (wake matching, busy periods,
 *      slow syscalls, locks, verdict) and every text/JSON printer, so hostile
 *      values reach them too (output goes to /dev/null);
 *   3. runs the events, summary, check, verdict and export commands on the
 *      same bytes through a memfd (their printers are only reachable by path).
 *
 * Checksums stop blind mutation at the first crc, so a custom mutator keeps
 * most mutants well-formed: it either mutates bytes and then recomputes the
 * header crc and every block's crcs (reaching the LZ4 decoder and the
 * payload parser with broken data), or decompresses one block, mutates the
 * raw payload (chunk headers, counts, columns, varints) and recompresses it, or mutates the
 * header TLVs, or drops / duplicates / truncates blocks. A quarter of the
 * mutants are left as plain byte mutations with stale checksums, for the
 * damage-recovery paths (resync on the next verified block header).
 *
 * Build: make fuzz-build (clang, -fsanitize=fuzzer,address,undefined).
 * Run:   make fuzz, or build/fuzz/fuzz_reader test/fuzz/corpus -dict=test/fuzz/dict
 * Reproduce: build/fuzz/fuzz_reader CRASH-FILE (or dial9-decode check CRASH-FILE).
 * See docs/FUZZING.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <lz4frame.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "dial9_format.h"
#include "model.h"
#include "reader.h"
#include "report.h"
#include "summary.h"
#include "verdict.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Extra work for one input in FUZZ_REREAD_EVERY (a second read) and
 * FUZZ_CMD_EVERY (the commands: ~5x the cost of the rest), chosen by the
 * input's crc32c so runs stay reproducible. */
#ifndef FUZZ_REREAD_EVERY
#define FUZZ_REREAD_EVERY 4
#endif
#ifndef FUZZ_CMD_EVERY
#define FUZZ_CMD_EVERY 32
#endif

static FILE *devnull;
static int memfd = -1;
static char mempath[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        abort();
    memfd = memfd_create("d9fuzz", MFD_CLOEXEC);
    if (memfd >= 0)
        snprintf(mempath, sizeof(mempath), "/proc/self/fd/%d", memfd);
    return 0;
}

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz_reader: invariant failed: %s (line %d)\n", #cond, \
                    __LINE__);                                                       \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* What the reader promises about any input (reader.h). */
static void check_seg(const struct d9_seg *s, size_t len)
{
    CHECK(s->status <= D9_SEG_INVALID);
    if (s->status == D9_SEG_INVALID) {
        CHECK(s->events == 0 && s->blocks == 0);
        CHECK(s->error[0] != 0);
        return;
    }
    /* Intact means nothing to report; damaged/truncated means a reason. */
    CHECK((s->status == D9_SEG_OK) == (s->nproblems == 0));
    CHECK(s->skipped <= len);
    if (s->status == D9_SEG_OK)
        CHECK(s->skipped == 0);
    uint32_t kept = s->nproblems < D9_MAX_PROBLEMS ? s->nproblems : D9_MAX_PROBLEMS;
    int any_truncated = 0, any_damage = 0;
    for (uint32_t i = 0; i < kept; i++) {
        const struct d9_problem *p = &s->problems[i];
        CHECK(p->offset <= len);
        CHECK(memchr(p->reason, 0, sizeof(p->reason)) != NULL && p->reason[0]);
        any_truncated |= p->truncated;
        any_damage |= !p->truncated;
    }
    /* The status is the worst problem: damage outranks a truncated end. */
    if (s->nproblems && s->nproblems <= D9_MAX_PROBLEMS)
        CHECK(s->status == (any_damage ? D9_SEG_DAMAGED : D9_SEG_TRUNCATED) && any_truncated + any_damage > 0);
    /* Every decoded block is at least a header's worth of input. */
    CHECK((uint64_t)s->blocks * D9_BLOCK_HEADER_SIZE <= len);
    for (uint32_t i = 0; i < s->nthreads; i++)
        CHECK(memchr(s->threads[i].name, 0, sizeof(s->threads[i].name)) != NULL);
}

struct count {
    uint64_t n;
};

static int count_event(void *ctx, const struct d9_event *ev)
{
    struct count *c = ctx;
    CHECK(ev->nfields <= D9_EV_FIELDS && ev->name_len <= sizeof(ev->name));
    CHECK(ev->type != 0);
    c->n++;
    return 0;
}

static void run_commands(const uint8_t *data, size_t size)
{
    if (memfd < 0 || ftruncate(memfd, 0) < 0 || (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
        return;
    char *paths[] = {mempath};
    FILE *out = stdout, *err = stderr;
    stdout = devnull; /* glibc: stdout/stderr are assignable; sanitizers write fd 2 directly */
    stderr = devnull;
    d9_cmd_events(paths, 1, 1);
    d9_cmd_events(paths, 1, 0);
    d9_cmd_summary(paths, 1, size & 1);
    d9_cmd_check(paths, 1, 1);
    struct d9_limits lim = D9_LIMITS_DEFAULT;
    d9_cmd_verdict(paths, 1, size & 2, &lim);
    char fmt_chrome[] = "--format=chrome", fmt_perfetto[] = "--format=perfetto", out_opt[] = "--output=-";
    char *exp[] = {size & 4 ? fmt_chrome : fmt_perfetto, out_opt, mempath, NULL};
    d9_cmd_export(3, exp);
    stdout = out;
    stderr = err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. The reader, into a model; for some inputs a second read without
     * the model, which must agree. */
    uint32_t pick = d9_crc32c(0, data, size);
    struct d9_seg a, b;
    struct d9_model m = {0};
    int rc = d9_read_segment(data, size, &a, d9_model_add_event, &m);
    CHECK(rc == 0);
    check_seg(&a, size);
    CHECK(m.nev == a.events);
    if (FUZZ_REREAD_EVERY && pick % FUZZ_REREAD_EVERY == 0) {
        struct count c = {0};
        rc = d9_read_segment(data, size, &b, count_event, &c);
        CHECK(rc == 0);
        CHECK(c.n == b.events);
        CHECK(a.status == b.status && a.events == b.events && a.blocks == b.blocks && a.skipped == b.skipped &&
              a.nproblems == b.nproblems);
        d9_seg_free(&b);
    }
    d9_report_segment(devnull, "fuzz", &a, 1);
    d9_report_segment(devnull, "fuzz", &a, 0);
    if (a.status != D9_SEG_INVALID)
        CHECK(d9_model_add_header(&m, &a) == 0);
    d9_seg_free(&a);

    /* 2. Analysis and printers on whatever decoded. */
    d9_model_sort(&m);
    for (size_t i = 1; i < m.nev; i++)
        CHECK(m.ev[i - 1].ts <= m.ev[i].ts);
    struct d9_summary s = {0};
    CHECK(d9_analyse(&m, &s) == 0);
    struct d9_flag *flags = NULL;
    size_t nflags = 0;
    CHECK(d9_verdict(&s, 0, &flags, &nflags) == 0);
    free(flags);
    FILE *out = stdout;
    stdout = devnull;
    struct d9_jw w;
    d9_jw_init(&w, devnull);
    d9_jw_obj(&w, NULL);
    d9_wakes_json(&w, &s);
    d9_sys_json(&w, &s);
    d9_sched_json(&w, &s);
    d9_jw_end(&w);
    d9_wakes_text(&m, &s);
    d9_sched_text(&m, &s);
    d9_sys_text(&m, &s);
    stdout = out;
    d9_summary_free(&s);
    d9_model_free(&m);

    /* 3. The commands, by path (re-decoding: only for some inputs). */
    if (FUZZ_CMD_EVERY && pick / 7 % FUZZ_CMD_EVERY == 0)
        run_commands(data, size);
    return 0;
}

/* ---- Custom mutator: keep mutants well-formed enough to get past crcs ---- */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#define MAX_BLOCKS 4096
struct layout {
    size_t hdr_end; /* 16 + header_len; 0 when there is no usable header */
    size_t nblk;
    size_t off[MAX_BLOCKS], end[MAX_BLOCKS]; /* block i: [off, end) */
};

/* Walks header and consecutive well-framed blocks (crcs not checked). */
static void layout_of(const uint8_t *d, size_t n, struct layout *l)
{
    l->hdr_end = 0;
    l->nblk = 0;
    if (n < 16 || memcmp(d, D9_SEG_MAGIC, D9_SEG_MAGIC_LEN))
        return;
    uint32_t hlen = rd32(d + 12);
    if (hlen < 4 || hlen > n - 16)
        return;
    l->hdr_end = 16 + (size_t)hlen;
    size_t pos = l->hdr_end;
    while (l->nblk < MAX_BLOCKS && n - pos >= D9_BLOCK_HEADER_SIZE && rd32(d + pos) == D9_BLOCK_MAGIC) {
        uint32_t plen = rd32(d + pos + 4);
        if (plen > n - pos - D9_BLOCK_HEADER_SIZE)
            break;
        l->off[l->nblk] = pos;
        l->end[l->nblk] = pos + D9_BLOCK_HEADER_SIZE + plen;
        l->nblk++;
        pos += D9_BLOCK_HEADER_SIZE + plen;
    }
}

static void fix_block(uint8_t *b)
{
    uint32_t plen = rd32(b + 4);
    wr32(b + 12, d9_crc32c(0, b + D9_BLOCK_HEADER_SIZE, plen));
    uint32_t c = d9_crc32c(0, b, 20);
    wr32(b + 20, d9_crc32c(c, b + 24, 16));
}

/* Recomputes the header crc and every framed block's crcs. */
static void fix_crcs(uint8_t *d, size_t n)
{
    static struct layout l;
    layout_of(d, n, &l);
    if (!l.hdr_end)
        return;
    size_t tlv_n = l.hdr_end - 16 - 4;
    wr32(d + 16 + tlv_n, d9_crc32c(0, d + 16, tlv_n));
    for (size_t i = 0; i < l.nblk; i++)
        fix_block(d + l.off[i]);
}

/* Steps over count values of kind k at *p; 0 when they do not all fit. */
static int skip_values(const uint8_t **p, const uint8_t *end, char k, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v;
        size_t n = d9_get_varint(*p, (size_t)(end - *p), &v);
        if (!n || (k == 'b' && v > (uint64_t)(end - *p - n)))
            return 0;
        *p += n + (k == 'b' ? v : 0);
        if (k == 'r' && v == 0 && !skip_values(p, end, 'u', 1)) /* a new value follows its code */
            return 0;
    }
    return 1;
}

/* The built-in schema as a segment of that version reads it: 'r' fields are
 * plain varints before version 3. */
static const struct d9_schema *builtin(uint32_t version)
{
    static struct d9_schema sc[2];
    static int init;
    if (!init) {
        d9_schema_builtin(&sc[1]);
        sc[0] = sc[1];
        for (unsigned t = 0; t < 256; t++)
            for (unsigned f = 0; f < D9_MAX_FIELDS; f++)
                if (sc[0].kinds[t][f] == 'r')
                    sc[0].kinds[t][f] = 'u';
        init = 1;
    }
    return &sc[version >= 3];
}

/* Events in a version 1 raw payload (rows) per the built-in schema; stops
 * at the first malformed byte. */
static uint32_t count_rows(const uint8_t *p, size_t n)
{
    const struct d9_schema *sc = builtin(1);
    const uint8_t *end = p + n;
    uint32_t count = 0;
    for (;;) {
        uint64_t tid;
        size_t k = d9_get_varint(p, (size_t)(end - p), &tid);
        if (!k || tid == 0)
            return count;
        p += k;
        if (!skip_values(&p, end, 'u', 1)) /* base ts */
            return count;
        for (;;) {
            if (p >= end)
                return count;
            uint8_t t = *p++;
            if (t == 0)
                break;
            if (!sc->present[t] || !skip_values(&p, end, 'u', 1))
                return count;
            for (unsigned f = 0; f < sc->nfields[t]; f++)
                if (!skip_values(&p, end, sc->kinds[t][f], 1))
                    return count;
            count++;
        }
    }
}

/* Events in a version 2 or 3 raw payload (columnar chunks) per the built-in
 * schema: the whole chunks before the first malformed one. */
static uint32_t count_columns(uint32_t version, const uint8_t *p, size_t n)
{
    const struct d9_schema *sc = builtin(version);
    const uint8_t *end = p + n;
    uint32_t count = 0;
    for (;;) {
        uint64_t tid, ev;
        size_t k = d9_get_varint(p, (size_t)(end - p), &tid);
        if (!k || tid == 0)
            return count;
        p += k;
        if (!skip_values(&p, end, 'u', 1) || !(k = d9_get_varint(p, (size_t)(end - p), &ev)))
            return count;
        p += k;
        if (ev == 0 || ev > (uint64_t)(end - p))
            return count;
        uint32_t per_type[256] = {0};
        for (uint64_t i = 0; i < ev; i++, p++) {
            if (!sc->present[*p])
                return count;
            per_type[*p]++;
        }
        if (!skip_values(&p, end, 'u', ev))
            return count;
        for (unsigned t = 1; t < 256; t++)
            for (unsigned f = 0; per_type[t] && f < sc->nfields[t]; f++)
                if (!skip_values(&p, end, sc->kinds[t][f], per_type[t]))
                    return count;
        count += (uint32_t)ev;
    }
}

/* What the writer puts in the block header: the events of the payload. */
static uint32_t count_raw_events(uint32_t version, const uint8_t *p, size_t n)
{
    return version == 1 ? count_rows(p, n) : count_columns(version, p, n);
}

#define RAW_CAP (256u << 10)
static uint8_t raw_buf[RAW_CAP], comp_buf[RAW_CAP + 65536], tmp_buf[1u << 20];

/* Replaces d[from, to) with src[0..n) if the result fits max; returns the new size or 0. */
static size_t splice(uint8_t *d, size_t size, size_t max, size_t from, size_t to, const uint8_t *src, size_t n)
{
    size_t tail = size - to;
    if (from + n + tail > max)
        return 0;
    memmove(d + from + n, d + to, tail);
    memcpy(d + from, src, n);
    return from + n + tail;
}

/* Decompress block i, mutate its raw payload, recompress, fix the header. */
static size_t mutate_block(uint8_t *d, size_t size, size_t max, const struct layout *l, size_t i, unsigned r)
{
    uint8_t *h = d + l->off[i];
    uint32_t plen = rd32(h + 4), rlen = rd32(h + 8);
    size_t raw_n = 0;
    if (rlen <= RAW_CAP / 2) {
        LZ4F_dctx *dctx;
        if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
            return 0;
        size_t dst_n = rlen, src_n = plen;
        size_t hint = LZ4F_decompress(dctx, raw_buf, &dst_n, h + D9_BLOCK_HEADER_SIZE, &src_n, NULL);
        LZ4F_freeDecompressionContext(dctx);
        if (!LZ4F_isError(hint))
            raw_n = dst_n;
    }
    size_t cap = raw_n * 2 + 256;
    if (cap > RAW_CAP / 2)
        cap = RAW_CAP / 2;
    raw_n = LLVMFuzzerMutate(raw_buf, raw_n, cap);
    if (r & 1) { /* a well-formed end: the payload parser then reaches the event count check */
        if (raw_n >= 1 && raw_n < cap)
            raw_buf[raw_n - 1] = 0;
    }
    LZ4F_preferences_t pref;
    memset(&pref, 0, sizeof(pref));
    pref.frameInfo.contentChecksumFlag = (r >> 1) & 1 ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
    pref.frameInfo.blockChecksumFlag = (r >> 2) & 1 ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
    size_t bound = LZ4F_compressFrameBound(raw_n, &pref);
    if (bound + D9_BLOCK_HEADER_SIZE > sizeof(comp_buf))
        return 0;
    uint8_t *nb = comp_buf;
    size_t cn = LZ4F_compressFrame(nb + D9_BLOCK_HEADER_SIZE, bound, raw_buf, raw_n, &pref);
    if (LZ4F_isError(cn))
        return 0;
    memcpy(nb, h, D9_BLOCK_HEADER_SIZE);
    wr32(nb + 4, (uint32_t)cn);
    /* Mostly the true raw length and event count; sometimes a lie. */
    wr32(nb + 8, (r >> 3) % 16 ? (uint32_t)raw_n : (uint32_t)raw_n + ((r >> 7) % 3) - 1);
    wr32(nb + 16, (r >> 9) % 8 ? count_raw_events(rd32(d + 8), raw_buf, raw_n) : rd32(h + 16));
    fix_block(nb);
    return splice(d, size, max, l->off[i], l->end[i], nb, D9_BLOCK_HEADER_SIZE + cn);
}

/* Mutates the header TLVs and rewrites header_len and the header crc. */
static size_t mutate_header(uint8_t *d, size_t size, size_t max, const struct layout *l)
{
    size_t tlv_n = l->hdr_end - 20;
    if (tlv_n > sizeof(tmp_buf) / 2)
        return 0;
    memcpy(tmp_buf + 16, d + 16, tlv_n);
    size_t cap = tlv_n * 2 + 64;
    if (cap > sizeof(tmp_buf) / 2)
        cap = sizeof(tmp_buf) / 2;
    size_t nn = LLVMFuzzerMutate(tmp_buf + 16, tlv_n, cap);
    memcpy(tmp_buf, d, 16);
    wr32(tmp_buf + 12, (uint32_t)(nn + 4));
    wr32(tmp_buf + 16 + nn, d9_crc32c(0, tmp_buf + 16, nn));
    return splice(d, size, max, 0, l->hdr_end, tmp_buf, 16 + nn + 4);
}

size_t LLVMFuzzerCustomMutator(uint8_t *d, size_t size, size_t max, unsigned seed)
{
    static struct layout l;
    srand(seed);
    unsigned r = (unsigned)rand();
    unsigned op = r % 16;
    r /= 16;
    layout_of(d, size, &l);
    size_t n = 0;
    if (l.hdr_end && op < 7 && l.nblk) { /* a block's raw payload */
        n = mutate_block(d, size, max, &l, r % l.nblk, (unsigned)rand());
    } else if (l.hdr_end && op < 9) { /* the header TLVs */
        n = mutate_header(d, size, max, &l);
    } else if (l.hdr_end && op == 9 && l.nblk > 1) { /* drop a block */
        size_t i = r % l.nblk;
        n = splice(d, size, max, l.off[i], l.end[i], tmp_buf, 0);
    } else if (l.hdr_end && op == 10 && l.nblk) { /* duplicate a block after another */
        size_t i = r % l.nblk, j = (r / 7) % l.nblk, bn = l.end[i] - l.off[i];
        if (bn <= sizeof(tmp_buf)) {
            memcpy(tmp_buf, d + l.off[i], bn);
            n = splice(d, size, max, l.end[j], l.end[j], tmp_buf, bn);
        }
    } else if (op == 11 && size > 1) { /* truncate: a crashed writer's tail */
        n = (size_t)(r % size);
    } else if (op < 14) { /* bytes, then checksums made to agree */
        n = LLVMFuzzerMutate(d, size, max);
        fix_crcs(d, n);
    }
    if (n == 0) /* plain byte mutation, checksums left stale */
        n = LLVMFuzzerMutate(d, size, max);
    return n;
}
