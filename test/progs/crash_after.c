/* crash_after.c - T threads make N condvar signals each (wake events),
 * the total is printed to stderr ("wakes T*N", unbuffered), then the
 * process crashes: 
 *   crash_after segv T N     null write (SIGSEGV)
 *   crash_after abort T N    abort() (SIGABRT)
 *   crash_after handler T N  installs its own SIGSEGV handler (prints
 *                            "handler ran", restores the default), then
 *                            the null write.
 *   crash_after exit T N     installs its own SIGSEGV handler first thing
 *                            in main (SA_SIGINFO; prints "handler exit
 *                            SIGNO" and _exits 42), then as segv. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        fprintf(stderr, "usage: %s segv|abort|handler|exit THREADS N\n", argv[0]);
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
    if (!strcmp(argv[1], "abort"))
        abort();
    if (!strcmp(argv[1], "handler"))
        signal(SIGSEGV, handler);
    *(volatile int *)(uintptr_t)0 = 1;
    return 0;
}
