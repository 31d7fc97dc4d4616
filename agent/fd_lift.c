/* fd_lift.c - see fd_lift.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>

#include "fd_lift.h"

static int zone_floor(enum d9_fd_zone zone)
{
    if (zone == D9_FD_ABOVE_STDIO)
        return 3;
    struct rlimit r;
    rlim_t cap = D9_FD_LIFT_CAP;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < cap)
        cap = r.rlim_cur;
    return (int)(cap / 4 * 3);
}

int d9_fd_lift(int fd, enum d9_fd_zone zone)
{
    int saved = errno, hi = -1, floor = zone_floor(zone);
    if (fd >= 0 && fd < floor)
        hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    errno = saved;
    return hi;
}
