/* crash_after.c - T threads make N condvar signals each (wake events),
 * the total is printed to stderr ("wakes T*N", unbuffered), then the
 * process crashes: 
 *   crash_after segv T N     null write (SIGSEGV)
 *   crash_after abort T N    abort() (SIGABRT)
 *   crash_after drained T N  as segv, 300 ms after the wakes: time for the
 *                            writer to drain what a half-full ring kicked.
 *   crash_after handler T N  installs its own SIGSEGV handler (prints
 *                            "handler ran", restores the default), then
 *                            the null write.
 *   crash_after exit T N     installs its own SIGSEGV handler first thing
 *                            in main (SA_SIGINFO; prints "handler exit
 *                            SIGNO" and _exits 42), then as segv.
 *   crash_after altstack T N an 8 KiB alternate signal stack with a guard
 *                            page below, as Rust gives each thread, then
 *                            abort().
 *   crash_after vfork T N    a SIGUSR2 handler; a vfork child resets it to
 *                            SIG_DFL (as Python's subprocess does) and
 *                            _exits; another vfork child aborts (prints
 *                            "vfork child signal 6"); SIGUSR2 raised
 *                            (the handler prints "usr2 ran"); then abort(). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long per_thread;

static void *worker(void *arg)
{
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    for (long i = 0; i < per_thread; i++)
        pthread_cond_signal(&cv);
    return NULL;
}

static void handler(int sig)
{
    static const char msg[] = "handler ran\n";
    write(2, msg, sizeof(msg) - 1);
    signal(sig, SIG_DFL); /* returning re-faults: the default action ends the process */
}

static void exit_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char msg[] = "handler exit 00\n";
    msg[13] = (char)('0' + sig / 10);
    msg[14] = (char)('0' + sig % 10);
    write(2, msg, sizeof(msg) - 1);
    _exit(si->si_signo == sig ? 42 : 43);
}

static void usr2_handler(int sig)
{
    static const char msg[] = "usr2 ran\n";
    (void)sig;
    write(2, msg, sizeof(msg) - 1);
}

static void small_altstack(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 8192;
    uint8_t *p = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p, page, PROT_NONE) != 0)
        _exit(3);
    stack_t ss = {.ss_sp = p + page, .ss_size = size};
    if (sigaltstack(&ss, NULL) != 0)
        _exit(3);
}

static void vfork_children(void)
{
    signal(SIGUSR2, usr2_handler);
    pid_t pid = vfork();
    if (pid == 0) {
        struct sigaction sa;
        int ok = sigaction(SIGUSR2, NULL, &sa) == 0 && sa.sa_handler == usr2_handler; /* what was set */
        signal(SIGUSR2, SIG_DFL);
        ok = ok && sigaction(SIGUSR2, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "vfork child saw the wrong SIGUSR2 action\n");
    pid = vfork();
    if (pid == 0)
        abort();
    if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
        fprintf(stderr, "vfork child signal %d\n", WTERMSIG(st));
    raise(SIGUSR2);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "exit")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = exit_handler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s segv|drained|abort|handler|exit|altstack|vfork THREADS N\n", argv[0]);
        return 2;
    }
    int t = atoi(argv[2]);
    per_thread = atol(argv[3]);
    pthread_t th[64];
    if (t < 1 || t > 64)
        return 2;
    for (int i = 0; i < t; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    fprintf(stderr, "wakes %ld\n", t * per_thread);
    if (!strcmp(argv[1], "altstack"))
        small_altstack();
    if (!strcmp(argv[1], "vfork"))
        vfork_children();
    if (!strcmp(argv[1], "abort") || !strcmp(argv[1], "altstack") || !strcmp(argv[1], "vfork"))
        abort();
    if (!strcmp(argv[1], "handler"))
        signal(SIGSEGV, handler);
    if (!strcmp(argv[1], "drained"))
        usleep(300000);
    *(volatile int *)(uintptr_t)0 = 1;
    return 0;
}
