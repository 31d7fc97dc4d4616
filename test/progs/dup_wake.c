/* dup_wake.c - writes through a copy of an eventfd are wakes, however the
 * copy was made (dup, dup3, fcntl F_DUPFD_CLOEXEC). For each copy it
 * prints "copy FD wakes N ORIGINAL", the ground truth for test_fd_copy:
 * N 8-byte writes through FD; ORIGINAL is "closed" when the eventfd copied
 * was closed meanwhile (by test/preload/close_after_dup.so, which closes
 * the fd named by close_after_dup_fd right after the copy, as another
 * thread could), "open" otherwise. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define WAKES 5

int main(void)
{
    int *target = dlsym(RTLD_DEFAULT, "close_after_dup_fd"); /* NULL without the preload */
    for (int how = 0; how < 3; how++) {
        int e = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e < 0)
            return 1;
        if (target)
            *target = e;
        int c = how == 0 ? dup(e) : how == 1 ? dup3(e, 100, O_CLOEXEC) : fcntl(e, F_DUPFD_CLOEXEC, 200);
        if (c < 0)
            return 1;
        int closed = fcntl(e, F_GETFD) < 0 && errno == EBADF;
        uint64_t one = 1, sum;
        for (int i = 0; i < WAKES; i++)
            if (write(c, &one, 8) != 8)
                return 1;
        if (read(c, &sum, 8) != 8 || sum != WAKES)
            return 1;
        printf("copy %d wakes %d %s\n", c, WAKES, closed ? "closed" : "open");
        close(c);
        if (!closed)
            close(e);
    }
    return 0;
}
