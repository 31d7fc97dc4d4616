/* flight.c - the ring of compressed blocks (flight.h).
 * Bytes live in one circular buffer of max_bytes (a block and then its
 * metadata; either may wrap around its end: copies are done in two parts),
 * described by a circular index of {start, len, mlen, time}. Both are
 * mapped once. */
#include "flight.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"

/* Index entries: blocks are written every DIAL9_FLUSH_MS at least, so even
 * 1 ms flushes over the longest MinAge fit; when full, the oldest goes. */
#define D9_FLIGHT_INDEX (1u << 16)

struct entry {
    uint64_t start; /* byte position since init; buffer offset = start % cap */
    uint32_t len;   /* block bytes */
    uint32_t mlen;  /* metadata bytes, after the block */
    uint64_t ns;    /* CLOCK_MONOTONIC when the block was built */
};

static uint8_t *buf;
static uint64_t cap, min_age_ns;
static struct entry *idx;
static uint32_t first, count; /* oldest entry, entries kept */
static uint64_t head;         /* byte position of the next block */
static void (*on_evict)(const uint8_t *meta, size_t len);
static uint8_t evict_meta[D9_FLIGHT_META_MAX]; /* an evicted block's metadata, unwrapped */

int d9_flight_map(uint64_t max_bytes, uint32_t min_age_ms)
{
    size_t ib = sizeof(struct entry) * D9_FLIGHT_INDEX;
    void *b = mmap(NULL, max_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *i = b == MAP_FAILED ? MAP_FAILED : mmap(NULL, ib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (i == MAP_FAILED) {
        int err = errno;
        if (b != MAP_FAILED)
            munmap(b, max_bytes);
        errno = err;
        return -1;
    }
    buf = b;
    idx = i;
    cap = max_bytes;
    min_age_ns = (uint64_t)min_age_ms * 1000000u;
    first = count = 0;
    head = 0;
    return 0;
}

int d9_flight_init(uint64_t max_bytes, uint32_t min_age_ms)
{
    if (d9_flight_map(max_bytes, min_age_ms) == 0)
        return 0;
    d9_log("cannot map %llu bytes for the flight recorder: %s; not recording", (unsigned long long)max_bytes,
           strerror(errno));
    return -1;
}

int d9_flight_ready(void) { return buf != NULL; }
void d9_flight_on_evict(void (*fn)(const uint8_t *meta, size_t len)) { on_evict = fn; }

static struct entry *at(uint32_t i) { return &idx[(first + i) % D9_FLIGHT_INDEX]; }

/* Copies len bytes at byte position pos (wrapping) into dst. */
static void copy_out(uint64_t pos, uint8_t *dst, size_t len)
{
    size_t off = (size_t)(pos % cap), part = len < cap - off ? len : (size_t)(cap - off);
    memcpy(dst, buf + off, part);
    memcpy(dst + part, buf, len - part);
}

static void copy_in(uint64_t pos, const uint8_t *src, size_t len)
{
    size_t off = (size_t)(pos % cap), part = len < cap - off ? len : (size_t)(cap - off);
    memcpy(buf + off, src, part);
    memcpy(buf, src + part, len - part);
}

static void forget_oldest(void)
{
    first = (first + 1) % D9_FLIGHT_INDEX;
    count--;
}

/* The oldest block is lost without being copied out: tell the owner. */
static void evict(void)
{
    const struct entry *e = at(0);
    if (on_evict && e->mlen) {
        copy_out(e->start + e->len, evict_meta, e->mlen);
        on_evict(evict_meta, e->mlen);
    }
    forget_oldest();
}

uint64_t d9_flight_bytes(void) { return count ? head - at(0)->start : 0; }
uint32_t d9_flight_blocks(void) { return count; }

void d9_flight_expire(uint64_t now_ns)
{
    while (count && now_ns - at(0)->ns > min_age_ns)
        evict();
}

void d9_flight_add(const uint8_t *b, size_t n, const void *meta, size_t mlen, uint64_t now_ns)
{
    if (mlen > D9_FLIGHT_META_MAX)
        mlen = D9_FLIGHT_META_MAX;
    if (!buf || n == 0 || n + mlen > cap)
        return;
    d9_flight_expire(now_ns);
    while (count && (head + n + mlen - at(0)->start > cap || count == D9_FLIGHT_INDEX))
        evict(); /* MaxBytes wins over MinAge */
    copy_in(head, b, n);
    if (mlen)
        copy_in(head + n, meta, mlen);
    *at(count) = (struct entry){.start = head, .len = (uint32_t)n, .mlen = (uint32_t)mlen, .ns = now_ns};
    count++;
    head += n + mlen;
}

size_t d9_flight_copy(uint32_t i, uint8_t *dst, size_t dcap)
{
    if (i >= count || at(i)->len > dcap)
        return 0;
    copy_out(at(i)->start, dst, at(i)->len);
    return at(i)->len;
}

size_t d9_flight_meta(uint32_t i, uint8_t *dst, size_t dcap)
{
    if (i >= count || at(i)->mlen > dcap)
        return 0;
    copy_out(at(i)->start + at(i)->len, dst, at(i)->mlen);
    return at(i)->mlen;
}

void d9_flight_forget(uint32_t n)
{
    while (n-- && count)
        forget_oldest();
}

void d9_flight_clear(void)
{
    first = count = 0;
}
