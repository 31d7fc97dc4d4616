/* direct.c - when the hooks may make their system calls themselves, and
 * getting a cancelled thread out of a direct wait (direct.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include "barrier.h"
#include "core.h"
#include "direct.h"
#include "log.h"
#include "nocancel.h"
#include "real.h"
#include "sigchain.h"

_Atomic int d9_direct;
static int waits_were_on; /* d9_direct_init set D9_DIRECT_EPOLL or D9_DIRECT_POLL */

#if defined(__x86_64__)
/* glibc's SIGCANCEL (__SIGRTMIN, internal): its handler marks the thread
 * cancelled, which pthread_cancel already did, so it then does nothing;
 * the signal only ends the wait (EINTR). */
#define D9_SIGCANCEL 32

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
#define NEXT_IS_LIBC(name) next_is_libc(libc, (void *)D9_REAL(name), #name)
    if (NEXT_IS_LIBC(syscall))
        d9_futex_direct_on();
    int on = 0;
    if (NEXT_IS_LIBC(write))
        on |= D9_DIRECT_WRITE;
    if (NEXT_IS_LIBC(epoll_ctl))
        on |= D9_DIRECT_CTL;
    if (NEXT_IS_LIBC(pread) && NEXT_IS_LIBC(pread64) && NEXT_IS_LIBC(pwrite) && NEXT_IS_LIBC(pwrite64))
        on |= D9_DIRECT_FILE;
    int waits = 0;
    if (NEXT_IS_LIBC(epoll_wait) && NEXT_IS_LIBC(epoll_pwait))
        waits |= D9_DIRECT_EPOLL;
    if (NEXT_IS_LIBC(poll))
        waits |= D9_DIRECT_POLL;
#undef NEXT_IS_LIBC
    if (atomic_load(&d9_barrier_ok))
        on |= waits;
    int off = 0; /* unless a cancel came first */
    if (on && atomic_compare_exchange_strong(&d9_direct, &off, on))
        waits_were_on = !!(on & D9_DIRECT_WAITS);
    if (libc)
        dlclose(libc);
}

/* 1 when thread tid is blocked in system call nr, or when that cannot be
 * known (no /proc): the first field of /proc/self/task/TID/syscall is the
 * system call's number ("running" or -1 outside one; proc(5)). pthread_cancel
 * is no cancellation point: the read runs with cancellation off. */
static int blocked_in(uint32_t tid, long nr)
{
    char buf[24];
    int cancel = d9_cancel_off();
    d9_busy++;
    int n = d9_read_task(tid, "syscall", buf, sizeof buf);
    d9_busy--;
    d9_cancel_restore(cancel);
    return n <= 0 || strtol(buf, NULL, 10) == nr;
}

/* 1 when th owns s and is in a direct wait: then sets its kicked flag,
 * and with kick signals it if it is blocked in the system call (a thread
 * about to enter it, or that left one by longjmp, gets no signal). s->tls
 * is read only while the owner cannot pass its exit (registry.c). */
static int in_direct_wait(struct d9_slot *s, pthread_t th, long pid, int kick)
{
    atomic_store(&s->kicking, 1);
    long nr = 0;
    if (atomic_load(&s->state) == D9_SLOT_LIVE && pthread_equal(d9_slot_owner(s), th))
        nr = atomic_load(&s->tls->in_direct);
    int in = nr != 0;
    uint32_t tid = d9_slot_tid(s);
    if (in) {
        atomic_store(&s->tls->kicked, 1);
        if (kick && blocked_in(tid, nr))
            d9_sys3(SYS_tgkill, pid, tid, D9_SIGCANCEL);
    }
    atomic_store(&s->kicking, 0);
    d9_futex(&s->kicking, FUTEX_WAKE_PRIVATE, 1, NULL); /* an exit may wait: d9_thread_exit */
    return in;
}

struct d9_slot *d9_direct_cancel_requested(pthread_t th)
{
    int saved = errno;
    /* The first cancel: a thread that saw its wait's bit set in_direct
     * before; after the barrier (barrier.h) it is seen. */
    if (atomic_exchange(&d9_direct, D9_DIRECT_CANCEL) & D9_DIRECT_WAITS)
        d9_barrier_all();
    if (!waits_were_on || pthread_equal(th, pthread_self())) {
        errno = saved;
        return NULL;
    }
    struct d9_slot *found = NULL;
    uint32_t n = d9_slot_limit();
    for (uint32_t i = 0; i < n && !found; i++) {
        struct d9_slot *s = d9_slot_at(i);
        if (atomic_load(&s->state) == D9_SLOT_LIVE && pthread_equal(d9_slot_owner(s), th) &&
            in_direct_wait(s, th, 0, 0))
            found = s;
    }
    errno = saved;
    return found;
}

void d9_direct_cancelled(struct d9_slot *s, pthread_t th)
{
    int saved = errno;
    long pid = d9_sys3(SYS_getpid, 0, 0, 0);
    /* Checked every 100 us, signalled every 10 ms while blocked: a signal
     * that landed just before the syscall instruction ended nothing. */
    for (int i = 0; i < 2000; i++) {
        if (!in_direct_wait(s, th, pid, i % 100 == 0))
            goto out;
        d9_sys3(SYS_nanosleep, (long)&(struct timespec){0, 100000}, 0, 0);
    }
    d9_log("pthread_cancel: thread %u is still in a wait after 200 ms; its cancel acts when the wait ends",
           d9_slot_tid(s));
out:
    errno = saved;
}

/* glibc keeps a jmp_buf's stack pointer mangled (sysdeps/unix/sysv/linux/
 * x86_64/sysdep.h PTR_MANGLE: xor with the pointer guard at %fs:0x30, then
 * rotate left by 17; jmpbuf-offsets.h: JB_RSP is 6). */
static uintptr_t jump_sp(const struct __jmp_buf_tag *env)
{
    uintptr_t guard, v = (uintptr_t)env->__jmpbuf[6];
    __asm__("mov %%fs:0x30, %0" : "=r"(guard));
    return ((v >> 17) | (v << 47)) ^ guard;
}

/* Farther than any thread's stack: env's stack pointer is then on another. */
#define D9_JUMP_REACH ((uintptr_t)1 << 30)

void d9_direct_jumped(const struct __jmp_buf_tag *env)
{
    if (!atomic_load_explicit(&d9_tls.in_direct, memory_order_relaxed))
        return;
    /* Not into the handler's own frames, nor onto another stack (a handler
     * on the alternate stack jumping within it). */
    if (!d9_sigstack_below(d9_tls.direct_sp, jump_sp(env), D9_JUMP_REACH))
        return;
    atomic_store_explicit(&d9_tls.in_direct, 0, memory_order_relaxed);
    atomic_store_explicit(&d9_tls.kicked, 0, memory_order_relaxed);
}

#else
void d9_direct_jumped(const struct __jmp_buf_tag *env) { (void)env; }
void d9_direct_init(void) {}
struct d9_slot *d9_direct_cancel_requested(pthread_t th)
{
    (void)th;
    atomic_store(&d9_direct, D9_DIRECT_CANCEL);
    return NULL;
}
void d9_direct_cancelled(struct d9_slot *s, pthread_t th) { (void)s, (void)th; }
#endif
