/* fdtable.h - which fds are eventfds, so write() can tell a wake-up (an
 * 8-byte eventfd write) from ordinary I/O at the cost of one bit test.
 * Covers fds below D9_FD_MAX; higher fds are never tracked.
 */
#ifndef DIAL9_FDTABLE_H
#define DIAL9_FDTABLE_H

#include <stdatomic.h>
#include <stdint.h>

#define D9_FD_MAX (1u << 20)

/* 128 KiB of bss, one bit per fd. Relaxed atomics: fds are set and cleared
 * by whichever thread creates or closes them. */
extern _Atomic uint64_t d9_fd_bits[D9_FD_MAX / 64] __attribute__((visibility("hidden")));

static inline int d9_fd_is_eventfd(int fd)
{
    return (unsigned)fd < D9_FD_MAX &&
           ((atomic_load_explicit(&d9_fd_bits[(unsigned)fd / 64], memory_order_relaxed) >>
             ((unsigned)fd % 64)) & 1);
}

void d9_fd_set(int fd, int is_eventfd);
/* Forget fds first..last inclusive (close_range). */
void d9_fd_clear_range(unsigned first, unsigned last);

#endif
