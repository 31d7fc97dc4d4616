/* clocks.c - ns per read of each timestamp source the agent could use
 * (bench/run.sh; the choice is explained in docs/FORMAT.md, "Clock").
 * usage: clocks N   prints "source ns_per_read" lines */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t sink;

#define TIME(label, expr)                                                      \
    do {                                                                       \
        uint64_t t0 = mono();                                                  \
        for (long i = 0; i < n; i++)                                           \
            sink += (expr);                                                    \
        printf("%s %.1f\n", label, (double)(mono() - t0) / (double)n);         \
    } while (0)

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    unsigned aux;
    TIME("rdtsc", __rdtsc());
    TIME("rdtscp", __rdtscp(&aux));
    TIME("clock_gettime(CLOCK_MONOTONIC)", clock_ns(CLOCK_MONOTONIC));
    TIME("clock_gettime(CLOCK_MONOTONIC_COARSE)", clock_ns(CLOCK_MONOTONIC_COARSE));
    return sink == 42; /* keep the loops */
}
