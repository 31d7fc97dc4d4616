/* fdtable.c - the fd kind table (see fdtable.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fdtable.h"
#include "lifecycle.h"
#include "real.h"

_Alignas(64) _Atomic uint8_t d9_fd_kinds[D9_FD_MAX];
_Atomic int d9_fd_table_off;
_Atomic int32_t d9_fd_peers[D9_FD_MAX];

static inline int tracked(int fd) { return (unsigned)fd < D9_FD_MAX; }

void d9_fd_copy(int fd, struct d9_fd_copy_of from)
{
    if (!tracked(fd))
        return;
    if ((from.byte & D9_FDK_KIND) == D9_FD_PIPE)
        atomic_store_explicit(&d9_fd_peers[fd], from.peer, memory_order_relaxed);
    /* A copy of a waker write end wakes the same read end. */
    d9_fd_put(fd, from.byte & ~D9_FDK_NONBLOCK);
}

void d9_fd_set_pipe(int rd, int wr, int flags)
{
    if (tracked(rd)) {
        atomic_store_explicit(&d9_fd_peers[rd], wr, memory_order_relaxed);
        d9_fd_put(rd, D9_FD_PIPE | (flags & O_NONBLOCK ? 0 : D9_FDK_BLOCKING));
    }
    if (tracked(wr)) {
        atomic_store_explicit(&d9_fd_peers[wr], rd, memory_order_relaxed);
        d9_fd_put(wr, D9_FD_PIPE | D9_FDK_PIPE_W | (flags & O_NONBLOCK ? D9_FDK_NONBLOCK : D9_FDK_WAKER));
    }
}

/* The write end paired with read end rd, when both ends still say so. */
static int write_end_of(int rd)
{
    if (!d9_fd_pipe_read_end(d9_fd_byte(rd)))
        return -1;
    int wr = atomic_load_explicit(&d9_fd_peers[rd], memory_order_relaxed);
    if (!tracked(wr) || !(d9_fd_byte(wr) & D9_FDK_PIPE_W) ||
        atomic_load_explicit(&d9_fd_peers[wr], memory_order_relaxed) != rd)
        return -1;
    return wr;
}

/* A thread may wait for read end rd: its write end's writes are wakes. */
static void make_waker(int rd)
{
    int wr = write_end_of(rd);
    if (wr >= 0)
        d9_fd_put(wr, (d9_fd_byte(wr) & D9_FDK_NONBLOCK) | D9_FD_PIPE | D9_FDK_PIPE_W | D9_FDK_WAKER);
}

int d9_fd_pipe_watched(int rd)
{
    if (!tracked(rd) || !d9_fd_pipe_read_end(d9_fd_byte(rd)))
        return 0;
    make_waker(rd);
    return 1;
}

void d9_fd_set_nonblock(int fd, int nonblock)
{
    unsigned b = d9_fd_byte(fd), k = b & D9_FDK_KIND;
    if (k == D9_FD_SOCKET || k == D9_FD_EVENTFD || d9_fd_pipe_read_end(b)) { /* its reads wait, or not */
        d9_fd_put(fd, k | (nonblock ? 0 : D9_FDK_BLOCKING));
        if (!nonblock && k == D9_FD_PIPE)
            make_waker(fd);
        return;
    }
    if (!(b & D9_FDK_PIPE_W))
        return;
    /* The fd of the description that has the flag: the write end its read
     * end names, when fd is that one or a copy of it. */
    int wr = write_end_of(atomic_load_explicit(&d9_fd_peers[fd], memory_order_relaxed));
    if (!nonblock) {
        d9_fd_put(fd, b & ~D9_FDK_NONBLOCK);
        if (wr >= 0)
            d9_fd_put(wr, d9_fd_byte(wr) & ~D9_FDK_NONBLOCK);
    } else if (wr == fd) {
        d9_fd_put(fd, b | D9_FDK_NONBLOCK);
    }
}

void d9_fd_forget_pipe(int rd)
{
    int wr = write_end_of(rd);
    if (wr >= 0)
        d9_fd_put(wr, (d9_fd_byte(wr) & D9_FDK_NONBLOCK) | D9_FD_PIPE | D9_FDK_PIPE_W);
    d9_fd_put(rd, D9_FD_UNKNOWN);
}

/* Eight kind bytes read at once (aligned: fd % 8 == 0). */
typedef uint64_t __attribute__((may_alias)) d9_word;

void d9_fd_clear_range(unsigned first, unsigned last)
{
    if (last >= D9_FD_MAX)
        last = D9_FD_MAX - 1;
    /* Word at a time over the bytes: close_range(3, ~0U) must not walk a
     * million fds one by one, nor dirty pages that were never touched. */
    for (unsigned fd = first; fd <= last && fd < D9_FD_MAX; fd++) {
        if (fd % 8 == 0 && fd + 7 <= last) {
            if (*(const volatile d9_word *)(const void *)&d9_fd_kinds[fd] == 0) {
                fd += 7;
                continue;
            }
        }
        if (d9_fd_byte((int)fd))
            d9_fd_forget((int)fd);
    }
}

/* The kind of an fstat mode. */
static unsigned kind_of_mode(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return D9_FD_FILE;
    case S_IFDIR: return D9_FD_DIR;
    case S_IFSOCK: return D9_FD_SOCKET;
    case S_IFIFO: return D9_FD_PIPE;
    default: return D9_FD_OTHER; /* devices, and anonymous inodes: eventfds, epoll fds */
    }
}

/* The byte of fd from its fstat mode and F_GETFL flags. */
static unsigned probed_byte(mode_t mode, int fl)
{
    int nonblock = fl & O_NONBLOCK;
    unsigned k = kind_of_mode(mode);
    if (k == D9_FD_SOCKET)
        return d9_fd_socket_byte(fl);
    if (k != D9_FD_PIPE)
        return k;
    if ((fl & O_ACCMODE) == O_RDONLY)
        return D9_FD_PIPE | (nonblock ? 0 : D9_FDK_BLOCKING);
    if ((fl & O_ACCMODE) == O_WRONLY)
        return D9_FD_PIPE | D9_FDK_PIPE_W | (nonblock ? D9_FDK_NONBLOCK : 0);
    return D9_FD_OTHER; /* a FIFO opened O_RDWR: neither end */
}

unsigned d9_fd_probe(int fd)
{
    int (*fcntl_)(int, int, ...) = __atomic_load_n(&d9_real.fcntl, __ATOMIC_RELAXED);
    if (!tracked(fd) || d9_in_vfork || atomic_load_explicit(&d9_fd_table_off, memory_order_relaxed) || !fcntl_)
        return 0;
    int err = errno;
    struct stat st;
    int fl = fstat(fd, &st) == 0 ? fcntl_(fd, F_GETFL) : -1;
    errno = err;
    if (fl < 0)
        return 0;
    unsigned b = probed_byte(st.st_mode, fl);
    if ((b & (D9_FDK_KIND | D9_FDK_PIPE_W)) == (D9_FD_PIPE | D9_FDK_PIPE_W))
        atomic_store_explicit(&d9_fd_peers[fd], -1, memory_order_relaxed);
    uint8_t unknown = D9_FD_UNKNOWN;
    if (!atomic_compare_exchange_strong_explicit(&d9_fd_kinds[fd], &unknown, (uint8_t)b, memory_order_relaxed,
                                                 memory_order_relaxed))
        return unknown; /* a hook put a kind there meanwhile */
    return b;
}

unsigned d9_fd_stat_kind(int fd)
{
    struct stat st;
    int err = errno;
    int rc = fstat(fd, &st);
    errno = err;
    return rc != 0 ? D9_FD_UNKNOWN : kind_of_mode(st.st_mode);
}
