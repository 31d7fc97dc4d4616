/* agent_threads.c - the agent's threading under ThreadSanitizer.
 *
 * Built with -fsanitize=thread and LINKED with the agent's objects (also
 * -fsanitize=thread), not preloaded: the program's calls reach the agent's
 * interposers first, whose dlsym(RTLD_NEXT) finds libtsan's interceptors,
 * so TSan sets a new thread up before the agent's trampoline runs, and sees
 * every lock, condvar and fd the agent passes on (real.c drops the symbol
 * versions under TSan: libtsan's interceptors have none).
 * The interposers are not exported (--exclude-libs, Makefile): libtsan
 * calls mmap, open, ... while it initialises, and would reach instrumented
 * agent code before TSan can run it (SEGV in __tsan_func_entry); the same
 * happens with a TSan agent preloaded before libtsan.
 *
 * Workload (test/integration/test_agent_tsan.sh sets a tiny segment size, a
 * 1 ms flush period and few thread slots, so the writer drains, rotates
 * and frees slots all the time):
 *   - four pairs of threads ping-pong ROUNDS times: condvar, futex through
 *     syscall(), eventfd (epoll_wait / poll, write / eventfd_write), and a
 *     blocking socketpair (recv parks; sends with MSG_DONTWAIT);
 *   - a spawner creates CHURN_WAVES waves of CHURN_WIDTH short-lived threads,
 *     joins each wave and calls dial9_flush() (the writer frees the exited
 *     slots: more threads are recorded than there are slots), and renames
 *     the dumper from outside (the writer re-reads its name);
 *   - a dumper calls dial9_dump() in a loop and raises the dump signal;
 *   - main, once all are joined: dial9_flush() then dial9_dump() (flight
 *     mode: the rest of the history goes to disk).
 * Each thread counts its own park and wake calls; main prints them as one
 * JSON object (the shape of test/progs/ground_truth.c's) for the test to
 * compare with what dial9-decode reads back.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dial9.h"
#include "dial9_format.h"
#include "../progs/call_counts.h"

#define ROUNDS 300
#define CHURN_WAVES 30
#define CHURN_WIDTH 4
#define MAX_THREADS (16 + CHURN_WAVES * CHURN_WIDTH)
#define WAIT_MS 5000 /* a wait ends by a wake, not by this */

struct th {
    char name[16];
    pid_t tid, parent;
    pthread_t handle;
    void (*body)(void);
    unsigned parks[D9_CALL_COUNT], wakes[D9_CALL_COUNT], nowait;
    _Atomic int named; /* the thread has named itself */
};

static struct th threads[MAX_THREADS];
static _Atomic int nthreads;
static __thread struct th *me;

/* Outcomes of dial9_flush / dial9_dump, from any thread. */
static _Atomic unsigned flush_ok, flush_fail, dump_ok, dump_nodata, dump_timeout, dump_other, signals;
static _Atomic int stop_dumper;
static struct th *dumper_t;
static char dumper_name[16]; /* the spawner's last name for the dumper */

#define PARKED(call) (me->parks[call]++)
#define WOKE(call) (me->wakes[call]++)

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void *start(void *arg)
{
    me = arg;
    me->tid = gettid();
    pthread_setname_np(pthread_self(), me->name);
    atomic_store(&me->named, 1);
    me->body();
    return NULL;
}

static struct th *spawn(const char *name, void (*body)(void))
{
    int i = atomic_fetch_add(&nthreads, 1);
    if (i >= MAX_THREADS)
        die("too many threads");
    struct th *t = &threads[i];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->body = body;
    t->parent = gettid();
    if (pthread_create(&t->handle, NULL, start, t))
        die("pthread_create");
    return t;
}

static void join(struct th *t)
{
    if (pthread_join(t->handle, NULL))
        die("pthread_join");
    PARKED(D9_CALL_JOIN);
}

static struct timespec deadline(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_sec += WAIT_MS / 1000;
    return ts;
}

/* ---- Condvar pair ------------------------------------------------------ */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn; /* under mu: 1 = cond-b's move */
static int cond_waiters; /* under mu: threads inside a wait on cv */

static void cond_wait_any(int r)
{
    struct timespec abs;
    cond_waiters++;
    if (r % 2) {
        abs = deadline(CLOCK_REALTIME);
        pthread_cond_timedwait(&cv, &mu, &abs);
    } else {
        pthread_cond_wait(&cv, &mu);
    }
    cond_waiters--;
    PARKED(D9_CALL_COND_WAIT);
}

/* Under mu. A signal nobody waits for does nothing and is not recorded. */
static void cond_wake_any(int r)
{
    if (r % 3 == 0) {
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
        while (turn == 1)
            cond_wait_any(r);
        pthread_mutex_unlock(&mu);
    }
}

static void cond_b(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        while (turn != 1)
            cond_wait_any(r);
        turn = 0;
        cond_wake_any(r + 1);
        pthread_mutex_unlock(&mu);
    }
}

/* ---- Futex pair: fword goes 2r+1 (ping's move done), 2r+2 (pong's) ---- */

static _Atomic uint32_t fword;

static void futex_wait(uint32_t val)
{
    struct timespec rel = {WAIT_MS / 1000, 0};
    syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, val, &rel, NULL, 0);
    PARKED(D9_CALL_FUTEX);
}

static void futex_wake(void)
{
    syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    WOKE(D9_CALL_FUTEX);
}

static void ping(void)
{
    for (uint32_t r = 0; r < ROUNDS; r++) {
        atomic_store(&fword, 2 * r + 1);
        futex_wake();
        do /* at least one wait a round: the agent records it whatever it returns */
            futex_wait(2 * r + 1);
        while (atomic_load(&fword) != 2 * r + 2);
    }
}

static void pong(void)
{
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint32_t v;
        while ((v = atomic_load(&fword)) != 2 * r + 1)
            futex_wait(v);
        atomic_store(&fword, 2 * r + 2);
        futex_wake();
    }
}

/* ---- Eventfd pair: epoll_wait + write one way, poll + eventfd_write back */

static int epfd, req_fd, ack_fd;

static void ev_server(void)
{
    struct epoll_event ev[2];
    uint64_t v;
    for (int r = 0; r < ROUNDS; r++) {
        epoll_wait(epfd, ev, 2, 0); /* zero timeout: counted, not a park */
        me->nowait++;
        int n;
        do {
            n = epoll_wait(epfd, ev, 2, WAIT_MS);
            PARKED(D9_CALL_EPOLL_WAIT);
        } while (n <= 0);
        if (read(req_fd, &v, sizeof v) != sizeof v)
            die("read req_fd");
        if (eventfd_write(ack_fd, 1))
            die("eventfd_write");
        WOKE(D9_CALL_EVENTFD_WRITE);
    }
}

static void ev_client(void)
{
    const uint64_t one = 1;
    uint64_t v;
    for (int r = 0; r < ROUNDS; r++) {
        if (write(req_fd, &one, sizeof one) != sizeof one)
            die("write req_fd");
        WOKE(D9_CALL_EVENTFD_WRITE);
        struct pollfd p = {.fd = ack_fd, .events = POLLIN};
        int n;
        do {
            n = poll(&p, 1, WAIT_MS);
            PARKED(D9_CALL_POLL);
        } while (n <= 0);
        if (read(ack_fd, &v, sizeof v) != sizeof v)
            die("read ack_fd");
    }
}

/* ---- Socket pair: blocking recv both ways; a send never waits ---------- */

static int sk[2];

static void sock_turn(int fd, int first_send)
{
    char b = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int half = 0; half < 2; half++) {
            if (half == !first_send) {
                if (send(fd, &b, 1, MSG_DONTWAIT) != 1)
                    die("send");
            } else {
                if (recv(fd, &b, 1, 0) != 1)
                    die("recv");
                PARKED(D9_CALL_RECV);
            }
        }
    }
}

static void sock_a(void) { sock_turn(sk[0], 1); }
static void sock_b(void) { sock_turn(sk[1], 0); }

/* ---- Thread churn ------------------------------------------------------ */

static void churner(void)
{
    static pthread_cond_t nobody = PTHREAD_COND_INITIALIZER;
    uint32_t word = 0;
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    WOKE(D9_CALL_FUTEX);
    pthread_cond_signal(&nobody); /* no waiter: not recorded, not counted */
    struct timespec d = {0, 200000};
    nanosleep(&d, NULL);
    PARKED(D9_CALL_NANOSLEEP);
}

static void spawner(void)
{
    for (int w = 0; w < CHURN_WAVES; w++) {
        struct th *wave[CHURN_WIDTH];
        char name[16];
        for (int i = 0; i < CHURN_WIDTH; i++) {
            snprintf(name, sizeof name, "tc-%d-%d", w, i);
            wave[i] = spawn(name, churner);
        }
        for (int i = 0; i < CHURN_WIDTH; i++)
            join(wave[i]);
        /* Another thread's name: the writer re-reads it, at the latest in
         * the cycle that serves the flush below. */
        snprintf(dumper_name, sizeof dumper_name, "tdump-%d", w);
        pthread_setname_np(dumper_t->handle, dumper_name);
        /* Drains the wave's rings: the writer frees its slots for the next. */
        atomic_fetch_add(dial9_flush() == 0 ? &flush_ok : &flush_fail, 1);
    }
}

/* ---- Dumps --------------------------------------------------------------- */

static void count_dump(int rc, int err)
{
    if (rc == 0)
        atomic_fetch_add(&dump_ok, 1);
    else if (err == ENODATA)
        atomic_fetch_add(&dump_nodata, 1);
    else if (err == ETIMEDOUT)
        atomic_fetch_add(&dump_timeout, 1);
    else {
        fprintf(stderr, "dial9_dump: %s\n", strerror(err));
        atomic_fetch_add(&dump_other, 1);
    }
}

static void dumper(void)
{
    for (int i = 0; !atomic_load(&stop_dumper); i++) {
        int rc = dial9_dump("tsan-dumper");
        count_dump(rc, errno);
        if (i % 8 == 3) { /* the agent's handler wakes the writer: a dump */
            if (kill(getpid(), SIGUSR2))
                die("kill");
            atomic_fetch_add(&signals, 1);
        }
        struct timespec d = {0, 3000000};
        nanosleep(&d, NULL);
        PARKED(D9_CALL_NANOSLEEP);
    }
}

/* ---- Report ------------------------------------------------------------ */

static void report(void)
{
    int n = atomic_load(&nthreads);
    printf("{\"pid\":%d,\"recording\":%d,\"flush_ok\":%u,\"flush_fail\":%u,\"dump_ok\":%u,\"dump_nodata\":%u,"
           "\"dump_timeout\":%u,\"dump_other\":%u,\"signals\":%u,\"renamed\":{\"tid\":%d,\"name\":\"%s\"},"
           "\"threads\":[",
           (int)getpid(), dial9_is_recording(), flush_ok, flush_fail, dump_ok, dump_nodata, dump_timeout,
           dump_other, signals, (int)dumper_t->tid, dumper_name);
    for (int i = 0; i < n; i++) {
        struct th *t = &threads[i];
        printf("%s{\"tid\":%d,\"parent\":%d,\"name\":\"%s\",", i ? "," : "", (int)t->tid, (int)t->parent,
               t->name);
        print_counts("parks", t->parks);
        printf(",");
        print_counts("wakes", t->wakes);
        printf(",\"nowait\":%u}", t->nowait);
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "usage: %s (configured by DIAL9_* variables)\n", argv[0]);
        return 2;
    }
    me = &threads[atomic_fetch_add(&nthreads, 1)];
    me->tid = gettid();
    snprintf(me->name, sizeof me->name, "agent_threads");
    struct timespec d = {0, 1000000}; /* main's first event: it is in the trace too */
    nanosleep(&d, NULL);
    PARKED(D9_CALL_NANOSLEEP);

    epfd = epoll_create1(EPOLL_CLOEXEC);
    req_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* as runtimes make them: reads never park */
    ack_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = req_fd};
    if (epfd < 0 || req_fd < 0 || ack_fd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, req_fd, &ev) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk))
        die("epoll/eventfd/socketpair setup");

    dumper_t = spawn("tdump", dumper);
    while (!atomic_load(&dumper_t->named)) /* its own name first, the spawner's after */
        sched_yield();
    struct th *ts[] = {
        spawn("tcond-a", cond_a), spawn("tcond-b", cond_b), spawn("tping", ping),
        spawn("tpong", pong),     spawn("tev-srv", ev_server), spawn("tev-cli", ev_client),
        spawn("tsock-a", sock_a), spawn("tsock-b", sock_b),    spawn("tspawner", spawner),
    };
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        join(ts[i]);
    atomic_store(&stop_dumper, 1);
    join(dumper_t);

    /* Everything is in the rings or the writer's hands: the flush makes it
     * written (continuous) or kept (flight), the dump writes what is kept. */
    atomic_fetch_add(dial9_flush() == 0 ? &flush_ok : &flush_fail, 1);
    int rc = dial9_dump("tsan-final");
    count_dump(rc, errno);
    report();
    return 0;
}
