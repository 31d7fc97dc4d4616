/* real.h - pointers to the libc functions the agent interposes.
 * One X-macro list names every real function once; the struct of pointers,
 * the resolver and the lazy accessor are all generated from it.
 */
#ifndef DIAL9_REAL_H
#define DIAL9_REAL_H

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <netdb.h>
#include <time.h>

#include "agent.h"
#include "safe_load.h"

/* X(return type, name, (parameter types), symbol version or NULL).
 * Versioned entries use dlvsym (falling back to dlsym) so we call the same
 * implementation a normally linked program would get. */
#define D9_REAL_LIST(X)                                                        \
    X(int, epoll_wait, (int, struct epoll_event *, int, int), NULL)            \
    X(int, epoll_pwait, (int, struct epoll_event *, int, int,                  \
                         const sigset_t *), NULL)                              \
    X(int, epoll_pwait2, (int, struct epoll_event *, int,                      \
                          const struct timespec *, const sigset_t *),          \
      "GLIBC_2.35")                                                            \
    X(int, epoll_ctl, (int, int, int, struct epoll_event *), NULL)             \
    X(int, poll, (struct pollfd *, nfds_t, int), NULL)                         \
    X(int, __poll_chk, (struct pollfd *, nfds_t, int, size_t), NULL)           \
    X(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *,           \
                   const sigset_t *), NULL)                                    \
    X(int, __ppoll_chk, (struct pollfd *, nfds_t, const struct timespec *,     \
                         const sigset_t *, size_t), NULL)                      \
    X(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *),      \
      NULL)                                                                    \
    X(int, pselect, (int, fd_set *, fd_set *, fd_set *,                        \
                     const struct timespec *, const sigset_t *), NULL)         \
    X(int, nanosleep, (const struct timespec *, struct timespec *), NULL)      \
    X(int, clock_nanosleep, (clockid_t, int, const struct timespec *,          \
                             struct timespec *), NULL)                         \
    X(int, usleep, (useconds_t), NULL)                                         \
    X(unsigned int, sleep, (unsigned int), NULL)                               \
    X(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *),           \
      "GLIBC_2.3.2")                                                           \
    X(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *,       \
                                    const struct timespec *), "GLIBC_2.3.2")   \
    X(int, pthread_cond_clockwait, (pthread_cond_t *, pthread_mutex_t *,       \
                                    clockid_t, const struct timespec *),       \
      "GLIBC_2.30")                                                            \
    X(int, pthread_cond_signal, (pthread_cond_t *), "GLIBC_2.3.2")             \
    X(int, pthread_cond_broadcast, (pthread_cond_t *), "GLIBC_2.3.2")          \
    X(int, sem_wait, (sem_t *), NULL)                                          \
    X(int, sem_timedwait, (sem_t *, const struct timespec *), NULL)            \
    X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *),       \
      "GLIBC_2.30")                                                            \
    X(int, sem_post, (sem_t *), NULL)                                          \
    X(long, syscall, (long, ...), NULL)                                        \
    X(int, eventfd, (unsigned int, int), NULL)                                 \
    X(int, eventfd_write, (int, eventfd_t), NULL)                              \
    X(int, eventfd_read, (int, eventfd_t *), NULL)                             \
    X(ssize_t, write, (int, const void *, size_t), NULL)                       \
    X(int, close, (int), NULL)                                                 \
    X(int, close_range, (unsigned int, unsigned int, int), NULL)               \
    X(int, dup, (int), NULL)                                                   \
    X(int, dup2, (int, int), NULL)                                             \
    X(int, dup3, (int, int, int), NULL)                                        \
    X(int, fcntl, (int, int, ...), NULL)                                       \
    X(int, fcntl64, (int, int, ...), "GLIBC_2.28")                             \
    X(int, ioctl, (int, unsigned long, ...), NULL)                             \
    X(int, open, (const char *, int, ...), NULL)                               \
    X(int, open64, (const char *, int, ...), NULL)                             \
    X(int, openat, (int, const char *, int, ...), NULL)                        \
    X(int, openat64, (int, const char *, int, ...), NULL)                      \
    X(int, creat, (const char *, mode_t), NULL)                                \
    X(int, creat64, (const char *, mode_t), NULL)                              \
    X(int, socket, (int, int, int), NULL)                                      \
    X(int, socketpair, (int, int, int, int *), NULL)                           \
    X(int, accept, (int, struct sockaddr *, socklen_t *), NULL)                \
    X(int, accept4, (int, struct sockaddr *, socklen_t *, int), NULL)          \
    X(int, connect, (int, const struct sockaddr *, socklen_t), NULL)           \
    X(int, pipe, (int *), NULL)                                                \
    X(int, pipe2, (int *, int), NULL)                                          \
    X(int, epoll_create, (int), NULL)                                          \
    X(int, epoll_create1, (int), NULL)                                         \
    X(ssize_t, read, (int, void *, size_t), NULL)                              \
    X(ssize_t, __read_chk, (int, void *, size_t, size_t), NULL)                \
    X(ssize_t, recv, (int, void *, size_t, int), NULL)                         \
    X(ssize_t, __recv_chk, (int, void *, size_t, size_t, int), NULL)           \
    X(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *,         \
                          socklen_t *), NULL)                                  \
    X(ssize_t, __recvfrom_chk, (int, void *, size_t, size_t, int,              \
                                struct sockaddr *, socklen_t *), NULL)         \
    X(ssize_t, recvmsg, (int, struct msghdr *, int), NULL)                     \
    X(int, recvmmsg, (int, struct mmsghdr *, unsigned int, int,                \
                      struct timespec *), NULL)                                \
    X(ssize_t, send, (int, const void *, size_t, int), NULL)                   \
    X(ssize_t, sendto, (int, const void *, size_t, int,                        \
                        const struct sockaddr *, socklen_t), NULL)             \
    X(ssize_t, sendmsg, (int, const struct msghdr *, int), NULL)               \
    X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int), NULL)         \
    X(ssize_t, sendfile, (int, int, off_t *, size_t), NULL)                    \
    X(ssize_t, sendfile64, (int, int, off_t *, size_t), NULL)                  \
    X(ssize_t, readv, (int, const struct iovec *, int), NULL)                  \
    X(ssize_t, writev, (int, const struct iovec *, int), NULL)                 \
    X(ssize_t, pread, (int, void *, size_t, off_t), NULL)                      \
    X(ssize_t, pread64, (int, void *, size_t, off_t), NULL)                    \
    X(ssize_t, pwrite, (int, const void *, size_t, off_t), NULL)               \
    X(ssize_t, pwrite64, (int, const void *, size_t, off_t), NULL)             \
    X(int, fsync, (int), NULL)                                                 \
    X(int, fdatasync, (int), NULL)                                             \
    X(int, getaddrinfo, (const char *, const char *, const struct addrinfo *,  \
                         struct addrinfo **), NULL)                            \
    X(void *, mmap, (void *, size_t, int, int, int, off_t), NULL)              \
    X(int, munmap, (void *, size_t), NULL)                                     \
    X(int, pthread_mutex_lock, (pthread_mutex_t *), NULL)                      \
    X(int, pthread_mutex_trylock, (pthread_mutex_t *), NULL)                   \
    X(int, pthread_rwlock_rdlock, (pthread_rwlock_t *), NULL)                  \
    X(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *), NULL)               \
    X(int, pthread_rwlock_wrlock, (pthread_rwlock_t *), NULL)                  \
    X(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *), NULL)               \
    X(int, pthread_create, (pthread_t *, const pthread_attr_t *,               \
                            void *(*)(void *), void *), NULL)                  \
    X(int, pthread_setname_np, (pthread_t, const char *), NULL)                \
    X(int, pthread_cancel, (pthread_t), NULL)                                  \
    X(int, pthread_join, (pthread_t, void **), NULL)                           \
    X(int, pthread_timedjoin_np, (pthread_t, void **, const struct timespec *),\
      NULL)                                                                    \
    X(int, pthread_clockjoin_np, (pthread_t, void **, clockid_t,               \
                                  const struct timespec *), NULL)              \
    X(int, prctl, (int, ...), NULL)                                            \
    X(int, pause, (void), NULL)                                                \
    X(pid_t, wait, (int *), NULL)                                              \
    X(pid_t, waitpid, (pid_t, int *, int), NULL)                               \
    X(pid_t, wait4, (pid_t, int *, int, struct rusage *), NULL)                \
    X(int, waitid, (idtype_t, id_t, siginfo_t *, int), NULL)                   \
    X(int, sigsuspend, (const sigset_t *), NULL)                               \
    X(int, sigwait, (const sigset_t *, int *), NULL)                           \
    X(int, sigwaitinfo, (const sigset_t *, siginfo_t *), NULL)                 \
    X(int, sigtimedwait, (const sigset_t *, siginfo_t *,                       \
                          const struct timespec *), NULL)                      \
    X(int, setuid, (uid_t), NULL)                                              \
    X(int, seteuid, (uid_t), NULL)                                             \
    X(int, setreuid, (uid_t, uid_t), NULL)                                     \
    X(int, setresuid, (uid_t, uid_t, uid_t), NULL)                             \
    X(void, closefrom, (int), NULL)                                            \
    X(int, fclose, (FILE *), NULL)                                             \
    X(int, closedir, (DIR *), NULL)                                            \
    X(FILE *, freopen, (const char *, const char *, FILE *), NULL)             \
    X(FILE *, freopen64, (const char *, const char *, FILE *), NULL)           \
    X(int, execve, (const char *, char *const *, char *const *), NULL)         \
    X(int, execv, (const char *, char *const *), NULL)                         \
    X(int, execvp, (const char *, char *const *), NULL)                        \
    X(int, execvpe, (const char *, char *const *, char *const *), NULL)        \
    X(int, fexecve, (int, char *const *, char *const *), NULL)                \
    X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
                         const posix_spawnattr_t *, char *const *, char *const *), \
      "GLIBC_2.15")                                                            \
    X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
                          const posix_spawnattr_t *, char *const *, char *const *), \
      "GLIBC_2.15")                                                            \
    X(int, sigaction, (int, const struct sigaction *, struct sigaction *),     \
      NULL)                                                                    \
    X(void, _exit, (int), NULL)                                                \
    X(void, _Exit, (int), NULL)                                                \
    X(void, longjmp, (struct __jmp_buf_tag *, int), NULL)                      \
    X(void, _longjmp, (struct __jmp_buf_tag *, int), NULL)                     \
    X(void, siglongjmp, (struct __jmp_buf_tag *, int), NULL)                   \
    X(void, __longjmp_chk, (struct __jmp_buf_tag *, int), NULL)

#define D9_REAL_FIELD(ret, name, params, ver) ret(*name) params;
struct d9_real {
    D9_REAL_LIST(D9_REAL_FIELD)
};
#undef D9_REAL_FIELD

/* Filled by d9_real_resolve(). Stores and loads are relaxed atomics: racing
 * resolvers store identical values. */
extern struct d9_real d9_real __attribute__((visibility("hidden")));

/* Resolves every pointer (idempotent, safe from any thread, any time).
 * Pointers for symbols this libc lacks stay NULL. */
void d9_real_resolve(void);

/* The real function, resolving on first use (calls can precede our
 * constructor). NULL only if libc lacks the symbol. */
#define D9_REAL(name)                                                          \
    __extension__({                                                            \
        __typeof__(d9_real.name) f_ = __atomic_load_n(&d9_real.name, __ATOMIC_RELAXED); \
        if (D9_UNLIKELY(f_ == NULL)) {                                         \
            d9_real_resolve();                                                 \
            f_ = __atomic_load_n(&d9_real.name, __ATOMIC_RELAXED);             \
        }                                                                      \
        f_;                                                                    \
    })

/* The agent's own futex calls (writer wake-ups, the close gates, dump
 * requests): the real syscall(), never our interposer, so they are never
 * recorded as the calling host thread's WAKE or park, whatever d9_busy
 * says. Returns and sets errno as syscall() does. */
static inline long d9_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    long (*real)(long, ...) = D9_REAL(syscall); /* resolved at init: no dlsym from a signal handler */
    if (D9_UNLIKELY(real == NULL)) {
        errno = ENOSYS;
        return -1;
    }
    return real(SYS_futex, word, op, val, ts, NULL, 0);
}

/* Binds local `fn` to the real function, or fails the call with ENOSYS when
 * libc lacks it (or it is being resolved recursively). */
#define D9_REAL_OR_FAIL(fn, name, failret)                                     \
    __typeof__(d9_real.name) fn = D9_REAL(name);                               \
    if (D9_UNLIKELY(fn == NULL)) {                                             \
        errno = ENOSYS;                                                        \
        return failret;                                                        \
    }

/* For a hook that records nothing and makes no fd of its own until
 * recording can be on (read, write, pread, pwrite and their 64-bit names;
 * pthread_mutex_lock on a free mutex; epoll_ctl, which records only for an
 * fd the table tracks): the real function, else a tail call
 * to name##_unresolved (D9_UNRESOLVED), which resolves and makes the plain
 * call. A pointer is NULL only before the first resolve (real.c's
 * constructor runs before init.c's, which turns recording on) or for a
 * symbol libc lacks. Out of line, so the hook
 * keeps no frame for its arguments across d9_real_resolve: its pass-through
 * path is a few loads and tests and a jump (docs/BENCH-HISTORY.md, session 21). */
#define D9_REAL_OR_PLAIN(fn, name, args)                                       \
    __typeof__(d9_real.name) fn = __atomic_load_n(&d9_real.name, __ATOMIC_RELAXED); \
    if (D9_UNLIKELY(fn == NULL))                                               \
        return name##_unresolved args

#define D9_UNPAREN(...) __VA_ARGS__
/* Defines the name##_unresolved of D9_REAL_OR_PLAIN. */
#define D9_UNRESOLVED(type, name, params, args, failret)                       \
    __attribute__((noinline, cold)) static type name##_unresolved params       \
    {                                                                          \
        D9_REAL_OR_FAIL(real_, name, failret);                                 \
        return real_ args;                                                     \
    }

/* ---- Helpers shared by the interposers (hooks_*.c) --------------------- */

/* close, close_range, dup2 and dup3 made through syscall() (hooks_futex.c
 * routes them here, hooks_fd.c makes them): the same kind table and close
 * gate as glibc's functions of those names get. close and close_range
 * make the same system call (so neither a cancellation point nor glibc's
 * EINTR handling is added); dup2 and dup3 go through the agent's dup2()
 * and dup3(), whose glibc functions are that system call. Returns and sets
 * errno as syscall() does. */
long d9_syscall_fd(long nr, long a1, long a2, long a3) D9_HIDDEN;

/* Result styles for D9_PARKED: -1/errno functions, pthread-style
 * functions that return the error number itself, plain values. */
/* errno is read only for a failed call: in a shared object each read of
 * errno is a call to __errno_location. */
#define D9_RES_ERRNO(ret) ((ret) >= 0 ? (int64_t)(ret) : -(int64_t)errno)
#define D9_RES_ERRNUM(ret) ((ret) == 0 ? 0 : -(int64_t)(ret))
#define D9_RES_VALUE(ret) ((int64_t)(ret)) /* no error channel (sleep) */

/* ret = expr, bracketed by PARK and UNPARK on the calling thread. errno is
 * exactly what expr left (d9_unpark preserves it), the return value
 * untouched. When nothing is recorded (agent off, or inside it) it is a
 * plain call, and timeout_ns, which may read a clock for an absolute
 * deadline, is not evaluated. */
#define D9_PARKED(ret, call, target, timeout_ns, expr, res)                    \
    do {                                                                       \
        uint64_t now_ = d9_stamp_if_recording();                               \
        int rec_ = !now_ ? 0                                                   \
                         : d9_park_fast(now_, (call), (uint64_t)(uintptr_t)(target), \
                                        (timeout_ns));                         \
        ret = (expr);                                                          \
        if (rec_)                                                              \
            d9_unpark_fast((call), res(ret), now_);                            \
    } while (0)

/* The whole body of a blocking interposer: bind the real function, count a
 * zero-timeout poll (`nowait`) without parking, else park for the call.
 * tmo: relative timeout in ns (-1 infinite); args: forwarded arguments;
 * res: D9_RES_* style; failret: returned when libc lacks the function. */
#define D9_PARK_BODY(name, call, target, nowait, tmo, args, res, failret)      \
    D9_REAL_OR_FAIL(real_, name, failret);                                     \
    if (nowait) {                                                              \
        d9_hook_nowait(call);                                                  \
        return real_ args;                                                     \
    }                                                                          \
    __typeof__(real_ args) ret_;                                               \
    D9_PARKED(ret_, call, target, tmo, real_ args, res);                       \
    return ret_

/* Zero-timeout poll: counted, not parked. */
static inline void d9_hook_nowait(uint8_t call)
{
    if (D9_LIKELY(!d9_busy))
        d9_note_nowait(call);
}

/* 1 when the calling thread may record: the agent is on and not inside it. */
static inline int d9_may_record(void)
{
    return D9_LIKELY(!d9_busy) && atomic_load_explicit(&d9_recording, memory_order_relaxed);
}

/* A TSC stamp when this thread may record and stamps are TSC ticks, else
 * 0: one load answers both (agent.h). Never a call, so a caller that keeps
 * no frame can take it. The stamp has its low bit set, so the compiler
 * knows it is not 0 and a caller's test for 0 goes (2 instructions); one
 * tick is under a ns, and no two stamps swap. */
static inline uint64_t d9_tsc_stamp_if_recording(void)
{
#if defined(__x86_64__)
    if (D9_LIKELY(!d9_busy) &&
        D9_LIKELY(atomic_load_explicit(&d9_recording, memory_order_relaxed) == D9_REC_TSC))
        return __builtin_ia32_rdtsc() | 1;
#endif
    return 0;
}

/* d9_may_record() ? d9_stamp() : 0, the TSC case first. No clock read when
 * nothing will be recorded (agent off, or inside it). */
static inline uint64_t d9_stamp_if_recording(void)
{
    uint64_t ts = d9_tsc_stamp_if_recording();
    if (D9_LIKELY(ts))
        return ts;
    return d9_may_record() ? d9_stamp() : 0;
}

/* Wakes are stamped before the real call so a wake never sorts after the
 * wakee's UNPARK. d9_wake_start() returns 0 inside the agent: no event. */
static inline uint64_t d9_wake_start(void)
{
    return d9_stamp_if_recording();
}

static inline void d9_wake_end(uint64_t ts, uint8_t call, uint64_t target, uint64_t count)
{
    if (ts) /* preserves errno itself (only its slow path touches it) */
        d9_emit_since(ts, D9_EV_WAKE, call, target, count);
}

/* Slow-call timing (hooks_slow.c): t = d9_slow_start() before the real
 * call, d9_slow_end(t, ...) after it. Two stamps (clock.h) per timed call;
 * an event only when the call took at least DIAL9_SLOW_SYSCALL_US. t.t0 is
 * 0 inside the agent: nothing recorded. The threshold is read before the
 * call, with the recording check, and the second stamp follows t0's clock:
 * after the call nothing but the stack is touched (clock.h says why).
 * kind: the fd's kind; D9_FD_UNKNOWN is classified (fstat) on the slow path
 * unless D9_SLOW_FINAL is or-ed in (the fd is gone, e.g. after close).
 * D9_SLOW_VERIFY: timed as a regular-file access (kind FILE, learned from
 * an open by path); a device or FIFO opened by path is relabelled OTHER on
 * the slow path and not reported: waiting on it is not a file stall. */
#define D9_SLOW_FINAL 0x100u
#define D9_SLOW_VERIFY 0x200u
struct d9_timed {
    uint64_t t0;    /* stamp before the call; 0: not timed */
    uint64_t limit; /* the threshold in stamps, read with t0 */
};
/* A timer with threshold *limit (d9_slow_stamps, d9_lock_stamps). */
static inline struct d9_timed d9_timed_start(const uint64_t *limit)
{
    struct d9_timed t = {d9_stamp_if_recording(), 0};
    if (D9_LIKELY(t.t0))
        t.limit = *limit;
    return t;
}
static inline struct d9_timed d9_slow_start(void) { return d9_timed_start(&d9_slow_stamps); }
/* The cold part of d9_slow_end: records the call (dur in stamps) unless the
 * fd's kind rules it out. Preserves errno. */
void d9_slow_record(uint64_t t0, uint64_t dur, uint8_t call, int fd, unsigned kind);
/* The stamps t took until now (0 when t was not timed, or took less than
 * its threshold): the second stamp and one comparison. */
static inline uint64_t d9_timed_over(struct d9_timed t)
{
    if (!t.t0)
        return 0;
    uint64_t dur = d9_stamp_like(t.t0) - t.t0;
    return D9_UNLIKELY(dur >= t.limit) ? dur : 0;
}
/* Inline and without errno traffic: a timed call that was fast (nearly all
 * of them) costs d9_timed_over. */
static inline void d9_slow_end(struct d9_timed t, uint8_t call, int fd, unsigned kind)
{
    uint64_t dur = d9_timed_over(t);
    if (D9_UNLIKELY(dur))
        d9_slow_record(t.t0, dur, call, fd, kind); /* the writer makes dur ns (clock.h) */
}

/* A timeout the program passed to a call, as (seconds, a count of unit_ns)
 * at p: a timespec (unit 1) or a timeval (unit 1000). ns, clamped to
 * [0, INT64_MAX]; -1 (infinite) for NULL or a pointer the kernel will
 * refuse (safe_load.h). */
static inline int64_t d9_timeout_ns(const void *p, int64_t unit_ns)
{
    int64_t w[2];
    if (!d9_load16(p, w))
        return -1;
    if (w[0] < 0)
        return 0;
    if (w[0] >= INT64_MAX / 1000000000 - 1)
        return INT64_MAX;
    int64_t ns = w[0] * 1000000000 + w[1] * unit_ns;
    return ns < 0 ? 0 : ns;
}

static inline int64_t d9_ts_ns(const struct timespec *ts) { return d9_timeout_ns(ts, 1); }

/* A PARK's timeout for an absolute deadline on clock clk. On CLOCK_MONOTONIC
 * or CLOCK_REALTIME, the deadline itself, tagged (clock.h): the writer
 * makes it relative to the park's stamp, so the hook reads no clock (a vDSO
 * read costs more than the rest of a park and unpark). On another clock,
 * ns from now, clamped >= 0. -1 (infinite) for NULL/bad. */
static inline int64_t d9_abs_tmo(clockid_t clk, const struct timespec *abs)
{
    struct timespec now;
    int64_t deadline = d9_ts_ns(abs);
    if (deadline < 0 || deadline == INT64_MAX)
        return deadline;
    if (D9_LIKELY(clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME))
        return d9_tmo_deadline(clk == CLOCK_REALTIME, (uint64_t)deadline);
    int err = errno;
    int rc = clock_gettime(clk, &now);
    errno = err;
    if (rc != 0)
        return 0;
    int64_t rel = deadline - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
    return rel < 0 ? 0 : rel;
}

#endif
