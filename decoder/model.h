/* model.h - every event of every input segment, merged in time order, plus
 * what the headers say about processes and thread names. */
#ifndef DIAL9_DECODER_MODEL_H
#define DIAL9_DECODER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "reader.h"

struct d9_thread {
    uint32_t pid, tid;
    char name[17];    /* NUL-terminated; "" when never named */
    uint64_t name_ts; /* ns: when name was current (newest wins) */
};

struct d9_proc {
    uint32_t pid;
    char *exe, *hostname; /* "" when unknown */
    char *cmdline;        /* arguments joined by spaces */
};

struct d9_model {
    struct d9_event *ev;
    size_t nev, ev_cap;
    struct d9_thread *thr;
    size_t nthr, thr_cap;
    struct d9_map thr_idx; /* (pid, tid) -> thr index */
    struct d9_proc *proc;
    size_t nproc, proc_cap;
    struct d9_map proc_idx; /* pid -> proc index */
    uint64_t seq;           /* events added so far: the stable sort key */
};

/* A d9_event_fn: appends the event (and a THREAD_NAME's name). ctx is the model. */
int d9_model_add_event(void *model, const struct d9_event *ev);
/* Records a segment header: process identity and the thread table. */
int d9_model_add_header(struct d9_model *m, const struct d9_seg *seg);
/* Orders events by ts, then pid, tid, and input order. */
void d9_model_sort(struct d9_model *m);
/* Lookups; NULL when unknown. */
const struct d9_thread *d9_model_thread(const struct d9_model *m, uint32_t pid, uint32_t tid);
const struct d9_proc *d9_model_proc(const struct d9_model *m, uint32_t pid);
void d9_model_free(struct d9_model *m);

/* Reads every segment under paths into m, one stderr line per input that is
 * not intact. *bad counts those inputs (and paths with no segment).
 * Returns 0, or -1 out of memory. */
int d9_load(struct d9_model *m, char *const *paths, int npaths, int *bad);

#endif
