/* file_io.c - a program that counts its own file, pipe and socket I/O, so
 * a test can check which calls dial9 times as slow syscalls: every read,
 * write, pread and pwrite on a regular file (each moves 256 KiB, so each
 * takes well over the 1 us threshold the test sets), none on a pipe or a
 * socket (waiting there is waiting for a peer, not a stall).
 *
 *   file_io DIR    works on DIR/file_io.dat (created, then removed)
 *
 * Prints "pid PID", "file FD", "pipe RFD WFD", "socket FD0 FD1" and "calls NAME N"
 * for each call it made on the regular file (pread64 and pwrite64 count as
 * pread and pwrite: dial9 names them so).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (256 * 1024)
#define EACH 4 /* calls of each function */

static char buf[CHUNK];

static void must(int ok, const char *what)
{
    if (!ok) {
        perror(what);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: file_io DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/file_io.dat", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    must(fd >= 0, "open");
    memset(buf, 'x', sizeof(buf));
    int writes = 0, pwrites = 0, reads = 0, preads = 0;
    for (int i = 0; i < EACH; i++, writes++)
        must(write(fd, buf, CHUNK) == CHUNK, "write");
    for (int i = 0; i < EACH; i++, pwrites += 2) {
        must(pwrite(fd, buf, CHUNK, (off_t)i * CHUNK) == CHUNK, "pwrite");
        must(pwrite64(fd, buf, CHUNK, (off64_t)i * CHUNK) == CHUNK, "pwrite64");
    }
    for (int i = 0; i < EACH; i++, preads += 2) {
        must(pread(fd, buf, CHUNK, (off_t)i * CHUNK) == CHUNK, "pread");
        must(pread64(fd, buf, CHUNK, (off64_t)i * CHUNK) == CHUNK, "pread64");
    }
    must(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    for (int i = 0; i < EACH; i++, reads++)
        must(read(fd, buf, CHUNK) == CHUNK, "read");

    int p[2], s[2];
    must(pipe(p) == 0, "pipe");
    must(socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0, "socketpair");
    for (int i = 0; i < 20; i++) {
        must(write(p[1], "p", 1) == 1 && read(p[0], buf, 1) == 1, "pipe I/O");
        must(write(s[0], "s", 1) == 1 && read(s[1], buf, 1) == 1, "socket I/O");
    }
    printf("pid %d\nfile %d\npipe %d %d\nsocket %d %d\n", (int)getpid(), fd, p[0], p[1], s[0], s[1]);
    printf("calls write %d\ncalls pwrite %d\ncalls pread %d\ncalls read %d\n", writes, pwrites, preads, reads);
    close(fd);
    unlink(path);
    return 0;
}
