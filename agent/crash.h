/* crash.h - crash dumps: on SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT the
 * events still buffered (every ring, and in flight mode the kept history)
 * are written to <process dir>/crash.d9 with async-signal-safe code, then
 * the signal goes on as if the agent were not there (docs/FLIGHT.md). A
 * fault the kernel raised goes to the program's own handler first: only
 * one that ends the process is dumped. */
#ifndef DIAL9_CRASH_H
#define DIAL9_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Maps the crash handler's own buffers, reads the process facts its
 * header needs, and installs the handlers. 0, or -1 after logging (the
 * agent records anyway, without crash dumps). Without dumps (the setting,
 * or that failure) the handler still takes SIGSEGV and SIGBUS, for the
 * hooks' safe loads (safe_load.h), and arms them. */
int d9_crash_init(const struct d9_config *c);

/* At an exit (the agent's destructor, _exit, _Exit): when the calling
 * thread is inside the program's handler of a fault (crash.c runs it
 * first, and keeps the signal when it recovers), that fault ends the
 * process: its dump is written now. Otherwise nothing. Async-signal-safe. */
void d9_crash_at_exit(void);

/* Inserts a TLV before the crc of a header built by d9_header_build
 * (len bytes in hdr, cap available) and fixes header_len and the crc.
 * Returns the new length, 0 when it does not fit. Pure, async-signal-safe. */
size_t d9_header_add_tlv(uint8_t *hdr, size_t len, size_t cap, uint16_t tag, const void *val, uint32_t vlen);

/* writer.c, for the crash handler (async-signal-safe): makes the writer
 * start no new cycle and waits up to timeout_ms for the current one to end.
 * 1 when the writer is idle (its rings' tails and the flight history are
 * stable), 0 when not (or when called on the writer thread). */
int d9_writer_quiesce(int timeout_ms);
void d9_writer_resume(void);
/* Bytes of uncompressed payload a block holds at most, the writer's and
 * the crash dump's. */
#define D9_BLOCK_RAW (256u << 10)

/* Only while d9_writer_quiesce says idle: the writer's open block (events
 * it drained but has not written yet: it writes a block when it is due,
 * not every cycle) built into buf[0..cap), cap at least
 * d9_block_bound(D9_BLOCK_RAW); the writer then starts an empty one. Returns
 * its bytes, 0 when it has no events (or it did not fit). */
size_t d9_writer_take_block(uint8_t *buf, size_t cap);

#endif
