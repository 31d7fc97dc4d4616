/* story_fdtable.c - story 2: "tasks stalled while the fd table was resized".
 * WORKERS threads open and close sockets and files in busy loops (parking
 * briefly every 64 rounds so busy periods are bounded) while a grower
 * thread dup2()s onto ever higher fd numbers, doubling the process's fd
 * table up to RLIMIT_NOFILE (raised to fs.nr_open when allowed). The
 * kernel's expand_fdtable waits an RCU grace period when the table is
 * shared by threads and copies the old table under files->file_lock, so the
 * grower's dup2 and the workers' fd calls stall.
 *
 * Every socket/open/close/dup2 the workers and the grower make is
 * bracketed with CLOCK_MONOTONIC reads; the agent's timing lies inside
 * that bracket. Threshold: DIAL9_SLOW_SYSCALL_US (default 1000, as the
 * agent's). Output (stdout):
 *   thread TID worker|grower
 *   slow CALL TID T0 T1          every bracketed call with T1-T0 >= threshold
 *   summary calls N slow M fd_max F threshold_ns T
 *
 * usage: story_fdtable WORKERS
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "now.h"

#define MAX_WORKERS 8
#define MAX_SLOW 8192 /* per thread; more is reported as an overflow */

enum { C_SOCKET, C_OPEN, C_CLOSE, C_DUP2 };
static const char *const call_names[] = {"socket", "open", "close", "dup2"};

struct slow_rec {
    uint64_t t0, t1;
    int call;
};

struct thread_rec {
    pthread_t th;
    int tid;
    const char *role;
    long calls;
    int nslow, overflow;
    struct slow_rec slow[MAX_SLOW];
};

static uint64_t threshold_ns;
static atomic_int stop, go;
static char file_path[] = "/tmp/story_fdtable.XXXXXX";

static void note(struct thread_rec *r, int call, uint64_t t0, uint64_t t1)
{
    r->calls++;
    if (t1 - t0 < threshold_ns)
        return;
    if (r->nslow < MAX_SLOW)
        r->slow[r->nslow++] = (struct slow_rec){t0, t1, call};
    else
        r->overflow = 1;
}

/* ret = expr, bracketed and noted as call. */
#define TIMED(r, call, ret, expr)                                              \
    do {                                                                       \
        uint64_t t0_ = now_ns();                                               \
        ret = (expr);                                                          \
        note((r), (call), t0_, now_ns());                                      \
    } while (0)

static void *worker(void *p)
{
    struct thread_rec *r = p;
    r->tid = gettid();
    while (!atomic_load(&go))
        ;
    for (long i = 0; !atomic_load(&stop); i++) {
        int fd, rc;
        TIMED(r, C_SOCKET, fd, socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (fd >= 0)
            TIMED(r, C_CLOSE, rc, close(fd));
        TIMED(r, C_OPEN, fd, open(file_path, O_RDONLY | O_CLOEXEC));
        if (fd >= 0)
            TIMED(r, C_CLOSE, rc, close(fd));
        (void)rc;
        if (i % 64 == 63)
            nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    return NULL;
}

static int fd_max;

static void *grower(void *p)
{
    struct thread_rec *r = p;
    r->tid = gettid();
    while (!atomic_load(&go))
        ;
    /* Let the workers get going before the first expansion. */
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    int src; /* the agent times every open: so does the program */
    TIMED(r, C_OPEN, src, open(file_path, O_RDONLY | O_CLOEXEC));
    for (int n = 1024; n <= fd_max; n *= 2) {
        int fd;
        TIMED(r, C_DUP2, fd, dup2(src, n - 1));
        if (fd < 0)
            fprintf(stderr, "story_fdtable: dup2(%d, %d): %s\n", src, n - 1, strerror(errno));
        nanosleep(&(struct timespec){0, 5000000}, NULL); /* workers run between expansions */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: story_fdtable WORKERS\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > MAX_WORKERS) {
        fprintf(stderr, "story_fdtable: 1..%d workers\n", MAX_WORKERS);
        return 2;
    }
    const char *thr = getenv("DIAL9_SLOW_SYSCALL_US");
    threshold_ns = (thr ? strtoull(thr, NULL, 10) : 1000) * 1000u;

    /* As many fds as allowed: fs.nr_open for root, the hard limit otherwise. */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    FILE *f = fopen("/proc/sys/fs/nr_open", "r");
    long nr_open = 0;
    if (f && fscanf(f, "%ld", &nr_open) == 1 && nr_open > (long)rl.rlim_max) {
        struct rlimit want = {(rlim_t)nr_open, (rlim_t)nr_open};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl = want;
    }
    if (f)
        fclose(f);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    fd_max = rl.rlim_cur > (1u << 20) ? (1 << 20) : (int)rl.rlim_cur;

    int tmp = mkstemp(file_path);
    if (tmp < 0) {
        perror("story_fdtable: mkstemp");
        return 1;
    }
    close(tmp);

    static struct thread_rec recs[MAX_WORKERS + 1];
    for (int i = 0; i <= n; i++) {
        recs[i].role = i < n ? "worker" : "grower";
        if (pthread_create(&recs[i].th, NULL, i < n ? worker : grower, &recs[i]) != 0) {
            fprintf(stderr, "story_fdtable: pthread_create failed\n");
            return 1;
        }
    }
    atomic_store(&go, 1);
    pthread_join(recs[n].th, NULL);
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++)
        pthread_join(recs[i].th, NULL);
    unlink(file_path);

    long calls = 0;
    int slow = 0, overflow = 0;
    for (int i = 0; i <= n; i++) {
        struct thread_rec *r = &recs[i];
        printf("thread %d %s\n", r->tid, r->role);
        for (int k = 0; k < r->nslow; k++)
            printf("slow %s %d %llu %llu\n", call_names[r->slow[k].call], r->tid,
                   (unsigned long long)r->slow[k].t0, (unsigned long long)r->slow[k].t1);
        calls += r->calls;
        slow += r->nslow;
        overflow |= r->overflow;
    }
    printf("summary calls %ld slow %d fd_max %d threshold_ns %llu\n", calls, slow, fd_max,
           (unsigned long long)threshold_ns);
    if (overflow) {
        fprintf(stderr, "story_fdtable: more than %d slow calls on a thread\n", MAX_SLOW);
        return 1;
    }
    return 0;
}
