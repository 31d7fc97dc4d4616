/* syscall_close.c - fds closed through libc's syscall(), then their
 * numbers taken by an fd the agent does not track (memfd_create).
 * For each of SYS_close and SYS_close_range: an eventfd gets one 8-byte
 * write (a wake), is closed through syscall(), a memfd takes its number
 * (the lowest free), and gets three 8-byte writes (no wake: nothing waits
 * on a memfd); the memfd stays open, so the two rounds use two numbers.
 * Prints "eventfd FD wakes 1 memfd FD writes 3" for each, and exits 0; 1
 * when a call fails or the memfd got another number. */
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int round_trip(long nr)
{
    uint64_t one = 1;
    int efd = eventfd(0, 0);
    if (efd < 0 || write(efd, &one, 8) != 8)
        return 1;
    long r = nr == SYS_close ? syscall(SYS_close, efd) : syscall(SYS_close_range, efd, efd, 0);
    int m = memfd_create("d9", 0);
    if (r != 0 || m != efd)
        return 1;
    for (int i = 0; i < 3; i++)
        if (write(m, &one, 8) != 8)
            return 1;
    printf("eventfd %d wakes 1 memfd %d writes 3\n", efd, m);
    return 0; /* m stays open: the next round's fds get other numbers */
}

int main(void) { return round_trip(SYS_close) || round_trip(SYS_close_range); }
