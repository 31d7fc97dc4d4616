/* store_after_syscall.c - what one 8-byte store costs next to a system call
 * on this machine, with no agent: the mechanism behind the recorded hot
 * path's eventfd and park figures (docs/BENCH-HISTORY.md, session 24).
 * usage: store_after_syscall [PAIRS]   (default 160)
 * Each variant makes blocks of 50 eventfd writes; the variants' blocks are
 * interleaved PAIRS times, each time from a place drawn at random (this VM
 * slows syscalls for stretches of a few hundred microseconds about once a
 * millisecond: a fixed order can line that up with one variant). Prints each variant's
 * median ns per write and its difference from the first (libc's write
 * alone). "libc again" repeats the first: the A/A control.
 * Variants: libc's write, or the bare syscall instruction (no cancellation
 * point); one store into a 512 KiB ring (the next 32-byte entry each time,
 * as the agent's ring), a 4 KiB ring (its line stays in L1, its page is
 * walked again after each syscall on a guest that empties the TLB there),
 * or the stack; the store after the call or before it. An idle second
 * thread makes glibc take its multithreaded paths, as in bench/hotpath. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define BLOCK 50
#define RING (512u << 10)

enum variant { LIBC, LIBC_AGAIN, RAW, LIBC_RING, RAW_RING, RING_LIBC, LIBC_PAGE, LIBC_STACK, N_VARIANTS };
static const char *const names[N_VARIANTS] = {
    "libc write",
    "libc write again (A/A)",
    "bare syscall instruction",
    "libc write, then a store into a 512 KiB ring",
    "bare syscall, then a store into a 512 KiB ring",
    "a store into a 512 KiB ring, then libc write",
    "libc write, then a store into a 4 KiB ring",
    "libc write, then a store into the stack",
};

static char *ring;
static size_t pos;
static int efd;

/* One store into the ring of `size` bytes, at the next 32-byte entry. */
static void store(size_t size)
{
    *(volatile uint64_t *)(ring + pos) = 1;
    pos = (pos + 32) & (size - 1);
}

__attribute__((noinline)) static void call(int v)
{
    uint64_t one = 1;
    volatile uint64_t local[8];
    switch ((enum variant)v) {
    case LIBC:
    case LIBC_AGAIN: (void)!write(efd, &one, 8); break;
    case RAW: bench_raw_write(efd, &one, 8); break;
    case LIBC_RING: (void)!write(efd, &one, 8); store(RING); break;
    case RAW_RING: bench_raw_write(efd, &one, 8); store(RING); break;
    case RING_LIBC: store(RING); (void)!write(efd, &one, 8); break;
    case LIBC_PAGE: (void)!write(efd, &one, 8); store(4096); break;
    case LIBC_STACK:
        (void)!write(efd, &one, 8);
        local[pos++ & 7] = 1;
        (void)local;
        break;
    case N_VARIANTS: break;
    }
}

int main(int argc, char **argv)
{
    int pairs = bench_interleave_args(argc, argv);
    if (pairs < 0)
        return 2;
    ring = mmap(NULL, RING, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    efd = eventfd(0, EFD_NONBLOCK);
    if (ring == MAP_FAILED || efd < 0)
        return 1;
    for (size_t i = 0; i < RING; i += 4096) /* no page faults in the timed blocks */
        ring[i] = 0;
    return bench_interleave(pairs, N_VARIANTS, BLOCK, call, names) ? 1 : 0;
}
