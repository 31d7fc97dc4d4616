/* scheduling.c - per-thread schedstat fd and perf switch ring: set up by
 * the owning thread when it registers, read by the owner (schedstat, after
 * long parks) and by the writer (perf ring, every cycle), released by the
 * writer with the slot. See scheduling.h for what is recorded and why.
 *
 * Costs measured on the development VM (2 vCPU, kernel 6.18, under load):
 * pread of schedstat 1.5 us (1.5x a bare getppid there; 0.4 us on a quiet
 * host per ../shared/FIELD-NOTES.md); registration adds open (~5 us),
 * perf_event_open (~5-10 us) and the ring mmap (~11-16 us); the writer's
 * munmap+close at release 12-100 us. Each recorded thread holds two fds
 * and 36 KiB of locked memory (perf_event_mlock_kb, then RLIMIT_MEMLOCK:
 * unprivileged users run out after a few dozen threads; those threads
 * just go without preemption records). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "fd_lift.h"
#include "log.h"
#include "nocancel.h"
#include "scheduling.h"

static _Atomic int perf_refused; /* perf_event_open is not allowed here: stop asking */
static _Atomic int stat_refused; /* no schedstat (kernel without CONFIG_SCHEDSTATS, no /proc) */
static _Atomic int warned_perf_thread, warned_fds;

static size_t perf_map_size(void) { return (1 + D9_PERF_DATA_PAGES) * (size_t)sysconf(_SC_PAGESIZE); }

/* Our fds count against the host's RLIMIT_NOFILE: keep one only while
 * the host's fd numbers stay under 3/4 of it, so we never cause its EMFILE. */
static int keep_fd(int fd)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY && (rlim_t)fd >= r.rlim_cur / 4 * 3) {
        if (!atomic_exchange(&warned_fds, 1))
            d9_log("the process uses most of its fd limit (%llu): threads registered from now on are "
                   "recorded without scheduling delay and preemptions", (unsigned long long)r.rlim_cur);
        close(fd);
        return 0;
    }
    return 1;
}

/* Closes fd only if it is still the one we opened: a host may have closed
 * every fd it did not know about (closefrom) and reused the number. */
static void close_stat(int fd, uint64_t ino, uint64_t dev)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_ino == ino && st.st_dev == dev) /* procfs numbers its inodes too */
        close(fd);
}

static void close_perf(int fd, uint64_t id)
{
    uint64_t now_id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &now_id) == 0 && now_id == id)
        close(fd);
}

/* schedstat: "on-CPU ns, run_delay ns, timeslices\n". */
static int read_run_delay(int fd, uint64_t *run_delay)
{
    char buf[96];
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    return n > 0 ? d9_schedstat_run_delay(buf, (size_t)n, run_delay) : -1;
}

static int open_schedstat(struct d9_sched *sc)
{
    if (atomic_load_explicit(&stat_refused, memory_order_relaxed))
        return -1;
    /* thread-self: the fd stays bound to this thread, whoever reads it. */
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (read_run_delay(fd, &sc->run_delay) < 0 || fstat(fd, &st) < 0)) {
        close(fd);
        fd = -1;
        errno = EINVAL;
    }
    if (fd < 0) {
        if (errno != EMFILE && errno != ENFILE && errno != ENOMEM && !atomic_exchange(&stat_refused, 1))
            d9_log("/proc/thread-self/schedstat: %s; scheduling delay not recorded", strerror(errno));
        return -1;
    }
    if (!keep_fd(fd))
        return -1;
    int hi = d9_fd_lift(fd, D9_FD_TOP); /* out of the host's numbers */
    if (hi >= 0) {
        close_stat(fd, st.st_ino, st.st_dev);
        fd = hi;
    }
    sc->stat_fd = fd;
    sc->stat_ino = st.st_ino;
    sc->stat_dev = st.st_dev;
    return 0;
}

static int open_perf(struct d9_sched *sc)
{
    if (atomic_load_explicit(&perf_refused, memory_order_relaxed))
        return -1;
    struct perf_event_attr a = {
        .size = sizeof(a),
        .type = PERF_TYPE_SOFTWARE,
        .config = PERF_COUNT_SW_DUMMY, /* counts nothing: we only want the side-band records */
        .sample_type = PERF_SAMPLE_TIME, /* d9_perf_switches expects exactly this trailer */
        .context_switch = 1,
        .sample_id_all = 1,
        .use_clockid = 1,
        .clockid = CLOCK_MONOTONIC, /* the clock of every other event */
        .exclude_kernel = 1,        /* allowed at perf_event_paranoid 2 */
        .exclude_hv = 1,
    };
    /* pid 0, cpu -1: this thread only, on any CPU; not inherited by its children. */
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        int transient = errno == EMFILE || errno == ENFILE || errno == ENOMEM;
        if (!transient && !atomic_exchange(&perf_refused, 1))
            d9_log("perf_event_open: %s; preemptions not recorded", strerror(errno));
        else if (transient && !atomic_exchange(&warned_perf_thread, 1))
            d9_log("perf_event_open: %s; preemptions not recorded for some threads", strerror(errno));
        return -1;
    }
    if (!keep_fd(fd))
        return -1;
    uint64_t id = 0;
    void *m = MAP_FAILED;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) {
        int hi = d9_fd_lift(fd, D9_FD_TOP); /* out of the host's numbers */
        if (hi >= 0) {
            close_perf(fd, id);
            fd = hi;
        }
        m = mmap(NULL, perf_map_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (m == MAP_FAILED) {
        /* Typically EPERM: the locked-memory allowance is used up. */
        if (!atomic_exchange(&warned_perf_thread, 1))
            d9_log("perf ring: %s; preemptions not recorded for some threads", strerror(errno));
        close(fd);
        return -1;
    }
    sc->perf_fd = fd;
    sc->perf_id = id;
    sc->perf = m;
    return 0;
}

void d9_sched_register(struct d9_slot *s)
{
    struct d9_sched *sc = &s->sched;
    d9_tls.park_due = UINT64_MAX;
    d9_tls.stat_after = UINT64_MAX;
    d9_tls.perf = NULL;
    sc->sw = (struct d9_switch_state){0, 0};
    atomic_store_explicit(&sc->exit_ts, 0, memory_order_relaxed);
    if (!d9_cfg.sched)
        return;
    int saved = errno;
    uint32_t on = 0;
    uint64_t start = d9_stamp(); /* before the first read (the window's rule); recording is on: the clock is set up */
    if (open_schedstat(sc) == 0) {
        sc->read_stamp = start;
        on |= D9_SCHED_STAT;
        d9_tls.stat_after = 0; /* the first long park reads */
    }
    if (d9_cfg.preempt && open_perf(sc) == 0) {
        on |= D9_SCHED_PERF;
        d9_tls.perf = sc->perf; /* the owner's half-full check reads it there */
    }
    atomic_store_explicit(&sc->on, on, memory_order_release); /* the writer may look now */
    errno = saved;
}

void d9_sched_unpark(struct d9_slot *s, uint64_t ts)
{
    struct d9_sched *sc = &s->sched;
    int saved = errno;
    int cancel = d9_cancel_off(); /* pread is a cancellation point; the hook's call may not be */
    uint64_t rd;
    int got = read_run_delay(sc->stat_fd, &rd);
    /* The window runs from before the previous read to after this one: a
     * preemption between ts and the read lands in rd, and must in the window. */
    uint64_t end = d9_stamp_like(ts);
    d9_cancel_restore(cancel);
    if (got < 0) {
        d9_tls.stat_after = UINT64_MAX; /* the host closed our fd, the number now names something else */
    } else {
        if (rd > sc->run_delay)
            d9_slot_push(s, end, D9_EV_SCHED_DELAY, D9_SCHED_SCHEDSTAT, rd - sc->run_delay, end - sc->read_stamp);
        sc->run_delay = rd;
        sc->read_stamp = ts;
        d9_tls.stat_after = ts + d9_stat_gap_stamps;
    }
    d9_writer_doorbell(); /* a long park ended: an idle writer goes back to its period */
    errno = saved;
}

void d9_sched_exit(struct d9_slot *s, uint64_t ts)
{
    atomic_store_explicit(&s->sched.exit_ts, ts, memory_order_release);
}

uint32_t d9_sched_drain(struct d9_slot *s, struct d9_raw_event *out, uint32_t max)
{
    struct d9_sched *sc = &s->sched;
    if (!(atomic_load_explicit(&sc->on, memory_order_acquire) & D9_SCHED_PERF))
        return 0;
    struct perf_event_mmap_page *pg = sc->perf;
    const uint8_t *data = (const uint8_t *)pg + pg->data_offset;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = pg->data_tail; /* only we write it */
    /* After head: a record we see was written after any exit_ts before it. */
    uint64_t exit_ts = atomic_load_explicit(&sc->exit_ts, memory_order_acquire);
    uint64_t lost = 0;
    uint32_t n = 0;
    while (n < max && tail < head) {
        struct d9_preempt p[64];
        uint32_t want = max - n < 64 ? max - n : 64;
        uint32_t k = d9_perf_switches(data, pg->data_size, &tail, head, &sc->sw, p, want, &lost);
        for (uint32_t i = 0; i < k; i++)
            if (!exit_ts || p[i].out_ts < exit_ts)
                out[n++] = (struct d9_raw_event){.ts = p[i].out_ts, .type = D9_EV_PREEMPT, .a = p[i].duration};
    }
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE); /* the kernel may reuse the space */
    if (lost)
        atomic_fetch_add_explicit(&s->dropped, lost, memory_order_relaxed);
    return n;
}

void d9_sched_release(struct d9_slot *s, int fork_child)
{
    struct d9_sched *sc = &s->sched;
    uint32_t on = atomic_exchange(&sc->on, 0);
    if (on & D9_SCHED_STAT)
        close_stat(sc->stat_fd, sc->stat_ino, sc->stat_dev);
    if (on & D9_SCHED_PERF) {
        if (!fork_child) /* perf rings are not copied into a fork child */
            munmap(sc->perf, perf_map_size());
        close_perf(sc->perf_fd, sc->perf_id);
    }
    sc->perf = NULL;
}
