/* hooks_fd.c - eventfd tracking: creation, duplication and close keep the
 * fd bitmap current; an 8-byte write to an eventfd is a WAKE; epoll_ctl on
 * one is recorded so the decoder can tie the eventfd to an epoll set.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fdtable.h"
#include "real.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

D9_EXPORT int eventfd(unsigned int initval, int flags)
{
    D9_REAL_OR_FAIL(real_, eventfd, -1);
    int fd = real_(initval, flags);
    if (fd >= 0)
        d9_fd_set(fd, 1);
    return fd;
}

/* Cold path of write(): a successful 8-byte write to an eventfd. */
__attribute__((noinline)) static ssize_t eventfd_write_hook(ssize_t (*real)(int, const void *, size_t),
                                                            int fd, const void *buf)
{
    uint64_t ts = d9_wake_start();
    ssize_t ret = real(fd, buf, 8);
    if (ret == 8 && ts) {
        uint64_t v;
        memcpy(&v, buf, 8); /* the kernel just read it: buf is valid */
        d9_wake_end(ts, D9_CALL_EVENTFD_WRITE, (uint64_t)fd, v);
    }
    return ret;
}

D9_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    D9_REAL_OR_FAIL(real_, write, -1);
    if (D9_LIKELY(n != 8 || !d9_fd_is_eventfd(fd)))
        return real_(fd, buf, n);
    return eventfd_write_hook(real_, fd, buf);
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

D9_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    D9_REAL_OR_FAIL(real_, epoll_ctl, -1);
    int ret = real_(epfd, op, fd, ev);
    if (ret == 0 && D9_UNLIKELY(d9_fd_is_eventfd(fd)) && !d9_busy) {
        int err = errno;
        d9_emit(D9_EV_EPOLL_CTL, (uint8_t)op, (uint64_t)epfd, (uint64_t)fd);
        errno = err;
    }
    return ret;
}

/* Forget the fd before closing it: once closed its number may be reused by
 * another thread's eventfd() at any moment. close() releases the fd even
 * when it fails with EINTR/EIO, and EBADF means it was not open. */
D9_EXPORT int close(int fd)
{
    D9_REAL_OR_FAIL(real_, close, -1);
    d9_fd_set(fd, 0);
    return real_(fd);
}

D9_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    D9_REAL_OR_FAIL(real_, close_range, -1);
    int ret = real_(first, last, flags);
    if (ret == 0 && !(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
        d9_fd_clear_range(first, last);
    return ret;
}

D9_EXPORT int dup(int old)
{
    D9_REAL_OR_FAIL(real_, dup, -1);
    int fd = real_(old);
    if (fd >= 0)
        d9_fd_set(fd, d9_fd_is_eventfd(old));
    return fd;
}

D9_EXPORT int dup2(int old, int new)
{
    D9_REAL_OR_FAIL(real_, dup2, -1);
    int fd = real_(old, new);
    if (fd >= 0 && old != new)
        d9_fd_set(fd, d9_fd_is_eventfd(old));
    return fd;
}

D9_EXPORT int dup3(int old, int new, int flags)
{
    D9_REAL_OR_FAIL(real_, dup3, -1);
    int fd = real_(old, new, flags);
    if (fd >= 0)
        d9_fd_set(fd, d9_fd_is_eventfd(old));
    return fd;
}
