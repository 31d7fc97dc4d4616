/* flight.h - DIAL9_MODE=flight: the bounded in-memory history of encoded,
 * compressed blocks that a dump writes out (docs/FLIGHT.md, "Retention").
 * Owned by the writer thread; the crash handler reads it only once the
 * writer is quiescent (crash.c). No allocation after d9_flight_init. */
#ifndef DIAL9_FLIGHT_H
#define DIAL9_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

/* Maps max_bytes of block storage (touched lazily) and the block index.
 * 0, or -1 after logging. */
int d9_flight_init(uint64_t max_bytes, uint32_t min_age_ms);

/* Keeps a copy of block buf[0..n) built at now_ns (CLOCK_MONOTONIC):
 * evicts blocks older than min_age, then the oldest ones until it fits in
 * max_bytes. A block larger than max_bytes is dropped (never: the minimum
 * max_bytes holds several full blocks). */
void d9_flight_add(const uint8_t *buf, size_t n, uint64_t now_ns);

/* Evicts blocks older than min_age at now_ns (also done by add). */
void d9_flight_expire(uint64_t now_ns);

uint32_t d9_flight_blocks(void); /* blocks kept */
uint64_t d9_flight_bytes(void);  /* their total size */
/* Copies the i-th kept block (0 = oldest) into dst (cap bytes); returns
 * its size, 0 when i is out of range or cap too small. Async-signal-safe. */
size_t d9_flight_copy(uint32_t i, uint8_t *dst, size_t cap);
void d9_flight_clear(void); /* after a dump: the next one starts from here */

#endif
