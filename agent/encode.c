/* encode.c - payload, block and header encoding (see encode.h and the
 * format description in dial9_format.h). Table-driven by D9_SCHEMA_TABLE. */
#include "encode.h"

#include <lz4frame.h>
#include <string.h>

#include "app_names.h"

/* Bytes kept free in a payload for the block end (varint 0). */
#define D9_ENC_RESERVE 1

static const struct d9_schema_entry schema[D9_SCHEMA_ENTRIES] = D9_SCHEMA_TABLE;
_Static_assert(D9_SCHEMA_ENTRIES == D9_EV_TYPE_MAX - 1, "one schema entry per type, in order");
_Static_assert(D9_ENC_CHUNK_MAX <= 65536, "chunk positions are u16");

/* The table lists types 1, 2, ... in order: entry type - 1. */
static const struct d9_schema_entry *schema_of(uint8_t type)
{
    if (type == 0 || type > D9_SCHEMA_ENTRIES || schema[type - 1].type != type)
        return NULL;
    return &schema[type - 1];
}

/* Bytes of v as a LEB128 varint: 7 bits a byte. */
static inline size_t varint_len(uint64_t v)
{
    return v < 0x80 ? 1 : (size_t)(64 - __builtin_clzll(v) + 6) / 7;
}

/* The most column bytes an event of schema s can take: a 10-byte delta and
 * fields ('r' 1 + 10, 'b' up to 1 + 16, others 10). */
static uint8_t event_bound(const struct d9_schema_entry *s)
{
    size_t b = 1 + 10;
    for (size_t f = 0; f < D9_MAX_FIELDS && s->kinds[f]; f++)
        b += s->kinds[f] == 'b' ? 17 : s->kinds[f] == 'r' ? 11 : 10;
    return (uint8_t)b;
}

/* Field by field: a compound literal would clear the 32 KiB chunk array. */
void d9_enc_init(struct d9_enc *e, uint8_t *buf, size_t cap)
{
    for (size_t t = 0; t <= D9_SCHEMA_ENTRIES; t++) {
        const struct d9_schema_entry *s = schema_of((uint8_t)t);
        e->bound[t] = s ? event_bound(s) : 0;
    }
    e->buf = buf;
    e->cap = cap;
    e->len = 0;
    e->events = 0;
    e->first_ts = UINT64_MAX;
    e->last_ts = e->prev_ts = 0;
    e->in_chunk = 0;
    e->tid = e->n = 0;
    e->base_ts = 0;
    e->chunk_hdr = e->chunk_bytes = e->bound_bytes = 0;
    e->exact_n = 0;
    e->room = 0;
}

/* Bytes the open chunk takes once written (at most, while bound_bytes is
 * not 0), with add more column bytes and events more events. */
static size_t chunk_size(const struct d9_enc *e, size_t add, uint32_t events)
{
    return e->chunk_hdr + varint_len(e->n + events) + e->chunk_bytes + e->bound_bytes + add;
}

static int fits(const struct d9_enc *e, size_t chunk)
{
    return e->len + chunk + D9_ENC_RESERVE <= e->cap;
}

int d9_enc_begin_chunk(struct d9_enc *e, uint32_t tid, uint64_t base_ts)
{
    if (e->in_chunk)
        d9_enc_end_chunk(e);
    if (tid == 0)
        return -1;
    e->tid = tid;
    e->base_ts = base_ts;
    e->n = 0;
    e->chunk_hdr = varint_len(tid) + varint_len(base_ts);
    e->chunk_bytes = e->bound_bytes = 0;
    e->exact_n = 0;
    if (!fits(e, chunk_size(e, 2, 1))) /* not even one event would fit */
        return -1;
    size_t used = e->len + e->chunk_hdr + 2 + D9_ENC_RESERVE;
    e->room = used < e->cap ? e->cap - used : 0;
    e->prev_ts = base_ts;
    e->in_chunk = 1;
    return 0;
}

static inline uint64_t source_value(const struct d9_raw_event *ev, char src)
{
    switch (src) {
    case 'c': return ev->call;
    case 'a': return ev->a;
    case 'b': return ev->b;
    case 'l': return ev->len;
    case 'x': return (uint64_t)(int64_t)ev->x;
    default: return 0;
    }
}

/* The bytes of a 'b' field: the name travels in a then b, len bytes of it;
 * an application event's is the name registered under its id in a; another
 * source is its 8 little-endian bytes. Returns the length. */
static size_t field_bytes(const struct d9_raw_event *ev, char src, uint8_t bytes[16])
{
    if (src == 'n') {
        memcpy(bytes, &ev->a, 8);
        memcpy(bytes + 8, &ev->b, 8);
        return ev->len < 16 ? ev->len : 16;
    }
    if (src == 'i')
        return d9_app_name(ev->a, bytes);
    uint64_t v = source_value(ev, src);
    for (size_t i = 0; i < 8; i++)
        bytes[i] = (uint8_t)(v >> (8 * i));
    return 8;
}

static uint64_t field_varint(const struct d9_raw_event *ev, char k, char src)
{
    uint64_t v = source_value(ev, src);
    return k == 's' ? d9_zigzag((int64_t)v) : v;
}

/* Encoded size of one field of kind k from source src; for 'r' the most it
 * can take (a new value), the column is coded when the chunk ends. */
static size_t field_len(const struct d9_raw_event *ev, char k, char src)
{
    if (k == 'b') {
        uint8_t bytes[16];
        size_t len = field_bytes(ev, src, bytes);
        return varint_len(len) + len;
    }
    return (k == 'r') + varint_len(field_varint(ev, k, src));
}

/* Encodes a 'b' field from source src at p; returns bytes written. */
static size_t put_bytes_field(uint8_t *p, const struct d9_raw_event *ev, char src)
{
    uint8_t bytes[16];
    size_t len = field_bytes(ev, src, bytes);
    size_t n = d9_put_varint(p, len);
    memcpy(p + n, bytes, len);
    return n + len;
}

/* Column bytes of an event of schema s whose delta is delta. */
static size_t event_len(const struct d9_schema_entry *s, const struct d9_raw_event *ev, uint64_t delta)
{
    size_t add = 1 + varint_len(delta); /* type byte, delta */
    for (size_t f = 0; f < D9_MAX_FIELDS && s->kinds[f]; f++)
        add += field_len(ev, s->kinds[f], s->sources[f]);
    return add;
}

/* Replaces the bound of events exact_n..n with their exact sizes. */
static void settle(struct d9_enc *e)
{
    for (uint32_t i = e->exact_n; i < e->n; i++) {
        const struct d9_raw_event *c = &e->chunk[i];
        e->chunk_bytes += event_len(schema_of(c->type), c, c->ts - (i ? e->chunk[i - 1].ts : e->base_ts));
    }
    e->exact_n = e->n;
    e->bound_bytes = 0;
}

int d9_enc_event_full(struct d9_enc *e, const struct d9_raw_event *ev)
{
    if (!e->in_chunk)
        return -1;
    const struct d9_schema_entry *s = schema_of(ev->type);
    if (!s)
        return 0;
    /* A full chunk is written; the run goes on in a new chunk of the same thread. */
    if (e->n == D9_ENC_CHUNK_MAX && d9_enc_begin_chunk(e, e->tid, e->prev_ts) < 0)
        return -1;
    uint64_t ts = ev->ts > e->prev_ts ? ev->ts : e->prev_ts; /* clamp: deltas are unsigned */
    /* Most events: the bound fits, so the exact size does too (the same
     * block as exact sizes give, without working them out per event). */
    size_t bound = e->bound[ev->type];
    if (e->chunk_bytes + e->bound_bytes + bound <= e->room || fits(e, chunk_size(e, bound, 1))) {
        e->bound_bytes += bound;
    } else {
        settle(e);
        size_t add = event_len(s, ev, ts - e->prev_ts);
        if (!fits(e, chunk_size(e, add, 1)))
            return -1;
        e->chunk_bytes += add;
        e->exact_n = e->n + 1;
    }
    struct d9_enc_run r; /* a run of one: encode.h's last step */
    d9_enc_run_begin(e, &r);
    d9_enc_run_put(e, &r, ev);
    d9_enc_run_end(e, &r);
    return 0;
}

/* The column writers below take the chunk's arrays as restrict locals: the
 * output is bytes, which may alias anything, and would otherwise make the
 * compiler reload e's fields after every byte stored. */
#define D9_COL_ARGS uint8_t *restrict p, const struct d9_raw_event *restrict ch, const uint16_t *restrict ord

/* An 'r' column (dial9_format.h): each value as its place in the list of
 * recent values, or 0 and the value; it moves to the front either way. */
static inline __attribute__((always_inline)) size_t put_recent_column(D9_COL_ARGS, char src, uint32_t from, uint32_t to)
{
    uint64_t recent[D9_RECENT];
    unsigned nrecent = 0;
    size_t n = 0;
    for (uint32_t i = from; i < to; i++) {
        uint64_t v = source_value(&ch[ord[i]], src);
        unsigned at = 0;
        while (at < nrecent && recent[at] != v)
            at++;
        if (at < nrecent) {
            p[n++] = (uint8_t)(at + 1);
        } else {
            p[n++] = 0;
            n += d9_put_varint(p + n, v);
            at = nrecent < D9_RECENT ? nrecent++ : D9_RECENT - 1;
        }
        for (; at > 0; at--) /* at most D9_RECENT - 1 moves: no memmove call */
            recent[at] = recent[at - 1];
        recent[0] = v;
    }
    return n;
}

/* A column of varints (kind k 'u' or 's') from source src. */
static inline __attribute__((always_inline)) size_t put_varint_column(D9_COL_ARGS, char k, char src, uint32_t from,
                                                                      uint32_t to)
{
    size_t n = 0;
    for (uint32_t i = from; i < to; i++) {
        uint64_t v = source_value(&ch[ord[i]], src);
        n += d9_put_varint(p + n, k == 's' ? d9_zigzag((int64_t)v) : v);
    }
    return n;
}

/* One field column: field f of the events ord[from..to) (all of type s->type). */
static size_t put_column(D9_COL_ARGS, const struct d9_schema_entry *s, size_t f, uint32_t from, uint32_t to)
{
    char k = s->kinds[f], src = s->sources[f];
    if (k == 'r') /* every 'r' field's source is 'a' (dial9_format.h): picked once, as for the varints below */
        return src == 'a' ? put_recent_column(p, ch, ord, 'a', from, to) : put_recent_column(p, ch, ord, src, from, to);
    size_t n = 0;
    if (k == 'b') {
        for (uint32_t i = from; i < to; i++)
            n += put_bytes_field(p + n, &ch[ord[i]], src);
        return n;
    }
    /* A varint column: each call below inlines source_value with a constant
     * source and kind, so the field and the zigzag are picked once per
     * column, not per value. (The kind picked here, the 'r' source above
     * and the one-pass type and delta columns took 12-14 instructions an
     * event off the encoding: docs/BENCH-HISTORY.md, session 50.) */
#define D9_BY_SRC(K)                                                           \
    switch (src) {                                                             \
    case 'c': return put_varint_column(p, ch, ord, K, 'c', from, to);          \
    case 'a': return put_varint_column(p, ch, ord, K, 'a', from, to);          \
    case 'b': return put_varint_column(p, ch, ord, K, 'b', from, to);          \
    case 'l': return put_varint_column(p, ch, ord, K, 'l', from, to);          \
    case 'x': return put_varint_column(p, ch, ord, K, 'x', from, to);          \
    default: return put_varint_column(p, ch, ord, K, 0, from, to);             \
    }
    if (k == 's') {
        D9_BY_SRC('s')
    }
    D9_BY_SRC('u')
#undef D9_BY_SRC
}

/* The chunk layout (docs/FORMAT.md): header, type column, delta column,
 * then per type present (ascending code) one column per field. Like
 * values side by side is what lets LZ4 find them. */
void d9_enc_end_chunk(struct d9_enc *e)
{
    if (!e->in_chunk)
        return;
    e->in_chunk = 0;
    const uint32_t cn = e->n;
    if (!cn)
        return;
    const struct d9_raw_event *restrict ch = e->chunk;
    uint16_t *restrict ord = e->order;
    /* ts rise within a chunk (clamped): its first and last are its extremes. */
    if (ch[0].ts < e->first_ts)
        e->first_ts = ch[0].ts;
    if (ch[cn - 1].ts > e->last_ts)
        e->last_ts = ch[cn - 1].ts;
    uint8_t *restrict p = e->buf + e->len;
    size_t n = d9_put_varint(p, e->tid);
    n += d9_put_varint(p + n, e->base_ts);
    n += d9_put_varint(p + n, cn);
    /* The type column and the delta column in one pass, each type counted
     * as it goes: at[t + 1] is type t's count, then (summed) where its
     * slice of ord starts. Events of an unknown type never enter a chunk,
     * so t + 1 <= D9_EV_TYPE_MAX. */
    uint32_t at[D9_EV_TYPE_MAX + 1] = {0}, start[D9_EV_TYPE_MAX + 1];
    uint8_t *restrict types = p + n;
    uint64_t prev = e->base_ts;
    n += cn;
    for (uint32_t i = 0; i < cn; i++) {
        types[i] = ch[i].type;
        at[ch[i].type + 1]++;
        n += d9_put_varint(p + n, ch[i].ts - prev);
        prev = ch[i].ts;
    }
    /* Grouped by type (ascending code), chunk order kept within a type. */
    for (unsigned t = 1; t <= D9_EV_TYPE_MAX; t++)
        at[t] += at[t - 1];
    memcpy(start, at, sizeof(start));
    for (uint32_t i = 0; i < cn; i++)
        ord[at[ch[i].type]++] = (uint16_t)i;
    for (unsigned t = 1; t < D9_EV_TYPE_MAX; t++) {
        const struct d9_schema_entry *s = schema_of((uint8_t)t);
        for (size_t f = 0; s && start[t] < start[t + 1] && f < D9_MAX_FIELDS && s->kinds[f]; f++)
            n += put_column(p + n, ch, ord, s, f, start[t], start[t + 1]);
    }
    e->len += n; /* <= chunk_size(e, 0, 0) ('r' columns take less): room was checked per event */
    e->n = 0;
}

size_t d9_enc_finish(struct d9_enc *e)
{
    d9_enc_end_chunk(e);
    if (e->len < e->cap)
        e->buf[e->len++] = 0;
    return e->len;
}

/* ---- Blocks ------------------------------------------------------------- */

/* No content checksum: the block's CRC-32C of the compressed bytes is what
 * a reader verifies before it decompresses, and LZ4 decoding of verified
 * bytes gives the writer's payload back. The frame's xxHash32 of the raw
 * payload checked the same bytes a second time: 15 of the writer's ~190
 * instructions an event (docs/BENCH-HISTORY.md, session 23). */
static LZ4F_preferences_t lz4_prefs(size_t raw_len)
{
    LZ4F_preferences_t p;
    memset(&p, 0, sizeof(p));
    p.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    p.frameInfo.contentSize = raw_len;
    return p;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t d9_block_bound(size_t raw_len)
{
    LZ4F_preferences_t p = lz4_prefs(raw_len);
    return D9_BLOCK_HEADER_SIZE + LZ4F_compressFrameBound(raw_len, &p);
}

size_t d9_block_build(const struct d9_enc *e, uint8_t *out, size_t cap)
{
    if (e->len > D9_BLOCK_MAX_RAW || cap < d9_block_bound(e->len))
        return 0;
    LZ4F_preferences_t p = lz4_prefs(e->len);
    size_t z = LZ4F_compressFrame(out + D9_BLOCK_HEADER_SIZE, cap - D9_BLOCK_HEADER_SIZE, e->buf, e->len, &p);
    if (LZ4F_isError(z))
        return 0;
    d9_block_seal(e, out, z);
    return D9_BLOCK_HEADER_SIZE + z;
}

void d9_block_seal(const struct d9_enc *e, uint8_t *out, size_t z)
{
    uint8_t *h = out;
    put_le32(h + 0, D9_BLOCK_MAGIC);
    put_le32(h + 4, (uint32_t)z);
    put_le32(h + 8, (uint32_t)e->len);
    put_le32(h + 12, d9_crc32c(0, out + D9_BLOCK_HEADER_SIZE, z));
    put_le32(h + 16, e->events);
    put_le64(h + 24, e->events ? e->first_ts : 0);
    put_le64(h + 32, e->events ? e->last_ts : 0);
    uint32_t hc = d9_crc32c(0, h, 20);
    put_le32(h + 20, d9_crc32c(hc, h + 24, 16));
}

/* ---- Segment header ----------------------------------------------------- */

/* Bounded writer: once a write does not fit, err sticks and nothing more is written. */
struct wb {
    uint8_t *p;
    size_t cap, len;
    int err;
};

static uint8_t *wb_take(struct wb *w, size_t n)
{
    if (w->err || n > w->cap - w->len) {
        w->err = 1;
        return NULL;
    }
    uint8_t *r = w->p + w->len;
    w->len += n;
    return r;
}

static void wb_bytes(struct wb *w, const void *b, size_t n)
{
    uint8_t *d = wb_take(w, n);
    if (d && n)
        memcpy(d, b, n);
}

static void wb_u8(struct wb *w, uint8_t v) { wb_bytes(w, &v, 1); }

static void wb_u16(struct wb *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    wb_bytes(w, b, 2);
}

static void wb_u32(struct wb *w, uint32_t v)
{
    uint8_t *d = wb_take(w, 4);
    if (d)
        put_le32(d, v);
}

static void wb_u64(struct wb *w, uint64_t v)
{
    uint8_t *d = wb_take(w, 8);
    if (d)
        put_le64(d, v);
}

/* A TLV whose value is written after tlv_open; tlv_close fills in the length. */
static size_t tlv_open(struct wb *w, uint16_t tag)
{
    wb_u16(w, tag);
    wb_u32(w, 0);
    return w->len;
}

static void tlv_close(struct wb *w, size_t start)
{
    if (!w->err)
        put_le32(w->p + start - 4, (uint32_t)(w->len - start));
}

static void tlv_bytes(struct wb *w, uint16_t tag, const void *b, size_t n)
{
    size_t t = tlv_open(w, tag);
    wb_bytes(w, b, b ? n : 0);
    tlv_close(w, t);
}

static void tlv_str(struct wb *w, uint16_t tag, const char *s)
{
    tlv_bytes(w, tag, s, s ? strlen(s) : 0);
}

size_t d9_header_build(uint8_t *out, size_t cap, const struct d9_header_info *h)
{
    struct wb w = {.p = out, .cap = cap};
    wb_bytes(&w, D9_SEG_MAGIC, D9_SEG_MAGIC_LEN);
    wb_u32(&w, D9_FORMAT_VERSION);
    wb_u32(&w, 0); /* header_len, filled in below */
    size_t tlvs = w.len;

    size_t t = tlv_open(&w, D9_TLV_PID);
    wb_u32(&w, h->pid);
    tlv_close(&w, t);
    tlv_str(&w, D9_TLV_EXE, h->exe);
    tlv_bytes(&w, D9_TLV_CMDLINE, h->cmdline, h->cmdline_len);
    tlv_str(&w, D9_TLV_HOSTNAME, h->hostname);
    tlv_str(&w, D9_TLV_CLOCK, h->clock);
    t = tlv_open(&w, D9_TLV_ANCHOR);
    wb_u64(&w, h->anchor_real_ns);
    wb_u64(&w, h->anchor_mono_ns);
    tlv_close(&w, t);
    t = tlv_open(&w, D9_TLV_SEQ);
    wb_u32(&w, h->seq);
    tlv_close(&w, t);
    t = tlv_open(&w, D9_TLV_THREADS);
    for (uint32_t i = 0; i < h->nthreads; i++) {
        size_t n = strnlen(h->names[i], 16);
        wb_u32(&w, h->tids[i]);
        wb_u8(&w, (uint8_t)n);
        wb_bytes(&w, h->names[i], n);
    }
    tlv_close(&w, t);
    t = tlv_open(&w, D9_TLV_SCHEMA);
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        size_t n = strlen(schema[i].kinds);
        wb_u8(&w, schema[i].type);
        wb_u8(&w, (uint8_t)n);
        wb_bytes(&w, schema[i].kinds, n);
    }
    tlv_close(&w, t);
    tlv_str(&w, D9_TLV_AGENT_VERSION, h->agent_version);
    if (h->identity) {
        t = tlv_open(&w, D9_TLV_PROCESS);
        wb_u64(&w, h->identity->start_ticks);
        wb_u64(&w, h->identity->pidns);
        wb_bytes(&w, h->identity->boot_id, strnlen(h->identity->boot_id, D9_BOOT_ID_MAX));
        tlv_close(&w, t);
    }

    if (w.err)
        return 0;
    uint32_t crc = d9_crc32c(0, out + tlvs, w.len - tlvs);
    wb_u32(&w, crc);
    if (w.err)
        return 0;
    put_le32(out + D9_SEG_MAGIC_LEN + 4, (uint32_t)(w.len - tlvs));
    return w.len;
}
