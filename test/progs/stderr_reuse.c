/* stderr_reuse.c - a daemon's ways with stderr, then SIGUSR2 (the agent's
 * default dump signal: in continuous mode it logs "dial9: dump ..." on
 * stderr unless DIAL9_QUIET=1), sent with kill(2):
 *   stderr_reuse closed FILE    close(2); FILE opened (it gets fd 2, the
 *                               lowest free); "data" written to it
 *   stderr_reuse dup2 FILE      FILE opened and dup2'd onto fd 2 (stderr
 *                               redirected on purpose)
 * In both the process waits 500 ms after the signal, for the agent's
 * writer, and exits 0. FILE must then hold only "data\n" (closed), or the
 * lines written to stderr (dup2). Exits 1 when open or dup2 fails. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_usr2(int sig) { (void)sig; }

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    signal(SIGUSR2, on_usr2); /* without the agent, the default would end the process */
    if (!strcmp(argv[1], "closed")) {
        close(2);
        if (open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600) != 2)
            return 1;
        kill(getpid(), SIGUSR2);
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        return write(2, "data\n", 5) == 5 ? 0 : 1;
    }
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) != 2)
        return 1;
    close(fd);
    kill(getpid(), SIGUSR2);
    nanosleep(&(struct timespec){0, 500000000}, NULL);
    return 0;
}
