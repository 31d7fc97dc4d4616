/* timearg.h - the times of a window option (export --from/--to): ns since
 * the trace start, or a wall-clock time in UTC converted through a
 * segment's ANCHOR (realtime and CLOCK_MONOTONIC read back to back), since
 * events carry CLOCK_MONOTONIC only.
 *
 * Accepted forms (anything else is an error, so no form is ambiguous):
 *   NS                         digits only: ns since the trace start
 *   YYYY-MM-DDTHH:MM:SS[.F][Z] a date and time; 'T' may be 't' or a space
 *   HH:MM:SS[.F][Z]            a time of day: the occurrence nearest the
 *                              trace start (within 12 hours before or after)
 * F is 1 to 9 digits of a second. The zone is Z (or z), +HH:MM, -HH:MM,
 * +HHMM or +HH (the time is then local to that offset); without a zone the
 * time is UTC, never the local time zone. Years 1970 to 2200; seconds 0-59
 * (the realtime clock has no leap second). */
#ifndef DIAL9_DECODER_TIMEARG_H
#define DIAL9_DECODER_TIMEARG_H

#include <stddef.h>
#include <stdint.h>

enum d9_time_kind {
    D9_TIME_SINCE_START, /* since: ns since the trace start */
    D9_TIME_UTC,         /* ns: since the Unix epoch, UTC */
    D9_TIME_OF_DAY       /* ns: since midnight UTC, 0 <= ns < 24 h */
};

struct d9_timearg {
    enum d9_time_kind kind;
    uint64_t since;
    int64_t ns;
};

/* A realtime / CLOCK_MONOTONIC pair read together; real_ns 0: none. */
struct d9_anchor {
    uint64_t real_ns, mono_ns;
};

/* 0 and *t, or -1: not one of the accepted forms. */
int d9_timearg_parse(const char *s, struct d9_timearg *t);

/* t as ns since the trace start (start_mono, CLOCK_MONOTONIC ns) into *rel,
 * negative when before it. 0 ok; -1 a wall-clock time without an anchor, or
 * a result out of range. */
int d9_timearg_resolve(const struct d9_timearg *t, const struct d9_anchor *a, uint64_t start_mono, int64_t *rel);

/* The window options' values (NULL: not given) as ns since the trace start:
 * *from (0 without --from, or before the start), *to (UINT64_MAX without
 * --to). 0 ok; -1 with a message in err[n]: not a time, no anchor for a
 * wall-clock time, --to before the trace start, --from after --to. */
int d9_window_resolve(const char *from, const char *to, const struct d9_anchor *a, uint64_t start_mono,
                      uint64_t *f, uint64_t *t, char *err, size_t n);

struct d9_model;
struct d9_summary;
/* The anchor for the inputs: of the processes' (model.h), the one read
 * first by monotonic time, nearest the trace start. */
struct d9_anchor d9_model_anchor(const struct d9_model *m);
/* The trace start: the first event of all inputs (0 when none). */
uint64_t d9_trace_start(const struct d9_summary *s);

#endif
