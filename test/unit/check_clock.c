/* check_clock.c - the TSC -> ns line of agent/clock.h: fit, conversion on
 * both sides of the anchor, no overflow over long spans, how far a line
 * fitted to two noisy pairs strays between and beyond them, and stamps
 * that say their clock. */
#include "clock.h"
#include "unit.h"

/* A 2.5 GHz TSC: 0.4 ns a tick. */
#define HZ 2500000000ull

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static uint64_t tsc_at(uint64_t ns) { return (uint64_t)((unsigned __int128)ns * HZ / 1000000000u); }

START_TEST(fit_exact_rate)
{
    uint64_t m = d9_clock_fit(1000, 5000, 1000 + HZ, 5000 + 1000000000u);
    /* 0.4 ns a tick in 32.32 fixed point, within one unit */
    uint64_t want = (uint64_t)((4ull << D9_CLOCK_SHIFT) / 10);
    ck_assert_uint_le(absdiff(m, want), 1);
}
END_TEST

START_TEST(fit_rejects_backwards)
{
    ck_assert_uint_eq(d9_clock_fit(100, 10, 100, 20), 0); /* no ticks */
    ck_assert_uint_eq(d9_clock_fit(100, 10, 50, 20), 0);  /* TSC went back */
    ck_assert_uint_eq(d9_clock_fit(100, 20, 200, 10), 0); /* ns went back */
}
END_TEST

START_TEST(convert_both_sides)
{
    uint64_t t0 = tsc_at(7000000000ull), n0 = 7000000000ull;
    struct d9_clock_line l = {t0, n0, d9_clock_fit(0, 0, HZ, 1000000000u), 0};
    ck_assert_uint_eq(d9_line_ns(&l, t0), n0);
    /* 1 ms either side: exact to 1 ns */
    uint64_t after = d9_line_ns(&l, t0 + tsc_at(1000000));
    uint64_t before = d9_line_ns(&l, t0 - tsc_at(1000000));
    ck_assert_uint_le(absdiff(after, n0 + 1000000), 1);
    ck_assert_uint_le(absdiff(before, n0 - 1000000), 1);
    /* before ns 0: clamped, not wrapped */
    struct d9_clock_line early = {1000000, 5, l.mult, 0};
    ck_assert_uint_eq(d9_line_ns(&early, 0), 0);
}
END_TEST

START_TEST(long_span_no_overflow)
{
    /* A year of ticks from the anchor: 128-bit product, ns within 1 ppm */
    uint64_t year = 365ull * 86400 * 1000000000u;
    struct d9_clock_line l = {5, 0, d9_clock_fit(0, 0, HZ, 1000000000u), 0};
    uint64_t ns = d9_line_ns(&l, 5 + tsc_at(year));
    ck_assert_uint_le(absdiff(ns, year), year / 1000000);
}
END_TEST

START_TEST(monotonic_in_ticks)
{
    struct d9_clock_line l = {tsc_at(1000000000u), 1000000000u, d9_clock_fit(0, 0, HZ, 1000000000u), 0};
    uint64_t prev = 0;
    for (uint64_t t = l.tsc - 100000; t < l.tsc + 100000; t += 7) {
        uint64_t ns = d9_line_ns(&l, t);
        ck_assert_uint_ge(ns, prev);
        prev = ns;
    }
}
END_TEST

/* Pairs off by up to 30 ns (a noisy reading), 250 ms apart (a writer
 * cycle): between them the error stays under the pairs' own; 250 ms
 * beyond, under 100 ns. */
START_TEST(noisy_pairs_error)
{
    uint64_t n0 = 3000000000ull, n1 = n0 + 250000000u;
    uint64_t m = d9_clock_fit(tsc_at(n0), n0 + 30, tsc_at(n1), n1 - 30);
    struct d9_clock_line l = {tsc_at(n1), n1 - 30, m, 0};
    for (uint64_t n = n0; n <= n1 + 250000000u; n += 1000000) {
        uint64_t got = d9_line_ns(&l, tsc_at(n));
        ck_assert_uint_le(absdiff(got, n), n <= n1 ? 31 : 100);
    }
}
END_TEST

/* A PARK's deadline in a ring becomes the ns left at the park's ts, on its
 * clock; plain timeouts pass through. */
START_TEST(park_deadline_relative)
{
    const int64_t rt_off = 1700000000000000000; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
    const uint64_t ts = 5000000000u;             /* the park, CLOCK_MONOTONIC ns */
    ck_assert_uint_eq(d9_tmo_relative((uint64_t)d9_tmo_deadline(0, ts + 250), ts, rt_off), 250);
    ck_assert_uint_eq(d9_tmo_relative((uint64_t)d9_tmo_deadline(1, ts + rt_off + 7), ts, rt_off), 7);
    /* passed already, or a deadline before 1970: 0 */
    ck_assert_uint_eq(d9_tmo_relative((uint64_t)d9_tmo_deadline(0, ts - 1), ts, rt_off), 0);
    ck_assert_uint_eq(d9_tmo_relative((uint64_t)d9_tmo_deadline(1, 0), ts, rt_off), 0);
    /* none (-1), relative ns and the largest relative timeout are not deadlines */
    ck_assert_uint_eq(d9_tmo_relative(UINT64_MAX, ts, rt_off), UINT64_MAX);
    ck_assert_uint_eq(d9_tmo_relative(1000, ts, rt_off), 1000);
    ck_assert_uint_eq(d9_tmo_relative(INT64_MAX, ts, rt_off), INT64_MAX);
    /* the farthest deadline is clamped, never read as -1 */
    int64_t far = d9_tmo_deadline(1, UINT64_MAX >> 1);
    ck_assert_int_ne(far, -1);
    ck_assert_uint_eq(d9_tmo_relative((uint64_t)far, ts, rt_off), D9_TMO_NS - 1 - ts - rt_off);
}
END_TEST

/* Stand-ins for agent/clock.c (not in the unit binary): the clock the
 * stamps read when they are not TSC ticks. */
int d9_clock_tsc;
static uint64_t fake_ns;
uint64_t d9_now_call(void) { return fake_ns; }

/* A stamp says its clock (ns even, TSC odd), and a second stamp follows the
 * first's clock, not d9_clock_tsc, which the hooks no longer read after
 * their system call. */
START_TEST(stamp_follows_first)
{
    d9_clock_tsc = 0;
    fake_ns = 1001;
    uint64_t ns = d9_stamp();
    ck_assert_uint_eq(ns, 1000);
    fake_ns = 2001;
    ck_assert_uint_eq(d9_stamp_like(ns), 2000);
#if defined(__x86_64__)
    d9_clock_tsc = 1;
    uint64_t t = d9_stamp();
    ck_assert_uint_eq(t & 1, 1);
    ck_assert_uint_eq(d9_stamp_like(ns), 2000); /* an ns first stamp keeps ns */
    d9_clock_tsc = 0;
    uint64_t t2 = d9_stamp_like(t); /* a TSC first stamp keeps the TSC */
    ck_assert_uint_eq(t2 & 1, 1);
    ck_assert_uint_ge(t2, t);
#endif
}
END_TEST

START_TEST(ticks_ns_rounding)
{
    uint64_t m = d9_clock_fit(0, 0, HZ, 1000000000u);
    ck_assert_uint_eq(d9_ticks_ns(0, m), 0);
    ck_assert_uint_le(absdiff(d9_ticks_ns(HZ, m), 1000000000u), 1); /* one second of ticks */
}
END_TEST

D9_SUITE(clock)
{
    TCase *tc = tcase_create("line");
    tcase_add_test(tc, fit_exact_rate);
    tcase_add_test(tc, fit_rejects_backwards);
    tcase_add_test(tc, convert_both_sides);
    tcase_add_test(tc, long_span_no_overflow);
    tcase_add_test(tc, monotonic_in_ticks);
    tcase_add_test(tc, noisy_pairs_error);
    tcase_add_test(tc, ticks_ns_rounding);
    tcase_add_test(tc, park_deadline_relative);
    tcase_add_test(tc, stamp_follows_first);
    suite_add_tcase(s, tc);
    return s;
}
