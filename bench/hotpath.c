/* hotpath.c - cost of the interposers per call, for bench/run.sh.
 * usage: hotpath MODE N [WARM [BLOCK [EVICT]]]
 * Without BLOCK: N calls as the program makes them (through the agent when
 * it is preloaded); prints "MODE ns_per_call".
 * WARM: that many untimed calls first, then a 300 ms pause: the agent's ring
 * has been touched and drained, so N calls under half the ring (8000 with the
 * 16384 entries bench/run.sh sets) time recorded events only, no page fault,
 * no drop.
 * BLOCK (with the agent preloaded; N at least BLOCK): an A/B inside one
 * process. The N calls go in blocks of BLOCK calls through the interposer,
 * each paired with a block of as many calls straight to libc's own
 * definition (dlsym on libc.so.6, which the agent never sees), the pair's
 * order drawn at random.
 * Prints "MODE libc_ns agent_ns added_ns": medians over the pairs of ns per
 * call, and the median of the pairs' differences.
 * EVICT (bytes, with BLOCK): before each block, a read of one byte in every
 * 64 of a buffer of EVICT bytes, untimed. With BLOCK 1 and EVICT past the
 * last-level cache (64 MiB here, against 32 MiB of L3), each call finds
 * its code, data and page-table entries as a service's thread finds them
 * after a long sleep: in memory, not in any cache or TLB. libc's side pays
 * its own misses too; the difference is the agent's. Runs in separate
 * processes differ by this VM's state (its fast and slow phases move a 1 us
 * syscall by tens of ns); blocks a fraction of a millisecond apart do not.
 * Modes (each call below makes the agent record one event, or count one poll):
 *   cond_signal   pthread_cond_signal on a condition variable whose waiter
 *                 count says one waiter though none waits (held_cond.h): no
 *                 syscall, so the agent's share is the whole difference (wake
 *                 event)
 *   cond_idle     pthread_cond_signal with no waiter: glibc returns at once,
 *                 and the agent records nothing (no event)
 *   futex_wake    syscall(SYS_futex, FUTEX_WAKE) with no waiter (wake event)
 *   eventfd       8-byte write to an eventfd (wake event)
 *   epoll_nowait  epoll_wait with timeout 0 (counted, no event)
 *   pipe_wake     1-byte write to a pipe whose read end is in an epoll set
 *                 (wake event; O_NONBLOCK, as runtimes make their wake
 *                 pipes; it holds 1 MiB, more than a run writes)
 *   epoll_park    epoll_wait with 1 ms timeout on a ready eventfd (park + unpark)
 *   futex_park    syscall(SYS_futex, FUTEX_WAIT) on a word that does not hold
 *                 the value: EAGAIN at once (park + unpark)
 *   poll_park     poll with 1 ms timeout on the ready eventfd (park + unpark)
 *   cond_park     pthread_cond_timedwait with a deadline before 1970: glibc
 *                 returns ETIMEDOUT without waiting, but it re-takes the mutex
 *                 marked contended, so each call's unlock of it inside glibc
 *                 makes one FUTEX_WAKE (strace: 47,999 futex calls for 48,000
 *                 waits): the one park whose system call libc makes inside
 *                 the hook (park + unpark)
 *   sem_park      sem_post, then sem_wait, which takes it: no syscall (wake,
 *                 park, unpark)
 *   sock_park     recv with MSG_PEEK of the byte a blocking socket holds:
 *                 returns it at once (park + unpark: a thread-per-connection
 *                 server's wait for its peer)
 *   select_park   select with 1 ms timeout on the ready eventfd (park +
 *                 unpark; its fd set filled before each call, both sides)
 *   epoll_ctl_efd EPOLL_CTL_MOD of the eventfd in an epoll set (one
 *                 EPOLL_CTL event: the agent follows a waker's sets)
 *   app           dial9_event (include/dial9.h), an application event; its
 *                 "libc" side, and the call without the agent, is an empty
 *                 function of the same type (app event)
 * Not a mode: sleeps (their hooks are poll's; a 0 ns nanosleep sleeps
 * 12-100 us here, too long to see ns in).
 *   mutex         uncontended pthread_mutex_lock + unlock (no event)
 *   rwlock        uncontended pthread_rwlock_rdlock + unlock (no event: the
 *                 agent's try succeeds)
 *   epoll_ctl     EPOLL_CTL_MOD of a socket in an epoll set, as an event loop
 *                 rearms a connection (not recorded: one byte load after)
 *   sock_writev   a 0-byte writev on the non-blocking socket, 0 (not recorded)
 *   sock_accept   accept4 on a non-blocking listening socket with no
 *                 connection, EAGAIN (not recorded)
 *   child_nohang  waitpid(-1, WNOHANG) with no child, ECHILD (counted as a
 *                 poll that did not wait, no event)
 *   ioctl         ioctl FIONREAD on the non-blocking socket (not recorded:
 *                 libevent asks it before each read of its buffers)
 *   fcntl         fcntl F_GETFL on that socket (not recorded)
 *   sock_read     read on an empty non-blocking socket, EAGAIN (not recorded)
 *   sock_recv     recv on that socket, EAGAIN (not recorded: an event
 *                 loop's receive, one byte load in the agent)
 *   sock_send     a 0-byte send on that socket, 0 (not recorded: an event
 *                 loop's send)
 *   file_pread    1-byte pread of a regular file in $TMPDIR (default /tmp):
 *                 timed as a possible slow syscall, two stamps, not recorded
 *   file_openclose  open + close of that file (both timed, not recorded)
 * Every mode first makes one recorded call (a pthread_cond_signal): the
 * calling thread then has its slot in the agent, as a service's do.
 * An idle thread runs in every mode: the services dial9 targets are all
 * multi-threaded, and with the agent's writer so is this program; once a
 * second thread exists glibc takes its multi-threaded paths (cancellation
 * points enable and disable async cancel around each syscall: +45 ns on
 * read here), which without the idle thread counted as the agent's cost. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIAL9_WEAK
#include <dial9.h>

#include "bench.h"
#include "../test/progs/held_cond.h"

enum mode {
    M_COND_SIGNAL,
    M_COND_IDLE,
    M_FUTEX_WAKE,
    M_EVENTFD,
    M_EPOLL_NOWAIT,
    M_EPOLL_PARK,
    M_FUTEX_PARK,
    M_MUTEX,
    M_SOCK_READ,
    M_FILE_PREAD,
    M_FILE_OPENCLOSE,
    M_PIPE_WAKE,
    M_POLL_PARK,
    M_COND_PARK,
    M_SEM_PARK,
    M_APP,
    M_SOCK_RECV,
    M_SOCK_PARK,
    M_SOCK_SEND,
    M_SELECT_PARK,
    M_EPOLL_CTL_EFD,
    M_RWLOCK,
    M_EPOLL_CTL,
    M_SOCK_WRITEV,
    M_SOCK_ACCEPT,
    M_CHILD_NOHANG,
    M_IOCTL,
    M_FCNTL,
};
static const char *const mode_names[] = {"cond_signal", "cond_idle",  "futex_wake", "eventfd",
                                         "epoll_nowait", "epoll_park", "futex_park", "mutex",
                                         "sock_read",    "file_pread", "file_openclose", "pipe_wake",
                                         "poll_park",    "cond_park",  "sem_park",   "app",
                                         "sock_recv",    "sock_park",  "sock_send",  "select_park",
                                         "epoll_ctl_efd", "rwlock",    "epoll_ctl",  "sock_writev",
                                         "sock_accept",  "child_nohang", "ioctl",    "fcntl"};
#define N_MODES (sizeof(mode_names) / sizeof(mode_names[0]))

/* The calls the modes make: the program's own bindings (the agent's, when
 * preloaded) or libc's definitions. */
struct calls {
    int (*cond_signal)(pthread_cond_t *);
    long (*syscall)(long, ...);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*send)(int, const void *, size_t, int);
    ssize_t (*pread)(int, void *, size_t, off_t);
    int (*epoll_wait)(int, struct epoll_event *, int, int);
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*open)(const char *, int, ...);
    int (*close)(int);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*sem_post)(sem_t *);
    int (*sem_wait)(sem_t *);
    int (*event)(int, long long);
    int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    int (*epoll_ctl)(int, int, int, struct epoll_event *);
    int (*rdlock)(pthread_rwlock_t *);
    int (*rwunlock)(pthread_rwlock_t *);
    ssize_t (*writev)(int, const struct iovec *, int);
    int (*accept4)(int, struct sockaddr *, socklen_t *, int);
    pid_t (*waitpid)(pid_t, int *, int);
    int (*ioctl)(int, unsigned long, ...);
    int (*fcntl)(int, int, ...);
};

/* app's call where nothing records it: an empty call of dial9_event's type. */
static __attribute__((noinline)) int no_event(int id, long long value)
{
    __asm__ volatile("" ::"r"(id), "r"(value));
    return 0;
}

/* event: dial9_event when the agent is preloaded, else no_event (main). */
static struct calls program = {
    pthread_cond_signal, syscall, write, read, recv, send, pread, epoll_wait, pthread_mutex_lock, pthread_mutex_unlock, open, close,
    poll, pthread_cond_timedwait, sem_post, sem_wait, no_event, select, epoll_ctl, pthread_rwlock_rdlock,
    pthread_rwlock_unlock, writev, accept4, waitpid, ioctl, fcntl,
};

/* libc's own definitions; pthread_cond_signal in the ABI the program links
 * (GLIBC_2.3.2 on x86-64; the unversioned lookup gives the old one). */
static int libc_calls(struct calls *c)
{
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return -1;
    c->cond_signal = (int (*)(pthread_cond_t *))dlvsym(h, "pthread_cond_signal", "GLIBC_2.3.2");
    c->syscall = (long (*)(long, ...))dlsym(h, "syscall");
    c->write = (ssize_t(*)(int, const void *, size_t))dlsym(h, "write");
    c->read = (ssize_t(*)(int, void *, size_t))dlsym(h, "read");
    c->recv = (ssize_t(*)(int, void *, size_t, int))dlsym(h, "recv");
    c->send = (ssize_t(*)(int, const void *, size_t, int))dlsym(h, "send");
    c->pread = (ssize_t(*)(int, void *, size_t, off_t))dlsym(h, "pread");
    c->epoll_wait = (int (*)(int, struct epoll_event *, int, int))dlsym(h, "epoll_wait");
    c->mutex_lock = (int (*)(pthread_mutex_t *))dlsym(h, "pthread_mutex_lock");
    c->mutex_unlock = (int (*)(pthread_mutex_t *))dlsym(h, "pthread_mutex_unlock");
    c->open = (int (*)(const char *, int, ...))dlsym(h, "open");
    c->close = (int (*)(int))dlsym(h, "close");
    c->poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(h, "poll");
    c->cond_timedwait = (int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))dlvsym(
        h, "pthread_cond_timedwait", "GLIBC_2.3.2");
    c->sem_post = (int (*)(sem_t *))dlsym(h, "sem_post");
    c->sem_wait = (int (*)(sem_t *))dlsym(h, "sem_wait");
    c->event = no_event;
    c->select = (int (*)(int, fd_set *, fd_set *, fd_set *, struct timeval *))dlsym(h, "select");
    c->epoll_ctl = (int (*)(int, int, int, struct epoll_event *))dlsym(h, "epoll_ctl");
    c->rdlock = (int (*)(pthread_rwlock_t *))dlsym(h, "pthread_rwlock_rdlock");
    c->rwunlock = (int (*)(pthread_rwlock_t *))dlsym(h, "pthread_rwlock_unlock");
    c->writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(h, "writev");
    c->accept4 = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(h, "accept4");
    c->waitpid = (pid_t(*)(pid_t, int *, int))dlsym(h, "waitpid");
    c->ioctl = (int (*)(int, unsigned long, ...))dlsym(h, "ioctl");
    c->fcntl = (int (*)(int, int, ...))dlsym(h, "fcntl");
    const void *const *p = (const void *const *)c;
    for (size_t i = 0; i < sizeof(*c) / sizeof(void *); i++)
        if (!p[i])
            return -1;
    return 0;
}

/* What the calls act on. */
struct fixture {
    pthread_cond_t cv;   /* cond_idle's signals, cond_park's waits */
    pthread_cond_t held; /* cond_signal's: HELD_COND_INITIALIZER */
    pthread_mutex_t mu;
    pthread_rwlock_t rw;
    int word, efd, ep, sock, ffd;
    int ep_ctl; /* an epoll set holding sock and efd (epoll_ctl, epoll_ctl_efd) */
    int lsock;  /* a non-blocking listening socket, never connected to */
    int bsock; /* a blocking socket holding one byte (sock_park) */
    int pipe_w; /* write end of a pipe whose read end is in an epoll set */
    int app_id; /* app's event name */
    sem_t sem;
    const char *path;
};

/* n calls of mode m through c. */
static void run(enum mode m, const struct calls *c, struct fixture *fx, long n)
{
    const uint64_t one = 1; /* on the stack, as a service's waker keeps it */
    struct epoll_event out[4];
    struct pollfd pf = {.fd = fx->efd, .events = POLLIN};
    const struct timespec past = {-1, 0};
    char byte = 0;
    struct iovec none = {&byte, 0};
    struct epoll_event in = {.events = EPOLLIN};
    fd_set rfds;
    FD_ZERO(&rfds);
    int avail;
    for (long i = 0; i < n; i++) {
        switch (m) {
        case M_COND_SIGNAL: c->cond_signal(&fx->held); break;
        case M_COND_IDLE: c->cond_signal(&fx->cv); break;
        case M_FUTEX_WAKE: c->syscall(SYS_futex, &fx->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); break;
        case M_EVENTFD: (void)!c->write(fx->efd, &one, 8); break;
        case M_EPOLL_NOWAIT: c->epoll_wait(fx->ep, out, 4, 0); break;
        case M_EPOLL_PARK: c->epoll_wait(fx->ep, out, 4, 1); break;
        case M_FUTEX_PARK: /* the word is 0, not 1: EAGAIN at once */
            c->syscall(SYS_futex, &fx->word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
            break;
        case M_MUTEX:
            c->mutex_lock(&fx->mu);
            c->mutex_unlock(&fx->mu);
            break;
        case M_SOCK_READ: (void)!c->read(fx->sock, &byte, 1); break;
        case M_FILE_PREAD: (void)!c->pread(fx->ffd, &byte, 1, 0); break;
        case M_FILE_OPENCLOSE: c->close(c->open(fx->path, O_RDONLY)); break;
        case M_PIPE_WAKE: (void)!c->write(fx->pipe_w, &byte, 1); break;
        case M_POLL_PARK: c->poll(&pf, 1, 1); break;
        case M_COND_PARK: c->cond_timedwait(&fx->cv, &fx->mu, &past); break; /* mu is held */
        case M_SEM_PARK:
            c->sem_post(&fx->sem);
            c->sem_wait(&fx->sem);
            break;
        case M_APP: c->event(fx->app_id, i); break;
        case M_SOCK_RECV: (void)!c->recv(fx->sock, &byte, 1, 0); break;
        case M_SOCK_PARK: (void)!c->recv(fx->bsock, &byte, 1, MSG_PEEK); break;
        case M_SOCK_SEND: (void)!c->send(fx->sock, &byte, 0, 0); break;
        case M_SELECT_PARK: {
            struct timeval ms = {0, 1000};
            FD_SET(fx->efd, &rfds); /* select leaves it set: the eventfd is ready */
            c->select(fx->efd + 1, &rfds, NULL, NULL, &ms);
            break;
        }
        case M_EPOLL_CTL_EFD: c->epoll_ctl(fx->ep_ctl, EPOLL_CTL_MOD, fx->efd, &in); break;
        case M_RWLOCK:
            c->rdlock(&fx->rw);
            c->rwunlock(&fx->rw);
            break;
        case M_EPOLL_CTL: c->epoll_ctl(fx->ep_ctl, EPOLL_CTL_MOD, fx->sock, &in); break;
        case M_SOCK_WRITEV: (void)!c->writev(fx->sock, &none, 1); break;
        case M_SOCK_ACCEPT: c->accept4(fx->lsock, NULL, NULL, SOCK_NONBLOCK); break;
        case M_CHILD_NOHANG: c->waitpid(-1, NULL, WNOHANG); break;
        case M_IOCTL: c->ioctl(fx->sock, FIONREAD, &avail); break;
        case M_FCNTL: c->fcntl(fx->sock, F_GETFL); break;
        }
    }
}

/* EVICT's buffer (main). */
static const volatile uint8_t *evict_buf;
static size_t evict_len;

/* ns per call of one block of n calls (after the eviction, when asked). */
static double timed_block(enum mode m, const struct calls *c, struct fixture *fx, long n)
{
    for (size_t i = 0; i < evict_len; i += 64)
        (void)evict_buf[i];
    uint64_t t0 = now_ns();
    run(m, c, fx, n);
    return (double)(now_ns() - t0) / (double)n;
}

/* The in-process A/B: n calls through the program's bindings in blocks of
 * block, each paired with a block straight to libc, in an order drawn at
 * random for each pair: this VM slows a 1 us syscall by about 170 ns for
 * about a third of the blocks, with a period near 1 ms, and a fixed order
 * lined that up with one side in some processes (-160 ns for a read the
 * agent only forwards). Both tables on the stack: a load from a page of its
 * own after each syscall (this VM empties the TLB at every syscall) would
 * count for one side only. */
static int ab(enum mode m, const struct calls *libc_, struct fixture *fx, long n, long block)
{
    const struct calls prog = program, libc = *libc_;
    size_t pairs = (size_t)(n / block);
    double *lib = pairs ? calloc(pairs * 3, sizeof(double)) : NULL;
    if (!lib)
        return 1;
    double *via = lib + pairs, *diff = via + pairs;
    uint64_t coin = now_ns() | 1; /* xorshift64 */
    for (size_t k = 0; k < pairs; k++) {
        coin ^= coin << 13;
        coin ^= coin >> 7;
        coin ^= coin << 17;
        if (coin & 1) {
            via[k] = timed_block(m, &prog, fx, block);
            lib[k] = timed_block(m, &libc, fx, block);
        } else {
            lib[k] = timed_block(m, &libc, fx, block);
            via[k] = timed_block(m, &prog, fx, block);
        }
        diff[k] = via[k] - lib[k];
    }
    printf("%s %.1f %.1f %.1f\n", mode_names[m], bench_median(lib, pairs), bench_median(via, pairs),
           bench_median(diff, pairs));
    free(lib);
    return 0;
}

static int parse_mode(const char *s)
{
    for (size_t i = 0; i < N_MODES; i++)
        if (!strcmp(s, mode_names[i]))
            return (int)i;
    return -1;
}

int main(int argc, char **argv)
{
    int mi = argc >= 3 && argc <= 6 ? parse_mode(argv[1]) : -1;
    long n = argc >= 3 ? atol(argv[2]) : 0, warm = argc >= 4 ? atol(argv[3]) : 0;
    long block = argc >= 5 ? atol(argv[4]) : 0, evict = argc == 6 ? atol(argv[5]) : 0;
    if (mi < 0 || n <= 0 || warm < 0 || block < 0 || (block && n < block) || evict < 0 || (evict && !block)) {
        fprintf(stderr, "usage: %s MODE N [WARM [BLOCK [EVICT]]]\nmodes:", argv[0]);
        for (size_t i = 0; i < N_MODES; i++)
            fprintf(stderr, " %s", mode_names[i]);
        fputc('\n', stderr);
        return 2;
    }
    enum mode m = (enum mode)mi;
    if (evict) {
        uint8_t *b = malloc((size_t)evict);
        if (!b)
            return 1;
        memset(b, 1, (size_t)evict); /* its pages mapped now, not in a timed pair */
        evict_buf = b;
        evict_len = (size_t)evict;
    }
    struct calls libc;
    if (block && libc_calls(&libc) != 0) {
        fprintf(stderr, "hotpath: libc's definitions not found: %s\n", dlerror());
        return 1;
    }
    struct fixture fx = {.cv = PTHREAD_COND_INITIALIZER,
                         .held = HELD_COND_INITIALIZER,
                         .mu = PTHREAD_MUTEX_INITIALIZER,
                         .rw = PTHREAD_RWLOCK_INITIALIZER};
    fx.efd = eventfd(0, EFD_NONBLOCK);
    fx.ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    uint64_t one = 1;
    if (write(fx.efd, &one, 8) != 8) /* stays readable: epoll_park returns at once */
        return 1;
    epoll_ctl(fx.ep, EPOLL_CTL_ADD, fx.efd, &ev);
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) != 0)
        return 1;
    fx.sock = sp[0];
    int bp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, bp) != 0 || write(bp[1], "x", 1) != 1)
        return 1;
    fx.bsock = bp[0];
    struct epoll_event cev = {.events = EPOLLIN};
    fx.ep_ctl = epoll_create1(0);
    if (fx.ep_ctl < 0 || epoll_ctl(fx.ep_ctl, EPOLL_CTL_ADD, fx.sock, &cev) != 0 ||
        epoll_ctl(fx.ep_ctl, EPOLL_CTL_ADD, fx.efd, &cev) != 0)
        return 1;
    fx.lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un la = {.sun_family = AF_UNIX}; /* autobind: an abstract name of the kernel's */
    if (fx.lsock < 0 || bind(fx.lsock, (struct sockaddr *)&la, sizeof(sa_family_t)) != 0 || listen(fx.lsock, 1) != 0)
        return 1;
    int pp[2], ep2 = epoll_create1(0);
    struct epoll_event pev = {.events = EPOLLIN};
    if (pipe2(pp, O_NONBLOCK) != 0 || ep2 < 0 || epoll_ctl(ep2, EPOLL_CTL_ADD, pp[0], &pev) != 0)
        return 1;
    fcntl(pp[1], F_SETPIPE_SZ, 1 << 20);
    fx.pipe_w = pp[1];
    if (sem_init(&fx.sem, 0, 0) != 0)
        return 1;
    if (dial9_event_id && dial9_event) {
        fx.app_id = dial9_event_id("bench.app");
        program.event = dial9_event;
    }
    if (m == M_COND_PARK) /* pthread_cond_timedwait takes and gives back a held mutex */
        pthread_mutex_lock(&fx.mu);
    if (bench_start_idle_thread() != 0)
        return 1;
    /* One WAKE (held_cond.h): the agent gives this thread its slot, as a
     * service's threads have one after their first park or wake; a close
     * counts itself there (agent/segment.c). */
    pthread_cond_signal(&fx.held);
    /* Made last, so every return below removes it. */
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/d9hotpath.%d", dir, (int)getpid());
    fx.path = path;
    fx.ffd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fx.ffd < 0 || write(fx.ffd, "x", 1) != 1) {
        unlink(path);
        return 1;
    }

    if (warm) {
        run(m, &program, &fx, warm);
        if (block)
            run(m, &libc, &fx, warm);
        struct timespec pause = {0, 300000000};
        nanosleep(&pause, NULL);
    }
    int rc = 0;
    if (block)
        rc = ab(m, &libc, &fx, n, block);
    else
        printf("%s %.1f\n", mode_names[m], timed_block(m, &program, &fx, n));
    unlink(path);
    return rc;
}
