/* drop_privs.c - a server's master and worker: the process forks, and the
 * child drops root for uid and gid 65534 (nobody), as nginx's workers do
 * after start, then makes 200 condvar signals every 10 ms for 1 s and
 * exits 0. The parent waits for it and prints
 * "drop_privs: child status S, signals N" (N: the child's signals, through
 * a pipe). Must run as root: exits 2 otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

int main(void)
{
    if (geteuid() != 0)
        return 2;
    int p[2];
    if (pipe(p) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        pthread_cond_t cv = HELD_COND_INITIALIZER;
        long n = 0;
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < 200; i++, n++)
                pthread_cond_signal(&cv);
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
        _exit(write(p[1], &n, sizeof n) == sizeof n ? 0 : 1);
    }
    close(p[1]);
    long n = 0;
    if (read(p[0], &n, sizeof n) != sizeof n)
        n = -1;
    int st = 0;
    waitpid(pid, &st, 0);
    printf("drop_privs: child status %d, signals %ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), n);
    return 0;
}
