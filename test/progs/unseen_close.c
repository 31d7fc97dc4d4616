/* unseen_close.c - fds closed where no close() call of the program's
 * shows it: through libc's syscall() (SYS_close, SYS_close_range), inside
 * fclose (a FILE made by fdopen) and inside closedir (a DIR whose fd was
 * replaced by dup2). In each round an eventfd number gets one 8-byte write
 * (a wake), is closed that way, a memfd takes the number (the lowest free:
 * memfd_create is not interposed, so the agent learns nothing of it) and
 * gets three 8-byte writes (no wake: nothing waits on a memfd). Every fd
 * made stays open, so the rounds use four numbers. Prints "HOW fd N wakes
 * 1 memfd N writes 3" a round, and exits 0; 1 when a call fails or the
 * memfd got another number. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const uint64_t one = 1;

/* fd was written to once and has just been closed: a memfd on its number
 * gets three writes. */
static int reuse(const char *how, int fd)
{
    int m = memfd_create("d9", 0);
    if (m != fd)
        return 1;
    for (int i = 0; i < 3; i++)
        if (write(m, &one, 8) != 8)
            return 1;
    printf("%s fd %d wakes 1 memfd %d writes 3\n", how, fd, m);
    return 0;
}

static int round_trip(const char *how)
{
    if (!strcmp(how, "closedir")) {
        DIR *d = opendir("/");
        int n = d ? dirfd(d) : -1, efd = eventfd(0, 0); /* efd above n */
        if (n < 0 || efd < 0 || dup2(efd, n) != n || write(n, &one, 8) != 8 || closedir(d) != 0)
            return 1;
        return reuse(how, n); /* efd stays open: the memfd takes n */
    }
    int efd = eventfd(0, 0);
    if (efd < 0 || write(efd, &one, 8) != 8)
        return 1;
    long r;
    if (!strcmp(how, "syscall_close"))
        r = syscall(SYS_close, efd);
    else if (!strcmp(how, "syscall_close_range"))
        r = syscall(SYS_close_range, efd, efd, 0);
    else {
        FILE *f = fdopen(efd, "w");
        r = f ? fclose(f) : -1;
    }
    return r != 0 || reuse(how, efd);
}

int main(void)
{
    return round_trip("syscall_close") || round_trip("syscall_close_range") || round_trip("fclose") ||
           round_trip("closedir");
}
