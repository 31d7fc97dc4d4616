/* rt_sigaction.c - a SCHED_FIFO thread changes a signal's action while a
 * normal thread on the same CPU keeps changing another's (as a real-time
 * audio or trading service does next to its ordinary threads). The
 * real-time thread sleeps 200 us between its calls, so it often wakes while
 * the normal thread is inside sigaction, and preempts it there. With libc
 * alone each call takes microseconds. A lock that the preempted thread holds
 * and the real-time thread spins on can only be released when the kernel's
 * real-time throttling (sched_rt_runtime_us, 950 ms a second by default)
 * stops the spinner: the call then takes most of a second. Runs until
 * CALLS calls or 10 s. Prints
 *   "rt_sigaction: N calls, slowest X us, S over 100 ms"
 * and exits 0; 3 when SCHED_FIFO or the CPU pinning is refused; 2 on a
 * usage or thread error.
 *   rt_sigaction CALLS */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_pair.h"
#include "sigpipe_flipper.h"

static atomic_int stop;
static int calls;
static long n_done, over;
static double slowest_us;

static void on_usr2(int sig) { (void)sig; }

static void *rt_thread(void *arg)
{
    (void)arg;
    double end = rt_now_us() + 10e6;
    struct timespec nap = {0, 200000};
    for (int i = 0; i < calls && rt_now_us() < end; i++) {
        nanosleep(&nap, NULL);
        double t0 = rt_now_us();
        signal(SIGUSR2, i & 1 ? on_usr2 : SIG_DFL);
        double us = rt_now_us() - t0;
        if (us > slowest_us)
            slowest_us = us;
        over += us > 100000;
        n_done++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    calls = argc == 2 ? atoi(argv[1]) : 0;
    if (calls < 1) {
        fprintf(stderr, "usage: %s CALLS\n", argv[0]);
        return 2;
    }
    if (rt_pin("rt_sigaction") != 0) /* the threads inherit it */
        return 3;
    pthread_t normal, rt;
    if (pthread_create(&normal, NULL, sigpipe_flipper, &stop) != 0)
        return 2;
    pthread_attr_t attr;
    rt_fifo_attr(&attr);
    int err = pthread_create(&rt, &attr, rt_thread, NULL);
    if (err != 0) {
        atomic_store(&stop, 1);
        pthread_join(normal, NULL);
        printf("rt_sigaction: no SCHED_FIFO thread: %s\n", strerror(err));
        return err == EPERM ? 3 : 2;
    }
    pthread_join(rt, NULL);
    atomic_store(&stop, 1);
    pthread_join(normal, NULL);
    printf("rt_sigaction: %ld calls, slowest %.0f us, %ld over 100 ms\n", n_done, slowest_us, over);
    return 0;
}
