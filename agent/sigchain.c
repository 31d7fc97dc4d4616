/* sigchain.c - sigaction/signal interposers and the chained actions
 * (sigchain.h).
 *
 * One lock guards every signal's state. It is only held with every
 * signal blocked on the holding thread and for a few instructions plus at
 * most one rt_sigaction, so a handler taking it (dump, crash) can only wait
 * for another thread, never for the thread it interrupted. No allocation. */
#include "sigchain.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "lifecycle.h"
#include "real.h"

struct chain {
    int owned;             /* the kernel's handler is the agent's */
    int blocks_all;        /* the agent's handler runs with every signal blocked (its sa_mask) */
    struct sigaction prog; /* the program's action: what we chain to */
    struct sigaction ours; /* the agent's action as installed */
};
static struct chain chains[NSIG];
/* A futex lock (Drepper, "Futexes Are Tricky", mutex 2): 0 free, 1 held,
 * 2 held and maybe waited for. A waiter sleeps in the kernel instead of
 * spinning: a SCHED_FIFO thread spinning on the lock while a thread of
 * lower priority held it, preempted on the same CPU, kept the holder from
 * running until the kernel's real-time throttling stopped the spinner
 * (950 ms by default). Both paths keep errno. */
static _Atomic uint32_t lk;

/* The lock alone: the caller has every signal blocked. */
static void lock_blocked(void)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong_explicit(&lk, &c, 1, memory_order_acquire, memory_order_relaxed))
        return;
    int err = errno;
    if (c != 2)
        c = atomic_exchange_explicit(&lk, 2, memory_order_acquire);
    while (c != 0) {
        if (d9_futex(&lk, FUTEX_WAIT_PRIVATE, 2, NULL) < 0 && errno == ENOSYS)
            syscall(SYS_sched_yield); /* before the real syscall() is known */
        c = atomic_exchange_explicit(&lk, 2, memory_order_acquire);
    }
    errno = err;
}

static void unlock_blocked(void)
{
    if (atomic_exchange_explicit(&lk, 0, memory_order_release) == 2) {
        int err = errno;
        d9_futex(&lk, FUTEX_WAKE_PRIVATE, 1, NULL);
        errno = err;
    }
}

static void lock(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    lock_blocked();
}

static void unlock(const sigset_t *old)
{
    unlock_blocked();
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Around fork: the lock is taken first, so no other thread holds it (in
 * the child, that thread would not exist to release it) or is half-way
 * through a chain. */
static sigset_t fork_mask;
void d9_sigchain_fork_prepare(void) { lock(&fork_mask); }
void d9_sigchain_fork_done(void) { unlock(&fork_mask); }

static int is_fn(const struct sigaction *sa)
{
    return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

/* The kernel's action for sig set to act (this process's table: a vfork
 * child's own). -1 with ENOSYS before the real sigaction is known. */
static int kernel_set(int sig, const struct sigaction *act)
{
    int (*real)(int, const struct sigaction *, struct sigaction *) = D9_REAL(sigaction);
    return real ? real(sig, act, NULL) : (errno = ENOSYS, -1);
}

/* The flags of the kernel's action that follow the program's handler:
 * SA_RESTART (a call the signal interrupts restarts as without the agent)
 * and SA_ONSTACK (the kernel runs our handler, and so the program's
 * chained from it, on the stack it would give the program's: a handler
 * set without SA_ONSTACK never runs on a small alternate stack). Both are
 * on while the program has no handler: the agent's handlers restart what
 * they interrupt, and run on an alternate stack, where a stack overflow
 * can still be dumped. */
#define FOLLOWED (SA_RESTART | SA_ONSTACK)

/* Locked: the kernel's action made to follow the program's. */
static int sync_kernel(int sig, struct chain *c, int force)
{
    int want = is_fn(&c->prog) ? c->prog.sa_flags & FOLLOWED : FOLLOWED;
    if (!force && (c->ours.sa_flags & FOLLOWED) == want)
        return 0;
    c->ours.sa_flags = (c->ours.sa_flags & ~FOLLOWED) | want;
    return kernel_set(sig, &c->ours);
}

int d9_sigchain_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags, const sigset_t *mask,
                        int skip_ignored)
{
    int (*real)(int, const struct sigaction *, struct sigaction *) = D9_REAL(sigaction);
    if (!real || sig <= 0 || sig >= NSIG) {
        errno = real ? EINVAL : ENOSYS;
        return -1;
    }
    struct chain *c = &chains[sig];
    sigset_t old;
    int rc = 1, err = 0;
    lock(&old);
    if (!c->owned && real(sig, NULL, &c->prog) < 0) {
        rc = -1;
        err = errno;
    } else if (!c->owned && skip_ignored && c->prog.sa_handler == SIG_IGN) {
        rc = 0;
    } else {
        memset(&c->ours, 0, sizeof(c->ours));
        c->ours.sa_sigaction = fn;
        c->ours.sa_mask = *mask;
        c->ours.sa_flags = SA_SIGINFO | flags;
        sigset_t all; /* as lock() blocks them: glibc's full set leaves out its own two */
        sigfillset(&all);
        c->blocks_all = 1;
        for (int s = 1; s < NSIG; s++)
            if (sigismember(&all, s) == 1 && sigismember(mask, s) != 1)
                c->blocks_all = 0;
        if (sync_kernel(sig, c, 1) < 0) {
            rc = -1;
            err = errno;
        } else {
            c->owned = 1;
        }
    }
    unlock(&old);
    errno = err;
    return rc;
}

void d9_sigchain_get(int sig, struct sigaction *out)
{
    sigset_t old;
    lock(&old);
    *out = chains[sig].prog;
    unlock(&old);
}

int d9_sigchain_call(int sig, siginfo_t *si, void *uc)
{
    struct chain *c = &chains[sig];
    struct sigaction sa;
    sigset_t old;
    int all_blocked = c->blocks_all; /* set before the handler was installed */
    if (all_blocked)
        lock_blocked();
    else
        lock(&old);
    sa = c->prog;
    if (is_fn(&sa) && (sa.sa_flags & SA_RESETHAND)) { /* the kernel resets on delivery */
        if (!d9_in_vfork) {
            c->prog.sa_handler = SIG_DFL;
        } else { /* in a vfork child's own table only */
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            kernel_set(sig, &dfl);
        }
    }
    if (all_blocked)
        unlock_blocked();
    else
        unlock(&old); /* old: the mask this handler runs with (sig blocked) */
    if (!is_fn(&sa))
        return 0;
    /* The kernel would run it with the interrupted thread's mask plus its
     * sa_mask: the agent's own (every signal, for a crash) is not it. The
     * kernel fills the first 8 bytes of uc_sigmask, all a mask call reads.
     * Without uc, the mask this handler runs with. */
    sigset_t during;
    if (uc)
        during = ((const ucontext_t *)uc)->uc_sigmask;
    else if (all_blocked)
        sigfillset(&during);
    else
        during = old;
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&sa.sa_mask, s) == 1)
            sigaddset(&during, s);
    if (sa.sa_flags & SA_NODEFER)
        sigdelset(&during, sig);
    else
        sigaddset(&during, sig);
    pthread_sigmask(SIG_SETMASK, &during, NULL);
    if (sa.sa_flags & SA_SIGINFO)
        sa.sa_sigaction(sig, si, uc);
    else
        sa.sa_handler(sig);
    /* Left at `during`: the caller returns to the kernel, whose sigreturn
     * sets the mask uc holds, as after the program's handler alone. */
    return 1;
}

void d9_sigchain_release(int sig)
{
    struct chain *c = &chains[sig];
    sigset_t old;
    lock(&old);
    if (c->owned) {
        kernel_set(sig, &c->prog);
        if (!d9_in_vfork) /* a vfork child's kernel table is its own; chains[] is the parent's */
            c->owned = 0;
    }
    unlock(&old);
}

void d9_sigchain_exec(int back)
{
    sigset_t old;
    lock(&old);
    for (int sig = 1; sig < NSIG; sig++) {
        struct chain *c = &chains[sig];
        if (c->owned && c->prog.sa_handler == SIG_IGN)
            kernel_set(sig, back ? &c->ours : &c->prog);
    }
    unlock(&old);
}

int d9_sigstack_below(uintptr_t low, uintptr_t high, uintptr_t reach)
{
    if (low >= high || high - low > reach)
        return 0;
    int err = errno;
    stack_t ss;
    int same = 1;
    if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE)) {
        uintptr_t lo = (uintptr_t)ss.ss_sp;
        same = (low - lo < ss.ss_size) == (high - lo < ss.ss_size);
    }
    errno = err;
    return same;
}

/* ---- Interposers --------------------------------------------------------- */

D9_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    D9_REAL_OR_FAIL(real, sigaction, -1);
    if (sig <= 0 || sig >= NSIG)
        return real(sig, act, oldact);
    /* Copied outside the lock: a bad pointer faults here, not while we
     * hold it with every signal blocked. */
    struct sigaction a, o;
    if (act)
        a = *act;
    sigset_t old;
    int rc = 0, err = errno;
    lock(&old);
    struct chain *c = &chains[sig];
    if (!c->owned) {
        rc = real(sig, act ? &a : NULL, oldact ? &o : NULL);
        if (rc < 0)
            err = errno;
    } else if (d9_in_vfork) {
        /* A vfork child shares chains[] with its parent but has a kernel
         * table of its own (Python's subprocess resets every handler
         * there): its actions go to that table, the parent's chain stays.
         * While the table still holds ours, the program's is reported. */
        rc = real(sig, act ? &a : NULL, &o);
        if (rc < 0)
            err = errno;
        else if (o.sa_sigaction == c->ours.sa_sigaction)
            o = c->prog;
    } else {
        o = c->prog;
        if (act) {
            sigdelset(&a.sa_mask, SIGKILL); /* as the kernel stores it */
            sigdelset(&a.sa_mask, SIGSTOP);
            c->prog = a;
            sync_kernel(sig, c, 0);
        }
    }
    unlock(&old);
    if (rc == 0 && oldact)
        *oldact = o;
    errno = err;
    return rc;
}

/* Signals siginterrupt() made interrupting: signal() then sets no
 * SA_RESTART for them, as glibc's does (its own set is not ours to read). */
static _Atomic uint64_t interrupting;
_Static_assert(NSIG - 1 <= 64, "one bit a signal");

static uint64_t bit(int sig) { return (uint64_t)1 << (sig - 1); }

/* glibc's signal()/bsd_signal()/ssignal(): BSD semantics. */
static sighandler_t set_handler(int sig, sighandler_t h, int flags, int self_blocked)
{
    struct sigaction sa, old;
    if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    if (self_blocked)
        sigaddset(&sa.sa_mask, sig);
    sa.sa_flags = flags;
    if (sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

static sighandler_t set_bsd(int sig, sighandler_t h)
{
    int restart = sig > 0 && sig < NSIG && (atomic_load(&interrupting) & bit(sig)) ? 0 : SA_RESTART;
    return set_handler(sig, h, restart, 1);
}

D9_EXPORT sighandler_t signal(int sig, sighandler_t h) { return set_bsd(sig, h); }
D9_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h) { return set_bsd(sig, h); }
D9_EXPORT sighandler_t ssignal(int sig, sighandler_t h) { return set_bsd(sig, h); }

/* System V semantics: reset on delivery, not blocked while it runs. */
D9_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

D9_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

/* The System V calls below: glibc's call its internal sigaction, past the
 * one above, and would replace the agent's handler of a signal it holds.
 * Rebuilt on the interposed sigaction as glibc 2.36 writes them
 * (sysdeps/posix/sigset.c, sigignore.c, siginterrupt.c). */

D9_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    sigset_t one, old;
    struct sigaction sa, prev;
    if (sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &one, &old) < 0)
            return SIG_ERR;
        if (sigismember(&old, sig))
            return SIG_HOLD;
        return sigaction(sig, NULL, &prev) < 0 ? SIG_ERR : prev.sa_handler;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = disp;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &prev) < 0 || sigprocmask(SIG_UNBLOCK, &one, &old) < 0)
        return SIG_ERR;
    return sigismember(&old, sig) ? SIG_HOLD : prev.sa_handler;
}

D9_EXPORT int sigignore(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

D9_EXPORT int siginterrupt(int sig, int interrupt)
{
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) < 0)
        return -1;
    if (interrupt) {
        atomic_fetch_or(&interrupting, bit(sig));
        sa.sa_flags &= ~SA_RESTART;
    } else {
        atomic_fetch_and(&interrupting, ~bit(sig));
        sa.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &sa, NULL);
}
