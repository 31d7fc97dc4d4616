/* check_scheduling.c - the pure parsers behind SCHED_DELAY and PREEMPT:
 * schedstat text, and pairing perf switch records (wrapping ring, lost
 * records, a pairing split across drains, a full output, garbage). */
#include <linux/perf_event.h>
#include <string.h>

#include "scheduling_parse.h"
#include "unit.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif

START_TEST(schedstat_fields)
{
    uint64_t rd = 0;
    const char *ok = "2143318 98765432101 17\n";
    ck_assert_int_eq(d9_schedstat_run_delay(ok, strlen(ok), &rd), 0);
    ck_assert_uint_eq(rd, 98765432101ull);
    const char *zero = "0 0 0\n";
    ck_assert_int_eq(d9_schedstat_run_delay(zero, strlen(zero), &rd), 0);
    ck_assert_uint_eq(rd, 0);
    /* Not three numbers: rejected, rd untouched. */
    rd = 7;
    const char *bad[] = {"", "12 34", "12 x 5\n", "abc", "12  \n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(d9_schedstat_run_delay(bad[i], strlen(bad[i]), &rd), -1);
    ck_assert_uint_eq(rd, 7);
    /* Only len bytes are looked at. */
    ck_assert_int_eq(d9_schedstat_run_delay(ok, 9, &rd), -1);
}
END_TEST

/* A perf data ring of RING bytes with free-running write position pos. */
#define RING 64u
struct ring {
    uint8_t data[RING];
    uint64_t pos;
};

static void put_bytes(struct ring *r, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++, r->pos++)
        r->data[r->pos % RING] = ((const uint8_t *)p)[i];
}

/* A record with header type/misc, body words, then the sample_id time. */
static void put_rec(struct ring *r, uint32_t type, uint16_t misc, const uint64_t *body, int nbody, uint64_t ts)
{
    struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)(sizeof(h) + 8 * (nbody + 1))};
    put_bytes(r, &h, sizeof(h));
    put_bytes(r, body, 8u * (unsigned)nbody);
    put_bytes(r, &ts, sizeof(ts));
}

#define OUT_PREEMPT (PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
#define OUT_BLOCK PERF_RECORD_MISC_SWITCH_OUT

static uint32_t walk(struct ring *r, uint64_t *tail, struct d9_switch_state *st, struct d9_preempt *out,
                     uint32_t max, uint64_t *lost)
{
    return d9_perf_switches(r->data, RING, tail, r->pos, st, out, max, lost);
}

START_TEST(switch_pairs)
{
    struct ring r = {.pos = 0};
    struct d9_switch_state st = {0, 0};
    struct d9_preempt out[8];
    uint64_t tail = 0, lost = 0;
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 100);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 150);
    put_rec(&r, PERF_RECORD_SWITCH, OUT_BLOCK, NULL, 0, 200); /* blocking: not a preemption */
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 300);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 8, &lost), 1);
    ck_assert_uint_eq(out[0].out_ts, 100);
    ck_assert_uint_eq(out[0].duration, 50);
    ck_assert_uint_eq(tail, r.pos);
    ck_assert_uint_eq(lost, 0);

    /* These wrap around the 64-byte ring; the switch-in comes in a later drain. */
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 400);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 8, &lost), 0);
    ck_assert_int_eq(st.pending, 1);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 1400);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 8, &lost), 1);
    ck_assert_uint_eq(out[0].out_ts, 400);
    ck_assert_uint_eq(out[0].duration, 1000);
    ck_assert_uint_eq(tail, r.pos);
}
END_TEST

START_TEST(switch_lost_breaks_pairing)
{
    struct ring r = {.pos = 40}; /* start near the end: the LOST record wraps */
    struct d9_switch_state st = {0, 0};
    struct d9_preempt out[4];
    uint64_t tail = 40, lost = 0;
    uint64_t body[2] = {1 /* id */, 5 /* lost */};
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 100);
    put_rec(&r, PERF_RECORD_LOST, 0, body, 2, 120);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 4, &lost), 0);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 900); /* its switch-out may be among the lost */
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 4, &lost), 0);
    ck_assert_uint_eq(lost, 5);
    ck_assert_uint_eq(tail, r.pos);
}
END_TEST

START_TEST(switch_output_full)
{
    struct ring r = {.pos = 0};
    struct d9_switch_state st = {0, 0};
    struct d9_preempt out[1];
    uint64_t tail = 0, lost = 0;
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 10);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 20);
    uint64_t second = r.pos;
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 30);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 45);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 1, &lost), 1);
    ck_assert_uint_eq(out[0].out_ts, 10);
    ck_assert_uint_eq(tail, second); /* stopped after the first pair */
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 1, &lost), 1);
    ck_assert_uint_eq(out[0].out_ts, 30);
    ck_assert_uint_eq(out[0].duration, 15);
    ck_assert_uint_eq(tail, r.pos);
}
END_TEST

START_TEST(switch_garbage)
{
    struct ring r = {.pos = 0};
    struct d9_switch_state st = {0, 0};
    struct d9_preempt out[4];
    uint64_t tail = 0, lost = 0;
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 10);
    struct perf_event_header h = {.type = PERF_RECORD_SWITCH, .size = 0}; /* would never advance */
    put_bytes(&r, &h, sizeof(h));
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 4, &lost), 0);
    ck_assert_uint_eq(tail, r.pos);
    ck_assert_int_eq(st.pending, 0);
    /* A record claiming more bytes than were written. */
    h.size = 48;
    put_bytes(&r, &h, sizeof(h));
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 4, &lost), 0);
    ck_assert_uint_eq(tail, r.pos);
    /* Unknown record types are skipped by their size. */
    uint64_t body[1] = {0};
    put_rec(&r, 99, 0, body, 1, 50);
    put_rec(&r, PERF_RECORD_SWITCH, OUT_PREEMPT, NULL, 0, 60);
    put_rec(&r, PERF_RECORD_SWITCH, 0, NULL, 0, 70);
    ck_assert_uint_eq(walk(&r, &tail, &st, out, 4, &lost), 1);
    ck_assert_uint_eq(out[0].duration, 10);
}
END_TEST

D9_SUITE(scheduling)
{
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, schedstat_fields);
    tcase_add_test(tc, switch_pairs);
    tcase_add_test(tc, switch_lost_breaks_pairing);
    tcase_add_test(tc, switch_output_full);
    tcase_add_test(tc, switch_garbage);
    suite_add_tcase(s, tc);
    return s;
}
