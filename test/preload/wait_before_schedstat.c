/* wait_before_schedstat.c - a thread preempted between the stamp of its
 * unpark and its schedstat read, for test_sched_gate: loaded before
 * libdial9.so in LD_PRELOAD, it is the pread() the agent reads
 * /proc/thread-self/schedstat with. Before the first thread's WAIT_AT-th
 * such read (default 4; its registration reads once) it keeps the
 * calling thread on the run queue for WAIT_MS ms (default 40): a SCHED_FIFO
 * thread pinned to the caller's CPU spins that long while the caller,
 * pinned there too, waits to run. The run_delay that added, read on the
 * same fd before and after, is printed on stderr at exit:
 * "wait_before_schedstat: read R held on the run queue N ns", or
 * "wait_before_schedstat: no wait (WHY)" when it could not make one. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_pread)(int, void *, size_t, off_t);
static pthread_t hog;
static _Atomic int go, done, at = 4;
static __thread int reads; /* the calling thread's schedstat reads */
static long wait_ms = 40;
static _Atomic uint64_t held_ns;
static const char *why = "the read never came";

static uint64_t mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *spin(void *arg)
{
    while (!atomic_load(&go))
        usleep(200);
    uint64_t end = mono() + (uint64_t)wait_ms * 1000000u;
    while (mono() < end)
        ;
    atomic_store(&done, 1);
    return arg;
}

static int is_schedstat(int fd)
{
    char link[64], target[128];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return 0;
    target[n] = 0;
    return strstr(target, "/schedstat") != NULL;
}

static uint64_t run_delay(int fd)
{
    char buf[96];
    ssize_t n = real_pread(fd, buf, sizeof(buf) - 1, 0);
    unsigned long long on, delay;
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return sscanf(buf, "%llu %llu", &on, &delay) == 2 ? delay : 0;
}

/* The caller waits runnable while the FIFO hog spins on its CPU. */
static void hold(int fd)
{
    cpu_set_t one, saved;
    int cpu = sched_getcpu();
    struct sched_param fifo = {.sched_priority = 1};
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) ||
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one) ||
        pthread_setaffinity_np(hog, sizeof(one), &one) || pthread_setschedparam(hog, SCHED_FIFO, &fifo)) {
        why = "no SCHED_FIFO or affinity here";
        atomic_store(&go, 1);
        return;
    }
    uint64_t before = run_delay(fd);
    atomic_store(&go, 1); /* the hog wakes within 200 us, on this CPU, and takes it */
    while (!atomic_load(&done))
        sched_yield();
    atomic_store(&held_ns, run_delay(fd) - before);
    pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!real_pread)
        real_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
    if (!pthread_equal(pthread_self(), hog) && is_schedstat(fd) && ++reads == atomic_load(&at) && !atomic_load(&go))
        hold(fd);
    return real_pread(fd, buf, n, off);
}

__attribute__((constructor)) static void start(void)
{
    const char *a = getenv("WAIT_AT"), *ms = getenv("WAIT_MS");
    if (a)
        atomic_store(&at, atoi(a));
    if (ms)
        wait_ms = atol(ms);
    if (pthread_create(&hog, NULL, spin, NULL))
        why = "no hog thread";
}

__attribute__((destructor)) static void report(void)
{
    uint64_t ns = atomic_load(&held_ns);
    if (ns)
        fprintf(stderr, "wait_before_schedstat: read %d held on the run queue %llu ns\n", atomic_load(&at),
                (unsigned long long)ns);
    else
        fprintf(stderr, "wait_before_schedstat: no wait (%s)\n", why);
}
