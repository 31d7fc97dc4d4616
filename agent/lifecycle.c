/* lifecycle.c - vfork and exec.
 * vfork: the child borrows the parent's memory, stack and TLS until it
 * execs or exits, so anything it recorded would go into the parent's ring.
 * Our vfork raises d9_busy and d9_in_vfork before the syscall; the child
 * runs with them raised (nothing recorded, parent state untouched) and the
 * parent lowers them when it resumes. It must be assembly: a C wrapper's
 * frame would be clobbered by the child returning through it.
 * exec: the new image starts its own agent (our fds are O_CLOEXEC); before
 * it, the writer drains every ring and seals the open segment. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "core.h"
#include "lifecycle.h"
#include "real.h"
#include "segment.h"
#include "sigchain.h"

#define D9_EXEC_FLUSH_MS 1000 /* longest an exec waits for the writer */

D9_TLS int d9_in_vfork;

/* errno for a failed vfork (called from the stub with -errno negated). */
__attribute__((used)) static int d9_vfork_failed(int err)
{
    errno = err;
    return -1;
}

_Static_assert(offsetof(struct d9_tls, busy) == 8, "vfork's stub adds to d9_busy at offset 8");

/* The return address is kept in %rdi (the syscall preserves it; the stack
 * slot is shared with the child), as glibc's own vfork does. */
__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "    movq d9_tls@gottpoff(%rip), %rax\n"
        "    addl $1, %fs:8(%rax)\n" /* d9_busy */
        "    movq d9_in_vfork@gottpoff(%rip), %rax\n"
        "    addl $1, %fs:(%rax)\n"
        "    popq %rdi\n"
        "    movl $58, %eax\n" /* SYS_vfork */
        "    syscall\n"
        "    pushq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"          /* the child: flags stay raised */
        "    movq d9_tls@gottpoff(%rip), %rdx\n"
        "    subl $1, %fs:8(%rdx)\n" /* d9_busy */
        "    movq d9_in_vfork@gottpoff(%rip), %rdx\n"
        "    subl $1, %fs:(%rdx)\n"
        "    cmpq $-4095, %rax\n"
        "    jae 2f\n"
        "1:  ret\n"
        "2:  negl %eax\n"
        "    movl %eax, %edi\n"
        "    jmp d9_vfork_failed\n"
        ".size vfork, .-vfork\n");

/* ---- exec -------------------------------------------------------------- */

static int before_exec(void)
{
    if (d9_busy || !atomic_load_explicit(&d9_recording, memory_order_relaxed))
        return 0; /* a vfork child, the agent itself, or not recording */
    int err = errno;
    d9_busy++;
    if (d9_self)
        d9_flush_nowait(d9_self);
    d9_seg_exec_pending(1);
    d9_writer_flush(D9_EXEC_FLUSH_MS);
    d9_busy--;
    errno = err;
    return 1;
}

/* exec returned: it failed, and this image goes on. */
static int exec_failed(int armed, int ret)
{
    if (armed)
        d9_seg_exec_pending(0);
    return ret;
}

/* int ret = real_ args, with the signals the program ignores while the
 * agent holds them ignored in the kernel meanwhile (sigchain.h). */
#define D9_IGNORED_KEPT(ret, args)                                             \
    d9_sigchain_exec(0);                                                       \
    int ret = real_ args;                                                      \
    d9_sigchain_exec(1)

#define D9_EXEC_BODY(name, args)                                               \
    D9_REAL_OR_FAIL(real_, name, -1);                                          \
    int armed_ = before_exec();                                                \
    D9_IGNORED_KEPT(ret_, args);                                               \
    return exec_failed(armed_, ret_)

D9_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    D9_EXEC_BODY(execve, (path, argv, envp));
}

D9_EXPORT int execv(const char *path, char *const argv[])
{
    D9_EXEC_BODY(execv, (path, argv));
}

D9_EXPORT int execvp(const char *file, char *const argv[])
{
    D9_EXEC_BODY(execvp, (file, argv));
}

D9_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    D9_EXEC_BODY(execvpe, (file, argv, envp));
}

D9_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    D9_EXEC_BODY(fexecve, (fd, argv, envp));
}

/* posix_spawn: glibc's child execs without our hooks; only the signals. */
#define D9_SPAWN_BODY(name, args)                                              \
    D9_REAL_OR_FAIL(real_, name, ENOSYS);                                      \
    D9_IGNORED_KEPT(ret_, args);                                               \
    return ret_

D9_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    D9_SPAWN_BODY(posix_spawn, (pid, path, fa, attr, argv, envp));
}

D9_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    D9_SPAWN_BODY(posix_spawnp, (pid, file, fa, attr, argv, envp));
}

/* execl*: glibc's call its internal execve, so they are rebuilt here on the
 * interposed execv / execvp / execve (argv on the stack, as glibc does). */
#define D9_EXECL_ARGV(argv, arg0, ap, envp_out)                                \
    size_t n_ = 1;                                                             \
    va_start(ap, arg0);                                                        \
    while (va_arg(ap, const char *))                                           \
        n_++;                                                                  \
    va_end(ap);                                                                \
    char *argv[n_ + 1];                                                        \
    argv[0] = (char *)arg0;                                                    \
    va_start(ap, arg0);                                                        \
    for (size_t i_ = 1; i_ <= n_; i_++)                                        \
        argv[i_] = va_arg(ap, char *);                                         \
    envp_out;                                                                  \
    va_end(ap)

D9_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    D9_EXECL_ARGV(argv, arg, ap, (void)0);
    return execv(path, argv);
}

D9_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    D9_EXECL_ARGV(argv, arg, ap, (void)0);
    return execvp(file, argv);
}

D9_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp;
    D9_EXECL_ARGV(argv, arg, ap, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}
