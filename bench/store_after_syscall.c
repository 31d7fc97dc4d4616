/* store_after_syscall.c - what one 8-byte store costs next to a system call
 * on this machine, with no agent: the mechanism behind the recorded hot
 * path's eventfd and park figures (BENCHMARKS.md, session 24).
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

static long raw_write(int fd, const void *buf, size_t n)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
}

/* One store into the ring of `size` bytes, at the next 32-byte entry. */
static void store(size_t size)
{
    *(volatile uint64_t *)(ring + pos) = 1;
    pos = (pos + 32) & (size - 1);
}

__attribute__((noinline)) static void call(enum variant v)
{
    uint64_t one = 1;
    volatile uint64_t local[8];
    switch (v) {
    case LIBC:
    case LIBC_AGAIN: (void)!write(efd, &one, 8); break;
    case RAW: raw_write(efd, &one, 8); break;
    case LIBC_RING: (void)!write(efd, &one, 8); store(RING); break;
    case RAW_RING: raw_write(efd, &one, 8); store(RING); break;
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
    int pairs = argc > 1 ? atoi(argv[1]) : 160;
    if (pairs < 1 || bench_start_idle_thread() != 0) {
        fprintf(stderr, "usage: %s [PAIRS >= 1]\n", argv[0]);
        return 2;
    }
    ring = mmap(NULL, RING, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    efd = eventfd(0, EFD_NONBLOCK);
    double *ns = calloc((size_t)pairs * N_VARIANTS, sizeof(double));
    if (ring == MAP_FAILED || efd < 0 || !ns)
        return 1;
    for (size_t i = 0; i < RING; i += 4096) /* no page faults in the timed blocks */
        ring[i] = 0;
    uint64_t coin = now_ns() | 1; /* xorshift64 */
    for (int k = 0; k < pairs; k++)
        for (int j = 0, first = 0; j < N_VARIANTS; j++) {
            if (j == 0) { /* a random rotation each round: no variant keeps a place */
                coin ^= coin << 13;
                coin ^= coin >> 7;
                coin ^= coin << 17;
                first = (int)(coin % N_VARIANTS);
            }
            int v = (j + first) % N_VARIANTS;
            uint64_t t0 = now_ns();
            for (int i = 0; i < BLOCK; i++)
                call((enum variant)v);
            ns[v * pairs + k] = (double)(now_ns() - t0) / BLOCK;
        }
    double base = 0;
    for (int v = 0; v < N_VARIANTS; v++) {
        double med = bench_median(ns + (size_t)v * pairs, (size_t)pairs);
        if (v == LIBC)
            base = med;
        printf("%-48s %8.1f ns %+7.1f\n", names[v], med, med - base);
    }
    free(ns);
    return 0;
}
