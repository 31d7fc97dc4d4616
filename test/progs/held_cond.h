/* held_cond.h - a condition variable whose signals the agent records
 * although no thread waits on it.
 *
 * The agent leaves out a pthread_cond_signal or _broadcast on a condition
 * variable nobody waits on: glibc returns at once, having done nothing
 * (agent/hooks_sync.c). Test and benchmark programs that make N recorded
 * WAKEs cheaply, without a system call and without a second thread, signal
 * one of these instead. Its glibc waiter count (__wrefs, bits 3 and up; glibc
 * >= 2.25) says one waiter, so the agent records each signal; glibc takes the
 * condition variable's internal lock, finds no waiter in either group and
 * returns 0 without a futex call. Never wait on it and never destroy it
 * (pthread_cond_destroy would wait for the waiter it counts). */
#ifndef D9_TEST_HELD_COND_H
#define D9_TEST_HELD_COND_H

#include <pthread.h>

#define HELD_COND_INITIALIZER {.__data = {.__wrefs = 8}}

#endif
