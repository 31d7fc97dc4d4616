/* check_park_gate.c - the schedstat gate of a park (agent/agent.h): its
 * UNPARK reads schedstat once the park has lasted the minimum and the last
 * reading is old enough; the minimum is taken at the PARK, so after the
 * wait nothing but the thread's TLS block is read. */
#include "agent.h"
#include "unit.h"

/* What the inline gate reads, defined here as the agent defines them. */
D9_TLS struct d9_tls d9_tls;
uint64_t d9_min_park_stamps;
void d9_writer_kick(void) {}

START_TEST(gate_both_thresholds)
{
    d9_tls.perf = NULL;
    d9_tls.stat_after = 0;
    d9_min_park_stamps = 100;
    d9_sched_park(1000);
    ck_assert_int_eq(d9_sched_due(1099), 0); /* too short */
    ck_assert_int_eq(d9_sched_due(1100), 1);
    d9_tls.stat_after = 5000; /* the last reading is too recent */
    ck_assert_int_eq(d9_sched_due(4999), 0);
    ck_assert_int_eq(d9_sched_due(5000), 1);
    d9_tls.stat_after = UINT64_MAX; /* no schedstat fd: never */
    ck_assert_int_eq(d9_sched_due(UINT64_MAX - 1), 0);
}
END_TEST

START_TEST(minimum_taken_at_park)
{
    d9_tls.perf = NULL;
    d9_tls.stat_after = 0;
    d9_min_park_stamps = 100;
    d9_sched_park(1000);
    d9_min_park_stamps = 1000000; /* changed during the wait: not read again */
    ck_assert_int_eq(d9_sched_due(1100), 1);
    d9_sched_park(2000); /* the next park takes the new one */
    ck_assert_int_eq(d9_sched_due(2100), 0);
    ck_assert_int_eq(d9_sched_due(1002000), 1);
}
END_TEST

D9_SUITE(park_gate)
{
    TCase *tc = tcase_create("park_gate");
    tcase_add_test(tc, gate_both_thresholds);
    tcase_add_test(tc, minimum_taken_at_park);
    suite_add_tcase(s, tc);
    return s;
}
