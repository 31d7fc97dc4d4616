/* direct.h - system calls a recorded hook makes itself, with the syscall
 * instruction, instead of through glibc's wrapper: futex wakes and waits
 * through syscall() (hooks_futex.c), 8-byte eventfd writes and writes to
 * a watched O_NONBLOCK pipe and the epoll_ctl calls of eventfds and pipe
 * read ends (hooks_fd.c), the timed preads and pwrites of
 * regular files (hooks_slow.c), and epoll_wait, epoll_pwait
 * without a mask and poll, when they may block (hooks_park.c).
 *
 * Why: on the bench VM, whose kernel empties the TLB at each system call
 * (PTI without PCID), glibc's write costs 34-75 ns more than the syscall
 * instruction made from the caller's own code, and a hook that calls it
 * and works after it another 8-23 ns (bench/syscall_paths; docs/BENCH-HISTORY.md,
 * session 25): most likely the walks of libc's text and the hook's on both
 * sides of the call. Made here, the call returns through the hook's page
 * alone. Elsewhere the saving is a few ns.
 *
 * When: only when the next definition of the call is glibc's own (no other
 * interposer would miss the call), stamps are TSC ticks, and, for pread,
 * pwrite and the waits, no thread has called pthread_cancel. glibc's pread,
 * pwrite, epoll_wait and poll are cancellation points and the syscall
 * instruction is not: a thread
 * with a pending cancel must still be cancelled there. While no cancel was
 * ever requested there is none to act on; from the first pthread_cancel
 * on, these calls go through glibc again (d9_direct_cancel_requested).
 * epoll_ctl never waits and is no cancellation point.
 * An 8-byte eventfd write never waits unless the counter is full and the
 * fd blocking, which runtimes never do (their eventfds are EFD_NONBLOCK);
 * a pipe write is made here only when the fd table says O_NONBLOCK
 * (fdtable.h), so it never waits either. A pread or pwrite of a regular
 * file (hooks_slow.c) waits for the disk, never for another thread: one
 * under way when the first pthread_cancel comes finishes before the cancel
 * acts, as glibc's does in an uninterruptible read. (On a network or FUSE
 * file system that interrupts reads, glibc's would be cancelled in the
 * read; this one is restarted by SIGCANCEL's SA_RESTART and the cancel
 * acts at the thread's next cancellation point.) Only the positional calls:
 * the fd table calls FILE whatever open() opened by path, FIFOs, ttys and
 * devices too, and a read or write of those can wait for another thread
 * forever; their pread and pwrite fail with ESPIPE at once (stream_open,
 * nonseekable_open), as do those of a socket or pipe that took the number
 * of a file closed out of the hooks' sight. read and write go through
 * glibc.
 *
 * A wait does block, and glibc 2.36's pthread_cancel signals only a
 * thread inside one of glibc's cancellation points: a thread already in a
 * direct wait would sleep through its cancel. So the interposer, after the
 * real call, gets the target out (d9_direct_cancelled): while the target
 * is blocked in that system call (/proc/self/task/TID/syscall), it sends it
 * glibc's own SIGCANCEL, whose handler does nothing to a thread already
 * marked cancelled, and the wait ends with EINTR; seeing it was
 * kicked, the hook goes on waiting through glibc's wrapper, for the time
 * left, which acts on the cancel as glibc would have or, with cancellation
 * disabled, just waits. Which threads are in a direct wait is exact:
 * d9_tls.in_direct (the wait's system call number) is set before the hook
 * reads d9_direct, and the first
 * pthread_cancel, after it clears d9_direct, makes every thread pass a
 * memory barrier (d9_barrier_all, barrier.h) before it
 * reads in_direct.
 */
#ifndef DIAL9_DIRECT_H
#define DIAL9_DIRECT_H

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "agent.h"

/* Which direct paths are on (d9_direct_on): 0 before d9_direct_init,
 * D9_DIRECT_CANCEL (sticky, and nothing else) once pthread_cancel was
 * called. */
#define D9_DIRECT_WRITE 1 /* 8-byte eventfd writes, O_NONBLOCK pipe writes */
#define D9_DIRECT_EPOLL 2 /* epoll waits (d9_barrier_ok) */
#define D9_DIRECT_POLL 4  /* poll waits (d9_barrier_ok) */
#define D9_DIRECT_WAITS (D9_DIRECT_EPOLL | D9_DIRECT_POLL)
#define D9_DIRECT_CANCEL 8
#define D9_DIRECT_FILE 16 /* timed regular-file pread, pwrite */
#define D9_DIRECT_CTL 32  /* epoll_ctl of a recorded fd */
extern _Atomic int d9_direct D9_HIDDEN;

/* Once, by the constructor, after d9_clock_init: turns on the direct paths
 * whose conditions hold (above). */
void d9_direct_init(void);

/* Called by the pthread_cancel interposer before the real call: turns the
 * write and wait paths off (the first time, after making every thread
 * pass a memory barrier). Returns th's slot when th is in a direct
 * wait, having set its kicked flag first (a glibc whose pthread_cancel
 * signals it ends the wait too), else NULL. Preserves errno. */
struct d9_slot *d9_direct_cancel_requested(pthread_t th) D9_HIDDEN;

/* Called after the real call cancelled th, with the slot the above
 * returned: signals th, while it is blocked in the system call, until it
 * is out of its direct wait (at most ~200 ms; a line on stderr if it never
 * leaves). Preserves errno. */
void d9_direct_cancelled(struct d9_slot *s, pthread_t th) D9_HIDDEN;

/* Called by the longjmp interposers (crash.c) before the jump to env: a
 * jump out of a signal handler that interrupted a direct wait leaves the
 * wait without its hook's end, so the thread is marked out of it (and not
 * kicked) when env's stack pointer is above the hook's on the same stack.
 * Otherwise a later pthread_cancel of the thread would wait 200 ms for it
 * to leave a wait it is not in. A jump within the handler changes
 * nothing. Async-signal-safe; preserves errno. */
void d9_direct_jumped(const struct __jmp_buf_tag *env) D9_HIDDEN;

/* Acquire: a call that sees its bit ran before any cancel request. */
static inline int d9_direct_on(int path)
{
    return atomic_load_explicit(&d9_direct, memory_order_acquire) & path;
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

static inline long d9_sys4(long nr, long a1, long a2, long a3, long a4)
{
    register long r10 __asm__("r10") = a4;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
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

/* A timed regular-file pread or pwrite (nr: SYS_pread64, SYS_pwrite64),
 * made here: the call returns through the hook's page alone. Returns as
 * glibc's would. */
static inline ssize_t d9_file_sys(long nr, long fd, long buf, long n, long off)
{
    long ret = d9_sys6(nr, fd, buf, n, off, 0, 0);
    return D9_UNLIKELY(d9_sys_failed(ret)) ? d9_sys_fail(ret) : ret;
}
#define D9_FILE_CALL(sysargs, real_call) (d9_direct_on(D9_DIRECT_FILE) ? d9_file_sys sysargs : (real_call))
#else
#define D9_FILE_CALL(sysargs, real_call) (real_call)
#endif

#if defined(__x86_64__)
/* Sends syscall(SYS_futex, ...) wakes and waits down the direct path
 * (hooks_futex.c). syscall() is no cancellation point: no condition on
 * pthread_cancel there. */
void d9_futex_direct_on(void) D9_HIDDEN;
#endif

#endif
