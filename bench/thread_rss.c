/* thread_rss.c - resident memory of N threads that each record EVENTS events.
 * Usage: thread_rss N EVENTS
 * Starts N threads; each calls pthread_cond_signal (on a held condition
 * variable, test/progs/held_cond.h: a recorded wake, no syscall) EVENTS
 * times, then all wait on a barrier (glibc's internal futex: not
 * interposed, nothing recorded) while the main thread
 * lets the agent's writer drain (0.6 s, a few flush periods) and reads
 * VmRSS from /proc/self/status. Prints "threads N events E vmrss_kb K".
 * bench/memory.sh runs it with the agent off and on. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../test/progs/held_cond.h"

static pthread_barrier_t ready, done;
static pthread_cond_t cond = HELD_COND_INITIALIZER;
static long events;

static void *thread_main(void *arg)
{
    (void)arg;
    for (long i = 0; i < events; i++)
        pthread_cond_signal(&cond);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
    return NULL;
}

static long vmrss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N EVENTS\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    events = atol(argv[2]);
    if (n < 1)
        return 2;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
    pthread_barrier_init(&done, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, thread_main, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    pthread_barrier_wait(&ready);
    usleep(600000);
    printf("threads %d events %ld vmrss_kb %ld\n", n, events, vmrss_kb());
    pthread_barrier_wait(&done);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
    return 0;
}
