/* report_charts.c - the report's charts: each thread's busy fraction over
 * time (utilization.c's bins as a heat strip) and histograms of park
 * durations, busy periods and wake-to-run latency, all threads together
 * and per role, from the threads' bounded histograms (hist.h) grouped into
 * powers of two (exact: a hist.h bucket never straddles one). */
#include <inttypes.h>
#include <stdlib.h>

#include "fmt.h"
#include "html.h"
#include "pidkey.h"
#include "report_html.h"
#include "svg.h"
#include "utilization.h"

const struct d9_hist *d9_rep_hist(const struct d9_rep *r, size_t i, enum d9_rep_metric k)
{
    const struct d9_tstats *t = &r->s->t[i];
    return k == D9_REP_PARK ? &t->park : k == D9_REP_BUSY ? &t->busy : k == D9_REP_WAKE ? &t->wake_lat : &t->sched;
}

int d9_rep_util(const struct d9_rep *r)
{
    struct d9_util u = {0};
    if (d9_util_compute(r->m, r->s, &u) < 0) {
        d9_util_free(&u);
        return -1;
    }
    uint64_t nb = (r->span + u.bin_ns - 1) / u.bin_ns;
    size_t nbins = nb < 1 ? 1 : nb > D9_UTIL_BINS ? D9_UTIL_BINS : (size_t)nb;
    struct d9_heat_row *rows = calloc(u.n + 1, sizeof(*rows));
    double *frac = calloc((u.n + 1) * D9_UTIL_BINS, sizeof(*frac));
    char (*text)[112] = calloc(u.n + 1, sizeof(*text) * 2); /* label, attrs per row */
    if (!rows || !frac || !text) {
        free(rows);
        free(frac);
        free(text);
        d9_util_free(&u);
        return -1;
    }
    int procs = r->m->nproc > 1;
    for (size_t k = 0; k < u.n; k++) {
        const struct d9_util_row *w = &u.rows[k];
        double *f = frac + k * D9_UTIL_BINS;
        for (size_t i = 0; i < nbins; i++) {
            uint64_t lo = i * u.bin_ns, hi = lo + u.bin_ns;
            uint64_t width = r->span > lo && r->span < hi ? r->span - lo : u.bin_ns; /* the last bin: partly covered */
            f[i] = w->seen[i] ? (double)w->busy[i] / (double)width : -1;
        }
        char nm[24];
        if (procs)
            snprintf(text[2 * k], sizeof(text[0]), "%s/%" PRIu32 " %s", D9_PID_STR(w->pid), w->tid,
                     d9_fmt_name(nm, sizeof(nm), w->name));
        else
            snprintf(text[2 * k], sizeof(text[0]), "%" PRIu32 " %s", w->tid, d9_fmt_name(nm, sizeof(nm), w->name));
        uint64_t busy = 0;
        for (size_t i = 0; i < D9_UTIL_BINS; i++)
            busy += w->busy[i];
        snprintf(text[2 * k + 1], sizeof(text[0]),
                 "data-pid=\"%s\" data-tid=\"%" PRIu32 "\" data-busy-ns=\"%" PRIu64 "\"", D9_PID_STR(w->pid), w->tid, busy);
        rows[k] = (struct d9_heat_row){text[2 * k], text[2 * k + 1], f};
    }
    fputs("<div class=\"scroll\">\n", r->out);
    d9_svg_heat(r->out, rows, u.n, nbins, u.bin_ns, r->span);
    fputs("</div>\n", r->out);
    free(rows);
    free(frac);
    free(text);
    d9_util_free(&u);
    return 0;
}

/* Power-of-two group of v: 0 holds 0, g >= 1 holds [2^(g-1), 2^g - 1]. */
static unsigned group(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0; }

/* h as bars from its first to its last non-empty group; returns how many. */
static size_t log2_bars(const struct d9_hist *h, struct d9_bar b[65])
{
    uint64_t count[65] = {0}, lo, hi;
    unsigned first = 65, last = 0, top = 65; /* top: the group of the open-ended last bucket */
    for (size_t i = 0; i < D9_HIST_BUCKETS; i++) {
        uint64_t c = d9_hist_bucket(h, i, &lo, &hi);
        if (!c)
            continue;
        unsigned g = group(lo);
        count[g] += c;
        first = g < first ? g : first;
        last = g > last ? g : last;
        if (hi == UINT64_MAX)
            top = g;
    }
    if (first > last)
        return 0;
    for (unsigned g = first; g <= last; g++) {
        uint64_t glo = g ? 1ull << (g - 1) : 0;
        uint64_t ghi = g == 0 ? 0 : g == 64 || g == top ? UINT64_MAX : (1ull << g) - 1;
        b[g - first] = (struct d9_bar){glo, ghi, count[g]};
    }
    return last - first + 1;
}

static const struct {
    const char *id, *title, *what;
} metrics[] = {
    [D9_REP_PARK] = {"park", "Park durations", "each finished park (PARK -> UNPARK) of the threads"},
    [D9_REP_BUSY] = {"busy", "Busy periods", "thread start or unpark -> next park"},
    [D9_REP_WAKE] = {"wake_latency", "Wake-to-run latency",
                     "waker's wake call -> the wakee's return from its park, counted on the woken thread"},
};

/* One histogram figure: the threads of role (or all: role < 0) merged. */
static int figure(const struct d9_rep *r, enum d9_rep_metric k, int role)
{
    struct d9_hist h = {0};
    size_t threads = 0;
    for (size_t i = 0; i < r->s->nt; i++) {
        if (role >= 0 && r->s->t[i].role != (enum d9_role)role)
            continue;
        threads++;
        if (d9_hist_merge(&h, d9_rep_hist(r, i, k)) < 0) {
            d9_hist_free(&h);
            return -1;
        }
    }
    if (role >= 0 && !threads)
        return 0; /* no thread has this role: no chart */
    const char *scope = role < 0 ? "all" : d9_role_name((enum d9_role)role);
    struct d9_bar b[65];
    size_t n = log2_bars(&h, b);
    char attrs[160], p50[24], p99[24], max[24];
    snprintf(attrs, sizeof(attrs), "data-metric=\"%s\" data-scope=\"%s\" data-count=\"%" PRIu64 "\"", metrics[k].id,
             scope, h.n);
    fputs("<figure>", r->out);
    d9_svg_bars(r->out, b, n, attrs);
    fprintf(r->out, "<figcaption><b>%s</b> (%zu thread%s): %" PRIu64 " values", role < 0 ? "all threads" : scope,
            threads, threads == 1 ? "" : "s", h.n);
    if (h.n)
        fprintf(r->out, ", p50 %s, p99 %s, max %s", d9_fmt_dur(p50, sizeof(p50), d9_hist_quantile(&h, 0.5)),
                d9_fmt_dur(p99, sizeof(p99), d9_hist_quantile(&h, 0.99)), d9_fmt_dur(max, sizeof(max), h.max));
    fputs("</figcaption></figure>\n", r->out);
    d9_hist_free(&h);
    return 0;
}

int d9_rep_hists(const struct d9_rep *r)
{
    static const int roles[] = {-1, D9_ROLE_WORKER, D9_ROLE_BLOCKING, D9_ROLE_OTHER};
    for (int k = D9_REP_PARK; k <= D9_REP_WAKE; k++) {
        fprintf(r->out, "<h3 id=\"hist-%s\">%s</h3>\n<p class=\"note\">%s; bars are powers of two (hover for the "
                        "range and count).</p>\n<div class=\"figs\">\n",
                metrics[k].id, metrics[k].title, metrics[k].what);
        for (size_t j = 0; j < sizeof(roles) / sizeof(roles[0]); j++)
            if (figure(r, (enum d9_rep_metric)k, roles[j]) < 0)
                return -1;
        fputs("</div>\n", r->out);
    }
    return 0;
}
