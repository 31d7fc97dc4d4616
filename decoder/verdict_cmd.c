/* verdict_cmd.c - `dial9-decode verdict`: one line per red flag (or
 * "clean"), or one JSON object; exit 0 clean, 1 any flag. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "fmt.h"
#include "json.h"
#include "pidkey.h"
#include "verdict.h"

static const char *figure(char *buf, size_t n, const struct d9_flag *f, uint64_t v)
{
    if (d9_flag_is_duration(f->kind))
        return d9_fmt_dur(buf, n, v);
    snprintf(buf, n, "%" PRIu64, v);
    return buf;
}

/* wake_latency 18.2ms > 5ms (3 over) pid 12 tid 14 worker-1 call=futex
 * sched_delay 12.1ms > 5.2ms (2 over) pid 12 tid 15 worker-2 window=52.0ms */
static void print_text(const struct d9_flag *f, size_t n)
{
    if (!n)
        puts("clean");
    for (size_t i = 0; i < n; i++) {
        char v[24], t[24], nm[24];
        printf("%-14s %10s > %-10s (%" PRIu64 " over)", d9_flag_name(f[i].kind), figure(v, sizeof(v), &f[i], f[i].value),
               figure(t, sizeof(t), &f[i], f[i].threshold), f[i].count);
        if (f[i].name)
            printf(" pid %s tid %" PRIu32 " %s", D9_PID_STR(f[i].pid), f[i].tid, d9_fmt_name(nm, sizeof(nm), f[i].name));
        if (f[i].call >= 0)
            printf(" call=%s", d9_call_name((unsigned)f[i].call));
        if (f[i].window)
            printf(" window=%s", d9_fmt_dur(v, sizeof(v), f[i].window));
        putchar('\n');
    }
}

static void print_json(const struct d9_flag *f, size_t n)
{
    struct d9_jw w;
    d9_jw_init(&w, stdout);
    d9_jw_obj(&w, NULL);
    d9_jw_bool(&w, "clean", n == 0);
    d9_jw_arr(&w, "flags");
    for (size_t i = 0; i < n; i++) {
        d9_jw_newline(&w);
        d9_jw_obj(&w, NULL);
        d9_jw_str(&w, "flag", d9_flag_name(f[i].kind));
        d9_jw_u64(&w, "value", f[i].value);
        d9_jw_u64(&w, "threshold", f[i].threshold);
        d9_jw_str(&w, "unit", d9_flag_is_duration(f[i].kind) ? "ns" : f[i].kind == D9_FLAG_DROPS ? "events" : "inputs");
        if (f[i].name) {
            d9_jw_pid(&w, f[i].pid);
            d9_jw_u64(&w, "tid", f[i].tid);
        } else {
            d9_jw_null(&w, "pid");
            d9_jw_null(&w, "tid");
        }
        d9_jw_str(&w, "name", f[i].name);
        d9_jw_u64(&w, "count", f[i].count);
        if (f[i].call >= 0)
            d9_jw_str(&w, "call", d9_call_name((unsigned)f[i].call));
        if (f[i].kind == D9_FLAG_SCHED_DELAY && f[i].window)
            d9_jw_u64(&w, "window_ns", f[i].window);
        else if (f[i].kind == D9_FLAG_SCHED_DELAY)
            d9_jw_null(&w, "window_ns");
        d9_jw_end(&w);
    }
    d9_jw_end(&w);
    d9_jw_end(&w);
    putchar('\n');
}

int d9_cmd_verdict(char *const *paths, int npaths, int json, const struct d9_limits *lim)
{
    struct d9_model m = {0};
    struct d9_summary s = {0};
    struct d9_flag *f = NULL;
    size_t n = 0;
    struct d9_analysis_opts o = {.lim = lim}; /* the verdict's thresholds: exact "N over" */
    int bad = 0, rc = d9_load(&m, paths, npaths, &bad);
    if (rc == 0)
        rc = d9_analyse_opts(&m, &s, &o);
    if (rc == 0)
        rc = d9_verdict(&s, bad, &f, &n);
    if (rc < 0)
        fprintf(stderr, "dial9-decode: out of memory\n");
    else if (json)
        print_json(f, n);
    else
        print_text(f, n);
    free(f);
    d9_summary_free(&s);
    d9_model_free(&m);
    return rc < 0 || n ? 1 : 0;
}
