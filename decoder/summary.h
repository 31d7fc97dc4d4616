/* summary.h - the sections of `dial9-decode summary` beyond the thread
 * table, each as text (stdout) and as JSON members of the top-level object. */
#ifndef DIAL9_DECODER_SUMMARY_H
#define DIAL9_DECODER_SUMMARY_H

#include "analysis.h"
#include "json.h"

/* The thread's name in the model, "" when unknown. */
const char *d9_thread_name(const struct d9_model *m, uint32_t pid, uint32_t tid);

/* summary_wakes.c: wake-to-run latency per woken thread, worst wakes. */
void d9_wakes_text(const struct d9_model *m, const struct d9_summary *s);
void d9_wakes_json(struct d9_jw *w, const struct d9_summary *s);
/* summary_sys.c: slow syscalls by call and the worst ones; contended locks. */
void d9_sys_text(const struct d9_model *m, const struct d9_summary *s);
void d9_sys_json(struct d9_jw *w, const struct d9_summary *s);
/* summary_sched.c: scheduling delay and preemption per thread; long busy periods. */
void d9_sched_text(const struct d9_model *m, const struct d9_summary *s);
void d9_sched_json(struct d9_jw *w, const struct d9_summary *s);
/* summary_app.c: application events (dial9_event) per process and name. */
void d9_app_text(const struct d9_summary *s);
void d9_app_json(struct d9_jw *w, const struct d9_summary *s);

#endif
