/* timearg.c - see timearg.h. */
#include "timearg.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "model.h"
#include "verdict.h" /* d9_parse_count */

#define NS_PER_S 1000000000LL
#define NS_PER_DAY (86400 * NS_PER_S)

/* Exactly n digits at *p (moved past them) into *v: 0, or -1. */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (y >= 1970). */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int era = y / 400, yoe = y - era * 400;
    int doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + doe - 719468;
}

static int month_days(int y, int m)
{
    static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return n[m - 1] + (m == 2 && leap);
}

/* [.F][zone] at p to the end: the fraction in ns and the zone's offset
 * east of UTC in ns. 0, or -1. */
static int tail(const char *p, int64_t *frac, int64_t *offset)
{
    *frac = 0;
    *offset = 0;
    if (*p == '.') {
        int64_t scale = NS_PER_S;
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (scale == 1) /* below the ns */
                return -1;
            scale /= 10;
            *frac += (*p - '0') * scale;
        }
    }
    if (*p == 'Z' || *p == 'z')
        return p[1] ? -1 : 0;
    if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, hh, mm = 0;
        if (digits(&p, 2, &hh) < 0 || hh > 23)
            return -1;
        int colon = *p == ':';
        p += colon;
        if ((*p || colon) && (digits(&p, 2, &mm) < 0 || mm > 59))
            return -1;
        *offset = sign * ((int64_t)hh * 3600 + mm * 60) * NS_PER_S;
    }
    return *p ? -1 : 0;
}

int d9_timearg_parse(const char *s, struct d9_timearg *t)
{
    memset(t, 0, sizeof(*t));
    if (!strchr(s, ':')) {
        t->kind = D9_TIME_SINCE_START;
        return d9_parse_count(s, &t->since);
    }
    const char *p = s;
    int y = 0, mo = 0, d = 0, h, mi, sec, dated = strlen(s) > 10 && s[4] == '-';
    if (dated) {
        if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' ||
            digits(&p, 2, &d) < 0 || (*p != 'T' && *p != 't' && *p != ' '))
            return -1;
        p++;
        if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo))
            return -1;
    }
    if (digits(&p, 2, &h) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0 || *p++ != ':' || digits(&p, 2, &sec) < 0 ||
        h > 23 || mi > 59 || sec > 59)
        return -1;
    int64_t frac, offset;
    if (tail(p, &frac, &offset) < 0)
        return -1;
    int64_t ns = ((int64_t)h * 3600 + mi * 60 + sec) * NS_PER_S + frac - offset;
    if (dated) {
        t->kind = D9_TIME_UTC;
        t->ns = days_from_civil(y, mo, d) * NS_PER_DAY + ns;
        return t->ns < 0 ? -1 : 0; /* before 1970 after the offset */
    }
    t->kind = D9_TIME_OF_DAY;
    t->ns = (ns % NS_PER_DAY + NS_PER_DAY) % NS_PER_DAY; /* an offset may cross midnight */
    return 0;
}

int d9_timearg_resolve(const struct d9_timearg *t, const struct d9_anchor *a, uint64_t start_mono, int64_t *rel)
{
    if (t->kind == D9_TIME_SINCE_START) {
        *rel = t->since > INT64_MAX ? INT64_MAX : (int64_t)t->since;
        return 0;
    }
    if (!a || !a->real_ns || a->real_ns > INT64_MAX || a->mono_ns > INT64_MAX || start_mono > INT64_MAX)
        return -1;
    int64_t real = t->ns, start_real;
    /* realtime - monotonic is constant between clock steps: the anchor's. */
    int64_t shift = (int64_t)a->real_ns - (int64_t)a->mono_ns;
    if (__builtin_add_overflow((int64_t)start_mono, shift, &start_real))
        return -1;
    if (t->kind == D9_TIME_OF_DAY) {
        int64_t day = start_real / NS_PER_DAY - (start_real % NS_PER_DAY < 0);
        real = day * NS_PER_DAY + t->ns;
        if (real - start_real > NS_PER_DAY / 2)
            real -= NS_PER_DAY;
        else if (start_real - real > NS_PER_DAY / 2)
            real += NS_PER_DAY;
    }
    return __builtin_sub_overflow(real, start_real, rel) ? -1 : 0;
}

int d9_window_resolve(const char *from, const char *to, const struct d9_anchor *a, uint64_t start_mono,
                      uint64_t *f, uint64_t *t, char *err, size_t n)
{
    const char *v[2] = {from, to}, *opt[2] = {"--from", "--to"};
    uint64_t *out[2] = {f, t};
    *f = 0;
    *t = UINT64_MAX;
    for (int i = 0; i < 2; i++) {
        struct d9_timearg ta;
        int64_t rel;
        if (!v[i])
            continue;
        if (d9_timearg_parse(v[i], &ta) < 0) {
            snprintf(err, n, "%s: not ns since the trace start nor a UTC time (e.g. 2026-11-24T06:10:03.25Z, "
                             "06:10:03.25): %s", opt[i], v[i]);
            return -1;
        }
        if (d9_timearg_resolve(&ta, a, start_mono, &rel) < 0) {
            snprintf(err, n, "%s %s: %s", opt[i], v[i],
                     a && a->real_ns ? "out of range" : "no segment has a realtime anchor to convert it");
            return -1;
        }
        if (rel < 0 && i == 1) {
            snprintf(err, n, "--to %s is %" PRId64 " ns before the trace start", v[i], -rel);
            return -1;
        }
        if (ta.kind == D9_TIME_SINCE_START)
            *out[i] = ta.since; /* as given, up to UINT64_MAX */
        else
            *out[i] = rel < 0 ? 0 : (uint64_t)rel;
    }
    if (*f > *t) {
        snprintf(err, n, "--from is after --to (%" PRIu64 " > %" PRIu64 " ns since the trace start)", *f, *t);
        return -1;
    }
    return 0;
}

struct d9_anchor d9_model_anchor(const struct d9_model *m)
{
    struct d9_anchor a = {0, 0};
    for (size_t i = 0; i < m->nproc; i++) {
        const struct d9_proc *p = &m->proc[i];
        if (p->anchor_real_ns && (!a.real_ns || p->anchor_mono_ns < a.mono_ns))
            a = (struct d9_anchor){p->anchor_real_ns, p->anchor_mono_ns};
    }
    return a;
}

uint64_t d9_trace_start(const struct d9_summary *s)
{
    uint64_t t0 = 0;
    for (size_t i = 0; i < s->nt; i++)
        if (i == 0 || s->t[i].first_ts < t0)
            t0 = s->t[i].first_ts;
    return t0;
}
