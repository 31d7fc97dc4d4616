/* self_signal.c - SIGUSR2 (the agent's default dump signal) used by the
 * program itself: its handler counts, a thread signals itself 3 times with
 * pthread_kill (as HotSpot suspends threads), then the process sends
 * itself one with kill(2). 300 ms after each for the agent's writer.
 * Prints "self_signal: handled N" (4 with or without the agent). Under the
 * agent with DIAL9_QUIET=0 and DIAL9_DUMP_MIN_INTERVAL_MS=0, only the
 * kill(2) asks for a dump: one "dial9: dump" line. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_int handled;

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void pause_ms(long ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

int main(void)
{
    signal(SIGUSR2, on_usr2);
    for (int i = 0; i < 3; i++) {
        pthread_kill(pthread_self(), SIGUSR2);
        pause_ms(300);
    }
    kill(getpid(), SIGUSR2);
    pause_ms(300);
    printf("self_signal: handled %d\n", atomic_load(&handled));
    return 0;
}
