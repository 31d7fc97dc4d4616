/* hotpath.c - cost of the interposers per call, for bench/run.sh.
 * usage: hotpath MODE N [WARM]   prints "MODE ns_per_call"
 * WARM: that many untimed calls first, then a 300 ms pause: the agent's ring
 * has been touched and drained, so N calls under half the ring (8000 with the
 * 16384 entries bench/run.sh sets) time recorded events only, no page fault,
 * no drop.
 * Modes (each call below makes the agent record one event, or count one poll):
 *   cond_signal   pthread_cond_signal with no waiter: no syscall, so the agent's
 *                 share is the whole difference (wake event)
 *   futex_wake    syscall(SYS_futex, FUTEX_WAKE) with no waiter (wake event)
 *   eventfd       8-byte write to an eventfd (wake event)
 *   epoll_nowait  epoll_wait with timeout 0 (counted, no event)
 *   epoll_park    epoll_wait with 1 ms timeout on a ready eventfd (park + unpark)
 *   mutex         uncontended pthread_mutex_lock + unlock (no event)
 *   sock_read     read on an empty non-blocking socket, EAGAIN (not recorded)
 *   file_pread    1-byte pread of a regular file in $TMPDIR (default /tmp):
 *                 timed as a possible slow syscall, two stamps, not recorded
 *   file_openclose  open + close of that file (both timed, not recorded)
 * An idle thread runs in every mode: the services dial9 targets are all
 * multi-threaded, and with the agent's writer so is this program; once a
 * second thread exists glibc takes its multi-threaded paths (cancellation
 * points enable and disable async cancel around each syscall: +45 ns on
 * read here), which without the idle thread counted as the agent's cost. */
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Blocks for good in a read no one answers; gone with the process. */
static void *idle_thread(void *arg)
{
    char byte;
    (void)!read(*(int *)arg, &byte, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr,
                "usage: %s cond_signal|futex_wake|eventfd|epoll_nowait|epoll_park|mutex|sock_read|"
                "file_pread|file_openclose N [WARM]\n",
                argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[2]), warm = argc == 4 ? atol(argv[3]) : 0;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int word = 0;
    int efd = eventfd(0, EFD_NONBLOCK);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN}, out[4];
    uint64_t one = 1;
    if (write(efd, &one, 8) != 8) /* stays readable: epoll_park returns at once */
        return 1;
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int sp[2];
    char byte;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) != 0)
        return 1;
    static int idle_fd[2];
    pthread_t idle;
    if (pipe(idle_fd) != 0 || pthread_create(&idle, NULL, idle_thread, &idle_fd[0]) != 0)
        return 1;
    /* Made last, so every return below removes it. */
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/d9hotpath.%d", dir, (int)getpid());
    int ffd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (ffd < 0 || write(ffd, "x", 1) != 1) {
        unlink(path);
        return 1;
    }

    uint64_t t0 = 0;
    for (long i = -warm; i < n; i++) {
        if (i == 0 && warm) {
            struct timespec pause = {0, 300000000};
            nanosleep(&pause, NULL);
        }
        if (i == 0)
            t0 = now_ns();
        if (!strcmp(mode, "cond_signal"))
            pthread_cond_signal(&cv);
        else if (!strcmp(mode, "futex_wake"))
            syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        else if (!strcmp(mode, "eventfd"))
            (void)!write(efd, &one, 8);
        else if (!strcmp(mode, "epoll_nowait"))
            epoll_wait(ep, out, 4, 0);
        else if (!strcmp(mode, "epoll_park"))
            epoll_wait(ep, out, 4, 1);
        else if (!strcmp(mode, "mutex")) {
            pthread_mutex_lock(&mu);
            pthread_mutex_unlock(&mu);
        } else if (!strcmp(mode, "sock_read"))
            (void)!read(sp[0], &byte, 1);
        else if (!strcmp(mode, "file_pread"))
            (void)!pread(ffd, &byte, 1, 0);
        else if (!strcmp(mode, "file_openclose"))
            close(open(path, O_RDONLY));
        else {
            fprintf(stderr, "hotpath: unknown mode %s\n", mode);
            unlink(path);
            return 2;
        }
    }
    uint64_t t1 = now_ns();
    unlink(path);
    printf("%s %.1f\n", mode, (double)(t1 - t0) / (double)n);
    return 0;
}
