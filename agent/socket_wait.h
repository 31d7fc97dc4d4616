/* socket_wait.h - a wait for a peer on a blocking socket is a park.
 * A thread-per-connection server's threads spend their idle time in read,
 * recv or accept on blocking sockets; without these parks they showed busy
 * for all of it. Which sockets block is the fd table's D9_FDK_BLOCKING
 * (fdtable.h); an event loop's non-blocking sockets pass straight through
 * after one byte load. The park's target is the fd; its timeout -1
 * (SO_RCVTIMEO is not read: a call it ends unparks with -EAGAIN).
 */
#ifndef DIAL9_SOCKET_WAIT_H
#define DIAL9_SOCKET_WAIT_H

#include "fdtable.h"
#include "real.h"

/* name##_parked(args..., real_): the real call bracketed by PARK and UNPARK
 * (call; target fd). Out of line, so that the hook's pass-through path
 * keeps no frame. */
#define D9_SOCKET_PARKED_FN(type, name, call, params, args)                    \
    __attribute__((noinline, unused)) static type name##_parked(              \
        D9_UNPAREN params, __typeof__(d9_real.name) real_)                     \
    {                                                                          \
        type ret_;                                                             \
        D9_PARKED(ret_, (call), fd, -1, real_ args, D9_RES_ERRNO);             \
        return ret_;                                                           \
    }

#endif
