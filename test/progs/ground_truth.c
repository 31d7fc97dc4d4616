/* ground_truth.c - a program that counts its own blocking and waking calls,
 * so a test can compare what dial9 recorded against what really happened.
 *
 *   ground_truth            pairs of threads ping-pong through epoll+eventfd
 *                           or pipe,
 *                           futex, condvar and semaphore, plus a sleeper
 *                           and a thread that waits for the main thread's
 *                           signals
 *   ground_truth --burst N  one thread posts a semaphore N times in a tight
 *                           loop (to overflow a tiny agent buffer)
 *
 * At the end it prints one JSON object on stdout: per thread its tid, parent
 * tid, name, and counts of park calls, wake calls and zero-timeout polls by
 * dial9 call name (from dial9_format.h), plus totals; "timed" counts the
 * parks whose timeout is wait_ns (relative, or a deadline on CLOCK_REALTIME
 * or CLOCK_MONOTONIC taken just before the call).
 *
 * Counting rule: every call is counted once, whatever it returns (a futex
 * wait that finds the word changed still is a call the agent must record),
 * except a condition-variable signal or broadcast while no thread waits on
 * it: that does nothing, and the agent must not record it.
 * The program calls nothing else that dial9 records as a park or wake:
 * mutexes use glibc's internal futex, not syscall(). Every join is a park
 * (call join), the main thread's first two with a WAIT_NS deadline;
 * "joined" lists the tids each thread joined, in order, and "joined_live"
 * those it joined while they surely ran (gt-joinee, which exits once the
 * main thread waits for it), whose tid the park's target must be.
 * gt-sock-srv serves gt-sock-cli over blocking TCP sockets on 127.0.0.1:
 * every accept, read and receive it makes on a blocking socket is a park
 * (call accept, accept4, read or recv), listed in "fd_parks" with the fd
 * it waits on; its calls that cannot wait (MSG_DONTWAIT, a socket made
 * non-blocking by fcntl, SOCK_NONBLOCK from socket or accept4) are none.
 * gt-sock-cli connects its blocking sockets (parks, call connect, in
 * "fd_parks") and sends with MSG_DONTWAIT (never a park), but for a send and
 * a write into a full blocking socketpair, which wait 20 ms for the server
 * to drain it: parks (call send, write), in "fd_parks" too; a writev the
 * same (call write), and a sendfile and a sendmmsg (call send). Then the server reads a blocking pipe and, with
 * readv, one made blocking by F_SETFL (parks, call read), the latter first
 * while it is non-blocking (no park). One of its socket reads is a readv.
 * Last it reads a blocking eventfd with read and eventfd_read (parks, call
 * read), a non-blocking one with both (no park). gt-sock-cli writes each
 * pipe (write, then writev) and the eventfd once the server waits in its
 * read: wakes (call pipe_write, eventfd_write) of that read, whose wakee
 * "fd_wakees" lists.
 * A recv and a read just after a poll that found their fds ready, and a
 * read after a zero-timeout poll, are no parks: the poll was the wait.
 * Last gt-sock-cli writes into a full blocking pipe that gt-sock-srv
 * drains 20 ms later: a park (call write); then gt-sock-srv reads a
 * blocking socket and pipe made by raw system calls, unseen by the agent
 * until it reads them (parks), and a non-blocking such socket (none).
 * The main thread's epoll_ctl calls that succeed on its eventfd or pipe
 * read end (ADD, then MOD) are events, listed in "epoll_ctls" as [op, epfd,
 * fd]; a failed one (EEXIST) and a socket's ADD and DEL are none.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dial9_format.h"
#include "call_counts.h"

#define ROUNDS 200
#define MAX_THREADS 16
#define WAIT_NS 5000000000LL /* generous: a wait should end by a wake, not this */

struct gt_thread {
    const char *name; /* set from inside the thread */
    int via_prctl;    /* name with prctl(PR_SET_NAME) instead of pthread_setname_np */
    void (*body)(void);
    pid_t tid, parent;
    pthread_t handle;
    unsigned parks[D9_CALL_COUNT], wakes[D9_CALL_COUNT], nowait;
    unsigned timed[D9_CALL_COUNT]; /* parks of those with a WAIT_NS timeout */
    pid_t joined[MAX_THREADS], joined_live[MAX_THREADS];
    int njoined, njoined_live;
    int fd_parks[32], nfd_parks; /* the fd of each park on a blocking socket, pipe or eventfd */
    pid_t fd_wakees[8];          /* the thread each of its wakes of a blocking read woke */
    int nfd_wakees;
    int ctls[8][3], nctls; /* op, epfd, fd of each epoll_ctl the agent records */
};

static struct gt_thread threads[MAX_THREADS];
static _Atomic int nthreads;
static __thread struct gt_thread *me;
static long burst_n;

#define PARKED(call) (me->parks[call]++)
#define PARKED_TIMED(call) (me->parks[call]++, me->timed[call]++)
#define WOKE(call) (me->wakes[call]++)

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static struct timespec deadline(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_sec += WAIT_NS / 1000000000LL;
    return ts;
}

/* ---- Thread creation: the creator records itself as the parent -------- */

static void *trampoline(void *arg)
{
    me = arg;
    __atomic_store_n(&me->tid, gettid(), __ATOMIC_RELEASE);
    if (me->via_prctl)
        prctl(PR_SET_NAME, me->name, 0, 0, 0);
    else
        pthread_setname_np(pthread_self(), me->name);
    me->body();
    return NULL;
}

static struct gt_thread *spawn(const char *name, int via_prctl, void (*body)(void))
{
    int i = atomic_fetch_add(&nthreads, 1);
    if (i >= MAX_THREADS)
        die("too many threads");
    struct gt_thread *t = &threads[i];
    t->name = name;
    t->via_prctl = via_prctl;
    t->body = body;
    t->parent = gettid();
    if (pthread_create(&t->handle, NULL, trampoline, t))
        die("pthread_create");
    return t;
}

/* The calling thread joined t (rc: the join's result): a park on t. */
static void joined(struct gt_thread *t, int rc, int timed)
{
    if (rc)
        die("join");
    if (timed)
        PARKED_TIMED(D9_CALL_JOIN);
    else
        PARKED(D9_CALL_JOIN);
    me->joined[me->njoined++] = t->tid;
}

/* ---- Pair 1: eventfd in an epoll set one way, futex the other way ------ */

static int epfd, evfd, pipefd[2]; /* the futexer wakes the poller through either */
static _Atomic uint32_t fword; /* round number the poller has answered */

static void poller(void)
{
    struct epoll_event ev[4];
    uint64_t v;
    for (int r = 0; r < ROUNDS; r++) {
        epoll_wait(epfd, ev, 4, 0); /* a zero-timeout poll: not a park */
        me->nowait++;
        int n;
        do {
            n = epoll_wait(epfd, ev, 4, (int)(WAIT_NS / 1000000));
            PARKED_TIMED(D9_CALL_EPOLL_WAIT);
        } while (n <= 0);
        if (r % 2 ? read(pipefd[0], &v, 1) != 1 : read(evfd, &v, sizeof v) != sizeof v)
            die("read eventfd or pipe");
        atomic_store(&fword, (uint32_t)r + 1);
        syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        WOKE(D9_CALL_FUTEX);
    }
}

static void futexer(void)
{
    const uint64_t one = 1;
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 2) { /* a pipe as runtimes make them (O_NONBLOCK), its read end in the epoll set */
            if (write(pipefd[1], &one, 1) != 1)
                die("write pipe");
            WOKE(D9_CALL_PIPE_WRITE);
        } else {
            if (write(evfd, &one, sizeof one) != sizeof one)
                die("write eventfd");
            WOKE(D9_CALL_EVENTFD_WRITE);
        }
        /* At least one wait per round; FUTEX_WAIT (relative timeout) and
         * FUTEX_WAIT_BITSET (absolute) alternate. */
        do {
            if (r % 2 == 0) {
                struct timespec rel = {WAIT_NS / 1000000000LL, 0};
                syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, (uint32_t)r, &rel, NULL, 0);
            } else {
                struct timespec abs = deadline(CLOCK_MONOTONIC);
                syscall(SYS_futex, &fword, FUTEX_WAIT_BITSET_PRIVATE, (uint32_t)r, &abs,
                        NULL, FUTEX_BITSET_MATCH_ANY);
            }
            PARKED_TIMED(D9_CALL_FUTEX);
        } while (atomic_load(&fword) != (uint32_t)r + 1);
    }
}

/* ---- Pair 2: condition variable ping-pong ------------------------------ */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn; /* 1: cond-b's move, 0: cond-a's */
static int cond_waiters; /* threads inside a wait on cv; under mu */

/* One of the three waits, chosen by round, counted. Called with mu held. */
static void cond_wait_any(int r)
{
    struct timespec abs;
    cond_waiters++;
    switch (r % 3) {
    case 0:
        pthread_cond_wait(&cv, &mu);
        PARKED(D9_CALL_COND_WAIT);
        break;
    case 1:
        abs = deadline(CLOCK_REALTIME);
        pthread_cond_timedwait(&cv, &mu, &abs);
        PARKED_TIMED(D9_CALL_COND_WAIT);
        break;
    default:
        abs = deadline(CLOCK_MONOTONIC);
        pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &abs);
        PARKED_TIMED(D9_CALL_COND_WAIT);
        break;
    }
    cond_waiters--;
}

/* Called with mu held, so no thread starts or ends a wait meanwhile (the
 * waits' WAIT_NS deadline does not pass). Counted only with a waiter. */
static void cond_wake_any(int r)
{
    if (r % 2) {
        pthread_cond_broadcast(&cv);
        if (cond_waiters)
            WOKE(D9_CALL_COND_BROADCAST);
    } else {
        pthread_cond_signal(&cv);
        if (cond_waiters)
            WOKE(D9_CALL_COND_SIGNAL);
    }
}

static void cond_a(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        turn = 1;
        cond_wake_any(r);
        while (turn == 1) /* cond-b needs mu, so this waits at least once */
            cond_wait_any(r);
        pthread_mutex_unlock(&mu);
    }
}

static void cond_b(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        while (turn != 1)
            cond_wait_any(r + 1);
        turn = 0;
        cond_wake_any(r + 1);
        pthread_mutex_unlock(&mu);
    }
}

/* ---- Pair 3: semaphores; sem-a creates sem-b (a non-main parent) ------- */

static sem_t s_ab, s_ba;

static void sem_wait_any(sem_t *s, int r)
{
    int rc;
    do {
        if (r % 2) {
            struct timespec abs = deadline(CLOCK_REALTIME);
            rc = sem_timedwait(s, &abs);
            PARKED_TIMED(D9_CALL_SEM_WAIT);
        } else {
            rc = sem_wait(s);
            PARKED(D9_CALL_SEM_WAIT);
        }
    } while (rc != 0);
}

static void sem_b(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        sem_wait_any(&s_ab, r);
        sem_post(&s_ba);
        WOKE(D9_CALL_SEM_POST);
    }
}

static void sem_a(void)
{
    struct gt_thread *b = spawn("gt-sem-b", 0, sem_b);
    for (int r = 0; r < ROUNDS; r++) {
        sem_post(&s_ab);
        WOKE(D9_CALL_SEM_POST);
        sem_wait_any(&s_ba, r);
    }
    joined(b, pthread_join(b->handle, NULL), 0);
}

/* ---- A sleeper, named through prctl ------------------------------------ */

static void sleeper(void)
{
    struct epoll_event ev;
    int empty = epoll_create1(EPOLL_CLOEXEC);
    if (empty < 0)
        die("epoll_create1");
    for (int i = 0; i < 10; i++) {
        /* Two zero-timeout polls, then a park that flushes their count. */
        epoll_wait(empty, &ev, 1, 0);
        epoll_wait(empty, &ev, 1, 0);
        me->nowait += 2;
        struct timespec d = {0, 1000000};
        if (i % 2)
            clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
        else
            nanosleep(&d, NULL);
        PARKED(D9_CALL_NANOSLEEP);
    }
    close(empty);
}

/* ---- Burst: many wakes faster than a tiny buffer drains ---------------- */

static void burster(void)
{
    for (long i = 0; i < burst_n; i++) {
        sem_post(&s_ab);
        WOKE(D9_CALL_SEM_POST);
    }
    /* Let the writer drain, so the thread's exit is likely recorded. */
    struct timespec d = {0, 100000000};
    nanosleep(&d, NULL);
    PARKED(D9_CALL_NANOSLEEP);
}

/* ---- Signal waits: gt-signals takes the main thread's signals --------- */

static _Atomic int sig_ready, pause_done;
static void on_usr1(int sig) { (void)sig; }

/* SIGRTMIN + 2 (queued: three sent, three taken) through sigwait,
 * sigtimedwait (WAIT_NS) and sigwaitinfo, then a zero-timeout sigtimedwait
 * (a poll); SIGUSR1 through sigsuspend, then pause (the main thread sends
 * it until pause returns). */
static void signal_waiter(void)
{
    sigset_t rt, usr1, open;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 2);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &rt, NULL);
    pthread_sigmask(SIG_BLOCK, &usr1, &open);
    atomic_store(&sig_ready, 1);
    int sig;
    if (sigwait(&rt, &sig))
        die("sigwait");
    PARKED(D9_CALL_SIGNAL_WAIT);
    struct timespec wait = {WAIT_NS / 1000000000LL, 0}, zero = {0, 0};
    if (sigtimedwait(&rt, NULL, &wait) < 0)
        die("sigtimedwait");
    PARKED_TIMED(D9_CALL_SIGNAL_WAIT);
    if (sigwaitinfo(&rt, NULL) < 0)
        die("sigwaitinfo");
    PARKED(D9_CALL_SIGNAL_WAIT);
    if (sigtimedwait(&rt, NULL, &zero) >= 0 || errno != EAGAIN)
        die("sigtimedwait with nothing pending");
    me->nowait++;
    sigdelset(&open, SIGUSR1);
    sigsuspend(&open); /* the SIGUSR1 sent at the start is pending: it returns at once */
    PARKED(D9_CALL_SIGNAL_WAIT);
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL); /* one that came since runs its handler here */
    pause();
    PARKED(D9_CALL_SIGNAL_WAIT);
    atomic_store(&pause_done, 1);
}

/* The main thread's side: the signals above, then SIGUSR1 every ms until
 * gt-signals is past its pause. */
static void send_signals(struct gt_thread *t)
{
    while (!atomic_load(&sig_ready))
        sched_yield();
    for (int i = 0; i < 3; i++)
        pthread_kill(t->handle, SIGRTMIN + 2);
    pthread_kill(t->handle, SIGUSR1);
    while (!atomic_load(&pause_done)) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
        PARKED(D9_CALL_NANOSLEEP);
        pthread_kill(t->handle, SIGUSR1);
    }
}

/* ---- Blocking sockets: gt-sock-srv serves gt-sock-cli ----------------- */

#define SOCK_BYTES 10 /* the bytes the client sends one at a time, 1 ms apart */
static _Atomic int sock_port, sock_phase, full_pair, full_pipe, pipe_w, nb_pipe_w, block_evfd, cli_tid, srv_tid;

/* The server's call on a blocking socket fd: a park of call. */
static void sock_parked(unsigned call, int fd, long ret, const char *what)
{
    if (ret < 0)
        die(what);
    PARKED(call);
    me->fd_parks[me->nfd_parks++] = fd;
}

static int listener(int type)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4))
        die("listener");
    return fd;
}

static void wait_phase(int phase)
{
    while (atomic_load(&sock_phase) < phase)
        sched_yield();
}

extern ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
extern ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
extern ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
                              socklen_t *alen);

/* Sends to fd until its buffer is full. */
static void fill(int fd)
{
    static const char block[1024];
    while (send(fd, block, sizeof block, MSG_DONTWAIT) > 0)
        ;
    if (errno != EAGAIN)
        die("fill");
}

/* Returns once ready(the text of /proc/self/task/TID/FILE) says so, or
 * after 5 s (what the caller waits for may then not hold, and the test
 * says so). Spins with sched_yield: nothing it calls is a park. */
static void wait_task(int tid, const char *file, int (*ready)(const char *text))
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n > 0 && (buf[n] = 0, ready(buf)))
            return;
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 5);
}

/* A stat text whose state is S (sleeping): gt-sock-cli in its send into
 * the full pair, gt-sock-srv in its read, whatever the machine's load. */
static int asleep(const char *stat)
{
    const char *p = strrchr(stat, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

/* After phase, once the client waits in its send, 20 ms, then everything
 * the client's full pair (or the pipe whose read end *pipe_rd is) holds;
 * then phase + 1. */
static void drain_after(int phase, _Atomic int *pipe_rd)
{
    wait_phase(phase);
    wait_task(atomic_load(&cli_tid), "stat", asleep);
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    PARKED(D9_CALL_NANOSLEEP);
    char buf[4096];
    while ((pipe_rd ? read(atomic_load(pipe_rd), buf, sizeof buf) /* non-blocking */
                         : recv(atomic_load(&full_pair), buf, sizeof buf, MSG_DONTWAIT)) > 0)
        ;
    atomic_store(&sock_phase, phase + 1);
}

static void sock_server(void)
{
    atomic_store(&srv_tid, gettid());
    char b[2];
    int lfd = listener(SOCK_STREAM), nb = listener(SOCK_STREAM | SOCK_NONBLOCK);
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    if (getsockname(lfd, (struct sockaddr *)&a, &alen))
        die("getsockname");
    atomic_store(&sock_port, ntohs(a.sin_port));
    int c = accept(lfd, NULL, NULL);
    sock_parked(D9_CALL_ACCEPT, lfd, c, "accept");
    /* SOCK_BYTES one-byte reads, through each receiving call. */
    struct iovec iov = {b, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    sock_parked(D9_CALL_READ, c, read(c, b, 1), "read");
    sock_parked(D9_CALL_READ, c, __read_chk(c, b, 1, sizeof b), "__read_chk");
    sock_parked(D9_CALL_RECV, c, recv(c, b, 1, 0), "recv");
    sock_parked(D9_CALL_RECV, c, __recv_chk(c, b, 1, sizeof b, 0), "__recv_chk");
    sock_parked(D9_CALL_RECV, c, recvfrom(c, b, 1, 0, NULL, NULL), "recvfrom");
    sock_parked(D9_CALL_RECV, c, __recvfrom_chk(c, b, 1, sizeof b, 0, NULL, NULL), "__recvfrom_chk");
    for (int i = 6; i < SOCK_BYTES - 2; i++)
        sock_parked(D9_CALL_RECV, c, recvmsg(c, &mh, 0), "recvmsg");
    struct mmsghdr mm = {.msg_hdr = mh};
    sock_parked(D9_CALL_RECV, c, recvmmsg(c, &mm, 1, 0, NULL), "recvmmsg");
    sock_parked(D9_CALL_READ, c, readv(c, &iov, 1), "readv");
    /* Calls that cannot wait: none parks. The client sends nothing more
     * until phase 1. */
    if (recv(c, b, 1, MSG_DONTWAIT) >= 0 || errno != EAGAIN)
        die("recv MSG_DONTWAIT with nothing sent");
    int one = 1, zero = 0;
    if (fcntl(c, F_SETFL, O_NONBLOCK) || read(c, b, 1) >= 0 || errno != EAGAIN)
        die("read on a non-blocking socket");
    if (accept4(nb, NULL, NULL, 0) >= 0 || errno != EAGAIN)
        die("accept4 on a non-blocking listener");
    if (ioctl(c, FIONBIO, &one) || ioctl(c, FIONBIO, &zero)) /* blocking again */
        die("FIONBIO");
    atomic_store(&sock_phase, 1);
    int d = dup(c); /* a copy of a blocking socket blocks too */
    sock_parked(D9_CALL_READ, d, read(d, b, 1), "read of a copy after FIONBIO"); /* the last byte */
    close(d);
    sock_parked(D9_CALL_READ, c, read(c, b, 1), "read to the end");   /* 0: the client closed */
    /* Accepted with SOCK_NONBLOCK: its read does not wait. */
    int c2 = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    sock_parked(D9_CALL_ACCEPT4, lfd, c2, "accept4");
    atomic_store(&sock_phase, 2);
    while (read(c2, b, 1) != 0) /* EAGAIN until the client's byte, then its close */
        sched_yield();
    /* A blocking socketpair: its read parks even when data is waiting. */
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) || send(sp[1], "x", 1, MSG_DONTWAIT) != 1)
        die("socketpair");
    sock_parked(D9_CALL_RECV, sp[0], recv(sp[0], b, 1, 0), "recv on a socketpair");
    close(sp[0]);
    close(sp[1]);
    drain_after(3, NULL);
    drain_after(5, NULL);
    drain_after(7, NULL);
    drain_after(9, NULL);
    drain_after(11, NULL);
    wait_phase(13);
    close(atomic_load(&full_pair));
    /* A blocking pipe's read end parks; a non-blocking one's does not, until
     * F_SETFL makes it blocking. */
    int pp[2], np[2];
    if (pipe2(pp, O_CLOEXEC) || pipe2(np, O_CLOEXEC | O_NONBLOCK))
        die("pipe2");
    atomic_store(&pipe_w, pp[1]);
    atomic_store(&nb_pipe_w, np[1]);
    atomic_store(&sock_phase, 14);
    sock_parked(D9_CALL_READ, pp[0], read(pp[0], b, 1), "read of a blocking pipe");
    if (read(np[0], b, 1) >= 0 || errno != EAGAIN)
        die("read of an empty non-blocking pipe");
    if (fcntl(np[0], F_SETFL, 0))
        die("F_SETFL");
    atomic_store(&sock_phase, 15);
    sock_parked(D9_CALL_READ, np[0], readv(np[0], &iov, 1), "readv of a pipe made blocking");
    /* eventfds: a non-blocking one's reads do not wait, a blocking one's park. */
    int ef = eventfd(0, EFD_CLOEXEC), en = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    eventfd_t v;
    if (ef < 0 || en < 0 || read(en, &v, sizeof v) >= 0 || errno != EAGAIN || eventfd_read(en, &v) == 0 ||
        errno != EAGAIN)
        die("reads of an empty non-blocking eventfd");
    atomic_store(&block_evfd, ef);
    atomic_store(&sock_phase, 16);
    sock_parked(D9_CALL_READ, ef, read(ef, &v, sizeof v), "read of a blocking eventfd");
    atomic_store(&sock_phase, 17);
    sock_parked(D9_CALL_READ, ef, eventfd_read(ef, &v), "eventfd_read of a blocking eventfd");
    /* A read right after a poll that found its fd ready waited in the poll
     * (a park, call poll): it is no park. So after a zero-timeout poll. */
    int sp2[2], ready = eventfd(1, EFD_CLOEXEC); /* blocking, and readable */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp2) || send(sp2[1], "xy", 2, MSG_DONTWAIT) != 2 ||
        ready < 0)
        die("socketpair or eventfd");
    struct pollfd pf[2] = {{.fd = sp2[0], .events = POLLIN}, {.fd = ready, .events = POLLIN}};
    if (poll(pf, 2, -1) != 2)
        die("poll");
    PARKED(D9_CALL_POLL);
    if (recv(sp2[0], b, 1, 0) != 1 || read(ready, &v, sizeof v) != sizeof v)
        die("reads after a poll");
    if (poll(pf, 1, 0) != 1)
        die("zero-timeout poll");
    me->nowait++;
    if (read(sp2[0], b, 1) != 1)
        die("read after a zero-timeout poll");
    close(sp2[0]);
    close(sp2[1]);
    close(ready);
    drain_after(18, &full_pipe);
    /* fds the agent did not see made (a raw system call here; an inherited
     * or received fd alike): the first read learns what they are. */
    int rs[2], rn[2], rp[2];
    if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rs) ||
        syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, rn) ||
        syscall(SYS_pipe2, rp, O_CLOEXEC))
        die("raw socketpair or pipe2");
    if (send(rs[1], "r", 1, MSG_DONTWAIT) != 1 || write(rp[1], "p", 1) != 1)
        die("writes to unseen fds");
    sock_parked(D9_CALL_RECV, rs[0], recv(rs[0], b, 1, 0), "recv of an unseen blocking socket");
    sock_parked(D9_CALL_READ, rp[0], read(rp[0], b, 1), "read of an unseen blocking pipe");
    if (recv(rn[0], b, 1, 0) >= 0 || errno != EAGAIN)
        die("recv of an unseen non-blocking socket");
    for (int i = 0; i < 2; i++) {
        close(rs[i]);
        close(rn[i]);
        close(rp[i]);
    }
    close(ef);
    close(en);
    for (int i = 0; i < 2; i++) {
        close(pp[i]);
        close(np[i]);
    }
    close(c2);
    close(c);
    close(nb);
    close(lfd);
}

/* A connect of a blocking socket: a park (call connect) on its fd. */
static int sock_connect(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atomic_load(&sock_port)),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    sock_parked(D9_CALL_CONNECT, fd, connect(fd, (struct sockaddr *)&a, sizeof a), "connect");
    return fd;
}

static void sock_client(void)
{
    atomic_store(&cli_tid, gettid());
    while (!atomic_load(&sock_port))
        sched_yield();
    int fd = sock_connect();
    for (int i = 0; i < SOCK_BYTES; i++) {
        struct timespec d = {0, 1000000}; /* the server's read waits */
        nanosleep(&d, NULL);
        PARKED(D9_CALL_NANOSLEEP);
        if (send(fd, "x", 1, MSG_DONTWAIT) != 1) /* not timed: no send park */
            die("client send");
    }
    wait_phase(1);
    if (send(fd, "y", 1, MSG_DONTWAIT) != 1)
        die("client send");
    close(fd);
    fd = sock_connect();
    wait_phase(2);
    if (send(fd, "z", 1, MSG_DONTWAIT) != 1)
        die("client send 2");
    close(fd);
    /* A send, a write, a writev, a sendfile and a sendmmsg into a full
     * blocking socketpair: each waits until gt-sock-srv drains it, 20 ms
     * later, and so parks. */
    int sp[2], small = 4096;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) ||
        setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small))
        die("socketpair to fill");
    atomic_store(&full_pair, sp[1]);
    fill(sp[0]);
    atomic_store(&sock_phase, 3);
    sock_parked(D9_CALL_SEND, sp[0], send(sp[0], "s", 1, 0), "send into a full socket");
    wait_phase(4); /* drained */
    fill(sp[0]);
    atomic_store(&sock_phase, 5);
    sock_parked(D9_CALL_WRITE, sp[0], write(sp[0], "w", 1), "write into a full socket");
    wait_phase(6);
    fill(sp[0]);
    atomic_store(&sock_phase, 7);
    struct iovec iov = {"v", 1};
    sock_parked(D9_CALL_WRITE, sp[0], writev(sp[0], &iov, 1), "writev into a full socket");
    wait_phase(8);
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC); /* sendfile reads a file */
    if (src < 0)
        die("open /proc/self/exe");
    fill(sp[0]);
    atomic_store(&sock_phase, 9);
    sock_parked(D9_CALL_SEND, sp[0], sendfile(sp[0], src, NULL, 1), "sendfile into a full socket");
    close(src);
    wait_phase(10);
    fill(sp[0]);
    atomic_store(&sock_phase, 11);
    struct mmsghdr mm = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
    sock_parked(D9_CALL_SEND, sp[0], sendmmsg(sp[0], &mm, 1, 0), "sendmmsg into a full socket");
    wait_phase(12);
    atomic_store(&sock_phase, 13); /* the server may close its end now */
    close(sp[0]);
    /* A byte into each of the server's pipes (with write, then writev),
     * then 1 into its eventfd with write and with eventfd_write, each once
     * the server waits in its read: wakes of that read. */
    const uint64_t one = 1;
    struct iovec p1 = {"p", 1};
    for (int phase = 14; phase <= 17; phase++) {
        wait_phase(phase);
        wait_task(atomic_load(&srv_tid), "stat", asleep);
        int rc = phase == 14   ? write(atomic_load(&pipe_w), "p", 1) != 1
                 : phase == 15 ? writev(atomic_load(&nb_pipe_w), &p1, 1) != 1
                 : phase == 16 ? write(atomic_load(&block_evfd), &one, sizeof one) != sizeof one
                               : eventfd_write(atomic_load(&block_evfd), 1) != 0;
        if (rc)
            die("pipe or eventfd write");
        WOKE(phase <= 15 ? D9_CALL_PIPE_WRITE : D9_CALL_EVENTFD_WRITE);
        me->fd_wakees[me->nfd_wakees++] = atomic_load(&srv_tid);
    }
    /* A write into a full pipe made blocking by F_SETFL (its read end is
     * not, and in no epoll set: no wake) waits until gt-sock-srv drains it:
     * a park (call write). */
    int fp[2];
    if (pipe2(fp, O_CLOEXEC | O_NONBLOCK))
        die("pipe2 to fill");
    while (write(fp[1], (char[4096]){0}, 4096) > 0)
        ;
    if (errno != EAGAIN || fcntl(fp[1], F_SETFL, 0))
        die("fill the pipe");
    atomic_store(&full_pipe, fp[0]);
    atomic_store(&sock_phase, 18);
    sock_parked(D9_CALL_WRITE, fp[1], write(fp[1], "q", 1), "write into a full pipe");
    wait_phase(19);
    close(fp[0]);
    close(fp[1]);
}

static pid_t main_tid;

/* A syscall text of a thread in the futex system call (202). */
static int in_futex(const char *syscall) { return !strncmp(syscall, "202 ", 4); }

/* Exits once the main thread waits in its join of it: /proc shows that
 * thread in a futex wait (the join's target may be 0 if 5 s pass first,
 * and the test says so). */
static void joinee(void) { wait_task(main_tid, "syscall", in_futex); }

/* epoll_ctl, counted in "epoll_ctls" when it succeeds on an fd the agent
 * tracks (recorded: an eventfd or a pipe's read end). */
static int ctl(int epfd, int op, int fd, struct epoll_event *ev, int recorded)
{
    int ret = epoll_ctl(epfd, op, fd, ev);
    if (ret == 0 && recorded) {
        int *c = me->ctls[me->nctls++];
        c[0] = op, c[1] = epfd, c[2] = fd;
    }
    return ret;
}

static void print_tids(const char *key, const pid_t *tids, int n)
{
    printf(",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", (int)tids[i]);
    printf("]");
}

/* ---- Report ------------------------------------------------------------ */

static void report(struct gt_thread *main_t)
{
    struct gt_thread total = {0};
    int n = atomic_load(&nthreads);
    printf("{\"pid\":%d,\"wait_ns\":%lld,\"threads_created\":%d,\"threads\":[", (int)getpid(), WAIT_NS, n - 1);
    for (int i = 0; i < n; i++) {
        struct gt_thread *t = &threads[i];
        printf("%s{\"tid\":%d,\"parent\":%d,\"name\":\"%s\",\"created\":%s,", i ? "," : "",
               (int)t->tid, (int)t->parent, t->name, t == main_t ? "false" : "true");
        print_counts("parks", t->parks);
        printf(",");
        print_counts("wakes", t->wakes);
        printf(",");
        print_counts("timed", t->timed);
        printf(",\"nowait\":%u", t->nowait);
        print_tids("joined", t->joined, t->njoined);
        print_tids("joined_live", t->joined_live, t->njoined_live);
        print_tids("fd_parks", t->fd_parks, t->nfd_parks);
        print_tids("fd_wakees", t->fd_wakees, t->nfd_wakees);
        printf(",\"epoll_ctls\":[");
        for (int k = 0; k < t->nctls; k++)
            printf("%s[%d,%d,%d]", k ? "," : "", t->ctls[k][0], t->ctls[k][1], t->ctls[k][2]);
        printf("]}");
        for (int k = 0; k < D9_CALL_COUNT; k++) {
            total.parks[k] += t->parks[k];
            total.wakes[k] += t->wakes[k];
        }
        total.nowait += t->nowait;
    }
    printf("],\"totals\":{");
    print_counts("parks", total.parks);
    printf(",");
    print_counts("wakes", total.wakes);
    printf(",\"nowait\":%u}}\n", total.nowait);
}

int main(int argc, char **argv)
{
    static char comm[16];
    struct gt_thread *main_t = &threads[atomic_fetch_add(&nthreads, 1)];
    me = main_t;
    main_tid = gettid();
    prctl(PR_GET_NAME, comm, 0, 0, 0);
    main_t->name = comm;
    main_t->tid = gettid();

    if (argc == 3 && strcmp(argv[1], "--burst") == 0) {
        burst_n = strtol(argv[2], NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--burst N]\n", argv[0]);
        return 2;
    }

    /* The main thread's first event: a short sleep. */
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
    PARKED(D9_CALL_NANOSLEEP);

    if (sem_init(&s_ab, 0, 0) || sem_init(&s_ba, 0, 0))
        die("sem_init");
    if (burst_n > 0) {
        struct gt_thread *b = spawn("gt-burst", 0, burster);
        joined(b, pthread_join(b->handle, NULL), 0);
    } else {
        epfd = epoll_create1(EPOLL_CLOEXEC);
        evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* as runtimes make it: its reads never park */
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = evfd};
        struct epoll_event pev = {.events = EPOLLIN, .data.fd = -1};
        int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* untracked: no event */
        if (epfd < 0 || evfd < 0 || sock < 0 || pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0 ||
            ctl(epfd, EPOLL_CTL_ADD, evfd, &ev, 1) || ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &pev, 1) ||
            ctl(epfd, EPOLL_CTL_MOD, evfd, &ev, 1) || ctl(epfd, EPOLL_CTL_MOD, pipefd[0], &pev, 1) ||
            ctl(epfd, EPOLL_CTL_ADD, evfd, &ev, 1) != -1 || errno != EEXIST || ctl(epfd, EPOLL_CTL_ADD, sock, &ev, 0) ||
            ctl(epfd, EPOLL_CTL_DEL, sock, NULL, 0) || close(sock))
            die("epoll/eventfd setup");
        struct gt_thread *ts[] = {
            spawn("gt-poller", 0, poller), spawn("gt-futex", 0, futexer),
            spawn("gt-cond-a", 0, cond_a), spawn("gt-cond-b", 0, cond_b),
            spawn("gt-sem-a", 0, sem_a),   spawn("gt-sleeper", 1, sleeper),
            spawn("gt-sock-srv", 0, sock_server), spawn("gt-sock-cli", 0, sock_client),
        };
        struct sigaction sa = {.sa_handler = on_usr1};
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL))
            die("sigaction");
        struct gt_thread *sw = spawn("gt-signals", 0, signal_waiter);
        send_signals(sw);
        joined(sw, pthread_join(sw->handle, NULL), 0);
        struct gt_thread *j = spawn("gt-joinee", 0, joinee);
        while (!__atomic_load_n(&j->tid, __ATOMIC_ACQUIRE)) /* started: the agent knows it */
            sched_yield();
        joined(j, pthread_join(j->handle, NULL), 0);
        me->joined_live[me->njoined_live++] = j->tid;
        struct timespec abs = deadline(CLOCK_REALTIME);
        joined(ts[0], pthread_timedjoin_np(ts[0]->handle, NULL, &abs), 1);
        abs = deadline(CLOCK_MONOTONIC);
        joined(ts[1], pthread_clockjoin_np(ts[1]->handle, NULL, CLOCK_MONOTONIC, &abs), 1);
        for (size_t i = 2; i < sizeof ts / sizeof ts[0]; i++)
            joined(ts[i], pthread_join(ts[i]->handle, NULL), 0);
    }
    report(main_t);
    return 0;
}
