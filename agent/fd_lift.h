/* fd_lift.h - the agent's long-lived fds kept out of the numbers the host
 * counts on.
 *
 * open(), socket(), dup() and the rest return the lowest free number. A
 * program started with 0-2 closed found the agent's fds there (DIAL9_DIR
 * on 0, a thread's schedstat fd on 1, ...): what it wrote to stdout went to
 * an agent fd, and its own setup of 0-2 (open + dup + dup) got other
 * numbers. And each recorded thread's schedstat fd moved the numbers the
 * host got after it by one more.
 * - The segment layer's fds (DIAL9_DIR, the process's directory, the
 *   segment: three in all) are kept off 0-2 (D9_FD_ABOVE_STDIO). Higher,
 *   the host's close storms no longer reach them through its hooked closes
 *   (segment.c's gate), only through raw system calls, whose EBADF paths
 *   lost sealed segments in test_lifecycle's closestorm (1 run in 3).
 * - A thread's schedstat and perf fds go to the top of the host's range
 *   (D9_FD_TOP): however many threads are recorded, the host's numbers
 *   move by the three above at most, until it holds three quarters of its
 *   fd limit, where scheduling.c stops keeping fds anyway.
 */
#ifndef DIAL9_FD_LIFT_H
#define DIAL9_FD_LIFT_H

/* D9_FD_TOP takes numbers from min(RLIMIT_NOFILE soft limit, this) down:
 * the kernel sizes a process's fd table by its highest fd (8 bytes a
 * number), so a soft limit of 1M must not make it 8 MiB. */
#define D9_FD_LIFT_CAP 1024

enum d9_fd_zone {
    D9_FD_ABOVE_STDIO, /* 3 and up */
    D9_FD_TOP,         /* three quarters of min(soft limit, D9_FD_LIFT_CAP) and up */
};

/* A copy of fd, close-on-exec, on the lowest free number in zone (getrlimit
 * for D9_FD_TOP, fcntl F_DUPFD_CLOEXEC): the caller closes fd once it
 * knows the number is still its own. -1 when fd is in the zone already or
 * the zone has no free number (EMFILE, EINVAL): the caller keeps fd.
 * Preserves errno. Not for the hot path: up to two system calls. */
int d9_fd_lift(int fd, enum d9_fd_zone zone);

/* Grows the process's fd table to hold D9_FD_TOP's numbers, by a copy of
 * an fd of its own on the highest (then closed). Call while the process
 * has one thread: the kernel grows a table that several threads share only
 * after an RCU grace period (expand_fdtable: synchronize_rcu), 13 ms on the
 * bench VM, which the first lift of a thread's schedstat fd paid at every
 * start once the writer thread ran. Five system calls (getrlimit, open,
 * fcntl, two closes); preserves errno; a failure only leaves the growth to
 * the first lift. */
void d9_fd_lift_prepare(void);

#endif
