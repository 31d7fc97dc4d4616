/* slow_dir.c - the host's closes while the agent's writer is held in the
 * open of a segment (test/preload/slow_segment_open.so, loaded before the
 * agent): they must not wait for it. Ground truth is the program's own
 * clock around each close, and its own file.
 * Makes 100 condvar signals (a WAKE each), then waits for the held open.
 * MODE closes: opens and closes /dev/null 200 times while the open is held.
 * MODE reuse: closes the number the held open got (as a close loop or a
 *   double close would) and opens HOSTFILE, which takes that number; writes
 *   "host 1" there, and "host 2" after the open is released and the agent
 *   has flushed: the agent must never write to it.
 * MODE exit: returns from main (exit 0) while the open is held: the exit
 *   must not wait for it long (the agent gives up after 5 s without a write).
 * Then 100 more signals and dial9_flush(). Prints "main at NS ns" first
 * (CLOCK_MONOTONIC on entering main), then "wakes N",
 * "slowest close US us", "closes while held N" (and "reused yes|no");
 * exits 0, 1 when the held open was never seen (not preloaded, or no
 * segment opened within 10 s).
 * usage: slow_dir closes|reuse|exit [HOSTFILE] */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "now.h"
#include "held_cond.h"

static pthread_cond_t cv = HELD_COND_INITIALIZER;
static long wakes;

static void signal_n(int n)
{
    for (int i = 0; i < n; i++, wakes++)
        pthread_cond_signal(&cv);
}

/* Polls every 5 ms: few events, as the ring is not drained while the open
 * is held. */
static int wait_state(_Atomic int *state, int want, int secs)
{
    for (uint64_t end = now_ns() + (uint64_t)secs * 1000000000u; now_ns() < end; usleep(5000))
        if (*state >= want)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    printf("main at %llu ns\n", (unsigned long long)now_ns()); /* after the agent's start */
    fflush(stdout);
    int reuse = argc > 2 && strcmp(argv[1], "reuse") == 0;
    if (argc < 2 || (!reuse && strcmp(argv[1], "closes") != 0 && strcmp(argv[1], "exit") != 0)) {
        fprintf(stderr, "usage: %s closes|reuse|exit [HOSTFILE]\n", argv[0]);
        return 2;
    }
    _Atomic int *state = dlsym(RTLD_DEFAULT, "slow_open_state");
    _Atomic int *held_fd = dlsym(RTLD_DEFAULT, "slow_open_fd");
    int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dial9_flush");
    if (!state || !held_fd) {
        fprintf(stderr, "slow_dir: slow_segment_open.so is not loaded\n");
        return 1;
    }
    signal_n(100);
    if (!wait_state(state, 1, 10)) {
        fprintf(stderr, "slow_dir: no segment open was held within 10 s\n");
        return 1;
    }
    if (strcmp(argv[1], "exit") == 0) {
        printf("exiting while held\n");
        return 0;
    }
    uint64_t slowest = 0;
    int during = 0, host = -1;
    if (reuse) {
        int n = *held_fd;
        uint64_t t0 = now_ns();
        close(n);
        slowest = now_ns() - t0;
        during = *state == 1;
        host = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        printf("reused %s\n", host == n ? "yes" : "no");
        if (host < 0 || write(host, "host 1\n", 7) != 7)
            return 1;
    } else {
        for (int i = 0; i < 200; i++) {
            int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            uint64_t t0 = now_ns();
            close(fd);
            uint64_t t = now_ns() - t0;
            if (t > slowest)
                slowest = t;
            during += *state == 1;
        }
    }
    if (!wait_state(state, 2, 60)) {
        fprintf(stderr, "slow_dir: the held open was not released within 60 s\n");
        return 1;
    }
    signal_n(100);
    if (flush)
        flush();
    if (host >= 0) {
        if (write(host, "host 2\n", 7) != 7)
            return 1;
        close(host);
    }
    printf("wakes %ld\nslowest close %llu us\ncloses while held %d\n", wakes,
           (unsigned long long)(slowest / 1000), during);
    return 0;
}
