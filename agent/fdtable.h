/* fdtable.h - what each fd is, one byte per fd, learned from the call that
 * made it (open, socket, pipe, eventfd, ...) or, for one the agent did not
 * see made, asked of the kernel at its first read (d9_fd_probe), so write()
 * and the timed calls can tell a wake-up, a regular-file access and
 * ordinary socket I/O apart with one byte load. Covers fds below
 * D9_FD_MAX; higher fds stay UNKNOWN.
 *
 * 1 MiB of bss for the kinds plus 4 MiB for pipe peers; only pages of fd
 * numbers actually used become resident.
 */
#ifndef DIAL9_FDTABLE_H
#define DIAL9_FDTABLE_H

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dial9_format.h"

#define D9_FD_MAX (1u << 20)

/* Byte layout: bits 0-2 enum d9_fd_kind; flags above. */
#define D9_FDK_KIND 0x07u
#define D9_FDK_PIPE_W 0x08u /* the write end of a pipe (kind PIPE) */
#define D9_FDK_WAKER 0x10u  /* ... whose read end is in an epoll set or blocking (a
                             * thread may wait in its read): writes are WAKEs */
#define D9_FDK_NONBLOCK 0x20u /* ... made or set O_NONBLOCK through this fd (not a copy):
                               * a write never waits (d9_fd_set_nonblock) */
#define D9_FDK_BLOCKING 0x40u /* a socket, a pipe's read end or an eventfd in blocking
                               * mode: made so (socket, socketpair, accept without
                               * SOCK_NONBLOCK; pipe, pipe2 without O_NONBLOCK; eventfd
                               * without EFD_NONBLOCK) or set so (F_SETFL, FIONBIO) through
                               * this fd or one it was copied from. A read (a recv, an
                               * accept) on it waits for the peer: a park (socket_wait.h) */
/* The whole byte of a blocking socket (a socket's byte has no other flag). */
#define D9_FD_BLOCKING_SOCKET (D9_FD_SOCKET | D9_FDK_BLOCKING)

/* b is a pipe's read end: its kind without a write end's flags (the
 * blocking flag aside). */
static inline int d9_fd_pipe_read_end(unsigned b) { return (b & ~D9_FDK_BLOCKING) == D9_FD_PIPE; }

/* The byte of a new socket made with these SOCK_* type flags or accept4
 * flags (SOCK_NONBLOCK is O_NONBLOCK). */
static inline unsigned d9_fd_socket_byte(int flags)
{
    return (flags & O_NONBLOCK) ? D9_FD_SOCKET : D9_FD_BLOCKING_SOCKET;
}

/* The byte of a new eventfd made with these EFD_* flags (EFD_NONBLOCK is
 * O_NONBLOCK). */
static inline unsigned d9_fd_eventfd_byte(int flags)
{
    return (flags & O_NONBLOCK) ? D9_FD_EVENTFD : D9_FD_EVENTFD | D9_FDK_BLOCKING;
}

/* Relaxed atomics: each byte is written by whichever thread creates or closes
 * the fd; racing with the host's own close/reuse of a number is the host's
 * race, and at worst mislabels one event. */
extern _Atomic uint8_t d9_fd_kinds[D9_FD_MAX] __attribute__((visibility("hidden")));

/* Set once by the constructor when the agent is off (DIAL9_ENABLED=0, a
 * secure-execution process): it will record nothing and make no fd of its
 * own, so the fd hooks neither keep this table nor pass the close gate,
 * and only forward: an open + close then adds 99 instructions to the bare
 * calls instead of 197 (docs/BENCH-HISTORY.md, "The agent off"). Before the
 * constructor runs the table is kept, as the agent may start. */
extern _Atomic int d9_fd_table_off __attribute__((visibility("hidden")));

/* The kind byte (kind and flags); 0 (UNKNOWN) for untracked fds. */
static inline unsigned d9_fd_byte(int fd)
{
    return (unsigned)fd < D9_FD_MAX ? atomic_load_explicit(&d9_fd_kinds[fd], memory_order_relaxed) : 0;
}

static inline unsigned d9_fd_kind(int fd) { return d9_fd_byte(fd) & D9_FDK_KIND; }

/* Stores byte (a kind, with its flags) for a tracked fd, and nothing when
 * it is already so: a call that changes no kind (a socket made on a number
 * that was a socket) stays a load and dirties no page. Inline, as
 * d9_fd_forget_byte: every host open and close runs them; close() need not
 * run first. */
static inline void d9_fd_put(int fd, unsigned byte)
{
    if ((unsigned)fd < D9_FD_MAX && atomic_load_explicit(&d9_fd_kinds[fd], memory_order_relaxed) != byte)
        atomic_store_explicit(&d9_fd_kinds[fd], (uint8_t)byte, memory_order_relaxed);
}

/* A new pipe: remembers each end's peer; flags as given to pipe2. When
 * its read end blocks, its write end is a waker from the start. */
void d9_fd_set_pipe(int rd, int wr, int flags);
/* fcntl(fd, F_SETFL) or ioctl(fd, FIONBIO) made fd's open file description
 * O_NONBLOCK (nonblock 1) or blocking (0): a pipe write end keeps which. Set through the fd that has the
 * flag; cleared through it or a copy of it. (A raw system call that clears
 * it is not seen: a blocking write may then be made directly, which a
 * pthread_cancel reaches only once it returns.) A socket or a pipe's read
 * end keeps D9_FDK_BLOCKING on fd alone: its other copies keep what they
 * had (one made non-blocking through a copy then parks for calls that
 * return EAGAIN at once: a short park, never a changed call). An eventfd
 * the same. A pipe read end made blocking makes its write end a waker. */
void d9_fd_set_nonblock(int fd, int nonblock);
/* The read end rd was added to an epoll set: its write end becomes a waker.
 * Returns 1 when rd is a tracked pipe read end (its EPOLL_CTL is worth
 * recording), else 0. */
int d9_fd_pipe_watched(int rd);
/* For a pipe end, the other end's fd; meaningful only while the byte says PIPE. */
extern _Atomic int32_t d9_fd_peers[D9_FD_MAX] __attribute__((visibility("hidden")));

/* The read end a waker write end wakes (-1 when unknown). */
static inline int d9_fd_peer(int fd)
{
    return (unsigned)fd < D9_FD_MAX ? atomic_load_explicit(&d9_fd_peers[fd], memory_order_relaxed) : -1;
}
/* What a copy of an fd inherits: its kind byte and pipe peer, read before
 * the call that copies it (after it, another thread may close that fd). */
struct d9_fd_copy_of {
    unsigned byte;
    int32_t peer;
};
static inline struct d9_fd_copy_of d9_fd_copy_read(int old)
{
    struct d9_fd_copy_of c = {d9_fd_byte(old), -1};
    if ((c.byte & D9_FDK_KIND) == D9_FD_PIPE)
        c.peer = d9_fd_peer(old);
    return c;
}
/* fd is a copy (dup*, fcntl F_DUPFD) of the fd `from` was read of: same
 * kind, pipe peer and flags, but not D9_FDK_NONBLOCK, which is kept by one
 * fd of the open file description alone, so that d9_fd_set_nonblock can
 * find it. */
void d9_fd_copy(int fd, struct d9_fd_copy_of from);
/* d9_fd_forget of a pipe read end: its write end stops being a waker. */
void d9_fd_forget_pipe(int rd);
/* fd is being closed: forget it, and stop treating its pipe peer as a
 * waker. b: d9_fd_byte(fd), read just before (a close reads it anyway);
 * non-zero only for a tracked fd, and a close of an fd the table never
 * knew stays a load. */
static inline void d9_fd_forget_byte(int fd, unsigned b)
{
    if (__builtin_expect(d9_fd_pipe_read_end(b), 0))
        d9_fd_forget_pipe(fd);
    else if (b)
        atomic_store_explicit(&d9_fd_kinds[fd], 0, memory_order_relaxed);
}
static inline void d9_fd_forget(int fd) { d9_fd_forget_byte(fd, d9_fd_byte(fd)); }
/* Forget fds first..last inclusive (close_range). */
void d9_fd_clear_range(unsigned first, unsigned last);
/* fd is UNKNOWN in the table (the agent did not see it made: inherited
 * across exec, made before the agent started or by a raw system call,
 * received over a socket) and a thread is about to read it: learns its
 * byte once, with two system calls (fstat, fcntl F_GETFL), so that a
 * blocking socket or pipe read end parks as one the agent saw made.
 * Stored only while the entry is still UNKNOWN (a hook may have put the
 * kind of a new fd on that number meanwhile). A FIFO is a pipe's read end
 * when opened read-only, its write end when write-only (no peer, no
 * waker); an anonymous inode (eventfd, timerfd, ...) or a device is
 * OTHER, and never parks. Returns the byte, 0 when it stays unknown (fd
 * out of the table, the call fails, in a vfork child or with the table
 * off). Preserves errno. Not on any path of an fd the agent saw made. */
unsigned d9_fd_probe(int fd);
/* The kind fstat gives fd (UNKNOWN when it fails): a syscall, so only on
 * the slow path, for calls already over the slow threshold. Eventfds and
 * epoll fds (anonymous inodes) come out OTHER. Preserves errno. */
unsigned d9_fd_stat_kind(int fd);

#endif
