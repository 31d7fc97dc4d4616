/* dump.c - dump triggers and rate limit (dump.h). */
#include "dump.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "lifecycle.h"
#include "log.h"
#include "real.h"
#include "sigchain.h"

#define D9_MATCH_TABLE 64 /* recent wakes / unparks kept to match each other */

static const struct d9_config *cfg;
static _Atomic int sig_pending;

/* dial9_dump() requests: the caller writes reason, bumps api_req and
 * waits on api_done; the writer answers with api_err. */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static char api_reason[D9_REASON_MAX];
static _Atomic uint32_t api_req, api_done;
static _Atomic int api_err;
static uint32_t api_taken; /* writer: request the current dump serves */
static int taken_api;

/* Writer-only anomaly state. */
static char anomaly[D9_REASON_MAX];
static uint64_t last_dump_ns;
static int dumped_once;
struct thread_state {
    uint64_t busy_since; /* ns of the last UNPARK (or start); 0 while parked */
    uint64_t park_ts, park_target;
};
static struct thread_state *threads;
static uint32_t nthreads;
struct match {
    uint64_t target, from, to; /* wake: from = to = ts; unpark: park ts .. unpark ts */
};
static struct match wakes[D9_MATCH_TABLE], unparks[D9_MATCH_TABLE];
static uint32_t nwake, nunpark; /* entries ever added: next slot = n % D9_MATCH_TABLE */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    /* Not dump requests: a vfork child's signal (not its parent's), and a
     * thread's signal to a thread of its own process (pthread_kill, raise:
     * SI_TKILL from this pid), the program's own use of the signal
     * (HotSpot's thread suspension on USR2, Go's preemption on URG). kill(2)
     * from anywhere, this process included, is one. */
    int own = si && si->si_code == SI_TKILL && si->si_pid == (pid_t)syscall(SYS_getpid);
    if (!d9_in_vfork && !own) {
        atomic_store(&sig_pending, 1);
        d9_writer_wake(); /* d9_futex: never recorded as the interrupted thread's */
    }
    errno = saved;
    /* The program's handler, installed before or after ours (sigchain.h),
     * still runs. A default or ignored disposition is not applied: the
     * signal asks for a dump (the default would kill). */
    d9_sigchain_call(sig, si, uc);
}

void d9_dump_after_fork_child(void)
{
    pthread_mutex_init(&api_lock, NULL); /* a parent's thread may have held it in dial9_dump */
}

int d9_dump_noting;

int d9_dump_init(const struct d9_config *c)
{
    cfg = c;
    nthreads = c->max_threads;
    if (c->trigger_busy_ms || c->trigger_wake_ms) {
        size_t bytes = sizeof(struct thread_state) * nthreads;
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            d9_log("cannot map %zu bytes for anomaly triggers: %s; not recording", bytes, strerror(errno));
            return -1;
        }
        threads = p;
    }
    d9_dump_noting = c->trigger_slow_syscall_ms || threads;
    if (!c->dump_signal)
        return 0;
    sigset_t none;
    sigemptyset(&none);
    /* Interrupted calls restart as they would under the program's handler. */
    if (d9_sigchain_install((int)c->dump_signal, on_signal, SA_ONSTACK, &none, 0) < 0)
        d9_log("signal %u: %s; no dump signal", c->dump_signal, strerror(errno));
    return 0;
}

/* ---- Anomalies (writer thread) ------------------------------------------ */

static void raise_anomaly(const char *what, uint64_t ns, uint32_t limit_ms)
{
    if (anomaly[0])
        return; /* one pending is enough: the dump covers both */
    snprintf(anomaly, sizeof(anomaly), "%s %llu ms > %u ms", what, (unsigned long long)(ns / 1000000u), limit_ms);
}

static void add_match(struct match *t, uint32_t *n, uint64_t target, uint64_t from, uint64_t to)
{
    t[(*n)++ % D9_MATCH_TABLE] = (struct match){target, from, to};
}

/* A wake at w.from ended an unpark's park when it falls in [park, unpark]. */
static void match_wake(const struct match *t, uint32_t n, uint64_t target, uint64_t from, uint64_t to)
{
    uint64_t limit = (uint64_t)cfg->trigger_wake_ms * 1000000u;
    for (uint32_t i = 0; i < n && i < D9_MATCH_TABLE; i++) {
        const struct match *m = &t[i];
        if (m->target != target)
            continue;
        uint64_t wake = m->from == m->to ? m->from : from; /* which side is the wake */
        uint64_t park = m->from == m->to ? from : m->from, unpark = m->from == m->to ? to : m->to;
        if (wake >= park && wake <= unpark && unpark - wake >= limit)
            raise_anomaly("wake-to-run", unpark - wake, cfg->trigger_wake_ms);
    }
}

void d9_dump_note(uint32_t slot, const struct d9_raw_event *ev)
{
    if (ev->type == D9_EV_SLOW_SYSCALL && cfg->trigger_slow_syscall_ms &&
        ev->b >= (uint64_t)cfg->trigger_slow_syscall_ms * 1000000u)
        raise_anomaly("slow syscall", ev->b, cfg->trigger_slow_syscall_ms);
    if (!threads || slot >= nthreads)
        return;
    struct thread_state *t = &threads[slot];
    uint64_t busy = (uint64_t)cfg->trigger_busy_ms * 1000000u;
    switch (ev->type) {
    case D9_EV_THREAD_START:
        *t = (struct thread_state){.busy_since = ev->ts};
        return;
    case D9_EV_THREAD_EXIT:
        t->busy_since = 0;
        return;
    case D9_EV_PARK:
        t->park_ts = ev->ts;
        t->park_target = ev->a;
        break;
    case D9_EV_UNPARK:
        if (cfg->trigger_wake_ms && t->park_target) {
            match_wake(wakes, nwake, t->park_target, t->park_ts, ev->ts);
            add_match(unparks, &nunpark, t->park_target, t->park_ts, ev->ts);
        }
        t->park_target = 0;
        t->busy_since = ev->ts;
        return;
    case D9_EV_WAKE:
        if (cfg->trigger_wake_ms && ev->a) {
            match_wake(unparks, nunpark, ev->a, ev->ts, ev->ts);
            add_match(wakes, &nwake, ev->a, ev->ts, ev->ts);
        }
        break;
    }
    /* Busy: from an unpark to the next park, or that long without a park
     * while the thread keeps emitting. */
    if (busy && t->busy_since && ev->ts > t->busy_since && ev->ts - t->busy_since >= busy) {
        raise_anomaly("busy", ev->ts - t->busy_since, cfg->trigger_busy_ms);
        t->busy_since = ev->ts;
    }
    if (ev->type == D9_EV_PARK)
        t->busy_since = 0;
}

/* ---- Taking and answering requests (writer thread) ---------------------- */

int d9_dump_take(char reason[D9_REASON_MAX], int *api, uint64_t now_ns)
{
    uint32_t req = atomic_load(&api_req);
    int sig = atomic_exchange(&sig_pending, 0);
    reason[0] = 0;
    *api = 0;
    if (req != atomic_load(&api_done)) {
        memcpy(reason, api_reason, D9_REASON_MAX);
        reason[D9_REASON_MAX - 1] = 0;
        api_taken = req;
        *api = taken_api = 1;
    } else if (sig) {
        snprintf(reason, D9_REASON_MAX, "signal %u", cfg->dump_signal);
    } else if (anomaly[0]) {
        memcpy(reason, anomaly, D9_REASON_MAX);
    }
    anomaly[0] = 0; /* anomalies seen while a dump is pending are part of it */
    if (!reason[0])
        return 0;
    if (dumped_once && now_ns - last_dump_ns < (uint64_t)cfg->dump_min_interval_ms * 1000000u) {
        d9_dump_finish(EBUSY);
        reason[0] = 0;
        return 0;
    }
    dumped_once = 1;
    last_dump_ns = now_ns;
    return 1;
}

void d9_dump_finish(int err)
{
    if (!taken_api)
        return;
    taken_api = 0;
    atomic_store(&api_err, err);
    atomic_store(&api_done, api_taken);
    d9_futex(&api_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* ---- dial9_dump() -------------------------------------------------------- */

int d9_dump_request(const char *reason, int timeout_ms)
{
    pthread_mutex_lock(&api_lock); /* one request at a time: they share api_reason */
    snprintf(api_reason, sizeof(api_reason), "%s", reason && *reason ? reason : "dial9_dump");
    uint32_t want = atomic_fetch_add(&api_req, 1) + 1;
    d9_writer_wake();
    int err = ETIMEDOUT;
    uint64_t deadline = d9_now() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint32_t done = atomic_load(&api_done);
        if (done == want) {
            err = atomic_load(&api_err);
            break;
        }
        uint64_t now = d9_now();
        if (now >= deadline)
            break;
        uint64_t left = deadline - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        d9_futex(&api_done, FUTEX_WAIT_PRIVATE, done, &ts);
    }
    pthread_mutex_unlock(&api_lock);
    return err;
}
