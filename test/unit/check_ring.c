/* check_ring.c - the SPSC ring (agent/ring.h): capacity, half-full signal,
 * wrap-around, and order under a real producer/consumer pair. */
#include <pthread.h>
#include <stdlib.h>

#include "ring.h"
#include "unit.h"

#define CAP 64

static struct d9_ring *ring_new(uint32_t cap)
{
    struct d9_ring *r = aligned_alloc(64, sizeof(*r));
    ck_assert_ptr_nonnull(r);
    *r = (struct d9_ring){.buf = calloc(cap, sizeof(struct d9_raw_event)), .cap = cap};
    ck_assert_ptr_nonnull(r->buf);
    return r;
}

static void ring_free(struct d9_ring *r)
{
    free(r->buf);
    free(r);
}

static int push_seq(struct d9_ring *r, uint64_t seq, int *half)
{
    struct d9_raw_event ev = {.ts = seq, .type = D9_EV_WAKE, .a = seq * 3, .b = ~seq};
    return d9_ring_push(r, &ev, half);
}

START_TEST(fill_then_full)
{
    struct d9_ring *r = ring_new(CAP);
    int half;
    for (uint64_t i = 0; i < CAP; i++)
        ck_assert_int_eq(push_seq(r, i, &half), 0);
    ck_assert_uint_eq(d9_ring_used(r), CAP);
    ck_assert_int_eq(push_seq(r, CAP, &half), -1);
    ck_assert_uint_eq(d9_ring_used(r), CAP); /* a failed push stores nothing */
    struct d9_raw_event out[CAP + 1];
    ck_assert_uint_eq(d9_ring_pop(r, out, CAP + 1), CAP);
    for (uint64_t i = 0; i < CAP; i++) {
        ck_assert_uint_eq(out[i].ts, i);
        ck_assert_uint_eq(out[i].a, i * 3);
        ck_assert_uint_eq(out[i].b, ~i);
    }
    ck_assert_uint_eq(d9_ring_pop(r, out, CAP), 0);
    ring_free(r);
}
END_TEST

/* keep = 1 leaves the last entry free; keep = 0 (THREAD_EXIT) may take it. */
START_TEST(keep_reserves_last_entry)
{
    struct d9_ring *r = ring_new(CAP);
    int half;
    struct d9_raw_event ev = {.type = D9_EV_WAKE};
    for (int i = 0; i < CAP - 1; i++)
        ck_assert_int_eq(d9_ring_push_keep(r, &ev, &half, 1), 0);
    ck_assert_int_eq(d9_ring_push_keep(r, &ev, &half, 1), -1);
    ev.type = D9_EV_THREAD_EXIT;
    ck_assert_int_eq(d9_ring_push_keep(r, &ev, &half, 0), 0);
    ck_assert_uint_eq(d9_ring_used(r), CAP);
    ck_assert_int_eq(d9_ring_push_keep(r, &ev, &half, 0), -1);
    ring_free(r);
}
END_TEST

START_TEST(half_fires_once_per_fill)
{
    struct d9_ring *r = ring_new(CAP);
    int half, fired = 0, at = -1;
    for (int i = 0; i < CAP; i++) {
        push_seq(r, (uint64_t)i, &half);
        if (half) {
            fired++;
            at = i;
        }
    }
    ck_assert_int_eq(fired, 1);
    ck_assert_int_eq(at, CAP / 2 - 1); /* the push that made used == cap/2 */
    /* Drained and refilled: it fires again, once. */
    struct d9_raw_event out[CAP];
    d9_ring_pop(r, out, CAP);
    fired = 0;
    for (int i = 0; i < CAP; i++) {
        push_seq(r, (uint64_t)i, &half);
        fired += half;
    }
    ck_assert_int_eq(fired, 1);
    ring_free(r);
}
END_TEST

START_TEST(wraps_in_order)
{
    struct d9_ring *r = ring_new(8);
    struct d9_raw_event out[8];
    uint64_t next_in = 0, next_out = 0;
    int half;
    /* Uneven push/pop counts walk head and tail across the end many times. */
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 1 + round % 7; k++)
            if (push_seq(r, next_in, &half) == 0)
                next_in++;
        uint32_t n = d9_ring_pop(r, out, 1 + round % 5);
        for (uint32_t i = 0; i < n; i++)
            ck_assert_uint_eq(out[i].ts, next_out++);
    }
    ck_assert_uint_gt(next_out, 8 * 100);
    ck_assert_uint_eq(next_in - next_out, d9_ring_used(r));
    ring_free(r);
}
END_TEST

#define STRESS_EVENTS 1000000u

static void *producer(void *arg)
{
    struct d9_ring *r = arg;
    int half;
    for (uint64_t i = 0; i < STRESS_EVENTS;)
        if (push_seq(r, i, &half) == 0)
            i++;
    return NULL;
}

START_TEST(two_thread_stress)
{
    struct d9_ring *r = ring_new(1024);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, producer, r), 0);
    struct d9_raw_event out[100];
    uint64_t next = 0;
    while (next < STRESS_EVENTS) {
        uint32_t n = d9_ring_pop(r, out, 100);
        for (uint32_t i = 0; i < n; i++) {
            if (out[i].ts != next || out[i].a != next * 3 || out[i].b != ~next)
                ck_abort_msg("event %llu out of order or torn", (unsigned long long)next);
            next++;
        }
    }
    pthread_join(t, NULL);
    ck_assert_uint_eq(d9_ring_used(r), 0);
    ring_free(r);
}
END_TEST

D9_SUITE(ring)
{
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fill_then_full);
    tcase_add_test(tc, keep_reserves_last_entry);
    tcase_add_test(tc, half_fires_once_per_fill);
    tcase_add_test(tc, wraps_in_order);
    tcase_add_test(tc, two_thread_stress);
    suite_add_tcase(s, tc);
    return s;
}
