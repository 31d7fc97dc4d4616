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
 *                            (the handler prints "usr2 ran"); then abort().
 * Faults a handler recovers from, as a JVM's null checks or V8's
 * WebAssembly bounds checks do (first thing in main, before the threads):
 *   crash_after recover T N  3 pages mapped PROT_NONE, each touched once:
 *                            the SIGSEGV handler makes the page writable
 *                            and returns (prints "recovered 3";
 *                            "handler mask ok" when SIGSEGV and the thread's
 *                            own SIGUSR2, and not SIGUSR1, were blocked in
 *                            it; "mask after ok" when the thread's mask is
 *                            its own again after). The thread has an 8 KiB
 *                            alternate stack and the handler is set without
 *                            SA_ONSTACK: it must run on the thread's stack
 *                            (prints "handler stack ok"), where it uses
 *                            16 KiB; then one
 *                            nanosleep of 1234567 ns ("slept 0"), then as
 *                            handler (its handler takes the null write).
 *   crash_after recovered T N as recover, then returns 0 from main.
 *   crash_after jump T N     after the wakes, a null write whose handler
 *                            siglongjmps back (prints "jumped"); then
 *                            exit(0) from 64 KiB deeper in the stack than
 *                            the write (below where the handler ran).
 *   crash_after exitcall T N after the wakes, a null write whose handler
 *                            calls exit(7) (atexit handlers run).
 *   crash_after sigset T N   as handler, the handler set with System V's
 *                            sigset() (glibc's bypasses an interposed
 *                            sigaction; prints "sigset: old action wrong"
 *                            unless it returns SIG_DFL).
 *   crash_after overflow T N as Rust's runtime: a thread with a 64 KiB stack
 *                            and an 8 KiB alternate stack, whose SIGSEGV
 *                            handler (SA_ONSTACK) prints "overflowed its
 *                            stack" and aborts, recurses until it faults. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "held_cond.h"

static long per_thread;

static void *worker(void *arg)
{
    pthread_cond_t cv = HELD_COND_INITIALIZER;
    for (long i = 0; i < per_thread; i++)
        pthread_cond_signal(&cv);
    return NULL;
}

/* SIGSEGV's action: fn, SA_SIGINFO | flags, nothing else blocked. */
static void on_segv(void (*fn)(int, siginfo_t *, void *), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
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

/* recover: the pages a handler makes writable. */
static uint8_t *guarded;
static size_t page_size;
static volatile int recovered, mask_ok = 1, stack_ok = 1;

/* 16 KiB of the handler's stack, more than the alternate stack holds. */
static __attribute__((noinline)) void use_stack(void)
{
    volatile char pad[16 << 10];
    pad[0] = 1;
    pad[sizeof(pad) - 1] = 1;
}

static void recover_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    uint8_t *a = si->si_addr;
    if (guarded && a >= guarded && a < guarded + 3 * page_size) {
        uint8_t *page = guarded + (size_t)(a - guarded) / page_size * page_size;
        sigset_t now; /* as the kernel sets it: the thread's mask (SIGUSR2) plus the signal */
        if (pthread_sigmask(SIG_SETMASK, NULL, &now) != 0 || sigismember(&now, SIGSEGV) != 1 ||
            sigismember(&now, SIGUSR2) != 1 || sigismember(&now, SIGUSR1) != 0)
            mask_ok = 0;
        stack_t ss; /* the kernel runs a handler set without SA_ONSTACK on the thread's stack */
        if (sigaltstack(NULL, &ss) != 0 || (ss.ss_flags & SS_ONSTACK))
            stack_ok = 0;
        else
            use_stack();
        if (mprotect(page, page_size, PROT_READ | PROT_WRITE) == 0) {
            recovered++;
            return; /* the write runs again, and succeeds */
        }
    }
    handler(sig);
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

static void recover_faults(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    guarded = mmap(NULL, 3 * page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guarded == MAP_FAILED)
        _exit(3);
    small_altstack();
    on_segv(recover_handler, 0);
    sigset_t usr2, after;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    for (int i = 0; i < 3; i++)
        ((volatile uint8_t *)guarded)[(size_t)i * page_size + 8] = 1;
    /* Back from each handler, the thread's own mask again: SIGUSR2 alone. */
    int after_ok = pthread_sigmask(SIG_SETMASK, NULL, &after) == 0 && sigismember(&after, SIGUSR2) == 1 &&
                   sigismember(&after, SIGSEGV) == 0 && sigismember(&after, SIGUSR1) == 0;
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    fprintf(stderr, "recovered %d\nhandler mask %s\nhandler stack %s\nmask after %s\n", recovered,
            mask_ok ? "ok" : "wrong", stack_ok ? "ok" : "wrong", after_ok ? "ok" : "wrong");
    struct timespec ts = {0, 1234567};
    fprintf(stderr, "slept %d\n", nanosleep(&ts, NULL));
}

static sigjmp_buf jump_back;

static void jump_handler(int sig)
{
    (void)sig;
    siglongjmp(jump_back, 1);
}

/* exit(0) from a frame 64 KiB below the caller's. */
static __attribute__((noinline)) void exit_deep(void)
{
    volatile char pad[64 << 10];
    pad[0] = 0;
    pad[sizeof(pad) - 1] = 0;
    exit(pad[0] + pad[sizeof(pad) - 1]);
}

static void exit_call_handler(int sig)
{
    (void)sig;
    exit(7);
}

static void usr2_handler(int sig)
{
    static const char msg[] = "usr2 ran\n";
    (void)sig;
    write(2, msg, sizeof(msg) - 1);
}

static void overflow_handler(int sig, siginfo_t *si, void *uc)
{
    static const char msg[] = "overflowed its stack\n";
    (void)sig, (void)si, (void)uc;
    write(2, msg, sizeof(msg) - 1);
    abort();
}

static unsigned long deep(unsigned long n)
{
    volatile unsigned char pad[256];
    pad[n % sizeof(pad)] = (unsigned char)n;
    if (n > (1ul << 40)) /* never: the stack ends first */
        return n;
    return deep(n + 1) + pad[(n + 1) % sizeof(pad)];
}

static void *overflow_thread(void *arg)
{
    (void)arg;
    small_altstack();
    on_segv(overflow_handler, SA_ONSTACK);
    return (void *)deep(0);
}

static void overflow(void)
{
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    if (pthread_create(&t, &a, overflow_thread, NULL) == 0)
        pthread_join(t, NULL);
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
        on_segv(exit_handler, 0);
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s segv|drained|abort|handler|exit|altstack|vfork|recover|recovered|jump|exitcall|sigset|overflow "
                        "THREADS N\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "recover") || !strcmp(argv[1], "recovered"))
        recover_faults();
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
    if (!strcmp(argv[1], "recovered"))
        return 0;
    if (!strcmp(argv[1], "overflow"))
        overflow();
    if (!strcmp(argv[1], "handler"))
        signal(SIGSEGV, handler);
    if (!strcmp(argv[1], "exitcall"))
        signal(SIGSEGV, exit_call_handler);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if (!strcmp(argv[1], "sigset") && sigset(SIGSEGV, handler) != SIG_DFL)
        fprintf(stderr, "sigset: old action wrong\n");
#pragma GCC diagnostic pop
    if (!strcmp(argv[1], "jump")) {
        signal(SIGSEGV, jump_handler);
        if (sigsetjmp(jump_back, 1)) {
            fprintf(stderr, "jumped\n");
            exit_deep();
        }
    }
    if (!strcmp(argv[1], "drained"))
        usleep(300000);
    *(volatile int *)(uintptr_t)0 = 1;
    return 0;
}
