/* reader.h - decodes one segment held in memory: header, TLVs, then blocks,
 * recovering from damage (resync on the next block whose header crc
 * verifies). Knows nothing about files, ordering or output. */
#ifndef DIAL9_DECODER_READER_H
#define DIAL9_DECODER_READER_H

#include <stddef.h>
#include <stdint.h>

#include "schema.h"

/* Fields kept per decoded event (every known type has at most 4); further
 * fields of a future type are decoded and skipped. */
#define D9_EV_FIELDS 4

struct d9_event {
    uint64_t ts;   /* CLOCK_MONOTONIC ns */
    uint32_t pid, tid;
    uint8_t type;
    uint8_t nfields;              /* fields held in f[] */
    char kinds[D9_EV_FIELDS];     /* 'u', 's' or 'b' per field */
    uint8_t name_len;             /* bytes in name[] */
    uint64_t f[D9_EV_FIELDS];     /* 'u': value, 's': int64 value, 'b': length */
    char name[16];                /* bytes of the first 'b' field (truncated) */
};

struct d9_thread_entry {
    uint32_t tid;
    char name[17]; /* NUL-terminated */
};

enum d9_seg_status {
    D9_SEG_OK = 0,
    D9_SEG_TRUNCATED, /* ends inside a block (or the header): a crashed or live writer */
    D9_SEG_DAMAGED,   /* bytes that do not verify somewhere */
    D9_SEG_INVALID    /* not a segment this decoder reads: nothing decoded */
};

#define D9_PROBLEM_HEADER UINT32_MAX /* problem.block of a header problem */
#define D9_MAX_PROBLEMS 16           /* problems kept; nproblems counts all */

struct d9_problem {
    uint32_t block;  /* 0-based index of the block slot, or D9_PROBLEM_HEADER */
    uint64_t offset; /* byte offset in the file */
    int truncated;   /* 1: the file ends here, 0: damage */
    char reason[96];
};

struct d9_seg {
    /* Header (strings malloc'd, NUL-terminated; NULL when absent). */
    uint32_t version, pid, seq;
    char *exe, *hostname, *clock, *agent_version;
    char *dump_reason;   /* D9_TLV_DUMP_REASON: why a dump wrote this segment */
    char *cmdline;       /* NUL-separated arguments */
    size_t cmdline_len;
    uint64_t anchor_real_ns, anchor_mono_ns;
    struct d9_proc_identity identity; /* D9_TLV_PROCESS, when has_identity */
    int has_identity;
    struct d9_thread_entry *threads;
    uint32_t nthreads;
    struct d9_schema schema;
    /* Outcome. */
    enum d9_seg_status status;
    char error[96];      /* why, when INVALID */
    uint32_t blocks;     /* blocks decoded completely */
    uint64_t events;     /* events delivered */
    uint64_t skipped;    /* bytes not decoded (damage, truncated tail) */
    uint32_t nproblems;
    struct d9_problem problems[D9_MAX_PROBLEMS];
};

/* Called per event in file order; a non-zero return stops decoding (-1 out
 * of memory), and d9_read_segment returns it. */
typedef int (*d9_event_fn)(void *ctx, const struct d9_event *ev);

/* A block whose framing verified (header crc, bounds, raw length limit,
 * payload crc); its payload is decoded separately, in any order. */
struct d9_block_ref {
    uint64_t off;   /* of the block header, bytes from the file start */
    uint32_t index; /* block slot, as problems count them */
    uint32_t payload_len, raw_len, events, crc;
    uint64_t first_ts, last_ts;
};

/* Called per verified block in file order with its payload bytes. */
typedef int (*d9_block_fn)(void *ctx, const struct d9_block_ref *b, const uint8_t *payload);

/* Parses the header of buf[0..len) into seg and scans its blocks, resyncing
 * on damage (problems go to seg). Verified blocks are counted in seg as if
 * they decode (blocks, events: the header's count) until d9_decode_block
 * says otherwise. Returns 0, fn's non-zero return, or -1 out of memory. */
int d9_scan_segment(const uint8_t *buf, size_t len, struct d9_seg *seg, d9_block_fn fn, void *ctx);

/* A scanned block lost after all (e.g. unreadable now): a problem in seg,
 * its counts taken back and its bytes skipped. */
void d9_seg_block_lost(struct d9_seg *seg, const struct d9_block_ref *b, const char *why);

/* LZ4 state and the raw buffer, reused across blocks. */
struct d9_inflater;
struct d9_inflater *d9_inflater_new(void);
void d9_inflater_free(struct d9_inflater *z);

/* Decompresses and parses one scanned block of seg, delivering its events
 * to fn (may be NULL). A block that does not decode is a problem in seg and
 * its counts are corrected (events before a bad one were delivered).
 * Returns 0, fn's non-zero return, or -1 out of memory. */
int d9_decode_block(struct d9_seg *seg, struct d9_inflater *z, const struct d9_block_ref *b, const uint8_t *payload,
                    d9_event_fn fn, void *ctx);

/* Where d9_decode_block_into puts the events: appended to ev[] (grown
 * with realloc), written in place rather than handed out one by one.
 * names counts the THREAD_NAME events appended. After each chunk,
 * chunk(ctx, from, back) is called: ev[from..n) are that chunk's, one
 * thread's in decode order, which is ts order unless back is set (a delta
 * wrapped: only a damaged chunk's time goes back). Its non-zero return
 * stops decoding. */
struct d9_sink {
    struct d9_event *ev;
    size_t n, cap;
    size_t names;
    int (*chunk)(void *ctx, size_t from, int back);
    void *ctx;
};

/* Room for n more events in k. 0, -1 out of memory. */
int d9_sink_reserve(struct d9_sink *k, size_t n);

/* d9_decode_block with the events appended to sink (the bytes of ev[i].name
 * past name_len are left as they were). Returns 0, chunk's non-zero
 * return, or -1 out of memory. */
int d9_decode_block_into(struct d9_seg *seg, struct d9_inflater *z, const struct d9_block_ref *b,
                         const uint8_t *payload, struct d9_sink *sink);

/* Decodes buf[0..len). fn may be NULL (count only). Fills seg (free it with
 * d9_seg_free even on failure). Returns 0, or fn's non-zero return, or -1
 * when out of memory. Damage is reported in seg, not in the return value. */
int d9_read_segment(const uint8_t *buf, size_t len, struct d9_seg *seg, d9_event_fn fn, void *ctx);
void d9_seg_free(struct d9_seg *seg);

#endif
