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

pid_t _Fork(void); /* glibc 2.34 */

static void child(void)
{
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    for (int i = 0; i < 1000; i++)
        pthread_cond_signal(&cv);
    exit(0);
}

/* "ok", "HUNG" (killed after 5 s) or "FAILED". */
static const char *outcome(pid_t pid)
{
    if (pid < 0)
        return "FAILED";
    for (int i = 0; i < 5000; i++) {
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "FAILED";
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return "HUNG";
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
