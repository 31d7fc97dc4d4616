/* report_html.c - `dial9-decode report`: options, inputs, and the page -
 * one self-contained HTML file (inline CSS and SVG, no script, nothing
 * fetched) with the verdict's red flags, the summary tables, utilization
 * over time, histograms and the worst stalls (the sections: report_*.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"
#include "html.h"
#include "pidkey.h"
#include "report_html.h"
#include "stream.h"
#include "verdict.h"

static const char css[] =
    "body{font:13px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}"
    "h1{font-size:20px;margin:0 0 .3em}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:1.6em}"
    "h3{font-size:14px;margin:1.2em 0 .3em}.meta,.note{color:#555}nav a{margin-right:1em}"
    "table{border-collapse:collapse;margin:.3em 0}th,td{padding:2px 7px;border-bottom:1px solid #e3e3e3;"
    "text-align:left;vertical-align:top}th{background:#f2f2f2;font-weight:600}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}.bad{color:#b00020;font-weight:600}"
    "code.cmd{user-select:all;font-size:11px;background:#f6f6f6;padding:1px 3px;word-break:break-all}"
    ".flags{border-left:4px solid #b00020;padding:.2em .8em;background:#fff5f5}"
    ".clean{border-left:4px solid #2e7d32;padding:.4em .8em;background:#f3fbf3}"
    ".figs{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0;border:1px solid #e3e3e3;padding:4px}"
    "figcaption{font-size:12px;color:#444;max-width:320px}.scroll{overflow-x:auto}"
    "svg text{font:10px system-ui,sans-serif;fill:#333}svg .axis{stroke:#888}svg .grid{stroke:#eee}"
    "svg .bar{fill:#3b6fb6}svg .bar:hover,svg .row rect:hover{fill:#e08a00}";

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "dial9-decode report: %s%s\ntry 'dial9-decode --help'\n", what, arg);
    return 2;
}

struct cmd {
    const char *out;
    struct d9_limits lim;
    char **paths;
    int npaths;
};

/* Options into c (argv is compacted: paths stay). 0 ok, 2 usage error. */
static int parse(int argc, char **argv, struct cmd *c)
{
    int done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (done || a[0] != '-' || a[1] == 0)
            c->paths[c->npaths++] = argv[i];
        else if (!strcmp(a, "--"))
            done = 1;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return usage_error("missing file for ", a);
            c->out = argv[++i];
        } else if (!strncmp(a, "--output=", 9) && a[9])
            c->out = a + 9;
        else if ((r = d9_limit_option(argc, argv, &i, &c->lim)) == 2)
            return 2;
        else if (r == 0)
            return usage_error("unknown option: ", a);
    }
    if (c->npaths == 0)
        return usage_error("no PATH given", "");
    if ((!c->out || !strcmp(c->out, "-")) && isatty(STDOUT_FILENO))
        return usage_error("give -o FILE (or redirect stdout): the report is an HTML page", "");
    return 0;
}

static void header(const struct d9_rep *r, int bad)
{
    FILE *o = r->out;
    char sp[24];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<link rel=\"icon\" href=\"data:,\">\n<title>dial9 report",
          o);
    for (size_t i = 0; i < r->m->nproc; i++) {
        const char *exe = r->m->proc[i].exe, *base = strrchr(exe, '/');
        fputs(i ? ", " : ": ", o);
        d9_html_text(o, base ? base + 1 : exe);
    }
    fprintf(o, "</title>\n<style>%s</style></head><body>\n<h1>dial9 report</h1>\n<p class=\"meta\">", css);
    fprintf(o, "<span id=\"span\" data-ns=\"%" PRIu64 "\">%s</span> recorded, %" PRIu64 " events, %" PRIu64
               " dropped, %zu processes, %zu threads",
            r->span, d9_fmt_dur(sp, sizeof(sp), r->span), r->s->events, r->s->dropped, r->m->nproc, r->s->nt);
    if (bad)
        fprintf(o, ", <span class=\"bad\">%d input%s damaged, truncated or unreadable</span> (what could be "
                   "decoded is shown)",
                bad, bad == 1 ? "" : "s");
    fputs("<br>inputs:", o);
    for (int i = 0; i < r->npaths; i++) {
        fputs(" <code>", o);
        d9_html_text(o, r->paths[i]);
        fputs("</code>", o);
    }
    fputs("</p>\n<nav><a href=\"#flags\">red flags</a><a href=\"#threads\">threads</a><a href=\"#utilization\">"
          "utilization</a><a href=\"#stalls\">worst stalls</a><a href=\"#histograms\">histograms</a><a "
          "href=\"#details\">latency, scheduling, syscalls, locks</a></nav>\n",
          o);
}

static void limits_text(FILE *o, const struct d9_limits *l)
{
    char a[24], b[24], c[24], d[24], e[24];
    fprintf(o,
            "wake-to-run %s, scheduling delay %s and %" PRIu64 "%% of a reading's window, slow syscall %s, busy "
            "period %s, lock wait %s, drops %" PRIu64,
            d9_fmt_dur(a, sizeof(a), l->wake_ns), d9_fmt_dur(b, sizeof(b), l->sched_ns), l->sched_pct,
            d9_fmt_dur(c, sizeof(c), l->slow_ns), d9_fmt_dur(d, sizeof(d), l->busy_ns),
            d9_fmt_dur(e, sizeof(e), l->lock_ns), l->max_drops);
}

static void flags(const struct d9_rep *r, const struct d9_flag *f, size_t n, const struct d9_limits *lim)
{
    FILE *o = r->out;
    fputs("<section id=\"flags\">\n", o);
    if (!n) {
        fputs("<p class=\"clean\" data-flags=\"0\">No red flags (<code>dial9-decode verdict</code> is clean) at "
              "the thresholds: ",
              o);
        limits_text(o, lim);
        fputs(".</p>\n</section>\n", o);
        return;
    }
    fprintf(o, "<div class=\"flags\" data-flags=\"%zu\"><h2>Red flags (%zu)</h2>\n<p>What <code>dial9-decode "
               "verdict</code> flags, each the worst figure of a thread above its threshold. Thresholds: ",
            n, n);
    limits_text(o, lim);
    fputs(".</p>\n<table><thead><tr><th>flag</th><th>worst</th><th>threshold</th><th>over</th><th>pid</th>"
          "<th>thread</th><th>call</th></tr></thead><tbody>\n",
          o);
    for (size_t i = 0; i < n; i++) {
        int dur = d9_flag_is_duration(f[i].kind);
        fprintf(o, "<tr class=\"flag\"><td class=\"bad\">%s</td>", d9_flag_name(f[i].kind));
        if (dur) {
            d9_rep_td_dur(r, f[i].value);
            d9_rep_td_dur(r, f[i].threshold);
        } else
            fprintf(o, "<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 "</td>", f[i].value, f[i].threshold);
        fprintf(o, "<td class=\"n\">%" PRIu64 "</td>", f[i].count);
        if (f[i].name) {
            fprintf(o, "<td class=\"n\">%s</td><td>", D9_PID_STR(f[i].pid));
            d9_rep_thread(r, f[i].pid, f[i].tid);
            fputs("</td>", o);
        } else
            fputs("<td>-</td><td>-</td>", o);
        fprintf(o, "<td>%s</td></tr>\n", f[i].call >= 0 ? d9_call_name((unsigned)f[i].call) : "-");
    }
    fputs("</tbody></table></div>\n</section>\n", o);
}

/* The page after the flags. 0 ok, -1 out of memory. */
static int body(const struct d9_rep *r)
{
    FILE *o = r->out;
    fputs("<section id=\"threads\"><h2>Threads</h2>\n", o);
    d9_rep_threads(r);
    fputs("</section>\n<section id=\"utilization\"><h2>Utilization over time</h2>\n<p class=\"note\">Per thread, "
          "the fraction of each time bin it was busy (running between an unpark or its start and its next park); "
          "blank: no event of the thread covers the bin (not started, exited, or not recorded).</p>\n",
          o);
    if (d9_rep_util(r) < 0)
        return -1;
    fputs("</section>\n<section id=\"stalls\"><h2>Worst stalls</h2>\n<p class=\"note\">Times are ns since the trace "
          "start (its first event). Each command exports the timeline of a window around the stall (the stall "
          "plus as much again, at least 1 ms, each side) for ui.perfetto.dev; <code>--format chrome</code> writes "
          "JSON for chrome://tracing or speedscope instead. Click a command to select it.</p>\n",
          o);
    d9_rep_stalls(r);
    fputs("</section>\n<section id=\"histograms\"><h2>Histograms</h2>\n", o);
    if (d9_rep_hists(r) < 0)
        return -1;
    fputs("</section>\n<section id=\"details\"><h2>Latency, scheduling, syscalls, locks</h2>\n", o);
    d9_rep_details(r);
    fputs("</section>\n<footer class=\"note\"><p>Written by <code>dial9-decode report</code>; durations are "
          "rounded for reading, exact ns are in each cell's data-ns attribute.</p></footer>\n</body></html>\n",
          o);
    return 0;
}

int d9_cmd_report(int argc, char **argv)
{
    struct cmd c = {.lim = D9_LIMITS_DEFAULT, .paths = argv};
    int rc = parse(argc, argv, &c);
    if (rc)
        return rc;
    struct d9_model m = {0};
    struct d9_summary s = {0};
    struct d9_flag *f = NULL;
    size_t nf = 0;
    int bad = 0, to_file = c.out && strcmp(c.out, "-");
    struct d9_rep r = {.m = &m, .s = &s, .paths = c.paths, .npaths = c.npaths};
    /* The verdict's thresholds (exact "N over"), and the wake log the export walker needs for utilization. */
    struct d9_analysis_opts ao = {.lim = &c.lim, .wakelog = 1};
    if (d9_load(&m, c.paths, c.npaths, &bad) < 0)
        rc = -1;
    if (rc == 0 && m.src)
        d9_stream_set_passes(m.src, 2); /* analysis, then the walk */
    if (rc == 0 && (d9_analyse_opts(&m, &s, &ao) < 0 || d9_verdict(&s, bad, &f, &nf) < 0))
        rc = -1;
    if (rc == 0) {
        r.t0 = s.first_ts;
        r.span = s.last_ts - s.first_ts;
        r.out = to_file ? fopen(c.out, "w") : stdout;
        if (!r.out) {
            fprintf(stderr, "dial9-decode report: %s: %s\n", c.out, strerror(errno));
            rc = 1;
        } else {
            header(&r, bad);
            flags(&r, f, nf, &c.lim);
            rc = body(&r);
            int werr = fflush(r.out) != 0 || ferror(r.out);
            if (to_file && fclose(r.out) != 0)
                werr = 1;
            if (werr && rc == 0) {
                fprintf(stderr, "dial9-decode report: %s: write error\n", to_file ? c.out : "stdout");
                rc = 1;
            }
        }
    }
    if (rc < 0)
        fprintf(stderr, "dial9-decode report: out of memory\n");
    free(f);
    d9_summary_free(&s);
    d9_model_free(&m);
    return rc ? 1 : bad ? 1 : 0;
}
