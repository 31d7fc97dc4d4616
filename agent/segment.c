/* segment.c - segment files and the process directory (segment.h). */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "encode.h"
#include "log.h"

#define D9_CMDLINE_MAX 4096 /* bytes of /proc/self/cmdline kept in headers */
#define D9_NAME_MAX 64      /* segment / directory entry names */

static const struct d9_config *cfg;
static int base_fd = -1, proc_fd = -1, seg_fd = -1;
static char proc_path[D9_DIR_MAX + D9_NAME_MAX + 32];
static char exe[PATH_MAX], host[65];
static const char *exe_base = "unknown";
static char cmdline[D9_CMDLINE_MAX];
static size_t cmdline_len;
static uint32_t pid, seq, oldest_seq;
static uint64_t seg_size, seg_opened, sealed_total;
static int failed;
/* Header scratch, mapped once for max_threads entries. */
static uint32_t *hdr_tids;
static char (*hdr_names)[16];
static uint8_t *hdr_buf;
static size_t hdr_cap;

static int mkdir_p(const char *dir)
{
    char p[D9_DIR_MAX];
    size_t n = strlen(dir);
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0)
            continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return -1;
        p[i] = c;
    }
    return 0;
}

/* The base directory must not be someone else's: owned by us, or by root
 * and not writable by others unless sticky (like /tmp). */
static int dir_is_safe(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return 0;
    if (st.st_uid == geteuid())
        return 1;
    return st.st_uid == 0 && (!(st.st_mode & S_IWOTH) || (st.st_mode & S_ISVTX));
}

static void read_process_info(void)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *slash = strrchr(exe, '/');
    if (slash && slash[1])
        exe_base = slash + 1;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (cmdline_len < sizeof(cmdline) &&
               (r = read(fd, cmdline + cmdline_len, sizeof(cmdline) - cmdline_len)) > 0)
            cmdline_len += (size_t)r;
        close(fd);
    }
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(host, sizeof(host), "%s", u.nodename);
}

/* This process's id and the directory name it will record into. */
static void set_pid(void)
{
    pid = (uint32_t)getpid();
    snprintf(proc_path, sizeof(proc_path), "%s/%.40s.%u", cfg->dir, exe_base, pid);
}

/* Creates <exe>.<pid> under the base dir (.<pid>.N if a stale one exists).
 * Called for the first segment, so processes that record nothing (shell
 * wrappers, fork+exec children) leave no empty directory. */
static int make_proc_dir(void)
{
    char name[D9_NAME_MAX];
    for (int i = 1; i < 100; i++) {
        if (i == 1)
            snprintf(name, sizeof(name), "%.40s.%u", exe_base, pid);
        else
            snprintf(name, sizeof(name), "%.40s.%u.%d", exe_base, pid, i);
        if (mkdirat(base_fd, name, 0700) == 0 || errno != EEXIST)
            break;
    }
    snprintf(proc_path, sizeof(proc_path), "%s/%s", cfg->dir, name);
    proc_fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (proc_fd < 0) {
        d9_log("cannot create %s: %s; not recording", proc_path, strerror(errno));
        failed = 1;
        return -1;
    }
    return 0;
}

int d9_seg_init(const struct d9_config *c)
{
    cfg = c;
    hdr_cap = 4096 + sizeof(exe) + sizeof(cmdline) + sizeof(host) + (size_t)c->max_threads * (4 + 1 + 16);
    size_t bytes = hdr_cap + (size_t)c->max_threads * (4 + 16);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        d9_log("cannot map %zu bytes for segment headers: %s; not recording", bytes, strerror(errno));
        return -1;
    }
    hdr_buf = m;
    hdr_tids = (uint32_t *)(hdr_buf + hdr_cap);
    hdr_names = (char (*)[16])(hdr_tids + c->max_threads);
    if (mkdir_p(c->dir) < 0 ||
        (base_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        d9_log("DIAL9_DIR=%s: cannot create: %s; not recording", c->dir, strerror(errno));
        return -1;
    }
    if (!dir_is_safe(base_fd)) {
        d9_log("DIAL9_DIR=%s: belongs to another user or is writable by others; not recording", c->dir);
        return -1;
    }
    read_process_info();
    set_pid();
    return 0;
}

const char *d9_seg_dir_path(void) { return proc_path; }
int d9_seg_failed(void) { return failed; }
int d9_seg_is_open(void) { return seg_fd >= 0; }
uint64_t d9_seg_size(void) { return seg_size; }
uint64_t d9_seg_opened_ns(void) { return seg_opened; }

static void seg_name(char *out, size_t cap, uint32_t n, int open)
{
    snprintf(out, cap, "%06u%s", n, open ? D9_SEG_OPEN_SUFFIX : D9_SEG_SUFFIX);
}

/* CLOCK_REALTIME/CLOCK_MONOTONIC pair read back to back: of 3 tries, the
 * one whose two monotonic reads are closest; monotonic = their midpoint. */
static void read_anchor(uint64_t *real, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec r;
        uint64_t m0 = d9_now();
        clock_gettime(CLOCK_REALTIME, &r);
        uint64_t m1 = d9_now();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
            *mono = m0 + (m1 - m0) / 2;
        }
    }
}

static int fail(const char *what, const char *file)
{
    d9_log("%s %s/%s: %s; recording stopped", what, proc_path, file, strerror(errno));
    failed = 1;
    if (seg_fd >= 0)
        close(seg_fd);
    seg_fd = -1;
    return -1;
}

int d9_seg_open(void)
{
    if (failed || (proc_fd < 0 && make_proc_dir() < 0))
        return -1;
    char name[D9_NAME_MAX];
    seg_name(name, sizeof(name), seq, 1);
    seg_fd = openat(proc_fd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (seg_fd < 0)
        return fail("cannot create", name);
    struct d9_header_info h = {
        .pid = pid, .seq = seq, .exe = exe, .hostname = host, .clock = "monotonic",
        .agent_version = D9_AGENT_VERSION, .cmdline = cmdline, .cmdline_len = cmdline_len,
        .tids = hdr_tids, .names = (const char (*)[16])hdr_names};
    read_anchor(&h.anchor_real_ns, &h.anchor_mono_ns);
    for (uint32_t i = 0, n = d9_slot_limit(); i < n && h.nthreads < cfg->max_threads; i++) {
        struct d9_slot *s = d9_slot_at(i);
        if (atomic_load_explicit(&s->state, memory_order_acquire) != D9_SLOT_LIVE)
            continue;
        hdr_tids[h.nthreads] = s->tid;
        memcpy(hdr_names[h.nthreads], s->name, 16);
        h.nthreads++;
    }
    size_t len = d9_header_build(hdr_buf, hdr_cap, &h);
    seg_size = 0;
    seg_opened = d9_now();
    if (len == 0) {
        errno = ENOBUFS;
        return fail("header does not fit for", name);
    }
    return d9_seg_write(hdr_buf, len);
}

int d9_seg_write(const void *buf, size_t len)
{
    if (seg_fd < 0)
        return -1;
    const uint8_t *p = buf;
    uint64_t good = seg_size; /* the file ends after a whole block here */
    while (len) {
        ssize_t w = write(seg_fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            char name[D9_NAME_MAX];
            seg_name(name, sizeof(name), seq, 1);
            if (w == 0)
                errno = ENOSPC;
            int err = errno;
            /* Disk full: cut the partial block and seal what is whole, so
             * the file stays valid to the end. */
            if (good == 0) /* not even a header: nothing worth keeping */
                unlinkat(proc_fd, name, 0);
            else if (ftruncate(seg_fd, (off_t)good) == 0) {
                seg_size = good;
                d9_seg_seal();
            }
            errno = err;
            return fail("writing", name);
        }
        p += w;
        len -= (size_t)w;
        seg_size += (uint64_t)w;
    }
    return 0;
}

/* Deletes the oldest sealed segments until they fit the budget: the total
 * size minus room for one full open segment, so sealed + open stays
 * within DIAL9_MAX_TOTAL_SIZE. */
static void retention(void)
{
    uint64_t budget = cfg->max_total_size > cfg->max_file_size ? cfg->max_total_size - cfg->max_file_size : 0;
    while (sealed_total > budget && oldest_seq < seq) {
        char name[D9_NAME_MAX];
        struct stat st;
        seg_name(name, sizeof(name), oldest_seq++, 0);
        if (fstatat(proc_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* already removed by someone else */
        if (unlinkat(proc_fd, name, 0) == 0)
            sealed_total -= (uint64_t)st.st_size < sealed_total ? (uint64_t)st.st_size : sealed_total;
    }
}

void d9_seg_seal(void)
{
    if (seg_fd < 0)
        return;
    char from[D9_NAME_MAX], to[D9_NAME_MAX];
    seg_name(from, sizeof(from), seq, 1);
    seg_name(to, sizeof(to), seq, 0);
    close(seg_fd);
    seg_fd = -1;
    if (renameat(proc_fd, from, proc_fd, to) < 0) {
        fail("cannot seal", from);
        return;
    }
    sealed_total += seg_size;
    seq++;
    retention();
}

void d9_seg_after_fork_child(void)
{
    if (seg_fd >= 0)
        close(seg_fd);
    if (proc_fd >= 0)
        close(proc_fd);
    seg_fd = proc_fd = -1;
    seq = oldest_seq = 0;
    seg_size = sealed_total = 0;
    failed = 0;
    set_pid();
}
