/* fork_sigaction.c - a thread changes SIGPIPE's action in a loop (as
 * libcurl does around each transfer) while the main thread forks N
 * children; each child sets SIGPIPE back to SIG_DFL, as a fork+exec
 * helper does, and _exits 0. Every child must end within 5 s: one that
 * inherits a lock the looping thread held at the fork would wait forever.
 * Prints "fork_sigaction: N children, H hung, F failed"; exits 1 if any
 * hung or failed.
 *   fork_sigaction N */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_wait.h"
#include "sigpipe_flipper.h"

static atomic_int stop;

int main(int argc, char **argv)
{
    int n = argc == 2 ? atoi(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: %s N\n", argv[0]);
        return 2;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, sigpipe_flipper, &stop) != 0)
        return 2;
    int hung = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(signal(SIGPIPE, SIG_DFL) == SIG_ERR ? 1 : 0);
        int st = pid < 0 ? 0 : child_wait(pid, 5000);
        hung += st == -1;
        bad += pid < 0 || (st != -1 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0));
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    printf("fork_sigaction: %d children, %d hung, %d failed\n", n, hung, bad);
    return hung || bad ? 1 : 0;
}
