/* encode.h - builds segment bytes: block payloads (chunks of events encoded
 * with the schema of dial9_format.h, laid out in columns), compressed
 * blocks, segment headers.
 * Pure: no agent globals, no allocation (safe in the crash handler), so the
 * unit tests and the decoder's tests link it to build segments. */
#ifndef DIAL9_ENCODE_H
#define DIAL9_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "dial9_format.h"

/* Events a chunk holds at most: the open chunk is buffered here and written
 * as columns when it ends; a longer run of one thread continues in a new
 * chunk. 1024 * 32 bytes = 32 KiB, in the struct so nothing is allocated
 * (4096 saved only 0.5% more on the demo). */
#define D9_ENC_CHUNK_MAX 1024

/* An uncompressed block payload being built in a caller-owned buffer. */
struct d9_enc {
    uint8_t *buf;
    size_t cap, len;   /* bytes: len = written chunks, the open one excluded */
    uint32_t events;   /* events encoded so far (the open chunk's included) */
    uint64_t first_ts, last_ts; /* ns: smallest / largest event ts (UINT64_MAX / 0 while empty) */
    uint64_t prev_ts;  /* ns: ts the next delta is taken from */
    int in_chunk;
    /* The open chunk: its events (ts already clamped) and their encoded size. */
    uint32_t tid, n;
    uint64_t base_ts;
    size_t chunk_hdr;   /* bytes of its varint tid and base_ts */
    /* Column bytes of the n events (types, deltas, fields): exact for the
     * first exact_n, an upper bound (per type) for the rest. Exact sizes
     * are worked out only when the bound no longer fits the block. */
    size_t chunk_bytes, bound_bytes;
    uint32_t exact_n;
    /* Column bytes the open chunk surely has room for: cap less the chunk's
     * start, the block end and 2 bytes of event count (a chunk holds at
     * most 1024 events). Below it, no exact size is worked out per event. */
    size_t room;
    uint8_t bound[D9_SCHEMA_ENTRIES + 1]; /* by type: the most column bytes of one event; 0 unknown */
    struct d9_raw_event chunk[D9_ENC_CHUNK_MAX];
    uint16_t order[D9_ENC_CHUNK_MAX]; /* scratch of d9_enc_end_chunk: chunk positions by type */
};

/* Starts an empty block payload in buf[0..cap). */
void d9_enc_init(struct d9_enc *e, uint8_t *buf, size_t cap);
/* Starts a chunk for thread tid (non-zero); deltas start from base_ts (ns).
 * Ends the open chunk if any. 0 ok, -1 no room (or tid 0). */
int d9_enc_begin_chunk(struct d9_enc *e, uint32_t tid, uint64_t base_ts);
/* Appends one event to the open chunk. A ts below the previous one is
 * clamped (delta 0). Unknown types are skipped (0). 0 ok, -1 no room or no
 * open chunk: the caller ends the chunk and flushes the block. Always keeps
 * room for the chunk's columns and the block end. */
int d9_enc_event_full(struct d9_enc *e, const struct d9_raw_event *ev);

/* The every-event case, for a run of events: the open chunk's count, bound
 * bytes and last ts in the caller's local, not in e. The writer frees a
 * ring entry (an atomic store) between two events, after which the
 * compiler reloads every member of e it reads: kept in a local instead,
 * the writer's drain costs 11 instructions an event less, 85 -> 74
 * (docs/BENCH-HISTORY.md, session 66). e's own members stay as they were
 * until d9_enc_run_end, which the caller makes before anything else reads
 * or changes e (d9_enc_event_full, d9_enc_end_chunk). */
struct d9_enc_run {
    uint32_t n;          /* the chunk's events */
    uint32_t n0;         /* ... when the run began: it put n - n0 */
    size_t bound_bytes;  /* as e's */
    size_t limit;        /* bound_bytes may grow up to it: room less chunk_bytes; 0 no open chunk */
    uint64_t prev_ts;
};

static inline void d9_enc_run_begin(const struct d9_enc *e, struct d9_enc_run *r)
{
    r->n = r->n0 = e->n;
    r->bound_bytes = e->bound_bytes;
    r->limit = e->in_chunk && e->chunk_bytes <= e->room ? e->room - e->chunk_bytes : 0;
    r->prev_ts = e->prev_ts;
}

/* Both paths' last step: ev joins the open chunk (room checked), its ts
 * clamped to the previous one (deltas are unsigned). */
static inline void d9_enc_run_put(struct d9_enc *e, struct d9_enc_run *r, const struct d9_raw_event *ev)
{
    uint64_t ts = ev->ts > r->prev_ts ? ev->ts : r->prev_ts;
    struct d9_raw_event *c = &e->chunk[r->n++];
    *c = *ev;
    c->ts = ts;
    r->prev_ts = ts;
}

/* ev into the open chunk when it takes it on the fast path: an open chunk
 * with room, under its room bound, of a known type. 0 taken; -1 not: the
 * caller ends the run and calls d9_enc_event_full. */
static inline int d9_enc_run_event(struct d9_enc *e, struct d9_enc_run *r, const struct d9_raw_event *ev)
{
    size_t bound = ev->type <= D9_SCHEMA_ENTRIES ? e->bound[ev->type] : 0; /* 0: unknown */
    if (__builtin_expect(r->n == D9_ENC_CHUNK_MAX || !bound || r->bound_bytes + bound > r->limit, 0))
        return -1;
    r->bound_bytes += bound;
    d9_enc_run_put(e, r, ev);
    return 0;
}

/* Gives e back the run's count, bound bytes and last ts, and counts its events. */
static inline void d9_enc_run_end(struct d9_enc *e, const struct d9_enc_run *r)
{
    e->n = r->n;
    e->bound_bytes = r->bound_bytes;
    e->prev_ts = r->prev_ts;
    e->events += r->n - r->n0;
}

/* d9_enc_event_full, with its every-event case inline (a run of one). */
static inline int d9_enc_event(struct d9_enc *e, const struct d9_raw_event *ev)
{
    struct d9_enc_run r;
    d9_enc_run_begin(e, &r);
    if (__builtin_expect(d9_enc_run_event(e, &r, ev) != 0, 0))
        return d9_enc_event_full(e, ev);
    d9_enc_run_end(e, &r);
    return 0;
}

/* Writes the open chunk's columns (nothing for a chunk without events). */
void d9_enc_end_chunk(struct d9_enc *e);
/* Ends the open chunk, writes the end marker, returns the payload length. */
size_t d9_enc_finish(struct d9_enc *e);

/* Max bytes d9_block_build writes for a raw payload of raw_len bytes. */
size_t d9_block_bound(size_t raw_len);
/* Writes struct d9_block_header + the LZ4 frame of e's finished payload
 * (no content checksum: the header's CRC-32C covers the frame) into out.
 * Returns bytes written, 0 on error (cap too small, payload over
 * D9_BLOCK_MAX_RAW). Allocates inside liblz4. */
size_t d9_block_build(const struct d9_enc *e, uint8_t *out, size_t cap);
/* Writes the block header at out for the z-byte LZ4 frame of e's finished
 * payload already at out + D9_BLOCK_HEADER_SIZE (d9_block_build's last
 * step; tests use it to seal frames made with other LZ4 settings). */
void d9_block_seal(const struct d9_enc *e, uint8_t *out, size_t z);

/* What a segment header says. NULL strings are written empty. */
struct d9_header_info {
    uint32_t pid, seq;
    const char *exe, *hostname, *clock, *agent_version;
    const char *cmdline;       /* NUL-separated arguments, cmdline_len bytes */
    size_t cmdline_len;
    uint64_t anchor_real_ns, anchor_mono_ns;
    uint32_t nthreads;         /* THREADS table: tids[i] named names[i] (NUL-terminated or 16 bytes) */
    const uint32_t *tids;
    const char (*names)[16];
    const struct d9_proc_identity *identity; /* the PROCESS TLV; NULL: none */
};

/* Writes the full header (magic, version, header_len, TLVs incl. the
 * schema from D9_SCHEMA_TABLE, crc32c). Returns its length, 0 if cap is too small. */
size_t d9_header_build(uint8_t *out, size_t cap, const struct d9_header_info *h);

#endif
