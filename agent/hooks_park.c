/* hooks_park.c - interposers for the fd-polling and sleeping calls:
 * epoll_wait family, poll family, select family, nanosleep family.
 * Each parks for the duration of the real call; a zero timeout is a
 * non-blocking poll, counted instead of parked. A timespec or timeval
 * timeout is read once (d9_timeout_ns), for both: a negative one, which
 * fails at once with EINVAL, counts as zero. sleep/usleep are here too:
 * glibc implements them with its internal nanosleep, which we never see.
 * An epoll_wait, an epoll_pwait without a mask or a poll that may block
 * makes its system call from the hook when direct.h allows.
 */
#undef _FORTIFY_SOURCE /* we define poll/ppoll ourselves */

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "direct.h"
#include "real.h"

/* Millisecond timeout as epoll/poll take it: negative = infinite. */
static inline int64_t ms_ns(int ms)
{
    return ms < 0 ? -1 : (int64_t)ms * 1000000;
}

/* Every interposer here reports -1/errno. */
#define D9_POLL_BODY(name, call, target, nowait, tmo, args)                    \
    D9_PARK_BODY(name, call, target, nowait, tmo, args, D9_RES_ERRNO, -1)

/* Through glibc's wrappers. */
static inline int epoll_wait_glibc(int epfd, struct epoll_event *ev, int max, int timeout)
{
    D9_POLL_BODY(epoll_wait, D9_CALL_EPOLL_WAIT, epfd, timeout == 0, ms_ns(timeout),
                 (epfd, ev, max, timeout));
}

static inline int epoll_pwait_glibc(int epfd, struct epoll_event *ev, int max, int timeout,
                                    const sigset_t *mask)
{
    D9_POLL_BODY(epoll_pwait, D9_CALL_EPOLL_PWAIT, epfd, timeout == 0, ms_ns(timeout),
                 (epfd, ev, max, timeout, mask));
}

static inline int poll_glibc(struct pollfd *fds, nfds_t n, int timeout)
{
    D9_POLL_BODY(poll, D9_CALL_POLL, 0, timeout == 0, ms_ns(timeout), (fds, n, timeout));
}

#if defined(__x86_64__)
/* The waits made directly (direct.h): nr is SYS_epoll_wait,
 * SYS_epoll_pwait (without a mask) or SYS_poll; the system call's
 * arguments are (a1, a2, a3, a4) for epoll, (a1, a2, a3) for poll, the
 * timeout in ms also apart. */

/* nr's call through glibc's wrapper, with timeout. */
__attribute__((noinline)) static int wait_glibc(long nr, long a1, long a2, long a3, int timeout)
{
    switch (nr) {
    case SYS_epoll_wait: return epoll_wait_glibc((int)a1, (struct epoll_event *)a2, (int)a3, timeout);
    case SYS_epoll_pwait: return epoll_pwait_glibc((int)a1, (struct epoll_event *)a2, (int)a3, timeout, NULL);
    default: return poll_glibc((struct pollfd *)a1, (nfds_t)a2, timeout);
    }
}

/* A direct wait that d9_direct_cancelled ended (EINTR): the rest of it,
 * through glibc's wrapper, a cancellation point, which acts on the cancel
 * or, with cancellation disabled, waits for the time left (the whole ms
 * count that has not passed since `since`). Returns the kernel's result. */
__attribute__((noinline, cold)) static long wait_after_kick(long nr, long a1, long a2, long a3, int timeout,
                                                            uint64_t since)
{
    int saved = errno, r;
    do {
        atomic_store_explicit(&d9_tls.kicked, 0, memory_order_relaxed);
        int left = timeout;
        if (timeout > 0) {
            uint64_t ms = (d9_stamp() - since) / d9_ns_stamp(1000000);
            left = ms >= (uint64_t)timeout ? 0 : timeout - (int)ms;
        }
        switch (nr) {
        case SYS_epoll_wait: r = D9_REAL(epoll_wait)((int)a1, (struct epoll_event *)a2, (int)a3, left); break;
        case SYS_epoll_pwait:
            r = D9_REAL(epoll_pwait)((int)a1, (struct epoll_event *)a2, (int)a3, left, NULL);
            break;
        default: r = D9_REAL(poll)((struct pollfd *)a1, (nfds_t)a2, left); break;
        }
    } while (r < 0 && errno == EINTR && atomic_load_explicit(&d9_tls.kicked, memory_order_relaxed));
    long ret = r < 0 ? -(long)errno : r;
    errno = saved;
    return ret;
}

/* A wait that may block, made here: in_direct is set to nr before
 * d9_direct is read, so d9_direct_cancelled knows this thread is in it; a
 * thread with no slot yet goes through glibc's wrapper, which registers it.
 * The UNPARK takes the kernel's result as it is (-errno). Inline in each
 * caller, whose nr, call and path are constants. */
static inline __attribute__((always_inline)) int wait_direct(long nr, long a1, long a2, long a3, long a4,
                                                             int timeout, uint8_t call, uint64_t target,
                                                             int path)
{
    uint64_t now = d9_tsc_stamp_if_recording();
    if (D9_UNLIKELY(!now) || D9_UNLIKELY(!d9_self))
        return wait_glibc(nr, a1, a2, a3, timeout);
    /* A signal handler's wait may nest in the thread's: restored, not cleared. */
    uint16_t outer = atomic_load_explicit(&d9_tls.in_direct, memory_order_relaxed);
    /* For a jump out of a handler (d9_direct_jumped). A nested wait's is
     * lower, and left when it ends: a jump between the two is then taken
     * for one out of the outer wait, whose system call a handler running
     * there has already ended. */
    uintptr_t sp;
    __asm__("mov %%rsp, %0" : "=r"(sp));
    d9_tls.direct_sp = sp;
    atomic_signal_fence(memory_order_release); /* before in_direct, for a handler here */
    atomic_store_explicit(&d9_tls.in_direct, (uint16_t)nr, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the cancel's membarrier orders it for the hardware */
    if (D9_UNLIKELY(!d9_direct_on(path))) {
        atomic_store_explicit(&d9_tls.in_direct, outer, memory_order_relaxed);
        return wait_glibc(nr, a1, a2, a3, timeout);
    }
    int rec = d9_park_fast(now, call, target, ms_ns(timeout));
    long ret = d9_sys6(nr, a1, a2, a3, a4, 0, _NSIG / 8);
    atomic_store_explicit(&d9_tls.in_direct, outer, memory_order_relaxed);
    if (D9_UNLIKELY(ret == -EINTR) && atomic_load_explicit(&d9_tls.kicked, memory_order_relaxed))
        ret = wait_after_kick(nr, a1, a2, a3, timeout, now);
    if (rec)
        d9_unpark_fast(call, ret, now);
    return D9_UNLIKELY(d9_sys_failed(ret)) ? (int)d9_sys_fail(ret) : (int)ret;
}

/* One function per call: with nr a constant, wait_direct keeps nothing of it. */
__attribute__((noinline)) static int epoll_wait_direct(int epfd, struct epoll_event *ev, int max, int timeout)
{
    return wait_direct(SYS_epoll_wait, epfd, (long)ev, max, timeout, timeout, D9_CALL_EPOLL_WAIT, (uint64_t)epfd,
                       D9_DIRECT_EPOLL);
}

__attribute__((noinline)) static int epoll_pwait_direct(int epfd, struct epoll_event *ev, int max, int timeout)
{
    return wait_direct(SYS_epoll_pwait, epfd, (long)ev, max, timeout, timeout, D9_CALL_EPOLL_PWAIT, (uint64_t)epfd,
                       D9_DIRECT_EPOLL);
}

__attribute__((noinline)) static int poll_direct(struct pollfd *fds, nfds_t n, int timeout)
{
    return wait_direct(SYS_poll, (long)fds, (long)n, timeout, 0, timeout, D9_CALL_POLL, 0, D9_DIRECT_POLL);
}
#define D9_EPOLL_DIRECT(fn, cond)                                              \
    if ((cond) && d9_direct_on(D9_DIRECT_EPOLL))                               \
    return fn(epfd, ev, max, timeout)
#define D9_POLL_DIRECT()                                                       \
    if (timeout != 0 && d9_direct_on(D9_DIRECT_POLL))                          \
    return poll_direct(fds, n, timeout)
#else
#define D9_EPOLL_DIRECT(fn, cond)
#define D9_POLL_DIRECT()
#endif

D9_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    D9_EPOLL_DIRECT(epoll_wait_direct, timeout != 0);
    return epoll_wait_glibc(epfd, ev, max, timeout);
}

D9_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
                          const sigset_t *mask)
{
    D9_EPOLL_DIRECT(epoll_pwait_direct, timeout != 0 && !mask);
    return epoll_pwait_glibc(epfd, ev, max, timeout, mask);
}

D9_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
                           const struct timespec *ts, const sigset_t *mask)
{
    int64_t tmo = d9_ts_ns(ts);
    D9_POLL_BODY(epoll_pwait2, D9_CALL_EPOLL_PWAIT2, epfd, tmo == 0, tmo, (epfd, ev, max, ts, mask));
}

D9_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    D9_POLL_DIRECT();
    return poll_glibc(fds, n, timeout);
}

/* _FORTIFY_SOURCE builds call these; glibc's versions call its internal poll,
 * not ours, so they need their own interposers. */
D9_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
    D9_POLL_BODY(__poll_chk, D9_CALL_POLL, 0, timeout == 0, ms_ns(timeout),
                 (fds, n, timeout, fdslen));
}

D9_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                    const sigset_t *mask)
{
    int64_t tmo = d9_ts_ns(ts);
    D9_POLL_BODY(ppoll, D9_CALL_PPOLL, 0, tmo == 0, tmo, (fds, n, ts, mask));
}

D9_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                          const sigset_t *mask, size_t fdslen)
{
    int64_t tmo = d9_ts_ns(ts);
    D9_POLL_BODY(__ppoll_chk, D9_CALL_PPOLL, 0, tmo == 0, tmo, (fds, n, ts, mask, fdslen));
}

D9_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    int64_t tmo = d9_timeout_ns(tv, 1000);
    D9_POLL_BODY(select, D9_CALL_SELECT, 0, tmo == 0, tmo, (n, r, w, e, tv));
}

D9_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                      const sigset_t *mask)
{
    int64_t tmo = d9_ts_ns(ts);
    D9_POLL_BODY(pselect, D9_CALL_PSELECT, 0, tmo == 0, tmo, (n, r, w, e, ts, mask));
}

/* Sleeps always park, even for zero: a sleep(0) loop is a yield loop the
 * timeline should show. */
D9_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    D9_POLL_BODY(nanosleep, D9_CALL_NANOSLEEP, 0, 0, d9_ts_ns(req), (req, rem));
}

D9_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                              struct timespec *rem)
{
    D9_PARK_BODY(clock_nanosleep, D9_CALL_NANOSLEEP, 0, 0,
                 (flags & TIMER_ABSTIME) ? d9_abs_tmo(clk, req) : d9_ts_ns(req),
                 (clk, flags, req, rem), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int usleep(useconds_t us)
{
    D9_POLL_BODY(usleep, D9_CALL_NANOSLEEP, 0, 0, (int64_t)us * 1000, (us));
}

/* Returns the unslept seconds, never an error: result is that count. */
D9_EXPORT unsigned int sleep(unsigned int s)
{
    D9_PARK_BODY(sleep, D9_CALL_NANOSLEEP, 0, 0, (int64_t)s * 1000000000, (s), D9_RES_VALUE, s);
}
