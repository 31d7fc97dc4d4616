/* fd_numbers.c - the numbers a program's own opens get.
 *   fd_numbers REPORT THREADS
 * Moves REPORT's fd to 40 (out of the way, also under a limit of 64),
 * starts THREADS threads (0-64) that each sleep 1 ms ten times, as the main
 * thread does (recorded parks: each thread registers, with its schedstat
 * fd), and stay until main has made its opens; main, once they slept, makes the agent write its trace when it is loaded
 * (dial9_flush, looked up with dlsym: its directories and segment are open
 * from there), counts which of 0-2 are free (fcntl F_GETFD fails with
 * EBADF), then does what a daemon does to set up its standard fds:
 * open("/dev/null", O_RDWR), two dup()s of it, and one more open. Writes
 * "free012 F fds A B C D threads N" to REPORT (N: THREADS + 1). Without
 * the agent, started with 0-2 closed: free012 3 fds 0 1 2 3. Exits 0, 1
 * when a call fails. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t slept, opened;

static void naps(void)
{
    for (int i = 0; i < 10; i++)
        usleep(1000);
}

/* Alive, with its fds, until main has made its opens. */
static void *sleeper(void *arg)
{
    (void)arg;
    naps();
    pthread_barrier_wait(&slept);
    pthread_barrier_wait(&opened);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int r = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rep = r < 0 ? -1 : fcntl(r, F_DUPFD_CLOEXEC, 40);
    if (rep < 0)
        return 1;
    close(r);
    int n = atoi(argv[2]);
    pthread_t t[64];
    if (n < 0 || n > 64)
        return 2;
    pthread_barrier_init(&slept, NULL, (unsigned)n + 1);
    pthread_barrier_init(&opened, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, sleeper, NULL) != 0)
            return 1;
    naps();
    pthread_barrier_wait(&slept);
    int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dial9_flush");
    if (flush && flush() != 0)
        return 1;
    int free012 = 0;
    for (int fd = 0; fd < 3; fd++)
        free012 += fcntl(fd, F_GETFD) < 0 && errno == EBADF;
    int a = open("/dev/null", O_RDWR);
    int b = dup(a), c = dup(a);
    int d = open("/dev/null", O_RDONLY);
    pthread_barrier_wait(&opened);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    dprintf(rep, "free012 %d fds %d %d %d %d threads %d\n", free012, a, b, c, d, n + 1);
    return a < 0 || b < 0 || c < 0 || d < 0;
}
