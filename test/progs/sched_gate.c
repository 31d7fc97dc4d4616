/* sched_gate.c - ground truth for the agent's schedstat gate (agent/
 * scheduling.h): an UNPARK reads /proc/thread-self/schedstat only after a
 * park of at least 20 us, and at most once per DIAL9_SCHED_GAP_MS per thread. The
 * program parks N times in poll() on its main thread and counts the read
 * syscalls that thread made meanwhile: syscr of /proc/thread-self/io (the
 * kernel counts pread too), less the program's own read of that file.
 * usage: sched_gate long|short N
 *   long:  poll() on no fd with a 1 ms timeout: every park >= 1 ms
 *   short: poll() on a readable eventfd with a 1 s timeout: returns at once
 * prints "parks N elapsed_ns E reads R long_parks L max_park_ns M", where
 * L counts the polls that took >= 20 us by the program's own clock. */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "now.h"

/* syscr of the calling thread; one pread, counted in the next reading. */
static long syscr(int fd)
{
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *p = strstr(buf, "syscr:");
    return p ? strtol(p + 6, NULL, 10) : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "long") && strcmp(argv[1], "short"))) {
        fprintf(stderr, "usage: %s long|short N\n", argv[0]);
        return 2;
    }
    int is_long = !strcmp(argv[1], "long");
    long n = atol(argv[2]);
    int io = open("/proc/thread-self/io", O_RDONLY);
    int efd = eventfd(1, 0); /* readable for good */
    if (io < 0 || efd < 0) {
        perror("sched_gate: /proc/thread-self/io or eventfd");
        return 1;
    }
    struct pollfd pfd = {.fd = efd, .events = POLLIN};
    poll(NULL, 0, 1); /* the thread registers with the agent (its own reads) here */
    long before = syscr(io);
    uint64_t t0 = now_ns(), max_park = 0;
    long long_parks = 0;
    for (long i = 0; i < n; i++) {
        uint64_t a = now_ns();
        int rc = is_long ? poll(NULL, 0, 1) : poll(&pfd, 1, 1000);
        uint64_t d = now_ns() - a;
        if (rc < 0) {
            perror("sched_gate: poll");
            return 1;
        }
        long_parks += d >= 20000;
        max_park = d > max_park ? d : max_park;
    }
    uint64_t elapsed = now_ns() - t0;
    long after = syscr(io);
    if (before < 0 || after < 0) {
        fprintf(stderr, "sched_gate: no syscr in /proc/thread-self/io\n");
        return 1;
    }
    printf("parks %ld elapsed_ns %llu reads %ld long_parks %ld max_park_ns %llu\n", n,
           (unsigned long long)elapsed, after - before - 1, long_parks, (unsigned long long)max_park);
    return 0;
}
