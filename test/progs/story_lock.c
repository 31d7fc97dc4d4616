/* story_lock.c - story 3: "every worker waited on one global lock".
 * WORKERS threads each take a mutex ITERS times inside their busy periods,
 * hold it for HOLD_US microseconds (spinning), do a little work outside it,
 * and park briefly (nanosleep) every 8 iterations so busy periods are
 * bounded. Every pthread_mutex_lock is bracketed with CLOCK_MONOTONIC reads:
 * the agent's wait (from its failed trylock to the real lock's return) lies
 * inside that bracket, so the program's figures are ground truth for it.
 *
 * usage: story_lock contended|private WORKERS ITERS HOLD_US
 *   contended: one global mutex; private: one mutex per worker (no waits).
 * Threshold: DIAL9_LOCK_WAIT_US from the environment (the agent's default,
 * 100, when unset). Output (stdout):
 *   mutex 0xADDR                    the global mutex (contended mode)
 *   wait TID T0 T1                  every acquisition with T1-T0 >= threshold
 *   summary waits N total_ns X max_ns Y acquisitions Z threshold_ns T
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "now.h"

#define MAX_WORKERS 16

struct wait_rec {
    uint64_t t0, t1;
};

struct worker {
    pthread_t th;
    pthread_mutex_t own; /* private mode */
    pthread_mutex_t *m;
    int tid;
    struct wait_rec *waits; /* ITERS entries */
    int nwaits;
};

static int iters;
static uint64_t hold_ns, threshold_ns;
static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static atomic_int go;

static void spin_ns(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        ;
}

static void *work(void *p)
{
    struct worker *w = p;
    w->tid = gettid();
    while (!atomic_load(&go))
        ;
    for (int i = 0; i < iters; i++) {
        spin_ns(hold_ns / 4); /* work outside the lock */
        uint64_t t0 = now_ns();
        pthread_mutex_lock(w->m);
        uint64_t t1 = now_ns();
        spin_ns(hold_ns);
        pthread_mutex_unlock(w->m);
        if (t1 - t0 >= threshold_ns)
            w->waits[w->nwaits++] = (struct wait_rec){t0, t1};
        if (i % 8 == 7)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "contended") && strcmp(argv[1], "private"))) {
        fprintf(stderr, "usage: story_lock contended|private WORKERS ITERS HOLD_US\n");
        return 2;
    }
    int contended = strcmp(argv[1], "contended") == 0;
    int n = atoi(argv[2]);
    iters = atoi(argv[3]);
    hold_ns = strtoull(argv[4], NULL, 10) * 1000u;
    const char *thr = getenv("DIAL9_LOCK_WAIT_US");
    threshold_ns = (thr ? strtoull(thr, NULL, 10) : 100) * 1000u;
    if (n < 1 || n > MAX_WORKERS || iters < 1) {
        fprintf(stderr, "story_lock: 1..%d workers, at least 1 iteration\n", MAX_WORKERS);
        return 2;
    }

    static struct worker ws[MAX_WORKERS];
    for (int i = 0; i < n; i++) {
        pthread_mutex_init(&ws[i].own, NULL);
        ws[i].m = contended ? &global : &ws[i].own;
        ws[i].waits = calloc((size_t)iters, sizeof *ws[i].waits);
        if (!ws[i].waits || pthread_create(&ws[i].th, NULL, work, &ws[i]) != 0) {
            fprintf(stderr, "story_lock: out of resources\n");
            return 1;
        }
    }
    atomic_store(&go, 1);
    for (int i = 0; i < n; i++)
        pthread_join(ws[i].th, NULL);

    if (contended)
        printf("mutex %p\n", (void *)&global);
    uint64_t total = 0, max = 0;
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ws[i].nwaits; k++) {
            struct wait_rec *r = &ws[i].waits[k];
            printf("wait %d %llu %llu\n", ws[i].tid, (unsigned long long)r->t0, (unsigned long long)r->t1);
            total += r->t1 - r->t0;
            max = r->t1 - r->t0 > max ? r->t1 - r->t0 : max;
            count++;
        }
    printf("summary waits %d total_ns %llu max_ns %llu acquisitions %d threshold_ns %llu\n", count,
           (unsigned long long)total, (unsigned long long)max, n * iters, (unsigned long long)threshold_ns);
    return 0;
}
