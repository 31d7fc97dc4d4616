/* fd_lift.c - see fd_lift.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fd_lift.h"

/* min(RLIMIT_NOFILE soft limit, D9_FD_LIFT_CAP): D9_FD_TOP's numbers are below it. */
static int top_cap(void)
{
    struct rlimit r;
    rlim_t cap = D9_FD_LIFT_CAP;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < cap)
        cap = r.rlim_cur;
    return (int)cap;
}

static int zone_floor(enum d9_fd_zone zone)
{
    return zone == D9_FD_ABOVE_STDIO ? 3 : top_cap() / 4 * 3;
}

int d9_fd_lift(int fd, enum d9_fd_zone zone)
{
    int saved = errno, hi = -1, floor = zone_floor(zone);
    if (fd >= 0 && fd < floor)
        hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    errno = saved;
    return hi;
}

void d9_fd_lift_prepare(void)
{
    int saved = errno, top = top_cap() - 1;
    int fd = open("/", O_PATH | O_CLOEXEC);
    if (fd >= 0 && fd < top) {
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, top);
        if (hi >= 0)
            close(hi);
    }
    if (fd >= 0)
        close(fd);
    errno = saved;
}
