/* hooks_fd.c - the fd kind table's bookkeeping and the wakes that travel
 * through fds. Calls that make an fd record its kind; dup*, fcntl(F_DUPFD*)
 * copy it (dup2 and dup3 also through syscall(): hooks_futex.c); close and
 * close_range (also through syscall()), and the closes inside fclose,
 * closedir and freopen, forget it. write() dispatches on the kind byte: an
 * 8-byte eventfd write or a write to a pipe whose read end is in an epoll
 * set or blocks is a WAKE (each made directly when direct.h allows, but
 * for a blocking eventfd's, which may wait), a regular-file
 * write is timed (and made directly, as read is: direct.h), anything else
 * goes straight through. writev to a pipe is a WAKE and may park as write
 * does, through glibc.
 * epoll_ctl on an eventfd or a pipe read end is recorded (and made
 * directly when direct.h allows) so the decoder can tie the fd to the
 * epoll set a thread parks on. Sockets carry whether
 * they block (fdtable.h): accept on a blocking one parks, as reads do, and
 * a write to one that waited is a park (socket_wait.h).
 * Creating, duplicating and closing calls are also timed as slow syscalls.
 * Closing one of the agent's own fds (close, close_range, closefrom, dup2
 * or dup3 onto it) is told to the segment layer first, which stops using
 * that number. In a vfork child (lifecycle.h) the table is not touched: it
 * is the parent's, and the child's fds are its own copy. With the agent off
 * (fdtable.h) neither the table nor the gate is: the hooks only forward.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "direct.h"
#include "fdtable.h"
#include "lifecycle.h"
#include "log.h"
#include "real.h"
#include "segment.h"
#include "socket_wait.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* No table and no gate: in a vfork child (the table and the segment fds
 * are the parent's), or with the agent off (fdtable.h). */
static inline int fds_untouched(void)
{
    return D9_UNLIKELY(d9_in_vfork) || D9_UNLIKELY(atomic_load_explicit(&d9_fd_table_off, memory_order_relaxed));
}

/* fd is new: its kind, or a socket's byte with its blocking flag. */
static inline void tbl_put(int fd, unsigned byte)
{
    if (!fds_untouched())
        d9_fd_put(fd, byte);
}

static inline void tbl_copy(int fd, struct d9_fd_copy_of from)
{
    if (!fds_untouched())
        d9_fd_copy(fd, from);
}

/* F_SETFL or FIONBIO succeeded. In a vfork child the table is the parent's,
 * whose fd of that number may be another description: only the change
 * that errs safe is made there, a pipe write end's nonblock flag cleared
 * (its writes then go through glibc) or the blocking flag of a socket or a
 * read end (its reads then do not park). */
static inline void tbl_nonblock(int fd, int nonblock)
{
    int safe = (d9_fd_byte(fd) & D9_FDK_PIPE_W) ? !nonblock : nonblock;
    if (safe || !fds_untouched())
        d9_fd_set_nonblock(fd, nonblock);
}

/* The closes below, once the table has forgotten the fds: tell the segment
 * layer (not for the agent's own closes: d9_busy). Returns the count
 * closed() bumps after the real call, or NULL. */
static inline uint32_t *close_gate(unsigned first, unsigned last)
{
    if (D9_UNLIKELY(d9_busy))
        return NULL;
    return d9_seg_close_begin(first, last);
}

/* fd, whose kind byte the caller just read, is about to be closed by the
 * host: forget its kind. */
static inline uint32_t *closing(int fd, unsigned byte)
{
    if (fd < 0 || fds_untouched())
        return NULL;
    if (fd == 2)
        d9_log_stderr(0);
    d9_fd_forget_byte(fd, byte);
    return close_gate((unsigned)fd, (unsigned)fd);
}

/* [first, last] are about to be closed by the host: forget their kinds. */
static inline uint32_t *closing_range(unsigned first, unsigned last)
{
    if (first == last && first <= INT_MAX)
        return closing((int)first, d9_fd_byte((int)first));
    if (fds_untouched() || first > last)
        return NULL;
    if (first <= 2 && last >= 2)
        d9_log_stderr(0);
    d9_fd_clear_range(first, last);
    return close_gate(first, last);
}

static inline void closed(uint32_t *ended)
{
    if (ended)
        d9_seg_close_end(ended);
}

/* ---- fds made by a timed call ------------------------------------------ */

/* ret = the new fd from expr, timed as call; fd gets byte kind (a kind,
 * or a socket's byte with its flag) when ret >= 0.
 * fd_arg: the fd the call names for the event (-1 none: the new fd, and
 * a failed call's event says fd -1, kind unknown). */
#define D9_MAKE_FD(real_call, call, kind, fd_arg)                              \
    struct d9_timed t0_ = d9_slow_start();                                     \
    int ret_ = real_call;                                                      \
    if (ret_ >= 0)                                                             \
        tbl_put(ret_, (kind));                                                 \
    d9_slow_end(t0_, (call), (fd_arg) >= 0 ? (fd_arg) : ret_,                  \
                ((fd_arg) >= 0 || ret_ >= 0 ? (kind) : D9_FD_UNKNOWN) | D9_SLOW_FINAL); \
    return ret_

/* open's mode argument exists only when the flags need it (as in glibc). */
#define D9_OPEN_MODE(flags, last)                                              \
    mode_t mode_ = 0;                                                          \
    if (__OPEN_NEEDS_MODE(flags)) {                                            \
        va_list ap_;                                                           \
        va_start(ap_, last);                                                   \
        mode_ = va_arg(ap_, mode_t);                                           \
        va_end(ap_);                                                           \
    }

/* Opened by path: a regular file unless asked for a directory. Devices and
 * FIFOs opened by path are told apart on the slow path (fstat) only. */
static inline unsigned open_kind(int flags)
{
    return (flags & O_DIRECTORY) ? D9_FD_DIR : D9_FD_FILE;
}

#define D9_OPEN_BODY(name, call, args)                                         \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    D9_MAKE_FD(real_ args, call, open_kind(flags), -1)

D9_EXPORT int open(const char *path, int flags, ...)
{
    D9_OPEN_MODE(flags, flags);
    D9_OPEN_BODY(open, D9_CALL_OPEN, (path, flags, mode_));
}

D9_EXPORT int open64(const char *path, int flags, ...)
{
    D9_OPEN_MODE(flags, flags);
    D9_OPEN_BODY(open64, D9_CALL_OPEN, (path, flags, mode_));
}

D9_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    D9_OPEN_MODE(flags, flags);
    D9_OPEN_BODY(openat, D9_CALL_OPENAT, (dirfd, path, flags, mode_));
}

D9_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    D9_OPEN_MODE(flags, flags);
    D9_OPEN_BODY(openat64, D9_CALL_OPENAT, (dirfd, path, flags, mode_));
}

D9_EXPORT int creat(const char *path, mode_t mode)
{
    D9_REAL_OR_FAIL(real_, creat, -1);
    D9_MAKE_FD(real_(path, mode), D9_CALL_OPEN, D9_FD_FILE, -1);
}

D9_EXPORT int creat64(const char *path, mode_t mode)
{
    D9_REAL_OR_FAIL(real_, creat64, -1);
    D9_MAKE_FD(real_(path, mode), D9_CALL_OPEN, D9_FD_FILE, -1);
}

D9_EXPORT int socket(int domain, int type, int proto)
{
    D9_REAL_OR_FAIL(real_, socket, -1);
    D9_MAKE_FD(real_(domain, type, proto), D9_CALL_SOCKET, d9_fd_socket_byte(type), -1);
}

/* d9_fd_socket_byte reads SOCK_NONBLOCK as O_NONBLOCK, which Linux makes it. */
_Static_assert(SOCK_NONBLOCK == O_NONBLOCK, "SOCK_NONBLOCK is O_NONBLOCK");

/* On a blocking listening socket, the wait for a connection is a park
 * (target the listening fd; timeout -1, SO_RCVTIMEO is not read);
 * otherwise the call is timed, its event naming the listening socket. The
 * new socket is blocking unless flags has SOCK_NONBLOCK: on Linux it does
 * not inherit O_NONBLOCK. */
#define D9_ACCEPT_BODY(name, call, args, flags)                                \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    unsigned b_ = d9_fd_byte(fd);                                              \
    if (D9_UNLIKELY(!b_))                                                      \
        b_ = d9_fd_probe(fd);                                                  \
    if (b_ == D9_FD_BLOCKING_SOCKET) {                                         \
        int ret_;                                                              \
        D9_FD_WAIT(ret_, (call), fd, real_ args);                              \
        if (ret_ >= 0)                                                         \
            tbl_put(ret_, d9_fd_socket_byte(flags));                           \
        return ret_;                                                           \
    }                                                                          \
    D9_MAKE_FD(real_ args, (call), d9_fd_socket_byte(flags), fd)

D9_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    D9_ACCEPT_BODY(accept, D9_CALL_ACCEPT, (fd, addr, len), 0);
}

D9_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    D9_ACCEPT_BODY(accept4, D9_CALL_ACCEPT4, (fd, addr, len, flags), flags);
}

/* ---- fds made by untimed calls ----------------------------------------- */

D9_EXPORT int socketpair(int domain, int type, int proto, int sv[2])
{
    D9_REAL_OR_FAIL(real_, socketpair, -1);
    int ret = real_(domain, type, proto, sv);
    if (ret == 0) {
        tbl_put(sv[0], d9_fd_socket_byte(type));
        tbl_put(sv[1], d9_fd_socket_byte(type));
    }
    return ret;
}

D9_EXPORT int pipe(int fds[2])
{
    D9_REAL_OR_FAIL(real_, pipe, -1);
    int ret = real_(fds);
    if (ret == 0 && !fds_untouched())
        d9_fd_set_pipe(fds[0], fds[1], 0);
    return ret;
}

D9_EXPORT int pipe2(int fds[2], int flags)
{
    D9_REAL_OR_FAIL(real_, pipe2, -1);
    int ret = real_(fds, flags);
    if (ret == 0 && !fds_untouched())
        d9_fd_set_pipe(fds[0], fds[1], flags);
    return ret;
}

/* A one-argument call that returns a new fd of a fixed kind. */
#define D9_NEW_FD_BODY(name, byte, arg)                                        \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    int fd_ = real_ arg;                                                       \
    if (fd_ >= 0)                                                              \
        tbl_put(fd_, (byte));                                                  \
    return fd_

D9_EXPORT int eventfd(unsigned int initval, int flags)
{
    D9_NEW_FD_BODY(eventfd, d9_fd_eventfd_byte(flags), (initval, flags));
}

D9_EXPORT int epoll_create(int size)
{
    D9_NEW_FD_BODY(epoll_create, D9_FD_EPOLL, (size));
}

D9_EXPORT int epoll_create1(int flags)
{
    D9_NEW_FD_BODY(epoll_create1, D9_FD_EPOLL, (flags));
}

/* ---- copies ------------------------------------------------------------ */

/* ret = expr, a copy of old on fd number ret; timed as call. What the copy
 * inherits is read before the call: after it, old may be closed by another
 * thread. */
#define D9_DUP_BODY(name, call, old, new, args, copy_cond)                     \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    struct d9_fd_copy_of from_ = d9_fd_copy_read(old);                         \
    unsigned kind_ = from_.byte & D9_FDK_KIND;                                 \
    uint32_t *ends_ = (copy_cond) ? closing(new, d9_fd_byte(new)) : NULL; /* replaced: closed */ \
    struct d9_timed t0_ = d9_slow_start();                                     \
    int ret_ = real_ args;                                                     \
    closed(ends_);                                                             \
    if (ret_ >= 0 && (copy_cond))                                              \
        tbl_copy(ret_, from_);                                                 \
    if (ret_ == 2 && (copy_cond) && !fds_untouched())                          \
        d9_log_stderr(1); /* a file put on stderr's number on purpose */      \
    d9_slow_end(t0_, call, old, kind_);                                        \
    return ret_

D9_EXPORT int dup(int old)
{
    D9_DUP_BODY(dup, D9_CALL_DUP, old, -1, (old), 1);
}

/* dup2(fd, fd) is a no-op that returns fd. */
D9_EXPORT int dup2(int old, int new)
{
    D9_DUP_BODY(dup2, D9_CALL_DUP2, old, new, (old, new), old != new);
}

D9_EXPORT int dup3(int old, int new, int flags)
{
    D9_DUP_BODY(dup3, D9_CALL_DUP3, old, new, (old, new, flags), 1);
}

/* fcntl's third argument is an int or a pointer depending on cmd; glibc
 * itself reads it as a pointer-sized value, which passes either through. */
static inline int fcntl_dups(int cmd) { return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC; }

/* from: read before the call when it copies fd (fcntl_dups). */
static inline int fcntl_done(int ret, int fd, int cmd, void *arg, struct d9_fd_copy_of from)
{
    if (ret >= 0 && fcntl_dups(cmd))
        tbl_copy(ret, from);
    else if (ret == 0 && cmd == F_SETFL)
        tbl_nonblock(fd, ((intptr_t)arg & O_NONBLOCK) != 0);
    return ret;
}

#define D9_FCNTL_BODY(name)                                                    \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    if (D9_LIKELY(!fcntl_dups(cmd) && cmd != F_SETFL))                         \
        return real_(fd, cmd, arg); /* nothing to see after it */              \
    struct d9_fd_copy_of from_ = {0, -1};                                      \
    if (fcntl_dups(cmd))                                                       \
        from_ = d9_fd_copy_read(fd);                                           \
    return fcntl_done(real_(fd, cmd, arg), fd, cmd, arg, from_)

/* fcntl, fcntl64 and ioctl are variadic, and a function that calls va_start
 * cannot end in a tail call. On x86-64 a variadic function takes its first
 * arguments in the registers a fixed one does, so there the hooks are
 * defined with the third argument fixed (under the symbol's name), and the
 * calls they only pass on (F_GETFL, FIONREAD before each of libevent's
 * reads) leave by a jump: fcntl 40 -> 19, ioctl 30 -> 9 instructions
 * (docs/BENCH-HISTORY.md, session 62). */
#if defined(__x86_64__)
#define D9_VA3_HOOK(ret, name, t1, a1, t2, a2, body)                           \
    ret d9_##name##_hook(t1 a1, t2 a2, void *arg) __asm__(#name);              \
    D9_EXPORT ret d9_##name##_hook(t1 a1, t2 a2, void *arg) { body; }
#else
#define D9_VA3_HOOK(ret, name, t1, a1, t2, a2, body)                           \
    D9_EXPORT ret name(t1 a1, t2 a2, ...)                                      \
    {                                                                          \
        va_list ap_;                                                           \
        va_start(ap_, a2);                                                     \
        void *arg = va_arg(ap_, void *);                                       \
        va_end(ap_);                                                           \
        body;                                                                  \
    }
#endif

D9_VA3_HOOK(int, fcntl, int, fd, int, cmd, D9_FCNTL_BODY(fcntl))
D9_VA3_HOOK(int, fcntl64, int, fd, int, cmd, D9_FCNTL_BODY(fcntl64))

/* FIONBIO sets or clears O_NONBLOCK as F_SETFL does (libuv makes its fds
 * non-blocking this way); every other request only passes through. */
#define D9_IOCTL_BODY                                                          \
    D9_REAL_OR_FAIL(real_, ioctl, -1);                                         \
    if (D9_LIKELY(req != FIONBIO))                                             \
        return real_(fd, req, arg);                                            \
    int ret = real_(fd, req, arg);                                             \
    if (ret == 0) /* the kernel read *arg: it is valid */                      \
        tbl_nonblock(fd, *(const int *)arg != 0);                              \
    return ret

D9_VA3_HOOK(int, ioctl, int, fd, unsigned long, req, D9_IOCTL_BODY)

/* ---- close ------------------------------------------------------------- */

/* Forget the fd before closing it: once closed its number may be reused by
 * another thread's eventfd() at any moment. close() releases the fd even
 * when it fails with EINTR/EIO, and EBADF means it was not open. */
D9_EXPORT int close(int fd)
{
    D9_REAL_OR_FAIL(real_, close, -1);
    unsigned byte = d9_fd_byte(fd);
    uint32_t *ends = closing(fd, byte);
    struct d9_timed t0 = d9_slow_start();
    int ret = real_(fd);
    closed(ends);
    d9_slow_end(t0, D9_CALL_CLOSE, fd, (byte & D9_FDK_KIND) | D9_SLOW_FINAL);
    return ret;
}

D9_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    D9_REAL_OR_FAIL(real_, close_range, -1);
    uint32_t *ends = flags & CLOSE_RANGE_CLOEXEC ? NULL : closing_range(first, last); /* before: the numbers are free after */
    int ret = real_(first, last, flags);
    closed(ends);
    return ret;
}

long d9_syscall_fd(long nr, long a1, long a2, long a3)
{
    if (nr == SYS_dup2)
        return dup2((int)a1, (int)a2);
    if (nr == SYS_dup3)
        return dup3((int)a1, (int)a2, (int)a3);
    D9_REAL_OR_FAIL(real_, syscall, -1);
    uint32_t *ends;
    if (nr == SYS_close)
        ends = closing((int)a1, d9_fd_byte((int)a1));
    else /* SYS_close_range */
        ends = (unsigned)a3 & CLOSE_RANGE_CLOEXEC ? NULL : closing_range((unsigned)a1, (unsigned)a2);
    long ret = real_(nr, a1, a2, a3);
    closed(ends);
    return ret;
}

D9_EXPORT void closefrom(int first)
{
    __typeof__(d9_real.closefrom) real_ = D9_REAL(closefrom);
    if (first < 0)
        first = 0;
    uint32_t *ends = closing_range((unsigned)first, ~0u);
    if (real_)
        real_(first);
    closed(ends);
}

/* Streams close their fd inside libc, where no interposer sees it: fclose
 * of a FILE made by fdopen on a pipe's write end left its kind behind, and
 * the fopen that took the number next had its writes recorded as wakes.
 * The stream's fd (fileno, dirfd: -1 for one without, such as fmemopen's,
 * errno kept) passes the same bookkeeping as close(). */
static inline uint32_t *closing_stream(int fd, int err)
{
    errno = err;
    return fd >= 0 ? closing(fd, d9_fd_byte(fd)) : NULL;
}

/* The body of fclose, closedir and freopen: s the stream, fd_of its fd's
 * reader, args the real call's. glibc declares s nonnull, yet closedir
 * answers NULL with EINVAL: the empty asm keeps the compiler from dropping
 * the test. */
#define D9_STREAM_CLOSE_BODY(name, s, fd_of, failret, args)                    \
    D9_REAL_OR_FAIL(real_, name, failret);                                     \
    __typeof__(s) s_ = s;                                                      \
    __asm__("" : "+r"(s_));                                                    \
    uint32_t *ends_ = NULL;                                                    \
    if (s_) {                                                                  \
        int err_ = errno;                                                      \
        ends_ = closing_stream(fd_of(s_), err_);                               \
    }                                                                          \
    __typeof__(real_ args) ret_ = real_ args;                                  \
    closed(ends_);                                                             \
    return ret_

D9_EXPORT int fclose(FILE *f) { D9_STREAM_CLOSE_BODY(fclose, f, fileno, EOF, (s_)); }

D9_EXPORT int closedir(DIR *d) { D9_STREAM_CLOSE_BODY(closedir, d, dirfd, -1, (s_)); }

/* freopen puts path's file on the stream's fd number (glibc opens it, then
 * dup3s it there; on failure it closes the number): either way the old
 * file's kind must not pass to what is there now. */
D9_EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
    D9_STREAM_CLOSE_BODY(freopen, f, fileno, NULL, (path, mode, s_));
}

D9_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *f)
{
    D9_STREAM_CLOSE_BODY(freopen64, f, fileno, NULL, (path, mode, s_));
}

/* ---- wakes through fds ------------------------------------------------- */

/* The WAKE of an 8-byte eventfd write that wrote, stamped ts (not 0):
 * the value written, read back from buf (the kernel just read it: buf is
 * valid). Returns 8, the write's result. */
static inline ssize_t eventfd_wake(int fd, const void *buf, uint64_t ts)
{
    uint64_t v;
    memcpy(&v, buf, 8);
    if (D9_UNLIKELY(!d9_push_fast(ts, D9_EV_WAKE, D9_CALL_EVENTFD_WRITE, (uint64_t)fd, v)))
        return d9_emit_slow_ret(ts, D9_EV_WAKE, D9_CALL_EVENTFD_WRITE, (uint64_t)fd, v, 8);
    return 8;
}

/* write() of 8 bytes to an eventfd through glibc, stamped ts (not 0): a
 * WAKE when it succeeds. Its own function, entered by a jump from write(),
 * which takes the TSC stamp: the hook keeps only fd, buf and ts across the
 * call (three registers, no frame) and reaches the thread's TLS only after
 * it. */
__attribute__((noinline)) static ssize_t eventfd_write_hook(int fd, const void *buf, uint64_t ts,
                                                           ssize_t (*real)(int, const void *, size_t))
{
    ssize_t ret = real(fd, buf, 8);
    return ret == 8 ? eventfd_wake(fd, buf, ts) : ret;
}

#if defined(__x86_64__)
/* The same WAKE with the write made here (direct.h): the call returns to
 * this page, not to libc's and then this one. */
__attribute__((noinline)) static ssize_t eventfd_write_direct(int fd, const void *buf, uint64_t ts)
{
    long ret = d9_sys3(SYS_write, fd, (long)buf, 8);
    if (D9_UNLIKELY(d9_sys_failed(ret)))
        return d9_sys_fail(ret);
    return ret == 8 ? eventfd_wake(fd, buf, ts) : ret;
}
#endif

/* The eventfd write when write() took no TSC stamp: the agent off or
 * inside itself (a plain call), or clock_gettime stamps. */
__attribute__((noinline)) static ssize_t eventfd_write_other(int fd, const void *buf,
                                                            ssize_t (*real)(int, const void *, size_t))
{
    uint64_t ts = d9_wake_start();
    if (!ts)
        return real(fd, buf, 8);
    return eventfd_write_hook(fd, buf, ts, real);
}

/* ret = expr, a write or writev to pipe write end fd (byte b) through
 * glibc: a WAKE of the read end when fd is a waker; on a blocking write
 * end, timed, and a park (call write, target fd) when it waited
 * DIAL9_SLOW_SYSCALL_US or more for the reader to make room
 * (socket_wait.h), recorded after the WAKE. */
#define D9_PIPE_WRITE(ret, fd, b, expr)                                        \
    do {                                                                       \
        int rd_ = ((b) & D9_FDK_WAKER) ? d9_fd_peer(fd) : -1;                  \
        struct d9_timed t_ = d9_slow_start();                                  \
        ret = (expr);                                                          \
        if (ret > 0 && rd_ >= 0)                                               \
            d9_wake_end(t_.t0, D9_CALL_PIPE_WRITE, (uint64_t)rd_,              \
                        (uint64_t)ret);                                        \
        if (!((b) & D9_FDK_NONBLOCK) && D9_UNLIKELY(d9_timed_over(t_)))        \
            d9_waited(t_.t0, D9_CALL_WRITE, fd, D9_RES_ERRNO(ret));            \
    } while (0)

/* A pipe write end whose writes are wakes, or that may wait. */
static inline int pipe_write_tracked(unsigned b) { return (b & D9_FDK_WAKER) || b == (D9_FD_PIPE | D9_FDK_PIPE_W); }

static ssize_t pipe_write_glibc(ssize_t (*real)(int, const void *, size_t), int fd, const void *buf,
                                size_t n, unsigned b)
{
    ssize_t ret;
    D9_PIPE_WRITE(ret, fd, b, real(fd, buf, n));
    return ret;
}

#if defined(__x86_64__)
/* The same write made here (direct.h), to a pipe that is O_NONBLOCK: it
 * never waits, so, like an eventfd write, it needs no cancel's signal. */
__attribute__((noinline)) static ssize_t pipe_write_direct(int fd, const void *buf, size_t n, uint64_t ts)
{
    long ret = d9_sys3(SYS_write, fd, (long)buf, (long)n);
    if (D9_UNLIKELY(d9_sys_failed(ret)))
        return d9_sys_fail(ret);
    int rd = d9_fd_peer(fd);
    if (ret > 0 && rd >= 0)
        d9_emit_since(ts, D9_EV_WAKE, D9_CALL_PIPE_WRITE, (uint64_t)rd, (uint64_t)ret);
    return ret;
}
#endif

static ssize_t pipe_write_hook(ssize_t (*real)(int, const void *, size_t), int fd, const void *buf, size_t n,
                               unsigned b)
{
#if defined(__x86_64__)
    if (b & D9_FDK_NONBLOCK) {
        uint64_t ts = d9_tsc_stamp_if_recording();
        if (D9_LIKELY(ts) && D9_LIKELY(d9_direct_on(D9_DIRECT_WRITE)))
            return pipe_write_direct(fd, buf, n, ts);
    }
#else
    (void)b;
#endif
    return pipe_write_glibc(real, fd, buf, n, b);
}

/* A write to a blocking socket: a park when it waited (socket_wait.h). */
D9_SOCKET_SEND_FN(ssize_t, write, D9_CALL_WRITE, (int fd, const void *buf, size_t n), (fd, buf, n))

/* write()'s parameters first: entered by a jump, with no register moves. */
__attribute__((noinline)) static ssize_t write_tracked(int fd, const void *buf, size_t n,
                                                       ssize_t (*real)(int, const void *, size_t), unsigned b)
{
    if (b & D9_FDK_WAKER)
        return pipe_write_hook(real, fd, buf, n, b);
    if (b == (D9_FD_PIPE | D9_FDK_PIPE_W)) /* blocking: it may wait for the reader */
        return pipe_write_glibc(real, fd, buf, n, b);
    if (b == (D9_FD_EVENTFD | D9_FDK_BLOCKING) && n == 8) /* may wait: through glibc */
        return eventfd_write_other(fd, buf, real);
    if (b == D9_FD_BLOCKING_SOCKET)
        return write_sent(fd, buf, n, real);
    if (b == D9_FD_FILE) {
        struct d9_timed t0 = d9_slow_start();
        ssize_t ret = real(fd, buf, n); /* not made directly: direct.h */
        d9_slow_end(t0, D9_CALL_WRITE, fd, D9_FD_FILE | D9_SLOW_VERIFY);
        return ret;
    }
    return real(fd, buf, n);
}

D9_UNRESOLVED(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), -1)

/* Sockets and fds we know nothing about (the bulk of a server's writes) pay
 * one byte load; unwatched pipes, epoll fds and others one call more. */
D9_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    D9_REAL_OR_PLAIN(real_, write, (fd, buf, n));
    unsigned b = d9_fd_byte(fd);
    if (D9_LIKELY(b == D9_FD_UNKNOWN || b == D9_FD_SOCKET))
        return real_(fd, buf, n);
    if (b == D9_FD_EVENTFD && n == 8) { /* non-blocking: its write never waits */
        uint64_t ts = d9_tsc_stamp_if_recording();
        if (D9_UNLIKELY(!ts))
            return eventfd_write_other(fd, buf, real_);
#if defined(__x86_64__)
        if (D9_LIKELY(d9_direct_on(D9_DIRECT_WRITE)))
            return eventfd_write_direct(fd, buf, ts);
#endif
        return eventfd_write_hook(fd, buf, ts, real_);
    }
    return write_tracked(fd, buf, n, real_, b);
}

/* writev: as write to a pipe (through glibc) or a blocking socket. */
D9_SOCKET_SEND_FN(ssize_t, writev, D9_CALL_WRITE, (int fd, const struct iovec *iov, int n), (fd, iov, n))

__attribute__((noinline)) static ssize_t writev_pipe(int fd, const struct iovec *iov, int n,
                                                     ssize_t (*real)(int, const struct iovec *, int), unsigned b)
{
    ssize_t ret;
    D9_PIPE_WRITE(ret, fd, b, real(fd, iov, n));
    return ret;
}

D9_UNRESOLVED(ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n), -1)

D9_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
    D9_REAL_OR_PLAIN(real_, writev, (fd, iov, n));
    unsigned b = d9_fd_byte(fd);
    if (D9_LIKELY(b == D9_FD_UNKNOWN || b == D9_FD_SOCKET))
        return real_(fd, iov, n);
    if (b == D9_FD_BLOCKING_SOCKET)
        return writev_sent(fd, iov, n, real_);
    if (pipe_write_tracked(b))
        return writev_pipe(fd, iov, n, real_, b);
    return real_(fd, iov, n);
}

/* glibc's eventfd_write calls its internal write, not ours. */
D9_EXPORT int eventfd_write(int fd, eventfd_t value)
{
    D9_REAL_OR_FAIL(real_, eventfd_write, -1);
    uint64_t ts = d9_wake_start();
    int ret = real_(fd, value);
    if (ret == 0)
        d9_wake_end(ts, D9_CALL_EVENTFD_WRITE, (uint64_t)fd, value);
    return ret;
}

/* eventfd_read on a blocking eventfd parks (call read, target fd), as
 * read() there does. glibc's eventfd_read calls its internal read. */
D9_SOCKET_PARKED_FN(int, eventfd_read, D9_CALL_READ, (int fd, eventfd_t *value), (fd, value))

D9_EXPORT int eventfd_read(int fd, eventfd_t *value)
{
    D9_REAL_OR_FAIL(real_, eventfd_read, -1);
    if (D9_LIKELY(!(d9_fd_byte(fd) & D9_FDK_BLOCKING)))
        return real_(fd, value);
    return eventfd_read_parked(fd, value, real_);
}

/* A tracked fd's registration, recorded out of line: recording off or
 * inside the agent, a TSC-less clock, or a pipe read end's ADD (which makes
 * its write end a waker, d9_fd_pipe_watched: pipe_add 1). Returns 0. */
__attribute__((noinline, cold)) static int ctl_record_slow(int epfd, int op, int fd, int pipe_add)
{
    if ((!pipe_add || d9_fd_pipe_watched(fd)) && !d9_busy)
        d9_emit(D9_EV_EPOLL_CTL, (uint8_t)op, (uint64_t)epfd, (uint64_t)fd); /* keeps errno */
    return 0;
}

/* A pipe read end's ADD: rare (once a pipe), so all of it out of line. */
__attribute__((noipa, cold)) static int epoll_ctl_pipe_add(int epfd, int op, int fd, struct epoll_event *ev,
                                                             __typeof__(d9_real.epoll_ctl) real_)
{
    int ret = real_(epfd, op, fd, ev);
    return ret != 0 ? ret : ctl_record_slow(epfd, op, fd, 1);
}

/* The EPOLL_CTL entry of a call that succeeded (epfd, op, fd
 * zero-extended; t: the thread's &d9_tls). The slow push takes the values
 * in the registers that already hold them, so a caller keeps none of its
 * own for it. Returns 0, the call's result. */
__attribute__((noinline, cold)) static int ctl_push_slow(uint64_t e, uint64_t o, uint64_t f, uint64_t ts)
{
    return (int)d9_emit_slow_ret(ts, D9_EV_EPOLL_CTL, (uint8_t)o, e, f, 0);
}

static inline __attribute__((always_inline)) int ctl_push(struct d9_tls *t, uint64_t ts, uint64_t e, uint64_t o,
                                                          uint64_t f)
{
    if (D9_LIKELY(d9_push_fast_at(t, ts, D9_EV_EPOLL_CTL, (uint8_t)o, e, f)))
        return 0;
    return ctl_push_slow(e, o, f, ts);
}

/* A tracked fd's epoll_ctl through glibc, recorded when it succeeded
 * (EPOLL_CTL). Only what the entry needs is kept across the real call (the
 * fds unsigned: a call that succeeded had both >= 0, and a zero-extension
 * is free); every call after it is a tail call. */
__attribute__((noipa)) static int epoll_ctl_glibc(int epfd, int op, int fd, struct epoll_event *ev,
                                                    __typeof__(d9_real.epoll_ctl) real_)
{
    int ret = real_(epfd, op, fd, ev);
    if (ret != 0)
        return ret;
    uint64_t ts = d9_tsc_stamp_if_recording();
    if (D9_UNLIKELY(!ts))
        return ctl_record_slow(epfd, op, fd, 0);
    return ctl_push(&d9_tls, ts, (unsigned)epfd, (unsigned)op, (unsigned)fd);
}

#if defined(__x86_64__)
/* epoll_ctl_glibc with the call made here (direct.h): it returns to this
 * page, not to libc's and then this one, and the push reaches the TLS
 * block by an address made before the call (d9_tls_here). Stamped before
 * the call, as a wake is. The kernel reads the int arguments from the low
 * halves, so they go in zero-extended, as the entry keeps them. */
__attribute__((noipa)) static int epoll_ctl_direct(int epfd, int op, int fd, struct epoll_event *ev, uint64_t ts)
{
    struct d9_tls *t = d9_tls_here();
    uint64_t e = (unsigned)epfd, o = (unsigned)op, f = (unsigned)fd;
    long ret = d9_sys4(SYS_epoll_ctl, (long)e, (long)o, (long)f, (long)ev);
    if (D9_UNLIKELY(ret != 0))
        return (int)d9_sys_fail(ret);
    return ctl_push(t, ts, e, o, f);
}
#endif

/* A tracked fd's epoll_ctl: made here when direct.h allows (on a guest
 * whose system calls empty the TLB, 67-70 -> 26-27 ns added in one
 * process), else through glibc. */
__attribute__((noinline)) static int epoll_ctl_tracked(int epfd, int op, int fd, struct epoll_event *ev,
                                                       __typeof__(d9_real.epoll_ctl) real_)
{
#if defined(__x86_64__)
    uint64_t ts = d9_tsc_stamp_if_recording();
    if (D9_LIKELY(ts) && D9_LIKELY(d9_direct_on(D9_DIRECT_CTL)))
        return epoll_ctl_direct(epfd, op, fd, ev, ts);
#endif
    return epoll_ctl_glibc(epfd, op, fd, ev, real_);
}

/* Before the first resolve no fd is tracked yet: the plain call. */
D9_UNRESOLVED(int, epoll_ctl, (int epfd, int op, int fd, struct epoll_event *ev), (epfd, op, fd, ev), -1)

/* Recorded: an eventfd's calls, and a pipe read end's (adding one to a set
 * makes its write end a waker). Any other fd (a socket an event loop
 * rearms with EPOLL_CTL_MOD, many times a connection) goes on by a tail
 * call, with no frame: its kind byte is read before the call, which does
 * not change it. */
D9_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    D9_REAL_OR_PLAIN(real_, epoll_ctl, (epfd, op, fd, ev));
    unsigned b = d9_fd_byte(fd);
    if (D9_UNLIKELY((b & D9_FDK_KIND) == D9_FD_EVENTFD))
        return epoll_ctl_tracked(epfd, op, fd, ev, real_);
    if (D9_UNLIKELY(d9_fd_pipe_read_end(b)))
        return op == EPOLL_CTL_ADD ? epoll_ctl_pipe_add(epfd, op, fd, ev, real_)
                                   : epoll_ctl_tracked(epfd, op, fd, ev, real_);
    return real_(epfd, op, fd, ev);
}
