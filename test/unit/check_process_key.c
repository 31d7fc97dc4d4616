/* check_process_key.c - one pid, several processes: the start time parsed
 * from /proc/PID/stat, the trace directory's name, the PROCESS TLV written
 * and read back, and the decoder's process keys (pidkey.h,
 * d9_model_add_header). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"
#include "model.h"
#include "pidkey.h"
#include "proc_identity.h"
#include "reader.h"
#include "unit.h"

START_TEST(start_ticks_parsed)
{
    /* comm "a) (b c": spaces and parentheses; fields 4-21 are 1..18. */
    const char *line = "1234 (a) (b c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 19 20\n";
    uint64_t v = 0;
    ck_assert_int_eq(d9_stat_start_ticks(line, strlen(line), &v), 0);
    ck_assert_uint_eq(v, 987654);
    ck_assert_int_eq(d9_stat_start_ticks("1234 (x) S 1 2 3", 16, &v), -1);          /* cut short */
    ck_assert_int_eq(d9_stat_start_ticks("1234 x S 1 2 3 4", 16, &v), -1);          /* no comm */
    const char *bad = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 98x7 19\n";
    ck_assert_int_eq(d9_stat_start_ticks(bad, strlen(bad), &v), -1);
    /* The line cut right after field 22 is whole. */
    ck_assert_int_eq(d9_stat_start_ticks(line, strlen("1234 (a) (b c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654"),
                                         &v), 0);
    ck_assert_uint_eq(v, 987654);
}
END_TEST

START_TEST(own_identity_read)
{
    struct d9_proc_identity id;
    ck_assert_int_eq(d9_proc_identity_read(&id), 0);
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK);
    ck_assert_uint_le(id.start_ticks, (uint64_t)t.tv_sec * hz + (uint64_t)t.tv_nsec / (1000000000u / hz));
    ck_assert_uint_gt(id.pidns, 0);
    ck_assert_uint_eq(strlen(id.boot_id), D9_BOOT_ID_MAX);
    ck_assert_int_eq(id.boot_id[8], '-');
}
END_TEST

START_TEST(exec_name_chosen)
{
    ck_assert_str_eq(d9_exec_name("/usr/bin/redis-server", "/usr/bin/redis-check-rdb"), "redis-server");
    ck_assert_str_eq(d9_exec_name("./server.py", "/usr/bin/python3.11"), "server.py");
    ck_assert_str_eq(d9_exec_name("node", "/usr/bin/node"), "node");
    ck_assert_str_eq(d9_exec_name("/dev/fd/3", "/usr/bin/x"), "x"); /* fexecve */
    ck_assert_str_eq(d9_exec_name("/proc/self/exe", "/usr/bin/x"), "x"); /* a re-exec of itself */
    ck_assert_str_eq(d9_exec_name("/proc/self/fd/7", "/usr/bin/x"), "x");
    ck_assert_str_eq(d9_exec_name("/bin/..", "/usr/bin/x"), "x");
    ck_assert_str_eq(d9_exec_name("dir/", "/usr/bin/x"), "x");
    ck_assert_str_eq(d9_exec_name(NULL, "/usr/bin/x"), "x");
    ck_assert_str_eq(d9_exec_name("3", "/usr/bin/4"), "unknown"); /* digits only either way */
    ck_assert_str_eq(d9_exec_name(NULL, ""), "unknown");
    ck_assert_str_eq(d9_exec_name("/usr/bin/2to3", "/usr/bin/python3"), "2to3");
}
END_TEST

/* A header-only segment of pid with identity id (NULL: none), read back into *seg. */
static void header(uint32_t pid, const struct d9_proc_identity *id, struct d9_seg *seg)
{
    static uint8_t buf[8192];
    struct d9_header_info h = {.pid = pid, .exe = "/usr/bin/svc", .clock = "monotonic", .identity = id};
    size_t len = d9_header_build(buf, sizeof(buf), &h);
    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(d9_read_segment(buf, len, seg, NULL, NULL), 0);
    ck_assert_int_eq(seg->status, D9_SEG_OK);
    ck_assert_int_eq(seg->has_identity, id != NULL);
}

/* The key d9_model_add_header gives a header of pid and id; rc its return. */
static uint32_t add(struct d9_model *m, uint32_t pid, const struct d9_proc_identity *id, int rc)
{
    struct d9_seg seg;
    header(pid, id, &seg);
    if (id) {
        ck_assert_uint_eq(seg.identity.start_ticks, id->start_ticks);
        ck_assert_uint_eq(seg.identity.pidns, id->pidns);
        ck_assert_str_eq(seg.identity.boot_id, id->boot_id);
    }
    ck_assert_int_eq(d9_model_add_header(m, &seg), rc);
    uint32_t key = seg.pid;
    d9_seg_free(&seg);
    ck_assert_uint_eq(d9_pid_of(key), pid);
    header(pid, id, &seg); /* found again, without adding */
    ck_assert_uint_eq(d9_model_key_of(m, &seg), key);
    d9_seg_free(&seg);
    return key;
}

START_TEST(one_pid_several_processes)
{
    struct d9_model m = {0};
    struct d9_proc_identity a = {100, 4026531836u, "6f46134a-8ee8-42b2-9b75-97a23bc2f2cd"};
    struct d9_proc_identity b = a, c = a, x = a;
    b.pidns = 4026532177u; /* another container */
    c.boot_id[0] = '7';    /* another boot, same start and namespace */
    x.start_ticks = 250;   /* the pid reused */
    ck_assert_uint_eq(add(&m, 7, &a, 0), 7);
    ck_assert_uint_eq(add(&m, 7, &b, 1), d9_pid_key(7, 2));
    ck_assert_uint_eq(add(&m, 7, NULL, 0), 7); /* no identity: the first process */
    ck_assert_uint_eq(add(&m, 7, &a, 0), 7);
    ck_assert_uint_eq(add(&m, 7, &c, 1), d9_pid_key(7, 3));
    ck_assert_uint_eq(add(&m, 7, &x, 1), d9_pid_key(7, 4));
    ck_assert_uint_eq(add(&m, 7, &b, 0), d9_pid_key(7, 2));
    ck_assert_uint_eq(m.nproc, 4);
    /* The first process met without an identity takes the first that comes. */
    ck_assert_uint_eq(add(&m, 9, NULL, 0), 9);
    ck_assert_uint_eq(add(&m, 9, &x, 0), 9);
    ck_assert_uint_eq(add(&m, 9, &a, 1), d9_pid_key(9, 2));
    /* Not a Linux pid (2^22 and up): one process whatever the identity. */
    ck_assert_uint_eq(add(&m, 1u << 23, &a, 0), 1u << 23);
    ck_assert_uint_eq(add(&m, 1u << 23, &b, 0), 1u << 23);
    /* Past D9_PID_INSTANCES processes of one pid, the last holds the rest. */
    struct d9_proc_identity y = a;
    for (uint32_t n = 1; n <= D9_PID_INSTANCES + 3; n++) {
        y.start_ticks = 1000 + n;
        uint32_t want = d9_pid_key(5, n <= D9_PID_INSTANCES ? n : D9_PID_INSTANCES);
        ck_assert_uint_eq(add(&m, 5, &y, n > 1 && n <= D9_PID_INSTANCES), want);
    }
    ck_assert_uint_eq(d9_pid_instance(d9_pid_key(5, D9_PID_INSTANCES)), D9_PID_INSTANCES);
    d9_model_free(&m);
}
END_TEST

START_TEST(keys_shown)
{
    char buf[D9_PID_TEXT];
    ck_assert_str_eq(d9_fmt_pid(buf, sizeof(buf), 4194303), "4194303");
    uint32_t k = d9_pid_key(4194303, 2);
    ck_assert_uint_ne(k, 4194303);
    ck_assert_str_eq(d9_fmt_pid(buf, sizeof(buf), k), "4194303#2");
    ck_assert_uint_eq(d9_pid_of(k), 4194303);
    ck_assert_uint_eq(d9_pid_instance(k), 2);
    ck_assert_uint_eq(d9_pid_instance(4194303), 1);
    /* Viewers' pids: the first keeps its pid, the others are distinct and positive. */
    ck_assert_uint_eq(d9_pid_track(1), 1);
    ck_assert_uint_ne(d9_pid_track(d9_pid_key(1, 2)), d9_pid_track(d9_pid_key(1, 3)));
    ck_assert_uint_lt(d9_pid_track(d9_pid_key(4194303, D9_PID_INSTANCES)), 1u << 31);
}
END_TEST

D9_SUITE(process_key)
{
    TCase *tc = tcase_create("process_key");
    tcase_add_test(tc, start_ticks_parsed);
    tcase_add_test(tc, own_identity_read);
    tcase_add_test(tc, exec_name_chosen);
    tcase_add_test(tc, one_pid_several_processes);
    tcase_add_test(tc, keys_shown);
    suite_add_tcase(s, tc);
    return s;
}
