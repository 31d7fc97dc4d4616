/* direct.c - when the hooks may make their system calls themselves, and
 * getting a cancelled thread out of a direct epoll wait (direct.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>

#include "core.h"
#include "direct.h"
#include "log.h"
#include "real.h"

_Atomic int d9_direct;
static int epoll_was_on; /* D9_DIRECT_EPOLL was set by d9_direct_init */

#if defined(__x86_64__)
/* glibc's SIGCANCEL (__SIGRTMIN, internal): its handler marks the thread
 * cancelled, which pthread_cancel already did, so it then does nothing;
 * the signal only ends the wait (EINTR). */
#define D9_SIGCANCEL 32

long d9_sys_fail(long ret)
{
    errno = (int)-ret;
    return -1;
}

/* 1 when the next definition of name (the one the hooks call) is glibc's. */
static int next_is_libc(void *libc, void *next, const char *name)
{
    return libc && next && next == dlsym(libc, name);
}

void d9_direct_init(void)
{
    if (!d9_clock_tsc)
        return;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (next_is_libc(libc, (void *)D9_REAL(syscall), "syscall"))
        d9_futex_direct_on();
    int on = 0;
    if (next_is_libc(libc, (void *)D9_REAL(write), "write"))
        on |= D9_DIRECT_WRITE;
    if (next_is_libc(libc, (void *)D9_REAL(epoll_wait), "epoll_wait") &&
        next_is_libc(libc, (void *)D9_REAL(epoll_pwait), "epoll_pwait") &&
        d9_sys3(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        on |= D9_DIRECT_EPOLL;
    int off = 0; /* unless a cancel came first */
    if (on && atomic_compare_exchange_strong(&d9_direct, &off, on))
        epoll_was_on = !!(on & D9_DIRECT_EPOLL);
    if (libc)
        dlclose(libc);
}

/* 1 when thread tid is blocked in epoll_wait or epoll_pwait, or when that
 * cannot be known (no /proc): the first field of /proc/self/task/TID/syscall
 * is the system call's number ("running" or -1 outside one; proc(5)). Raw
 * calls: no hook, no cancellation point. */
static int blocked_in_epoll(uint32_t tid)
{
    char path[48], buf[24];
    snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
    long fd = d9_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
    if (d9_sys_failed(fd))
        return 1;
    long n = d9_sys3(SYS_read, fd, (long)buf, sizeof buf - 1);
    d9_sys3(SYS_close, fd, 0, 0);
    if (d9_sys_failed(n) || n <= 0)
        return 1;
    buf[n] = 0;
    long nr = strtol(buf, NULL, 10);
    return nr == SYS_epoll_wait || nr == SYS_epoll_pwait;
}

/* 1 when th owns s and is in a direct wait: then sets its kicked flag,
 * and with kick signals it if it is blocked in the system call (a thread
 * about to enter it, or that left one by longjmp, gets no signal). s->tls
 * is read only while the owner cannot pass its exit (registry.c). */
static int in_direct_wait(struct d9_slot *s, pthread_t th, long pid, int kick)
{
    atomic_store(&s->kicking, 1);
    int in = atomic_load(&s->state) == D9_SLOT_LIVE && pthread_equal(s->owner, th) &&
             atomic_load(&s->tls->in_direct);
    if (in) {
        atomic_store(&s->tls->kicked, 1);
        if (kick && blocked_in_epoll(s->tid))
            d9_sys3(SYS_tgkill, pid, s->tid, D9_SIGCANCEL);
    }
    atomic_store(&s->kicking, 0);
    return in;
}

struct d9_slot *d9_direct_cancel_requested(pthread_t th)
{
    int saved = errno;
    /* The first cancel: a thread that saw EPOLL set in_direct before; after
     * the barrier it is seen. Registered at init (a fork child inherits
     * it); should it fail, 1 ms lets any store land. */
    if ((atomic_exchange(&d9_direct, D9_DIRECT_CANCEL) & D9_DIRECT_EPOLL) &&
        d9_sys3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        d9_sys3(SYS_nanosleep, (long)&(struct timespec){0, 1000000}, 0, 0);
    if (!epoll_was_on || pthread_equal(th, pthread_self())) {
        errno = saved;
        return NULL;
    }
    struct d9_slot *found = NULL;
    uint32_t n = d9_slot_limit();
    for (uint32_t i = 0; i < n && !found; i++) {
        struct d9_slot *s = d9_slot_at(i);
        if (atomic_load(&s->state) == D9_SLOT_LIVE && pthread_equal(s->owner, th) && in_direct_wait(s, th, 0, 0))
            found = s;
    }
    errno = saved;
    return found;
}

void d9_direct_cancelled(struct d9_slot *s, pthread_t th)
{
    int saved = errno;
    long pid = d9_sys3(SYS_getpid, 0, 0, 0);
    /* Checked every 100 us, signalled every 10 ms while blocked: a signal
     * that landed just before the syscall instruction ended nothing. */
    for (int i = 0; i < 2000; i++) {
        if (!in_direct_wait(s, th, pid, i % 100 == 0))
            goto out;
        d9_sys3(SYS_nanosleep, (long)&(struct timespec){0, 100000}, 0, 0);
    }
    d9_log("pthread_cancel: thread %u is still in epoll_wait after 200 ms; its cancel acts when the wait ends",
           s->tid);
out:
    errno = saved;
}

#else
void d9_direct_init(void) {}
struct d9_slot *d9_direct_cancel_requested(pthread_t th)
{
    (void)th;
    atomic_store(&d9_direct, D9_DIRECT_CANCEL);
    return NULL;
}
void d9_direct_cancelled(struct d9_slot *s, pthread_t th) { (void)s, (void)th; }
#endif
