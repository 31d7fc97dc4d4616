/* forker.c - threads that park, in a process that forks a child that does the
 * same; both exit normally. Each process prints what it did:
 *   child pid=C sem_waits=N nanosleeps=N threads=N joins=N
 *   parent pid=P sem_waits=N nanosleeps=N threads=N joins=N child_waits=N child_status=S
 *
 *   forker                   the above (the parent works before and after fork)
 *   forker --no-fork [--exit N]
 *                            works once, prints "sem_waits=N nanosleeps=N
 *                            threads=N joins=N" (no pid: the same output
 *                            every run)
 *                            and exits with status N
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 50

static sem_t ping, pong;
static unsigned long sem_waits, nanosleeps, threads, joins; /* main thread's tally */

static void *pinger(void *arg)
{
    for (int r = 0; r < ROUNDS; r++) {
        sem_post(&ping);
        sem_wait(&pong);
    }
    return NULL;
}

static void *ponger(void *arg)
{
    for (int r = 0; r < ROUNDS; r++) {
        sem_wait(&ping);
        sem_post(&pong);
    }
    return NULL;
}

/* A short sleep and two threads ping-ponging ROUNDS times. No signal handler
 * is installed, so no sem_wait returns EINTR: the counts are exact. */
static void work(void)
{
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
    nanosleeps++;
    pthread_t a, b;
    if (sem_init(&ping, 0, 0) || sem_init(&pong, 0, 0) ||
        pthread_create(&a, NULL, pinger, NULL) || pthread_create(&b, NULL, ponger, NULL)) {
        perror("forker: setup");
        exit(1);
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    sem_destroy(&ping);
    sem_destroy(&pong);
    sem_waits += 2 * ROUNDS;
    threads += 2;
    joins += 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--no-fork") == 0) {
        int status = argc > 3 && strcmp(argv[2], "--exit") == 0 ? atoi(argv[3]) : 0;
        work();
        printf("sem_waits=%lu nanosleeps=%lu threads=%lu joins=%lu\n", sem_waits, nanosleeps, threads, joins);
        return status;
    }
    work(); /* the parent has recorded events (an open segment) at fork time */
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("forker: fork");
        return 1;
    }
    if (child == 0) {
        sem_waits = nanosleeps = threads = joins = 0;
        work();
        printf("child pid=%d sem_waits=%lu nanosleeps=%lu threads=%lu joins=%lu\n", (int)getpid(),
               sem_waits, nanosleeps, threads, joins);
        exit(0); /* a normal exit: atexit handlers and destructors run */
    }
    work();
    int st;
    if (waitpid(child, &st, 0) != child) {
        perror("forker: waitpid");
        return 1;
    }
    printf("parent pid=%d sem_waits=%lu nanosleeps=%lu threads=%lu joins=%lu child_waits=1 child_status=%d\n",
           (int)getpid(), sem_waits, nanosleeps, threads, joins, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
