/* quiet_then.c - a process that records nothing for a while, then a burst:
 *   quiet_then QUIET_MS N
 * prints "quiet" and flushes stdout, waits QUIET_MS in sigtimedwait (not
 * interposed: no event), makes N condvar signals (N wake events), then
 * sleeps 30 ms in nanosleep (one park, whose end is the first long park
 * to end after the quiet spell), prints "wakes N" and waits in pause()
 * (not interposed) until a signal ends it. test_idle_writer.sh watches
 * the writer thread during the quiet spell and the trace after the burst. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

int main(int argc, char **argv)
{
    long ms = argc == 3 ? atol(argv[1]) : -1, n = argc == 3 ? atol(argv[2]) : -1;
    if (ms < 0 || n < 0) {
        fprintf(stderr, "usage: %s QUIET_MS N\n", argv[0]);
        return 2;
    }
    printf("quiet\n");
    fflush(stdout);
    struct timespec quiet = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    sigset_t none;
    sigemptyset(&none);
    sigtimedwait(&none, NULL, &quiet); /* EAGAIN after QUIET_MS */
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    for (long i = 0; i < n; i++)
        pthread_cond_signal(&cv);
    struct timespec park = {.tv_nsec = 30000000};
    nanosleep(&park, NULL);
    printf("wakes %ld\n", n);
    fflush(stdout);
    for (;;)
        pause();
}
