/* unseen_close.c - fds closed where no close() call of the program's
 * shows it: through libc's syscall() (SYS_close, SYS_close_range,
 * SYS_dup2 onto it), inside fclose (a FILE made by fdopen), inside
 * closedir (a DIR whose fd was replaced by dup2) and inside freopen. In
 * each round an eventfd number gets one 8-byte write (a wake), is closed
 * that way, something the agent learns nothing of takes the number (a
 * memfd: memfd_create is not interposed; /dev/null opened inside freopen)
 * and gets three 8-byte writes (no wake: nothing waits on those). Every fd
 * made stays open, so the rounds use six numbers. Prints "HOW fd N wakes 1
 * WHAT N writes 3" a round, and exits 0; 1 when a call fails or the new
 * fd got another number. */
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
static int writes(const char *how, int fd, const char *now);

static int reuse(const char *how, int fd)
{
    return memfd_create("d9", 0) != fd || writes(how, fd, "memfd");
}

/* fd got one wake; three 8-byte writes to what is on its number now. */
static int writes(const char *how, int fd, const char *now)
{
    for (int i = 0; i < 3; i++)
        if (write(fd, &one, 8) != 8)
            return 1;
    printf("%s fd %d wakes 1 %s %d writes 3\n", how, fd, now, fd);
    return 0;
}

static int round_trip(const char *how)
{
    if (!strcmp(how, "syscall_dup2")) { /* a memfd copied onto the eventfd's number */
        int efd = eventfd(0, 0), m = memfd_create("d9", 0);
        if (efd < 0 || m < 0 || write(efd, &one, 8) != 8 || syscall(SYS_dup2, m, efd) != efd)
            return 1;
        return writes(how, efd, "memfd");
    }
    if (!strcmp(how, "freopen")) { /* /dev/null opened on the eventfd's number */
        int efd = eventfd(0, 0);
        FILE *f = efd < 0 || write(efd, &one, 8) != 8 ? NULL : fdopen(efd, "w");
        f = f ? freopen("/dev/null", "w", f) : NULL;
        if (!f || fileno(f) != efd)
            return 1;
        return writes(how, efd, "file");
    }
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
           round_trip("closedir") || round_trip("syscall_dup2") || round_trip("freopen");
}
