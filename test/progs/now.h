/* Test programs' own clock: CLOCK_MONOTONIC in ns, the clock traces use. */
#ifndef D9_TEST_NOW_H
#define D9_TEST_NOW_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
