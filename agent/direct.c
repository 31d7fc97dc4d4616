/* direct.c - when the hooks may make their system calls themselves
 * (direct.h). */
#include <dlfcn.h>
#include <errno.h>

#include "direct.h"
#include "real.h"

_Atomic int d9_direct_write;

#if defined(__x86_64__)
long d9_sys_fail(long ret)
{
    errno = (int)-ret;
    return -1;
}

/* 1 when the next definition of name (the one the hooks call) is glibc's. */
static int next_is_libc(void *libc, void *next, const char *name)
{
    return libc && next && next == dlsym(libc, name);
}

void d9_direct_init(void)
{
    if (!d9_clock_tsc)
        return;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (next_is_libc(libc, (void *)D9_REAL(syscall), "syscall"))
        d9_futex_direct_on();
    int off = 0;
    if (next_is_libc(libc, (void *)D9_REAL(write), "write")) /* unless a cancel came first */
        atomic_compare_exchange_strong(&d9_direct_write, &off, D9_DIRECT_ON);
    if (libc)
        dlclose(libc);
}
#else
void d9_direct_init(void) {}
#endif
