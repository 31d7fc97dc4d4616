/* hooks_slow.c - slow syscalls: calls that can stall a worker thread are
 * timed, and those that took at least DIAL9_SLOW_SYSCALL_US become one
 * SLOW_SYSCALL event (call, fd, fd kind, duration; ts = call start).
 * Interposers here are only timed; the calls that also make, copy or close
 * fds (open, socket, accept, dup, close, write) are in hooks_fd.c.
 * read/pread/pwrite are timed on regular files only: on sockets and pipes a
 * long read is waiting for a peer, not a stall. On a blocking socket or
 * pipe read end, read (and glibc's fortified __read_chk) parks instead
 * (socket_wait.h), and so does connect on a blocking socket. A timed pread or pwrite is made with the syscall
 * instruction when direct.h allows; a timed read goes through glibc
 * (direct.h: why not).
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "direct.h"
#include "fdtable.h"
#include "real.h"
#include "socket_wait.h"

static void record_slow(uint64_t t0, uint64_t dur, uint8_t call, int fd, unsigned kind)
{
    if (kind & D9_SLOW_VERIFY) {
        if (d9_fd_stat_kind(fd) != D9_FD_FILE) {
            d9_fd_put(fd, D9_FD_OTHER); /* OTHER, not PIPE: which end is unknown */
            return;
        }
    } else if (!(kind & D9_SLOW_FINAL) && (kind & D9_FDK_KIND) == D9_FD_UNKNOWN) {
        kind = d9_fd_stat_kind(fd);
    }
    struct d9_raw_event ev = {.ts = t0, .type = D9_EV_SLOW_SYSCALL, .call = call,
                              .len = (uint16_t)(kind & D9_FDK_KIND), .x = fd, .b = dur};
    d9_emit_raw(&ev);
}

__attribute__((noinline, cold)) void d9_slow_record(uint64_t t0, uint64_t dur, uint8_t call, int fd,
                                                    unsigned kind)
{
    int err = errno; /* the fstat of d9_fd_stat_kind, the writer's kick */
    record_slow(t0, dur, call, fd, kind);
    errno = err;
}

/* ret = expr, timed as call on fd. */
#define D9_TIMED(ret, call, fd, kind, expr)                                    \
    do {                                                                       \
        struct d9_timed t0_ = d9_slow_start();                                 \
        ret = (expr);                                                          \
        d9_slow_end(t0_, (call), (fd), (kind));                                \
    } while (0)

/* An interposer timed only when its fd is a regular file and, with parks
 * 1, parked on a blocking socket or pipe read end. The plain path (other
 * sockets and pipes: nearly every call) keeps no frame: the timed and
 * parked calls and the first call's resolve are out of line, and the timed
 * one takes the real function last, so the arguments stay in their
 * registers. timed: the call made when the fd is a file (real_ args, or
 * D9_FILE_CALL). */
#define D9_FD_IO(name, call, params, args, timed, parks)                       \
    __attribute__((noinline)) static ssize_t name##_timed(D9_UNPAREN params,   \
                                                          __typeof__(d9_real.name) real_) \
    {                                                                          \
        ssize_t ret_;                                                          \
        D9_TIMED(ret_, call, fd, D9_FD_FILE | D9_SLOW_VERIFY, timed);          \
        return ret_;                                                           \
    }                                                                          \
    D9_SOCKET_PARKED_FN(ssize_t, name, call, params, args)                     \
    D9_PROBED_FN(ssize_t, name, parked, params, args, b_ & D9_FDK_BLOCKING)    \
    D9_UNRESOLVED(ssize_t, name, params, args, -1)                             \
    D9_EXPORT ssize_t name params                                              \
    {                                                                          \
        D9_REAL_OR_PLAIN(real_, name, args);                                   \
        unsigned b_ = d9_fd_byte(fd);                                          \
        if (D9_LIKELY(b_ != D9_FD_FILE) && (!(parks) || D9_LIKELY(!(b_ & D9_FDK_BLOCKING) && b_))) \
            return real_ args;                                                 \
        if ((parks) && !b_)                                                    \
            return name##_probed(D9_UNPAREN args, real_);                      \
        if ((parks) && (b_ & D9_FDK_BLOCKING))                                 \
            return name##_parked(D9_UNPAREN args, real_);                      \
        return name##_timed(D9_UNPAREN args, real_);                           \
    }
#define D9_FILE_IO(name, call, params, args, timed) D9_FD_IO(name, call, params, args, timed, 0)

/* A timed pread or pwrite: made directly (d9_file_sys) when direct.h allows. */
#define D9_PRW(nr, fd, buf, n, off)                                            \
    D9_FILE_CALL((nr, (long)(fd), (long)(buf), (long)(n), (long)(off)), real_(fd, buf, n, off))
D9_FD_IO(read, D9_CALL_READ, (int fd, void *buf, size_t n), (fd, buf, n), real_(fd, buf, n), 1)
D9_FD_IO(__read_chk, D9_CALL_READ, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen),
         real_(fd, buf, n, buflen), 1)
D9_FILE_IO(pread, D9_CALL_PREAD, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off),
           D9_PRW(SYS_pread64, fd, buf, n, off))
D9_FILE_IO(pread64, D9_CALL_PREAD, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off),
           D9_PRW(SYS_pread64, fd, buf, n, off))
D9_FILE_IO(pwrite, D9_CALL_PWRITE, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off),
           D9_PRW(SYS_pwrite64, fd, buf, n, off))
D9_FILE_IO(pwrite64, D9_CALL_PWRITE, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off),
           D9_PRW(SYS_pwrite64, fd, buf, n, off))

/* Timed whatever the fd: syncing is slow on any kind that supports it. */
#define D9_TIMED_BODY(type, name, call, fd, kind, args, failret)               \
    D9_REAL_OR_FAIL(real_, name, failret);                                     \
    type ret_;                                                                 \
    D9_TIMED(ret_, call, fd, kind, real_ args);                                \
    return ret_

D9_EXPORT int fsync(int fd)
{
    D9_TIMED_BODY(int, fsync, D9_CALL_FSYNC, fd, d9_fd_kind(fd), (fd), -1);
}

D9_EXPORT int fdatasync(int fd)
{
    D9_TIMED_BODY(int, fdatasync, D9_CALL_FDATASYNC, fd, d9_fd_kind(fd), (fd), -1);
}

/* On a blocking socket the wait for the peer's answer is a park (target
 * the fd, timeout -1: SO_SNDTIMEO is not read), so that a thread stuck
 * connecting to a host that does not answer shows parked in connect while
 * it waits, not busy. Elsewhere (an event loop's non-blocking socket
 * returns EINPROGRESS at once) timed. */
D9_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    D9_REAL_OR_FAIL(real_, connect, -1);
    unsigned b = d9_fd_byte(fd);
    int ret_;
    if (b == D9_FD_BLOCKING_SOCKET)
        D9_PARKED(ret_, D9_CALL_CONNECT, fd, -1, real_(fd, addr, len), D9_RES_ERRNO);
    else
        D9_TIMED(ret_, D9_CALL_CONNECT, fd, b & D9_FDK_KIND, real_(fd, addr, len));
    return ret_;
}

/* getaddrinfo returns an EAI_* code; EAI_SYSTEM leaves errno to the caller. */
D9_EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                          struct addrinfo **res)
{
    D9_TIMED_BODY(int, getaddrinfo, D9_CALL_GETADDRINFO, -1, D9_FD_UNKNOWN | D9_SLOW_FINAL,
                  (node, service, hints, res), EAI_SYSTEM);
}

/* mmap of a file can fault in metadata; munmap of a big shared mapping
 * shoots down TLBs on every core running the process. */
D9_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    D9_TIMED_BODY(void *, mmap, D9_CALL_MMAP, (flags & MAP_ANONYMOUS) ? -1 : fd,
                  (flags & MAP_ANONYMOUS) ? (D9_FD_UNKNOWN | D9_SLOW_FINAL) : d9_fd_kind(fd),
                  (addr, len, prot, flags, fd, off), MAP_FAILED);
}

D9_EXPORT int munmap(void *addr, size_t len)
{
    D9_TIMED_BODY(int, munmap, D9_CALL_MUNMAP, -1, D9_FD_UNKNOWN | D9_SLOW_FINAL, (addr, len), -1);
}
