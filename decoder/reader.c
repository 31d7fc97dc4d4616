/* reader.c - segment decoding (see reader.h and the format in dial9_format.h).
 * Every read is bounds-checked against the buffer: any input, however
 * damaged, yields a report and never a crash. */
#include "reader.h"

#include <lz4frame.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

__attribute__((format(printf, 5, 6)))
static void problem(struct d9_seg *s, uint32_t block, uint64_t off, int truncated, const char *fmt, ...)
{
    if (s->nproblems < D9_MAX_PROBLEMS) {
        struct d9_problem *p = &s->problems[s->nproblems];
        p->block = block;
        p->offset = off;
        p->truncated = truncated;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
        va_end(ap);
    }
    s->nproblems++;
    enum d9_seg_status st = truncated ? D9_SEG_TRUNCATED : D9_SEG_DAMAGED;
    if (st > s->status)
        s->status = st;
}

/* ---- Header -------------------------------------------------------------- */

static char *dup_bytes(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

static int set_str(char **dst, const uint8_t *p, size_t n)
{
    free(*dst);
    *dst = dup_bytes(p, n);
    return *dst ? 0 : -1;
}

static int parse_threads(struct d9_seg *s, const uint8_t *p, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; n - i >= 5 && p[i + 4] <= n - i - 5; i += 5 + p[i + 4])
        count++;
    free(s->threads);
    s->nthreads = 0;
    s->threads = calloc(count ? count : 1, sizeof(*s->threads));
    if (!s->threads)
        return -1;
    size_t i = 0;
    for (; n - i >= 5 && p[i + 4] <= n - i - 5; i += 5 + p[i + 4]) {
        struct d9_thread_entry *t = &s->threads[s->nthreads++];
        size_t len = p[i + 4] < 16 ? p[i + 4] : 16;
        t->tid = le32(p + i);
        memcpy(t->name, p + i + 5, len);
        t->name[len] = 0;
    }
    return i == n ? 0 : 1;
}

/* Returns 0 ok, 1 malformed (schema left as it was). */
static int parse_schema(struct d9_schema *out, const uint8_t *p, size_t n)
{
    struct d9_schema s;
    memset(&s, 0, sizeof(s));
    size_t i = 0;
    while (i < n) {
        if (n - i < 2 || p[i + 1] > D9_MAX_FIELDS || p[i + 1] > n - i - 2)
            return 1;
        uint8_t t = p[i], nf = p[i + 1];
        for (size_t f = 0; f < nf; f++) {
            char k = (char)p[i + 2 + f];
            if (k != 'u' && k != 's' && k != 'b' && k != 'r')
                return 1;
            s.kinds[t][f] = k;
        }
        s.present[t] = 1;
        s.nfields[t] = nf;
        i += 2 + (size_t)nf;
    }
    *out = s;
    return 0;
}

/* Parses TLVs in p[0..n). -1 out of memory. */
static int parse_tlvs(struct d9_seg *s, const uint8_t *p, size_t n, size_t base)
{
    size_t i = 0;
    while (i < n) {
        if (n - i < 6 || le32(p + i + 2) > n - i - 6) {
            problem(s, D9_PROBLEM_HEADER, base + i, 0, "malformed TLV");
            return 0;
        }
        uint16_t tag = le16(p + i);
        size_t len = le32(p + i + 2);
        const uint8_t *v = p + i + 6;
        int rc = 0;
        switch (tag) {
        case D9_TLV_PID: if (len >= 4) s->pid = le32(v); break;
        case D9_TLV_SEQ: if (len >= 4) s->seq = le32(v); break;
        case D9_TLV_ANCHOR:
            if (len >= 16) {
                s->anchor_real_ns = le64(v);
                s->anchor_mono_ns = le64(v + 8);
            }
            break;
        case D9_TLV_PROCESS:
            if (len >= 16) {
                memset(&s->identity, 0, sizeof(s->identity));
                s->identity.start_ticks = le64(v);
                s->identity.pidns = le64(v + 8);
                size_t b = len - 16 < D9_BOOT_ID_MAX ? len - 16 : D9_BOOT_ID_MAX;
                memcpy(s->identity.boot_id, v + 16, b);
                s->identity.boot_id[b] = 0;
                s->has_identity = 1;
            }
            break;
        case D9_TLV_EXE: rc = set_str(&s->exe, v, len); break;
        case D9_TLV_HOSTNAME: rc = set_str(&s->hostname, v, len); break;
        case D9_TLV_CLOCK: rc = set_str(&s->clock, v, len); break;
        case D9_TLV_AGENT_VERSION: rc = set_str(&s->agent_version, v, len); break;
        case D9_TLV_DUMP_REASON: rc = set_str(&s->dump_reason, v, len); break;
        case D9_TLV_CMDLINE:
            rc = set_str(&s->cmdline, v, len);
            s->cmdline_len = len;
            break;
        case D9_TLV_THREADS:
            rc = parse_threads(s, v, len);
            if (rc == 1)
                problem(s, D9_PROBLEM_HEADER, base + i, 0, "malformed threads table");
            break;
        case D9_TLV_SCHEMA:
            if (parse_schema(&s->schema, v, len))
                problem(s, D9_PROBLEM_HEADER, base + i, 0, "malformed schema (using the built-in one)");
            break;
        default: break; /* a newer writer's TLV: skipped */
        }
        if (rc < 0)
            return -1;
        i += 6 + len;
    }
    return 0;
}

/* Validates the header; returns the offset where blocks start (or where to
 * scan for them), 0 when the file is not a segment, (size_t)-1 out of memory. */
static size_t header_fields(struct d9_seg *s, const uint8_t *buf, size_t len)
{
    if (len == 0) {
        snprintf(s->error, sizeof(s->error), "empty file");
        return 0;
    }
    if (len < D9_SEG_MAGIC_LEN || memcmp(buf, D9_SEG_MAGIC, D9_SEG_MAGIC_LEN) != 0) {
        snprintf(s->error, sizeof(s->error), "not a dial9 segment (bad magic)");
        return 0;
    }
    if (len < 16) {
        problem(s, D9_PROBLEM_HEADER, D9_SEG_MAGIC_LEN, 1, "header truncated (%zu bytes)", len);
        return len;
    }
    s->version = le32(buf + 8);
    if (s->version < D9_FORMAT_VERSION_MIN || s->version > D9_FORMAT_VERSION) {
        snprintf(s->error, sizeof(s->error), "unsupported format version %u (this decoder reads %u to %u)",
                 s->version, D9_FORMAT_VERSION_MIN, D9_FORMAT_VERSION);
        return 0;
    }
    uint32_t hlen = le32(buf + 12);
    if (hlen > len - 16) {
        problem(s, D9_PROBLEM_HEADER, 12, 1, "header truncated (%zu of %u bytes)", len - 16, hlen);
        return 16; /* a damaged length could hide blocks: scan for them */
    }
    if (hlen < 4) {
        problem(s, D9_PROBLEM_HEADER, 12, 0, "bad header length %u", hlen);
        return 16;
    }
    const uint8_t *tlv = buf + 16;
    size_t n = hlen - 4;
    if (d9_crc32c(0, tlv, n) != le32(tlv + n))
        problem(s, D9_PROBLEM_HEADER, 16, 0, "header crc mismatch");
    if (parse_tlvs(s, tlv, n, 16) < 0)
        return (size_t)-1;
    return 16 + (size_t)hlen;
}

/* Kind 'r' is version 3's: before it, a schema (the built-in one when the
 * header's is unusable) reads those fields as plain varints. */
static size_t parse_header(struct d9_seg *s, const uint8_t *buf, size_t len)
{
    size_t pos = header_fields(s, buf, len);
    for (unsigned t = 0; s->version < 3 && t < 256; t++)
        for (unsigned f = 0; f < D9_MAX_FIELDS; f++)
            if (s->schema.kinds[t][f] == 'r')
                s->schema.kinds[t][f] = 'u';
    return pos;
}

/* ---- Blocks ------------------------------------------------------------- */

/* hdr_crc covers every header field but itself: bytes 0..19 and 24..39. */
static int block_header_ok(const uint8_t *p)
{
    if (le32(p) != D9_BLOCK_MAGIC)
        return 0;
    uint32_t c = d9_crc32c(0, p, 20);
    return d9_crc32c(c, p + 24, 16) == le32(p + 20);
}

/* Offset of the next verified block header at or after from, or len. */
static size_t find_block(const uint8_t *buf, size_t len, size_t from)
{
    for (size_t p = from; len >= D9_BLOCK_HEADER_SIZE && p <= len - D9_BLOCK_HEADER_SIZE; p++) {
        const uint8_t *q = memchr(buf + p, D9_BLOCK_MAGIC & 0xff, len - D9_BLOCK_HEADER_SIZE + 1 - p);
        if (!q)
            break;
        p = (size_t)(q - buf);
        if (block_header_ok(q))
            return p;
    }
    return len;
}

struct cursor {
    const uint8_t *p, *end;
};

/* How a type's events look once decoded (from the schema, per chunk). */
struct shape {
    uint8_t head[8];             /* the event's bytes type..f: type, nfields, kinds, name_len 0 */
    uint8_t name;                /* 1 + the field whose bytes are the name, 0 none */
    uint64_t mask[D9_EV_FIELDS]; /* of a held value: a 'b' value's length only; 0 past nfields */
};

/* The head is stored as one word. */
_Static_assert(offsetof(struct d9_event, f) - offsetof(struct d9_event, type) == 8, "d9_event head");

/* A version 2 chunk's columns, each read once into values (and so checked
 * to hold them) before any event of the chunk is delivered. */
struct columns {
    const uint8_t *types;
    uint64_t *val; /* the values: deltas, then each (type, field) column */
    size_t val_cap;
    uint32_t count[256]; /* events per type */
    uint32_t next[256];  /* the next event's index into its type's columns */
    /* Set for the types counted; past nfields, a column of at least count values. */
    const uint64_t *field[256][D9_MAX_FIELDS];
    struct shape shape[256]; /* set for the types counted */
};

struct d9_inflater {
    LZ4F_dctx *dctx;
    uint8_t *raw;
    size_t cap;
    struct columns *col; /* a version 2 chunk's columns (30 KiB, and the values) */
};

struct d9_inflater *d9_inflater_new(void)
{
    struct d9_inflater *z = calloc(1, sizeof(*z));
    if (z && !(z->col = calloc(1, sizeof(*z->col)))) {
        free(z);
        return NULL;
    }
    if (z && LZ4F_isError(LZ4F_createDecompressionContext(&z->dctx, LZ4F_VERSION))) {
        free(z->col);
        free(z);
        z = NULL;
    }
    return z;
}

void d9_inflater_free(struct d9_inflater *z)
{
    if (!z)
        return;
    LZ4F_freeDecompressionContext(z->dctx);
    if (z->col)
        free(z->col->val);
    free(z->col);
    free(z->raw);
    free(z);
}

/* Decompresses exactly b->raw_len bytes from one LZ4 frame that spans the
 * whole payload into z->raw. Returns NULL on success, else the reason.
 * A frame's content checksum (agents before 2026-11-28 wrote one) is not
 * computed: d9_scan_segment passes only payloads whose CRC-32C verified. */
static const char *inflate_block(struct d9_inflater *z, const uint8_t *src, const struct d9_block_ref *b)
{
    const LZ4F_decompressOptions_t verified = {.skipChecksums = 1};
    size_t in = 0, out = 0, hint = 1;
    while (hint != 0) {
        size_t src_n = b->payload_len - in, dst_n = b->raw_len - out;
        if (src_n == 0)
            return "lz4 frame ends early";
        hint = LZ4F_decompress(z->dctx, z->raw + out, &dst_n, src + in, &src_n, &verified);
        if (LZ4F_isError(hint))
            return LZ4F_getErrorName(hint);
        in += src_n;
        out += dst_n;
        if (hint != 0 && src_n == 0 && dst_n == 0)
            return "lz4 frame larger than its raw length";
    }
    if (in != b->payload_len)
        return "bytes after the lz4 frame";
    if (out != b->raw_len)
        return "lz4 frame shorter than its raw length";
    return NULL;
}

/* The 8 bytes at p as a little-endian word. */
static inline uint64_t word_at(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The high bit of each byte of w that ends a varint. */
static inline uint64_t varint_ends(uint64_t w) { return ~w & 0x8080808080808080ull; }

static inline int get_varint(struct cursor *c, uint64_t *v)
{
    if (c->p < c->end && *c->p < 0x80) { /* most values: one byte */
        *v = *c->p++;
        return 0;
    }
    /* Up to 8 bytes (targets take 6 or 7) from one word, without a branch
     * per byte (mispredicted as lengths vary): the length from the first
     * end byte, the 7-bit groups packed in pairs, fours, then all. */
    if (c->end - c->p >= 8) {
        uint64_t w = word_at(c->p), ends = varint_ends(w);
        if (ends) {
            unsigned n = ((unsigned)__builtin_ctzll(ends) >> 3) + 1;
            uint64_t x = w & (~0ull >> (64 - 8 * n)) & 0x7f7f7f7f7f7f7f7full;
            x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
            x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
            *v = (x & 0x0fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
            c->p += n;
            return 0;
        }
    }
    size_t n = d9_get_varint(c->p, (size_t)(c->end - c->p), v);
    c->p += n;
    return n ? 0 : -1;
}

/* Steps over count varints as get_varint reads them (-1 when they do not
 * all fit). Locating a chunk's columns steps over every value once; one by
 * one, through the cursor in memory, that was a tenth of the decode
 * thread. Here a word that starts at a value counts its end bytes at once;
 * a word with none (a value over 8 bytes) and the last 7 bytes go one by one. */
static int skip_varints(struct cursor *c, uint64_t count)
{
    const uint8_t *p = c->p;
    while (count && c->end - p >= 8) {
        uint64_t ends = varint_ends(word_at(p));
        if (!ends)
            break;
        uint64_t k = ((ends >> 7) * 0x0101010101010101ull) >> 56; /* end bytes: no popcnt in the base ISA */
        if (k >= count) { /* the last one ends in this word */
            for (; count > 1; count--)
                ends &= ends - 1;
            p += (__builtin_ctzll(ends) >> 3) + 1;
            count = 0;
            break;
        }
        count -= k;
        p += 8 - (__builtin_clzll(ends) >> 3); /* after its last end byte */
    }
    struct cursor l = {.p = p, .end = c->end};
    for (uint64_t v; count; count--)
        if (get_varint(&l, &v) < 0)
            return -1;
    c->p = l.p;
    return 0;
}

/* Steps over the n bytes of a 'b' value; -1 when they are not all there. */
static int skip_bytes(struct cursor *c, uint64_t n)
{
    if (n > (uint64_t)(c->end - c->p))
        return -1;
    c->p += n;
    return 0;
}

/* Decodes field f of kind k from c into ev; the first 'b' field (*named
 * still 0) is the name. Inlined: as a call it was a tenth of the decode
 * thread. Rows are version 1's: no 'r' (parse_header). */
static inline __attribute__((always_inline)) int get_field(struct cursor *c, char k, unsigned f,
                                                           struct d9_event *ev, int *named)
{
    uint64_t v;
    if (get_varint(c, &v) < 0)
        return -1;
    if (k == 'b') {
        const uint8_t *bytes = c->p;
        if (skip_bytes(c, v) < 0)
            return -1;
        if (!*named) {
            *named = 1;
            ev->name_len = (uint8_t)(v < sizeof(ev->name) ? v : sizeof(ev->name));
            memcpy(ev->name, bytes, ev->name_len);
        }
    } else if (k == 's') {
        v = (uint64_t)d9_unzigzag(v);
    }
    if (f < D9_EV_FIELDS) {
        ev->kinds[f] = k;
        ev->f[f] = v;
        ev->nfields = (uint8_t)(f + 1);
    }
    return 0;
}

/* Clears the fields of ev: a short schema reads as zeros, not the previous event. */
static void clear_fields(struct d9_event *ev)
{
    memset(ev->f, 0, sizeof(ev->f));
    ev->nfields = 0;
    ev->name_len = 0;
}

/* The 8 bytes of w (little-endian) as 8 values: SSE2 unpacks with zero,
 * 1.5 instructions a value where shifting and masking took 5. */
static inline void widen8(uint64_t w, uint64_t *out)
{
#ifdef __SSE2__
    __m128i z = _mm_setzero_si128(), b = _mm_cvtsi64_si128((long long)w);
    __m128i h = _mm_unpacklo_epi8(b, z);                                  /* 8 x u16 */
    __m128i lo = _mm_unpacklo_epi16(h, z), hi = _mm_unpackhi_epi16(h, z); /* 4 + 4 x u32 */
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi32(lo, z));
    _mm_storeu_si128((__m128i *)(out + 2), _mm_unpackhi_epi32(lo, z));
    _mm_storeu_si128((__m128i *)(out + 4), _mm_unpacklo_epi32(hi, z));
    _mm_storeu_si128((__m128i *)(out + 6), _mm_unpackhi_epi32(hi, z));
#else
    for (unsigned j = 0; j < 8; j++)
        out[j] = w >> 8 * j & 0xff;
#endif
}

/* Reads count varints into out; -1 when they do not all fit. The cursor
 * is copied: through c, every store to out would reload it. */
static int get_varints(struct cursor *c, uint64_t count, uint64_t *out)
{
    struct cursor l = *c;
    for (uint64_t i = 0; i < count;) {
        if (count - i >= 8 && l.end - l.p >= 8) {
            uint64_t w = word_at(l.p);
            if (!(w & 0x8080808080808080ull)) { /* eight one-byte values at once */
                widen8(w, out + i);
                l.p += 8;
                i += 8;
                continue;
            }
        }
        if (get_varint(&l, &out[i++]) < 0)
            return -1;
    }
    c->p = l.p;
    return 0;
}

/* Reads an 'r' column of count values into out (NULL: only checks it):
 * code 0 then a new value, or the code-th value of the recent list, which
 * starts empty; the value used goes to its front. -1 when cut short or a
 * code names no recent value. The list is local: in the cursor, each move
 * went through memory. */
static int get_recents(struct cursor *c, uint64_t count, uint64_t *out)
{
    struct cursor l = *c;
    uint64_t r[D9_RECENT];
    unsigned nr = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t code, v;
        unsigned at;
        if (nr && count - i >= 8 && l.end - l.p >= 8 && word_at(l.p) == 0x0101010101010101ull) {
            for (unsigned j = 0; out && j < 8; j++) /* eight times the front value: the list stays */
                out[i + j] = r[0];
            l.p += 8;
            i += 7;
            continue;
        }
        if (get_varint(&l, &code) < 0)
            return -1;
        if (code == 0) {
            if (get_varint(&l, &v) < 0)
                return -1;
            at = nr < D9_RECENT ? nr++ : D9_RECENT - 1; /* when full, the oldest goes */
        } else if (code <= nr) {
            at = (unsigned)code - 1;
            v = r[at];
        } else
            return -1;
        for (; at; at--)
            r[at] = r[at - 1];
        r[0] = v;
        if (out)
            out[i] = v;
    }
    c->p = l.p;
    return 0;
}

/* Reads a column of count values of kind k into out ('s' unzigzagged, 'r'
 * resolved, 'b' as the offset of its bytes in raw << 32 | their length:
 * both under D9_BLOCK_MAX_RAW), or steps over it when out is NULL. -1 when
 * they do not all fit (or an 'r' code names no recent value). */
static int get_column(struct cursor *c, const uint8_t *raw, char k, uint64_t count, uint64_t *out)
{
    if (k == 'u' || k == 's') {
        if (!out)
            return skip_varints(c, count);
        if (get_varints(c, count, out) < 0)
            return -1;
        for (uint64_t i = 0; k == 's' && i < count; i++)
            out[i] = (uint64_t)d9_unzigzag(out[i]);
        return 0;
    }
    if (k == 'r')
        return get_recents(c, count, out);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v;
        if (get_varint(c, &v) < 0)
            return -1;
        const uint8_t *at = c->p;
        if (skip_bytes(c, v) < 0)
            return -1;
        if (out)
            out[i] = v | (uint64_t)(at - raw) << 32;
    }
    return 0;
}

/* What parsing one payload needs and reports. */
struct parse {
    struct d9_seg *s;
    const uint8_t *raw;
    d9_event_fn fn;
    void *ctx;
    struct d9_sink *sink; /* instead of fn: events written in place */
    struct columns *col;  /* version 2 scratch (the inflater's) */
    uint32_t nev; /* events delivered (counted when neither fn nor sink) */
    int back;     /* the chunk's ts went back (a delta wrapped): not in ts order */
    int stop;     /* fn's (or sink->chunk's) non-zero return; -1 out of memory */
    char why[96]; /* why the payload is bad */
};

__attribute__((format(printf, 2, 3)))
static int bad(struct parse *ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->why, sizeof(ps->why), fmt, ap);
    va_end(ap);
    return 1;
}

int d9_sink_reserve(struct d9_sink *k, size_t n)
{
    if (k->cap - k->n >= n)
        return 0;
    size_t cap = k->cap ? k->cap : 1024;
    while (cap - k->n < n)
        cap *= 2;
    struct d9_event *ev = realloc(k->ev, cap * sizeof(*ev));
    if (!ev)
        return -1;
    k->ev = ev;
    k->cap = cap;
    return 0;
}

/* Hands ev to fn (or appends it to the sink); 1 when decoding must stop. */
static int deliver(struct parse *ps, const struct d9_event *ev)
{
    ps->nev++;
    struct d9_sink *k = ps->sink;
    if (k) {
        if (d9_sink_reserve(k, 1) < 0)
            return (ps->stop = -1) != 0;
        k->ev[k->n++] = *ev;
        k->names += ev->type == D9_EV_THREAD_NAME;
        return 0;
    }
    return ps->fn && (ps->stop = ps->fn(ps->ctx, ev)) != 0;
}

/* Version 1: a chunk's events as rows, up to its u8 0. 0 ok, 1 bad. */
static int parse_chunk_rows(struct parse *ps, struct cursor *c, struct d9_event *ev, uint64_t ts)
{
    const struct d9_schema *sc = &ps->s->schema;
    for (;;) {
        if (c->p >= c->end)
            return bad(ps, "chunk of tid %u ends without its end marker", ev->tid);
        size_t at = (size_t)(c->p - ps->raw);
        ev->type = *c->p++;
        if (ev->type == 0)
            return 0;
        if (!sc->present[ev->type])
            return bad(ps, "event type %u not in the schema at payload offset %zu", ev->type, at);
        uint64_t delta = 0; /* read only when rc is 0 (GCC under TSan cannot tell) */
        int rc = get_varint(c, &delta), named = 0;
        clear_fields(ev);
        for (unsigned f = 0; rc == 0 && f < sc->nfields[ev->type]; f++)
            rc = get_field(c, sc->kinds[ev->type][f], f, ev, &named);
        if (rc < 0)
            return bad(ps, "event cut short at payload offset %zu", at);
        ts += delta;
        ps->back |= ts < delta;
        ev->ts = ts;
        if (deliver(ps, ev))
            return 0;
    }
}

/* The shape of type t's events, as get_field would leave them. */
static struct shape shape_of(const struct d9_schema *sc, unsigned t)
{
    struct shape h = {.name = 0};
    struct d9_event e = {.type = (uint8_t)t, .nfields = sc->nfields[t] < D9_EV_FIELDS ? sc->nfields[t] : D9_EV_FIELDS};
    for (unsigned f = 0; f < e.nfields; f++) {
        e.kinds[f] = sc->kinds[t][f] == 'r' ? 'u' : sc->kinds[t][f];
        h.mask[f] = sc->kinds[t][f] == 'b' ? UINT32_MAX : UINT64_MAX;
    }
    memcpy(h.head, &e.type, sizeof(h.head));
    for (unsigned f = 0; !h.name && f < sc->nfields[t]; f++)
        if (sc->kinds[t][f] == 'b')
            h.name = (uint8_t)(f + 1);
    return h;
}

/* Reads the columns of a chunk of n events at c into col's values (out
 * NULL: only checks them), leaving c after them. 0 ok, 1 bad, -1 out of memory. */
static int read_columns(struct parse *ps, struct cursor *c, uint32_t tid, uint64_t n, struct columns *col, int keep)
{
    const struct d9_schema *sc = &ps->s->schema;
    if (n == 0 || n > (uint64_t)(c->end - c->p))
        return bad(ps, "chunk of tid %u: bad event count %llu", tid, (unsigned long long)n);
    col->types = c->p;
    c->p += n;
    /* Four tallies: with one, a run of one type chains each count on the
     * store of the one before (a tenth of the payload parse's time). The
     * types are checked on the counts, not per event. */
    uint32_t tally[4][256];
    memset(tally, 0, sizeof(tally));
    uint64_t i = 0;
    for (; n - i >= 4; i += 4) {
        tally[0][col->types[i]]++;
        tally[1][col->types[i + 1]]++;
        tally[2][col->types[i + 2]]++;
        tally[3][col->types[i + 3]]++;
    }
    for (; i < n; i++)
        tally[i & 3][col->types[i]]++;
    uint64_t need = n;
    int unknown = 0;
    for (unsigned t = 0; t < 256; t++) {
        col->count[t] = tally[0][t] + tally[1][t] + tally[2][t] + tally[3][t];
        col->next[t] = 0;
        need += (uint64_t)col->count[t] * sc->nfields[t];
        unknown |= col->count[t] && (t == 0 || !sc->present[t]);
    }
    for (i = 0; unknown; i++) /* the first one is named */
        if (col->types[i] == 0 || !sc->present[col->types[i]])
            return bad(ps, "chunk of tid %u: event type %u not in the schema", tid, col->types[i]);
    /* Each value takes a byte at least: a damaged count cannot ask for more. */
    if (need > (uint64_t)(c->end - c->p))
        need = (uint64_t)(c->end - c->p);
    if (keep && col->val_cap < need) {
        uint64_t *v = realloc(col->val, need * sizeof(*v));
        if (!v)
            return -1;
        col->val = v;
        col->val_cap = need;
    }
    uint64_t *out = keep ? col->val : NULL;
    if (get_column(c, ps->raw, 'u', n, out) < 0)
        return bad(ps, "chunk of tid %u: timestamp column cut short", tid);
    out = out ? out + n : NULL;
    for (unsigned t = 1; t < 256; t++) {
        if (!col->count[t])
            continue;
        col->shape[t] = shape_of(sc, t);
        for (unsigned f = 0; f < sc->nfields[t]; f++) {
            col->field[t][f] = out;
            if (get_column(c, ps->raw, sc->kinds[t][f], col->count[t], out) < 0)
                return bad(ps, "chunk of tid %u: field %u column of type %u cut short", tid, f + 1, t);
            out = out ? out + col->count[t] : NULL;
        }
        for (unsigned f = sc->nfields[t]; f < D9_EV_FIELDS; f++)
            col->field[t][f] = col->val; /* the deltas: read, masked to 0 */
    }
    return 0;
}

/* Fills e, the i-th event of the chunk read into col, whose ts is given. */
static inline void put_event(struct d9_event *e, const struct parse *ps, const struct columns *col, uint64_t i,
                             uint64_t ts)
{
    unsigned t = col->types[i];
    const struct shape *h = &col->shape[t];
    uint32_t k = col->next[t];
    e->ts = ts;
    memcpy(&e->type, h->head, sizeof(h->head));
#pragma GCC unroll 4
    for (unsigned f = 0; f < D9_EV_FIELDS; f++) /* no branch on nfields: mispredicted as types mix */
        e->f[f] = col->field[t][f][k] & h->mask[f];
    if (h->name) {
        uint64_t v = col->field[t][h->name - 1][k];
        uint32_t len = (uint32_t)v;
        e->name_len = (uint8_t)(len < sizeof(e->name) ? len : sizeof(e->name));
        memcpy(e->name, ps->raw + (v >> 32), e->name_len);
    }
}

/* Version 2: a chunk of columns. A bad chunk delivers none of its events. 0 ok, 1 bad. */
static int parse_chunk_columns(struct parse *ps, struct cursor *c, struct d9_event *ev, uint64_t ts,
                               struct columns *col)
{
    uint64_t n;
    if (get_varint(c, &n) < 0)
        return bad(ps, "chunk of tid %u: no event count", ev->tid);
    int keep = ps->fn || ps->sink;
    int rc = read_columns(ps, c, ev->tid, n, col, keep);
    if (rc > 0)
        return 1;
    struct d9_sink *k = ps->sink;
    if (rc < 0 || (k && d9_sink_reserve(k, n) < 0)) {
        ps->stop = -1;
        return 0;
    }
    if (!keep) {
        ps->nev += (uint32_t)n;
        return 0;
    }
    /* Written straight into the sink: no copy, no call per event. */
    const uint64_t *delta = col->val;
    if (k) {
        struct d9_event *dst = k->ev + k->n;
        int back = 0;
        for (uint64_t i = 0; i < n; i++) {
            ts += delta[i];
            back |= ts < delta[i];
            dst[i].pid = ev->pid;
            dst[i].tid = ev->tid;
            put_event(&dst[i], ps, col, i, ts);
            col->next[col->types[i]]++;
        }
        ps->nev += (uint32_t)n;
        ps->back |= back;
        k->n += n;
        k->names += col->count[D9_EV_THREAD_NAME];
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        ts += delta[i];
        put_event(ev, ps, col, i, ts);
        col->next[col->types[i]]++;
        if (deliver(ps, ev))
            return 0;
    }
    return 0;
}

/* Parses a decompressed payload, delivering events. Returns 0 ok, 1 bad
 * structure (reason in ps->why; the events of the chunks before it were
 * delivered). When fn asks to stop, ps->stop holds its return. */
static int parse_payload(struct parse *ps, size_t n)
{
    struct cursor c = {.p = ps->raw, .end = ps->raw + n};
    struct d9_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.pid = ps->s->pid;
    for (;;) {
        uint64_t tid, ts;
        if (get_varint(&c, &tid) < 0)
            return bad(ps, "payload ends without its end marker");
        if (tid == 0)
            break;
        if (tid > UINT32_MAX || get_varint(&c, &ts) < 0)
            return bad(ps, "bad chunk header at payload offset %zu", (size_t)(c.p - ps->raw));
        ev.tid = (uint32_t)tid;
        size_t from = ps->sink ? ps->sink->n : 0;
        ps->back = 0;
        int rc = ps->s->version == 1 ? parse_chunk_rows(ps, &c, &ev, ts) : parse_chunk_columns(ps, &c, &ev, ts, ps->col);
        if (!ps->stop && ps->sink && ps->sink->n > from)
            ps->stop = ps->sink->chunk(ps->sink->ctx, from, ps->back);
        if (rc || ps->stop)
            return rc;
    }
    if (c.p != c.end)
        return bad(ps, "%zu bytes after the end marker", (size_t)(c.end - c.p));
    return 0;
}

void d9_seg_block_lost(struct d9_seg *s, const struct d9_block_ref *b, const char *why)
{
    problem(s, b->index, b->off, 0, "%s", why);
    s->blocks--;
    s->events -= b->events;
    s->skipped += D9_BLOCK_HEADER_SIZE + (uint64_t)b->payload_len;
}

/* d9_decode_block and d9_decode_block_into: events to fn or to sink. */
static int decode_block(struct d9_seg *s, struct d9_inflater *z, const struct d9_block_ref *b, const uint8_t *payload,
                        struct parse *ps)
{
    if (z->cap < b->raw_len + 1u) {
        uint8_t *r = realloc(z->raw, b->raw_len + 1u);
        if (!r)
            return -1;
        z->raw = r;
        z->cap = b->raw_len + 1u;
    }
    char why[96];
    const char *lz4_err = inflate_block(z, payload, b);
    if (lz4_err) { /* nothing of it is usable */
        LZ4F_resetDecompressionContext(z->dctx);
        snprintf(why, sizeof(why), "lz4: %s", lz4_err);
        d9_seg_block_lost(s, b, why);
        return 0;
    }
    ps->s = s;
    ps->raw = z->raw;
    ps->col = z->col;
    int st = parse_payload(ps, b->raw_len);
    if (ps->stop)
        return ps->stop;
    if (st == 0 && ps->nev != b->events)
        st = bad(ps, "block holds %u events, header says %u", ps->nev, b->events);
    if (st) { /* crc was fine: the writer's bytes, kept up to here */
        problem(s, b->index, b->off, 0, "%s", ps->why);
        s->blocks--;
        s->events = s->events - b->events + ps->nev;
    }
    return 0;
}

int d9_decode_block(struct d9_seg *s, struct d9_inflater *z, const struct d9_block_ref *b, const uint8_t *payload,
                    d9_event_fn fn, void *ctx)
{
    struct parse ps = {.fn = fn, .ctx = ctx};
    return decode_block(s, z, b, payload, &ps);
}

int d9_decode_block_into(struct d9_seg *s, struct d9_inflater *z, const struct d9_block_ref *b, const uint8_t *payload,
                         struct d9_sink *sink)
{
    struct parse ps = {.sink = sink};
    return decode_block(s, z, b, payload, &ps);
}

int d9_scan_segment(const uint8_t *buf, size_t len, struct d9_seg *s, d9_block_fn fn, void *ctx)
{
    memset(s, 0, sizeof(*s));
    d9_schema_builtin(&s->schema);
    size_t pos = parse_header(s, buf, len);
    if (pos == (size_t)-1)
        return -1;
    if (pos == 0) {
        s->status = D9_SEG_INVALID;
        return 0;
    }
    if (s->nproblems && s->problems[0].block == D9_PROBLEM_HEADER && pos == 16) {
        size_t next = find_block(buf, len, pos); /* header length unusable */
        s->skipped += next - pos;
        pos = next;
    }
    for (uint32_t index = 0; pos < len; index++) {
        size_t left = len - pos;
        const uint8_t *h = buf + pos;
        const char *bad = NULL;
        if (left < D9_BLOCK_HEADER_SIZE) {
            problem(s, index, pos, 1, "block header truncated (%zu of %d bytes)", left, D9_BLOCK_HEADER_SIZE);
            s->skipped += left;
            break;
        }
        struct d9_block_ref b = {pos,         index,       le32(h + 4),  le32(h + 8),
                                 le32(h + 16), le32(h + 12), le64(h + 24), le64(h + 32)};
        if (le32(h) != D9_BLOCK_MAGIC)
            bad = "bad block magic";
        else if (!block_header_ok(h))
            bad = "block header crc mismatch";
        else if (b.payload_len > left - D9_BLOCK_HEADER_SIZE) {
            size_t next = find_block(buf, len, pos + 1);
            if (next == len) { /* nothing verifies after it: the file ends here */
                problem(s, index, pos, 1, "block truncated (%zu of %u payload bytes)",
                        left - D9_BLOCK_HEADER_SIZE, b.payload_len);
                s->skipped += left;
                break;
            }
            bad = "block overlaps the next block";
        } else if (b.raw_len > D9_BLOCK_MAX_RAW)
            bad = "raw length over the limit";
        else if (d9_crc32c(0, h + D9_BLOCK_HEADER_SIZE, b.payload_len) != b.crc)
            bad = "payload crc mismatch";
        if (bad) { /* resync on the next header that verifies */
            problem(s, index, pos, 0, "%s", bad);
            size_t next = find_block(buf, len, pos + 1);
            s->skipped += next - pos;
            pos = next;
            continue;
        }
        s->blocks++;
        s->events += b.events;
        int rc = fn ? fn(ctx, &b, h + D9_BLOCK_HEADER_SIZE) : 0;
        if (rc)
            return rc;
        pos += D9_BLOCK_HEADER_SIZE + (size_t)b.payload_len;
    }
    return 0;
}

struct read_all {
    struct d9_seg *s;
    struct d9_inflater *z;
    d9_event_fn fn;
    void *ctx;
};

static int decode_now(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct read_all *r = ctx;
    return d9_decode_block(r->s, r->z, b, payload, r->fn, r->ctx);
}

int d9_read_segment(const uint8_t *buf, size_t len, struct d9_seg *s, d9_event_fn fn, void *ctx)
{
    struct read_all r = {s, d9_inflater_new(), fn, ctx};
    if (!r.z) {
        memset(s, 0, sizeof(*s));
        return -1;
    }
    int rc = d9_scan_segment(buf, len, s, decode_now, &r);
    d9_inflater_free(r.z);
    return rc;
}

void d9_seg_free(struct d9_seg *s)
{
    free(s->exe);
    free(s->hostname);
    free(s->clock);
    free(s->agent_version);
    free(s->dump_reason);
    free(s->cmdline);
    free(s->threads);
    s->exe = s->hostname = s->clock = s->agent_version = s->dump_reason = s->cmdline = NULL;
    s->threads = NULL;
}
