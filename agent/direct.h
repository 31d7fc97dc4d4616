/* direct.h - system calls a recorded hook makes itself, with the syscall
 * instruction, instead of through glibc's wrapper: futex wakes and waits
 * through syscall() (hooks_futex.c) and 8-byte eventfd writes (hooks_fd.c).
 *
 * Why: on the bench VM, whose kernel empties the TLB at each system call
 * (PTI without PCID), glibc's write costs 34-75 ns more than the syscall
 * instruction made from the caller's own code, and a hook that calls it
 * and works after it another 8-23 ns (bench/syscall_paths; BENCHMARKS.md,
 * session 25): most likely the walks of libc's text and the hook's on both
 * sides of the call. Made here, the call returns through the hook's page
 * alone. Elsewhere the saving is a few ns.
 *
 * When: only when the next definition of the call is glibc's own (no other
 * interposer would miss the call), stamps are TSC ticks, and, for write,
 * no thread has called pthread_cancel. glibc's write is a cancellation
 * point and the syscall instruction is not: a thread with a pending cancel
 * must still be cancelled there. While no cancel was ever requested there
 * is none to act on; from the first pthread_cancel on, writes go through
 * glibc again (d9_direct_cancel_requested). An 8-byte eventfd write never
 * waits unless the counter is full and the fd blocking, which runtimes
 * never do (their eventfds are EFD_NONBLOCK).
 */
#ifndef DIAL9_DIRECT_H
#define DIAL9_DIRECT_H

#include <stdatomic.h>

#include "agent.h"

/* D9_DIRECT_ON: eventfd writes may be direct; 0 before d9_direct_init,
 * D9_DIRECT_CANCEL (sticky) once pthread_cancel was called. */
#define D9_DIRECT_ON 1
#define D9_DIRECT_CANCEL 2
extern _Atomic int d9_direct_write D9_HIDDEN;

/* Once, by the constructor, after d9_clock_init: turns on the direct paths
 * whose conditions hold (above). */
void d9_direct_init(void);

/* Called by the pthread_cancel interposer before the real call. */
static inline void d9_direct_cancel_requested(void)
{
    atomic_store(&d9_direct_write, D9_DIRECT_CANCEL);
}

/* Acquire: a write that sees ON ran before any cancel request was made. */
static inline int d9_direct_write_on(void)
{
    return atomic_load_explicit(&d9_direct_write, memory_order_acquire) == D9_DIRECT_ON;
}

#if defined(__x86_64__)
/* The raw system call, as glibc's syscall() makes it (rcx and r11 are the
 * kernel's). Returns the kernel's result: -errno in [-4095, -1]. */
static inline long d9_sys6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static inline long d9_sys3(long nr, long a1, long a2, long a3)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a1), "S"(a2), "d"(a3) : "rcx", "r11", "memory");
    return ret;
}

static inline int d9_sys_failed(long ret) { return (unsigned long)ret >= -4095ul; }

/* A failed direct call's result as glibc returns it: errno = -ret, -1.
 * Out of line and called last, so a direct path keeps nothing across a
 * call. */
long d9_sys_fail(long ret) __attribute__((cold)) D9_HIDDEN;

/* Sends syscall(SYS_futex, ...) wakes and waits down the direct path
 * (hooks_futex.c). syscall() is no cancellation point: no condition on
 * pthread_cancel there. */
void d9_futex_direct_on(void) D9_HIDDEN;
#endif

#endif
