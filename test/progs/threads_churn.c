/* threads_churn.c - thread churn for test_threads_churn.sh: BUSY threads
 * make condvar signals (one wake event each) at PER_MS per millisecond for
 * SECS seconds while the main thread creates and joins CHURN short-lived
 * threads one after another, each making K signals. Pacing spins on
 * clock_gettime (no sleep: the workers record nothing but their wakes and
 * their start and exit). Prints, after every thread has ended:
 *   rss_before KB / rss_after KB   (VmRSS of /proc/self/status)
 *   thread TID WAKES               one line per worker
 * usage: threads_churn CHURN K BUSY SECS PER_MS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

struct worker {
    pthread_t th;
    pid_t tid;
    long wakes;
};

static long k_wakes, per_ms;
static double secs;
static pthread_cond_t cv = HELD_COND_INITIALIZER;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static void *churn(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    for (long i = 0; i < k_wakes; i++, w->wakes++)
        pthread_cond_signal(&cv);
    return NULL;
}

static void *busy(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    double start = now(), end = start + secs;
    for (long ms = 1;; ms++) {
        for (long i = 0; i < per_ms; i++, w->wakes++)
            pthread_cond_signal(&cv);
        double t;
        while ((t = now()) < start + (double)ms / 1000 && t < end)
            ; /* spin: a sleep would record park/unpark events */
        if (t >= end)
            return NULL;
    }
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s CHURN K BUSY SECS PER_MS\n", argv[0]);
        return 2;
    }
    long nchurn = atol(argv[1]), nbusy = atol(argv[3]);
    k_wakes = atol(argv[2]);
    secs = atof(argv[4]);
    per_ms = atol(argv[5]);
    struct worker *ws = calloc((size_t)(nchurn + nbusy), sizeof(*ws));
    if (!ws)
        return 1;
    long before = rss_kb();
    for (long i = 0; i < nbusy; i++)
        if (pthread_create(&ws[nchurn + i].th, NULL, busy, &ws[nchurn + i]))
            return 1;
    for (long i = 0; i < nchurn; i++)
        if (pthread_create(&ws[i].th, NULL, churn, &ws[i]) || pthread_join(ws[i].th, NULL))
            return 1;
    for (long i = 0; i < nbusy; i++)
        pthread_join(ws[nchurn + i].th, NULL);
    printf("rss_before %ld\nrss_after %ld\n", before, rss_kb());
    for (long i = 0; i < nchurn + nbusy; i++)
        printf("thread %d %ld\n", (int)ws[i].tid, ws[i].wakes);
    free(ws);
    return 0;
}
