/* dump.h - what asks for a dump (docs/FLIGHT.md, "Triggers"): the dump
 * signal, dial9_dump(), and anomalies seen in drained events; and the rate
 * limit. The writer thread (writer.c) polls these once per cycle and
 * writes the dump (flight mode) or just flushes (continuous mode). */
#ifndef DIAL9_DUMP_H
#define DIAL9_DUMP_H

#include <stdint.h>

#include "config.h"
#include "dial9_format.h"

#define D9_REASON_MAX 64 /* bytes of a dump reason kept, incl. NUL */

/* Maps the per-thread anomaly state and installs the dump signal handler
 * (chaining the handler installed before, if any). 0, or -1 after logging. */
int d9_dump_init(const struct d9_config *c);

/* In a forked child: the dial9_dump() lock, which a thread of the parent
 * may have held, made free. */
void d9_dump_after_fork_child(void);

/* Writer: one drained event of slot index slot; may raise an anomaly trigger.
 * Called only when d9_dump_noting is set: some anomaly trigger is configured. */
void d9_dump_note(uint32_t slot, const struct d9_raw_event *ev);
extern int d9_dump_noting __attribute__((visibility("hidden")));

/* Writer: the pending trigger's reason into reason (empty: none). *api is
 * set when dial9_dump() asked (its caller waits for d9_dump_finish). */
int d9_dump_take(char reason[D9_REASON_MAX], int *api, uint64_t now_ns);
/* Writer: the outcome of the dump taken last: 0 written, else an errno
 * value. Wakes a waiting dial9_dump(). */
void d9_dump_finish(int err);

/* dial9_dump(): asks the writer and waits up to timeout_ms. 0 or an errno value. */
int d9_dump_request(const char *reason, int timeout_ms);

/* writer.c: wakes the writer; async-signal-safe (an atomic and a futex). */
void d9_writer_wake(void);

#endif
