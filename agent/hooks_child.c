/* hooks_child.c - interposers for the calls that wait for a child process:
 * wait, waitpid, wait4 and waitid park (call child_wait; target the pid
 * waited for, 0 for any child or a process group). A supervisor's or a
 * shell's thread spends its time in one, and looked busy for it. WNOHANG
 * is a poll, counted instead of parked. glibc's wait and waitpid call its
 * internal wait4, not this one: each wait is one park.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "real.h"

static inline uint64_t pid_target(pid_t pid) { return pid > 0 ? (uint64_t)pid : 0; }

#define D9_CHILD_BODY(name, target, nohang, args)                             \
    D9_PARK_BODY(name, D9_CALL_CHILD_WAIT, target, nohang, -1, args, D9_RES_ERRNO, -1)

D9_EXPORT pid_t wait(int *status)
{
    D9_CHILD_BODY(wait, 0, 0, (status));
}

D9_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    D9_CHILD_BODY(waitpid, pid_target(pid), options & WNOHANG, (pid, status, options));
}

D9_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    D9_CHILD_BODY(wait4, pid_target(pid), options & WNOHANG, (pid, status, options, usage));
}

D9_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    D9_CHILD_BODY(waitid, idtype == P_PID ? (uint64_t)id : 0, options & WNOHANG,
                  (idtype, id, info, options));
}
