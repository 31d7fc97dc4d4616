/* summary_wakes.c - wake-to-run latency sections (see summary.h). */
#include <inttypes.h>
#include <stdio.h>

#include "fmt.h"
#include "pidkey.h"
#include "summary.h"

void d9_wakes_text(const struct d9_model *m, const struct d9_summary *s)
{
    char a[24], b[24], c[24], n[24];
    puts("\nwake-to-run latency (waker's wake call -> wakee's return from its park), per woken thread:");
    if (!s->nwakes) {
        puts("  no matched wakes");
        return;
    }
    printf("  %-8s %-8s %-16s %8s %10s %10s %10s\n", "PID", "TID", "NAME", "WAKES", "p50", "p99", "max");
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        const struct d9_dist *d = &t->wake_latency_ns;
        if (d->n)
            printf("  %-8s %-8" PRIu32 " %-16s %8" PRIu64 " %10s %10s %10s\n", D9_PID_STR(t->pid), t->tid,
                   d9_fmt_name(n, sizeof(n), t->name), d->n, d9_fmt_dur(a, sizeof(a), d->p50),
                   d9_fmt_dur(b, sizeof(b), d->p99), d9_fmt_dur(c, sizeof(c), d->max));
    }
    printf("\nworst wake-to-run latencies:\n  %-20s %-8s %-24s    %-24s %-14s %-18s %s\n", "TIME", "PID",
           "WAKER", "WAKEE", "CALL", "TARGET", "LATENCY");
    for (size_t i = 0; i < s->nworst_wakes; i++) {
        const struct d9_wake *k = &s->worst_wakes[i];
        char wr[48], we[48], ts[32];
        snprintf(wr, sizeof(wr), "%" PRIu32 " %s", k->waker_tid,
                 d9_fmt_name(n, sizeof(n), d9_thread_name(m, k->pid, k->waker_tid)));
        snprintf(we, sizeof(we), "%" PRIu32 " %s", k->wakee_tid,
                 d9_fmt_name(n, sizeof(n), d9_thread_name(m, k->pid, k->wakee_tid)));
        printf("  %-20s %-8" PRIu32 " %-24s -> %-24s %-14s 0x%-16" PRIx64 " %s\n", d9_fmt_ts(ts, sizeof(ts), k->ts),
               k->pid, wr, we, d9_call_name(k->call), k->target, d9_fmt_dur(a, sizeof(a), k->latency_ns));
    }
}

void d9_wakes_json(struct d9_jw *w, const struct d9_summary *s)
{
    d9_jw_arr(w, "wake_latency_worst");
    for (size_t i = 0; i < s->nworst_wakes; i++) {
        const struct d9_wake *k = &s->worst_wakes[i];
        d9_jw_newline(w);
        d9_jw_obj(w, NULL);
        d9_jw_u64(w, "ts", k->ts);
        d9_jw_pid(w, k->pid);
        d9_jw_u64(w, "waker_tid", k->waker_tid);
        d9_jw_u64(w, "wakee_tid", k->wakee_tid);
        d9_jw_str(w, "call", d9_call_name(k->call));
        d9_jw_u64(w, "target", k->target);
        d9_jw_u64(w, "latency_ns", k->latency_ns);
        d9_jw_end(w);
    }
    d9_jw_end(w);
}
