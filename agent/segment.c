/* segment.c - segment files and the process directory (segment.h). */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "core.h"
#include "crash.h"
#include "encode.h"
#include "fd_lift.h"
#include "log.h"
#include "proc_identity.h"
#include "real.h"

#define D9_NAME_MAX 64      /* segment / directory entry names */

static const struct d9_config *cfg;
/* The agent's own fds, read by the close interposers of any thread. */
enum { FD_BASE, FD_PROC, FD_SEG, FD_N };
static _Atomic int own[FD_N] = {-1, -1, -1};
static _Atomic unsigned lost;      /* bit i: the host closed own[i] */
static _Atomic uint32_t section;   /* odd while the writer uses its fds (futex word) */
static _Atomic int waiters;       /* closers in wait_section */
static _Atomic int exec_pending;
static char base_path[PATH_MAX + D9_DIR_MAX]; /* DIAL9_DIR made absolute (daemons chdir) */
static char proc_name[D9_NAME_MAX];           /* <exe>.<pid>[.N] once created */
static dev_t base_dev, proc_dev, seg_dev;
static ino_t base_ino, proc_ino, seg_ino;
static int proc_known; /* proc_dev/ino read (not yet when a raw close took the new fd) */
static char proc_path[sizeof(base_path) + D9_NAME_MAX];
static char exe[PATH_MAX], host[65];
static char exe_base[41] = "unknown"; /* the directory's name before .<pid> (d9_exec_name) */
static char cmdline[D9_CMDLINE_MAX];
static size_t cmdline_len;
static char dump_reason[D9_SEG_REASON_MAX]; /* "": none */
static uint32_t pid, seq, oldest_seq;
static struct d9_proc_identity ident;
static _Atomic int ident_known; /* ident holds this process's (read by the crash handler) */
static uint64_t seg_size, seg_opened, sealed_total;
static uint64_t seg_hdr_len; /* bytes of the open segment's header */
static int failed;             /* for good */
static int not_handed;         /* d9_seg_hand_to could not give the directory away */
#define D9_NOT_HANDED UINT32_MAX
static _Atomic uint32_t handed = D9_NOT_HANDED; /* the uid the directory was given to */
static uint64_t retry_at;      /* in an outage: no attempt before then (0: none) */
/* Header scratch, mapped once for max_threads entries. */
static uint32_t *hdr_tids;
static char (*hdr_names)[16];
static uint8_t *hdr_buf;
static size_t hdr_cap;

static int fd_of(int i) { return atomic_load_explicit(&own[i], memory_order_relaxed); }
static void set_fd(int i, int fd) { atomic_store(&own[i], fd); }

/* Closes own fd i (ours: the host did not close it). */
static void drop_fd(int i)
{
    int fd = fd_of(i);
    set_fd(i, -1); /* first: a racing closer no longer matches it */
    if (fd >= 0)
        close(fd);
}

/* ---- Fds closed by the host -------------------------------------------- */

/* A host close must never take a number the writer uses without the writer
 * knowing: the host may reuse it, and trace bytes would go to the host's
 * file. Every host close counts itself as begun before it looks at own[]
 * and as ended after the real call.
 * - A thread with a slot counts in it (closes_begun, closes_ended: one
 *   unlocked instruction each, no line shared with other threads) once
 *   membarrier is registered (barrier.h); its loads after the count are
 *   ordered by a compiler barrier, and the writer makes every thread pass
 *   a full barrier before it reads the counts. Other threads (no slot yet,
 *   or none left) count in the two globals, seq_cst.
 * - An fd the writer makes is stored in own[] at once; a close that starts
 *   later sees it. A close that may have missed it (one in flight or begun
 *   since the writer read the counts before the open) makes the writer
 *   wait until each such close has ended and then check, by name, that the
 *   number still names the file it opened (open_own). The open itself
 *   holds no gate: on a hung DIAL9_DIR (NFS) it may block for minutes, and
 *   the host's closes go on.
 * - A close that hits one of own[] marks it lost and, while a writer
 *   section is open, waits for it to end; a section starts by making
 *   `section` odd and then reading `lost`. Both sides are seq_cst: either
 *   the writer sees the mark, or the closer sees the section and waits, so
 *   the writer never uses a number the host has closed (and may reuse).
 * - The writer's short-lived procfs fd (a thread's name) is made under
 *   `opening`: closes that start meanwhile wait for it to be closed. The
 *   writer waits for closes in flight at most D9_SEG_GATE_MS (a closer that
 *   longjmps out of a signal handler never ends). */
#define D9_SEG_GATE_MS 50
static struct {
    _Alignas(64) _Atomic uint32_t started; /* closes by threads without a slot */
    _Atomic uint32_t ended;                /* futex word: the writer's drain sleeps on it */
} slotless;
/* Read by every close: a line no close writes. */
static _Alignas(64) _Atomic uint32_t opening; /* futex word: 1 while the writer holds a procfs fd */
static _Atomic uint32_t draining;             /* 1 while the writer waits for closes to end */

/* Host threads call these: errno is kept. */
static void wait_word(_Atomic uint32_t *w, uint32_t v, long ns)
{
    int err = errno;
    struct timespec tick = {0, ns};
    d9_futex(w, FUTEX_WAIT_PRIVATE, v, &tick);
    errno = err;
}

static void wait_section(uint32_t s)
{
    atomic_fetch_add(&waiters, 1);
    while (atomic_load(&section) == s)
        wait_word(&section, s, 10000000);
    atomic_fetch_sub(&waiters, 1);
}

/* +1 in one instruction: a signal handler's close on the same thread
 * comes before or after it, never inside. */
static inline void count_up(uint32_t *c) { __asm__ volatile("incl %0" : "+m"(*c)::"memory"); }
static inline uint32_t count_of(const uint32_t *c) { return __atomic_load_n(c, __ATOMIC_RELAXED); }

/* A close by me's owner begins: its loads that follow (opening, own[]) stay
 * after the count; the writer's d9_barrier_all does the rest. */
static inline void count_begun(struct d9_slot *me)
{
    count_up(&me->closes_begun);
    atomic_signal_fence(memory_order_seq_cst);
}

/* The writer's drain sleeps on slotless.ended: wake it. Preserves errno. */
static __attribute__((noinline, cold)) void wake_drain(void)
{
    int err = errno;
    d9_futex(&slotless.ended, FUTEX_WAKE_PRIVATE, 1, NULL);
    errno = err;
}

static __attribute__((noinline)) void close_end_slotless(void)
{
    uint32_t e = atomic_fetch_add(&slotless.ended, 1) + 1;
    if (atomic_load(&draining) && e == atomic_load(&slotless.started))
        wake_drain();
}

/* Every host close runs this: the slot's case saves no register and makes
 * no call (callgrind: 14 -> 8 instructions). */
void d9_seg_close_end(uint32_t *ended)
{
    if (D9_UNLIKELY(ended == (uint32_t *)&slotless.ended)) {
        close_end_slotless();
        return;
    }
    count_up(ended);
    if (D9_UNLIKELY(atomic_load_explicit(&draining, memory_order_relaxed)))
        wake_drain();
}

/* Bit i: own[i] is in [first, last] (first <= last). */
static inline unsigned own_hit(unsigned first, unsigned last)
{
    unsigned hit = 0;
#pragma GCC unroll FD_N /* FD_N loads and compares, no loop: every host close runs it */
    for (int i = 0; i < FD_N; i++) {
        int fd = fd_of(i);
        hit |= (unsigned)(fd >= 0 && (unsigned)fd - first <= last - first) << i;
    }
    return hit;
}

/* own_hit(first, last) != 0, a close's (first == last) case as one compare
 * an fd: an unused own[i] is -1, which no fd in [0, INT_MAX] equals. */
static inline int own_any(unsigned first, unsigned last)
{
    if (first != last || (int)first < 0)
        return own_hit(first, last) != 0;
#pragma GCC unroll FD_N
    for (int i = 0; i < FD_N; i++)
        if (fd_of(i) == (int)first)
            return 1;
    return 0;
}

/* d9_seg_close_begin's every other case: counts in the globals (no slot:
 * mine NULL), waits out a procfs fd, marks a hit. mine: the slot whose
 * closes_begun this close already counted in. */
static __attribute__((noinline)) uint32_t *close_begin_slow(unsigned first, unsigned last, struct d9_slot *mine)
{
    uint32_t *ended = mine ? &mine->closes_ended : (uint32_t *)&slotless.ended;
    for (int counted = !!mine;; counted = 0) {
        if (!counted) {
            if (mine)
                count_begun(mine);
            else
                atomic_fetch_add(&slotless.started, 1);
        }
        /* A procfs fd in no own[] slot: wait until it is closed. */
        if (atomic_load_explicit(&opening, mine ? memory_order_relaxed : memory_order_seq_cst)) {
            d9_seg_close_end(ended);
            while (atomic_load(&opening))
                wait_word(&opening, 1, 10000000);
            continue;
        }
        unsigned hit = own_hit(first, last);
        if (!hit)
            return ended;
        atomic_fetch_or(&lost, hit);
        uint32_t s = atomic_load(&section);
        if (!(s & 1))
            return ended; /* a section that starts now sees the mark */
        d9_seg_close_end(ended); /* the section may need to make an fd to finish */
        wait_section(s);
    }
}

uint32_t *d9_seg_close_begin(unsigned first, unsigned last)
{
    struct d9_slot *me = d9_self;
    if (D9_LIKELY(me && !d9_exited && atomic_load_explicit(&d9_barrier_ok, memory_order_relaxed))) {
        count_begun(me);
        if (D9_LIKELY(!atomic_load_explicit(&opening, memory_order_relaxed) && !own_any(first, last)))
            return &me->closes_ended;
    } else {
        me = NULL;
    }
    return close_begin_slow(first, last, me);
}

/* Makes the counts of closes counted in their slots visible to the writer.
 * Without membarrier no close counts in a slot (d9_seg_close_begin): the
 * globals' seq_cst order is enough, and there is nothing to wait for. */
static void see_slot_counts(void)
{
    if (atomic_load(&d9_barrier_ok))
        d9_barrier_all();
}

/* The closes begun so far, all threads; with ended, also those ended,
 * read first (a close in flight then shows as begun != ended). */
static uint32_t close_counts(uint32_t *ended)
{
    uint32_t n = d9_slot_limit();
    if (ended) {
        uint32_t e = atomic_load(&slotless.ended);
        for (uint32_t i = 0; i < n; i++)
            e += count_of(&d9_slot_at(i)->closes_ended);
        *ended = e;
    }
    uint32_t b = atomic_load(&slotless.started);
    for (uint32_t i = 0; i < n; i++)
        b += count_of(&d9_slot_at(i)->closes_begun);
    return b;
}

/* 1 while a close counted in slot i (or, i == n, in the globals) is in flight. */
static int in_flight(uint32_t i, uint32_t n)
{
    if (i == n)
        return atomic_load(&slotless.ended) != atomic_load(&slotless.started);
    struct d9_slot *s = d9_slot_at(i);
    return count_of(&s->closes_ended) != count_of(&s->closes_begun);
}

/* Waits until every host close begun before the call has ended, one
 * counter at a time, D9_SEG_GATE_MS at most (then goes on: a close that
 * never ends is a raw close, as without the gate). */
static void closes_drained(void)
{
    see_slot_counts();
    atomic_store(&draining, 1);
    uint64_t deadline = d9_now() + (uint64_t)D9_SEG_GATE_MS * 1000000u;
    uint32_t n = d9_slot_limit();
    for (uint32_t i = 0; i <= n && d9_now() < deadline;) {
        uint32_t e = atomic_load(&slotless.ended);
        if (in_flight(i, n))
            wait_word(&slotless.ended, e, 200000); /* a close's end wakes it while draining */
        else
            i++;
    }
    atomic_store(&draining, 0);
}

static void gate_enter(void)
{
    atomic_store(&opening, 1);
    closes_drained(); /* its barrier: a close that missed `opening` is counted */
}

static void gate_leave(void)
{
    atomic_store(&opening, 0);
    d9_futex(&opening, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

void d9_seg_gate(int on)
{
    if (on)
        gate_enter();
    else
        gate_leave();
}

static void seal_lost(void);
static void verify_fds(void);
static int refresh_dirs(void);

/* Forgets the own fds the host closed: never close or use those numbers
 * again. Returns their bits. */
static unsigned forget_lost(void)
{
    unsigned l = atomic_exchange(&lost, 0);
    for (int i = 0; i < FD_N; i++)
        if (l & (1u << i))
            set_fd(i, -1);
    return l;
}

static void enter(void)
{
    atomic_fetch_add(&section, 1);
    unsigned l = forget_lost();
    if (l & (1u << FD_SEG))
        seal_lost();
    verify_fds();
}

static void leave(void)
{
    atomic_fetch_add(&section, 1);
    if (atomic_load(&waiters)) /* a missed wake costs a waiter one 10 ms tick */
        d9_futex(&section, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

static void read_process_info(void)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf(exe_base, sizeof(exe_base), "%s", d9_exec_name((const char *)getauxval(AT_EXECFN), exe));
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

/* This process's id, identity and the directory name it will record into.
 * Runs where no other thread of the process can close fds (the constructor,
 * fork's child handler): the identity's /proc reads are safe there. */
static void set_pid(void)
{
    pid = (uint32_t)getpid();
    atomic_store(&ident_known, 0);
    if (d9_proc_identity_read(&ident) == 0)
        atomic_store_explicit(&ident_known, 1, memory_order_release);
    proc_name[0] = 0;
    proc_known = 0;
    snprintf(proc_path, sizeof(proc_path), "%s/%.40s.%u", base_path, exe_base, pid);
}

static int mkdir_p(const char *dir)
{
    char p[sizeof(base_path)];
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
static int dir_is_safe(const struct stat *st)
{
    if (st->st_uid == geteuid())
        return 1;
    return st->st_uid == 0 && (!(st->st_mode & S_IWOTH) || (st->st_mode & S_ISVTX));
}

/* ---- Faults ------------------------------------------------------------ */

static int stop(const char *fmt, const char *arg)
{
    d9_log(fmt, arg);
    failed = 1;
    drop_fd(FD_SEG);
    return -1;
}

/* A fault that may pass: log it once per outage; no attempt until
 * retry_at. errno says why. */
static int suspend(const char *what, const char *where)
{
    if (!retry_at)
        d9_log("%s %s: %s; keeping at most %llu bytes of trace in memory (DIAL9_FLIGHT_MAX_BYTES) and retrying "
               "every %d ms",
               what, where, strerror(errno), (unsigned long long)cfg->flight_max_bytes, D9_SEG_RETRY_MS);
    retry_at = d9_now() + (uint64_t)D9_SEG_RETRY_MS * 1000000u;
    drop_fd(FD_SEG);
    return 0;
}

int d9_seg_resume(void)
{
    if (!retry_at || d9_seg_failed())
        return 0;
    retry_at = 0;
    return 1;
}

void d9_seg_retry_now(void)
{
    if (retry_at)
        retry_at = 1; /* past, and still an outage: a new fault is not logged again */
}

int d9_seg_stopped(void) { return failed; }

int d9_seg_failed(void)
{
    if (failed)
        return 1;
    if (retry_at && d9_now() < retry_at)
        return 1;
    return 0;
}

/* ---- Directories ------------------------------------------------------- */

/* Moves own fd i, just opened and known to be ours, off 0-2 (fd_lift.h:
 * only a program started with them closed has it there). Under the gate:
 * no host close runs while two numbers name the file, so the low one is
 * still ours when closed here, unless a close marked it lost before (the
 * section then forgets it). Returns own fd i. */
static int lift_own(int i)
{
    int fd = fd_of(i);
    if (fd >= 3)
        return fd; /* the common case: no gate */
    gate_enter();
    int hi = atomic_load(&lost) & (1u << i) ? -1 : d9_fd_lift(fd, D9_FD_ABOVE_STDIO);
    if (hi >= 0) {
        set_fd(i, hi);
        close(fd);
    }
    gate_leave();
    return fd_of(i);
}

/* Opens name at dirfd as own fd i; st gets its identity. Returns the fd,
 * -1 when the open failed (errno), or -2 with errno EBADF when a host
 * close took it before it was in own[] (a close loop, close_range, or a
 * raw syscall): the number is not ours any more, never closed, and
 * seg_open reopens by name. */
static int open_own(int i, int dirfd, const char *name, int flags, mode_t mode, struct stat *st)
{
    uint32_t e0, s0 = close_counts(&e0);
    int fd = openat(dirfd, name, flags, mode); /* no gate: it may block (NFS) */
    if (fd < 0)
        return fd;
    set_fd(i, fd); /* a close that starts from here sees it */
    int known = fstat(fd, st) == 0;
    see_slot_counts(); /* a close counted in its slot that missed own[i] is seen */
    if (known && (close_counts(NULL) != s0 || e0 != s0)) {
        /* A close ran while the fd was in no slot: once none is in flight
         * (a close stuck in a file system's flush has let go of its number
         * already), the number must still name the file at that name. */
        struct stat by_name;
        closes_drained();
        known = fstat(fd, st) == 0 && fstatat(dirfd, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
                by_name.st_dev == st->st_dev && by_name.st_ino == st->st_ino;
    }
    if (known)
        return lift_own(i);
    set_fd(i, -1);
    /* Closes that saw the host's number in own[] marked it: not ours. */
    closes_drained();
    atomic_fetch_and(&lost, ~(1u << i));
    errno = EBADF;
    return -2;
}

/* open_own for a directory: again while the host takes the number (-2). */
static int open_dir_own(int i, int dirfd, const char *name, struct stat *st)
{
    int rc;
    while ((rc = open_own(i, dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, st)) == -2)
        ;
    return rc;
}

static int open_base(void)
{
    if (fd_of(FD_BASE) >= 0)
        return 0;
    if (mkdir_p(base_path) < 0)
        return -1;
    struct stat st;
    if (open_dir_own(FD_BASE, AT_FDCWD, base_path, &st) < 0)
        return -1;
    base_dev = st.st_dev;
    base_ino = st.st_ino;
    if (!dir_is_safe(&st))
        return stop("DIAL9_DIR=%s: belongs to another user or is writable by others; not recording", cfg->dir);
    return 0;
}

/* DIAL9_DIR is made and opened at start by the writer thread, first thing
 * (d9_seg_open_dir), while the constructor goes on; the constructor waits
 * for it at most D9_DIR_WAIT_MS (d9_seg_init): on a directory whose server
 * is gone (NFS), mkdir and open block for minutes, and the program would
 * not start. Not done by then, the program goes on recording into memory
 * until the writer is through. */
#define D9_DIR_WAIT_MS 2000
enum { DIR_NONE, DIR_OPENING, DIR_OK, DIR_FAILED, DIR_LATE }; /* NONE: a forked child's */
static _Atomic uint32_t dir_state; /* futex word */
static int dir_errno;

/* DIAL9_DIR could not be made or opened (err): one line, and no fd kept. */
static void no_base(int err)
{
    if (!failed) /* else stop() said why */
        d9_log("DIAL9_DIR=%s: cannot create: %s; not recording", cfg->dir, strerror(err));
    drop_fd(FD_BASE);
}

void d9_seg_open_dir(void)
{
    int rc = open_base();
    dir_errno = errno;
    if (atomic_exchange(&dir_state, rc < 0 ? DIR_FAILED : DIR_OK) == DIR_LATE) {
        if (rc < 0) { /* the constructor gave up waiting: the failure is ours to tell */
            no_base(dir_errno);
            failed = 1;
            atomic_store(&d9_recording, 0);
        }
        return;
    }
    d9_futex(&dir_state, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The writer's answer (d9_seg_open_dir), at most D9_DIR_WAIT_MS away. */
static int wait_base(void)
{
    uint64_t end = d9_now() + (uint64_t)D9_DIR_WAIT_MS * 1000000u;
    uint32_t st;
    while ((st = atomic_load(&dir_state)) == DIR_OPENING) {
        if (d9_now() >= end) {
            if (!atomic_compare_exchange_strong(&dir_state, &st, DIR_LATE))
                continue; /* answered just now */
            d9_log("DIAL9_DIR=%s: no answer in %d s; recording into memory until it answers", cfg->dir,
                   D9_DIR_WAIT_MS / 1000);
            return 0;
        }
        wait_word(&dir_state, DIR_OPENING, 10000000);
    }
    errno = dir_errno;
    return st == DIR_OK ? 0 : -1;
}

/* Opens the process directory: the one made earlier (by name: its fd was
 * closed by the host or it was removed), else a new <exe>.<pid> (.<pid>.N
 * when taken: a stale one, or the image before an exec). Created with the
 * first segment, so processes that record nothing leave no empty directory. */
static int open_proc(void)
{
    if (fd_of(FD_PROC) >= 0)
        return 0;
    if (open_base() < 0)
        return -1;
    int base = fd_of(FD_BASE), made = 0;
    if (!proc_name[0]) {
        for (int i = 1; i <= D9_PROC_NAMES && !made; i++) {
            if (i == 1)
                snprintf(proc_name, sizeof(proc_name), "%.40s.%u", exe_base, pid);
            else
                snprintf(proc_name, sizeof(proc_name), "%.40s.%u.%d", exe_base, pid, i);
            made = mkdirat(base, proc_name, 0700) == 0;
            if (!made && errno != EEXIST)
                return -1;
        }
        if (!made) { /* never into one made by another process (pid reuse) or user */
            snprintf(proc_path, sizeof(proc_path), "%s/%s", base_path, proc_name);
            proc_name[0] = 0;
            return stop("%s and every name before it exist; not recording", proc_path);
        }
    } else if (mkdirat(base, proc_name, 0700) == 0) {
        made = 1; /* removed while running: recreated */
    } else if (errno != EEXIST) {
        return -1;
    }
    snprintf(proc_path, sizeof(proc_path), "%s/%s", base_path, proc_name);
    struct stat st;
    if (open_dir_own(FD_PROC, base, proc_name, &st) < 0)
        return -1;
    if (made) {
        proc_known = 0; /* ours whatever it is: new */
        atomic_store(&handed, D9_NOT_HANDED); /* made by whoever we are now */
    }
    if (proc_known && (st.st_dev != proc_dev || st.st_ino != proc_ino))
        return stop("%s was replaced by another directory; recording stopped", proc_path);
    proc_dev = st.st_dev;
    proc_ino = st.st_ino;
    proc_known = 1;
    return 0;
}

/* Directories removed while running: forget them, open or recreate them. */
static int reopen_dirs(void)
{
    drop_fd(FD_PROC);
    drop_fd(FD_BASE);
    return open_proc();
}

int d9_seg_begin(const struct d9_config *c)
{
    cfg = c;
    hdr_cap = 4096 + sizeof(exe) + sizeof(cmdline) + sizeof(host) + (size_t)c->max_threads * (4 + 1 + 16);
    hdr_cap = (hdr_cap + 15) & ~(size_t)15; /* the tid array that follows needs 4-byte alignment */
    size_t bytes = hdr_cap + (size_t)c->max_threads * (4 + 16);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        d9_log("cannot map %zu bytes for segment headers: %s; not recording", bytes, strerror(errno));
        return -1;
    }
    hdr_buf = m;
    hdr_tids = (uint32_t *)(hdr_buf + hdr_cap);
    hdr_names = (char (*)[16])(hdr_tids + c->max_threads);
    atomic_store(&dir_state, DIR_OPENING); /* the writer's first job */
    char cwd[PATH_MAX];
    if (c->dir[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        snprintf(base_path, sizeof(base_path), "%s", c->dir);
    else
        snprintf(base_path, sizeof(base_path), "%s/%s", cwd, c->dir);
    return 0;
}

int d9_seg_init(void)
{
    if (wait_base() < 0) {
        no_base(errno);
        return -1;
    }
    read_process_info();
    set_pid();
    return 0;
}

const char *d9_seg_dir_path(void) { return proc_path; }
int d9_seg_dir_claimed(void) { return proc_name[0] != 0; }

static int same_file(int i, dev_t dev, ino_t ino);

int d9_seg_proc_fd(void)
{
    int fd = fd_of(FD_PROC);
    if (fd < 0 || (atomic_load(&lost) & (1u << FD_PROC)) || !same_file(FD_PROC, proc_dev, proc_ino))
        return -1;
    return fd;
}

void d9_seg_dir_adopt(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t n = strnlen(name, sizeof(proc_name) - 1);
    memcpy(proc_name, name, n);
    proc_name[n] = 0;
    proc_known = 0; /* made by us: whatever open_proc finds there */
}

void d9_seg_facts(struct d9_proc_facts *f)
{
    *f = (struct d9_proc_facts){.exe = exe, .hostname = host, .cmdline = cmdline, .cmdline_len = cmdline_len};
}

const struct d9_proc_identity *d9_seg_identity(void)
{
    return atomic_load_explicit(&ident_known, memory_order_acquire) ? &ident : NULL;
}

void d9_seg_set_reason(const char *reason)
{
    snprintf(dump_reason, sizeof(dump_reason), "%s", reason ? reason : "");
}
int d9_seg_is_open(void) { return fd_of(FD_SEG) >= 0; }
uint64_t d9_seg_size(void) { return seg_size; }
uint64_t d9_seg_opened_ns(void) { return atomic_load(&exec_pending) ? 0 : seg_opened; }
void d9_seg_exec_pending(int on) { atomic_store(&exec_pending, on); }

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

/* ---- Segments ---------------------------------------------------------- */

static int write_all(const void *buf, size_t len);
static void seal(void);

/* Creates the next segment file. A name that exists is not ours (a planted
 * file or link: O_EXCL|O_NOFOLLOW never writes through it): skip it. */
static int create_seg(void)
{
    char name[D9_NAME_MAX];
    for (int tries = 0; tries < 100; tries++) {
        seg_name(name, sizeof(name), seq, 1);
        struct stat st;
        int fd = open_own(FD_SEG, fd_of(FD_PROC), name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600, &st);
        if (fd >= 0) {
            seg_dev = st.st_dev;
            seg_ino = st.st_ino;
            return 0;
        }
        if (fd == -2) { /* made, then closed by a raw syscall: remove it, same name again */
            refresh_dirs();
            if (fd_of(FD_PROC) >= 0)
                unlinkat(fd_of(FD_PROC), name, 0);
            errno = EBADF;
            return -1;
        }
        if (errno != EEXIST)
            return -1;
        d9_log("%s/%s exists and is not ours; skipped", proc_path, name);
        seq++;
    }
    errno = EEXIST;
    return -1;
}

static int seg_open(void)
{
    if (failed)
        return -1;
    if (fd_of(FD_SEG) >= 0)
        return 0;
    if (d9_seg_failed())
        return 0; /* suspended: d9_seg_write drops the block */
    if (open_proc() < 0 || create_seg() < 0) {
        if (failed)
            return -1;
        if (errno == ENOENT && reopen_dirs() == 0 && create_seg() == 0)
            goto created; /* the directory was removed: recreated */
        if (errno == EBADF && refresh_dirs() == 0 && create_seg() == 0)
            goto created; /* its fd was closed by a raw syscall: reopened */
        if (failed)
            return -1;
        if (errno == EACCES || errno == EPERM || errno == EROFS) {
            /* No retry passes (a worker that dropped its privileges after
             * start, a read-only mount): stop, holding no trace in memory. */
            if (not_handed) { /* d9_seg_hand_to said why */
                failed = 1;
                return -1;
            }
            char where[600];
            snprintf(where, sizeof(where), "%.480s: %.100s", proc_path, strerror(errno));
            return stop("cannot create a segment in %s; not recording", where);
        }
        return suspend("cannot create a segment in", proc_path);
    }
created:;
    struct d9_header_info h = {
        .pid = pid, .seq = seq, .exe = exe, .hostname = host, .clock = "monotonic",
        .agent_version = D9_AGENT_VERSION, .cmdline = cmdline, .cmdline_len = cmdline_len,
        .tids = hdr_tids, .names = (const char (*)[16])hdr_names, .identity = d9_seg_identity()};
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
    if (len && dump_reason[0])
        len = d9_header_add_tlv(hdr_buf, len, hdr_cap, D9_TLV_DUMP_REASON, dump_reason, (uint32_t)strlen(dump_reason));
    seg_size = 0;
    seg_opened = d9_now();
    if (len == 0) {
        char name[D9_NAME_MAX];
        seg_name(name, sizeof(name), seq, 1);
        unlinkat(fd_of(FD_PROC), name, 0);
        return stop("the segment header does not fit for %s; recording stopped", proc_path);
    }
    seg_hdr_len = len;
    if (write_all(hdr_buf, len) < 0)
        return failed ? -1 : 0;
    return 0; /* the outage ends once blocks are written: a header may fit where no block does */
}

static void hand_to(uid_t uid, gid_t gid)
{
    if (failed || open_proc() < 0) /* its failure is told when a segment is due */
        return;
    int seg = fd_of(FD_SEG);
    if (fchown(fd_of(FD_PROC), uid, gid) == 0 && (seg < 0 || fchown(seg, uid, gid) == 0)) {
        atomic_store(&handed, uid);
        return;
    }
    d9_log("cannot give %s to uid %u before the program switches to it: %s; recording stops at the next segment",
           proc_path, (unsigned)uid, strerror(errno));
    not_handed = 1;
}

/* After EBADF from a raw-syscall close that verify_fds could not see yet:
 * forget the fds no longer ours (their numbers are never closed: the host
 * may reuse them) and reopen the process directory by name. */
static int refresh_dirs(void)
{
    verify_fds();
    return open_proc();
}

/* The host closed the segment's fd with a raw syscall after verify_fds
 * (the number not reused: EBADF). Not a disk fault: cut what this write
 * left of a block, by name, and seal the file (or remove it when it holds
 * no block, so the name is reused). Returns -2: write again, in a new
 * segment. */
static int lost_mid_write(uint64_t good)
{
    char name[D9_NAME_MAX];
    seg_name(name, sizeof(name), seq, 1);
    set_fd(FD_SEG, -1); /* not ours any more: never close that number */
    refresh_dirs();     /* the same close may have taken the directory's fd */
    struct stat st; /* reopened by name in its own slot, for the cut only */
    int cut = fd_of(FD_PROC) >= 0 &&
              open_own(FD_SEG, fd_of(FD_PROC), name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0, &st) >= 0 &&
              ftruncate(fd_of(FD_SEG), (off_t)good) == 0;
    drop_fd(FD_SEG);
    if (good <= seg_hdr_len || !cut) {
        if (fd_of(FD_PROC) >= 0)
            unlinkat(fd_of(FD_PROC), name, 0);
        seg_size = 0;
    } else {
        seg_size = good;
        seal_lost();
    }
    return -2;
}

/* Whole buffer, or: cut the partial block, seal what is whole (the file
 * stays valid to its end), suspend and return -1; -2 when the host closed
 * the fd under the write (lost_mid_write). */
static int write_all(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t good = seg_size; /* the file ends after a whole block here */
    while (len) {
        ssize_t w = write(fd_of(FD_SEG), p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EBADF)
            return lost_mid_write(good);
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            int err = errno;
            char name[D9_NAME_MAX];
            seg_name(name, sizeof(name), seq, 1);
            if (good <= seg_hdr_len) { /* no block: nothing worth keeping (and space given back) */
                drop_fd(FD_SEG);
                unlinkat(fd_of(FD_PROC), name, 0);
            } else if (ftruncate(fd_of(FD_SEG), (off_t)good) == 0) {
                seg_size = good;
                seal();
            }
            errno = err;
            suspend("cannot write to", proc_path);
            return -1;
        }
        p += w;
        len -= (size_t)w;
        seg_size += (uint64_t)w;
    }
    return 0;
}

/* fd i still names the file it was opened on? The hooks see every close
 * made through libc; this catches the raw syscall ones (a narrow race is
 * left: closed and reused between this check and the write). */
/* 1 when own[i] is unused or still names that file. fstat is
 * async-signal-safe (d9_seg_proc_fd runs in the crash handler). */
static int same_file(int i, dev_t dev, ino_t ino)
{
    struct stat st;
    int fd = fd_of(i);
    return fd < 0 || (fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino);
}

static void verify_fds(void)
{
    if (!same_file(FD_BASE, base_dev, base_ino))
        set_fd(FD_BASE, -1);
    if (!same_file(FD_PROC, proc_dev, proc_ino))
        set_fd(FD_PROC, -1); /* not ours any more: never close it */
    if (!same_file(FD_SEG, seg_dev, seg_ino)) {
        set_fd(FD_SEG, -1);
        seal_lost();
    }
}

static int seg_write(const void *buf, size_t len)
{
    if (failed)
        return -1;
    /* Twice at most: once more in a new segment when the host closed the
     * fd under the write (-2). */
    for (int tries = 0; tries < 2; tries++) {
        if (fd_of(FD_SEG) < 0 && seg_open() < 0) /* its fd was closed by the host: a new segment */
            return -1;
        /* No fd after seg_open: suspended, or its header write lost the fd. */
        int rc = fd_of(FD_SEG) < 0 ? -2 : write_all(buf, len);
        if (rc == 0)
            return 0;
        if (rc == -1 || d9_seg_failed())
            return failed ? -1 : 0; /* not written: the writer keeps it (d9_seg_failed) */
    }
    errno = EBADF;
    suspend("cannot write to", proc_path); /* closed under us twice: keep it, retry later */
    return 0;
}

/* Sums the sealed segments still there, one fstatat each. Run when one of
 * them is gone (removed by hand or by a cleaner, or the directory
 * recreated): counted for good, its size would make retention delete the
 * newest segments in its place. */
static void resum_sealed(void)
{
    sealed_total = 0;
    for (uint32_t s = oldest_seq; s < seq; s++) {
        char name[D9_NAME_MAX];
        struct stat st;
        seg_name(name, sizeof(name), s, 0);
        if (fstatat(fd_of(FD_PROC), name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            sealed_total += (uint64_t)st.st_size;
    }
}

/* Deletes the oldest sealed segments until they fit the budget: the total
 * size minus room for one full open segment, so sealed + open stays
 * within DIAL9_MAX_TOTAL_SIZE. A segment it cannot look at or delete
 * (EBADF, EACCES...) stops it until the next seal, never skipped: the
 * ones after it are newer. */
static void retention(void)
{
    uint64_t budget = cfg->max_total_size > cfg->max_file_size ? cfg->max_total_size - cfg->max_file_size : 0;
    int resummed = 0;
    while (sealed_total > budget && oldest_seq < seq) {
        char name[D9_NAME_MAX];
        struct stat st;
        seg_name(name, sizeof(name), oldest_seq, 0);
        if (fstatat(fd_of(FD_PROC), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                return;
            oldest_seq++; /* already gone */
            if (!resummed++)
                resum_sealed();
            continue;
        }
        if (unlinkat(fd_of(FD_PROC), name, 0) < 0 && errno != ENOENT)
            return;
        oldest_seq++;
        sealed_total -= (uint64_t)st.st_size < sealed_total ? (uint64_t)st.st_size : sealed_total;
    }
}

/* Renames the current segment (its fd already closed) to .d9. */
static void rename_sealed(void)
{
    char from[D9_NAME_MAX], to[D9_NAME_MAX];
    seg_name(from, sizeof(from), seq, 1);
    seg_name(to, sizeof(to), seq, 0);
    if (fd_of(FD_PROC) < 0 && open_proc() < 0 && !(errno == EBADF && refresh_dirs() == 0))
        return;
    int rc = renameat(fd_of(FD_PROC), from, fd_of(FD_PROC), to);
    if (rc < 0 && (errno == EBADF || errno == ENOTDIR) && refresh_dirs() == 0)
        rc = renameat(fd_of(FD_PROC), from, fd_of(FD_PROC), to); /* its fd closed by a raw syscall */
    if (rc < 0) {
        if (!retry_at && !not_handed) /* d9_seg_hand_to said why */
            d9_log("cannot seal %s/%s: %s", proc_path, from, strerror(errno));
    } else {
        sealed_total += seg_size;
    }
    seq++;
    retention();
}

static void seal(void)
{
    if (fd_of(FD_SEG) < 0)
        return;
    drop_fd(FD_SEG);
    rename_sealed();
}

/* The host closed the segment's fd: what reached the file is whole blocks
 * (a section ends after whole writes); seal it by name. */
static void seal_lost(void)
{
    if (seg_size)
        rename_sealed();
}

int d9_seg_open(void)
{
    enter();
    int rc = seg_open();
    leave();
    return rc;
}

int d9_seg_write(const void *buf, size_t len)
{
    enter();
    int rc = seg_write(buf, len);
    leave();
    return rc;
}

void d9_seg_seal(void)
{
    enter();
    seal();
    leave();
}

int d9_seg_handed_to(uid_t uid) { return atomic_load(&handed) == (uint32_t)uid; }

/* In a section, as every use of the fds: one the host closed is never used. */
void d9_seg_hand_to(uid_t uid, gid_t gid)
{
    enter();
    hand_to(uid, gid);
    leave();
}

/* A child forked after the program switched from root (a daemon that
 * switches, then forks into the background: memcached -d -u) runs as a
 * user who may not write DIAL9_DIR, root's; the parent's directory was
 * given to that user (hand_to), so the child makes its own inside it:
 * the parent's directory fd becomes the child's base. Returns 1 when it
 * did; 0 leaves the fds as they were. */
static int nest_in_parent(void)
{
    uint32_t to = atomic_load(&handed);
    if (to == D9_NOT_HANDED) /* most programs: no system call in their children */
        return 0;
    uid_t euid = geteuid();
    size_t n = strlen(proc_path);
    if (euid == 0 || to != (uint32_t)euid || n >= sizeof(base_path) ||
        fd_of(FD_BASE) < 0 || fd_of(FD_PROC) < 0 || !same_file(FD_BASE, base_dev, base_ino) ||
        !same_file(FD_PROC, proc_dev, proc_ino) ||
        faccessat(fd_of(FD_BASE), ".", W_OK | X_OK, AT_EACCESS) == 0) /* DIAL9_DIR serves: flat */
        return 0;
    drop_fd(FD_BASE);
    set_fd(FD_BASE, fd_of(FD_PROC));
    set_fd(FD_PROC, -1);
    base_dev = proc_dev;
    base_ino = proc_ino;
    memcpy(base_path, proc_path, n + 1); /* lines name it; reopened by name if the host closes it */
    return 1;
}

void d9_seg_after_fork_child(void)
{
    /* Only this thread exists: no section is open. An fd the host closed
     * is not ours, whatever holds its number now: forgotten, not closed. */
    forget_lost();
    drop_fd(FD_SEG);
    if (atomic_exchange(&dir_state, DIR_NONE) == DIR_LATE) /* the parent's writer was inside it */
        drop_fd(FD_BASE); /* the child's writer opens DIAL9_DIR itself (open_proc) */
    if (!nest_in_parent())
        drop_fd(FD_PROC);
    atomic_store(&waiters, 0);
    atomic_store(&slotless.started, 0); /* another thread of the parent may have been closing */
    atomic_store(&slotless.ended, 0);   /* (the slots' counts: the registry's release) */
    atomic_store(&opening, 0);
    atomic_store(&draining, 0);
    atomic_store(&exec_pending, 0);
    seq = oldest_seq = 0;
    seg_size = sealed_total = 0;
    failed = not_handed = 0;
    atomic_store(&handed, D9_NOT_HANDED); /* the child's directory is its own */
    dump_reason[0] = 0; /* a fork mid-dump: the child's segments are no dump */
    retry_at = 0;
    atomic_store(&section, 0); /* the parent's writer may have been inside one */
    set_pid();
}
