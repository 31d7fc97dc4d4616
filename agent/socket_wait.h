/* socket_wait.h - a wait for a peer on a blocking socket is a park.
 * A thread-per-connection server's threads spend their idle time in read,
 * recv or accept on blocking sockets; without these parks they showed busy
 * for all of it. A read of a blocking pipe (a child's output, a
 * multiprocessing result) or eventfd parks the same way. Which fds block is
 * the fd table's D9_FDK_BLOCKING (fdtable.h); an event loop's non-blocking
 * sockets pass straight through after one byte load. The park's target is
 * the fd; its timeout -1 (SO_RCVTIMEO is not read: a call it ends unparks
 * with -EAGAIN).
 * A read right after the thread polled and found fds ready (d9_just_polled:
 * Python's socketserver polls its blocking listening socket, then accepts;
 * a program that adds a blocking eventfd to an epoll set reads it once
 * ready) nearly always returns at once, and its wait was the poll's park:
 * it is timed instead, as a send is.
 * A send or write on a blocking socket nearly always returns at once (the
 * data goes to the socket's buffer): it is timed, and it is a park only
 * when it took at least DIAL9_SLOW_SYSCALL_US, the time a thread held by a
 * slow reader spends waiting. That park is recorded once the call returns,
 * stamped at its start.
 */
#ifndef DIAL9_SOCKET_WAIT_H
#define DIAL9_SOCKET_WAIT_H

#include "fdtable.h"
#include "real.h"

/* The PARK and UNPARK of a call that took t0 to now (hooks_socket.c).
 * Cold; preserves errno. */
void d9_waited(uint64_t t0, uint8_t call, int fd, int64_t result) D9_HIDDEN;

/* ret = expr, timed; a park of call on fd when it took at least
 * DIAL9_SLOW_SYSCALL_US, recorded after it. */
#define D9_FD_WAIT_TIMED(ret, call, fd, expr)                                  \
    do {                                                                       \
        struct d9_timed t_ = d9_slow_start();                                  \
        ret = (expr);                                                          \
        if (D9_UNLIKELY(d9_timed_over(t_)))                                    \
            d9_waited(t_.t0, (call), (fd), D9_RES_ERRNO(ret));                 \
    } while (0)

/* ret = expr, a read (or accept) of blocking fd: bracketed by PARK and
 * UNPARK (call; target fd), or timed just after a poll. */
#define D9_FD_WAIT(ret, call, fd, expr)                                        \
    do {                                                                       \
        if (d9_just_polled())                                                  \
            D9_FD_WAIT_TIMED(ret, call, fd, expr);                             \
        else                                                                   \
            D9_PARKED(ret, (call), (fd), -1, expr, D9_RES_ERRNO);              \
    } while (0)

/* name##_parked(args..., real_): D9_FD_WAIT of the real call. Out of line,
 * so that the hook's pass-through path keeps no frame. */
#define D9_SOCKET_PARKED_FN(type, name, call, params, args)                    \
    __attribute__((noinline, unused)) static type name##_parked(              \
        D9_UNPAREN params, __typeof__(d9_real.name) real_)                     \
    {                                                                          \
        type ret_;                                                             \
        D9_FD_WAIT(ret_, (call), fd, real_ args);                              \
        return ret_;                                                           \
    }

/* name##_probed(args..., real_): a receiving call on an fd the table does
 * not know: probed (d9_fd_probe), then name##_how when waits (on the byte
 * b_ and the arguments), else the real call. Out of line, as above: the
 * hook's pass-through path pays one test. (A regular file found so is
 * timed from its next read on.) */
#define D9_PROBED_FN(type, name, how, params, args, waits)                     \
    __attribute__((noinline, unused)) static type name##_probed(              \
        D9_UNPAREN params, __typeof__(d9_real.name) real_)                     \
    {                                                                          \
        unsigned b_ = d9_fd_probe(fd);                                         \
        if (waits)                                                             \
            return name##_##how(D9_UNPAREN args, real_);                       \
        return real_ args;                                                     \
    }

/* name##_sent(args..., real_): the real call, D9_FD_WAIT_TIMED. Out of
 * line, as above. */
#define D9_SOCKET_SEND_FN(type, name, call, params, args)                      \
    __attribute__((noinline)) static type name##_sent(D9_UNPAREN params,       \
                                                      __typeof__(d9_real.name) real_) \
    {                                                                          \
        type ret_;                                                             \
        D9_FD_WAIT_TIMED(ret_, (call), fd, real_ args);                        \
        return ret_;                                                           \
    }

#endif
