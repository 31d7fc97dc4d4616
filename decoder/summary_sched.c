/* summary_sched.c - kernel scheduling delay, preemption and long busy
 * period sections (see summary.h). */
#include <inttypes.h>
#include <stdio.h>

#include "fmt.h"
#include "pidkey.h"
#include "summary.h"

void d9_sched_text(const struct d9_model *m, const struct d9_summary *s)
{
    char a[24], b[24], c[24], d[24], n[24], sh[40];
    puts("\nkernel scheduling delay (run-queue wait, schedstat) and involuntary preemption, per thread\n"
         "(MAX SHARE: the reading that waited the largest share of the time it covers):");
    int any = 0;
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        if (!t->sched.n && !t->preempts)
            continue;
        if (!any++)
            printf("  %-8s %-8s %-16s %8s %10s %10s %-18s %8s %10s %10s\n", "PID", "TID", "NAME", "READINGS", "DELAY",
                   "MAX", "MAX SHARE", "PREEMPTS", "OFF-CPU", "MAX");
        printf("  %-8s %-8" PRIu32 " %-16s %8" PRIu64 " %10s %10s %-18s %8" PRIu64 " %10s %10s\n", D9_PID_STR(t->pid),
               t->tid, d9_fmt_name(n, sizeof(n), t->name), t->sched.n, d9_fmt_dur(a, sizeof(a), t->sched_total),
               d9_fmt_dur(b, sizeof(b), t->sched.max),
               d9_fmt_share(sh, sizeof(sh), t->sched_share_delay, t->sched_share_window), t->preempts,
               d9_fmt_dur(c, sizeof(c), t->preempt_total), d9_fmt_dur(d, sizeof(d), t->preempt_max));
    }
    if (!any)
        puts("  none recorded");
    puts("\nlong busy periods (thread start or unpark -> next park):");
    if (!s->nlong_busy) {
        puts("  none");
        return;
    }
    printf("  %-20s %-8s %-8s %-16s %10s %13s %10s\n", "START", "PID", "TID", "NAME", "DURATION", "SLOW_SYSCALLS",
           "PREEMPTED");
    for (size_t i = 0; i < s->nlong_busy; i++) {
        const struct d9_busy *x = &s->long_busy[i];
        printf("  %-20s %-8" PRIu32 " %-8" PRIu32 " %-16s %10s %13" PRIu64 " %10s\n",
               d9_fmt_ts(c, sizeof(c), x->start_ts), x->pid, x->tid,
               d9_fmt_name(n, sizeof(n), d9_thread_name(m, x->pid, x->tid)),
               d9_fmt_dur(a, sizeof(a), x->duration_ns), x->slow_syscalls, d9_fmt_dur(b, sizeof(b), x->preempt_ns));
    }
}

void d9_sched_json(struct d9_jw *w, const struct d9_summary *s)
{
    d9_jw_arr(w, "long_busy_periods");
    for (size_t i = 0; i < s->nlong_busy; i++) {
        const struct d9_busy *x = &s->long_busy[i];
        d9_jw_newline(w);
        d9_jw_obj(w, NULL);
        d9_jw_pid(w, x->pid);
        d9_jw_u64(w, "tid", x->tid);
        d9_jw_u64(w, "start_ts", x->start_ts);
        d9_jw_u64(w, "duration_ns", x->duration_ns);
        d9_jw_u64(w, "slow_syscalls", x->slow_syscalls);
        d9_jw_u64(w, "preempt_ns", x->preempt_ns);
        d9_jw_end(w);
    }
    d9_jw_end(w);
}
