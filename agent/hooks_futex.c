/* hooks_futex.c - the syscall() interposer, for programs (Rust std, custom
 * locks) that call futex directly. Every other syscall number is forwarded
 * untouched at the cost of one comparison.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "real.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

typedef long (*syscall_fn)(long, ...);

/* Relative timeout (ns, -1 infinite) of a waiting futex op, or -2 when op
 * does not wait. */
static int64_t futex_wait_timeout(int op, const struct timespec *ts)
{
    clockid_t clk = (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: /* relative, whatever the clock */
        return d9_ts_ns(ts);
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI2:
        return d9_abs_ns(clk, ts);
    case FUTEX_LOCK_PI: /* absolute, always CLOCK_REALTIME */
        return d9_abs_ns(CLOCK_REALTIME, ts);
    default:
        return -2;
    }
}

static int futex_is_wake(int op)
{
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
    case FUTEX_WAKE_OP:
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
        return 1;
    default:
        return 0;
    }
}

__attribute__((noinline)) static long futex_hook(syscall_fn real, long a1, long a2, long a3,
                                                 long a4, long a5, long a6)
{
    if (!d9_may_record()) /* agent off, or inside it: a plain call */
        return real(SYS_futex, a1, a2, a3, a4, a5, a6);
    int op = (int)a2;
    long ret;
    if (futex_is_wake(op)) { /* checked above: stamped as D9_WAKE_BODY does */
        uint64_t ts = d9_stamp();
        ret = real(SYS_futex, a1, a2, a3, a4, a5, a6);
        if (ret >= 0) /* keeps errno */
            d9_emit_since(ts, D9_EV_WAKE, D9_CALL_FUTEX, (uint64_t)a1, (uint64_t)ret);
        return ret;
    }
    /* Only consult the timeout pointer for ops where a4 is one. */
    int64_t tmo = futex_wait_timeout(op, (const struct timespec *)a4);
    if (tmo == -2)
        return real(SYS_futex, a1, a2, a3, a4, a5, a6);
    D9_PARKED(ret, D9_CALL_FUTEX, a1, tmo, real(SYS_futex, a1, a2, a3, a4, a5, a6),
              D9_RES_ERRNO);
    return ret;
}

/* syscall() takes at most six arguments on x86-64; reading six varargs when
 * fewer were passed reads unused registers, exactly like glibc's own stub. */
D9_EXPORT long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    D9_REAL_OR_FAIL(real, syscall, -1);
    if (D9_LIKELY(nr != SYS_futex))
        return real(nr, a1, a2, a3, a4, a5, a6);
    return futex_hook(real, a1, a2, a3, a4, a5, a6);
}
