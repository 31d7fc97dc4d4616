/* slow_calls.c - measurements behind two agent choices:
 *
 *   slow_calls lock N     N uncontended pthread_mutex_lock/unlock pairs, for
 *                         `valgrind --tool=callgrind` with and without the
 *                         agent: instructions the lock interposer adds.
 *   slow_calls calls N    N rounds of the calls the agent times (file open/
 *                         write/pwrite/pread/read/fsync/close, loopback socket/
 *                         connect/accept/close, dup/dup2, 1 MiB mmap/munmap,
 *                         getaddrinfo of localhost), each bracketed with
 *                         CLOCK_MONOTONIC; prints p50/p99/p99.9/max per call
 *                         in microseconds: the basis of the default
 *                         DIAL9_SLOW_SYSCALL_US.
 * Files go to $TMPDIR (default /tmp).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

enum { OPEN, WRITE, PWRITE, PREAD, READ, FSYNC, CLOSE, SOCKET, CONNECT, ACCEPT, DUP, DUP2, MMAP, MUNMAP,
       GETADDRINFO, NCALLS };
static const char *const names[NCALLS] = {"open", "write", "pwrite", "pread", "read", "fsync", "close",
                                          "socket", "connect", "accept", "dup", "dup2", "mmap", "munmap",
                                          "getaddrinfo"};
static uint64_t *durs[NCALLS];
static int ndurs[NCALLS];

#define TIMED(call, ret, expr)                                                 \
    do {                                                                       \
        uint64_t t0_ = now_ns();                                               \
        ret = (expr);                                                          \
        durs[call][ndurs[call]++] = now_ns() - t0_;                            \
    } while (0)

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    return v[i] / 1000.0;
}

static int calls(int rounds)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/slow_calls.%d", dir, (int)getpid());
    for (int c = 0; c < NCALLS; c++)
        if (!(durs[c] = calloc((size_t)rounds * 2, sizeof(uint64_t))))
            return 1;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 64) ||
        getsockname(l, (struct sockaddr *)&a, &alen)) {
        perror("slow_calls: listen");
        return 1;
    }
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    for (int i = 0; i < rounds; i++) {
        int fd, s, c, d, rc;
        ssize_t n;
        TIMED(OPEN, fd, open(path, O_CREAT | O_RDWR | O_TRUNC, 0600));
        TIMED(WRITE, n, write(fd, buf, sizeof buf));
        TIMED(PWRITE, n, pwrite(fd, buf, 512, 1024));
        TIMED(PREAD, n, pread(fd, buf, 512, 0));
        TIMED(READ, n, read(fd, buf, sizeof buf));
        if (i % 10 == 0)
            TIMED(FSYNC, rc, fsync(fd));
        TIMED(DUP, d, dup(fd));
        TIMED(DUP2, rc, dup2(fd, d));
        TIMED(CLOSE, rc, close(d));
        TIMED(CLOSE, rc, close(fd));
        TIMED(SOCKET, s, socket(AF_INET, SOCK_STREAM, 0));
        TIMED(CONNECT, rc, connect(s, (struct sockaddr *)&a, sizeof a));
        TIMED(ACCEPT, c, accept(l, NULL, NULL));
        TIMED(CLOSE, rc, close(c));
        TIMED(CLOSE, rc, close(s));
        void *m;
        TIMED(MMAP, m, mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (m != MAP_FAILED)
            memset(m, 1, 1 << 20);
        TIMED(MUNMAP, rc, munmap(m, 1 << 20));
        if (i % 10 == 0) {
            struct addrinfo *res = NULL;
            TIMED(GETADDRINFO, rc, getaddrinfo("localhost", "80", NULL, &res));
            if (rc == 0)
                freeaddrinfo(res);
        }
        (void)n;
    }
    unlink(path);
    printf("%-12s %8s %9s %9s %9s %9s  (us)\n", "call", "n", "p50", "p99", "p99.9", "max");
    for (int c = 0; c < NCALLS; c++) {
        qsort(durs[c], (size_t)ndurs[c], sizeof(uint64_t), cmp_u64);
        printf("%-12s %8d %9.1f %9.1f %9.1f %9.1f\n", names[c], ndurs[c], pct(durs[c], ndurs[c], 0.5),
               pct(durs[c], ndurs[c], 0.99), pct(durs[c], ndurs[c], 0.999), durs[c][ndurs[c] - 1] / 1000.0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc == 3 ? atoi(argv[2]) : 0;
    if (n < 1 || (strcmp(argv[1], "lock") && strcmp(argv[1], "calls"))) {
        fprintf(stderr, "usage: slow_calls lock|calls N\n");
        return 2;
    }
    if (strcmp(argv[1], "calls") == 0)
        return calls(n);
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    return 0;
}
