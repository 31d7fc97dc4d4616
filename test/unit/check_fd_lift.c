/* check_fd_lift.c - where d9_fd_lift (agent/fd_lift.h) puts a copy: off
 * 0-2, or at three quarters of min(soft RLIMIT_NOFILE, 1024) and up; -1
 * when the fd is there already or the zone is full; errno kept. Each test
 * runs in its own forked process (Check's default): the limits and fds it
 * changes are its own. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fd_lift.h"
#include "unit.h"

static void set_soft_limit(rlim_t n)
{
    struct rlimit r;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &r), 0);
    r.rlim_cur = n;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &r), 0);
}

/* 1 when fd is open and close-on-exec. */
static int cloexec(int fd)
{
    int f = fcntl(fd, F_GETFD);
    return f >= 0 && (f & FD_CLOEXEC);
}

START_TEST(off_stdio)
{
    close(0);
    int fd = open("/dev/null", O_RDONLY); /* the lowest free: 0 */
    ck_assert_int_eq(fd, 0);
    errno = 1234;
    int hi = d9_fd_lift(fd, D9_FD_ABOVE_STDIO);
    ck_assert_int_eq(errno, 1234);
    ck_assert_int_ge(hi, 3);
    ck_assert(cloexec(hi));
    ck_assert_int_eq(d9_fd_lift(hi, D9_FD_ABOVE_STDIO), -1); /* there already */
    ck_assert_int_eq(d9_fd_lift(-1, D9_FD_ABOVE_STDIO), -1);
}
END_TEST

START_TEST(to_the_top)
{
    set_soft_limit(4096); /* capped: 768 and up, not 3072 */
    int fd = open("/dev/null", O_RDONLY);
    int a = d9_fd_lift(fd, D9_FD_TOP), b = d9_fd_lift(fd, D9_FD_TOP);
    ck_assert_int_eq(a, 768);
    ck_assert_int_eq(b, 769); /* the lowest free in the zone */
    ck_assert(cloexec(a) && cloexec(b));
    ck_assert_int_eq(d9_fd_lift(a, D9_FD_TOP), -1);
    set_soft_limit(64); /* a low limit: 48 and up */
    ck_assert_int_eq(d9_fd_lift(fd, D9_FD_TOP), 48);
}
END_TEST

START_TEST(zone_full)
{
    set_soft_limit(16); /* the zone: 12-15 */
    int fd = open("/dev/null", O_RDONLY);
    for (int want = 12; want < 16; want++)
        ck_assert_int_eq(d9_fd_lift(fd, D9_FD_TOP), want);
    errno = 1234;
    ck_assert_int_eq(d9_fd_lift(fd, D9_FD_TOP), -1); /* EMFILE: the caller keeps fd */
    ck_assert_int_eq(errno, 1234);
    ck_assert_int_ge(fcntl(fd, F_GETFD), 0);
}
END_TEST

D9_SUITE(fd_lift)
{
    TCase *tc = tcase_create("fd_lift");
    tcase_add_test(tc, off_stdio);
    tcase_add_test(tc, to_the_top);
    tcase_add_test(tc, zone_full);
    suite_add_tcase(s, tc);
    return s;
}
