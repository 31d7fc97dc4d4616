/* hooks_sync.c - interposers for condition variables and semaphores:
 * waits park on the object's address, signal/broadcast/post are WAKEs.
 */
#include <errno.h>

#include "real.h"

/* glibc's (>= 2.25) __wrefs word of a condition variable: bit 1 its clock
 * (__PTHREAD_COND_CLOCK_MONOTONIC_MASK), bits 3 and up the waiters that
 * reference it; one load. unknown where it cannot be read. */
static inline unsigned cond_wrefs(const pthread_cond_t *c, unsigned unknown)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 25)
    if (d9_ptr_ok(c))
        return __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED);
#endif
    (void)c;
    return unknown;
}

/* pthread_cond_timedwait's deadline is on the clock chosen by
 * pthread_condattr_setclock. */
static inline clockid_t cond_clock(const pthread_cond_t *c)
{
    return (cond_wrefs(c, 0) & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* Waits never take a zero-timeout shortcut: they always park. */
#define D9_WAIT_BODY(name, call, obj, tmo, args, res, failret)                 \
    D9_PARK_BODY(name, call, obj, 0, tmo, args, res, failret)

D9_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    D9_WAIT_BODY(pthread_cond_wait, D9_CALL_COND_WAIT, c, -1, (c, m), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *abs)
{
    D9_WAIT_BODY(pthread_cond_timedwait, D9_CALL_COND_WAIT, c, d9_abs_tmo(cond_clock(c), abs),
                 (c, m, abs), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                     const struct timespec *abs)
{
    D9_WAIT_BODY(pthread_cond_clockwait, D9_CALL_COND_WAIT, c, d9_abs_tmo(clk, abs),
                 (c, m, clk, abs), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int sem_wait(sem_t *s)
{
    D9_WAIT_BODY(sem_wait, D9_CALL_SEM_WAIT, s, -1, (s), D9_RES_ERRNO, -1);
}

D9_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs)
{
    D9_WAIT_BODY(sem_timedwait, D9_CALL_SEM_WAIT, s, d9_abs_tmo(CLOCK_REALTIME, abs), (s, abs),
                 D9_RES_ERRNO, -1);
}

D9_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *abs)
{
    D9_WAIT_BODY(sem_clockwait, D9_CALL_SEM_WAIT, s, d9_abs_tmo(clk, abs), (s, clk, abs),
                 D9_RES_ERRNO, -1);
}

/* Wakers: WAKE stamped at call start, count 0, emitted only when the call
 * succeeded. A call for which idle holds goes straight to libc and records
 * nothing. Then the recording
 * check comes alone (a plain tail call when it fails), so the stamp needs no
 * test for 0 after the call. */
#define D9_WAKE_BODY(name, call, obj, idle, failret)                           \
    D9_REAL_OR_FAIL(real_, name, failret);                                     \
    uint64_t ts_;                                                              \
    if ((idle) || !(ts_ = d9_stamp_if_recording()))                            \
        return real_(obj);                                                     \
    int ret_ = real_(obj);                                                     \
    if (ret_ == 0) /* keeps errno: only its slow path touches it, and saves it */ \
        d9_emit_since(ts_, D9_EV_WAKE, call, (uint64_t)(uintptr_t)(obj), 0);   \
    return ret_

/* A signal or broadcast on a condition variable nobody waits on does
 * nothing: glibc returns at once when __wrefs counts no waiter. Python
 * releases its GIL with such a signal at every blocking call, so recording
 * them flooded its traces with wakes that woke no one. The load is glibc's
 * own first one, made a few ns earlier. A waiter
 * counted in between (possible only when the signaller does not hold the
 * mutex, where POSIX cannot tell that wake from a spurious one) is woken
 * without a WAKE. A semaphore post is recorded even without a waiter: it
 * leaves the count a later sem_wait takes. */
static inline int cond_idle(const pthread_cond_t *c)
{
    return (cond_wrefs(c, 8) >> 3) == 0; /* unknown: a waiter, recorded */
}

D9_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    D9_WAKE_BODY(pthread_cond_signal, D9_CALL_COND_SIGNAL, c, cond_idle(c), ENOSYS);
}

D9_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    D9_WAKE_BODY(pthread_cond_broadcast, D9_CALL_COND_BROADCAST, c, cond_idle(c), ENOSYS);
}

D9_EXPORT int sem_post(sem_t *s)
{
    D9_WAKE_BODY(sem_post, D9_CALL_SEM_POST, s, 0, -1);
}
