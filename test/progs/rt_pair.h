/* rt_pair.h - for the tests of a SCHED_FIFO thread beside a normal one on
 * one CPU (rt_sigaction, rt_cancel): the real-time thread preempts the
 * normal one at once, so a wait of the first on the second shows. */
#ifndef RT_PAIR_H
#define RT_PAIR_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in us. */
static double rt_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Pins the calling thread, and so the threads it starts after, to the CPU
 * it runs on. 0, or prints "NAME: cannot pin to one CPU: ..." and returns
 * 3 (the programs' exit status for a machine that refuses). */
static int rt_pin(const char *name)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0)
        return 0;
    printf("%s: cannot pin to one CPU: %s\n", name, strerror(errno));
    return 3;
}

/* Attributes of a SCHED_FIFO thread of priority 10. */
static void rt_fifo_attr(pthread_attr_t *attr)
{
    struct sched_param prio = {.sched_priority = 10};
    pthread_attr_init(attr);
    pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(attr, SCHED_FIFO);
    pthread_attr_setschedparam(attr, &prio);
}

#endif
