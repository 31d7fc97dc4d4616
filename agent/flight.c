/* flight.c - the flight recorder's block history (flight.h).
 * Bytes live in one circular buffer of max_bytes (a block may wrap around
 * its end: copies are done in two parts), described by a circular index of
 * {start, len, time}. Both are mapped once at init. */
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
    uint32_t len;
    uint64_t ns;    /* CLOCK_MONOTONIC when the block was built */
};

static uint8_t *buf;
static uint64_t cap, min_age_ns;
static struct entry *idx;
static uint32_t first, count; /* oldest entry, entries kept */
static uint64_t head;         /* byte position of the next block */

int d9_flight_init(uint64_t max_bytes, uint32_t min_age_ms)
{
    size_t ib = sizeof(struct entry) * D9_FLIGHT_INDEX;
    void *b = mmap(NULL, max_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *i = b == MAP_FAILED ? MAP_FAILED : mmap(NULL, ib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (i == MAP_FAILED) {
        d9_log("cannot map %llu bytes for the flight recorder: %s; not recording", (unsigned long long)max_bytes,
               strerror(errno));
        if (b != MAP_FAILED)
            munmap(b, max_bytes);
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

static struct entry *at(uint32_t i) { return &idx[(first + i) % D9_FLIGHT_INDEX]; }

static void evict(void)
{
    first = (first + 1) % D9_FLIGHT_INDEX;
    count--;
}

uint64_t d9_flight_bytes(void) { return count ? head - at(0)->start : 0; }
uint32_t d9_flight_blocks(void) { return count; }

void d9_flight_expire(uint64_t now_ns)
{
    while (count && now_ns - at(0)->ns > min_age_ns)
        evict();
}

void d9_flight_add(const uint8_t *b, size_t n, uint64_t now_ns)
{
    if (!buf || n == 0 || n > cap)
        return;
    d9_flight_expire(now_ns);
    while (count && (head + n - at(0)->start > cap || count == D9_FLIGHT_INDEX))
        evict(); /* MaxBytes wins over MinAge */
    size_t off = (size_t)(head % cap), part = n < cap - off ? n : (size_t)(cap - off);
    memcpy(buf + off, b, part);
    memcpy(buf, b + part, n - part);
    *at(count) = (struct entry){.start = head, .len = (uint32_t)n, .ns = now_ns};
    count++;
    head += n;
}

size_t d9_flight_copy(uint32_t i, uint8_t *dst, size_t dcap)
{
    if (i >= count || at(i)->len > dcap)
        return 0;
    const struct entry *e = at(i);
    size_t off = (size_t)(e->start % cap), part = e->len < cap - off ? e->len : (size_t)(cap - off);
    memcpy(dst, buf + off, part);
    memcpy(dst + part, buf, e->len - part);
    return e->len;
}

void d9_flight_clear(void)
{
    first = count = 0;
}
