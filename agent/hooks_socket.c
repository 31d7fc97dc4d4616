/* hooks_socket.c - interposers for the receive and send calls: on a blocking
 * socket recv, recvfrom, recvmsg and recvmmsg (and glibc's fortified
 * __recv_chk and __recvfrom_chk) park, call recv, target the fd, and readv
 * (on a blocking pipe's read end too) parks as read does; send, sendto,
 * sendmsg, sendmmsg and sendfile are timed, and a park (call send) when they
 * waited (socket_wait.h). A call with MSG_DONTWAIT does not wait and passes
 * through, as every call on a non-blocking fd does; a receiving call on an
 * fd the table does not know probes it first (d9_fd_probe). read, write,
 * writev and accept are in hooks_slow.c and hooks_fd.c.
 */
#include <errno.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "socket_wait.h"

__attribute__((noinline, cold)) void d9_waited(uint64_t t0, uint8_t call, int fd, int64_t result)
{
    int err = errno;
    if (d9_park_at(t0, call, (uint64_t)fd, -1))
        d9_unpark_fast(call, result, t0);
    errno = err;
}

/* A call that may wait (waits: on fd's kind byte b_ and the arguments)
 * goes to name##_how; any other passes straight through. With probe 1 (the
 * receiving calls) an fd the table does not know is probed first
 * (d9_fd_probe). type: the call's return type. */
#define D9_SOCKET_HOOK(type, name, how, params, args, waits, probe)            \
    D9_PROBED_FN(type, name, how, params, args, waits)                         \
    D9_UNRESOLVED(type, name, params, args, -1)                                \
    D9_EXPORT type name params                                                 \
    {                                                                          \
        D9_REAL_OR_PLAIN(real_, name, args);                                   \
        unsigned b_ = d9_fd_byte(fd);                                          \
        if (D9_LIKELY(!(waits))) {                                             \
            if (!(probe) || D9_LIKELY(b_))                                     \
                return real_ args;                                             \
            return name##_probed(D9_UNPAREN args, real_);                      \
        }                                                                      \
        return name##_##how(D9_UNPAREN args, real_);                           \
    }
/* On a blocking socket, without MSG_DONTWAIT. */
#define D9_SOCKET_WAITS(flags) (b_ == D9_FD_BLOCKING_SOCKET && !((flags) & MSG_DONTWAIT))
#define D9_RECV_HOOK(type, name, params, args, flags)                          \
    D9_SOCKET_PARKED_FN(type, name, D9_CALL_RECV, params, args)                \
    D9_SOCKET_HOOK(type, name, parked, params, args, D9_SOCKET_WAITS(flags), 1)
#define D9_SEND_HOOK(type, name, call, params, args, flags)                    \
    D9_SOCKET_SEND_FN(type, name, call, params, args)                          \
    D9_SOCKET_HOOK(type, name, sent, params, args, D9_SOCKET_WAITS(flags), 0)

D9_RECV_HOOK(ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags), flags)
D9_RECV_HOOK(ssize_t, __recv_chk, (int fd, void *buf, size_t n, size_t buflen, int flags),
             (fd, buf, n, buflen, flags), flags)
D9_RECV_HOOK(ssize_t, recvfrom, (int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, flags, addr, alen), flags)
D9_RECV_HOOK(ssize_t, __recvfrom_chk,
             (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, buflen, flags, addr, alen), flags)
D9_RECV_HOOK(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags), flags)
/* Its timeout is looked at only after each message (recvmmsg(2)): -1 as for the others. */
D9_RECV_HOOK(int, recvmmsg, (int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *tmo),
             (fd, v, n, flags, tmo), flags)

D9_SEND_HOOK(ssize_t, send, D9_CALL_SEND, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags), flags)
D9_SEND_HOOK(ssize_t, sendto, D9_CALL_SEND,
             (int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr, socklen_t alen),
             (fd, buf, n, flags, addr, alen), flags)
D9_SEND_HOOK(ssize_t, sendmsg, D9_CALL_SEND, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags), flags)
D9_SEND_HOOK(int, sendmmsg, D9_CALL_SEND, (int fd, struct mmsghdr *v, unsigned int n, int flags), (fd, v, n, flags),
             flags)
/* sendfile64 is the name programs built with _FILE_OFFSET_BITS=64 call (nginx). */
D9_SEND_HOOK(ssize_t, sendfile, D9_CALL_SEND, (int fd, int in, off_t *off, size_t n), (fd, in, off, n), 0)
D9_SEND_HOOK(ssize_t, sendfile64, D9_CALL_SEND, (int fd, int in, off_t *off, size_t n), (fd, in, off, n), 0)

/* readv parks where read does: a blocking socket or pipe read end. */
D9_SOCKET_PARKED_FN(ssize_t, readv, D9_CALL_READ, (int fd, const struct iovec *iov, int n), (fd, iov, n))
D9_SOCKET_HOOK(ssize_t, readv, parked, (int fd, const struct iovec *iov, int n), (fd, iov, n), (b_ & D9_FDK_BLOCKING), 1)
