/* spawn_ignored.c - a program that ignores SIGUSR2 (the agent's default
 * dump signal) starts children that send themselves SIGUSR2: an ignored
 * signal stays ignored across exec, so each must live on and print
 * "alive". The children run without LD_PRELOAD (an unrecorded program).
 * One child by posix_spawnp, one by fork and execve. Prints
 * "spawn_ignored: posix_spawn ok|FAILED, execve ok|FAILED"; exits 1 if
 * either failed. */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* environ without LD_PRELOAD, in out (at most n - 1 entries). */
static void env_without_preload(char **out, size_t n)
{
    size_t k = 0;
    for (char **e = environ; *e && k + 1 < n; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
            out[k++] = *e;
    out[k] = NULL;
}

static char *const child_argv[] = {"sh", "-c", "kill -USR2 $$ && echo alive", NULL};

/* The child exited 0 (it was not killed by the signal). */
static int ended_ok(pid_t pid)
{
    int st = 0;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    char *env[512];
    env_without_preload(env, sizeof env / sizeof env[0]);
    signal(SIGUSR2, SIG_IGN);
    fflush(stdout);
    pid_t pid = -1;
    int spawn_ok = posix_spawnp(&pid, "sh", NULL, NULL, child_argv, env) == 0 && ended_ok(pid);
    pid = fork();
    if (pid == 0) {
        execve("/bin/sh", child_argv, env);
        _exit(127);
    }
    int exec_ok = ended_ok(pid);
    printf("spawn_ignored: posix_spawn %s, execve %s\n", spawn_ok ? "ok" : "FAILED", exec_ok ? "ok" : "FAILED");
    return spawn_ok && exec_ok ? 0 : 1;
}
