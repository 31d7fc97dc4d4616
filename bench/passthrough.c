/* passthrough.c - the least an LD_PRELOAD interposer can add: syscall(),
 * write() and epoll_wait() forwarded to the next definition (dlsym
 * RTLD_NEXT, resolved once) by a plain jump, nothing recorded. bench/run.sh
 * runs the in-process A/B of the hot path's recorded calls under it as well
 * as under the agent (its "forwarder" column): what interposing alone adds
 * to a call, before anything is recorded (measured in one process here:
 * 6-8 ns on write and epoll_wait, 25-31 on syscall(); across processes
 * this VM's state moves a 1 us syscall by tens of ns, which once read as
 * up to 91 ns of this forwarder's cost).
 * Built as build/bench/passthrough.so; x86-64 only (syscall's jump). */
#include <dlfcn.h>
#include <sys/epoll.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "passthrough.so forwards syscall() with an x86-64 jump"
#endif

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
__attribute__((used, visibility("hidden"))) long (*passthrough_real_syscall)(long, ...);

__attribute__((constructor)) static void resolve(void)
{
    real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_epoll_wait = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
    passthrough_real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

ssize_t write(int fd, const void *buf, size_t n)
{
    return real_write(fd, buf, n);
}

int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    return real_epoll_wait(epfd, ev, max, timeout);
}

/* Variadic: the registers and the stack slot go on untouched. */
__attribute__((naked)) long syscall(long nr, ...)
{
    (void)nr;
    __asm__("jmp *passthrough_real_syscall(%rip)");
}
