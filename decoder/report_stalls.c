/* report_stalls.c - the worst stalls of the report (analysis.c's top
 * lists): the longest wake-to-run latencies, busy periods and slow
 * syscalls, each with its time range in ns since the trace start and the
 * `dial9-decode export` command that cuts the timeline to a window around
 * it (the stall plus as much again, at least 1 ms, each side) - the link
 * from the report into a trace viewer. */
#include <inttypes.h>

#include "fmt.h"
#include "html.h"
#include "pidkey.h"
#include "report_html.h"
#include "schema.h"

#define PAD_MIN_NS 1000000u

struct stall {
    uint64_t start, end, from, to; /* ns since the trace start: the stall, the window exported */
};

static struct stall stall_at(const struct d9_rep *r, uint64_t a, uint64_t dur)
{
    struct stall x = {a - r->t0, a - r->t0 + dur, 0, 0};
    uint64_t pad = dur > PAD_MIN_NS ? dur : PAD_MIN_NS;
    x.from = x.start > pad ? x.start - pad : 0;
    x.to = x.end + pad < r->span ? x.end + pad : r->span;
    if (x.to < x.end) /* never cut the stall itself (an end past the last event) */
        x.to = x.end;
    return x;
}

/* The row up to the kind's own columns: rank, start, duration. a: absolute ns. */
static struct stall row_begin(const struct d9_rep *r, const char *kind, size_t rank, uint64_t a, uint64_t dur)
{
    struct stall x = stall_at(r, a, dur);
    char t[32];
    fprintf(r->out, "<tr class=\"stall\" data-kind=\"%s\" data-start=\"%" PRIu64 "\" data-end=\"%" PRIu64
                    "\" data-from=\"%" PRIu64 "\" data-to=\"%" PRIu64 "\"><td class=\"n\">%zu</td>"
                    "<td class=\"n\">%s</td>",
            kind, x.start, x.end, x.from, x.to, rank + 1, d9_fmt_ts(t, sizeof(t), x.start));
    d9_rep_td_dur(r, dur);
    return x;
}

/* The rest: the stall's range and the export command of its window. */
static void row_end(const struct d9_rep *r, const char *kind, size_t rank, struct stall x)
{
    fprintf(r->out, "<td class=\"n\">%" PRIu64 " .. %" PRIu64 "</td>", x.start, x.end);
    fprintf(r->out, "<td><code class=\"cmd\">dial9-decode export --format perfetto -o stall-%s-%zu.pftrace --from %" PRIu64
                    " --to %" PRIu64,
            kind, rank + 1, x.from, x.to);
    for (int i = 0; i < r->npaths; i++) {
        fputc(' ', r->out);
        d9_html_shell_word(r->out, r->paths[i]);
    }
    fputs("</code></td></tr>\n", r->out);
}

/* The table's head, or a line saying there is nothing (returns 0). */
static int head(const struct d9_rep *r, const char *id, const char *title, size_t n, const char *none, const char *cols)
{
    fprintf(r->out, "<h3 id=\"%s\">%s</h3>\n", id, title);
    if (!n) {
        fprintf(r->out, "<p>%s</p>\n", none);
        return 0;
    }
    fprintf(r->out, "<table class=\"stalls\"><thead><tr><th>#</th><th>at (s since start)</th><th>duration</th>%s"
                    "<th>range (ns since start)</th><th>timeline of the window around it</th></tr></thead><tbody>\n",
            cols);
    return 1;
}

void d9_rep_stalls(const struct d9_rep *r)
{
    const struct d9_summary *s = r->s;
    if (head(r, "stall-wakes", "Longest wake-to-run latencies", s->nworst_wakes, "No matched wakes.",
             "<th>pid</th><th>waker</th><th>wakee</th><th>call</th>")) {
        for (size_t i = 0; i < s->nworst_wakes; i++) {
            const struct d9_wake *k = &s->worst_wakes[i];
            struct stall x = row_begin(r, "wake", i, k->ts, k->latency_ns);
            fprintf(r->out, "<td class=\"n\">%s</td><td>", D9_PID_STR(k->pid));
            d9_rep_thread(r, k->pid, k->waker_tid);
            fputs("</td><td>", r->out);
            d9_rep_thread(r, k->pid, k->wakee_tid);
            fprintf(r->out, "</td><td>%s</td>", d9_call_name(k->call));
            row_end(r, "wake", i, x);
        }
        fputs("</tbody></table>\n", r->out);
    }
    if (head(r, "stall-busy", "Longest busy periods (running without parking)", s->nlong_busy,
             "No busy period ended.", "<th>pid</th><th>thread</th><th>slow syscalls inside</th><th>preempted inside</th>")) {
        for (size_t i = 0; i < s->nlong_busy; i++) {
            const struct d9_busy *b = &s->long_busy[i];
            struct stall x = row_begin(r, "busy", i, b->start_ts, b->duration_ns);
            fprintf(r->out, "<td class=\"n\">%s</td><td>", D9_PID_STR(b->pid));
            d9_rep_thread(r, b->pid, b->tid);
            fprintf(r->out, "</td><td class=\"n\">%" PRIu64 "</td>", b->slow_syscalls);
            d9_rep_td_dur(r, b->preempt_ns);
            row_end(r, "busy", i, x);
        }
        fputs("</tbody></table>\n", r->out);
    }
    if (head(r, "stall-slow", "Slowest syscalls", s->nworst_slow, "None recorded (calls above the agent's threshold).",
             "<th>pid</th><th>thread</th><th>call</th><th>fd</th><th>kind</th>")) {
        for (size_t i = 0; i < s->nworst_slow; i++) {
            const struct d9_slow *w = &s->worst_slow[i];
            struct stall x = row_begin(r, "slow", i, w->ts, w->duration_ns);
            fprintf(r->out, "<td class=\"n\">%s</td><td>", D9_PID_STR(w->pid));
            d9_rep_thread(r, w->pid, w->tid);
            fprintf(r->out, "</td><td>%s</td><td class=\"n\">%" PRId64 "</td><td>%s</td>", d9_call_name(w->call), w->fd,
                    d9_fd_kind_name(w->fd_kind));
            row_end(r, "slow", i, x);
        }
        fputs("</tbody></table>\n", r->out);
    }
}
