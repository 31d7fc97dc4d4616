/* exit_paths.c - a known number of events, then an exit that skips the
 * agent's destructor (test_exit_paths.sh):
 *   exit_paths N exit WAIT_MS  N condvar signals (N wake events), prints
 *                              "wakes N", then waits WAIT_MS in
 *                              sigtimedwait (not interposed: no event) and
 *                              ends with _exit(0)
 *   exit_paths N term          the same, then pause() (not interposed)
 *                              until a SIGTERM without a handler kills it
 * Nothing the agent records happens after the "wakes" line is written. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "exit") == 0 && argc != 4) || (strcmp(argv[2], "term") && strcmp(argv[2], "exit"))) {
        fprintf(stderr, "usage: %s N exit WAIT_MS | N term\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    for (long i = 0; i < n; i++)
        pthread_cond_signal(&cv);
    printf("wakes %ld\n", n);
    fflush(stdout);
    if (strcmp(argv[2], "term") == 0) {
        for (;;)
            pause();
    }
    long ms = atol(argv[3]);
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    sigset_t none;
    sigemptyset(&none);
    sigtimedwait(&none, NULL, &ts); /* EAGAIN after WAIT_MS */
    _exit(0);
}
