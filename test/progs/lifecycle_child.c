/* lifecycle_child.c - process lifecycle under the agent. Each mode parks in
 * nanosleep a known number of times and prints what it did:
 *   exec      sleeps, then execs itself as "exec-after"; prints
 *             "before pid=P sleeps=N" and "after pid=P sleeps=N"
 *   vfork     sleeps; a vfork child sleeps once, dup2s, closes and execs
 *             /bin/true; sleeps again; "parent pid=P sleeps=N child=C"
 *   spawn     the same through posix_spawn with file actions
 *   closeall  sleeps, closes every fd >= 3 (a close loop, then
 *             close_range), each time opening FILE (argv[2]) which takes a
 *             freed number and writing lines to it while sleeping on;
 *             "closeall pid=P sleeps=N lines=L fd=F,G"
 *   closestorm  a thread naps in a loop while the main thread, ROUNDS
 *             (argv[3]) times, closes every fd >= 3 (close loop,
 *             close_range, and with "raw" in argv[4] also through
 *             syscall() and by a syscall instruction of its own),
 *             opens FILE, writes a line and naps once; "closestorm pid=P
 *             sleeps=N lines=L napper=T:M" (T the napper's tid, M its naps)
 *   secure    prints "agent=yes|no recording=R" (dial9_is_recording)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLEEPS 20

extern char **environ;
static int sleeps;

static void nap(long ns)
{
    struct timespec d = {0, ns};
    nanosleep(&d, NULL);
    sleeps++;
}

static void naps(int n)
{
    for (int i = 0; i < n; i++)
        nap(1000000);
}

static int do_exec(const char *self)
{
    naps(SLEEPS);
    printf("before pid=%d sleeps=%d\n", getpid(), sleeps);
    fflush(stdout);
    char *argv[] = {(char *)self, "exec-after", NULL};
    execv("/proc/self/exe", argv);
    perror("execv");
    return 1;
}

static int do_vfork(void)
{
    naps(SLEEPS);
    pid_t c = vfork();
    if (c == 0) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL); /* would be the parent's event if recorded */
        dup2(1, 9);
        close(9);
        char *argv[] = {"true", NULL};
        execve("/bin/true", argv, environ);
        _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    naps(SLEEPS);
    printf("parent pid=%d sleeps=%d child=%d status=%d\n", getpid(), sleeps, c, st);
    return 0;
}

static int do_spawn(void)
{
    naps(SLEEPS);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 1, 9);
    posix_spawn_file_actions_addclose(&fa, 9);
    char *argv[] = {"true", NULL};
    pid_t c;
    int rc = posix_spawn(&c, "/bin/true", &fa, NULL, argv, environ);
    int st = 0;
    if (rc == 0)
        waitpid(c, &st, 0);
    naps(SLEEPS);
    printf("parent pid=%d sleeps=%d child=%d status=%d\n", getpid(), sleeps, rc ? -1 : c, rc ? rc : st);
    return 0;
}

/* Writes lines to a user file while sleeping: the writer cycles meanwhile. */
static int user_file(const char *path, int *lines)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    for (int i = 0; i < 10; i++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "user line %d\n", (*lines)++);
        if (write(fd, line, (size_t)n) != n)
            exit(1);
        nap(20000000); /* 20 ms: DIAL9_FLUSH_MS is shorter in the test */
    }
    return fd;
}

static int do_closeall(const char *path)
{
    int lines = 0;
    naps(SLEEPS);
    nap(200000000); /* the writer has a segment open by now */
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int a = user_file(path, &lines);
    syscall(SYS_close_range, 3u, ~0u, 0); /* glibc's close_range is interposed too */
    close_range(3, ~0u, 0);
    int b = user_file(path, &lines);
    close(b);
    printf("closeall pid=%d sleeps=%d lines=%d fd=%d,%d\n", getpid(), sleeps, lines, a, b);
    return 0;
}

static atomic_int storm_over;
static int napper_naps, napper_tid;

static void *napper(void *arg)
{
    (void)arg;
    napper_tid = (int)syscall(SYS_gettid);
    while (!atomic_load(&storm_over)) {
        struct timespec d = {0, 50000};
        nanosleep(&d, NULL);
        napper_naps++;
    }
    return NULL;
}

/* The agent's fds are closed under its writer, which runs often (the test
 * sets DIAL9_FLUSH_MS=1) while the napper fills its ring. */
/* close_range(first, last, 0) by a syscall instruction: no libc function
 * the agent could interpose. */
static void raw_close_range(unsigned first, unsigned last)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_close_range), "D"((long)first), "S"((long)last), "d"(0L)
                     : "rcx", "r11", "memory");
    (void)ret;
}

static int do_closestorm(const char *path, int rounds, int raw)
{
    int lines = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, napper, NULL))
        return 1;
    for (int r = 0; r < rounds; r++) {
        switch (r % (raw ? 4 : 2)) {
        case 0:
            for (int fd = 3; fd < 64; fd++)
                close(fd);
            break;
        case 1:
            close_range(3, ~0u, 0);
            break;
        case 2:
            syscall(SYS_close_range, 3u, ~0u, 0); /* through libc's syscall(): seen */
            break;
        default:
            raw_close_range(3u, ~0u); /* a syscall instruction of its own: unseen */
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        char line[64];
        int n = snprintf(line, sizeof(line), "user line %d\n", lines++);
        if (fd < 0 || write(fd, line, (size_t)n) != n)
            return 1;
        nap(200000);
    }
    atomic_store(&storm_over, 1);
    pthread_join(t, NULL);
    printf("closestorm pid=%d sleeps=%d lines=%d napper=%d:%d\n", getpid(), sleeps, lines, napper_tid, napper_naps);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "exec"))
        return do_exec(argv[0]);
    if (!strcmp(mode, "exec-after")) {
        naps(SLEEPS / 2);
        printf("after pid=%d sleeps=%d\n", getpid(), sleeps);
        return 0;
    }
    if (!strcmp(mode, "vfork"))
        return do_vfork();
    if (!strcmp(mode, "spawn"))
        return do_spawn();
    if (!strcmp(mode, "closeall") && argc > 2)
        return do_closeall(argv[2]);
    if (!strcmp(mode, "closestorm") && argc > 3)
        return do_closestorm(argv[2], atoi(argv[3]), argc > 4 && !strcmp(argv[4], "raw"));
    if (!strcmp(mode, "secure")) {
        int (*rec)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dial9_is_recording");
        naps(SLEEPS);
        printf("agent=%s recording=%d\n", rec ? "yes" : "no", rec ? rec() : 0);
        return 0;
    }
    fprintf(stderr, "usage: lifecycle_child exec|vfork|spawn|closeall FILE|closestorm FILE ROUNDS [raw]|secure\n");
    return 2;
}
