/* scheduling_parse.h - the pure parts of scheduling-delay recording: the
 * text of /proc/<tid>/schedstat and the PERF_RECORD_SWITCH stream of a
 * perf ring. No agent globals, no syscalls: unit-tested on synthetic input. */
#ifndef DIAL9_SCHEDULING_PARSE_H
#define DIAL9_SCHEDULING_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* run_delay (ns the thread waited on a run queue, the 2nd of the three
 * fields "on-CPU ns, run_delay ns, timeslices") from schedstat text.
 * 0 ok, -1 when the text is not three numbers. */
int d9_schedstat_run_delay(const char *buf, size_t len, uint64_t *run_delay);

/* An involuntary switch-out paired with the thread's next switch-in. */
struct d9_preempt {
    uint64_t out_ts;   /* ns, CLOCK_MONOTONIC: the preempting switch-out */
    uint64_t duration; /* ns until the switch-in */
};

/* Pairing state carried across drains of one thread's perf ring. */
struct d9_switch_state {
    uint64_t out_ts; /* switch-out of a preemption still waiting for its switch-in */
    int pending;     /* out_ts is meaningful */
};

/* Walks the records of a perf data ring (data[0..size), size a power of
 * two; positions are free-running byte counts as in perf_event_mmap_page)
 * from *tail up to head. The event must have been opened with
 * sample_id_all and sample_type == PERF_SAMPLE_TIME only, so every record
 * ends with its 8-byte time. Writes at most max preemptions into out and
 * stops early when out is full; *tail moves past what was consumed.
 * Records the kernel could not write (PERF_RECORD_LOST) are added to *lost
 * and break the pairing. A malformed record consumes the rest of the ring.
 * Returns the number of preemptions written. */
uint32_t d9_perf_switches(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                          struct d9_switch_state *st, struct d9_preempt *out, uint32_t max,
                          uint64_t *lost);

#endif
