/* syscall_paths.c - what the code around one system call costs on this
 * machine, with no agent: why the eventfd WAKE makes its own write
 * (agent/direct.h; docs/BENCH-HISTORY.md, session 25).
 * usage: syscall_paths [PAIRS]   (default 160)
 * Each variant makes blocks of 50 8-byte eventfd writes; the variants'
 * blocks are interleaved PAIRS times, each time from a place drawn at
 * random (as bench/store_after_syscall). Prints each variant's median ns
 * per write and its difference from the first (libc's write through the
 * PLT); "again" repeats the first: the A/A control. An idle second thread
 * makes glibc take its multithreaded paths, as in every service measured.
 * Variants: the syscall instruction in a function next to the caller, or
 * on a page of its own; libc's syscall(); a function on a page of its own
 * that jumps on to libc's write (a forwarder's tail call) or calls it and
 * returns (a hook that does its work after the call). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define BLOCK 50

enum variant { LIBC, LIBC_AGAIN, RAW_NEAR, RAW_OWN_PAGE, LIBC_SYSCALL, JUMP_OWN_PAGE, CALL_OWN_PAGE, N_VARIANTS };
static const char *const names[N_VARIANTS] = {
    "libc write",
    "libc write again (A/A)",
    "syscall instruction, function next to the caller",
    "syscall instruction, function on its own page",
    "libc syscall(SYS_write)",
    "own page, then a jump to libc write",
    "own page, a call to libc write, then return",
};

static int efd;
static ssize_t (*libc_write)(int, const void *, size_t);
static long (*libc_syscall)(long, ...);

__attribute__((noinline)) static long raw_near(const void *buf) { return bench_raw_write(efd, buf, 8); }

/* Each on a page of its own (aligned, in a section of its own). */
#define OWN_PAGE(n) __attribute__((noinline, aligned(4096), section(".text.d9_own_page_" #n)))
OWN_PAGE(1) static long raw_own_page(const void *buf) { return bench_raw_write(efd, buf, 8); }
OWN_PAGE(2) static long jump_own_page(const void *buf) { return libc_write(efd, buf, 8); }
OWN_PAGE(3) static long call_own_page(const void *buf)
{
    long ret = libc_write(efd, buf, 8);
    __asm__ volatile("" ::: "memory"); /* work after the call: no tail call */
    return ret;
}

__attribute__((noinline)) static void call(int v)
{
    uint64_t one = 1;
    switch ((enum variant)v) {
    case LIBC:
    case LIBC_AGAIN: (void)!write(efd, &one, 8); break;
    case RAW_NEAR: raw_near(&one); break;
    case RAW_OWN_PAGE: raw_own_page(&one); break;
    case LIBC_SYSCALL: libc_syscall(SYS_write, efd, &one, 8); break;
    case JUMP_OWN_PAGE: jump_own_page(&one); break;
    case CALL_OWN_PAGE: call_own_page(&one); break;
    case N_VARIANTS: break;
    }
}

int main(int argc, char **argv)
{
    int pairs = bench_interleave_args(argc, argv);
    if (pairs < 0)
        return 2;
    libc_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    libc_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    efd = eventfd(0, EFD_NONBLOCK);
    if (!libc_write || !libc_syscall || efd < 0)
        return 1;
    return bench_interleave(pairs, N_VARIANTS, BLOCK, call, names) ? 1 : 0;
}
