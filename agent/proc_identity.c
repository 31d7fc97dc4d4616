/* proc_identity.c - this process's D9_TLV_PROCESS value and the name of
 * its trace directory (proc_identity.h). */
#include "proc_identity.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *last_part(const char *path)
{
    if (!path)
        return NULL;
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
        return NULL;
    return b[strspn(b, "0123456789")] ? b : NULL;
}

const char *d9_exec_name(const char *execfn, const char *exe)
{
    int via_proc = execfn && (!strncmp(execfn, "/proc/", 6) || !strncmp(execfn, "/dev/fd/", 8));
    const char *b = via_proc ? NULL : last_part(execfn);
    if (!b)
        b = last_part(exe);
    return b ? b : "unknown";
}

int d9_stat_start_ticks(const char *line, size_t n, uint64_t *out)
{
    const char *p = NULL;
    for (size_t i = n; i > 0; i--)
        if (line[i - 1] == ')') {
            p = line + i;
            break;
        }
    if (!p)
        return -1;
    const char *end = line + n;
    for (int field = 2; field < 22; field++) { /* p is at the end of field `field` */
        if (p == end || *p != ' ')
            return -1;
        p++;
        if (field < 21)
            while (p < end && *p != ' ')
                p++;
    }
    uint64_t v = 0;
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9' && v <= (UINT64_MAX - 9) / 10)
        v = v * 10 + (uint64_t)(*p++ - '0');
    if (p == digits || (p < end && *p != ' ' && *p != '\n'))
        return -1;
    *out = v;
    return 0;
}

/* Up to cap - 1 bytes of a small file, NUL-terminated. Bytes read, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    size_t got = 0;
    ssize_t r = 0;
    while (got < cap - 1 && ((r = read(fd, buf + got, cap - 1 - got)) > 0 || (r < 0 && errno == EINTR)))
        got += r > 0 ? (size_t)r : 0;
    int err = errno;
    close(fd);
    errno = err;
    buf[got] = 0;
    return r < 0 ? -1 : (ssize_t)got;
}

int d9_proc_identity_read(struct d9_proc_identity *id)
{
    memset(id, 0, sizeof(*id));
    char line[1024]; /* comm is at most 16 bytes: the line fits */
    ssize_t n = read_small("/proc/self/stat", line, sizeof(line));
    if (n < 0)
        return -1;
    if (d9_stat_start_ticks(line, (size_t)n, &id->start_ticks) < 0) {
        errno = EINVAL;
        return -1;
    }
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0)
        id->pidns = (uint64_t)st.st_ino;
    char boot[64];
    n = read_small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
    size_t k = 0;
    while (n > 0 && k < D9_BOOT_ID_MAX && k < (size_t)n && boot[k] != '\n')
        k++;
    memcpy(id->boot_id, boot, n > 0 ? k : 0);
    return 0;
}
