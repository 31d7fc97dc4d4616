/* hooks_futex.c - the syscall() interposer, for programs (Rust std, custom
 * locks) that call futex directly. Every other syscall number is forwarded
 * untouched at the cost of one comparison and two jumps.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "real.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

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

/* SYS_futex through syscall(): a WAKE, a park, or a plain call. One
 * function: a separate hook for the recorded path costs a call frame more
 * (~9 instructions) than the plain path's register saves cost here. */
__attribute__((used)) long d9_syscall_futex(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    D9_REAL_OR_FAIL(real, syscall, -1);
    if (!d9_may_record()) /* agent off, or inside it: a plain call */
        return real(nr, a1, a2, a3, a4, a5, a6);
    int op = (int)a2;
    long ret;
    if (futex_is_wake(op)) { /* checked above: stamped as D9_WAKE_BODY does */
        uint64_t ts = d9_stamp();
        ret = real(nr, a1, a2, a3, a4, a5, a6);
        if (ret >= 0) /* keeps errno */
            d9_emit_since(ts, D9_EV_WAKE, D9_CALL_FUTEX, (uint64_t)a1, (uint64_t)ret);
        return ret;
    }
    /* Only consult the timeout pointer for ops where a4 is one. */
    int64_t tmo = futex_wait_timeout(op, (const struct timespec *)a4);
    if (tmo == -2)
        return real(nr, a1, a2, a3, a4, a5, a6);
    D9_PARKED(ret, D9_CALL_FUTEX, a1, tmo, real(nr, a1, a2, a3, a4, a5, a6), D9_RES_ERRNO);
    return ret;
}

/* Every other number: forwarded. syscall() takes at most six arguments on
 * x86-64; a6 may be an unused stack slot, read as glibc's own stub reads it. */
__attribute__((used)) long d9_syscall_other(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    D9_REAL_OR_FAIL(real, syscall, -1);
    return real(nr, a1, a2, a3, a4, a5, a6);
}

#if defined(__x86_64__)
/* No va_list: on x86-64 a variadic call passes (nr, a1..a5) in the same
 * registers, and a6 in the same stack slot, as a call of seven named longs,
 * so jumping (not calling) to the functions above hands them the arguments
 * untouched, with no six varargs spilled and read back: ~21 instructions
 * less a call, recorded or not (callgrind; tokio makes ~6 futex calls a
 * request). */
#define D9_STR_(x) #x
#define D9_STR(x) D9_STR_(x)
D9_EXPORT __attribute__((naked)) long syscall(long nr, ...)
{
    __asm__(
#ifdef __CET__
        "endbr64\n\t"
#endif
        "cmpq $" D9_STR(SYS_futex) ", %rdi\n\t"
        "je d9_syscall_futex\n\t"
        "jmp d9_syscall_other\n\t");
}
#else
D9_EXPORT long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    return (nr == SYS_futex ? d9_syscall_futex : d9_syscall_other)(nr, a1, a2, a3, a4, a5, a6);
}
#endif
