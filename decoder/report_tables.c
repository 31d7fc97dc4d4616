/* report_tables.c - the summary tables of the report (the figures of
 * `dial9-decode summary`, from analysis.c): per process a row per thread,
 * then wake-to-run latency per woken thread, scheduling delay and
 * preemption, slow syscalls by call, contended locks, application events. */
#include <inttypes.h>

#include "fmt.h"
#include "html.h"
#include "pidkey.h"
#include "report_html.h"
#include "summary.h"

void d9_rep_td_dur(const struct d9_rep *r, uint64_t ns)
{
    char b[24];
    fprintf(r->out, "<td class=\"n\" data-ns=\"%" PRIu64 "\">%s</td>", ns, d9_fmt_dur(b, sizeof(b), ns));
}

void d9_rep_thread(const struct d9_rep *r, uint32_t pid, uint32_t tid)
{
    const char *name = d9_thread_name(r->m, pid, tid);
    fprintf(r->out, "%" PRIu32 " ", tid);
    d9_html_text(r->out, name[0] ? name : "-");
}

static void td_u64(const struct d9_rep *r, uint64_t v) { fprintf(r->out, "<td class=\"n\">%" PRIu64 "</td>", v); }

/* p50 / p99 / max cells of a distribution, "-" when empty. */
static void td_dist(const struct d9_rep *r, const struct d9_dist *d)
{
    if (!d->n) {
        fputs("<td>-</td><td>-</td><td>-</td>", r->out);
        return;
    }
    d9_rep_td_dur(r, d->p50);
    d9_rep_td_dur(r, d->p99);
    d9_rep_td_dur(r, d->max);
}

static void process_head(const struct d9_rep *r, uint32_t pid)
{
    const struct d9_proc *p = d9_model_proc(r->m, pid);
    fprintf(r->out, "<h3>process %s <code>", D9_PID_STR(pid));
    d9_html_text(r->out, p && p->exe[0] ? p->exe : "?");
    fputs("</code></h3>\n<p class=\"meta\">", r->out);
    d9_html_text(r->out, p ? p->cmdline : "");
    if (p && p->hostname[0]) {
        fputs(" &middot; host ", r->out);
        d9_html_text(r->out, p->hostname);
    }
    fputs("</p>\n<table class=\"threads\"><thead><tr><th>tid</th><th>name</th><th>role</th><th>parks</th>"
          "<th>busy %</th><th>park p50</th><th>p99</th><th>max</th><th>busy period p50</th><th>p99</th>"
          "<th>max</th><th>wakes sent</th><th>wakes received</th><th>zero-timeout polls</th><th>dropped</th>"
          "<th>parks by call</th></tr></thead><tbody>\n",
          r->out);
}

void d9_rep_threads(const struct d9_rep *r)
{
    const struct d9_summary *s = r->s;
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        if (i == 0 || t->pid != s->t[i - 1].pid) {
            if (i)
                fputs("</tbody></table>\n", r->out);
            process_head(r, t->pid);
        }
        uint64_t span = t->busy_ns + t->parked_ns;
        fprintf(r->out, "<tr data-pid=\"%s\" data-tid=\"%" PRIu32 "\" data-parks=\"%" PRIu64
                        "\" data-wakes-received=\"%" PRIu64 "\"><td class=\"n\">%" PRIu32 "</td><td>",
                D9_PID_STR(t->pid), t->tid, t->parks, t->wakes_received, t->tid);
        d9_html_text(r->out, t->name[0] ? t->name : "-");
        fprintf(r->out, "</td><td>%s</td>", d9_role_name(t->role));
        td_u64(r, t->parks);
        fprintf(r->out, "<td class=\"n\">%.1f</td>", span ? 100.0 * (double)t->busy_ns / (double)span : 0.0);
        td_dist(r, &t->park_ns);
        td_dist(r, &t->busy_period_ns);
        td_u64(r, t->wakes_sent);
        td_u64(r, t->wakes_received);
        td_u64(r, t->nowait_polls);
        fprintf(r->out, "<td class=\"n%s\">%" PRIu64 "</td><td>", t->dropped ? " bad" : "", t->dropped);
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (t->parks_by_call[k])
                fprintf(r->out, "%s=%" PRIu64 " ", d9_call_name(k), t->parks_by_call[k]);
        fputs("</td></tr>\n", r->out);
    }
    if (s->nt)
        fputs("</tbody></table>\n<p class=\"note\">busy % of the span between the thread's first and last "
              "event; park and busy-period durations are nearest-rank percentiles; wakes received are those "
              "matched to the unpark they caused.</p>\n",
              r->out);
    else
        fputs("<p>No thread recorded anything.</p>\n", r->out);
}

static void wakes_table(const struct d9_rep *r)
{
    fputs("<h3 id=\"wake-table\">Wake-to-run latency per woken thread</h3>\n", r->out);
    if (!r->s->nwakes) {
        fputs("<p>No matched wakes.</p>\n", r->out);
        return;
    }
    fputs("<table><thead><tr><th>pid</th><th>thread</th><th>role</th><th>wakes received</th><th>p50</th>"
          "<th>p99</th><th>max</th></tr></thead><tbody>\n",
          r->out);
    for (size_t i = 0; i < r->s->nt; i++) {
        const struct d9_tstats *t = &r->s->t[i];
        if (!t->wake_latency_ns.n)
            continue;
        fprintf(r->out, "<tr data-tid=\"%" PRIu32 "\"><td class=\"n\">%s</td><td>", t->tid, D9_PID_STR(t->pid));
        d9_rep_thread(r, t->pid, t->tid);
        fprintf(r->out, "</td><td>%s</td>", d9_role_name(t->role));
        td_u64(r, t->wake_latency_ns.n);
        td_dist(r, &t->wake_latency_ns);
        fputs("</tr>\n", r->out);
    }
    fputs("</tbody></table>\n", r->out);
}

static void sched_table(const struct d9_rep *r)
{
    fputs("<h3 id=\"sched-table\">Kernel scheduling delay and preemption</h3>\n", r->out);
    int any = 0;
    for (size_t i = 0; i < r->s->nt; i++) {
        const struct d9_tstats *t = &r->s->t[i];
        const struct d9_hist *sd = d9_rep_hist(r, i, D9_REP_SCHED);
        if (!sd->n && !t->preempts)
            continue;
        if (!any++)
            fputs("<table><thead><tr><th>pid</th><th>thread</th><th>readings</th><th>run-queue wait</th>"
                  "<th>max reading</th><th>max share of a reading's window</th><th>preemptions</th><th>off CPU</th>"
                  "<th>max</th></tr></thead><tbody>\n",
                  r->out);
        fprintf(r->out, "<tr><td class=\"n\">%s</td><td>", D9_PID_STR(t->pid));
        d9_rep_thread(r, t->pid, t->tid);
        fputs("</td>", r->out);
        td_u64(r, sd->n);
        d9_rep_td_dur(r, t->sched_total);
        d9_rep_td_dur(r, sd->max);
        char sh[40];
        fprintf(r->out, "<td class=\"n\">%s</td>",
                d9_fmt_share(sh, sizeof(sh), t->sched_share_delay, t->sched_share_window));
        td_u64(r, t->preempts);
        d9_rep_td_dur(r, t->preempt_total);
        d9_rep_td_dur(r, t->preempt_max);
        fputs("</tr>\n", r->out);
    }
    fputs(any ? "</tbody></table>\n" : "<p>None recorded.</p>\n", r->out);
}

static void sys_tables(const struct d9_rep *r)
{
    const struct d9_summary *s = r->s;
    fputs("<h3 id=\"slow-table\">Slow syscalls by call</h3>\n", r->out);
    if (!s->nworst_slow)
        fputs("<p>None recorded (calls above the agent's threshold).</p>\n", r->out);
    else {
        fputs("<table><thead><tr><th>call</th><th>count</th><th>total</th><th>max</th></tr></thead><tbody>\n",
              r->out);
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (s->sys[k].count) {
                fprintf(r->out, "<tr><td>%s</td>", d9_call_name(k));
                td_u64(r, s->sys[k].count);
                d9_rep_td_dur(r, s->sys[k].total_ns);
                d9_rep_td_dur(r, s->sys[k].max_ns);
                fputs("</tr>\n", r->out);
            }
        fputs("</tbody></table>\n", r->out);
    }
    fputs("<h3 id=\"lock-table\">Contended locks by address</h3>\n", r->out);
    if (!s->nlocks) {
        fputs("<p>None recorded (waits above the agent's threshold).</p>\n", r->out);
        return;
    }
    fputs("<table><thead><tr><th>pid</th><th>lock</th><th>call</th><th>waits</th><th>total</th><th>max</th>"
          "</tr></thead><tbody>\n",
          r->out);
    for (size_t i = 0; i < s->nlocks; i++) {
        const struct d9_lock *l = &s->locks[i];
        fprintf(r->out, "<tr><td class=\"n\">%s</td><td><code>0x%" PRIx64 "</code></td><td>%s</td>", D9_PID_STR(l->pid),
                l->target, d9_call_name(l->call));
        td_u64(r, l->count);
        d9_rep_td_dur(r, l->total_ns);
        d9_rep_td_dur(r, l->max_ns);
        fputs("</tr>\n", r->out);
    }
    fputs("</tbody></table>\n", r->out);
}

/* Application events (dial9_event): a table only when the program recorded any. */
static void app_table(const struct d9_rep *r)
{
    const struct d9_apps *a = &r->s->apps;
    if (!a->n)
        return;
    fputs("<h3 id=\"app-table\">Application events (dial9_event)</h3>\n"
          "<table><thead><tr><th>pid</th><th>name</th><th>count</th><th>min</th><th>max</th><th>sum</th>"
          "</tr></thead><tbody>\n",
          r->out);
    for (size_t i = 0; i < a->n; i++) {
        const struct d9_app *x = &a->a[i];
        fprintf(r->out, "<tr><td class=\"n\">%s</td><td>", D9_PID_STR(x->pid));
        d9_html_text(r->out, x->name);
        fputs("</td>", r->out);
        td_u64(r, x->count);
        fprintf(r->out, "<td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td>", x->min, x->max);
        if (x->sum_overflow)
            fputs("<td class=\"n\">overflow</td></tr>\n", r->out);
        else
            fprintf(r->out, "<td class=\"n\">%" PRId64 "</td></tr>\n", x->sum);
    }
    fputs("</tbody></table>\n", r->out);
}

void d9_rep_details(const struct d9_rep *r)
{
    wakes_table(r);
    sched_table(r);
    sys_tables(r);
    app_table(r);
}
