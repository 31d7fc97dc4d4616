/* export_counters.h - the counters both export formats write, one set per
 * process, derived from the walker's callbacks (export.h):
 *   - "busy threads": threads of the process inside a busy slice (running,
 *     not parked), +1 at a busy slice's begin, -1 at its end;
 *   - "dropped events": the running total of the drop instants' "count"
 *     (events lost to a full buffer), from the start of the export.
 * Each change is a sample (ts, value) for the format to write. */
#ifndef DIAL9_DECODER_EXPORT_COUNTERS_H
#define DIAL9_DECODER_EXPORT_COUNTERS_H

#include <stdint.h>

#include "export.h"

enum d9_counter { D9_CTR_BUSY, D9_CTR_DROPS, D9_CTR_COUNT };

extern const char *const d9_counter_name[D9_CTR_COUNT]; /* "busy threads", "dropped events" */

struct d9_counter_sample {
    uint32_t pid;
    enum d9_counter which;
    int first;     /* the first sample of this track: declare the track now */
    uint64_t ts;   /* ns since the trace start, never before the track's previous sample */
    int64_t value;
};

struct d9_counters;
struct d9_counters *d9_counters_new(void);
void d9_counters_free(struct d9_counters *c);
/* A slice begin (end 0) or end (end 1), or an instant: 1 and *out when it
 * changes a counter, 0 when not, -1 out of memory. */
int d9_counters_slice(struct d9_counters *c, const struct d9_export_item *s, int end, struct d9_counter_sample *out);
int d9_counters_instant(struct d9_counters *c, const struct d9_export_item *i, struct d9_counter_sample *out);

#endif
