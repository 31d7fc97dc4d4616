/* slow_segment_open.c - a trace directory that hangs (an NFS server gone),
 * for test_faults: loaded before libdial9.so in LD_PRELOAD, it is the
 * openat() the agent's writer calls. The writer's first open of a segment
 * (a name ending in ".d9.open") is made, then held SLOW_OPEN_MS ms before it
 * returns, as an open that blocks in the file system after the kernel gave
 * it its number. With SLOW_OPEN_DIR=1 it holds instead the first open of
 * DIAL9_DIR itself (the agent's start, whatever the thread). With
 * SLOW_OPEN_ERRNO=N the held open then fails with errno N. Other opens
 * pass through.
 * The program under test reads two globals (dlsym(RTLD_DEFAULT, ...)):
 * slow_open_state, 0 before the held open, 1 while it is held, 2 after;
 * slow_open_fd, the number the held open got (-1 before). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

_Atomic int slow_open_state;
_Atomic int slow_open_fd = -1;

static int held(const char *path)
{
    static _Atomic int taken;
    const char *dir = getenv("SLOW_OPEN_DIR") ? getenv("DIAL9_DIR") : NULL;
    if (dir)
        return strcmp(path, dir) == 0 && !atomic_exchange(&taken, 1);
    char name[16] = "";
    size_t n = strlen(path), suf = strlen(".d9.open");
    if (n < suf || strcmp(path + n - suf, ".d9.open") != 0)
        return 0;
    prctl(PR_GET_NAME, name);
    return strcmp(name, "dial9-writer") == 0 && !atomic_exchange(&taken, 1);
}

static int open_at(const char *sym, int dirfd, const char *path, int flags, mode_t mode)
{
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, sym);
    int hold = held(path);
    int fd = real(dirfd, path, flags, mode);
    if (hold) {
        const char *ms = getenv("SLOW_OPEN_MS");
        long t = ms ? atol(ms) : 0;
        struct timespec d = {t / 1000, (t % 1000) * 1000000};
        atomic_store(&slow_open_fd, fd);
        atomic_store(&slow_open_state, 1);
        while (nanosleep(&d, &d) != 0)
            ;
        atomic_store(&slow_open_state, 2);
        const char *err = getenv("SLOW_OPEN_ERRNO");
        if (err && fd >= 0) { /* the open answers, with an error */
            close(fd);
            errno = atoi(err);
            return -1;
        }
    }
    return fd;
}

#define MODE_ARG(flags)                                                        \
    mode_t mode = 0;                                                           \
    if (flags & (O_CREAT | __O_TMPFILE)) {                                     \
        va_list ap;                                                            \
        va_start(ap, flags);                                                   \
        mode = va_arg(ap, mode_t);                                             \
        va_end(ap);                                                            \
    }

int openat(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(flags);
    return open_at("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(flags);
    return open_at("openat64", dirfd, path, flags, mode);
}
