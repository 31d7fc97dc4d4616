/* summary_app.c - summary's "application events" section: the events a
 * program recorded with dial9_event (include/dial9.h), per process and
 * name, with their values' count, min, mean, max and sum. */
#include <inttypes.h>
#include <stdio.h>

#include "summary.h"
#include "pidkey.h"

static double mean(const struct d9_app *a) { return a->count ? (double)a->sum / (double)a->count : 0.0; }

void d9_app_text(const struct d9_summary *s)
{
    const struct d9_apps *x = &s->apps;
    if (!x->n)
        return;
    puts("\napplication events (dial9_event), per process and name:");
    printf("  %-8s %-16s %10s %20s %20s %20s %20s\n", "PID", "NAME", "COUNT", "MIN", "MEAN", "MAX", "SUM");
    for (size_t i = 0; i < x->n; i++) {
        const struct d9_app *a = &x->a[i];
        char sum[24];
        if (a->sum_overflow)
            snprintf(sum, sizeof(sum), "overflow");
        else
            snprintf(sum, sizeof(sum), "%" PRId64, a->sum);
        printf("  %-8s %-16s %10" PRIu64 " %20" PRId64 " %20.1f %20" PRId64 " %20s\n", D9_PID_STR(a->pid), a->name,
               a->count, a->min, a->sum_overflow ? 0.0 : mean(a), a->max, sum);
    }
}

void d9_app_json(struct d9_jw *w, const struct d9_summary *s)
{
    d9_jw_arr(w, "app_events");
    for (size_t i = 0; i < s->apps.n; i++) {
        const struct d9_app *a = &s->apps.a[i];
        d9_jw_obj(w, NULL);
        d9_jw_pid(w, a->pid);
        d9_jw_str(w, "name", a->name);
        d9_jw_u64(w, "count", a->count);
        d9_jw_i64(w, "min", a->min);
        d9_jw_i64(w, "max", a->max);
        if (a->sum_overflow) {
            d9_jw_null(w, "sum");
            d9_jw_null(w, "mean");
        } else {
            d9_jw_i64(w, "sum", a->sum);
            d9_jw_num(w, "mean", mean(a));
        }
        d9_jw_end(w);
    }
    d9_jw_end(w);
}
