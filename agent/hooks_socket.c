/* hooks_socket.c - interposers for the receive calls: on a blocking socket
 * recv, recvfrom and recvmsg (and glibc's fortified __recv_chk and
 * __recvfrom_chk) park, call recv, target the fd (socket_wait.h). A call
 * with MSG_DONTWAIT does not wait and passes through, as every call on a
 * non-blocking or unknown socket does. read and accept on a blocking socket
 * park in hooks_slow.c and hooks_fd.c.
 */
#include <sys/socket.h>

#include "socket_wait.h"

#define D9_RECV_HOOK(name, params, args, flags)                                \
    D9_SOCKET_PARKED_FN(ssize_t, name, D9_CALL_RECV, params, args)             \
    D9_UNRESOLVED(ssize_t, name, params, args, -1)                             \
    D9_EXPORT ssize_t name params                                              \
    {                                                                          \
        D9_REAL_OR_PLAIN(real_, name, args);                                   \
        if (D9_LIKELY(d9_fd_byte(fd) != D9_FD_BLOCKING_SOCKET) || ((flags) & MSG_DONTWAIT)) \
            return real_ args;                                                 \
        return name##_parked(D9_UNPAREN args, real_);                          \
    }

D9_RECV_HOOK(recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags), flags)
D9_RECV_HOOK(__recv_chk, (int fd, void *buf, size_t n, size_t buflen, int flags),
             (fd, buf, n, buflen, flags), flags)
D9_RECV_HOOK(recvfrom, (int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, flags, addr, alen), flags)
D9_RECV_HOOK(__recvfrom_chk,
             (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr, socklen_t *alen),
             (fd, buf, n, buflen, flags, addr, alen), flags)
D9_RECV_HOOK(recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags), flags)
