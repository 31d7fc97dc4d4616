/* no_membarrier.c - runs a command where membarrier(2) fails with EPERM, as
 * under a seccomp profile that refuses it (some container runtimes): a
 * seccomp filter (with no_new_privs, kept across exec) answers EPERM to
 * membarrier and allows every other call. Before it execs, it checks that
 * the filter acts: membarrier(MEMBARRIER_CMD_QUERY) must fail with EPERM.
 * usage: no_membarrier COMMAND [ARG...]
 * Exits 2 on a usage error, or when the filter could not be installed or
 * did not act; 127 when the exec fails; else it is COMMAND. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: no_membarrier COMMAND [ARG...]\n");
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("no_membarrier: seccomp filter");
        return 2;
    }
    if (syscall(__NR_membarrier, 0, 0, 0) != -1 || errno != EPERM) {
        fprintf(stderr, "no_membarrier: membarrier is not refused\n");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror("no_membarrier: exec");
    return 127;
}
