/* bench.h - what the bench programs share: the clock they time with, the
 * median of a sample, the idle second thread that puts glibc on its
 * multithreaded paths (as in every service dial9 targets), and the
 * interleaved blocks of variants of one call. */
#ifndef D9_BENCH_H
#define D9_BENCH_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

/* write(2) made with the syscall instruction, no libc wrapper (x86-64):
 * the kernel's result, -errno on failure. */
static inline long bench_raw_write(int fd, const void *buf, size_t n)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
}

/* argv's [PAIRS] (default 160) for bench_interleave, the idle thread
 * started; -1 after a usage line on stderr. */
static inline int bench_interleave_args(int argc, char **argv)
{
    int pairs = argc > 1 ? atoi(argv[1]) : 160;
    if (argc > 2 || pairs < 1 || bench_start_idle_thread() != 0) {
        fprintf(stderr, "usage: %s [PAIRS >= 1]\n", argv[0]);
        return -1;
    }
    return pairs;
}

/* The variants' blocks, interleaved: `pairs` rounds, each running `block`
 * calls of every variant 0..n-1, from a variant drawn at random each round
 * (xorshift64): this VM slows syscalls for stretches of a few hundred
 * microseconds about once a millisecond, and a fixed order can line that
 * up with one variant. Then prints each variant's median ns per call and
 * its difference from variant 0. 0, or -1 when out of memory. */
static inline int bench_interleave(int pairs, int n, int block, void (*call)(int), const char *const *names)
{
    double *ns = calloc((size_t)pairs * (size_t)n, sizeof(double));
    if (!ns)
        return -1;
    uint64_t coin = now_ns() | 1;
    for (int k = 0; k < pairs; k++) {
        coin ^= coin << 13;
        coin ^= coin >> 7;
        coin ^= coin << 17;
        int first = (int)(coin % (uint64_t)n);
        for (int j = 0; j < n; j++) {
            int v = (j + first) % n;
            uint64_t t0 = now_ns();
            for (int i = 0; i < block; i++)
                call(v);
            ns[(size_t)v * (size_t)pairs + (size_t)k] = (double)(now_ns() - t0) / block;
        }
    }
    double base = 0;
    for (int v = 0; v < n; v++) {
        double med = bench_median(ns + (size_t)v * (size_t)pairs, (size_t)pairs);
        if (v == 0)
            base = med;
        printf("%-50s %8.1f ns %+7.1f\n", names[v], med, med - base);
    }
    free(ns);
    return 0;
}

#endif
