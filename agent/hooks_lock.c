/* hooks_lock.c - lock contention: pthread_mutex_lock and
 * pthread_rwlock_rdlock/wrlock try the lock first. An acquisition that
 * succeeds at once (nearly all of them: memcached takes ~1M uncontended
 * locks a second) costs a rwlock one extra call and a compare, a mutex a
 * look at its lock word (below). Only when the try says EBUSY is the wait
 * timed, and a wait of at least DIAL9_LOCK_WAIT_US becomes one LOCK_WAIT
 * event (call, lock address, wait_ns; ts = start of the wait).
 *
 * Exactness: every result of the try other than "acquired" (0, or
 * EOWNERDEAD from a robust mutex, which is acquired too) falls through to
 * the real lock, so its return value is libc's own: EDEADLK for an
 * error-checking relock, EAGAIN for a recursion count overflow, EINVAL, ...
 * A recursive mutex owned by the caller is taken by the try, as by the lock.
 *
 * pthread_mutex_lock looks first: when the mutex's lock word is 0 (free,
 * for every kind of mutex) it jumps to the real lock, without the try and
 * without a frame. memcached takes 11 locks a request, and the try's call
 * and return cost it about 0.5% of its CPU per request (docs/BENCH-HISTORY.md,
 * session 22). The price: a wait is not seen when another thread takes the
 * free lock in the few instructions between the look and libc's own
 * attempt.
 */
#include <errno.h>

#include "core.h"
#include "real.h"

/* Cold path: the lock is held by someone else. */
__attribute__((noinline)) static int waited(int (*lock)(void *), void *obj, uint8_t call)
{
    /* Stamps only while recording: its unit is fixed from then on. */
    struct d9_timed t = d9_timed_start(&d9_lock_stamps);
    if (!t.t0)
        return lock(obj);
    int ret = lock(obj);
    uint64_t wait = d9_stamp_like(t.t0) - t.t0;
    d9_sched_poke(); /* the wait switched the thread out and in: two perf records */
    if (wait >= t.limit) /* wait in stamps: the writer makes it ns (clock.h) */
        d9_emit_at(t.t0, D9_EV_LOCK_WAIT, call, (uint64_t)(uintptr_t)obj, wait); /* keeps errno */
    return ret;
}

#define D9_LOCK_BODY(lockname, tryname, call, obj)                            \
    D9_REAL_OR_FAIL(try_, tryname, ENOSYS);                                    \
    int r_ = try_(obj);                                                        \
    if (D9_LIKELY(r_ == 0))                                                    \
        return 0;                                                              \
    D9_REAL_OR_FAIL(lock_, lockname, ENOSYS);                                  \
    if (r_ == EOWNERDEAD)                                                      \
        return r_;                                                             \
    if (r_ != EBUSY)                                                           \
        return lock_(obj);                                                     \
    return waited((int (*)(void *))lock_, (obj), (call))

D9_UNRESOLVED(int, pthread_mutex_lock, (pthread_mutex_t * m), (m), ENOSYS)

D9_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    /* glibc's lock word: 0 free; else a lock count (normal, recursive,
     * error-checking, adaptive) or the owner's TID (robust, PI). */
    if (D9_LIKELY(__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0)) {
        D9_REAL_OR_PLAIN(lock_, pthread_mutex_lock, (m));
        return lock_(m);
    }
    D9_LOCK_BODY(pthread_mutex_lock, pthread_mutex_trylock, D9_CALL_MUTEX_LOCK, m);
}

D9_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    D9_LOCK_BODY(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, D9_CALL_RWLOCK_RDLOCK, l);
}

D9_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    D9_LOCK_BODY(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, D9_CALL_RWLOCK_WRLOCK, l);
}
