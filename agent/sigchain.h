/* sigchain.h - keeps the agent's signal handlers installed when the program
 * installs its own later.
 *
 * For each signal the agent handles (the dump signal, the crash signals),
 * sigaction()/signal() called by the program do not touch the kernel's
 * handler while the agent owns the signal: the program's action is stored
 * here as the action the agent chains to, and the old action the program
 * gets back is what it would have seen without the agent (what was there
 * before the agent, or what it set itself since). One place for the
 * "previous action": dump.c and crash.c read it from here.
 *
 * sigset(), sigignore() and siginterrupt() are rebuilt on the interposed
 * sigaction (glibc's call its internal one), and siginterrupt() is
 * reflected in signal()'s SA_RESTART as in glibc's.
 * Not covered (the program's action then replaces the agent's as before):
 * sigaction calls glibc makes internally (abort() resetting SIGABRT after
 * a handler returned). The returned old action never carries glibc's
 * SA_RESTORER/sa_restorer of an action the program set while we owned the
 * signal (it is set again by glibc whenever the action is installed).
 * A bad act pointer faults in the program (the kernel would say EFAULT).
 * The dump signal never applies SIG_DFL (it would kill): it only dumps,
 * whether SIG_DFL was there before the agent or set by the program later.
 * Crash signals (crash.c): a fault the kernel raised runs the program's
 * handler through d9_sigchain_call, and the agent keeps the signal; a fatal
 * one is given back (release) and re-raised, so the kernel itself applies
 * the program's action with its exact flags.
 * A vfork child shares chains[] with its parent but has a kernel table of
 * its own: there (d9_in_vfork) sigaction, release and SA_RESETHAND act on
 * the child's table and leave chains[] to the parent. */
#ifndef DIAL9_SIGCHAIN_H
#define DIAL9_SIGCHAIN_H

#include <signal.h>
#include <stdint.h>

/* Installs fn (SA_SIGINFO | flags, mask) for sig, keeping the current
 * action as the program's. When the current action is SIG_IGN and
 * skip_ignored, nothing is installed. SA_RESTART and SA_ONSTACK are taken
 * from the program's action while it is a handler, and follow its changes
 * (both on while it is SIG_DFL or SIG_IGN).
 * Returns 1 installed, 0 skipped, -1 error (errno). */
int d9_sigchain_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags, const sigset_t *mask,
                        int skip_ignored);

/* The program's action for sig (async-signal-safe). */
void d9_sigchain_get(int sig, struct sigaction *out);

/* Runs the program's handler for sig from the agent's handler, with its
 * sa_flags semantics: SA_SIGINFO (si, uc passed on) or plain, the mask of
 * the interrupted thread (uc's; the current one without uc) plus sa_mask
 * meanwhile, sig blocked unless SA_NODEFER, SA_RESETHAND resets
 * the program's action to SIG_DFL first. Returns 1 when a handler ran,
 * 0 when the action is SIG_DFL or SIG_IGN (nothing done). The mask is
 * left as the program's handler ran with it: the caller returns to the
 * kernel right after, and sigreturn sets uc's. When the agent's handler
 * blocks every signal (its mask at install), the chain's lock makes no
 * mask change of its own. Async-signal-safe. */
int d9_sigchain_call(int sig, siginfo_t *si, void *uc);

/* 1 when the address low lies below high, at most reach bytes, on the same
 * stack of the calling thread: both on its alternate signal stack, or
 * neither (stacks grow down on the targets built for). Tells whether a
 * frame is inside another's call (crash.c) or a jump leaves it (direct.c).
 * Async-signal-safe; keeps errno. */
int d9_sigstack_below(uintptr_t low, uintptr_t high, uintptr_t reach);

/* Gives sig back: the kernel gets the program's action, later sigaction
 * calls go straight to the kernel. Async-signal-safe. */
void d9_sigchain_release(int sig);

/* Around an exec or a posix_spawn (back 0 before, 1 after it failed or
 * the spawn returned): a signal the program ignores while the agent holds
 * it is ignored in the kernel meanwhile, as an exec keeps an ignored
 * signal ignored but resets a handler (ours) to SIG_DFL, and glibc's
 * posix_spawn child does the same. */
void d9_sigchain_exec(int back);

/* pthread_atfork handlers: prepare takes the chains' lock (every signal
 * blocked on the forking thread), done gives it back in parent and child. */
void d9_sigchain_fork_prepare(void);
void d9_sigchain_fork_done(void);

#endif
