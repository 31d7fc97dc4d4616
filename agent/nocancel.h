/* nocancel.h - the agent's own I/O on a host thread is never where a
 * pending pthread_cancel acts.
 *
 * glibc's open, read, pread, write, close, nanosleep and pthread_join are
 * cancellation points. Made by the agent on a host thread, they would
 * cancel that thread where its own code has none: in the agent's
 * registration before the start routine's first line, inside
 * pthread_mutex_lock, in fork's child handler, in exit's final drain, with
 * the agent's state half-changed. So those places turn cancellation off
 * around their I/O and restore the thread's state after. Restoring does
 * not act on a pending deferred cancel (only an asynchronous one, which
 * could act anywhere anyway); the thread's next cancellation point does.
 * pthread_setcancelstate is not a cancellation point and makes no system
 * call.
 */
#ifndef DIAL9_NOCANCEL_H
#define DIAL9_NOCANCEL_H

#include <pthread.h>

/* Returns the state to hand to d9_cancel_restore. */
static inline int d9_cancel_off(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

static inline void d9_cancel_restore(int old) { pthread_setcancelstate(old, NULL); }

#endif
