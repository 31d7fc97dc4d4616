/* utilization.h - each thread's busy fraction over time, for the report:
 * the export walker (export.h) replays the trace and its busy and park
 * slices are summed into a fixed number of time bins per thread. The span
 * is not needed up front: bins start D9_UTIL_BIN0_NS wide and, when a slice
 * ends past the last one, double their width (adjacent pairs merged), so
 * memory stays D9_UTIL_BINS per thread however long the trace. */
#ifndef DIAL9_DECODER_UTILIZATION_H
#define DIAL9_DECODER_UTILIZATION_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"

#define D9_UTIL_BINS 128 /* even: growth merges pairs */
#define D9_UTIL_BIN0_NS 1000u

struct d9_util_row {
    uint32_t pid, tid;
    const char *name; /* the model's, "" when unknown */
    /* ns of bin i spent busy, and in any slice (busy or parked): the time
     * the trace covers this thread (0 before its first event, after its last) */
    uint64_t busy[D9_UTIL_BINS], seen[D9_UTIL_BINS];
};

struct d9_util {
    struct d9_util_row *rows; /* in the walker's thread order (pid, then tid) */
    size_t n, cap;
    uint64_t bin_ns; /* width of every bin; bin i is [i * bin_ns, (i + 1) * bin_ns) since the trace start */
    struct d9_map idx; /* (pid, tid) -> row */
    int oom;
};

struct d9_model;
struct d9_summary;

/* Fills u (zeroed by the caller) by a pass over m (s: its analysis, with
 * the wake log the walker needs). 0 ok, -1 out of memory. */
int d9_util_compute(struct d9_model *m, const struct d9_summary *s, struct d9_util *u);
void d9_util_free(struct d9_util *u);

#endif
