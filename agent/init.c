/* init.c - library constructor and destructor: configuration, directories,
 * the writer, and the final drain at process exit. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "barrier.h"
#include "core.h"
#include "crash.h"
#include "direct.h"
#include "dump.h"
#include "fd_lift.h"
#include "fdtable.h"
#include "flight.h"
#include "lifecycle.h"
#include "log.h"
#include "nocancel.h"
#include "real.h"
#include "segment.h"
#include "sigchain.h"

struct d9_config d9_cfg;

static const char *env_get(void *ctx, const char *name) { return getenv(name); }
static void env_error(void *ctx, const char *msg) { d9_log("%s", msg); }

static void fork_child(void)
{
    d9_dump_after_fork_child();
    d9_writer_after_fork_child();
}

__attribute__((constructor)) static void d9_init(void)
{
    d9_busy++;
    /* First and whatever follows: the sigaction interposer takes its lock
     * even when the agent is off. */
    if (pthread_atfork(d9_sigchain_fork_prepare, d9_sigchain_fork_done, d9_sigchain_fork_done))
        d9_log("pthread_atfork failed: a child forked while a thread is in sigaction may hang");
    if (getauxval(AT_SECURE))
        goto off; /* setuid/setcap: never write files for a privileged process */
    d9_log_stderr(fcntl(2, F_GETFD) >= 0); /* started with 2>&-: fd 2 will be some file's */
    d9_config_load(&d9_cfg, getuid(), env_get, env_error, NULL);
    d9_log_set_quiet(d9_cfg.quiet);
    if (!d9_cfg.enabled)
        goto off;
    d9_barrier_init(); /* before the writer thread: barrier.h */
    d9_fd_lift_prepare(); /* before the writer thread too: fd_lift.h */
    if (d9_seg_begin(&d9_cfg) < 0 || d9_writer_start_held() < 0) /* it makes DIAL9_DIR while the clock calibrates */
        goto out;
    d9_clock_init(d9_cfg.clock);
    d9_direct_init();
    d9_slow_stamps = d9_ns_stamp((uint64_t)d9_cfg.slow_syscall_us * 1000u);
    d9_lock_stamps = d9_ns_stamp((uint64_t)d9_cfg.lock_wait_us * 1000u);
    d9_min_park_stamps = d9_ns_stamp(D9_SCHED_MIN_PARK_NS);
    d9_stat_gap_stamps = d9_ns_stamp((uint64_t)d9_cfg.sched_gap_ms * 1000000u);
    if (d9_seg_init() < 0 || d9_registry_init(d9_cfg.max_threads, d9_cfg.buffer_events) < 0)
        goto cancel;
    if (d9_cfg.mode == D9_MODE_FLIGHT && d9_flight_init(d9_cfg.flight_max_bytes, d9_cfg.flight_min_age_ms) < 0)
        goto cancel;
    if (d9_dump_init(&d9_cfg) < 0)
        goto cancel;
    int rc = pthread_atfork(NULL, NULL, fork_child);
    if (rc)
        d9_log("pthread_atfork failed: forked children are not recorded");
    d9_writer_go();
    atomic_store(&d9_recording, d9_clock_tsc ? D9_REC_TSC : D9_REC_CLOCK);
    d9_crash_init(&d9_cfg); /* after the writer: a crash before it has nothing to write */
    if (d9_cfg.mode == D9_MODE_FLIGHT)
        d9_log_info("flight recorder on (%llu bytes, %u ms); dumps go to %s",
                    (unsigned long long)d9_cfg.flight_max_bytes, d9_cfg.flight_min_age_ms, d9_seg_dir_path());
    else
        d9_log_info("recording to %s (clock: %s)", d9_seg_dir_path(), d9_clock_tsc ? "tsc" : "monotonic");
    goto out;
cancel:
    d9_writer_cancel();
    goto out;
off: /* no fd of ours will ever exist: the fd hooks only forward (fdtable.h) */
    atomic_store_explicit(&d9_fd_table_off, 1, memory_order_relaxed);
out:
    d9_busy--;
}

/* Runs in whichever thread calls exit() (main or not): that thread is
 * still LIVE, so the final drain includes its events. */
__attribute__((destructor)) static void d9_fini(void)
{
    if (d9_in_vfork)
        return; /* exit() in a vfork child: the writer and the rings are its parent's */
    d9_crash_at_exit(); /* exit() from the program's handler of a fault */
    int nested = d9_busy++; /* exit() from a handler that interrupted a push */
    int cancel = d9_cancel_off(); /* the drain joins the writer and writes files */
    if (d9_self && !nested)
        d9_flush_nowait(d9_self);
    atomic_store(&d9_recording, 0);
    d9_writer_stop();
    uint64_t lost = d9_registry_unrecorded();
    if (lost)
        d9_log("%llu threads were not recorded (DIAL9_MAX_THREADS=%u)", (unsigned long long)lost, d9_cfg.max_threads);
    d9_cancel_restore(cancel); /* other libraries' destructors run after this one */
    d9_busy--;
}
