/* story_sched.c - story 1 of issue 3, "the runtime woke the worker but the
 * kernel did not run it": ground truth for wake-to-run latency and kernel
 * scheduling delay.
 *
 * Four workers park, two on a futex (syscall(SYS_futex, FUTEX_WAIT)) and two
 * in epoll_wait on an eventfd. A waker wakes them one at a time, each only
 * once it sees the worker blocked in its syscall (/proc/self/task/T/syscall),
 * stamping CLOCK_MONOTONIC just before the wake call; the worker stamps the
 * return from its wait, then works (spins) --work-us before parking again.
 * With --hogs N, N threads spin too. The work matters: the kernel (EEVDF)
 * runs a thread that just woke from a short sleep almost at once, but
 * workers that use their share of CPUs oversubscribed by the hogs wait for
 * them milliseconds on the run queue, as in an overloaded service.
 *
 * Prints one JSON document: per worker its tid, latencies (ns) and
 * percentiles (nearest rank), its run_delay growth from its own
 * /proc/thread-self/schedstat (whole life, and the largest growth across
 * one wait, and between its first and last wake; and per wake when it
 * returned and the growth since the first wake), and how many wakes had
 * a stamp window interrupted by a preemption (getrusage ru_nivcsw moved);
 * the same latency figures over all wakes; per hog its run_delay
 * growth and involuntary context switches (getrusage RUSAGE_THREAD
 * ru_nivcsw), from its first to its last instruction; the waker's run_delay.
 * Usage: story_sched [--hogs N] [--rounds N] [--work-us N]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "now.h"

#define NWORKERS 4
#define MAX_ROUNDS 1000
#define MAX_HOGS 16

enum kind { FUTEX, EVENTFD };

struct worker {
    enum kind kind;
    char name[16];
    pthread_t thread;
    _Atomic pid_t tid;
    _Atomic uint32_t word;      /* futex: 1 = woken */
    int efd, epfd;              /* eventfd registered in the worker's own epoll set */
    _Atomic uint64_t wake_ts;   /* ns, stamped by the waker just before the wake call */
    _Atomic uint32_t done;      /* wakes handled so far */
    _Atomic int stop;           /* set before the last wake */
    uint64_t lat[MAX_ROUNDS];   /* ns, wake call -> return from the wait */
    uint32_t n;
    uint64_t rd_start, rd_end, rd_max_step; /* run_delay (ns): at start, at end, largest growth over one wait */
    uint64_t rd_first, rd_last; /* run_delay (ns) right after the first and the last wake */
    uint64_t woke[MAX_ROUNDS], rd_at[MAX_ROUNDS]; /* per wake: when it returned (ns), run_delay just after */
    /* Wakes where the waker (stamp -> wake call) or the worker (wait ->
     * stamp) was preempted: dial9 stamps inside those windows, so for these
     * its latency may differ from ours by the preemption. */
    _Atomic uint32_t tainted;
};

static struct worker workers[NWORKERS];
struct hog {
    pthread_t thread;
    pid_t tid;
    _Atomic int started;
    uint64_t run_delay;   /* ns, growth over its life */
    long nivcsw;          /* involuntary context switches over its life */
    uint64_t begin, end;  /* ns: just after the first readings, just before the last */
};

static struct hog hogs[MAX_HOGS];
static _Atomic int hogs_stop;
static void die(const char *what)
{
    fprintf(stderr, "story_sched: %s: %s\n", what, strerror(errno));
    exit(2);
}

static uint64_t work_ns; /* CPU work (spinning) per wake, ns */

/* The calling thread's run_delay (ns): 2nd field of /proc/thread-self/schedstat. */
static uint64_t run_delay(void)
{
    char buf[128] = "";
    unsigned long long on_cpu = 0, delay = 0;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open schedstat");
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0 || sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
        die("read schedstat");
    return delay;
}

static long nivcsw(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) < 0)
        die("getrusage");
    return ru.ru_nivcsw;
}

static void *hog_main(void *arg)
{
    struct hog *h = arg;
    uint64_t rd = run_delay();
    long cs = nivcsw();
    char name[16];
    snprintf(name, sizeof(name), "s1-hog-%d", (int)(h - hogs));
    pthread_setname_np(pthread_self(), name);
    h->tid = gettid();
    atomic_store(&h->started, 1);
    h->begin = now_ns();
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(&hogs_stop, memory_order_relaxed))
        x++;
    h->end = now_ns();
    h->nivcsw = nivcsw() - cs;
    h->run_delay = run_delay() - rd;
    return NULL;
}

/* Blocks until woken; returns when the wake arrived (spurious returns loop). */
static void wait_once(struct worker *w)
{
    if (w->kind == FUTEX) {
        while (atomic_load(&w->word) == 0)
            syscall(SYS_futex, &w->word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        return;
    }
    struct epoll_event ev;
    while (epoll_wait(w->epfd, &ev, 1, -1) != 1)
        ;
}

static void rearm(struct worker *w)
{
    if (w->kind == FUTEX) {
        atomic_store(&w->word, 0);
    } else {
        uint64_t v;
        if (read(w->efd, &v, sizeof(v)) != sizeof(v))
            die("read eventfd");
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->rd_start = run_delay();
    pthread_setname_np(pthread_self(), w->name);
    uint64_t prev = w->rd_start;
    atomic_store(&w->tid, gettid());
    for (;;) {
        long cs = nivcsw();
        wait_once(w);
        uint64_t ran = now_ns();
        if (nivcsw() != cs)
            atomic_fetch_add(&w->tainted, 1);
        if (w->n < MAX_ROUNDS)
            w->lat[w->n++] = ran - atomic_load(&w->wake_ts);
        uint64_t rd = run_delay();
        w->woke[w->n - 1] = ran; /* n >= 1 here */
        w->rd_at[w->n - 1] = rd;
        if (w->n == 1)
            w->rd_first = rd;
        w->rd_last = rd;
        if (rd - prev > w->rd_max_step)
            w->rd_max_step = rd - prev;
        prev = rd;
        rearm(w);
        int stop = atomic_load(&w->stop);
        while (!stop && now_ns() - ran < work_ns)
            ;
        atomic_fetch_add(&w->done, 1);
        if (stop)
            break;
    }
    w->rd_end = run_delay();
    return NULL;
}

/* 1 when thread tid is blocked in syscall nr (/proc/self/task/T/syscall
 * starts with the number while the thread is inside a syscall). */
static int blocked_in(pid_t tid, long nr)
{
    char path[64], buf[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 && strtol(buf, NULL, 10) == nr;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Waits (bounded) until w handled `done` wakes and sleeps in its wait. */
static void wait_parked(struct worker *w, uint32_t done)
{
    long nr = w->kind == FUTEX ? SYS_futex : SYS_epoll_wait;
    for (int i = 0; i < 200000; i++) {
        if (atomic_load(&w->done) == done) {
            int b = blocked_in(atomic_load(&w->tid), nr);
            if (b == 1)
                return;
            if (b < 0) { /* no /proc syscall file: give it time instead */
                pause_us(5000);
                return;
            }
        }
        pause_us(200);
    }
    fprintf(stderr, "story_sched: %s never parked\n", w->name);
    exit(2);
}

static void wake(struct worker *w)
{
    static const uint64_t one = 1;
    long cs = nivcsw();
    atomic_store(&w->wake_ts, now_ns());
    if (w->kind == FUTEX) {
        atomic_store(&w->word, 1);
        syscall(SYS_futex, &w->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    } else if (write(w->efd, &one, sizeof(one)) != sizeof(one)) {
        die("write eventfd");
    }
    if (nivcsw() != cs)
        atomic_fetch_add(&w->tainted, 1);
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank (1-based k = ceil(n * pct / 100)) of the sorted v[0..n). */
static uint64_t rank(const uint64_t *v, uint32_t n, unsigned pct)
{
    if (!n)
        return 0;
    uint32_t k = (n * pct + 99) / 100;
    return v[k ? k - 1 : 0];
}

static void print_stats(const uint64_t *v, uint32_t n)
{
    uint64_t *s = malloc((n ? n : 1) * sizeof(*s));
    memcpy(s, v, n * sizeof(*s));
    qsort(s, n, sizeof(*s), by_u64);
    printf("\"count\": %u, \"p50_ns\": %llu, \"p99_ns\": %llu, \"max_ns\": %llu, \"latencies_ns\": [", n,
           (unsigned long long)rank(s, n, 50), (unsigned long long)rank(s, n, 99),
           (unsigned long long)(n ? s[n - 1] : 0));
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    printf("]");
    free(s);
}

int main(int argc, char **argv)
{
    int nhogs = 0, rounds = 40;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--hogs"))
            nhogs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--work-us"))
            work_ns = (uint64_t)atoi(argv[i + 1]) * 1000;
    }
    if (nhogs < 0 || nhogs > MAX_HOGS || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: story_sched [--hogs 0-%d] [--rounds 1-%d]\n", MAX_HOGS, MAX_ROUNDS);
        return 2;
    }
    uint64_t waker_rd = run_delay();
    for (int i = 0; i < nhogs; i++)
        if (pthread_create(&hogs[i].thread, NULL, hog_main, &hogs[i]))
            die("pthread_create hog");
    for (int i = 0; i < nhogs; i++) /* every hog spinning before any worker starts */
        while (!atomic_load(&hogs[i].started))
            pause_us(1000);

    for (int i = 0; i < NWORKERS; i++) {
        struct worker *w = &workers[i];
        w->kind = i % 2 ? EVENTFD : FUTEX;
        snprintf(w->name, sizeof(w->name), "s1-%s-%d", w->kind == FUTEX ? "futex" : "efd", i / 2);
        if (w->kind == EVENTFD) {
            struct epoll_event ev = {.events = EPOLLIN};
            if ((w->efd = eventfd(0, EFD_CLOEXEC)) < 0 || (w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
                epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev) < 0)
                die("eventfd/epoll");
        }
        if (pthread_create(&w->thread, NULL, worker_main, w))
            die("pthread_create worker");
    }
    for (int i = 0; i < NWORKERS; i++)
        while (!atomic_load(&workers[i].tid))
            pause_us(1000);

    /* The main thread is the waker. */
    pthread_setname_np(pthread_self(), "s1-main");
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NWORKERS; i++) {
            struct worker *w = &workers[i];
            wait_parked(w, (uint32_t)r);
            if (r == rounds - 1)
                atomic_store(&w->stop, 1);
            wake(w);
        }
    }
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(workers[i].thread, NULL);
    atomic_store(&hogs_stop, 1);
    for (int i = 0; i < nhogs; i++)
        pthread_join(hogs[i].thread, NULL);
    waker_rd = run_delay() - waker_rd;

    uint64_t all[NWORKERS * MAX_ROUNDS];
    uint32_t nall = 0;
    printf("{\"pid\": %d, \"waker_tid\": %d, \"waker_run_delay_ns\": %llu, \"rounds\": %d, \"hogs\": [",
           (int)getpid(), (int)gettid(), (unsigned long long)waker_rd, rounds);
    for (int i = 0; i < nhogs; i++)
        printf("%s\n  {\"tid\": %d, \"run_delay_ns\": %llu, \"nivcsw\": %ld, \"begin_ns\": %llu, \"end_ns\": %llu}",
               i ? "," : "", (int)hogs[i].tid, (unsigned long long)hogs[i].run_delay, hogs[i].nivcsw,
               (unsigned long long)hogs[i].begin, (unsigned long long)hogs[i].end);
    printf("],\n\"workers\": [\n");
    for (int i = 0; i < NWORKERS; i++) {
        struct worker *w = &workers[i];
        printf("  {\"tid\": %d, \"name\": \"%s\", \"kind\": \"%s\", \"run_delay_ns\": %llu, "
               "\"max_run_delay_step_ns\": %llu, \"run_delay_between_wakes_ns\": %llu, \"tainted\": %u, ",
               (int)w->tid, w->name, w->kind == FUTEX ? "futex" : "eventfd",
               (unsigned long long)(w->rd_end - w->rd_start), (unsigned long long)w->rd_max_step,
               (unsigned long long)(w->rd_last - w->rd_first), atomic_load(&w->tainted));
        print_stats(w->lat, w->n);
        printf(", \"wakes\": [");
        for (uint32_t k = 0; k < w->n; k++)
            printf("%s[%llu, %llu]", k ? ", " : "", (unsigned long long)w->woke[k],
                   (unsigned long long)(w->rd_at[k] - w->rd_first));
        printf("]}%s\n", i + 1 < NWORKERS ? "," : "");
        memcpy(all + nall, w->lat, w->n * sizeof(*all));
        nall += w->n;
    }
    printf("], \"all\": {");
    print_stats(all, nall);
    printf("}}\n");
    return 0;
}
