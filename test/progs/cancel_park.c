/* cancel_park.c - pthread_cancel of a thread blocked in epoll_wait,
 * epoll_pwait, poll, a recv on a blocking socket or an eventfd_read of a
 * blocking eventfd (parks the agent makes through glibc), or a write to a full pipe whose read end is in an
 * epoll set, behaves as with glibc alone: cancelled in the wait when
 * cancellation is enabled (deferred or asynchronous); with it disabled,
 * the wait goes on and returns what it would have (the event, or 0 at its
 * timeout; the whole write once the pipe is read; never EINTR); a thread
 * that was not the target is not
 * disturbed, and a later cancel still reaches a wait that began before
 * the first. A thread whose signal handler jumped out of its wait
 * (siglongjmp) is no longer in it: a later cancel returns at once. A
 * cancel pending at a regular file's read or write acts there,
 * and a read or write blocked on a FIFO opened by path is cancelled in it.
 * Run plain and under the agent (test_hooks_semantics.sh).
 *
 * Under the agent such a wait is made with the syscall instruction
 * (agent/direct.h), which glibc's pthread_cancel does not interrupt; the
 * agent's pthread_cancel must get the thread out. Every case runs in a
 * child process of its own, so that its cancel is the process's first:
 * the one that finds threads in direct waits. Prints
 * "cancel_park: N checks, M failed"; exits 1 if any failed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"

enum mode { DEFERRED, ASYNC, DISABLED };
/* The pipe is made blocking by fcntl through its write end, or a copy of
 * it (PIPE_WRITE_DUP), or by ioctl FIONBIO (PIPE_WRITE_IOCTL). */
enum wait_call { EPOLL_WAIT, EPOLL_PWAIT, POLL, SOCKET_RECV, EVENTFD_READ, PIPE_WRITE, PIPE_WRITE_DUP, PIPE_WRITE_IOCTL };

#define PIPE_WRITE_BYTES 4096 /* PIPE_BUF: written whole or not at all */

struct waiter {
    int ep, efd;
    int pipe_rd, pipe_wr; /* PIPE_WRITE: full, the read end in ep */
    int sock[2];          /* SOCKET_RECV: a blocking socketpair, sock[0] read */
    int bfd;              /* EVENTFD_READ: a blocking eventfd */
    enum wait_call call; /* epoll_pwait's without a mask */
    enum mode mode;
    int timeout_ms;  /* of the wait under test */
    _Atomic int in_wait;
    _Atomic long ret; /* the wait's result, or -100 while it runs */
    _Atomic int err;
    _Atomic int after_enable; /* reached pthread_testcancel after the wait */
};

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void sleep_ms(int ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

static void *waiter(void *p)
{
    struct waiter *w = p;
    struct epoll_event ev;
    if (w->mode == DISABLED)
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    epoll_wait(w->ep, &ev, 1, 1); /* the thread's first park: it has events before the wait */
    if (w->mode == ASYNC)
        pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    atomic_store(&w->in_wait, 1);
    errno = 0;
    struct pollfd pf = {.fd = w->efd, .events = POLLIN};
    static const char block[PIPE_WRITE_BYTES];
    char b;
    eventfd_t v;
    long r = w->call == EPOLL_WAIT    ? epoll_wait(w->ep, &ev, 1, w->timeout_ms)
             : w->call == EPOLL_PWAIT ? epoll_pwait(w->ep, &ev, 1, w->timeout_ms, NULL)
             : w->call == POLL        ? poll(&pf, 1, w->timeout_ms)
             : w->call == SOCKET_RECV ? recv(w->sock[0], &b, 1, 0)
             : w->call == EVENTFD_READ ? eventfd_read(w->bfd, &v)
                                      : write(w->pipe_wr, block, sizeof block);
    atomic_store(&w->err, errno);
    atomic_store(&w->ret, r);
    if (w->mode == ASYNC)
        pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    atomic_store(&w->after_enable, 1);
    pthread_testcancel();
    return NULL;
}

static void waiter_init(struct waiter *w, enum wait_call call, enum mode mode, int timeout_ms)
{
    *w = (struct waiter){.call = call, .mode = mode, .timeout_ms = timeout_ms, .ret = -100};
    w->ep = epoll_create1(EPOLL_CLOEXEC);
    w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event add = {.events = EPOLLIN, .data.u64 = 7};
    CHECK(w->ep >= 0 && w->efd >= 0 && epoll_ctl(w->ep, EPOLL_CTL_ADD, w->efd, &add) == 0);
    if (call == SOCKET_RECV)
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, w->sock) == 0);
    if (call == EVENTFD_READ)
        CHECK((w->bfd = eventfd(0, EFD_CLOEXEC)) >= 0);
    if (call < PIPE_WRITE)
        return;
    /* A full blocking pipe. It is made O_NONBLOCK, filled, then made
     * blocking again: under the agent a write to a non-blocking watched
     * pipe is made directly, and this one must no longer be. A copy of the
     * write end shares its open file description, and so its flag. */
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0 && epoll_ctl(w->ep, EPOLL_CTL_ADD, p[0], &add) == 0);
    w->pipe_rd = p[0], w->pipe_wr = p[1];
    static const char fill[65536];
    while (write(p[1], fill, sizeof fill) > 0)
        ;
    CHECK(errno == EAGAIN);
    int copy = call == PIPE_WRITE_DUP ? dup(p[1]) : p[1], off = 0;
    CHECK(call == PIPE_WRITE_IOCTL ? ioctl(p[1], FIONBIO, &off) == 0 : fcntl(copy, F_SETFL, 0) == 0);
    if (copy != p[1])
        close(copy);
}

/* What ends w's wait: a count on an eventfd, a byte on the socket, or
 * the full pipe read. */
static void make_ready(struct waiter *w)
{
    if (w->call == SOCKET_RECV) {
        CHECK_RET(write(w->sock[1], "x", 1), 1);
    } else if (w->call == EVENTFD_READ) {
        CHECK_RET(eventfd_write(w->bfd, 1), 0);
    } else if (w->call >= PIPE_WRITE) {
        static char sink[65536];
        CHECK(read(w->pipe_rd, sink, sizeof sink) >= PIPE_WRITE_BYTES);
    } else {
        uint64_t one = 1;
        CHECK_RET(write(w->efd, &one, 8), 8);
    }
}

/* The result of w's wait once make_ready ended it. */
static long ready_result(const struct waiter *w)
{
    return w->call >= PIPE_WRITE ? PIPE_WRITE_BYTES : w->call == EVENTFD_READ ? 0 : 1;
}

/* Starts w's thread and returns once it has been in its wait for 50 ms. */
static pthread_t start_waiting(struct waiter *w)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, waiter, w) == 0);
    while (!atomic_load(&w->in_wait))
        sleep_ms(1);
    sleep_ms(50);
    return th;
}

/* pthread_join within 3 s; its exit value in *res. */
static int join_soon(pthread_t th, void **res)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 3;
    return pthread_timedjoin_np(th, res, &dl);
}

/* Cancellation enabled: the thread ends cancelled inside its wait. */
static void cancelled_in_wait(enum wait_call call, enum mode mode)
{
    struct waiter w;
    waiter_init(&w, call, mode, -1);
    pthread_t th = start_waiting(&w);
    CHECK(pthread_cancel(th) == 0);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0);
    CHECK(res == PTHREAD_CANCELED);
    CHECK(atomic_load(&w.ret) == -100); /* the wait never returned */
}

/* Cancellation disabled: the wait returns the event written 100 ms after
 * the cancel, and the thread is cancelled once it enables cancellation. */
static void disabled_gets_event(enum wait_call call)
{
    struct waiter w;
    waiter_init(&w, call, DISABLED, -1);
    pthread_t th = start_waiting(&w);
    CHECK(pthread_cancel(th) == 0);
    sleep_ms(100);
    CHECK(atomic_load(&w.ret) == -100); /* still waiting */
    make_ready(&w);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0);
    CHECK(atomic_load(&w.ret) == ready_result(&w) && atomic_load(&w.err) == 0);
    CHECK(atomic_load(&w.after_enable) && res == PTHREAD_CANCELED);
}

/* Cancellation disabled, nothing ready: the wait times out, not sooner. */
static void disabled_times_out(enum wait_call call)
{
    struct waiter w;
    waiter_init(&w, call, DISABLED, 400);
    uint64_t t0 = now_ms();
    pthread_t th = start_waiting(&w);
    CHECK(pthread_cancel(th) == 0);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0);
    uint64_t took = now_ms() - t0;
    CHECK(atomic_load(&w.ret) == 0 && atomic_load(&w.err) == 0);
    CHECK(took >= 400 && took < 2000);
    CHECK(res == PTHREAD_CANCELED);
}

/* Another thread's cancel leaves a waiter in its wait: it returns the
 * event written after the cancel, not EINTR. */
static void *spin_until_cancelled(void *p)
{
    (void)p;
    for (;;)
        pthread_testcancel();
    return NULL;
}

static void bystander_undisturbed(void)
{
    struct waiter w;
    waiter_init(&w, EPOLL_WAIT, DEFERRED, 3000);
    pthread_t th = start_waiting(&w), other;
    CHECK(pthread_create(&other, NULL, spin_until_cancelled, NULL) == 0);
    CHECK(pthread_cancel(other) == 0);
    void *res = NULL;
    CHECK(join_soon(other, &res) == 0 && res == PTHREAD_CANCELED);
    sleep_ms(50);
    CHECK(atomic_load(&w.ret) == -100);
    uint64_t one = 1;
    CHECK_RET(write(w.efd, &one, 8), 8);
    CHECK(join_soon(th, &res) == 0);
    CHECK(atomic_load(&w.ret) == 1 && atomic_load(&w.err) == 0 && res == NULL);
}

/* A wait that began before the process's first cancel (of another thread)
 * is still got out by a later cancel of its own thread. */
static void later_cancel(void)
{
    struct waiter w;
    waiter_init(&w, EPOLL_WAIT, DEFERRED, -1);
    pthread_t th = start_waiting(&w), other;
    CHECK(pthread_create(&other, NULL, spin_until_cancelled, NULL) == 0);
    CHECK(pthread_cancel(other) == 0);
    void *res = NULL;
    CHECK(join_soon(other, &res) == 0 && res == PTHREAD_CANCELED);
    CHECK(pthread_cancel(th) == 0);
    CHECK(join_soon(th, &res) == 0);
    CHECK(res == PTHREAD_CANCELED && atomic_load(&w.ret) == -100);
}

/* A cancel pending when a thread reads or writes a regular file acts at
 * the call, before anything is read or written: glibc's read, pread, write
 * and pwrite are cancellation points, and from the first cancel on the
 * agent makes them through glibc again. The file's offset and size do not
 * move. The file is opened with open(), so the agent times its I/O. */
enum file_call { F_READ, F_PREAD, F_WRITE, F_PWRITE };
struct filer {
    int fd;
    enum file_call call;
    _Atomic int cancel_sent, returned;
};

static void *file_io(void *p)
{
    struct filer *f = p;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    while (!atomic_load(&f->cancel_sent))
        sleep_ms(1);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* no cancellation point */
    char buf[16] = "0123456789abcdef";
    switch (f->call) {
    case F_READ: (void)!read(f->fd, buf, sizeof buf); break;
    case F_PREAD: (void)!pread(f->fd, buf, sizeof buf, 0); break;
    case F_WRITE: (void)!write(f->fd, buf, sizeof buf); break;
    case F_PWRITE: (void)!pwrite(f->fd, buf, sizeof buf, 100); break;
    }
    atomic_store(&f->returned, 1);
    return NULL;
}

static void file_cancelled_at(enum file_call call)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/cancel_park.%d", (int)getpid());
    struct filer f = {.fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600), .call = call};
    unlink(path);
    CHECK(f.fd >= 0 && write(f.fd, "0123456789", 10) == 10 && lseek(f.fd, 0, SEEK_SET) == 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, file_io, &f) == 0);
    CHECK(pthread_cancel(th) == 0);
    atomic_store(&f.cancel_sent, 1);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0 && res == PTHREAD_CANCELED);
    CHECK(!atomic_load(&f.returned));
    struct stat st;
    CHECK(fstat(f.fd, &st) == 0 && st.st_size == 10 && lseek(f.fd, 0, SEEK_CUR) == 0);
    close(f.fd);
}

/* A FIFO opened by path: the agent's fd table calls it a file (open() does
 * not tell), but its read and write wait for another thread, so they stay
 * cancellation points: a thread blocked in one is cancelled there by the
 * process's first cancel. For a write, the FIFO is filled first. */
struct fifo_waiter {
    int fd, write;
    _Atomic int in_call, returned;
};

static void *fifo_io(void *p)
{
    struct fifo_waiter *f = p;
    char buf[PIPE_WRITE_BYTES] = {0};
    atomic_store(&f->in_call, 1);
    if (f->write)
        (void)!write(f->fd, buf, sizeof buf);
    else
        (void)!read(f->fd, buf, 1);
    atomic_store(&f->returned, 1);
    return NULL;
}

static void fifo_cancelled_in(int write_side)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/cancel_park.fifo.%d", (int)getpid());
    CHECK(mkfifo(path, 0600) == 0);
    struct fifo_waiter f = {.fd = open(path, O_RDWR), .write = write_side};
    int other = open(path, O_WRONLY | O_NONBLOCK);
    unlink(path);
    CHECK(f.fd >= 0 && other >= 0);
    char buf[PIPE_WRITE_BYTES] = {0};
    while (write_side && write(other, buf, sizeof buf) > 0)
        ;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, fifo_io, &f) == 0);
    while (!atomic_load(&f.in_call))
        sleep_ms(1);
    sleep_ms(50);
    CHECK(pthread_cancel(th) == 0);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0 && res == PTHREAD_CANCELED);
    CHECK(!atomic_load(&f.returned));
}

/* jumped_out: a thread in an epoll wait, whose SIGUSR1 handler jumps out
 * of it (stage 1 -> 2), then spins until told (stage 3). */
static sigjmp_buf jump_env;
static _Atomic int jump_stage;

static void jump_out(int sig)
{
    (void)sig;
    siglongjmp(jump_env, 1);
}

static void *jumper(void *p)
{
    int ep = *(int *)p;
    struct epoll_event ev;
    epoll_wait(ep, &ev, 1, 1); /* the thread's first park */
    if (!sigsetjmp(jump_env, 1)) {
        atomic_store(&jump_stage, 1);
        epoll_wait(ep, &ev, 1, -1); /* nothing comes: only the handler ends it */
        atomic_store(&jump_stage, -1);
        return NULL;
    }
    /* The jump skipped the end of glibc's cancellation point (its wrapper
     * turns asynchronous cancellation on for the system call): deferred
     * again, as before the wait. It runs on, in no cancellation point,
     * until told. */
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    atomic_store(&jump_stage, 2);
    while (atomic_load(&jump_stage) != 3)
        ;
    pthread_testcancel();
    return NULL;
}

/* pthread_cancel of the thread after it jumped out of its wait returns
 * at once (with glibc alone it never waits): nothing takes it for a thread
 * still in a wait the agent made. */
static void jumped_out(void)
{
    struct sigaction sa = {.sa_handler = jump_out};
    sigemptyset(&sa.sa_mask);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    pthread_t th;
    CHECK(ep >= 0 && sigaction(SIGUSR1, &sa, NULL) == 0 && pthread_create(&th, NULL, jumper, &ep) == 0);
    while (atomic_load(&jump_stage) == 0)
        sleep_ms(1);
    sleep_ms(50);
    CHECK(pthread_kill(th, SIGUSR1) == 0);
    while (atomic_load(&jump_stage) == 1)
        sleep_ms(1);
    CHECK(atomic_load(&jump_stage) == 2);
    uint64_t t0 = now_ms();
    CHECK(pthread_cancel(th) == 0);
    uint64_t took = now_ms() - t0;
    CHECK(took < 50);
    atomic_store(&jump_stage, 3);
    void *res = NULL;
    CHECK(join_soon(th, &res) == 0 && res == PTHREAD_CANCELED);
}

/* Runs fn in a child process; adds the child's check counts to ours. */
static void in_child(void (*fn)(void))
{
    int p[2];
    if (pipe(p) != 0) {
        CHECK(0);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        checks = failed = 0;
        fn();
        int counts[2] = {checks, failed};
        exit(write(p[1], counts, sizeof counts) == sizeof counts ? 0 : 1); /* exit: the agent seals the child's trace */
    }
    close(p[1]);
    int counts[2] = {0, 0}, status = 0;
    CHECK(read(p[0], counts, sizeof counts) == sizeof counts);
    close(p[0]);
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    checks += counts[0];
    failed += counts[1];
}

static void wait_deferred(void) { cancelled_in_wait(EPOLL_WAIT, DEFERRED); }
static void pwait_deferred(void) { cancelled_in_wait(EPOLL_PWAIT, DEFERRED); }
static void poll_deferred(void) { cancelled_in_wait(POLL, DEFERRED); }
static void wait_async(void) { cancelled_in_wait(EPOLL_WAIT, ASYNC); }
static void recv_deferred(void) { cancelled_in_wait(SOCKET_RECV, DEFERRED); }
static void recv_async(void) { cancelled_in_wait(SOCKET_RECV, ASYNC); }
static void recv_disabled_event(void) { disabled_gets_event(SOCKET_RECV); }
static void eventfd_deferred(void) { cancelled_in_wait(EVENTFD_READ, DEFERRED); }
static void eventfd_disabled_event(void) { disabled_gets_event(EVENTFD_READ); }
static void wait_disabled_event(void) { disabled_gets_event(EPOLL_WAIT); }
static void pwait_disabled_event(void) { disabled_gets_event(EPOLL_PWAIT); }
static void poll_disabled_event(void) { disabled_gets_event(POLL); }
static void wait_disabled_timeout(void) { disabled_times_out(EPOLL_WAIT); }
static void poll_disabled_timeout(void) { disabled_times_out(POLL); }
static void pipe_deferred(void) { cancelled_in_wait(PIPE_WRITE, DEFERRED); }
static void pipe_dup_deferred(void) { cancelled_in_wait(PIPE_WRITE_DUP, DEFERRED); }
static void pipe_ioctl_deferred(void) { cancelled_in_wait(PIPE_WRITE_IOCTL, DEFERRED); }
static void pipe_async(void) { cancelled_in_wait(PIPE_WRITE, ASYNC); }
static void pipe_disabled_event(void) { disabled_gets_event(PIPE_WRITE); }
static void file_read(void) { file_cancelled_at(F_READ); }
static void file_pread(void) { file_cancelled_at(F_PREAD); }
static void file_write(void) { file_cancelled_at(F_WRITE); }
static void file_pwrite(void) { file_cancelled_at(F_PWRITE); }
static void fifo_read(void) { fifo_cancelled_in(0); }
static void fifo_write(void) { fifo_cancelled_in(1); }

int main(void)
{
    in_child(wait_deferred);
    in_child(pwait_deferred);
    in_child(poll_deferred);
    in_child(wait_async);
    in_child(recv_deferred);
    in_child(recv_async);
    in_child(recv_disabled_event);
    in_child(eventfd_deferred);
    in_child(eventfd_disabled_event);
    in_child(wait_disabled_event);
    in_child(pwait_disabled_event);
    in_child(poll_disabled_event);
    in_child(wait_disabled_timeout);
    in_child(poll_disabled_timeout);
    in_child(pipe_deferred);
    in_child(pipe_dup_deferred);
    in_child(pipe_ioctl_deferred);
    in_child(pipe_async);
    in_child(pipe_disabled_event);
    in_child(file_read);
    in_child(file_pread);
    in_child(file_write);
    in_child(file_pwrite);
    in_child(fifo_read);
    in_child(fifo_write);
    in_child(bystander_undisturbed);
    in_child(later_cancel);
    in_child(jumped_out);
    printf("cancel_park: %d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
