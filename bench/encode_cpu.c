/* encode_cpu.c - the writer's encoding work on a real trace, without the
 * noise of a live run: decodes the segments given, turns the events back
 * into raw records, and re-encodes them as the writer does (a chunk per run
 * of one thread, the trace's block boundaries, d9_block_build: CRC-32C,
 * LZ4) ROUNDS times. Prints CPU ns per event and bytes per event of blocks.
 * Linked with agent/encode.c (or an older one, to compare layouts).
 * ENCODE_FILL=1 fills each block to the brim instead (the encoder's
 * block-full path at every block). Prints the payloads' CRC-32C too, to
 * compare encoders byte for byte.
 * usage: encode_cpu ROUNDS SEGMENT... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode.h"
#include "reader.h"

struct rec {
    uint32_t tid; /* 0: the original block ended here */
    struct d9_raw_event ev;
};

static struct rec *recs;
static size_t nrecs, caprecs, nevents;

/* The raw record a decoded event came from, per the schema's field sources. */
static void to_raw(const struct d9_event *e, struct d9_raw_event *r)
{
    static const struct d9_schema_entry table[D9_SCHEMA_ENTRIES] = D9_SCHEMA_TABLE;
    memset(r, 0, sizeof(*r));
    r->ts = e->ts;
    r->type = e->type;
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        if (table[i].type != e->type)
            continue;
        for (unsigned f = 0; table[i].sources[f] && f < e->nfields; f++) {
            switch (table[i].sources[f]) {
            case 'c': r->call = (uint8_t)e->f[f]; break;
            case 'a': r->a = e->f[f]; break;
            case 'b': r->b = e->f[f]; break;
            case 'l': r->len = (uint16_t)e->f[f]; break;
            case 'x': r->x = (int32_t)e->f[f]; break;
            case 'n':
                r->len = e->name_len;
                memcpy(&r->a, e->name, e->name_len < 8 ? e->name_len : 8);
                if (e->name_len > 8)
                    memcpy(&r->b, e->name + 8, e->name_len - 8u);
                break;
            }
        }
    }
}

static int collect(void *ctx, const struct d9_event *e)
{
    (void)ctx;
    if (nrecs == caprecs) {
        caprecs = caprecs ? caprecs * 2 : 65536;
        recs = realloc(recs, caprecs * sizeof(*recs));
        if (!recs)
            return -1;
    }
    recs[nrecs].tid = e ? e->tid : 0;
    if (e) {
        to_raw(e, &recs[nrecs].ev);
        nevents++;
    }
    nrecs++;
    return 0;
}

/* Decodes one block, then marks its end: the re-encoding keeps the writer's block sizes. */
static int block(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct d9_seg *seg = ctx;
    static struct d9_inflater *z;
    if (!z && !(z = d9_inflater_new()))
        return -1;
    int rc = d9_decode_block(seg, z, b, payload, collect, NULL);
    return rc ? rc : collect(NULL, NULL);
}

static int load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    int rc = buf && fread(buf, 1, (size_t)n, f) == (size_t)n ? 0 : -1;
    fclose(f);
    struct d9_seg seg;
    if (rc == 0)
        rc = d9_scan_segment(buf, (size_t)n, &seg, block, &seg);
    d9_seg_free(&seg);
    free(buf);
    return rc;
}

#define RAW (256u << 10)
static uint8_t raw[RAW];
static struct d9_enc enc;

static size_t raw_bytes;
static uint32_t raw_crc; /* CRC-32C of every payload: the same bytes as another encoder's? */
static int fill;         /* ENCODE_FILL=1 */

/* Builds the block, starts another; returns the block's bytes. */
static size_t end_block(uint8_t *out, size_t out_cap)
{
    size_t len = d9_enc_finish(&enc);
    raw_bytes += len;
    raw_crc = d9_crc32c(raw_crc, raw, len);
    size_t bytes = d9_block_build(&enc, out, out_cap);
    d9_enc_init(&enc, raw, RAW);
    return bytes;
}

/* Encodes every record once; returns the bytes of blocks built. */
static size_t encode_all(uint8_t *out, size_t out_cap)
{
    size_t bytes = 0;
    raw_bytes = 0;
    raw_crc = 0;
    uint32_t tid = 0;
    d9_enc_init(&enc, raw, RAW);
    struct d9_enc_run run; /* the writer's every-event path (agent/writer.c, put_next) */
    d9_enc_run_begin(&enc, &run);
    for (size_t i = 0; i < nrecs; i++) {
        if (fill && recs[i].tid == 0)
            continue; /* blocks end where they are full, not where the trace's ended */
        int full = recs[i].tid == 0;
        /* a run of one thread in time order; preempts were a chunk of their own, earlier in time */
        int same = !full && recs[i].tid == tid && enc.in_chunk && recs[i].ev.ts >= run.prev_ts;
        if (same && d9_enc_run_event(&enc, &run, &recs[i].ev) == 0)
            continue;
        d9_enc_run_end(&enc, &run);
        if (same && d9_enc_event_full(&enc, &recs[i].ev) == 0) {
            /* refused by the run, as encode.h says: the full path took it (a full chunk goes on in a new one) */
        } else if (!full && d9_enc_begin_chunk(&enc, recs[i].tid, recs[i].ev.ts) == 0 &&
                   d9_enc_event(&enc, &recs[i].ev) == 0) {
            tid = recs[i].tid;
        } else {
            bytes += end_block(out, out_cap); /* block full (or ended there): build it, start another */
            tid = 0;
            if (!full && d9_enc_begin_chunk(&enc, recs[i].tid, recs[i].ev.ts) == 0 && d9_enc_event(&enc, &recs[i].ev) == 0)
                tid = recs[i].tid;
        }
        d9_enc_run_begin(&enc, &run);
    }
    d9_enc_run_end(&enc, &run);
    return bytes + (enc.events ? end_block(out, out_cap) : 0);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: encode_cpu ROUNDS SEGMENT...\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    const char *f = getenv("ENCODE_FILL");
    fill = f && !strcmp(f, "1");
    for (int i = 2; i < argc; i++)
        if (load(argv[i]) < 0)
            fprintf(stderr, "encode_cpu: %s: not read\n", argv[i]);
    size_t out_cap = d9_block_bound(RAW);
    uint8_t *out = malloc(out_cap);
    if (!nrecs || !out)
        return 1;
    size_t bytes = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (int r = 0; r < rounds; r++)
        bytes = encode_all(out, out_cap);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / rounds / (double)nevents;
    printf("events %zu raw %.3f bytes/event, block bytes %zu = %.3f bytes/event, encode+crc+lz4 %.1f ns/event = %.3f s per M events, payload crc %08x\n",
           nevents, (double)raw_bytes / (double)nevents, bytes, (double)bytes / (double)nevents, ns, ns / 1e3, raw_crc);
    free(out);
    free(recs);
    return 0;
}
