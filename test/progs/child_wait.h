/* child_wait.h - waiting for a child that may hang (test programs). */
#ifndef DIAL9_TEST_CHILD_WAIT_H
#define DIAL9_TEST_CHILD_WAIT_H

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

/* pid's wait status within ms milliseconds (polled every 1 ms), or -1 when
 * it is still running then: it is killed and reaped. */
static inline int child_wait(pid_t pid, int ms)
{
    for (int i = 0; i < ms; i++) {
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

#endif
