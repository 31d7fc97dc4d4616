/* check_config.c - DIAL9_* parsing: defaults, accepted values and
 * suffixes, and one error line per bad value with the default kept. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "unit.h"

struct env {
    const char *kv[12][2]; /* name, value; NULL-terminated */
    int nerr;
    char err[8][400];
};

static const char *get(void *ctx, const char *name)
{
    struct env *e = ctx;
    for (int i = 0; e->kv[i][0]; i++)
        if (!strcmp(e->kv[i][0], name))
            return e->kv[i][1];
    return NULL;
}

static void err(void *ctx, const char *msg)
{
    struct env *e = ctx;
    if (e->nerr < 8)
        snprintf(e->err[e->nerr], sizeof(e->err[0]), "%s", msg);
    e->nerr++;
}

static void check_defaults(const struct d9_config *c)
{
    ck_assert_int_eq(c->enabled, 1);
    ck_assert_int_eq(c->quiet, 0);
    ck_assert_str_eq(c->dir, "/tmp/dial9-1234");
    ck_assert_uint_eq(c->max_file_size, 16u << 20);
    ck_assert_uint_eq(c->max_total_size, 256u << 20);
    ck_assert_uint_eq(c->rotation_secs, 60);
    ck_assert_uint_eq(c->flush_ms, 250);
    ck_assert_uint_eq(c->buffer_events, 4096);
    ck_assert_uint_eq(c->max_threads, 1024);
    ck_assert_int_eq(c->sched, 1);
    ck_assert_uint_eq(c->sched_gap_ms, 50);
    ck_assert_int_eq(c->mode, D9_MODE_CONTINUOUS);
    ck_assert_uint_eq(c->flight_max_bytes, 64u << 20);
    ck_assert_uint_eq(c->flight_min_age_ms, 10000);
    ck_assert_uint_eq(c->dump_signal, SIGUSR2);
    ck_assert_uint_eq(c->dump_min_interval_ms, 10000);
    ck_assert_uint_eq(c->trigger_slow_syscall_ms, 0);
    ck_assert_uint_eq(c->trigger_busy_ms, 0);
    ck_assert_uint_eq(c->trigger_wake_ms, 0);
    ck_assert_int_eq(c->crash_dump, 1);
    ck_assert_int_eq(c->clock, 0); /* auto */
}

START_TEST(defaults)
{
    struct env e = {0};
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 0);
    ck_assert_int_eq(e.nerr, 0);
    check_defaults(&c);
}
END_TEST

START_TEST(good_values)
{
    struct env e = {.kv = {{"DIAL9_ENABLED", "0"},
                           {"DIAL9_QUIET", "1"},
                           {"DIAL9_DIR", "/var/tmp/traces"},
                           {"DIAL9_MAX_FILE_SIZE", "64K"},
                           {"DIAL9_MAX_TOTAL_SIZE", "2g"},
                           {"DIAL9_ROTATION_SECS", "5"},
                           {"DIAL9_FLUSH_MS", "10"},
                           {"DIAL9_BUFFER_EVENTS", "1048576"},
                           {"DIAL9_MAX_THREADS", "65536"},
                           {"DIAL9_SCHED_GAP_MS", "1"}}};
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 0);
    ck_assert_int_eq(e.nerr, 0);
    ck_assert_int_eq(c.enabled, 0);
    ck_assert_int_eq(c.quiet, 1);
    ck_assert_str_eq(c.dir, "/var/tmp/traces");
    ck_assert_uint_eq(c.max_file_size, 64u << 10);
    ck_assert_uint_eq(c.max_total_size, 2ull << 30);
    ck_assert_uint_eq(c.rotation_secs, 5);
    ck_assert_uint_eq(c.flush_ms, 10);
    ck_assert_uint_eq(c.buffer_events, 1048576);
    ck_assert_uint_eq(c.max_threads, 65536);
    ck_assert_uint_eq(c.sched_gap_ms, 1);

    struct env e2 = {.kv = {{"DIAL9_MAX_FILE_SIZE", "3M"}, {"DIAL9_MAX_TOTAL_SIZE", "7654321"}, {"DIAL9_BUFFER_EVENTS", "64"}}};
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e2), 0);
    ck_assert_uint_eq(c.max_file_size, 3u << 20);
    ck_assert_uint_eq(c.max_total_size, 7654321);
    ck_assert_uint_eq(c.buffer_events, 64);
}
END_TEST

START_TEST(flight_values)
{
    struct env e = {.kv = {{"DIAL9_MODE", "flight"},
                           {"DIAL9_FLIGHT_MAX_BYTES", "2M"},
                           {"DIAL9_FLIGHT_MIN_AGE_MS", "500"},
                           {"DIAL9_DUMP_SIGNAL", "SIGUSR1"},
                           {"DIAL9_DUMP_MIN_INTERVAL_MS", "0"},
                           {"DIAL9_TRIGGER_SLOW_SYSCALL_MS", "50"},
                           {"DIAL9_TRIGGER_BUSY_MS", "200"},
                           {"DIAL9_TRIGGER_WAKE_MS", "5"},
                           {"DIAL9_CRASH_DUMP", "0"}}};
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 0);
    ck_assert_int_eq(c.mode, D9_MODE_FLIGHT);
    ck_assert_uint_eq(c.flight_max_bytes, 2u << 20);
    ck_assert_uint_eq(c.flight_min_age_ms, 500);
    ck_assert_uint_eq(c.dump_signal, SIGUSR1);
    ck_assert_uint_eq(c.dump_min_interval_ms, 0);
    ck_assert_uint_eq(c.trigger_slow_syscall_ms, 50);
    ck_assert_uint_eq(c.trigger_busy_ms, 200);
    ck_assert_uint_eq(c.trigger_wake_ms, 5);
    ck_assert_int_eq(c.crash_dump, 0);

    struct env e2 = {.kv = {{"DIAL9_MODE", "continuous"}, {"DIAL9_DUMP_SIGNAL", "0"}}};
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e2), 0);
    ck_assert_int_eq(c.mode, D9_MODE_CONTINUOUS);
    ck_assert_uint_eq(c.dump_signal, 0); /* no dump signal */
    struct env e3 = {.kv = {{"DIAL9_DUMP_SIGNAL", "10"}}};
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e3), 0);
    ck_assert_uint_eq(c.dump_signal, 10);
}
END_TEST

START_TEST(clock_values)
{
    struct d9_config c;
    struct env e = {.kv = {{"DIAL9_CLOCK", "monotonic"}}};
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 0);
    ck_assert_int_eq(c.clock, 1);
    struct env e2 = {.kv = {{"DIAL9_CLOCK", "auto"}}};
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e2), 0);
    ck_assert_int_eq(c.clock, 0);
}
END_TEST

/* Each bad value alone: exactly one line naming the variable and value,
 * giving the default, and the default in effect. */
static const struct {
    const char *name, *value, *reason, *def;
} bad[] = {
    {"DIAL9_ENABLED", "yes", "must be 0 or 1", "1"},
    {"DIAL9_QUIET", "2", "must be 0 or 1", "0"},
    {"DIAL9_DIR", "", "empty", "/tmp/dial9-1234"},
    {"DIAL9_MAX_FILE_SIZE", "12Q", "unknown suffix", "16777216"},
    {"DIAL9_MAX_FILE_SIZE", "1", "out of range", "16777216"},
    {"DIAL9_MAX_FILE_SIZE", "99999999999999999999999", "too large", "16777216"},
    {"DIAL9_MAX_TOTAL_SIZE", "-5", "not a number", "268435456"},
    {"DIAL9_MAX_TOTAL_SIZE", "17179869184G", "too large", "268435456"},
    {"DIAL9_ROTATION_SECS", "0", "out of range", "60"},
    {"DIAL9_ROTATION_SECS", "10s", "not a number", "60"},
    {"DIAL9_FLUSH_MS", "", "empty", "250"},
    {"DIAL9_BUFFER_EVENTS", "1000", "not a power of two", "4096"},
    {"DIAL9_BUFFER_EVENTS", "32", "out of range", "4096"},
    {"DIAL9_BUFFER_EVENTS", "2097152", "out of range", "4096"},
    {"DIAL9_BUFFER_EVENTS", "16K", "not a number", "4096"},
    {"DIAL9_MAX_THREADS", "65537", "out of range", "1024"},
    {"DIAL9_SCHED_GAP_MS", "0", "out of range", "50"},
    {"DIAL9_SCHED_GAP_MS", "60001", "out of range", "50"},
    {"DIAL9_SCHED_GAP_MS", "10ms", "not a number", "50"},
    {"DIAL9_MODE", "flightx", "must be continuous or flight", "continuous"},
    {"DIAL9_MODE", "", "must be continuous or flight", "continuous"},
    {"DIAL9_FLIGHT_MAX_BYTES", "1K", "out of range", "67108864"},
    {"DIAL9_FLIGHT_MAX_BYTES", "abc", "not a number", "67108864"},
    {"DIAL9_FLIGHT_MIN_AGE_MS", "0", "out of range", "10000"},
    {"DIAL9_FLIGHT_MIN_AGE_MS", "-1", "not a number", "10000"},
    {"DIAL9_DUMP_SIGNAL", "9", "cannot be caught", "12"},
    {"DIAL9_DUMP_SIGNAL", "SIGSEGV", "not a number", "12"},
    {"DIAL9_DUMP_SIGNAL", "11", "crash signal", "12"},
    {"DIAL9_DUMP_SIGNAL", "65", "out of range", "12"},
    {"DIAL9_DUMP_SIGNAL", "15", "ends or stops the program", "12"},
    {"DIAL9_DUMP_SIGNAL", "20", "ends or stops the program", "12"},
    {"DIAL9_DUMP_SIGNAL", "17", "the kernel's notice", "12"},
    {"DIAL9_DUMP_SIGNAL", "13", "the kernel's notice", "12"},
    {"DIAL9_DUMP_SIGNAL", "32", "reserved by glibc", "12"},
    {"DIAL9_DUMP_MIN_INTERVAL_MS", "1e3", "not a number", "10000"},
    {"DIAL9_TRIGGER_SLOW_SYSCALL_MS", "3600001", "out of range", "0"},
    {"DIAL9_TRIGGER_BUSY_MS", "x", "not a number", "0"},
    {"DIAL9_TRIGGER_WAKE_MS", "-3", "not a number", "0"},
    {"DIAL9_CRASH_DUMP", "on", "must be 0 or 1", "1"},
    {"DIAL9_CLOCK", "tsc", "must be auto or monotonic", "auto"},
    {"DIAL9_CLOCK", "", "must be auto or monotonic", "auto"},
};

START_TEST(bad_value)
{
    struct env e = {.kv = {{bad[_i].name, bad[_i].value}}};
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 1);
    ck_assert_int_eq(e.nerr, 1);
    char want[256];
    snprintf(want, sizeof(want), "%s=%s: ", bad[_i].name, bad[_i].value);
    ck_assert_msg(!strncmp(e.err[0], want, strlen(want)), "message '%s' should start with '%s'", e.err[0], want);
    ck_assert_msg(strstr(e.err[0], bad[_i].reason), "message '%s' should say '%s'", e.err[0], bad[_i].reason);
    snprintf(want, sizeof(want), "; using default %s", bad[_i].def);
    size_t ml = strlen(e.err[0]), wl = strlen(want);
    ck_assert_msg(ml >= wl && !strcmp(e.err[0] + ml - wl, want), "message '%s' should end with '%s'", e.err[0], want);
    ck_assert_ptr_null(strchr(e.err[0], '\n'));
    check_defaults(&c);
}
END_TEST

START_TEST(several_bad_values_one_line_each)
{
    struct env e = {.kv = {{"DIAL9_FLUSH_MS", "x"}, {"DIAL9_MAX_THREADS", "0"}, {"DIAL9_QUIET", "1"}}};
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 2);
    ck_assert_int_eq(e.nerr, 2);
    ck_assert_ptr_nonnull(strstr(e.err[0], "DIAL9_FLUSH_MS=x"));
    ck_assert_ptr_nonnull(strstr(e.err[1], "DIAL9_MAX_THREADS=0"));
    ck_assert_int_eq(c.quiet, 1); /* good values next to bad ones still apply */
    ck_assert_uint_eq(c.flush_ms, 250);
    ck_assert_uint_eq(c.max_threads, 1024);
}
END_TEST

START_TEST(file_size_capped_at_half_total)
{
    struct env e = {.kv = {{"DIAL9_MAX_TOTAL_SIZE", "1M"}}}; /* default file size 16M */
    struct d9_config c;
    ck_assert_int_eq(d9_config_load(&c, 1234, get, err, &e), 1);
    ck_assert_int_eq(e.nerr, 1);
    ck_assert_ptr_nonnull(strstr(e.err[0], "DIAL9_MAX_FILE_SIZE=16777216"));
    ck_assert_ptr_nonnull(strstr(e.err[0], "using 524288"));
    ck_assert_uint_eq(c.max_file_size, 512u << 10);
    ck_assert_uint_eq(c.max_total_size, 1u << 20);
}
END_TEST

D9_SUITE(config)
{
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, good_values);
    tcase_add_test(tc, clock_values);
    tcase_add_test(tc, flight_values);
    tcase_add_loop_test(tc, bad_value, 0, (int)(sizeof(bad) / sizeof(bad[0])));
    tcase_add_test(tc, several_bad_values_one_line_each);
    tcase_add_test(tc, file_size_capped_at_half_total);
    suite_add_tcase(s, tc);
    return s;
}
