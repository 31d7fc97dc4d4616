/* handled_fault.c - what a fault the program's own handler recovers from
 * costs, as a JVM's implicit null checks and safepoint polls or V8's
 * WebAssembly bounds checks do: N times, a page is made PROT_NONE and
 * written; the SIGSEGV handler makes it writable again and returns, and
 * the write runs again. Prints the wall ns per fault (two mprotect calls,
 * the signal's delivery and return). Run it with and without the agent,
 * interleaved: the difference is what the agent's crash handler adds to a
 * fault it hands to the program's handler (agent/crash.c, chain_fault;
 * docs/BENCH-HISTORY.md, session 44).
 * usage: handled_fault N   (N 1-10000000) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char *page;
static size_t page_size;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if ((char *)si->si_addr != page || mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0)
        abort();
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc == 2 ? atol(argv[1]) : 0;
    if (n < 1 || n > 10000000) {
        fprintf(stderr, "usage: %s N   (N 1-10000000)\n", argv[0]);
        return 2;
    }
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (page == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL) != 0)
        return 1;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (mprotect(page, page_size, PROT_NONE) != 0)
            return 1;
        ((volatile char *)page)[0] = 1;
    }
    printf("%.0f ns per handled fault\n", (now_ns() - t0) / (double)n);
    return 0;
}
