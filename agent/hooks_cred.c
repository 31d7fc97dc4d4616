/* hooks_cred.c - a service started as root that switches to its own user
 * (memcached -u, nginx's and apache's workers, mariadbd, named -u, unbound)
 * keeps being recorded. glibc changes the credentials of every thread,
 * the writer's too; the process directory is 0700 in a DIAL9_DIR that is
 * root's, so the writer could neither make that directory afterwards nor
 * create the next segment in it. Before the switch, while still root, the
 * writer makes the directory and hands it and the open segment to the new
 * user (d9_writer_hand_to), then the call is made as the program made it.
 * The wait for the writer (0.13 ms on the bench VM) is made once for a
 * program that goes back and forth between root and one user (varnishd's
 * manager): the directory is already that user's.
 *
 * Only the setuid family in libc changes the owner: a raw setuid system
 * call is not seen (README, "What dial9 sees"), and a group change alone
 * does not matter to a 0700 directory.
 */
#include <unistd.h>

#include "core.h"
#include "real.h"
#include "segment.h"

#define D9_HAND_TIMEOUT_MS 2000 /* longest the switch waits for the writer */

/* Before a call that switches the effective uid to `to` ((uid_t)-1: unchanged).
 * Only root gives files away, and only a switch away from root loses them.
 * The group is the one the program set before (setgid comes first: after
 * the switch it could not). errno is kept (d9_writer_flush saves it). */
static void hand_over(uid_t to)
{
    if (to == (uid_t)-1 || to == 0 || d9_busy || geteuid() != 0 || d9_seg_handed_to(to))
        return;
    d9_writer_hand_to(to, getegid(), D9_HAND_TIMEOUT_MS);
}

D9_EXPORT int setuid(uid_t uid)
{
    D9_REAL_OR_FAIL(real_, setuid, -1);
    hand_over(uid);
    return real_(uid);
}

D9_EXPORT int seteuid(uid_t euid)
{
    D9_REAL_OR_FAIL(real_, seteuid, -1);
    hand_over(euid);
    return real_(euid);
}

D9_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
    D9_REAL_OR_FAIL(real_, setreuid, -1);
    hand_over(euid);
    return real_(ruid, euid);
}

D9_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    D9_REAL_OR_FAIL(real_, setresuid, -1);
    hand_over(euid);
    return real_(ruid, euid, suid);
}
