/* sigpipe_flipper.h - a thread body that changes SIGPIPE's action in a loop
 * (as libcurl does around each transfer) until *stop (an atomic_int) is
 * set: steady traffic through the agent's sigaction interposer and its
 * lock, for the tests that race it (fork_sigaction, rt_sigaction). */
#ifndef SIGPIPE_FLIPPER_H
#define SIGPIPE_FLIPPER_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

static void *sigpipe_flipper(void *stop)
{
    while (!atomic_load((atomic_int *)stop)) {
        signal(SIGPIPE, SIG_IGN);
        signal(SIGPIPE, SIG_DFL);
    }
    return NULL;
}

#endif
