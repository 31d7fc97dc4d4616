/* count_futex_wakes.c - a syscall() interposer for test_ground_truth: loaded
 * after libdial9.so in LD_PRELOAD, it is the next syscall() the agent must
 * call. Counts the FUTEX_WAKE calls that reach it (any flags) and prints
 * "count_futex_wakes: N" on stderr at exit. */
#include <dlfcn.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>

static atomic_ulong wakes;

long syscall(long nr, ...)
{
    static long (*_Atomic real)(long, ...);
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (!real) /* racing threads store the same pointer */
        real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    if (nr == SYS_futex && ((int)a[1] & FUTEX_CMD_MASK) == FUTEX_WAKE)
        atomic_fetch_add(&wakes, 1);
    return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

__attribute__((destructor)) static void report(void)
{
    dprintf(2, "count_futex_wakes: %lu\n", atomic_load(&wakes));
}
