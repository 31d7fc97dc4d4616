/* hooks_thread.c - thread lifecycle: pthread_create registers the child
 * with its parent's tid before user code runs; pthread_setname_np and
 * prctl(PR_SET_NAME) record name changes; a join parks on the thread it
 * waits for; pthread_cancel turns the direct eventfd write and epoll wait
 * off for good and gets its target out of a direct wait (direct.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core.h"
#include "direct.h"
#include "real.h"

struct d9_start {
    void *(*fn)(void *);
    void *arg;
    uint32_t parent;
};

static void *d9_trampoline(void *p)
{
    struct d9_start s = *(struct d9_start *)p;
    d9_busy++; /* our own free() and registration are not host activity */
    free(p);
    d9_busy--;
    d9_register_self(s.parent);
    return s.fn(s.arg);
}

D9_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                             void *arg)
{
    D9_REAL_OR_FAIL(real_, pthread_create, ENOSYS);
    if (d9_busy) /* the agent's own threads (writer) are not recorded */
        return real_(th, attr, fn, arg);
    int err = errno;
    d9_busy++;
    struct d9_start *s = malloc(sizeof *s);
    d9_busy--;
    errno = err;
    if (!s) /* no trampoline: the child registers late, parent unknown */
        return real_(th, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->parent = d9_self ? d9_self->tid : (uint32_t)gettid();
    int ret = real_(th, attr, d9_trampoline, s);
    if (ret != 0) {
        d9_busy++;
        free(s);
        d9_busy--;
        errno = err;
    }
    return ret;
}

D9_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    D9_REAL_OR_FAIL(real_, pthread_setname_np, ENOSYS);
    int ret = real_(th, name);
    if (ret == 0 && !d9_busy) {
        int err = errno;
        if (pthread_equal(th, pthread_self()))
            d9_emit_name(name);
        else
            d9_names_changed();
        errno = err;
    }
    return ret;
}

/* prctl is variadic; every option takes at most four more unsigned longs,
 * and glibc forwards all four to the kernel regardless. */
D9_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    D9_REAL_OR_FAIL(real_, prctl, -1);
    int ret = real_(option, a2, a3, a4, a5);
    if (option == PR_SET_NAME && ret == 0 && !d9_busy) {
        int err = errno;
        char name[16];
        strncpy(name, (const char *)a2, 15); /* the kernel read it: valid */
        name[15] = 0;
        d9_emit_name(name);
        errno = err;
    }
    return ret;
}

/* Before the request is made: from here on a write or an epoll wait that
 * may be a cancellation point goes through glibc's. After it: th is got
 * out of a direct epoll wait it may be in (direct.h). */
D9_EXPORT int pthread_cancel(pthread_t th)
{
    D9_REAL_OR_FAIL(real_, pthread_cancel, ENOSYS);
    struct d9_slot *in_wait = d9_direct_cancel_requested(th);
    int ret = real_(th);
    if (in_wait && ret == 0)
        d9_direct_cancelled(in_wait, th);
    return ret;
}

/* A join parks until th exits (call join, target the tid of th, 0 when the
 * agent no longer knows it: d9_tid_of): without it a thread that waits for
 * others (a main thread, a thread-per-request server's reaper) looked busy
 * for the whole wait. The deadline of timedjoin is on CLOCK_REALTIME. */
D9_EXPORT int pthread_join(pthread_t th, void **ret)
{
    D9_PARK_BODY(pthread_join, D9_CALL_JOIN, d9_tid_of(th), 0, -1, (th, ret), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abs)
{
    D9_PARK_BODY(pthread_timedjoin_np, D9_CALL_JOIN, d9_tid_of(th), 0, d9_abs_tmo(CLOCK_REALTIME, abs),
                 (th, ret, abs), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk, const struct timespec *abs)
{
    D9_PARK_BODY(pthread_clockjoin_np, D9_CALL_JOIN, d9_tid_of(th), 0, d9_abs_tmo(clk, abs),
                 (th, ret, clk, abs), D9_RES_ERRNUM, ENOSYS);
}
