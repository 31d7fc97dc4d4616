/* safe_load.h - reading a timeout the program passes to a system call
 * before the kernel has checked the pointer.
 *
 * A hook reads a call's timeout before the call, for its PARK. For
 * nanosleep, clock_nanosleep, epoll_pwait2 and futex waits through
 * syscall(), glibc hands the pointer to the kernel as it is, and the kernel
 * answers EFAULT when it is unmapped; a plain load there would crash the
 * program instead. (glibc copies select's, ppoll's and pselect's timeouts
 * itself, and the timed condition-variable and semaphore waits check
 * theirs first; they are read through here too, one way for every hook.)
 *
 * So each of the two 8-byte loads has an entry in a fixup table (section
 * d9_load_fixups: where it may fault, where to go on), as the kernel's own
 * user copies do. The agent's SIGSEGV/SIGBUS handler (crash.c) looks the
 * faulting instruction up there first and, if it is one of these, resumes
 * at its fixup: the load reports failure and the call goes on to get its
 * EFAULT. When nothing faults it costs a flag test more than plain loads,
 * and no system call.
 *
 * When the handler is not in the kernel (SIGSEGV or SIGBUS was ignored at
 * start-up, or was handed back after a fault that ends the process:
 * crash.c), nothing could catch the fault: the load is not made, and the
 * timeout is recorded as -1 (none). A fault the program's own handler
 * recovers from keeps the handler, and the loads armed. */
#ifndef DIAL9_SAFE_LOAD_H
#define DIAL9_SAFE_LOAD_H

#include <stdint.h>

/* 1 while the agent's handler catches both SIGSEGV and SIGBUS (crash.c). */
extern int d9_safe_load_armed __attribute__((visibility("hidden")));

/* From the agent's SIGSEGV/SIGBUS handler (async-signal-safe): when the
 * faulting instruction of uc (a ucontext_t) is a safe load, moves it to its
 * fixup and returns 1; else 0. */
int d9_safe_load_fixup(void *uc) __attribute__((visibility("hidden")));

/* A user pointer we may read before the real call validates it: rejects
 * NULL-ish and kernel addresses without a load. */
static inline int d9_ptr_ok(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= 4096 && a < ((uintptr_t)1 << 47);
}

/* The two 8-byte words at p (a timespec or a timeval) into w. 1 when read;
 * 0 when p is NULL-ish, unmapped, or no handler is armed to catch a fault. */
static inline int d9_load16(const void *p, int64_t w[2])
{
    if (!d9_ptr_ok(p) || !__atomic_load_n(&d9_safe_load_armed, __ATOMIC_RELAXED))
        return 0;
#if defined(__x86_64__)
    int64_t a, b;
    /* Either load may fault (a timespec across the end of a mapping); both
     * resume at fault. asm goto: no flag to set and test. */
    __asm__ goto("1: movq (%[p]), %[a]\n\t"
                 "2: movq 8(%[p]), %[b]\n\t"
                 ".pushsection d9_load_fixups, \"a\"\n\t"
                 ".balign 4\n\t"
                 ".long 1b - ., %l[fault] - .\n\t"
                 ".long 2b - ., %l[fault] - .\n\t"
                 ".popsection"
                 : [a] "=&r"(a), [b] "=&r"(b)
                 : [p] "r"(p), "m"(*(const char(*)[16])p)
                 :
                 : fault);
    w[0] = a;
    w[1] = b;
    return 1;
fault:
    return 0;
#else
    w[0] = ((const int64_t *)p)[0]; /* no fixup table here: a plain load */
    w[1] = ((const int64_t *)p)[1];
    return 1;
#endif
}

#endif
