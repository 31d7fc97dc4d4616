/* hooks_sigwait.c - interposers for the calls that wait for a signal:
 * pause, sigsuspend, sigwait, sigwaitinfo and sigtimedwait park (call
 * signal_wait). A daemon's main thread (nginx's master in sigsuspend) or a
 * signal-handling thread spends its life in one, and looked busy for it.
 * glibc's sigwait and sigwaitinfo call its internal sigtimedwait, not this
 * one: each wait is one park. A zero sigtimedwait timeout is a poll,
 * counted instead of parked.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "real.h"

D9_EXPORT int pause(void)
{
    D9_PARK_BODY(pause, D9_CALL_SIGNAL_WAIT, 0, 0, -1, (), D9_RES_ERRNO, -1);
}

D9_EXPORT int sigsuspend(const sigset_t *mask)
{
    D9_PARK_BODY(sigsuspend, D9_CALL_SIGNAL_WAIT, 0, 0, -1, (mask), D9_RES_ERRNO, -1);
}

D9_EXPORT int sigwait(const sigset_t *set, int *sig)
{
    D9_PARK_BODY(sigwait, D9_CALL_SIGNAL_WAIT, 0, 0, -1, (set, sig), D9_RES_ERRNUM, ENOSYS);
}

D9_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    D9_PARK_BODY(sigwaitinfo, D9_CALL_SIGNAL_WAIT, 0, 0, -1, (set, info), D9_RES_ERRNO, -1);
}

D9_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    int64_t tmo = d9_ts_ns(ts);
    D9_PARK_BODY(sigtimedwait, D9_CALL_SIGNAL_WAIT, 0, tmo == 0, tmo, (set, info, ts), D9_RES_ERRNO, -1);
}
