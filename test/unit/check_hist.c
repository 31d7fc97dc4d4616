/* check_hist.c - the bounded histogram against exact nearest-rank values. */
#include <stdint.h>
#include <stdlib.h>

#include "hist.h"
#include "unit.h"
#include "vec.h"

/* Every bucket's range contains exactly the values that index to it. */
START_TEST(ranges_tile)
{
    struct d9_hist h = {0};
    uint64_t prev_hi = 0;
    for (size_t i = 0; i < D9_HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        d9_hist_bucket(&h, i, &lo, &hi);
        ck_assert_uint_eq(lo, i ? prev_hi + 1 : 0);
        ck_assert_uint_ge(hi, lo);
        ck_assert_uint_eq(d9_hist_index(lo), i);
        ck_assert_uint_eq(d9_hist_index(hi), i);
        prev_hi = hi;
    }
    ck_assert_uint_eq(prev_hi, UINT64_MAX);
}
END_TEST

/* Quantiles within 1/D9_HIST_SUB of the exact nearest rank, inside [min, max]. */
START_TEST(quantiles_close)
{
    struct d9_hist h = {0};
    struct d9_vec v = {0};
    srand(7);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = (uint64_t)rand() % 1000 + ((uint64_t)rand() % 4 == 0 ? (uint64_t)rand() * 97 : 0);
        ck_assert_int_eq(d9_hist_add(&h, x), 0);
        ck_assert_int_eq(d9_vec_push(&v, x), 0);
    }
    struct d9_dist d = d9_vec_dist(&v);
    ck_assert_uint_eq(h.n, d.n);
    ck_assert_uint_eq(d9_hist_quantile(&h, 1.0), d.max);
    uint64_t p50 = d9_hist_quantile(&h, 0.5), p99 = d9_hist_quantile(&h, 0.99);
    ck_assert_uint_ge(p50, d.p50);
    ck_assert_uint_le(p50, d.p50 + d.p50 / D9_HIST_SUB);
    ck_assert_uint_ge(p99, d.p99);
    ck_assert_uint_le(p99, d.p99 + d.p99 / D9_HIST_SUB);
    /* small values are exact */
    struct d9_hist s = {0};
    for (uint64_t x = 1; x <= 9; x++)
        d9_hist_add(&s, x);
    ck_assert_uint_eq(d9_hist_quantile(&s, 0.5), 5);
    d9_hist_free(&h);
    d9_hist_free(&s);
    d9_vec_free(&v);
}
END_TEST

START_TEST(merge_and_empty)
{
    struct d9_hist a = {0}, b = {0};
    ck_assert_uint_eq(d9_hist_quantile(&a, 0.5), 0);
    d9_hist_add(&a, 1000);
    d9_hist_add(&b, 5);
    d9_hist_add(&b, 1u << 20);
    ck_assert_int_eq(d9_hist_merge(&a, &b), 0);
    ck_assert_uint_eq(a.n, 3);
    ck_assert_uint_eq(a.min, 5);
    ck_assert_uint_eq(a.max, 1u << 20);
    ck_assert_uint_eq(a.sum, 1000 + 5 + (1u << 20));
    d9_hist_free(&a);
    d9_hist_free(&b);
}
END_TEST

D9_SUITE(hist)
{
    TCase *tc = tcase_create("hist");
    tcase_add_test(tc, ranges_tile);
    tcase_add_test(tc, quantiles_close);
    tcase_add_test(tc, merge_and_empty);
    suite_add_tcase(s, tc);
    return s;
}
