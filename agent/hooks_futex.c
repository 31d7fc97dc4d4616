/* hooks_futex.c - the syscall() interposer, for programs (Rust std, custom
 * locks) that call futex directly. close, close_range, dup2 and dup3 go
 * through the fd hooks (real.h, d9_syscall_fd); every other number is
 * forwarded untouched at the cost of five comparisons and two jumps. Futex wakes and
 * waits take the direct path (d9_syscall_futex_direct) when the constructor
 * finds it safe (direct.h): a recorded wake adds 43 instructions (77 when
 * it came), a wait's PARK and UNPARK 107 (155 through glibc's stub;
 * callgrind, docs/BENCH-HISTORY.md, sessions 20 and 25).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "direct.h"
#include "real.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* 1 for the ops that wait: their fourth argument is a timeout. */
static inline int futex_waits(int op)
{
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI2:
    case FUTEX_LOCK_PI:
        return 1;
    default:
        return 0;
    }
}

/* Relative timeout (ns, -1 infinite) of an op that waits (futex_waits). */
static int64_t futex_wait_timeout(int op, const struct timespec *ts)
{
    clockid_t clk = (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: /* relative, whatever the clock */
        return d9_ts_ns(ts);
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI2:
        return d9_abs_tmo(clk, ts);
    case FUTEX_LOCK_PI: /* absolute, always CLOCK_REALTIME */
        return d9_abs_tmo(CLOCK_REALTIME, ts);
    default:
        return -1;
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
static long d9_syscall_futex(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
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
    if (!futex_waits(op)) /* a4 is a timeout only for these */
        return real(nr, a1, a2, a3, a4, a5, a6);
    D9_PARKED(ret, D9_CALL_FUTEX, a1, futex_wait_timeout(op, (const struct timespec *)a4),
              real(nr, a1, a2, a3, a4, a5, a6), D9_RES_ERRNO);
    return ret;
}

#if defined(__x86_64__)
/* A futex wait when the direct path is on: parked around the system call
 * made here, not around glibc's stub, so the call returns to this page
 * only (direct.h); the UNPARK takes the kernel's result as it is (-errno).
 * syscall() is no cancellation point: there is nothing to keep. */
__attribute__((noinline)) static long futex_wait_direct(long nr, long a1, long a2, long a3, long a4, long a5,
                                                       long a6)
{
    long ret;
    if (!futex_waits((int)a2))
        ret = d9_sys6(nr, a1, a2, a3, a4, a5, a6);
    else
        D9_PARKED(ret, D9_CALL_FUTEX, a1, a4 ? futex_wait_timeout((int)a2, (const struct timespec *)a4) : -1,
                  d9_sys6(nr, a1, a2, a3, a4, a5, a6), D9_RES_VALUE); /* no timeout: no call */
    return D9_UNLIKELY(d9_sys_failed(ret)) ? d9_sys_fail(ret) : ret;
}

/* A futex wake when the direct path is on: stamped before the call, as
 * d9_wake_start; the wake makes the system call itself, so nothing is live
 * across a call. */
__attribute__((noinline)) static long futex_wake_direct(long nr, long a1, long a2, long a3, long a4, long a5,
                                                       long a6)
{
    uint64_t ts = d9_tsc_stamp_if_recording();
    if (D9_UNLIKELY(!ts))
        return d9_syscall_futex(nr, a1, a2, a3, a4, a5, a6);
    long ret = d9_sys6(nr, a1, a2, a3, a4, a5, a6);
    if (D9_UNLIKELY(d9_sys_failed(ret)))
        return d9_sys_fail(ret);
    if (D9_UNLIKELY(!d9_push_fast(ts, D9_EV_WAKE, D9_CALL_FUTEX, (uint64_t)a1, (uint64_t)ret)))
        return d9_emit_slow_ret(ts, D9_EV_WAKE, D9_CALL_FUTEX, (uint64_t)a1, (uint64_t)ret, ret);
    return ret;
}

/* The direct path, taken when the next syscall() is glibc's own, an
 * 11-instruction stub (the system call, then errno from a result in
 * [-4095, -1]), and stamps are TSC ticks. Only tail calls here: neither
 * path pays the other's register saves. */
static long d9_syscall_futex_direct(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    if (futex_is_wake((int)a2))
        return futex_wake_direct(nr, a1, a2, a3, a4, a5, a6);
    return futex_wait_direct(nr, a1, a2, a3, a4, a5, a6);
}

/* Where syscall(SYS_futex, ...) goes: the general path until the
 * constructor knows the direct one may be taken. */
__attribute__((used)) long (*d9_futex_entry)(long, long, long, long, long, long, long) D9_HIDDEN = d9_syscall_futex;

void d9_futex_direct_on(void)
{
    __atomic_store_n(&d9_futex_entry, d9_syscall_futex_direct, __ATOMIC_RELAXED);
}
#endif

/* Every other number: close, close_range, dup2 and dup3 as the fd hooks
 * make them (real.h), the rest forwarded. syscall() takes at most six arguments on
 * x86-64; a6 may be an unused stack slot, read as glibc's own stub reads it. */
__attribute__((used)) long d9_syscall_other(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    if (nr == SYS_close || nr == SYS_close_range || nr == SYS_dup2 || nr == SYS_dup3)
        return d9_syscall_fd(nr, a1, a2, a3);
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
        "jne d9_syscall_other\n\t"
        "jmp *d9_futex_entry(%rip)\n\t");
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
