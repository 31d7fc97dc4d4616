/* clock_truth.c - ground truth for event timestamps: each thread calls
 * pthread_cond_signal (recorded as a WAKE stamped just before the real call)
 * between two clock_gettime(CLOCK_MONOTONIC) readings of its own, so the
 * recorded ts must lie in [before, after]. Threads hop between CPUs
 * (sched_setaffinity) and sleep now and then, so stamps are taken on every
 * CPU, after migrations, across many writer cycles.
 *
 *   clock_truth [SECONDS] [THREADS]     defaults 3 and 3
 *
 * Prints "pid PID" and "migrations N" (CPU changes seen by sched_getcpu),
 * then per call "TID CV BEFORE AFTER" (CV: the condvar's address, the
 * WAKE's target), in each thread's call order.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "now.h"
#include "held_cond.h"

#define MAX_THREADS 8
#define MAX_CALLS 200000
#define PERIOD_NS 100000 /* one call per 100 us */

struct thread {
    pthread_t th;
    pthread_cond_t cv;
    int idx;
    pid_t tid;
    long n, migrations;
    uint64_t (*win)[2];
};

static struct thread threads[MAX_THREADS];
static uint64_t run_ns;
static int ncpu;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set); /* best effort: a restricted cpuset may refuse */
}

static void *run(void *arg)
{
    struct thread *t = arg;
    t->tid = (pid_t)syscall(SYS_gettid);
    uint64_t start = now_ns(), next = start;
    int cpu = sched_getcpu();
    while (t->n < MAX_CALLS && now_ns() - start < run_ns) {
        if (t->n % 50 == 0 && ncpu > 1)
            pin((int)((t->n / 50 + t->idx) % ncpu));
        if (t->n % 10 == 0) {
            struct timespec d = {0, 200000};
            nanosleep(&d, NULL); /* a park: the thread may resume on another CPU */
        } else {
            while (now_ns() < next)
                ;
        }
        uint64_t b = now_ns();
        pthread_cond_signal(&t->cv);
        uint64_t a = now_ns();
        t->win[t->n][0] = b;
        t->win[t->n][1] = a;
        t->n++;
        int c = sched_getcpu();
        if (c != cpu)
            t->migrations++;
        cpu = c;
        next = a + PERIOD_NS;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    int n = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || n > MAX_THREADS || secs <= 0)
        return 2;
    run_ns = (uint64_t)(secs * 1e9);
    ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < n; i++) {
        threads[i].idx = i;
        threads[i].cv = (pthread_cond_t)HELD_COND_INITIALIZER;
        threads[i].win = calloc(MAX_CALLS, sizeof(threads[i].win[0]));
        if (!threads[i].win || pthread_create(&threads[i].th, NULL, run, &threads[i]) != 0)
            return 1;
    }
    long migrations = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(threads[i].th, NULL);
        migrations += threads[i].migrations;
    }
    printf("pid %d\nmigrations %ld\n", (int)getpid(), migrations);
    for (int i = 0; i < n; i++)
        for (long k = 0; k < threads[i].n; k++)
            printf("%d %lu %llu %llu\n", (int)threads[i].tid, (unsigned long)(uintptr_t)&threads[i].cv,
                   (unsigned long long)threads[i].win[k][0], (unsigned long long)threads[i].win[k][1]);
    return 0;
}
