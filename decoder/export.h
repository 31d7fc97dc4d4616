/* export.h - `dial9-decode export`: the trace as a timeline for trace
 * viewers. One walker (export.c) streams the time-ordered events and calls
 * a format's callbacks (export_chrome.c, export_perfetto.c):
 *   - one track per thread, grouped by process, named as the thread was;
 *   - slices: parks (PARK -> UNPARK, named by the call) and busy periods
 *     ("busy": from a thread's first event, THREAD_START or UNPARK to its
 *     next PARK or THREAD_EXIT), which alternate on a thread;
 *   - instants: slow_syscall, lock_wait, drop, preempt, sched_delay, and
 *     application events (named by the program, with their value);
 *   - flows: each matched wake (latency.h), from the waker at the WAKE to
 *     the wakee at WAKE ts + wake-to-run latency (its unpark).
 * Times given to the callbacks are ns since the trace start (the first
 * event of all inputs). With --from/--to, slices crossing the window are cut
 * to it and a flow is kept only when both ends are inside; with --tid, only
 * those threads' tracks are written and a flow needs both threads.
 * Callbacks are called in time order per track (a slice's end callback at
 * its end), so a format can write as it goes. */
#ifndef DIAL9_DECODER_EXPORT_H
#define DIAL9_DECODER_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#define D9_EXPORT_ARGS 4

struct d9_export_arg {
    const char *key;
    const char *str; /* a string value, or NULL: the number v */
    int64_t v;
};

/* pid here is a process's number for viewers (d9_pid_track): its pid, or
 * for a later process with the same pid (pidkey.h) a distinct one above
 * 2^22, whose process name says "(pid P#n)". */
struct d9_export_item {
    uint32_t pid, tid;
    uint64_t ts, end;      /* ns since trace start; end: slices only */
    const char *name;      /* a static or model string, valid during the call */
    int park;              /* slices: 1 park, 0 busy period */
    int app;               /* instants: an application event (dial9_event), named by the program */
    unsigned nargs;
    unsigned end_args;     /* slice_end: args[end_args..] were not known at the begin */
    struct d9_export_arg args[D9_EXPORT_ARGS];
};

struct d9_export_ops {
    void (*process)(void *ctx, uint32_t pid, const char *name);
    void (*thread)(void *ctx, uint32_t pid, uint32_t tid, const char *name);
    void (*slice_begin)(void *ctx, const struct d9_export_item *s); /* args: those known at the start */
    void (*slice_end)(void *ctx, const struct d9_export_item *s);   /* ts, end and every arg */
    void (*instant)(void *ctx, const struct d9_export_item *i);
    /* One end of flow id (1, 2, ...): the wake (end 0) or the wakee (end 1). */
    void (*flow)(void *ctx, const struct d9_export_item *at, uint64_t id, int end);
    void (*finish)(void *ctx);
};

struct d9_export_opts {
    uint64_t from, to; /* ns since trace start, inclusive; to = UINT64_MAX: no limit */
    const uint32_t *tids;
    int ntids; /* 0: every thread */
};

struct d9_model;
struct d9_summary;

/* The analysis the walk needs (with the wake log), as the walk's first
 * pass over m. 0 ok, -1 out of memory. */
int d9_export_analyse(const struct d9_model *m, struct d9_summary *s);
/* Replays m's events (a pass over its inputs; s: its analysis, with the
 * wake log: d9_analyse_opts .wakelog) through ops. 0 ok, -1 out of memory. */
int d9_export_walk(const struct d9_model *m, const struct d9_summary *s, const struct d9_export_opts *o,
                   const struct d9_export_ops *ops, void *ctx);

/* The formats: set up on out, return their ops and context (NULL: out of memory). */
void *d9_chrome_new(FILE *out, const struct d9_export_ops **ops);
void *d9_perfetto_new(FILE *out, const struct d9_export_ops **ops);
void *d9_dial9_new(FILE *out, const struct d9_export_ops **ops); /* export_dial9.c */
/* Frees a format's context; 0, or -1 when it could not write everything. */
int d9_chrome_free(void *ctx);
int d9_perfetto_free(void *ctx);
int d9_dial9_free(void *ctx);

#endif
