/* bench.h - what the bench programs share: the clock they time with, the
 * median of a sample, and the idle second thread that puts glibc on its
 * multithreaded paths (as in every service dial9 targets). */
#ifndef D9_BENCH_H
#define D9_BENCH_H

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../test/progs/now.h" /* now_ns(): CLOCK_MONOTONIC in ns, as the test programs */

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), n >= 1; sorts v. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Blocks for good in a read no one answers; gone with the process. */
static inline void *bench_idle(void *arg)
{
    char byte;
    (void)!read(*(int *)arg, &byte, 1);
    return NULL;
}

/* Starts the idle thread: 0, or -1 when the pipe or the thread fails. */
static inline int bench_start_idle_thread(void)
{
    static int fds[2];
    pthread_t t;
    if (pipe(fds) != 0 || pthread_create(&t, NULL, bench_idle, &fds[0]) != 0)
        return -1;
    return 0;
}

#endif
