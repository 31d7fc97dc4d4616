/* fault_writer.c - a steady, known stream of events for test_faults.sh:
 * condvar signals (one wake event each) for SECONDS, BATCH of them per
 * millisecond (nanosleep between batches). SIGUSR1 drops the rate to one
 * wake per millisecond (so a refilled disk does not fill again at once).
 * Prints "start", "wakes N" (every wake it made) and "end"; exits 0.
 * Ground truth for time windows: after each SIGUSR1 it prints on stderr
 * "phase K at NS after W wakes": its CLOCK_MONOTONIC time NS between two
 * wakes, W the wakes made before NS (so exactly W2 - W1 wakes were stamped
 * between the marks of phases 1 and 2). SIGINT ends the run early, as
 * if SECONDS had passed (a test whose steps take an unknown time passes a
 * long SECONDS and ends the program when it is done with it).
 * Further arguments are ignored (the tests pass markers in the cmdline).
 * usage: fault_writer SECONDS [BATCH] [ARG...] */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "held_cond.h"

static volatile sig_atomic_t phase; /* SIGUSR1s received */
static volatile sig_atomic_t stop;  /* SIGINT received */

static void on_usr1(int sig)
{
    (void)sig;
    phase++;
}

static void on_int(int sig)
{
    (void)sig;
    stop = 1;
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static double now(void) { return (double)now_ns() / 1e9; }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SECONDS [BATCH] [ARG...]\n", argv[0]);
        return 2;
    }
    double secs = atof(argv[1]);
    long batch = argc > 2 ? atol(argv[2]) : 100;
    signal(SIGUSR1, on_usr1);
    signal(SIGINT, on_int);
    printf("start\n");
    fflush(stdout);
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    long wakes = 0;
    int marked = 0; /* phases announced */
    double end = now() + secs;
    while (!stop && now() < end) {
        int p = phase;
        if (p != marked) {
            marked = p;
            fprintf(stderr, "phase %d at %lld after %ld wakes\n", p, now_ns(), wakes);
        }
        for (long i = 0, n = p ? 1 : batch; i < n; i++, wakes++)
            pthread_cond_signal(&cv);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    printf("wakes %ld\nend\n", wakes);
    return 0;
}
