/* report_html.h - the sections of `dial9-decode report` (one self-contained
 * HTML page), shared by report_html.c (command, page, flags), report_tables.c
 * (the summary tables), report_charts.c (utilization, histograms) and
 * report_stalls.c (worst stalls with export windows). */
#ifndef DIAL9_DECODER_REPORT_HTML_H
#define DIAL9_DECODER_REPORT_HTML_H

#include <stdio.h>

#include "analysis.h"
#include "hist.h"

/* The distributions a thread has as a struct d9_hist. */
enum d9_rep_metric { D9_REP_PARK, D9_REP_BUSY, D9_REP_WAKE, D9_REP_SCHED, D9_REP_METRICS };

struct d9_rep {
    FILE *out;
    struct d9_model *m; /* not const: a pass over its inputs (utilization) reads them */
    const struct d9_summary *s;
    char *const *paths; /* the inputs, for the export command lines */
    int npaths;
    uint64_t t0, span; /* ns: the first event (absolute), last - first */
};

/* Thread i's distribution of k (ns). */
const struct d9_hist *d9_rep_hist(const struct d9_rep *r, size_t i, enum d9_rep_metric k);

/* A duration cell: <td class="n" data-ns="N">1.23ms</td>. */
void d9_rep_td_dur(const struct d9_rep *r, uint64_t ns);
/* "tid name" of a thread, escaped. */
void d9_rep_thread(const struct d9_rep *r, uint32_t pid, uint32_t tid);

void d9_rep_threads(const struct d9_rep *r); /* per process: one row per thread */
void d9_rep_details(const struct d9_rep *r); /* wake-to-run, sched delay, slow syscalls, locks */
int d9_rep_util(const struct d9_rep *r);     /* busy fraction over time; -1 out of memory */
int d9_rep_hists(const struct d9_rep *r);    /* park, busy, wake-to-run histograms; -1 out of memory */
void d9_rep_stalls(const struct d9_rep *r);  /* worst wakes, busy periods, slow syscalls */

#endif
