/* rt_cancel.c - a normal thread cancels a SCHED_FIFO thread blocked in
 * epoll_wait on the same CPU, and joins it (a real-time worker stopped at
 * shutdown). The cancel wakes the real-time thread, which preempts the
 * canceller at once and exits: nothing of its exit may wait for the
 * canceller, which cannot run again before it is done. With libc alone the
 * join returns in microseconds; an exit that spun on a flag the preempted
 * canceller held waited until the kernel's real-time throttling
 * (sched_rt_runtime_us, 950 ms a second by default) stopped the spinner.
 * ROUNDS times, each with a fresh thread (the first cancel of a process is
 * the one that reaches a wait the agent makes itself: agent/direct.h).
 * Prints "rt_cancel: N rounds, slowest join X us" and exits 0; 3 when
 * SCHED_FIFO or the CPU pinning is refused; 2 on another error.
 *   rt_cancel ROUNDS */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "rt_pair.h"

static int epfd;

static void *waiter(void *arg)
{
    (void)arg;
    struct epoll_event ev;
    for (;;)
        epoll_wait(epfd, &ev, 1, -1); /* nothing is ever ready: only the cancel ends it */
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc == 2 ? atoi(argv[1]) : 0;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
        return 2;
    }
    if (rt_pin("rt_cancel") != 0) /* the threads inherit it */
        return 3;
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        return 2;
    pthread_attr_t attr;
    rt_fifo_attr(&attr);
    double slowest = 0;
    for (int r = 0; r < rounds; r++) {
        pthread_t th;
        int err = pthread_create(&th, &attr, waiter, NULL);
        if (err != 0) {
            printf("rt_cancel: no SCHED_FIFO thread: %s\n", strerror(err));
            return err == EPERM ? 3 : 2;
        }
        usleep(20000); /* it is in its wait */
        double t0 = rt_now_us();
        void *ret = NULL;
        if (pthread_cancel(th) != 0 || pthread_join(th, &ret) != 0 || ret != PTHREAD_CANCELED) {
            printf("rt_cancel: round %d: the thread was not cancelled\n", r);
            return 2;
        }
        double us = rt_now_us() - t0;
        if (us > slowest)
            slowest = us;
    }
    printf("rt_cancel: %d rounds, slowest join %.0f us\n", rounds, slowest);
    return 0;
}
