/* check_app_names.c - application event names (agent/app_names.h): the
 * rules on a name, one id a name when registered one at a time, ids that
 * always name what was registered when threads race, and a full table.
 * Each test runs in its own forked process (Check's default), so each
 * starts with an empty table. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "app_names.h"
#include "unit.h"

/* 1 when id names exactly name. */
static int names(int id, const char *name)
{
    uint8_t out[16];
    size_t n = d9_app_name((uint64_t)id, out);
    return n == strlen(name) && !memcmp(out, name, n);
}

START_TEST(rules_on_a_name)
{
    ck_assert_int_eq(d9_app_register(NULL), -EINVAL);
    ck_assert_int_eq(d9_app_register(""), -EINVAL);
    ck_assert_int_eq(d9_app_register("sixteen-bytes-xx"), -EINVAL);
    ck_assert_int_eq(d9_app_register("a b"), -EINVAL);
    ck_assert_int_eq(d9_app_register("tab\tname"), -EINVAL);
    ck_assert_int_eq(d9_app_register("\xc3\xa9t\xc3\xa9"), -EINVAL); /* UTF-8: not in the set */
    int id = d9_app_register("Az09_.:/-fifteen");                    /* 16 bytes */
    ck_assert_int_eq(id, -EINVAL);
    id = d9_app_register("Az09_.:/-fiftee"); /* every kind of byte allowed, 15 of them */
    ck_assert_int_eq(id, 1);
    ck_assert(names(id, "Az09_.:/-fiftee"));
    ck_assert_int_eq(d9_app_register("Az09_.:/-fiftee"), id); /* the same name, the same id */
    ck_assert(!d9_app_known(0) && !d9_app_known(2) && !d9_app_known(257) && !d9_app_known(-1));
    ck_assert(d9_app_known(id));
    uint8_t out[16];
    ck_assert_uint_eq(d9_app_name(0, out), 0);
    ck_assert_uint_eq(d9_app_name(2, out), 0);
    ck_assert_uint_eq(d9_app_name(UINT64_MAX, out), 0);
}
END_TEST

START_TEST(full_table)
{
    char name[24];
    for (int i = 0; i < D9_APP_NAMES; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        ck_assert_int_eq(d9_app_register(name), i + 1);
    }
    for (int i = 0; i < 3; i++) /* asked again and again: no wrap */
        ck_assert_int_eq(d9_app_register("one-too-many"), -ENOSPC);
    ck_assert_int_eq(d9_app_register("n17"), 18); /* a name already there is still found */
    ck_assert(names(D9_APP_NAMES, "n255"));
}
END_TEST

#define RACERS 4
#define RACE_NAMES 48

struct racer {
    int k;                 /* the racer's index: its order of the names */
    int got[RACE_NAMES];   /* the id it got for name i */
};

static void *race(void *arg)
{
    struct racer *r = arg;
    char name[24];
    for (int j = 0; j < RACE_NAMES; j++) { /* each racer its own order: rotated, odd ones reversed */
        int i = ((r->k % 2 ? RACE_NAMES - 1 - j : j) + r->k * 11) % RACE_NAMES;
        snprintf(name, sizeof(name), "race.%d", i);
        r->got[i] = d9_app_register(name);
    }
    return NULL;
}

START_TEST(racing_threads)
{
    struct racer r[RACERS];
    pthread_t t[RACERS];
    for (int k = 0; k < RACERS; k++) {
        r[k].k = k;
        ck_assert_int_eq(pthread_create(&t[k], NULL, race, &r[k]), 0);
    }
    for (int k = 0; k < RACERS; k++)
        pthread_join(t[k], NULL);
    char name[24];
    for (int i = 0; i < RACE_NAMES; i++) {
        snprintf(name, sizeof(name), "race.%d", i);
        for (int k = 0; k < RACERS; k++) { /* two racers may get two ids: both name it */
            ck_assert_int_ge(r[k].got[i], 1);
            ck_assert_int_le(r[k].got[i], D9_APP_NAMES);
            ck_assert_msg(names(r[k].got[i], name), "racer %d's id %d for %s names another", k, r[k].got[i], name);
        }
        int id = d9_app_register(name); /* found once the race is over */
        ck_assert(names(id, name));
    }
}
END_TEST

D9_SUITE(app_names)
{
    TCase *tc = tcase_create("app_names");
    tcase_add_test(tc, rules_on_a_name);
    tcase_add_test(tc, full_table);
    tcase_add_loop_test(tc, racing_threads, 0, 20);
    suite_add_tcase(s, tc);
    return s;
}
