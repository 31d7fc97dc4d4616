/* summary_sys.c - slow syscall and contended lock sections (see summary.h). */
#include <inttypes.h>
#include <stdio.h>

#include "fmt.h"
#include "pidkey.h"
#include "schema.h"
#include "summary.h"

/* Lock and futex-like targets are addresses. */
static void print_locks(const struct d9_summary *s)
{
    char a[24], b[24];
    puts("\ncontended locks by address (waits above the agent's threshold):");
    if (!s->nlocks) {
        puts("  none recorded");
        return;
    }
    printf("  %-8s %-18s %-14s %8s %10s %10s\n", "PID", "LOCK", "CALL", "WAITS", "TOTAL", "MAX");
    for (size_t i = 0; i < s->nlocks; i++) {
        const struct d9_lock *l = &s->locks[i];
        printf("  %-8s 0x%-16" PRIx64 " %-14s %8" PRIu64 " %10s %10s\n", D9_PID_STR(l->pid), l->target,
               d9_call_name(l->call), l->count, d9_fmt_dur(a, sizeof(a), l->total_ns),
               d9_fmt_dur(b, sizeof(b), l->max_ns));
    }
}

void d9_sys_text(const struct d9_model *m, const struct d9_summary *s)
{
    char a[24], b[24], n[24];
    puts("\nslow syscalls by call (calls above the agent's threshold):");
    if (!s->nworst_slow)
        puts("  none recorded");
    else {
        printf("  %-14s %8s %10s %10s\n", "CALL", "COUNT", "TOTAL", "MAX");
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (s->sys[k].count)
                printf("  %-14s %8" PRIu64 " %10s %10s\n", d9_call_name(k), s->sys[k].count,
                       d9_fmt_dur(a, sizeof(a), s->sys[k].total_ns), d9_fmt_dur(b, sizeof(b), s->sys[k].max_ns));
        printf("\nworst slow syscalls:\n  %-20s %-8s %-8s %-16s %-14s %6s %-8s %s\n", "TIME", "PID", "TID", "NAME",
               "CALL", "FD", "KIND", "DURATION");
        for (size_t i = 0; i < s->nworst_slow; i++) {
            const struct d9_slow *x = &s->worst_slow[i];
            printf("  %-20s %-8" PRIu32 " %-8" PRIu32 " %-16s %-14s %6" PRId64 " %-8s %s\n",
                   d9_fmt_ts(b, sizeof(b), x->ts), x->pid, x->tid,
                   d9_fmt_name(n, sizeof(n), d9_thread_name(m, x->pid, x->tid)), d9_call_name(x->call), x->fd,
                   d9_fd_kind_name(x->fd_kind), d9_fmt_dur(a, sizeof(a), x->duration_ns));
        }
    }
    print_locks(s);
}

void d9_sys_json(struct d9_jw *w, const struct d9_summary *s)
{
    d9_jw_arr(w, "slow_syscalls");
    for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
        if (s->sys[k].count) {
            d9_jw_obj(w, NULL);
            d9_jw_str(w, "call", d9_call_name(k));
            d9_jw_u64(w, "count", s->sys[k].count);
            d9_jw_u64(w, "total_ns", s->sys[k].total_ns);
            d9_jw_u64(w, "max_ns", s->sys[k].max_ns);
            d9_jw_end(w);
        }
    d9_jw_end(w);
    d9_jw_arr(w, "slow_syscalls_worst");
    for (size_t i = 0; i < s->nworst_slow; i++) {
        const struct d9_slow *x = &s->worst_slow[i];
        d9_jw_newline(w);
        d9_jw_obj(w, NULL);
        d9_jw_u64(w, "ts", x->ts);
        d9_jw_pid(w, x->pid);
        d9_jw_u64(w, "tid", x->tid);
        d9_jw_str(w, "call", d9_call_name(x->call));
        d9_jw_i64(w, "fd", x->fd);
        d9_jw_str(w, "fd_kind", d9_fd_kind_name(x->fd_kind));
        d9_jw_u64(w, "duration_ns", x->duration_ns);
        d9_jw_end(w);
    }
    d9_jw_end(w);
    d9_jw_arr(w, "locks");
    for (size_t i = 0; i < s->nlocks; i++) {
        const struct d9_lock *l = &s->locks[i];
        d9_jw_newline(w);
        d9_jw_obj(w, NULL);
        d9_jw_pid(w, l->pid);
        d9_jw_u64(w, "target", l->target);
        d9_jw_str(w, "call", d9_call_name(l->call));
        d9_jw_u64(w, "count", l->count);
        d9_jw_u64(w, "total_wait_ns", l->total_ns);
        d9_jw_u64(w, "max_wait_ns", l->max_ns);
        d9_jw_end(w);
    }
    d9_jw_end(w);
}
