/* flight.h - the bounded in-memory ring of encoded, compressed blocks:
 * DIAL9_MODE=flight's history that a dump writes out (docs/FLIGHT.md,
 * "Retention"), and in continuous mode the blocks a disk-full outage keeps
 * until they can be written ("Disk full"). One ring per process.
 * Owned by the writer thread; the crash handler reads it only once the
 * writer is quiescent (crash.c). No allocation after the ring is mapped. */
#ifndef DIAL9_FLIGHT_H
#define DIAL9_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#define D9_FLIGHT_META_MAX 4096 /* bytes of a block's metadata kept with it, at most */

/* Maps max_bytes of block storage (touched lazily) and the block index.
 * d9_flight_map: 0, or -1 with errno; d9_flight_init also logs. */
int d9_flight_map(uint64_t max_bytes, uint32_t min_age_ms);
int d9_flight_init(uint64_t max_bytes, uint32_t min_age_ms);
int d9_flight_ready(void); /* mapped */

/* Called with the metadata of each block forgotten before it was copied
 * out (by d9_flight_add or d9_flight_expire; not by clear or forget). */
void d9_flight_on_evict(void (*fn)(const uint8_t *meta, size_t len));

/* Keeps a copy of block buf[0..n) built at now_ns (CLOCK_MONOTONIC), with
 * the caller's metadata meta[0..mlen) (truncated to D9_FLIGHT_META_MAX;
 * it counts against max_bytes): evicts blocks older than min_age, then the
 * oldest ones until it fits in max_bytes. A block larger than max_bytes is
 * dropped (never: the minimum max_bytes holds several full blocks). */
void d9_flight_add(const uint8_t *buf, size_t n, const void *meta, size_t mlen, uint64_t now_ns);

/* Evicts blocks older than min_age at now_ns (also done by add). */
void d9_flight_expire(uint64_t now_ns);

uint32_t d9_flight_blocks(void); /* blocks kept */
uint64_t d9_flight_bytes(void);  /* their total size, metadata included */
/* Copies the i-th kept block (0 = oldest) into dst (cap bytes); returns
 * its size, 0 when i is out of range or cap too small. Async-signal-safe. */
size_t d9_flight_copy(uint32_t i, uint8_t *dst, size_t cap);
/* The same for its metadata (0 also when it has none). */
size_t d9_flight_meta(uint32_t i, uint8_t *dst, size_t cap);
void d9_flight_forget(uint32_t n); /* the n oldest blocks were written: drop them */
void d9_flight_clear(void); /* after a dump: the next one starts from here */

#endif
