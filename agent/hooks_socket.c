/* hooks_socket.c - interposers for the receive and send calls: on a
 * blocking socket recv, recvfrom and recvmsg (and glibc's fortified
 * __recv_chk and __recvfrom_chk) park, call recv, target the fd; send,
 * sendto and sendmsg are timed, and a park (call send) when they waited
 * (socket_wait.h). A call with MSG_DONTWAIT does not wait and passes
 * through, as every call on a non-blocking or unknown socket does. read,
 * write and accept on a blocking socket are in hooks_slow.c and hooks_fd.c.
 */
#include <errno.h>
#include <sys/socket.h>

#include "socket_wait.h"

__attribute__((noinline, cold)) void d9_send_waited(uint64_t t0, uint8_t call, int fd, int64_t result)
{
    int err = errno;
    if (d9_park_at(t0, call, (uint64_t)fd, -1))
        d9_unpark_fast(call, result, t0);
    errno = err;
}

/* A call on a blocking socket, without MSG_DONTWAIT, goes to name##_how. */
#define D9_SOCKET_HOOK(name, how, params, args, flags)                         \
    D9_UNRESOLVED(ssize_t, name, params, args, -1)                             \
    D9_EXPORT ssize_t name params                                              \
    {                                                                          \
        D9_REAL_OR_PLAIN(real_, name, args);                                   \
        if (D9_LIKELY(d9_fd_byte(fd) != D9_FD_BLOCKING_SOCKET) || ((flags) & MSG_DONTWAIT)) \
            return real_ args;                                                 \
        return name##_##how(D9_UNPAREN args, real_);                           \
    }
#define D9_RECV_HOOK(name, params, args, flags)                                \
    D9_SOCKET_PARKED_FN(ssize_t, name, D9_CALL_RECV, params, args)             \
    D9_SOCKET_HOOK(name, parked, params, args, flags)
#define D9_SEND_HOOK(name, params, args, flags)                                \
    D9_SOCKET_SEND_FN(ssize_t, name, D9_CALL_SEND, params, args)               \
    D9_SOCKET_HOOK(name, sent, params, args, flags)

D9_RECV_HOOK(recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags), flags)
D9_RECV_HOOK(__recv_chk, (int fd, void *buf, size_t n, size_t buflen, int flags),
             (fd, buf, n, buflen, flags), flags)
D9_RECV_HOOK(recvfrom, (int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, flags, addr, alen), flags)
D9_RECV_HOOK(__recvfrom_chk,
             (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, buflen, flags, addr, alen), flags)
D9_RECV_HOOK(recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags), flags)

D9_SEND_HOOK(send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags), flags)
D9_SEND_HOOK(sendto,
             (int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr, socklen_t alen),
             (fd, buf, n, flags, addr, alen), flags)
D9_SEND_HOOK(sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags), flags)
