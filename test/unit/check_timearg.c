/* check_timearg.c - window times (timearg.h): the accepted forms and what
 * they mean, the forms refused, and the conversion through an anchor to ns
 * since the trace start. Expected epoch values are from Python's
 * calendar.timegm. */
#include <string.h>

#include "timearg.h"
#include "unit.h"

#define S 1000000000LL
#define H (3600 * S)
#define DAY (24 * H)
/* 2026-11-24T00:00:00Z */
#define DAY0 1795478400000000000LL

static struct d9_timearg parsed(const char *s)
{
    struct d9_timearg t;
    ck_assert_msg(d9_timearg_parse(s, &t) == 0, "refused: %s", s);
    return t;
}

START_TEST(since_start)
{
    struct d9_timearg t = parsed("12345");
    ck_assert_int_eq(t.kind, D9_TIME_SINCE_START);
    ck_assert_uint_eq(t.since, 12345);
    t = parsed("18446744073709551615");
    ck_assert_uint_eq(t.since, UINT64_MAX);
}
END_TEST

START_TEST(utc_forms)
{
    static const char *const same[] = {
        "2026-11-24T06:10:03.250Z", "2026-11-24T06:10:03.25",   "2026-11-24t06:10:03.250000000z",
        "2026-11-24 06:10:03.25Z",  "2026-11-24T08:10:03.25+02:00", "2026-11-24T04:40:03.25-0130",
        "2026-11-24T11:10:03.25+05", "2026-11-24T06:10:03.25+00:00",
    };
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        struct d9_timearg t = parsed(same[i]);
        ck_assert_int_eq(t.kind, D9_TIME_UTC);
        ck_assert_msg(t.ns == 1795500603250000000LL, "%s: %lld", same[i], (long long)t.ns);
    }
    ck_assert_int_eq(parsed("2026-11-24T06:10:03Z").ns, DAY0 + 6 * H + 10 * 60 * S + 3 * S);
    ck_assert_int_eq(parsed("2026-11-24T06:10:03.000000001Z").ns, DAY0 + 6 * H + 603 * S + 1);
    ck_assert_int_eq(parsed("2028-02-29T12:00:00Z").ns, 1835438400000000000LL); /* a leap day */
    ck_assert_int_eq(parsed("2200-12-31T23:59:59Z").ns, 7289654399000000000LL);
    ck_assert_int_eq(parsed("1970-01-01T00:00:00Z").ns, 0);
    /* An offset moves the date back across midnight. */
    ck_assert_int_eq(parsed("2026-11-24T01:00:00+02:00").ns, DAY0 - H);
}
END_TEST

START_TEST(time_of_day)
{
    struct d9_timearg t = parsed("06:10:03.25");
    ck_assert_int_eq(t.kind, D9_TIME_OF_DAY);
    ck_assert_int_eq(t.ns, 6 * H + 603 * S + S / 4);
    ck_assert_int_eq(parsed("06:10:03.25Z").ns, t.ns);
    ck_assert_int_eq(parsed("07:10:03.25+01:00").ns, t.ns);
    ck_assert_int_eq(parsed("01:00:00+02:00").ns, 23 * H); /* wraps to the day before */
    ck_assert_int_eq(parsed("23:00:00-02:00").ns, H);      /* and after */
    ck_assert_int_eq(parsed("00:00:00").ns, 0);
}
END_TEST

START_TEST(refused)
{
    static const char *const bad[] = {
        "", "x", "-1", "1.5", "12ms", "6:10:03", "06:10", "06:10:3", "24:00:00", "06:60:00", "06:10:60",
        "06:10:03.", "06:10:03.1234567890", "06:10:03,25", "06:10:03Z1", "06:10:03+", "06:10:03+5",
        "06:10:03+05:", "06:10:03+05:6", "06:10:03+24:00", "06:10:03+05:60", "06:10:03 Z", "2026-11-24",
        "2026-11-24T06:10", "2026-11-24X06:10:03", "2026-13-01T00:00:00", "2026-00-01T00:00:00",
        "2026-02-29T00:00:00", "2026-04-31T00:00:00", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z",
        "1970-01-01T00:30:00+01:00", "26-11-24T06:10:03", "2026-11-24T06:10:03.25ZZ",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct d9_timearg t;
        ck_assert_msg(d9_timearg_parse(bad[i], &t) < 0, "accepted: \"%s\"", bad[i]);
    }
}
END_TEST

/* A host whose realtime - monotonic is DAY0 + 6 h: monotonic 1000 s is
 * 2026-11-24T06:16:40Z. The trace starts at monotonic 1000 s. */
static const struct d9_anchor anchor = {(uint64_t)(DAY0 + 6 * H) + 2000 * S, 2000 * S};
#define START (1000 * S)

static int64_t rel(const char *s, const struct d9_anchor *a, uint64_t start)
{
    struct d9_timearg t = parsed(s);
    int64_t r = 0;
    ck_assert_msg(d9_timearg_resolve(&t, a, start, &r) == 0, "not resolved: %s", s);
    return r;
}

START_TEST(resolve)
{
    ck_assert_int_eq(rel("2026-11-24T06:16:40Z", &anchor, START), 0);
    ck_assert_int_eq(rel("2026-11-24T06:16:41.5Z", &anchor, START), 1500000000);
    ck_assert_int_eq(rel("2026-11-24T07:16:41.5+01:00", &anchor, START), 1500000000);
    ck_assert_int_eq(rel("2026-11-24T06:16:39Z", &anchor, START), -S);
    ck_assert_int_eq(rel("06:16:41.5", &anchor, START), 1500000000);
    ck_assert_int_eq(rel("1234", &anchor, START), 1234);
    ck_assert_int_eq(rel("1234", NULL, START), 1234); /* ns need no anchor */
    /* Any anchor of the same host gives the same answer. */
    struct d9_anchor later = {anchor.real_ns + 3600 * S, anchor.mono_ns + 3600 * S};
    ck_assert_int_eq(rel("2026-11-24T06:16:41.5Z", &later, START), 1500000000);

    struct d9_timearg t = parsed("06:16:41");
    int64_t r;
    ck_assert_int_eq(d9_timearg_resolve(&t, NULL, START, &r), -1);
    struct d9_anchor none = {0, 5};
    ck_assert_int_eq(d9_timearg_resolve(&t, &none, START, &r), -1);
}
END_TEST

START_TEST(nearest_day)
{
    /* Trace start 23:50 on DAY0: 00:05 is the next day, 23:40 the same day. */
    struct d9_anchor late = {(uint64_t)(DAY0 + 23 * H + 50 * 60 * S), START};
    ck_assert_int_eq(rel("00:05:00", &late, START), 15 * 60 * S);
    ck_assert_int_eq(rel("23:40:00", &late, START), -10 * 60 * S);
    ck_assert_int_eq(rel("11:50:00", &late, START), -12 * H);
    ck_assert_int_eq(rel("11:49:59", &late, START), 12 * H - 1 * S);
    /* Trace start 00:05: 23:58 is the day before. */
    struct d9_anchor early = {(uint64_t)(DAY0 + 5 * 60 * S), START};
    ck_assert_int_eq(rel("23:58:00", &early, START), -7 * 60 * S);
    ck_assert_int_eq(rel("00:04:00+00:00", &early, START), -60 * S);
}
END_TEST

START_TEST(window)
{
    uint64_t f, t;
    char err[160];
    ck_assert_int_eq(d9_window_resolve(NULL, NULL, NULL, START, &f, &t, err, sizeof(err)), 0);
    ck_assert_uint_eq(f, 0);
    ck_assert_uint_eq(t, UINT64_MAX);
    ck_assert_int_eq(d9_window_resolve("5", "18446744073709551615", NULL, START, &f, &t, err, sizeof(err)), 0);
    ck_assert_uint_eq(f, 5);
    ck_assert_uint_eq(t, UINT64_MAX);
    ck_assert_int_eq(d9_window_resolve("06:16:41", "2026-11-24T06:16:42.5Z", &anchor, START, &f, &t, err, sizeof(err)), 0);
    ck_assert_uint_eq(f, S);
    ck_assert_uint_eq(t, 2500000000u);
    /* A --from before the trace start is the start. */
    ck_assert_int_eq(d9_window_resolve("06:00:00", "100", &anchor, START, &f, &t, err, sizeof(err)), 0);
    ck_assert_uint_eq(f, 0);
    ck_assert_uint_eq(t, 100);

    ck_assert_int_eq(d9_window_resolve(NULL, "06:16:39", &anchor, START, &f, &t, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "before the trace start"), "%s", err);
    ck_assert_int_eq(d9_window_resolve("5", "1", NULL, START, &f, &t, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "--from is after --to"), "%s", err);
    ck_assert_int_eq(d9_window_resolve("06:16:42", "1000000", &anchor, START, &f, &t, err, sizeof(err)), -1);
    ck_assert_int_eq(d9_window_resolve("06:16:42", NULL, NULL, START, &f, &t, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "anchor"), "%s", err);
    ck_assert_int_eq(d9_window_resolve("soon", NULL, &anchor, START, &f, &t, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "--from"), "%s", err);
}
END_TEST

D9_SUITE(timearg)
{
    TCase *tc = tcase_create("timearg");
    tcase_add_test(tc, since_start);
    tcase_add_test(tc, utc_forms);
    tcase_add_test(tc, time_of_day);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, resolve);
    tcase_add_test(tc, nearest_day);
    tcase_add_test(tc, window);
    suite_add_tcase(s, tc);
    return s;
}
