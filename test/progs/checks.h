/* checks.h - counted checks for the test programs that compare a call's
 * result and errno with libc's (hooks_semantics, cancel_park). Each prints
 * a FAIL line with file and line; main prints the totals. */
#ifndef DIAL9_TEST_CHECKS_H
#define DIAL9_TEST_CHECKS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int checks, failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s (errno %d %s)\n", __FILE__,         \
                    __LINE__, #cond, errno, strerror(errno));                  \
        }                                                                      \
    } while (0)

/* A -1/errno call must fail with exactly this errno. */
#define CHECK_ERR(expr, err)                                                   \
    do {                                                                       \
        errno = 0;                                                             \
        long r_ = (long)(expr);                                                \
        int e_ = errno;                                                        \
        checks++;                                                              \
        if (r_ != -1 || e_ != (err)) {                                         \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s = %ld errno %d (%s), want -1 %s\n", \
                    __FILE__, __LINE__, #expr, r_, e_, strerror(e_), #err);    \
        }                                                                      \
    } while (0)

/* A call that must return exactly `want` and leave errno alone. */
#define CHECK_RET(expr, want)                                                  \
    do {                                                                       \
        errno = 12345;                                                         \
        long r_ = (long)(expr);                                                \
        int e_ = errno;                                                        \
        checks++;                                                              \
        if (r_ != (long)(want) || e_ != 12345) {                               \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s = %ld errno %d, want %ld\n",        \
                    __FILE__, __LINE__, #expr, r_, e_, (long)(want));          \
        }                                                                      \
    } while (0)

#endif
