/* demo_server.c - dial9's bundled demo: a small async-runtime-shaped service
 * with its own bounded load generator, so a trace has something to show.
 *
 *   acceptor      epoll on the listening socket; hands each connection to an
 *                 I/O worker (queue + 8-byte write to the worker's eventfd)
 *   io-worker-N   one epoll set each: its eventfd and its connections; each
 *                 request becomes a job for the pool
 *   pool-N        compute threads: take jobs from a mutex+condvar queue, hand
 *                 results back through the owning worker's eventfd
 *   client-N      request/response over 127.0.0.1 until the time is up
 *
 * Under the agent, each io worker also records an application event
 * (include/dial9.h) when it answers: "req.served", valued with the ns from
 * the request's last byte read to its answer written, so the trace shows
 * the service's own view of each request beside the parks and wakes.
 *
 * Usage: demo_server [--workers N] [--pool N] [--clients N] [--seconds S]
 * Ends by itself and prints its stats; the line "demo: requests=R jobs=J"
 * is for scripts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DIAL9_WEAK /* runs without the agent too */
#include <dial9.h>

#define MSG 16   /* fixed-size request and response */
#define MAXN 16  /* max threads of each kind */

struct conn;
struct job {
    struct conn *c;
    uint64_t arg, result;
    uint64_t read_ns; /* CLOCK_MONOTONIC when the request was complete (0: not timed) */
    struct job *next;
};

struct worker {
    int id, epfd, evfd;
    pid_t tid;
    pthread_t th;
    pthread_mutex_t mu;     /* guards the two lists below */
    struct conn *incoming;  /* from the acceptor */
    struct job *done;       /* from the pool */
    unsigned long conns, requests;
};

struct conn {
    int fd, have, busy, closed;
    char buf[MSG];
    struct worker *w;
    struct conn *next;
};

struct pooled {
    pid_t tid;
    pthread_t th;
    unsigned long jobs;
};

struct client {
    int id;
    pid_t tid;
    pthread_t th;
    unsigned long requests;
};

static int nworkers = 2, npool = 2, nclients = 4;
static double seconds = 3.0;
static int port, listen_fd, acc_evfd;
static _Atomic int stopping;
static struct worker workers[MAXN];
static struct pooled pool[MAXN];
static struct client clients[MAXN];
static pid_t acceptor_tid;
static unsigned long accepted;
static pthread_t acceptor_th;

/* The job queue: mutex + condvar, FIFO. */
static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER;
static struct job *qhead, **qtail = &qhead;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void name_self(const char *fmt, int i)
{
    char name[16];
    snprintf(name, sizeof name, fmt, i);
    pthread_setname_np(pthread_self(), name);
}

static void kick(int evfd)
{
    const uint64_t one = 1;
    if (write(evfd, &one, sizeof one) != sizeof one)
        die("write eventfd");
}

/* The "req.served" event's id, 0 without the agent (main). */
static int served_id;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- Pool ---------------------------------------------------------------- */

static void *pool_main(void *arg)
{
    struct pooled *p = arg;
    p->tid = gettid();
    name_self("pool-%d", (int)(p - pool));
    for (;;) {
        pthread_mutex_lock(&qmu);
        while (!qhead && !atomic_load(&stopping))
            pthread_cond_wait(&qcv, &qmu);
        struct job *j = qhead;
        if (!j) {
            pthread_mutex_unlock(&qmu);
            return NULL;
        }
        qhead = j->next;
        if (!qhead)
            qtail = &qhead;
        pthread_mutex_unlock(&qmu);

        /* The "computation": a few microseconds of xorshift. */
        uint64_t x = j->arg | 1;
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        j->result = x;
        p->jobs++;

        struct worker *w = j->c->w;
        pthread_mutex_lock(&w->mu);
        j->next = w->done;
        w->done = j;
        pthread_mutex_unlock(&w->mu);
        kick(w->evfd);
    }
}

static void submit(struct job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&qmu);
    *qtail = j;
    qtail = &j->next;
    pthread_cond_signal(&qcv);
    pthread_mutex_unlock(&qmu);
}

/* ---- I/O workers --------------------------------------------------------- */

static void conn_free_if_done(struct conn *c)
{
    if (c->closed && !c->busy)
        free(c);
}

static void conn_close(struct conn *c)
{
    epoll_ctl(c->w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->closed = 1;
    conn_free_if_done(c);
}

static void conn_readable(struct conn *c)
{
    for (;;) {
        ssize_t n = read(c->fd, c->buf + c->have, MSG - c->have);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            conn_close(c);
            return;
        }
        if (n < 0)
            return;
        c->have += (int)n;
        if (c->have == MSG) {
            /* One request in flight per connection: the client waits. */
            struct job *j = calloc(1, sizeof *j);
            if (!j)
                die("calloc");
            j->c = c;
            j->arg = strtoull(c->buf, NULL, 10);
            j->read_ns = served_id > 0 ? now_ns() : 0;
            c->have = 0;
            c->busy = 1;
            c->w->requests++;
            submit(j);
            return;
        }
    }
}

static void job_done(struct job *j)
{
    struct conn *c = j->c;
    c->busy = 0;
    if (!c->closed) {
        char out[MSG];
        snprintf(out, sizeof out, "%015llu", (unsigned long long)(j->result % 1000000000000000ULL));
        out[MSG - 1] = '\n';
        /* 16 bytes into an idle socket's buffer: never short. */
        if (write(c->fd, out, MSG) != MSG)
            conn_close(c);
        else if (j->read_ns)
            dial9_event(served_id, (long long)(now_ns() - j->read_ns));
    } else {
        conn_free_if_done(c);
    }
    free(j);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    name_self("io-worker-%d", w->id);
    struct epoll_event evs[32];
    while (!atomic_load(&stopping)) {
        int n = epoll_wait(w->epfd, evs, 32, 1000);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr) {
                conn_readable(evs[i].data.ptr);
                continue;
            }
            uint64_t v;
            if (read(w->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
                die("read eventfd");
            pthread_mutex_lock(&w->mu);
            struct conn *in = w->incoming;
            struct job *done = w->done;
            w->incoming = NULL;
            w->done = NULL;
            pthread_mutex_unlock(&w->mu);
            while (in) {
                struct conn *c = in;
                in = in->next;
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
                if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev))
                    die("epoll_ctl conn");
                w->conns++;
            }
            while (done) {
                struct job *j = done;
                done = done->next;
                job_done(j);
            }
        }
    }
    return NULL;
}

/* ---- Acceptor ------------------------------------------------------------ */

static void *acceptor_main(void *arg)
{
    acceptor_tid = gettid();
    name_self("acceptor", 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = listen_fd};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev))
        die("acceptor epoll");
    ev.data.fd = acc_evfd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, acc_evfd, &ev))
        die("acceptor epoll");
    int next = 0;
    while (!atomic_load(&stopping)) {
        if (epoll_wait(ep, &ev, 1, -1) <= 0 || ev.data.fd != listen_fd)
            continue;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int on = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            die("calloc");
        c->fd = fd;
        c->w = &workers[next];
        next = (next + 1) % nworkers;
        pthread_mutex_lock(&c->w->mu);
        c->next = c->w->incoming;
        c->w->incoming = c;
        pthread_mutex_unlock(&c->w->mu);
        kick(c->w->evfd);
        accepted++;
    }
    close(ep);
    return NULL;
}

/* ---- Load generator ------------------------------------------------------ */

static int full_io(int fd, char *buf, int len, int writing)
{
    for (int done = 0; done < len;) {
        if (!writing) {
            /* Wait for the answer in poll(): the client's park. The read
             * after it takes what is there (MSG_DONTWAIT): it never waits,
             * and is never a park, even when the agent's writer has taken
             * the thread's poll before it (socket_wait.h). */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 10000) <= 0)
                return -1;
        }
        ssize_t n = writing ? write(fd, buf + done, len - done) : recv(fd, buf + done, len - done, MSG_DONTWAIT);
        if (n <= 0)
            return -1;
        done += (int)n;
    }
    return 0;
}

static void *client_main(void *arg)
{
    struct client *cl = arg;
    cl->tid = gettid();
    name_self("client-%d", cl->id);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
        die("client connect");
    double end = now_s() + seconds;
    char buf[MSG];
    while (now_s() < end) {
        snprintf(buf, sizeof buf, "%015lu", cl->requests * 7919 + (unsigned long)cl->id);
        buf[MSG - 1] = '\n';
        if (full_io(fd, buf, MSG, 1) || full_io(fd, buf, MSG, 0)) {
            fprintf(stderr, "demo: client-%d: request failed\n", cl->id);
            exit(1);
        }
        cl->requests++;
    }
    close(fd);
    return NULL;
}

/* ---- Main ---------------------------------------------------------------- */

static int arg_int(const char *s, int lo, int hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi) {
        fprintf(stderr, "demo: bad number %s (want %d..%d)\n", s, lo, hi);
        exit(2);
    }
    return (int)v;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            goto usage;
        if (!strcmp(argv[i], "--workers"))
            nworkers = arg_int(argv[++i], 1, MAXN);
        else if (!strcmp(argv[i], "--pool"))
            npool = arg_int(argv[++i], 1, MAXN);
        else if (!strcmp(argv[i], "--clients"))
            nclients = arg_int(argv[++i], 1, MAXN);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = arg_int(argv[++i], 1, 600);
        else
            goto usage;
    }
    return;
usage:
    fprintf(stderr, "usage: demo_server [--workers N] [--pool N] [--clients N] [--seconds S]\n");
    exit(2);
}

static void start_listening(void)
{
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) ||
        listen(listen_fd, 128) || getsockname(listen_fd, (struct sockaddr *)&a, &len))
        die("listen");
    port = ntohs(a.sin_port);
}

static void report(void)
{
    unsigned long reqs = 0, served = 0, jobs = 0;
    printf("demo: 127.0.0.1:%d, %d io workers, %d pool threads, %d clients, %.0f s\n", port,
           nworkers, npool, nclients, seconds);
    printf("  %-12s tid %-7d accepted %lu\n", "acceptor", (int)acceptor_tid, accepted);
    for (int i = 0; i < nworkers; i++) {
        printf("  io-worker-%-2d tid %-7d connections %lu, requests %lu\n", i,
               (int)workers[i].tid, workers[i].conns, workers[i].requests);
        served += workers[i].requests;
    }
    for (int i = 0; i < npool; i++) {
        printf("  pool-%-7d tid %-7d jobs %lu\n", i, (int)pool[i].tid, pool[i].jobs);
        jobs += pool[i].jobs;
    }
    for (int i = 0; i < nclients; i++) {
        printf("  client-%-5d tid %-7d requests %lu\n", i, (int)clients[i].tid,
               clients[i].requests);
        reqs += clients[i].requests;
    }
    printf("demo: requests=%lu jobs=%lu\n", reqs, jobs);
    if (reqs != served || reqs != jobs) {
        fprintf(stderr, "demo: inconsistent: %lu requests, %lu served, %lu jobs\n", reqs,
                served, jobs);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (dial9_event_id)
        served_id = dial9_event_id("req.served");
    start_listening();
    acc_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (acc_evfd < 0)
        die("eventfd");
    for (int i = 0; i < nworkers; i++) {
        struct worker *w = &workers[i];
        w->id = i;
        pthread_mutex_init(&w->mu, NULL);
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        if (w->epfd < 0 || w->evfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev))
            die("worker setup");
        if (pthread_create(&w->th, NULL, worker_main, w))
            die("pthread_create");
    }
    for (int i = 0; i < npool; i++)
        if (pthread_create(&pool[i].th, NULL, pool_main, &pool[i]))
            die("pthread_create");
    if (pthread_create(&acceptor_th, NULL, acceptor_main, NULL))
        die("pthread_create");
    for (int i = 0; i < nclients; i++) {
        clients[i].id = i;
        if (pthread_create(&clients[i].th, NULL, client_main, &clients[i]))
            die("pthread_create");
    }
    for (int i = 0; i < nclients; i++)
        pthread_join(clients[i].th, NULL);

    /* Shut down: every thread wakes and sees the flag. */
    atomic_store(&stopping, 1);
    kick(acc_evfd);
    pthread_join(acceptor_th, NULL);
    for (int i = 0; i < nworkers; i++) {
        kick(workers[i].evfd);
        pthread_join(workers[i].th, NULL);
    }
    pthread_mutex_lock(&qmu);
    pthread_cond_broadcast(&qcv);
    pthread_mutex_unlock(&qmu);
    for (int i = 0; i < npool; i++)
        pthread_join(pool[i].th, NULL);
    report();
    return 0;
}
