/* close_after_dup.c - another thread closing an fd right after it was
 * copied, made deterministic for test_fd_copy: loaded after libdial9.so in
 * LD_PRELOAD, it is the dup(), dup3() and fcntl() the agent's hooks call.
 * When the fd copied is close_after_dup_fd (a global the program sets
 * through dlsym(RTLD_DEFAULT, ...)), it is closed once the copy is made,
 * before the hook goes on. Everything else passes through. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

int close_after_dup_fd = -1;

static int done(int ret, int old)
{
    if (ret >= 0 && old == close_after_dup_fd) {
        close_after_dup_fd = -1;
        close(old); /* the agent's close hook: the fd table forgets old */
    }
    return ret;
}

int dup(int old)
{
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "dup");
    return done(real(old), old);
}

int dup3(int old, int new, int flags)
{
    int (*real)(int, int, int) = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    return done(real(old, new, flags), old);
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int (*real)(int, int, ...) = (int (*)(int, int, ...))dlsym(RTLD_NEXT, "fcntl");
    int ret = real(fd, cmd, arg);
    return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? done(ret, fd) : ret;
}
