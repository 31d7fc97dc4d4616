/* eventgen.c - a trace of a given size for bench/decoder.sh, made by real
 * calls the agent records (run it under LD_PRELOAD=libdial9.so).
 * usage: eventgen THREADS EVENTS
 * Each thread loops over: 8 pthread_cond_signal on a held condition
 * variable (test/progs/held_cond.h: 8 wake events, no syscall, so cheap)
 * and one epoll_wait with a 1 ms timeout on an eventfd that stays readable
 * (a park and an unpark, returning at once),
 * until it has made its share of EVENTS; so 10 events per loop, with parks
 * and busy periods for summary and export to work on, and several threads
 * for the decoder's merge. Prints the calls made: "calls N". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "../test/progs/held_cond.h"

static long per_thread; /* loops per thread */

static void *run(void *arg)
{
    (void)arg;
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    int efd = eventfd(1, EFD_NONBLOCK), ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN}, out[1];
    if (efd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) < 0) {
        perror("eventgen");
        exit(1);
    }
    for (long i = 0; i < per_thread; i++) {
        for (int k = 0; k < 8; k++)
            pthread_cond_signal(&cv);
        epoll_wait(ep, out, 1, 1);
    }
    close(ep);
    close(efd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) < 1 || atol(argv[2]) < 10) {
        fprintf(stderr, "usage: %s THREADS EVENTS\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    per_thread = atol(argv[2]) / 10 / n + 1;
    pthread_t *t = calloc((size_t)n, sizeof(*t));
    for (int i = 0; i < n; i++)
        if (!t || pthread_create(&t[i], NULL, run, NULL) != 0) {
            fprintf(stderr, "eventgen: cannot start thread %d\n", i);
            return 1;
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("calls %ld\n", per_thread * 9 * n);
    free(t);
    return 0;
}
