/* raw_fork.c - children made without fork(), so that no atfork handler
 * runs in them: syscall(SYS_fork), then glibc's _Fork(). Each child makes
 * 1000 condvar signals and calls exit(0). Each must end within 5 s.
 * Prints "raw_fork: syscall ok|HUNG|FAILED, _Fork ok|HUNG|FAILED"; exits 1
 * unless both are ok. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_wait.h"
#include "held_cond.h"

pid_t _Fork(void); /* glibc 2.34 */

static void child(void)
{
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    for (int i = 0; i < 1000; i++)
        pthread_cond_signal(&cv);
    exit(0);
}

/* "ok", "HUNG" (killed after 5 s) or "FAILED". */
static const char *outcome(pid_t pid)
{
    if (pid < 0)
        return "FAILED";
    int st = child_wait(pid, 5000);
    if (st == -1)
        return "HUNG";
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "FAILED";
}

int main(void)
{
    fflush(stdout);
    pid_t pid = (pid_t)syscall(SYS_fork);
    if (pid == 0)
        child();
    const char *a = outcome(pid);
    pid = _Fork();
    if (pid == 0)
        child();
    const char *b = outcome(pid);
    printf("raw_fork: syscall %s, _Fork %s\n", a, b);
    return a[0] == 'o' && b[0] == 'o' ? 0 : 1;
}
