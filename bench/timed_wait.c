/* timed_wait.c - what one timed sleep and its wake-up cost the sleeping
 * thread on this machine: the writer's every cycle is one (a futex wait
 * with DIAL9_FLUSH_MS as its timeout), and so is each park of a server's
 * event loop. Waits N times on a futex nobody wakes, with a timeout of MS
 * milliseconds, then prints the thread's on-CPU ns per wait (the growth of
 * /proc/thread-self/schedstat field 1, its sum_exec_runtime, over the
 * waits: the start-up is not counted) and the wall time per wait. Run it pinned, on an idle CPU and beside a busy one
 * (docs/BENCH-HISTORY.md, session 42).
 * usage: timed_wait MS N   (MS 1-1000, N 1-100000) */
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The calling thread's on-CPU ns so far (schedstat field 1), or -1. */
static double on_cpu_ns(void)
{
    unsigned long long ns;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    int ok = f && fscanf(f, "%llu", &ns) == 1;
    if (f)
        fclose(f);
    return ok ? (double)ns : -1;
}

int main(int argc, char **argv)
{
    long ms = argc == 3 ? strtol(argv[1], NULL, 10) : 0, n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    if (ms < 1 || ms > 1000 || n < 1 || n > 100000) {
        fprintf(stderr, "usage: timed_wait MS N   (MS 1-1000, N 1-100000)\n");
        return 2;
    }
    static int word; /* stays 0: each wait ends by its timeout */
    double c0 = on_cpu_ns(), t0 = now_ns(); /* after the start-up, which is not counted */
    for (long i = 0; i < n; i++) {
        struct timespec to = {ms / 1000, (ms % 1000) * 1000000L};
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
    }
    double wall = now_ns() - t0, c1 = on_cpu_ns();
    if (c0 < 0 || c1 < 0) {
        perror("timed_wait: /proc/thread-self/schedstat");
        return 1;
    }
    printf("timed_wait %ld ms x %ld: on-CPU %.0f ns a wait, wall %.3f ms a wait\n", ms, n, (c1 - c0) / (double)n,
           wall / (double)n / 1e6);
    return 0;
}
