/* drop_privs.c - a server that starts as root and switches to nobody
 * (uid and gid 65534), as memcached -u, mariadbd --user and nginx's
 * workers do. Usage:
 *   drop_privs fork|self|after [setuid|seteuid|setreuid|setresuid [closeall|crash|toggle]]
 *   fork: the process forks, and the child switches (nginx's workers);
 *   self: the process switches itself (memcached, mariadbd);
 *   after: the process switches, then forks, and the child does the
 *   rounds below (memcached -d -u: a daemon forks after its switch).
 * The switching process makes 100 condvar signals as root, calls setgid and
 * then the named call (default setuid), starts a thread, and the two
 * threads each make 200 signals every 10 ms for 2.5 s (past two rotations
 * at DIAL9_ROTATION_SECS=1). Prints
 *   "drop_privs: pid P status S uid U signals N"
 * P the process that made the rounds (the switching one, or with after
 * its child), S its exit status (0: every call succeeded), U its
 * effective uid at the end, N its signals (its ground truth; with after
 * the child's only).
 * closeall: the switching process first closes every fd above 2
 * (close_range, as varnishd does at start: the agent's too) and opens a
 * file of its own, which takes the lowest number; it makes no signal
 * before the switch, so the agent has written nothing when it comes. It
 * prints "drop_privs: own file uid U" (its file's owner: 0 unless someone
 * changed it). crash (fork only): the child ends by a SIGSEGV instead of
 * exit, after it sent its count (S is then 139). toggle (with seteuid):
 * after each round the main thread goes back to root and to nobody again,
 * as varnishd's manager does (S 6 if one failed). Must run as root: exits
 * 2 otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

#define NOBODY 65534
#define ROUNDS 250

static pthread_cond_t cv = HELD_COND_INITIALIZER;

static int toggle; /* the main thread goes back to root and to nobody each round */
static pthread_t main_thread;

static void *signaller(void *arg)
{
    long *n = arg;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 200; i++, (*n)++)
            pthread_cond_signal(&cv);
        if (pthread_equal(pthread_self(), main_thread) && toggle && (seteuid(0) != 0 || seteuid(NOBODY) != 0))
            toggle = -1;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return NULL;
}

static int switch_user(const char *call)
{
    if (setgid(NOBODY) != 0)
        return -1;
    if (!strcmp(call, "setuid"))
        return setuid(NOBODY);
    if (!strcmp(call, "seteuid"))
        return seteuid(NOBODY);
    if (!strcmp(call, "setreuid"))
        return setreuid(NOBODY, NOBODY);
    if (!strcmp(call, "setresuid"))
        return setresuid(NOBODY, NOBODY, NOBODY);
    return -1;
}

static FILE *own; /* closeall's file */

/* Up to the switch: its signals into *n; 0 when all went well. */
static int to_switch(const char *call, int closeall, long *n)
{
    if (closeall) {
        if (close_range(3, ~0u, 0) != 0 || !(own = tmpfile()))
            return 5;
    }
    for (int i = 0; i < 100 && !closeall; i++, (*n)++) /* closeall: nothing to write before the switch */
        pthread_cond_signal(&cv);
    return switch_user(call) != 0 ? 3 : 0;
}

/* After the switch: the two threads' rounds, their signals into *n. */
static int rounds(long *n)
{
    long other = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, signaller, &other) != 0)
        return 4;
    signaller(n);
    pthread_join(th, NULL);
    *n += other;
    if (toggle < 0)
        return 6;
    struct stat st;
    if (own)
        printf("drop_privs: own file uid %d\n", fstat(fileno(own), &st) == 0 ? (int)st.st_uid : -1);
    return 0;
}

/* The switching process: its signals into *n; 0 when all went well. */
static int run(const char *call, int closeall, long *n)
{
    int st = to_switch(call, closeall, n);
    return st ? st : rounds(n);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fork", *call = argc > 2 ? argv[2] : "setuid";
    int closeall = argc > 3 && !strcmp(argv[3], "closeall"), crash = argc > 3 && !strcmp(argv[3], "crash");
    toggle = argc > 3 && !strcmp(argv[3], "toggle");
    main_thread = pthread_self();
    if (geteuid() != 0)
        return 2;
    long n = 0;
    if (!strcmp(mode, "self")) {
        int st = run(call, closeall, &n);
        printf("drop_privs: pid %d status %d uid %d signals %ld\n", (int)getpid(), st, (int)geteuid(), n);
        return st;
    }
    int after = !strcmp(mode, "after"), before_fork = after ? to_switch(call, closeall, &n) : 0;
    if (before_fork != 0)
        return before_fork;
    int p[2];
    if (pipe(p) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        n = 0; /* after: the child's own signals */
        int st = after ? rounds(&n) : run(call, closeall, &n);
        long msg[2] = {n, (long)geteuid()};
        int sent = write(p[1], msg, sizeof msg) == sizeof msg;
        if (crash && sent)
            *(volatile int *)0 = 0; /* as nobody: the crash dump must still be written */
        exit(sent ? st : 1); /* exit: the agent writes all */
    }
    close(p[1]);
    long msg[2] = {-1, -1};
    if (read(p[0], msg, sizeof msg) != sizeof msg)
        msg[0] = -1;
    int st = 0;
    waitpid(pid, &st, 0);
    printf("drop_privs: pid %d status %d uid %ld signals %ld\n", (int)pid,
           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), msg[1], msg[0]);
    return 0;
}
