/* flight_dump.c - drives the flight recorder for test_flight.sh.
 *   flight_dump api N REASON  N condvar signals (wake events), then
 *                             dial9_dump(REASON) twice in a row; prints
 *                             "wakes N", "dump1 RC ERRNO", "dump2 RC ERRNO".
 *   flight_dump bulk SECONDS  condvar signals for SECONDS, prints "wakes N",
 *                             then dial9_dump("bulk") and "dump RC ERRNO".
 *   flight_dump slow SECONDS  one mmap(MAP_POPULATE) of 128 MiB (a slow
 *                             syscall), prints "slow", sleeps SECONDS.
 * dial9_dump is looked up with dlsym, so the program runs without the agent. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static int dump(const char *reason, int *err)
{
    int (*fn)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "dial9_dump");
    if (!fn) {
        *err = ENOSYS;
        return -1;
    }
    errno = 0;
    int rc = fn(reason);
    *err = rc ? errno : 0;
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int err, rc;
    if (argc == 4 && !strcmp(argv[1], "api")) {
        long n = atol(argv[2]);
        for (long i = 0; i < n; i++)
            pthread_cond_signal(&cv);
        printf("wakes %ld\n", n);
        rc = dump(argv[3], &err);
        printf("dump1 %d %d\n", rc, err);
        rc = dump(argv[3], &err);
        printf("dump2 %d %d\n", rc, err);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "bulk")) {
        double end = now() + atof(argv[2]);
        long n = 0;
        while (now() < end)
            for (int i = 0; i < 1000; i++, n++)
                pthread_cond_signal(&cv);
        printf("wakes %ld\n", n);
        rc = dump("bulk", &err);
        printf("dump %d %d\n", rc, err);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "slow")) {
        size_t len = 128u << 20;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p != MAP_FAILED)
            munmap(p, len);
        printf("slow\n");
        fflush(stdout);
        struct timespec ts = {.tv_sec = atol(argv[2])};
        nanosleep(&ts, NULL);
        return 0;
    }
    fprintf(stderr, "usage: %s api N REASON | bulk SECONDS | slow SECONDS\n", argv[0]);
    return 2;
}
