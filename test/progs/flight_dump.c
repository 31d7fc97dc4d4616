/* flight_dump.c - drives the flight recorder for test_flight.sh.
 *   flight_dump api N REASON  N condvar signals (wake events), then
 *                             dial9_dump(REASON) twice in a row; prints
 *                             "wakes N", "dump1 RC ERRNO", "dump2 RC ERRNO".
 *   flight_dump bulk SECONDS  condvar signals for SECONDS, prints "wakes N",
 *                             then dial9_dump("bulk") and "dump RC ERRNO".
 *   flight_dump slow SECONDS  one mmap(MAP_POPULATE) of 128 MiB (a slow
 *                             syscall), prints "slow", sleeps SECONDS.
 *   flight_dump busy MS SETTLE_MS
 *                             condvar signals (WAKEs, never a park) for MS
 *                             ms, prints "busy N", then sleeps SETTLE_MS
 *                             (the writer drains, evaluates and dumps).
 *   flight_dump wake HOLD_MS SETTLE_MS
 *                             a thread parks in pthread_cond_wait; main,
 *                             holding the mutex, signals the condvar (WAKE)
 *                             and keeps the mutex HOLD_MS ms more (a
 *                             nanosleep), so the waiter's cond_wait returns
 *                             (UNPARK) at least HOLD_MS after the WAKE;
 *                             prints "wake LATE_MS" (as the waiter measured
 *                             it), then sleeps SETTLE_MS.
 *   flight_dump handler N     installs its own SIGUSR2 handler with signal()
 *                             (after the agent's), prints "old ok" when
 *                             sigaction(SIGUSR2, NULL, &old) returns it,
 *                             makes N condvar signals, prints "ready N",
 *                             waits (10 s at most) for one SIGUSR2, then
 *                             300 ms more, and prints "count DELIVERIES".
 * dial9_dump is looked up with dlsym, so the program runs without the agent. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "held_cond.h"

static int dump(const char *reason, int *err)
{
    int (*fn)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "dial9_dump");
    if (!fn) {
        *err = ENOSYS;
        return -1;
    }
    errno = 0;
    int rc = fn(reason);
    *err = rc ? errno : 0;
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static pthread_mutex_t wm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcv = PTHREAD_COND_INITIALIZER;
static int wready, wgo;
static double wsignalled, wreturned;
static double now(void);

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wm);
    wready = 1;
    while (!wgo)
        pthread_cond_wait(&wcv, &wm); /* releases wm atomically: main sees wready only once we wait */
    wreturned = now();
    pthread_mutex_unlock(&wm);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t usr2_count;

static void on_usr2(int sig)
{
    (void)sig;
    usr2_count++;
}

int main(int argc, char **argv)
{
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    int err, rc;
    if (argc == 4 && !strcmp(argv[1], "api")) {
        long n = atol(argv[2]);
        for (long i = 0; i < n; i++)
            pthread_cond_signal(&cv);
        printf("wakes %ld\n", n);
        rc = dump(argv[3], &err);
        printf("dump1 %d %d\n", rc, err);
        rc = dump(argv[3], &err);
        printf("dump2 %d %d\n", rc, err);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "handler")) {
        struct sigaction old;
        signal(SIGUSR2, on_usr2);
        if (sigaction(SIGUSR2, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == on_usr2)
            printf("old ok\n");
        long n = atol(argv[2]);
        for (long i = 0; i < n; i++)
            pthread_cond_signal(&cv);
        printf("ready %ld\n", n);
        fflush(stdout);
        for (int i = 0; i < 1000 && !usr2_count; i++)
            sleep_ms(10);
        sleep_ms(300);
        printf("count %d\n", (int)usr2_count);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "bulk")) {
        double end = now() + atof(argv[2]);
        long n = 0;
        while (now() < end)
            for (int i = 0; i < 1000; i++, n++)
                pthread_cond_signal(&cv);
        printf("wakes %ld\n", n);
        rc = dump("bulk", &err);
        printf("dump %d %d\n", rc, err);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "slow")) {
        size_t len = 128u << 20;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p != MAP_FAILED)
            munmap(p, len);
        printf("slow\n");
        fflush(stdout);
        struct timespec ts = {.tv_sec = atol(argv[2])};
        nanosleep(&ts, NULL);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "busy")) {
        double end = now() + atol(argv[2]) / 1e3;
        long n = 0;
        while (now() < end)
            for (int i = 0; i < 100; i++, n++)
                pthread_cond_signal(&cv);
        printf("busy %ld\n", n);
        fflush(stdout);
        sleep_ms(atol(argv[3]));
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "wake")) {
        pthread_t th;
        if (pthread_create(&th, NULL, waiter, NULL) != 0)
            return 1;
        for (;;) {
            pthread_mutex_lock(&wm);
            if (wready)
                break;
            pthread_mutex_unlock(&wm);
            sleep_ms(1);
        }
        wgo = 1;
        wsignalled = now();
        pthread_cond_signal(&wcv);
        sleep_ms(atol(argv[2])); /* the waiter cannot return from cond_wait before we unlock */
        pthread_mutex_unlock(&wm);
        pthread_join(th, NULL);
        printf("wake %ld\n", (long)((wreturned - wsignalled) * 1e3));
        fflush(stdout);
        sleep_ms(atol(argv[3]));
        return 0;
    }
    fprintf(stderr, "usage: %s api N REASON | bulk SECONDS | slow SECONDS | busy MS SETTLE_MS | wake HOLD_MS SETTLE_MS | handler N\n",
            argv[0]);
    return 2;
}
