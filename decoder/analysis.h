/* analysis.h - per-thread statistics behind `summary`: parks by call, time
 * parked vs busy, park / busy-period distributions, wakes sent and received
 * (wake -> unpark matching), drops, zero-timeout polls, and a role guess. */
#ifndef DIAL9_DECODER_ANALYSIS_H
#define DIAL9_DECODER_ANALYSIS_H

#include <stdint.h>

#include "model.h"

struct d9_dist {
    uint64_t p50, p99, max; /* ns, nearest rank; 0 when empty */
    uint64_t n;
};

enum d9_role { D9_ROLE_OTHER, D9_ROLE_WORKER, D9_ROLE_BLOCKING };

struct d9_tstats {
    uint32_t pid, tid;
    const char *name;      /* the model's, "" when unknown */
    enum d9_role role;
    uint64_t events, first_ts, last_ts;
    uint64_t parks, parks_by_call[D9_CALL_COUNT + 1]; /* last: calls this decoder does not know */
    uint64_t parked_ns, busy_ns;  /* busy = span between first and last event - parked */
    uint64_t wakes_sent, wakes_received, nowait_polls, dropped;
    struct d9_dist park_ns, busy_period_ns;
};

struct d9_summary {
    struct d9_tstats *t; /* ordered by pid, then tid */
    size_t nt;
    uint64_t events, dropped;
};

/* m must be sorted. 0 ok, -1 out of memory. */
int d9_analyse(const struct d9_model *m, struct d9_summary *s);
void d9_summary_free(struct d9_summary *s);
const char *d9_role_name(enum d9_role r);

#endif
