/* wake_then_sleep.c - makes N condvar signals (N wake events), prints
 * "wakes N" and flushes stdout, then sleeps S seconds. test_flush.sh kills it
 * during the sleep: whatever the agent put on disk by then must decode.
 * usage: wake_then_sleep N S */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N SECONDS\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    for (long i = 0; i < n; i++)
        pthread_cond_signal(&cv);
    printf("wakes %ld\n", n);
    fflush(stdout);
    struct timespec ts = {.tv_sec = atol(argv[2])};
    nanosleep(&ts, NULL);
    return 0;
}
