/* model.h - what the headers and THREAD_NAME events say about processes and
 * threads, plus where the events come from: the inputs streamed in time
 * order (stream.h, d9_load), or events held in memory (tests, the fuzzer:
 * d9_model_add_event, then d9_model_sort). */
#ifndef DIAL9_DECODER_MODEL_H
#define DIAL9_DECODER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "pidkey.h"
#include "reader.h"

/* pid fields hold process keys (pidkey.h): the pid, or which process of it. */
struct d9_thread {
    uint32_t pid, tid;
    char name[17];    /* NUL-terminated; "" when never named */
    uint64_t name_ts; /* ns: when name was current (newest wins) */
};

struct d9_proc {
    uint32_t pid;         /* the process key */
    struct d9_proc_identity identity; /* D9_TLV_PROCESS, when has_identity */
    int has_identity;
    char *exe, *hostname; /* "" when unknown */
    char *cmdline;        /* arguments joined by spaces */
    /* The ANCHOR of this pid's segment read that is earliest by monotonic
     * time (0, 0: none), to convert wall-clock times (timearg.c). */
    uint64_t anchor_real_ns, anchor_mono_ns;
};

struct d9_stream;

struct d9_model {
    struct d9_stream *src;  /* d9_load's inputs; NULL: the events are ev[] */
    struct d9_event *ev;
    size_t nev, ev_cap;
    struct d9_thread *thr;
    size_t nthr, thr_cap;
    struct d9_map thr_idx; /* (pid, tid) -> thr index */
    struct d9_proc *proc;
    size_t nproc, proc_cap;
    struct d9_map proc_idx; /* pid -> proc index */
};

/* A d9_event_fn: appends the event (and a THREAD_NAME's name). ctx is the model. */
int d9_model_add_event(void *model, const struct d9_event *ev);
/* A THREAD_NAME's name (newest wins), without keeping the event. 0, -1 out of memory. */
int d9_model_note_name(struct d9_model *m, const struct d9_event *ev);
/* One pass over the events in time order: fn per event (a non-zero return
 * stops it and is returned), from the inputs or ev[]. -1 out of memory. */
int d9_model_each(const struct d9_model *m, d9_event_fn fn, void *ctx);
/* A run of one thread's events in time order: ev[0..n), n >= 1, all of
 * one (pid, tid). Returns non-zero to stop. */
typedef int (*d9_span_fn)(void *ctx, const struct d9_event *ev, size_t n);
/* The same pass, a span at a time: fn once per run of one thread's events
 * (the merge hands them over so), not once per event. */
int d9_model_each_span(const struct d9_model *m, d9_span_fn fn, void *ctx);
/* Records a segment header: process identity and the thread table. Sets
 * seg->pid to its process key (pidkey.h): a header whose D9_TLV_PROCESS
 * differs from those of the processes already met with its pid is another
 * process; one without that TLV joins the first. Returns 0, 1 when the
 * header was the first of a later process with a pid met before (its key's
 * instance is 2 or more), -1 out of memory. */
int d9_model_add_header(struct d9_model *m, struct d9_seg *seg);
/* The process key of seg's header among the processes added so far (seg->pid when none matches). */
uint32_t d9_model_key_of(const struct d9_model *m, const struct d9_seg *seg);
/* Orders events by ts, then pid, tid, and input order. 0, -1 out of memory
 * (the events left as they were). */
int d9_model_sort(struct d9_model *m);
/* Lookups; NULL when unknown. */
const struct d9_thread *d9_model_thread(const struct d9_model *m, uint32_t pid, uint32_t tid);
const struct d9_proc *d9_model_proc(const struct d9_model *m, uint32_t pid);
void d9_model_free(struct d9_model *m);

/* Opens every segment under paths as m's inputs (headers read, blocks
 * indexed; events are decoded by each pass, see stream.h), one stderr line
 * per input that is not intact. *bad counts those inputs (and paths with
 * no segment); damage found only while decoding is counted when the first
 * pass ends, so *bad must outlive m. Returns 0, or -1 out of memory. */
int d9_load(struct d9_model *m, char *const *paths, int npaths, int *bad);

#endif
