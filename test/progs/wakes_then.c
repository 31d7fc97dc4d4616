/* wakes_then.c - N condvar signals (N wake events), prints "wakes N" and
 * flushes stdout, then ends one of three ways:
 *   wakes_then N sleep SECONDS  nanosleep (one park), then return from main
 *                               (test_flush kills it during the sleep)
 *   wakes_then N exit WAIT_MS   waits WAIT_MS in rt_sigtimedwait, made
 *                               through syscall() (no event: the agent
 *                               records glibc's sigtimedwait), then
 *                               _exit(0), which skips the agent's destructor
 *   wakes_then N term           the pause system call (through syscall(): no
 *                               event) until a SIGTERM without a handler
 *                               kills it
 * In the exit and term modes nothing the agent records happens after the
 * "wakes" line. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

int main(int argc, char **argv)
{
    const char *mode = argc >= 3 ? argv[2] : "";
    int ok = (!strcmp(mode, "term") && argc == 3) ||
             ((!strcmp(mode, "exit") || !strcmp(mode, "sleep")) && argc == 4);
    if (!ok) {
        fprintf(stderr, "usage: %s N sleep SECONDS | N exit WAIT_MS | N term\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    for (long i = 0; i < n; i++)
        pthread_cond_signal(&cv);
    printf("wakes %ld\n", n);
    fflush(stdout);
    if (!strcmp(mode, "term")) {
        for (;;)
            syscall(SYS_pause);
    }
    if (!strcmp(mode, "sleep")) {
        struct timespec ts = {.tv_sec = atol(argv[3])};
        nanosleep(&ts, NULL);
        return 0;
    }
    long ms = atol(argv[3]);
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    sigset_t none;
    sigemptyset(&none);
    syscall(SYS_rt_sigtimedwait, &none, NULL, &ts, sizeof(long)); /* EAGAIN after WAIT_MS */
    _exit(0);
}
