/* hooks_semantics.c - every call dial9 interposes must behave exactly as
 * libc's: same return values, same errno, same EINTR behaviour. Run plain
 * and under LD_PRELOAD=build/libdial9.so; both runs must pass.
 * Standalone: no agent headers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The fortify entry points, declared here so both are exercised directly. */
extern int __poll_chk(struct pollfd *, nfds_t, int, size_t);
extern ssize_t __read_chk(int, void *, size_t, size_t);
extern ssize_t __recv_chk(int, void *, size_t, size_t, int);
extern ssize_t __recvfrom_chk(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);

#include "checks.h"

/* ---- helpers ----------------------------------------------------------- */

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }


struct kicker {
    pthread_t th;
    pthread_t target;
    long delay_ms;
    atomic_int done;
};

/* Signals the target every delay_ms until told to stop: a signal that lands
 * before the target blocks must not leave it blocked forever. */
static void *kick_main(void *p)
{
    struct kicker *k = p;
    struct timespec d = {k->delay_ms / 1000, (k->delay_ms % 1000) * 1000000};
    while (!atomic_load(&k->done)) {
        nanosleep(&d, NULL);
        if (!atomic_load(&k->done))
            pthread_kill(k->target, SIGUSR1);
    }
    return NULL;
}

/* SIGUSR1 to this thread after ms; SIGUSR1's handler has no SA_RESTART. */
static void interrupt_after(struct kicker *k, long ms)
{
    got_signal = 0;
    k->target = pthread_self();
    k->delay_ms = ms;
    atomic_store(&k->done, 0);
    pthread_create(&k->th, NULL, kick_main, k);
}

static void interrupt_done(struct kicker *k)
{
    atomic_store(&k->done, 1);
    pthread_join(k->th, NULL);
}

static struct timespec abs_in(clockid_t clk, long ms)
{
    struct timespec t;
    clock_gettime(clk, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    } else if (t.tv_nsec < 0) { /* a time in the past: tv_nsec must stay in [0, 1e9) */
        t.tv_sec--;
        t.tv_nsec += 1000000000;
    }
    return t;
}

/* An fd number that is not open (below FD_SETSIZE, for select). */
static int closed_fd(void)
{
    int fd = 1000;
    while (fcntl(fd, F_GETFD) != -1)
        fd--;
    return fd;
}

/* Invalid user pointers, hidden from the compiler's access checks. */
static void *volatile bad_ptr = (void *)8;

static long sys_futex(void *uaddr, int op, int val, const struct timespec *ts, void *uaddr2,
                      int val3)
{
    return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

/* ---- epoll ------------------------------------------------------------- */

static void test_epoll(void)
{
    struct epoll_event ev[4];
    struct timespec zero = {0, 0}, ten_ms = {0, 10000000};
    int bad = closed_fd();
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    CHECK(ep >= 0 && efd >= 0);

    CHECK_ERR(epoll_wait(bad, ev, 4, 0), EBADF);
    CHECK_ERR(epoll_wait(bad, ev, 4, 10), EBADF);
    CHECK_ERR(epoll_wait(ep, ev, 0, 10), EINVAL);
    CHECK_ERR(epoll_wait(efd, ev, 4, 10), EINVAL); /* not an epoll fd */
    CHECK_RET(epoll_wait(ep, ev, 4, 0), 0);
    CHECK_RET(epoll_wait(ep, ev, 4, 10), 0);
    CHECK_ERR(epoll_pwait(bad, ev, 4, 10, NULL), EBADF);
    CHECK_RET(epoll_pwait(ep, ev, 4, 10, NULL), 0);

    errno = 0;
    int r2 = epoll_pwait2(ep, ev, 4, &zero, NULL);
    if (r2 == -1 && errno == ENOSYS) {
        CHECK_ERR(epoll_pwait2(ep, ev, 4, &ten_ms, NULL), ENOSYS);
    } else {
        CHECK(r2 == 0);
        CHECK_RET(epoll_pwait2(ep, ev, 4, &ten_ms, NULL), 0);
        CHECK_ERR(epoll_pwait2(bad, ev, 4, &ten_ms, NULL), EBADF);
        struct timespec inval = {0, -1};
        CHECK_ERR(epoll_pwait2(ep, ev, 4, &inval, NULL), EINVAL);
    }

    /* epoll_ctl on an eventfd (tracked by the agent) and on bad fds. */
    struct epoll_event add = {.events = EPOLLIN, .data.u64 = 42};
    CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &add), 0);
    CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &add), EEXIST);
    CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, bad, &add), EBADF);
    CHECK_ERR(epoll_ctl(bad, EPOLL_CTL_ADD, efd, &add), EBADF);
    CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &add), EINVAL);
    CHECK_ERR(epoll_ctl(ep, 99, efd, &add), EINVAL);
    CHECK_ERR(epoll_ctl(ep, 256 + EPOLL_CTL_MOD, efd, &add), EINVAL); /* the whole int reaches the kernel */

    /* A ready eventfd wakes the epoll set with the right data. */
    uint64_t one = 1;
    CHECK_RET(write(efd, &one, 8), 8);
    memset(ev, 0, sizeof ev);
    CHECK_RET(epoll_wait(ep, ev, 4, 1000), 1);
    CHECK(ev[0].data.u64 == 42 && (ev[0].events & EPOLLIN));
    CHECK_RET(epoll_pwait(ep, ev, 4, -1, NULL), 1);
    CHECK_RET(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), 0);
    CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), ENOENT);

    /* EINTR: infinite and finite waits. */
    struct kicker k;
    interrupt_after(&k, 30);
    CHECK_ERR(epoll_wait(ep, ev, 4, -1), EINTR);
    interrupt_done(&k);
    CHECK(got_signal == SIGUSR1);
    interrupt_after(&k, 30);
    CHECK_ERR(epoll_pwait(ep, ev, 4, 5000, NULL), EINTR);
    interrupt_done(&k);

    close(efd);
    close(ep);
}

/* ---- poll / ppoll / select / pselect ----------------------------------- */

static void test_poll(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    struct timespec zero = {0, 0}, ten_ms = {0, 10000000}, inval = {0, -1};
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);

    CHECK_RET(poll(&pf, 1, 0), 0);
    CHECK_RET(poll(&pf, 1, 10), 0);
    CHECK_RET(poll(NULL, 0, 10), 0);
    struct pollfd *volatile opaque = &pf; /* hides its size from fortify */
    CHECK_ERR(poll(opaque, (nfds_t)rl.rlim_cur + 1, 10), EINVAL);
    CHECK_ERR(poll(bad_ptr, 1, 10), EFAULT);
    struct pollfd neg = {.fd = -1, .events = POLLIN};
    CHECK_RET(poll(&neg, 1, 10), 0); /* negative fds are ignored */
    struct pollfd nv = {.fd = closed_fd(), .events = POLLIN};
    CHECK_RET(poll(&nv, 1, 10), 1);
    CHECK(nv.revents == POLLNVAL);

    CHECK_RET(write(p[1], "x", 1), 1);
    CHECK_RET(poll(&pf, 1, -1), 1);
    CHECK(pf.revents == POLLIN);
    CHECK_RET(__poll_chk(&pf, 1, 0, sizeof pf), 1);
    CHECK_RET(__poll_chk(&pf, 1, 10, sizeof pf), 1);
    CHECK_RET(ppoll(&pf, 1, NULL, NULL), 1);
    CHECK_RET(ppoll(&pf, 1, &zero, NULL), 1);
    char c;
    CHECK_RET(read(p[0], &c, 1), 1);
    CHECK_RET(ppoll(&pf, 1, &zero, NULL), 0);
    CHECK_RET(ppoll(&pf, 1, &ten_ms, NULL), 0);
    CHECK_ERR(ppoll(&pf, 1, &inval, NULL), EINVAL);
    CHECK_ERR(ppoll(opaque, (nfds_t)rl.rlim_cur + 1, &ten_ms, NULL), EINVAL);

    fd_set r;
    struct timeval tz = {0, 0}, t10 = {0, 10000}, tinval = {0, -1};
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    CHECK_RET(select(p[0] + 1, &r, NULL, NULL, &tz), 0);
    FD_SET(p[0], &r);
    CHECK_RET(select(p[0] + 1, &r, NULL, NULL, &t10), 0);
    CHECK_RET(select(0, NULL, NULL, NULL, &t10), 0);
    CHECK_ERR(select(-1, NULL, NULL, NULL, &t10), EINVAL);
    CHECK_ERR(select(0, NULL, NULL, NULL, &tinval), EINVAL);
    int bad = dup(0); /* closed, and inside the fd table's current size */
    close(bad);
    FD_ZERO(&r);
    FD_SET(bad, &r);
    CHECK_ERR(select(bad + 1, &r, NULL, NULL, &t10), EBADF);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    CHECK_RET(pselect(p[0] + 1, &r, NULL, NULL, &zero, NULL), 0);
    FD_SET(p[0], &r);
    CHECK_RET(pselect(p[0] + 1, &r, NULL, NULL, &ten_ms, NULL), 0);
    CHECK_ERR(pselect(0, NULL, NULL, NULL, &inval, NULL), EINVAL);
    CHECK_RET(write(p[1], "y", 1), 1);
    FD_SET(p[0], &r);
    CHECK_RET(select(p[0] + 1, &r, NULL, NULL, NULL), 1);
    CHECK(FD_ISSET(p[0], &r));
    CHECK_RET(read(p[0], &c, 1), 1);

    struct kicker k;
    interrupt_after(&k, 30);
    CHECK_ERR(poll(&pf, 1, -1), EINTR);
    interrupt_done(&k);
    interrupt_after(&k, 30);
    CHECK_ERR(ppoll(&pf, 1, NULL, NULL), EINTR);
    interrupt_done(&k);
    interrupt_after(&k, 30);
    FD_SET(p[0], &r);
    CHECK_ERR(select(p[0] + 1, &r, NULL, NULL, NULL), EINTR);
    interrupt_done(&k);
    interrupt_after(&k, 30);
    FD_SET(p[0], &r);
    CHECK_ERR(pselect(p[0] + 1, &r, NULL, NULL, NULL, NULL), EINTR);
    interrupt_done(&k);

    close(p[0]);
    close(p[1]);
}

/* ---- sleeps ------------------------------------------------------------ */

static void test_sleep(void)
{
    struct timespec one_ms = {0, 1000000}, inval = {0, 1000000000}, neg = {-1, 0};
    struct timespec rem = {0, 0};
    CHECK_RET(nanosleep(&one_ms, NULL), 0);
    CHECK_RET(nanosleep(&(struct timespec){0, 0}, NULL), 0);
    CHECK_ERR(nanosleep(&inval, NULL), EINVAL);
    CHECK_ERR(nanosleep(&neg, NULL), EINVAL);
    CHECK_ERR(nanosleep(NULL, NULL), EFAULT);

    /* clock_nanosleep returns the error number and leaves errno alone. */
    CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, &one_ms, NULL), 0);
    CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, &inval, NULL), EINVAL);
    CHECK_RET(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &one_ms, NULL), EINVAL);
    CHECK_RET(clock_nanosleep(12345, 0, &one_ms, NULL), EINVAL);
    struct timespec past = abs_in(CLOCK_MONOTONIC, -5);
    CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &past, NULL), 0);
    struct timespec soon = abs_in(CLOCK_REALTIME, 5);
    CHECK_RET(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &soon, NULL), 0);

    struct kicker k;
    interrupt_after(&k, 30);
    CHECK_ERR(nanosleep(&(struct timespec){5, 0}, &rem), EINTR);
    interrupt_done(&k);
    CHECK(rem.tv_sec > 0 && rem.tv_sec <= 5);
    interrupt_after(&k, 30);
    rem.tv_sec = 0;
    CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){5, 0}, &rem), EINTR);
    interrupt_done(&k);
    CHECK(rem.tv_sec > 0 && rem.tv_sec <= 5);

    CHECK_RET(usleep(1000), 0);
    CHECK_RET(usleep(0), 0);
    CHECK_RET(sleep(0), 0);
    interrupt_after(&k, 30);
    CHECK_ERR(usleep(5000000), EINTR);
    interrupt_done(&k);
    interrupt_after(&k, 30);
    unsigned left = sleep(5); /* interrupted: the unslept seconds, errno kept */
    interrupt_done(&k);
    CHECK(left > 0 && left <= 5);
}

/* ---- condition variables ---------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;

static void *signaller(void *p)
{
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    pthread_mutex_lock(&mu);
    flag = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return p;
}

static void test_cond(void)
{
    struct timespec past = {0, 0}, inval = {0, -5};
    pthread_mutex_lock(&mu);
    CHECK_RET(pthread_cond_timedwait(&cv, &mu, &past), ETIMEDOUT);
    struct timespec t = abs_in(CLOCK_REALTIME, 20);
    CHECK_RET(pthread_cond_timedwait(&cv, &mu, &t), ETIMEDOUT);
    CHECK_RET(pthread_cond_timedwait(&cv, &mu, &inval), EINVAL);
    t = abs_in(CLOCK_MONOTONIC, 20);
    CHECK_RET(pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &t), ETIMEDOUT);
    t = abs_in(CLOCK_REALTIME, 20);
    CHECK_RET(pthread_cond_clockwait(&cv, &mu, CLOCK_REALTIME, &t), ETIMEDOUT);
    CHECK_RET(pthread_cond_clockwait(&cv, &mu, CLOCK_PROCESS_CPUTIME_ID, &t), EINVAL);
    pthread_mutex_unlock(&mu);

    /* A monotonic condvar (pthread_condattr_setclock). */
    pthread_condattr_t ca;
    pthread_cond_t mcv;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mcv, &ca);
    pthread_mutex_lock(&mu);
    t = abs_in(CLOCK_MONOTONIC, 20);
    CHECK_RET(pthread_cond_timedwait(&mcv, &mu, &t), ETIMEDOUT);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&mcv);
    pthread_condattr_destroy(&ca);

    CHECK_RET(pthread_cond_signal(&cv), 0);
    CHECK_RET(pthread_cond_broadcast(&cv), 0);

    /* Woken by another thread. */
    pthread_t th;
    flag = 0;
    pthread_create(&th, NULL, signaller, NULL);
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!flag && rc == 0)
        rc = pthread_cond_wait(&cv, &mu);
    CHECK(rc == 0 && flag == 1);
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);

    /* A signal does not interrupt a condvar wait: never EINTR. */
    struct kicker k;
    interrupt_after(&k, 20);
    pthread_mutex_lock(&mu);
    t = abs_in(CLOCK_REALTIME, 100);
    do
        rc = pthread_cond_timedwait(&cv, &mu, &t);
    while (rc == 0);
    pthread_mutex_unlock(&mu);
    interrupt_done(&k);
    CHECK(rc == ETIMEDOUT);
    CHECK(got_signal == SIGUSR1);
}

/* ---- semaphores -------------------------------------------------------- */

static void test_sem(void)
{
    sem_t s;
    struct timespec past = {0, 0}, inval = {0, -1};
    CHECK(sem_init(&s, 0, 0) == 0);
    CHECK_ERR(sem_timedwait(&s, &past), ETIMEDOUT);
    struct timespec t = abs_in(CLOCK_REALTIME, 20);
    CHECK_ERR(sem_timedwait(&s, &t), ETIMEDOUT);
    CHECK_ERR(sem_timedwait(&s, &inval), EINVAL);
    t = abs_in(CLOCK_MONOTONIC, 20);
    CHECK_ERR(sem_clockwait(&s, CLOCK_MONOTONIC, &t), ETIMEDOUT);
    CHECK_ERR(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &t), EINVAL);

    CHECK_RET(sem_post(&s), 0);
    CHECK_RET(sem_post(&s), 0);
    CHECK_RET(sem_post(&s), 0);
    CHECK_RET(sem_wait(&s), 0);
    CHECK_RET(sem_timedwait(&s, &past), 0); /* available: no timeout check */
    CHECK_RET(sem_clockwait(&s, CLOCK_MONOTONIC, &past), 0);

    struct kicker k;
    interrupt_after(&k, 30);
    CHECK_ERR(sem_wait(&s), EINTR);
    interrupt_done(&k);
    interrupt_after(&k, 30);
    t = abs_in(CLOCK_REALTIME, 5000);
    CHECK_ERR(sem_timedwait(&s, &t), EINTR);
    interrupt_done(&k);
    sem_destroy(&s);

    CHECK(sem_init(&s, 0, SEM_VALUE_MAX) == 0);
    CHECK_ERR(sem_post(&s), EOVERFLOW);
    sem_destroy(&s);
}

/* ---- syscall() --------------------------------------------------------- */

/* ---- timeouts at unmapped addresses ------------------------------------
 * The kernel answers EFAULT; the agent reads each of these timeouts before
 * the call (for its PARK) and must not crash where it would (agent/safe_load.h).
 * gone: a page no longer mapped; edge: a timespec whose tv_nsec lies past
 * the end of a mapping. select, ppoll and pselect are not here: glibc
 * itself copies their timeout in user space (they crash without the agent
 * too). */
static void test_unmapped_timeouts(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED)
        return;
    CHECK_RET(munmap(m + pg, pg), 0);
    struct timespec *edge = (struct timespec *)(m + pg - 8);
    edge->tv_sec = 0; /* readable; tv_nsec is not */
    char *g = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(g != MAP_FAILED);
    CHECK_RET(munmap(g, pg), 0);
    struct timespec *gone = (struct timespec *)g;
    struct timespec *bad[] = {gone, edge};
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev[2];
    int word = 0;
    for (int i = 0; i < 2; i++) {
        CHECK_ERR(nanosleep(bad[i], NULL), EFAULT);
        CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, bad[i], NULL), EFAULT);
        CHECK_RET(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, bad[i], NULL), EFAULT);
        int r2 = epoll_pwait2(ep, ev, 2, bad[i], NULL);
        CHECK(r2 == -1 && (errno == EFAULT || errno == ENOSYS));
        CHECK_ERR(sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, bad[i], NULL, 0), EFAULT);
        CHECK_ERR(sys_futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, bad[i], NULL, -1), EFAULT);
    }
    close(ep);
    munmap(m, pg);
}

static _Atomic int fword;

static void *futex_waiter(void *p)
{
    while (atomic_load(&fword) == 0)
        sys_futex(&fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return p;
}

static void test_syscall(void)
{
    CHECK_RET(syscall(SYS_getpid), getpid());
    CHECK_RET(syscall(SYS_gettid), gettid());
    CHECK_ERR(syscall(100000), ENOSYS);
    CHECK_ERR(syscall(SYS_close, -1), EBADF);
    /* close and close_range through syscall(): the close gate's path. */
    CHECK_ERR(syscall(SYS_close_range, 5u, 4u, 0u), EINVAL);
    CHECK_ERR(syscall(SYS_close_range, 3u, ~0u, 0x80u), EINVAL); /* no such flag */
    int e = eventfd(0, 0);
    CHECK(e >= 0);
    CHECK_RET(syscall(SYS_close, e), 0);
    CHECK_ERR(syscall(SYS_close, e), EBADF);
    e = eventfd(0, 0);
    CHECK_RET(syscall(SYS_close_range, (unsigned)e, (unsigned)e, 4u /* CLOSE_RANGE_CLOEXEC */), 0);
    CHECK(fcntl(e, F_GETFD) == FD_CLOEXEC); /* marked, still open */
    CHECK_RET(syscall(SYS_close_range, (unsigned)e, (unsigned)e, 0u), 0);
    CHECK_ERR(fcntl(e, F_GETFD), EBADF);
    /* dup2 and dup3 through syscall(): the dup hooks' path. */
    e = eventfd(0, 0);
    CHECK_ERR(syscall(SYS_dup2, -1, e), EBADF);
    CHECK_ERR(syscall(SYS_dup3, e, e, 0), EINVAL);
    CHECK_RET(syscall(SYS_dup2, e, e), e);
    CHECK_RET(syscall(SYS_dup3, e, 200, O_CLOEXEC), 200);
    CHECK(fcntl(200, F_GETFD) == FD_CLOEXEC);
    close(200);
    close(e);

    int p[2];
    CHECK(pipe(p) == 0);
    CHECK_RET(syscall(SYS_write, p[1], "hello", 5), 5);
    char buf[16] = {0};
    CHECK_RET(read(p[0], buf, sizeof buf), 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    close(p[0]);
    close(p[1]);

    /* Four arguments with a 64-bit offset. */
    char path[] = "/tmp/hooks_semantics.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK_RET(write(fd, "0123456789", 10), 10);
    memset(buf, 0, sizeof buf);
    CHECK_RET(syscall(SYS_pread64, fd, buf, 3, 6L), 3);
    CHECK(memcmp(buf, "678", 3) == 0);
    close(fd);

    /* All six arguments. */
    void *m = (void *)syscall(SYS_mmap, NULL, 4096L, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
    CHECK(m != MAP_FAILED && m != NULL);
    if (m != MAP_FAILED) {
        ((char *)m)[0] = 1;
        CHECK_RET(syscall(SYS_munmap, m, 4096L), 0);
    }
    CHECK_ERR(syscall(SYS_mmap, NULL, 4096L, PROT_READ, MAP_PRIVATE, -1, 0L), EBADF);

    /* futex: wakes, value mismatch, timeouts, bad ops, a real wake-up. */
    int word = 0;
    struct timespec ten_ms = {0, 10000000};
    CHECK_RET(sys_futex(&word, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
    CHECK_RET(sys_futex(&word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0), 0);
    CHECK_RET(sys_futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, -1), 0);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), EAGAIN);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ten_ms, NULL, 0), ETIMEDOUT);
    struct timespec past = abs_in(CLOCK_MONOTONIC, -1);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, &past, NULL, -1), ETIMEDOUT);
    struct timespec soon = abs_in(CLOCK_REALTIME, 10);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &soon,
                        NULL, -1),
              ETIMEDOUT);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, &past, NULL, 0), EINVAL);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, &(struct timespec){0, -1}, NULL, 0),
              EINVAL);
    CHECK_ERR(sys_futex(&word, 99, 0, NULL, NULL, 0), ENOSYS);
    CHECK_ERR(sys_futex((void *)3, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EINVAL);
    CHECK_ERR(sys_futex((void *)3, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), EINVAL); /* a failed wake */
    CHECK_ERR(sys_futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EFAULT);
    int other = 0;
    CHECK_RET(sys_futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &other, 0), 0);
    CHECK_ERR(sys_futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &other, 7), EAGAIN);
    CHECK_RET(sys_futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &other,
                        FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0)),
              0);
    CHECK(other == 5);

    struct kicker k;
    interrupt_after(&k, 30);
    CHECK_ERR(sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EINTR);
    interrupt_done(&k);

    pthread_t th;
    atomic_store(&fword, 0);
    pthread_create(&th, NULL, futex_waiter, NULL);
    long woken = 0;
    for (int i = 0; i < 500 && woken == 0; i++) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        woken = sys_futex(&fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    CHECK(woken == 1);
    atomic_store(&fword, 1);
    sys_futex(&fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
}

/* ---- eventfd and fd bookkeeping --------------------------------------- */

static void test_eventfd(void)
{
    int efd = eventfd(3, EFD_CLOEXEC | EFD_NONBLOCK);
    CHECK(efd >= 0);
    uint64_t v = 5, out = 0;
    CHECK_RET(write(efd, &v, 8), 8);
    v = 7;
    CHECK_RET(write(efd, &v, 8), 8);
    CHECK_RET(read(efd, &out, 8), 8);
    CHECK(out == 15);
    CHECK_ERR(read(efd, &out, 8), EAGAIN);
    CHECK_ERR(write(efd, &v, 4), EINVAL);
    v = UINT64_MAX;
    CHECK_ERR(write(efd, &v, 8), EINVAL);
    v = UINT64_MAX - 1;
    CHECK_RET(write(efd, &v, 8), 8);
    v = 1;
    CHECK_ERR(write(efd, &v, 8), EAGAIN); /* counter would overflow */
    CHECK_RET(read(efd, &out, 8), 8);
    CHECK_ERR(write(efd, bad_ptr, 8), EFAULT);

    CHECK_RET(eventfd_write(efd, 9), 0);
    CHECK_RET(eventfd_write(efd, 1), 0);
    eventfd_t ev = 0;
    CHECK_RET(eventfd_read(efd, &ev), 0);
    CHECK(ev == 10);
    CHECK_ERR(eventfd_write(efd, UINT64_MAX), EINVAL);

    /* A blocking eventfd: writes through glibc, reads that park; results and
     * errno as without the agent, through fcntl and FIONBIO changes. */
    int be = eventfd(2, EFD_CLOEXEC);
    CHECK(be >= 0);
    v = 3;
    CHECK_RET(write(be, &v, 8), 8);
    CHECK_ERR(write(be, &v, 4), EINVAL);
    CHECK_RET(eventfd_write(be, 5), 0);
    CHECK_RET(read(be, &out, 8), 8);
    CHECK(out == 10);
    CHECK_ERR(read(be, &out, 4), EINVAL);
    CHECK_RET(eventfd_write(be, 1), 0);
    ev = 0;
    CHECK_RET(eventfd_read(be, &ev), 0);
    CHECK(ev == 1);
    CHECK_RET(fcntl(be, F_SETFL, O_NONBLOCK), 0);
    CHECK_ERR(read(be, &out, 8), EAGAIN);
    CHECK_ERR(eventfd_read(be, &ev), EAGAIN);
    int nb = 0;
    CHECK_RET(ioctl(be, FIONBIO, &nb), 0); /* blocking again */
    CHECK_RET(eventfd_write(be, 7), 0);
    CHECK_RET(eventfd_read(be, &ev), 0);
    CHECK(ev == 7);
    close(be);
    CHECK_ERR(eventfd_read(be, &ev), EBADF);

    /* dup2/dup3/dup onto other numbers: writes still reach the counter. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    int target = pipefd[1];
    CHECK_RET(dup2(efd, target), target);
    v = 4;
    CHECK_RET(write(target, &v, 8), 8);
    int d = dup(efd);
    CHECK(d >= 0);
    CHECK_RET(write(d, &v, 8), 8);
    CHECK_RET(read(efd, &out, 8), 8);
    CHECK(out == 8);
    CHECK_ERR(dup3(efd, efd, 0), EINVAL);
    CHECK_RET(dup2(efd, efd), efd);
    CHECK_ERR(dup2(closed_fd(), target), EBADF);
    CHECK_ERR(dup3(efd, -1, 0), EBADF);
    CHECK_ERR(dup(-1), EBADF);

    /* A pipe reusing a closed eventfd's number is an ordinary fd again. */
    close(d);
    close(target);
    close(efd);
    CHECK_ERR(write(efd, &v, 8), EBADF);
    CHECK_ERR(eventfd_write(efd, 1), EBADF);
    CHECK_ERR(close(efd), EBADF);
    CHECK_ERR(close(-1), EBADF);
    int q[2];
    CHECK(pipe(q) == 0);
    int w = q[0] == efd ? q[0] : q[1];
    int rd = q[0] == efd ? -1 : q[0];
    if (w == q[1]) {
        CHECK_RET(write(q[1], "abcdefgh", 8), 8);
        char b[9] = {0};
        CHECK_RET(read(rd, b, 8), 8);
        CHECK(memcmp(b, "abcdefgh", 8) == 0);
    }
    close(q[0]);
    close(q[1]);

    /* close_range forgets whole ranges. */
    int e2 = eventfd(0, 0);
    CHECK(e2 >= 0);
    CHECK_RET(close_range(e2, e2, 0), 0);
    CHECK_ERR(close(e2), EBADF);
    CHECK_ERR(close_range(5, 4, 0), EINVAL);
    CHECK_ERR(eventfd(0, -1), EINVAL);

    /* Streams close their fd inside libc: fclose and closedir keep their
     * results and errno; a stream without an fd (fmemopen) too. */
    int e3 = eventfd(0, 0);
    FILE *f = fdopen(e3, "w");
    CHECK(f != NULL);
    CHECK_RET(fclose(f), 0);
    CHECK_ERR(close(e3), EBADF);
    char mem[8];
    f = fmemopen(mem, sizeof mem, "w");
    CHECK(f != NULL);
    CHECK_RET(fclose(f), 0);
    f = fopen("/dev/null", "w");
    CHECK(f != NULL);
    errno = 0;
    CHECK(freopen("/nonexistent/d9", "r", f) == NULL && errno == ENOENT); /* f is closed */
    f = fopen("/dev/null", "w");
    FILE *g = f ? freopen("/dev/null", "r", f) : NULL;
    CHECK(g == f);
    if (g)
        CHECK_RET(fclose(g), 0);
    DIR *dir = opendir("/");
    CHECK(dir != NULL);
    int dfd = dir ? dirfd(dir) : -1;
    CHECK_RET(closedir(dir), 0);
    CHECK_ERR(close(dfd), EBADF);
    DIR *volatile none = NULL; /* glibc declares it nonnull, and answers EINVAL */
    CHECK_ERR(closedir(none), EINVAL);
}


/* ---- lock helpers ------------------------------------------------------ */

static void *lock_and_exit(void *m)
{
    pthread_mutex_lock(m);
    return NULL; /* exits owning a robust mutex */
}

struct holder {
    pthread_mutex_t *m;
    atomic_int held;
};

static void *hold_for_20ms(void *p)
{
    struct holder *h = p;
    pthread_mutex_lock(h->m);
    atomic_store(&h->held, 1);
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    pthread_mutex_unlock(h->m);
    return NULL;
}

/* ---- fd-making, timed and lock calls (slow syscalls, lock waits) ------- */

static void test_files(void)
{
    char dir[] = "/tmp/hooks_semantics.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/f", dir);

    /* open's mode is passed through (umask 0 for an exact check). */
    mode_t old_mask = umask(0);
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0640);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK_ERR(open(path, O_CREAT | O_EXCL | O_RDWR, 0600), EEXIST);
    CHECK_ERR(open("/nonexistent/x", O_RDONLY), ENOENT);
    CHECK_ERR(openat(-1, "relative", O_RDONLY), EBADF);
    CHECK_ERR(open64(path, O_RDONLY | O_DIRECTORY), ENOTDIR);
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(d >= 0);
    int f2 = openat(d, "f", O_RDONLY);
    CHECK(f2 >= 0);
    int g = openat64(d, "g", O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(g >= 0);
    CHECK_ERR(openat64(d, "g", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
    close(g);
    CHECK(unlinkat(d, "g", 0) == 0);
    close(f2);
    int c = creat(path, 0600); /* truncates; mode unchanged for an existing file */
    CHECK(c >= 0);
    CHECK(fstat(c, &st) == 0 && st.st_size == 0 && (st.st_mode & 0777) == 0640);
    umask(old_mask);

    /* I/O on a regular file (timed by the agent). */
    CHECK_RET(write(c, "0123456789", 10), 10);
    CHECK_RET(pwrite(c, "ab", 2, 4), 2);
    CHECK_RET(fsync(c), 0);
    CHECK_RET(fdatasync(c), 0);
    char buf[16] = {0};
    CHECK_RET(pread(fd, buf, 10, 0), 10);
    CHECK(memcmp(buf, "0123ab6789", 10) == 0);
    CHECK_RET(read(fd, buf, 4), 4);
    CHECK_RET(read(fd, buf, 16), 6);
    CHECK_RET(read(fd, buf, 16), 0);
    CHECK_ERR(read(d, buf, 4), EISDIR);
    CHECK_ERR(write(fd, bad_ptr, 4), EFAULT);
    CHECK(lseek(fd, 0, SEEK_SET) == 0); /* not at the end: a read there would not touch buf */
    CHECK_ERR(read(fd, bad_ptr, 4), EFAULT);
    CHECK_ERR(pread(fd, bad_ptr, 4, 0), EFAULT);
    CHECK_ERR(pwrite(c, bad_ptr, 2, 0), EFAULT);
    CHECK_ERR(pread(c, buf, 4, -1), EINVAL);
    CHECK_ERR(pwrite(-1, buf, 4, 0), EBADF);
    CHECK_ERR(fsync(-1), EBADF);
    CHECK_ERR(fdatasync(closed_fd()), EBADF);

    /* fcntl: flags, F_DUPFD copies, pointer arguments (locks). */
    CHECK_RET(fcntl(fd, F_GETFD), FD_CLOEXEC);
    CHECK_RET(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
    int dd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    CHECK(dd >= 100);
    CHECK_RET(pread(dd, buf, 2, 0), 2);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    CHECK_RET(fcntl(c, F_SETLK, &fl), 0);
    CHECK_RET(fcntl(c, F_GETLK, &fl), 0); /* our own lock never conflicts */
    CHECK(fl.l_type == F_UNLCK);
    CHECK_ERR(fcntl(-1, F_GETFD), EBADF);
    CHECK_ERR(fcntl(fd, F_DUPFD, -1), EINVAL);
    /* ioctl requests the agent only passes on: the result through the
     * pointer, and errno. */
    int nread = -1;
    CHECK_RET(ioctl(fd, FIONREAD, &nread), 0);
    CHECK(nread == 10); /* the file's bytes past the offset (0) */
    CHECK_ERR(ioctl(fd, TIOCGWINSZ, &nread), ENOTTY);
    CHECK_ERR(ioctl(-1, FIONREAD, &nread), EBADF);

    /* mmap/munmap of the file and anonymous memory. */
    char *m = mmap(NULL, 10, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED && memcmp(m, "0123ab6789", 10) == 0);
    CHECK_RET(munmap(m, 10), 0);
    errno = 0;
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, -1, 0) == MAP_FAILED && errno == EBADF);
    errno = 0;
    CHECK(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED &&
          errno == EINVAL);
    CHECK_ERR(munmap((void *)1, 4096), EINVAL);

    close(dd);
    close(c);
    close(fd);
    close(d);
    unlink(path);
    rmdir(dir);
}

static void test_sockets(void)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(l >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0);
    CHECK(getsockname(l, (struct sockaddr *)&a, &alen) == 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_RET(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    int acc = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    CHECK(acc >= 0);
    CHECK_RET(write(s, "ping", 4), 4);
    char buf[8] = {0};
    CHECK_RET(read(acc, buf, sizeof buf), 4);
    CHECK(memcmp(buf, "ping", 4) == 0);
    int s2 = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_RET(connect(s2, (struct sockaddr *)&a, sizeof a), 0);
    int acc2 = accept(l, NULL, NULL);
    CHECK(acc2 >= 0);
    CHECK_ERR(accept(s, NULL, NULL), EINVAL); /* not listening */
    CHECK_ERR(accept4(l, NULL, NULL, -1), EINVAL);
    CHECK_ERR(accept(-1, NULL, NULL), EBADF);
    CHECK_ERR(socket(AF_INET, 12345, 0), EINVAL);
    int s3 = socket(AF_INET, SOCK_STREAM, 0);
    close(l); /* nothing listens there now */
    CHECK_ERR(connect(s3, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
    CHECK_ERR(connect(-1, (struct sockaddr *)&a, sizeof a), EBADF);
    int sv[2];
    CHECK_RET(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_RET(write(sv[0], "x", 1), 1);
    CHECK_RET(read(sv[1], buf, 1), 1);
    CHECK_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);

    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    CHECK_RET(getaddrinfo("127.0.0.1", "80", &hints, &res), 0);
    CHECK(res != NULL && ((struct sockaddr_in *)res->ai_addr)->sin_port == htons(80));
    freeaddrinfo(res);
    hints.ai_flags = AI_NUMERICHOST;
    CHECK_RET(getaddrinfo("not-a-number", NULL, &hints, &res), EAI_NONAME);

    close(sv[0]);
    close(sv[1]);
    close(s3);
    close(acc2);
    close(s2);
    close(acc);
    close(s);
}

/* Waits on blocking sockets (recvmmsg among them) and a pipe (parks under
 * the agent): the data, EOF, EINTR from a handler without SA_RESTART,
 * EAGAIN at SO_RCVTIMEO or with MSG_DONTWAIT, EFAULT, and accept's own
 * errors, through each call. */
static void test_socket_waits(void)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0 &&
          getsockname(l, (struct sockaddr *)&a, &alen) == 0);
    struct kicker k;
    interrupt_after(&k, 20);
    CHECK_ERR(accept(l, NULL, NULL), EINTR);
    CHECK_ERR(accept4(l, NULL, NULL, SOCK_CLOEXEC), EINTR);
    interrupt_done(&k);
    CHECK_ERR(accept4(l, NULL, NULL, -1), EINVAL);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_RET(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    int c = accept(l, NULL, NULL);
    CHECK(c >= 0);
    CHECK_ERR(accept(c, NULL, NULL), EINVAL); /* blocking, but not listening */
    char buf[8] = {0};
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    struct mmsghdr mm = {.msg_hdr = mh};
    interrupt_after(&k, 20);
    CHECK_ERR(read(c, buf, sizeof buf), EINTR);
    CHECK_ERR(__read_chk(c, buf, sizeof buf, sizeof buf), EINTR);
    CHECK_ERR(recv(c, buf, sizeof buf, 0), EINTR);
    CHECK_ERR(__recv_chk(c, buf, sizeof buf, sizeof buf, 0), EINTR);
    CHECK_ERR(recvfrom(c, buf, sizeof buf, 0, NULL, NULL), EINTR);
    CHECK_ERR(__recvfrom_chk(c, buf, sizeof buf, sizeof buf, 0, NULL, NULL), EINTR);
    CHECK_ERR(recvmsg(c, &mh, 0), EINTR);
    CHECK_ERR(recvmmsg(c, &mm, 1, 0, NULL), EINTR);
    CHECK_ERR(readv(c, &iov, 1), EINTR);
    interrupt_done(&k);
    CHECK_ERR(recvmmsg(c, &mm, 1, MSG_DONTWAIT, NULL), EAGAIN);
    CHECK_ERR(recv(c, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
    struct timeval tv = {0, 20000};
    CHECK(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
    CHECK_ERR(recv(c, buf, sizeof buf, 0), EAGAIN);
    CHECK_ERR(read(c, buf, sizeof buf), EAGAIN);
    CHECK_ERR(recvmmsg(c, &mm, 1, 0, NULL), EAGAIN);
    CHECK_RET(write(s, "abcdefg", 7), 7);
    CHECK_ERR(recv(c, bad_ptr, 4, 0), EFAULT);
    CHECK_RET(recv(c, buf, 2, MSG_PEEK), 2);
    CHECK_RET(read(c, buf, 2), 2);
    CHECK(memcmp(buf, "ab", 2) == 0);
    CHECK_RET(recv(c, buf, 1, 0), 1);
    CHECK(buf[0] == 'c');
    CHECK_RET(recvfrom(c, buf, 1, 0, NULL, NULL), 1);
    CHECK(buf[0] == 'd');
    iov.iov_len = 2;
    CHECK_RET(recvmsg(c, &mh, 0), 2);
    CHECK(memcmp(buf, "ef", 2) == 0);
    CHECK_RET(readv(c, &iov, 1), 1);
    CHECK(buf[0] == 'g');
    CHECK_RET(write(s, "h", 1), 1);
    CHECK_RET(recvmmsg(c, &mm, 1, 0, NULL), 1); /* one message */
    CHECK(buf[0] == 'h' && mm.msg_len == 1);
    close(s);
    CHECK_RET(recv(c, buf, sizeof buf, 0), 0); /* the peer closed */
    CHECK_RET(read(c, buf, sizeof buf), 0);
    close(c);
    CHECK_ERR(recv(c, buf, sizeof buf, 0), EBADF);
    CHECK_ERR(recvmmsg(c, &mm, 1, 0, NULL), EBADF);
    CHECK_ERR(read(c, buf, sizeof buf), EBADF);
    int fd = open("/dev/null", O_RDONLY);
    CHECK_ERR(recv(fd, buf, sizeof buf, 0), ENOTSOCK);
    close(fd);
    close(l);
    /* A blocking pipe's read end waits the same way. */
    int p[2];
    CHECK_RET(pipe(p), 0);
    interrupt_after(&k, 20);
    CHECK_ERR(read(p[0], buf, sizeof buf), EINTR);
    CHECK_ERR(__read_chk(p[0], buf, sizeof buf, sizeof buf), EINTR);
    CHECK_ERR(readv(p[0], &iov, 1), EINTR);
    interrupt_done(&k);
    CHECK_RET(write(p[1], "pq", 2), 2);
    CHECK_RET(read(p[0], buf, 1), 1);
    CHECK_RET(__read_chk(p[0], buf + 1, 1, 1), 1);
    CHECK(memcmp(buf, "pq", 2) == 0);
    close(p[1]);
    CHECK_RET(read(p[0], buf, sizeof buf), 0);
    close(p[0]);
    /* fds made where the agent does not see (raw system calls): the first
     * read probes them, and every call returns as without the agent. */
    int rs[2], rp[2];
    CHECK(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rs) == 0);
    CHECK(syscall(SYS_pipe2, rp, O_CLOEXEC) == 0);
    interrupt_after(&k, 20);
    CHECK_ERR(recv(rs[0], buf, sizeof buf, 0), EINTR);
    CHECK_ERR(read(rp[0], buf, sizeof buf), EINTR);
    interrupt_done(&k);
    CHECK_ERR(recv(rp[0], buf, sizeof buf, 0), ENOTSOCK);
    CHECK_RET(send(rs[1], "xy", 2, 0), 2);
    CHECK_RET(readv(rs[0], &iov, 1), 2);
    CHECK_RET(write(rp[1], "z", 1), 1);
    CHECK_RET(read(rp[0], buf, sizeof buf), 1);
    CHECK(buf[0] == 'z');
    for (int i = 0; i < 2; i++) {
        close(rs[i]);
        close(rp[i]);
    }
    CHECK_ERR(read(rp[0], buf, sizeof buf), EBADF); /* a probe that fails */
    CHECK_ERR(recvfrom(rs[0], buf, sizeof buf, 0, NULL, NULL), EBADF);
    CHECK_ERR(accept(rs[0], NULL, NULL), EBADF);
}

/* Sends into a blocking socket, sendfile and sendmmsg among them (timed; a
 * park under the agent when one waits): the count, EINTR and EAGAIN (SO_SNDTIMEO, MSG_DONTWAIT) while its
 * buffer is full, EPIPE, EFAULT, and EBADF and ENOTSOCK passed through. */
static void test_socket_sends(void)
{
    int sv[2], small = 4096;
    CHECK_RET(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
    char buf[1024] = {0};
    struct iovec iov = {buf, 3};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    CHECK_RET(send(sv[0], "ab", 2, 0), 2);
    CHECK_RET(sendto(sv[0], "cd", 2, 0, NULL, 0), 2);
    CHECK_RET(sendmsg(sv[0], &mh, 0), 3);
    CHECK_RET(write(sv[0], "e", 1), 1);
    CHECK_RET(writev(sv[0], &iov, 1), 3);
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC); /* sendfile reads a regular file */
    CHECK(src >= 0);
    off_t at = 0;
    CHECK_RET(sendfile(sv[0], src, &at, 2), 2);
    CHECK(at == 2);
    CHECK_RET(sendfile64(sv[0], src, NULL, 1), 1);
    CHECK_ERR(sendfile(sv[0], -1, NULL, 1), EBADF);
    struct mmsghdr mm[2] = {{.msg_hdr = mh}, {.msg_hdr = mh}};
    CHECK_RET(sendmmsg(sv[0], mm, 2, 0), 2); /* messages sent */
    CHECK(mm[0].msg_len == 3 && mm[1].msg_len == 3);
    CHECK_ERR(send(sv[0], bad_ptr, 4, 0), EFAULT);
    while (send(sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0) /* full */
        ;
    CHECK_ERR(send(sv[0], buf, 1, MSG_DONTWAIT), EAGAIN);
    struct kicker k;
    interrupt_after(&k, 20);
    CHECK_ERR(send(sv[0], buf, 1, 0), EINTR);
    CHECK_ERR(sendto(sv[0], buf, 1, 0, NULL, 0), EINTR);
    CHECK_ERR(sendmsg(sv[0], &mh, 0), EINTR);
    CHECK_ERR(write(sv[0], buf, 1), EINTR);
    CHECK_ERR(writev(sv[0], &iov, 1), EINTR);
    CHECK_ERR(sendfile(sv[0], src, NULL, 1), EINTR);
    CHECK_ERR(sendfile64(sv[0], src, NULL, 1), EINTR);
    CHECK_ERR(sendmmsg(sv[0], mm, 1, 0), EINTR);
    interrupt_done(&k);
    CHECK_ERR(sendmmsg(sv[0], mm, 1, MSG_DONTWAIT), EAGAIN);
    struct timeval tv = {0, 20000};
    CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0);
    CHECK_ERR(send(sv[0], buf, 1, 0), EAGAIN);
    CHECK_ERR(write(sv[0], buf, 1), EAGAIN);
    CHECK_ERR(sendfile(sv[0], src, NULL, 1), EAGAIN);
    CHECK_ERR(sendmmsg(sv[0], mm, 1, 0), EAGAIN);
    close(sv[1]);
    CHECK_ERR(send(sv[0], buf, 1, 0), EPIPE); /* SIGPIPE is ignored */
    CHECK_ERR(write(sv[0], buf, 1), EPIPE);
    CHECK_ERR(sendfile64(sv[0], src, NULL, 1), EPIPE);
    CHECK_ERR(sendmmsg(sv[0], mm, 1, 0), EPIPE);
    close(sv[0]);
    close(src);
    CHECK_ERR(send(sv[0], buf, 1, 0), EBADF);
    CHECK_ERR(sendfile(sv[0], src, NULL, 1), EBADF);
    int fd = open("/dev/null", O_WRONLY);
    CHECK_ERR(send(fd, buf, 1, 0), ENOTSOCK);
    close(fd);
}

/* A pipe whose read end is in an epoll set: its writes are wakes. */
static void test_pipe_epoll(void)
{
    int p[2], q[2];
    CHECK_RET(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    CHECK_RET(pipe(q), 0);
    CHECK_ERR(pipe2(q, -1), EINVAL);
    int ep = epoll_create(1);
    CHECK(ep >= 0);
    CHECK_ERR(epoll_create(0), EINVAL);
    struct epoll_event add = {.events = EPOLLIN, .data.u64 = 7}, ev[2];
    CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &add), 0);
    CHECK_RET(write(p[1], "abc", 3), 3);
    CHECK_RET(epoll_wait(ep, ev, 2, 1000), 1);
    CHECK(ev[0].data.u64 == 7);
    char buf[8];
    CHECK_RET(read(p[0], buf, sizeof buf), 3);
    CHECK_ERR(read(p[0], buf, sizeof buf), EAGAIN);
    CHECK_RET(write(p[1], buf, 0), 0);
    struct iovec two[2] = {{"gh", 2}, {"i", 1}}; /* writev wakes as write does */
    CHECK_RET(writev(p[1], two, 2), 3);
    CHECK_RET(epoll_wait(ep, ev, 2, 1000), 1);
    CHECK_RET(read(p[0], buf, sizeof buf), 3);
    CHECK(memcmp(buf, "ghi", 3) == 0);
    /* A copy of the write end wakes the same reader. */
    int w2 = dup(p[1]);
    CHECK_RET(write(w2, "d", 1), 1);
    CHECK_RET(epoll_wait(ep, ev, 2, 1000), 1);
    CHECK_RET(read(p[0], buf, sizeof buf), 1);
    /* Made directly under the agent (O_NONBLOCK): glibc's errors all the same. */
    CHECK_ERR(write(p[1], bad_ptr, 1), EFAULT);
    CHECK_ERR(writev(p[1], bad_ptr, 1), EFAULT);
    static const char fill[4096];
    while (write(p[1], fill, sizeof fill) > 0)
        ;
    CHECK_ERR(write(p[1], "f", 1), EAGAIN);
    CHECK_ERR(writev(p[1], two, 2), EAGAIN);
    /* ioctl passes through: FIONREAD counts the bytes queued; FIONBIO's errors are the kernel's. */
    int queued = 0, on = 1;
    CHECK_RET(ioctl(p[0], FIONREAD, &queued), 0);
    CHECK(queued > 0);
    CHECK_ERR(ioctl(-1, FIONBIO, &on), EBADF);
    CHECK_ERR(ioctl(p[1], FIONBIO, bad_ptr), EFAULT);
    CHECK_RET(ioctl(p[1], FIONBIO, &on), 0);
    close(p[0]); /* now nobody reads: EPIPE (SIGPIPE ignored) */
    CHECK_ERR(write(p[1], "e", 1), EPIPE);
    CHECK_ERR(write(w2, "e", 1), EPIPE);
    CHECK_ERR(writev(p[1], two, 2), EPIPE);
    CHECK_RET(write(q[1], "q", 1), 1); /* an unwatched pipe */
    CHECK_RET(read(q[0], buf, 1), 1);
    close(w2);
    close(p[1]);
    close(q[0]);
    close(q[1]);
    close(ep);
}

static void test_locks(void)
{
    pthread_mutexattr_t a;
    pthread_mutex_t rec, chk, plain = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rec, &a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&chk, &a);
    pthread_mutexattr_destroy(&a);

    CHECK_RET(pthread_mutex_lock(&rec), 0);
    CHECK_RET(pthread_mutex_lock(&rec), 0); /* recursive: taken twice */
    CHECK_RET(pthread_mutex_trylock(&rec), 0);
    CHECK_RET(pthread_mutex_unlock(&rec), 0);
    CHECK_RET(pthread_mutex_unlock(&rec), 0);
    CHECK_RET(pthread_mutex_unlock(&rec), 0);
    CHECK_RET(pthread_mutex_unlock(&rec), EPERM);

    CHECK_RET(pthread_mutex_lock(&chk), 0);
    CHECK_RET(pthread_mutex_lock(&chk), EDEADLK);
    CHECK_RET(pthread_mutex_trylock(&chk), EBUSY);
    CHECK_RET(pthread_mutex_unlock(&chk), 0);
    CHECK_RET(pthread_mutex_unlock(&chk), EPERM);

    CHECK_RET(pthread_mutex_lock(&plain), 0);
    CHECK_RET(pthread_mutex_trylock(&plain), EBUSY);
    CHECK_RET(pthread_mutex_unlock(&plain), 0);

    /* A robust mutex whose owner died: EOWNERDEAD, and the caller owns it. */
    pthread_mutex_t rob;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&rob, &a);
    pthread_mutexattr_destroy(&a);
    pthread_t th;
    pthread_create(&th, NULL, lock_and_exit, &rob);
    pthread_join(th, NULL);
    CHECK_RET(pthread_mutex_lock(&rob), EOWNERDEAD);
    CHECK_RET(pthread_mutex_consistent(&rob), 0);
    CHECK_RET(pthread_mutex_unlock(&rob), 0);
    CHECK_RET(pthread_mutex_lock(&rob), 0);
    CHECK_RET(pthread_mutex_unlock(&rob), 0);

    /* Contended: another thread holds it for 20 ms. */
    struct holder h = {.m = &plain};
    pthread_create(&th, NULL, hold_for_20ms, &h);
    while (!atomic_load(&h.held))
        nanosleep(&(struct timespec){0, 100000}, NULL);
    CHECK_RET(pthread_mutex_lock(&plain), 0);
    CHECK_RET(pthread_mutex_unlock(&plain), 0);
    pthread_join(th, NULL);

    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    CHECK_RET(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RET(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RET(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RET(pthread_rwlock_unlock(&rw), 0);
    CHECK_RET(pthread_rwlock_unlock(&rw), 0);
    CHECK_RET(pthread_rwlock_wrlock(&rw), 0);
    CHECK_RET(pthread_rwlock_wrlock(&rw), EDEADLK);
    CHECK_RET(pthread_rwlock_rdlock(&rw), EDEADLK);
    CHECK_RET(pthread_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_RET(pthread_rwlock_unlock(&rw), 0);
    pthread_rwlock_destroy(&rw);
    pthread_mutex_destroy(&rec);
    pthread_mutex_destroy(&chk);
}

/* ---- thread names and creation ---------------------------------------- */

static void *child(void *arg)
{
    char name[16] = {0};
    prctl(PR_SET_NAME, "hs-child");
    prctl(PR_GET_NAME, name);
    return strcmp(name, "hs-child") == 0 ? arg : NULL;
}

static void *exiter(void *arg)
{
    pthread_exit(arg);
}

static void *idler(void *arg)
{
    sem_wait(arg);
    return NULL;
}

static void test_threads(void)
{
    char name[32];
    CHECK_RET(prctl(PR_SET_NAME, "hs-main"), 0);
    memset(name, 0, sizeof name);
    CHECK_RET(prctl(PR_GET_NAME, name), 0);
    CHECK(strcmp(name, "hs-main") == 0);
    CHECK_RET(prctl(PR_SET_NAME, "a-name-longer-than-fifteen"), 0);
    memset(name, 0, sizeof name);
    CHECK_RET(prctl(PR_GET_NAME, name), 0);
    CHECK(strcmp(name, "a-name-longer-t") == 0);
    CHECK_ERR(prctl(-12345, 0, 0, 0, 0), EINVAL);
    CHECK_RET(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
    CHECK_RET(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
    CHECK_ERR(prctl(PR_SET_NAME, bad_ptr), EFAULT);

    CHECK_RET(pthread_setname_np(pthread_self(), "hs-self"), 0);
    memset(name, 0, sizeof name);
    CHECK_RET(pthread_getname_np(pthread_self(), name, sizeof name), 0);
    CHECK(strcmp(name, "hs-self") == 0);
    CHECK_RET(pthread_setname_np(pthread_self(), "sixteen-chars-xx"), ERANGE);

    sem_t s;
    sem_init(&s, 0, 0);
    pthread_t th;
    CHECK_RET(pthread_create(&th, NULL, idler, &s), 0);
    CHECK_RET(pthread_setname_np(th, "hs-other"), 0);
    memset(name, 0, sizeof name);
    CHECK_RET(pthread_getname_np(th, name, sizeof name), 0);
    CHECK(strcmp(name, "hs-other") == 0);
    /* Joins: a deadline that passes, one already past, a self-join. (glibc
     * 2.36 spins on a deadline whose tv_nsec is out of range: not made.) */
    struct timespec soon = abs_in(CLOCK_REALTIME, 20), past = abs_in(CLOCK_MONOTONIC, -1000);
    CHECK_RET(pthread_timedjoin_np(th, NULL, &soon), ETIMEDOUT);
    CHECK_RET(pthread_clockjoin_np(th, NULL, CLOCK_MONOTONIC, &past), ETIMEDOUT);
    CHECK_RET(pthread_join(pthread_self(), NULL), EDEADLK);
    sem_post(&s);
    soon = abs_in(CLOCK_REALTIME, 5000);
    CHECK_RET(pthread_timedjoin_np(th, NULL, &soon), 0);
    sem_destroy(&s);

    void *res = NULL;
    int tag = 7;
    CHECK_RET(pthread_create(&th, NULL, child, &tag), 0);
    CHECK(pthread_join(th, &res) == 0 && res == &tag);
    CHECK_RET(pthread_create(&th, NULL, exiter, &tag), 0);
    CHECK(pthread_join(th, &res) == 0 && res == &tag);

    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    CHECK_RET(pthread_create(&th, &a, child, &tag), 0);
    pthread_attr_destroy(&a);
    nanosleep(&(struct timespec){0, 10000000}, NULL);
}

/* ---- waits for a signal ------------------------------------------------ */

static void test_signal_waits(void)
{
    int rt = SIGRTMIN + 3, sig = 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, rt);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    struct timespec zero = {0, 0}, bad_ns = {0, 2000000000}, ms20 = {0, 20000000}, s5 = {5, 0};
    CHECK_ERR(sigtimedwait(&set, NULL, &zero), EAGAIN);
    CHECK_ERR(sigtimedwait(&set, NULL, &bad_ns), EINVAL);
    CHECK_ERR(sigtimedwait(&set, NULL, &ms20), EAGAIN);
    CHECK_ERR(sigtimedwait(&set, NULL, (struct timespec *)bad_ptr), EFAULT);
    pthread_kill(pthread_self(), rt);
    CHECK_RET(sigtimedwait(&set, NULL, &s5), rt);
    pthread_kill(pthread_self(), rt);
    CHECK(sigwait(&set, &sig) == 0 && sig == rt);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    pthread_kill(pthread_self(), rt);
    CHECK(sigwaitinfo(&set, &info) == rt && info.si_signo == rt);

    /* EINTR: SIGUSR1's handler runs inside the wait. */
    struct kicker k;
    interrupt_after(&k, 20);
    CHECK_ERR(sigtimedwait(&set, NULL, &s5), EINTR);
    interrupt_done(&k);
    CHECK(got_signal == SIGUSR1);
    sigset_t open;
    pthread_sigmask(SIG_BLOCK, NULL, &open);
    sigdelset(&open, SIGUSR1);
    interrupt_after(&k, 20);
    CHECK_ERR(sigsuspend(&open), EINTR);
    interrupt_done(&k);
    CHECK(got_signal == SIGUSR1);
    interrupt_after(&k, 20);
    CHECK_ERR(pause(), EINTR);
    interrupt_done(&k);
    CHECK(got_signal == SIGUSR1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- waits for a child ------------------------------------------------- */

/* A child that waits for its parent to close the pipe, then exits 7. */
static pid_t child_until_closed(int *wr)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        while (read(p[0], &c, 1) > 0)
            ;
        _exit(7);
    }
    close(p[0]);
    *wr = p[1];
    return pid;
}

static void test_child_waits(void)
{
    int st = 0, wr;
    CHECK_ERR(waitpid(-1, &st, WNOHANG), ECHILD);
    CHECK_ERR(wait(&st), ECHILD);
    CHECK_ERR(waitpid(-1, &st, 0x100000), EINVAL); /* no such option */
    pid_t pid = child_until_closed(&wr);
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    CHECK_RET(waitpid(pid, &st, WNOHANG), 0);
    struct kicker k;
    interrupt_after(&k, 20);
    CHECK_ERR(waitpid(pid, &st, 0), EINTR);
    interrupt_done(&k);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    CHECK_RET(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG), 0);
    CHECK(info.si_pid == 0);
    close(wr);
    CHECK_RET(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    CHECK(info.si_pid == pid && info.si_status == 7);
    struct rusage ru;
    CHECK_RET(wait4(pid, &st, 0, &ru), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    pid = child_until_closed(&wr);
    close(wr);
    CHECK_RET(wait(&st), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

/* ---- cancellation (last: the first pthread_cancel changes the agent's
 * eventfd write for good, direct.h) --------------------------------------- */

struct cancel_fixture {
    int efd;
    _Atomic int started, go, survived;
};

/* Spins with no cancellation point until the cancel is pending, then
 * writes: glibc's write acts on the cancel before its system call. The
 * start routine runs although the cancel may come before its first line:
 * a new thread has no cancellation point until its own code makes one. */
static void *write_when_told(void *p)
{
    struct cancel_fixture *f = p;
    atomic_store(&f->started, 1);
    while (!atomic_load(&f->go))
        ;
    uint64_t one = 1;
    (void)!write(f->efd, &one, 8);
    atomic_store(&f->survived, 1);
    return NULL;
}

/* The same, but the first call after the cancel is a 20 ms futex wait
 * through syscall(), which is not a cancellation point: the thread must
 * survive it and be cancelled at the write after it. */
static void *futex_wait_when_told(void *p)
{
    struct cancel_fixture *f = p;
    atomic_store(&f->started, 1);
    while (!atomic_load(&f->go))
        ;
    static _Atomic int word;
    struct timespec ms20 = {0, 20000000};
    sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ms20, NULL, 0);
    atomic_store(&f->survived, 1);
    uint64_t one = 1;
    (void)!write(f->efd, &one, 8);
    return NULL;
}

/* fork is no cancellation point: with a cancel pending, the child runs. */
static _Atomic pid_t forked;
static void *fork_when_told(void *p)
{
    struct cancel_fixture *f = p;
    atomic_store(&f->started, 1);
    while (!atomic_load(&f->go))
        ;
    pid_t pid = fork();
    if (pid == 0)
        _exit(42);
    atomic_store(&forked, pid);
    atomic_store(&f->survived, 1);
    uint64_t one = 1;
    (void)!write(f->efd, &one, 8);
    return NULL;
}

/* exit() is no cancellation point: with a cancel pending, the process
 * exits with the thread's status (run in a child process). */
static void *exit_when_told(void *p)
{
    struct cancel_fixture *f = p;
    atomic_store(&f->started, 1);
    while (!atomic_load(&f->go))
        ;
    exit(3);
}

/* Runs fn in a thread cancelled before it is told to go: 1 when the thread
 * ended cancelled, having started. */
static int run_cancelled(void *(*fn)(void *), struct cancel_fixture *f)
{
    pthread_t th;
    atomic_store(&f->started, 0);
    atomic_store(&f->go, 0);
    atomic_store(&f->survived, 0);
    if (pthread_create(&th, NULL, fn, f) != 0 || pthread_cancel(th) != 0)
        return 0;
    atomic_store(&f->go, 1);
    void *res = NULL;
    return pthread_join(th, &res) == 0 && res == PTHREAD_CANCELED && atomic_load(&f->started);
}

static void test_cancel(void)
{
    struct cancel_fixture f = {.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
    CHECK(f.efd >= 0);
    uint64_t v = 2, out = 0;
    CHECK_RET(write(f.efd, &v, 8), 8); /* before any cancel */
    CHECK_RET(read(f.efd, &out, 8), 8);
    CHECK(out == 2);
    CHECK(run_cancelled(write_when_told, &f));
    CHECK(!atomic_load(&f.survived));
    CHECK_ERR(read(f.efd, &out, 8), EAGAIN); /* the cancelled write wrote nothing */
    CHECK(run_cancelled(futex_wait_when_told, &f));
    CHECK(atomic_load(&f.survived));
    CHECK_ERR(read(f.efd, &out, 8), EAGAIN);
    CHECK(run_cancelled(fork_when_told, &f));
    int status = 0;
    CHECK(atomic_load(&forked) > 0 && waitpid(atomic_load(&forked), &status, 0) == atomic_load(&forked));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42);
    pid_t pid = fork();
    if (pid == 0) {
        run_cancelled(exit_when_told, &f); /* returns only if the thread was cancelled in exit */
        _exit(0);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    v = UINT64_MAX;
    CHECK_ERR(write(f.efd, &v, 8), EINVAL); /* after a cancel: glibc's write */
    v = 3;
    CHECK_RET(write(f.efd, &v, 8), 8);
    CHECK_RET(read(f.efd, &out, 8), 8);
    CHECK(out == 3);
    close(f.efd);
}

static void on_other(int sig) { (void)sig; }

/* sigset(), sigignore(), siginterrupt(): what sigaction() and the mask say
 * after each, on a signal the agent holds (SIGUSR2, its dump signal) and
 * on one it does not (SIGALRM); and that siginterrupt() decides signal()'s
 * SA_RESTART. glibc's versions call its internal sigaction, which an
 * interposer of sigaction does not see. (Deprecated: still in glibc, and
 * in programs.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void test_signal_setters(void)
{
    const int sigs[] = {SIGUSR2, SIGALRM};
    for (int i = 0; i < 2; i++) {
        int sig = sigs[i];
        struct sigaction sa;
        sigset_t cur;
        CHECK(sigset(sig, on_other) == SIG_DFL);
        CHECK(sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == on_other);
        CHECK(sigset(sig, SIG_HOLD) == on_other);
        CHECK(sigprocmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, sig) == 1);
        CHECK(sigset(sig, on_signal) == SIG_HOLD);
        CHECK(sigprocmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, sig) == 0);
        got_signal = 0;
        raise(sig);
        CHECK(got_signal == sig);
        CHECK_RET(sigignore(sig), 0);
        CHECK(sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN);
        CHECK_RET(siginterrupt(sig, 1), 0);
        CHECK(signal(sig, on_other) == SIG_IGN);
        CHECK(sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == on_other && !(sa.sa_flags & SA_RESTART));
        CHECK_RET(siginterrupt(sig, 0), 0);
        CHECK(sigaction(sig, NULL, &sa) == 0 && (sa.sa_flags & SA_RESTART));
        CHECK(signal(sig, SIG_DFL) == on_other);
        CHECK(sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL && (sa.sa_flags & SA_RESTART));
    }
    CHECK_ERR(sigignore(0), EINVAL);
    CHECK_ERR(siginterrupt(NSIG, 1), EINVAL);
    CHECK(sigset(0, on_other) == SIG_ERR && errno == EINVAL);
}
#pragma GCC diagnostic pop

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls see EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    test_epoll();
    test_poll();
    test_sleep();
    test_cond();
    test_sem();
    test_syscall();
    test_unmapped_timeouts();
    test_eventfd();
    test_files();
    test_sockets();
    test_socket_waits();
    test_socket_sends();
    test_pipe_epoll();
    test_locks();
    test_threads();
    test_signal_waits();
    test_child_waits();
    test_cancel();
    test_signal_setters();

    printf("hooks_semantics: %d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
