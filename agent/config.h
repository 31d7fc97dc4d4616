/* config.h - the agent's settings, read once from the environment.
 * Pure (no agent globals): the lookup and the error report are callbacks,
 * so unit tests feed values and collect messages. */
#ifndef DIAL9_CONFIG_H
#define DIAL9_CONFIG_H

#include <stdint.h>
#include <sys/types.h>

#define D9_DIR_MAX 3072 /* bytes incl. NUL; leaves room for "/<exe>.<pid>/NNNNNN.d9.open" */

struct d9_config {
    int enabled;             /* DIAL9_ENABLED: 0 or 1, default 1 */
    int quiet;               /* DIAL9_QUIET: 0 or 1, default 0 */
    char dir[D9_DIR_MAX];    /* DIAL9_DIR, default /tmp/dial9-<uid> */
    uint64_t max_file_size;  /* DIAL9_MAX_FILE_SIZE, bytes, default 16 MiB */
    uint64_t max_total_size; /* DIAL9_MAX_TOTAL_SIZE, bytes, default 256 MiB */
    uint32_t rotation_secs;  /* DIAL9_ROTATION_SECS, seconds, default 60 */
    uint32_t flush_ms;       /* DIAL9_FLUSH_MS, milliseconds, default 250 */
    uint32_t buffer_events;  /* DIAL9_BUFFER_EVENTS, ring entries per thread (32 bytes each), default 4096 */
    uint32_t max_threads;    /* DIAL9_MAX_THREADS, threads recorded at once, default 1024 */
    uint32_t slow_syscall_us; /* DIAL9_SLOW_SYSCALL_US, microseconds, default 1000: record calls at least this long */
    uint32_t lock_wait_us;    /* DIAL9_LOCK_WAIT_US, microseconds, default 100: record contended lock waits at least this long */
    int sched;                /* DIAL9_SCHED: 0 or 1, default 1: scheduling delay (schedstat) and, with preempt, preemptions */
    uint32_t sched_gap_ms;    /* DIAL9_SCHED_GAP_MS, milliseconds, default 50: at most one schedstat read per thread per gap */
    int preempt;              /* DIAL9_PREEMPT: 0 or 1, default 0: preemptions (per-thread perf context switches) */
    /* Flight recorder and dumps (docs/FLIGHT.md). */
    int mode;                    /* DIAL9_MODE: continuous (D9_MODE_CONTINUOUS, default) or flight */
    uint64_t flight_max_bytes;   /* DIAL9_FLIGHT_MAX_BYTES, bytes of compressed blocks kept, default 64 MiB */
    uint32_t flight_min_age_ms;  /* DIAL9_FLIGHT_MIN_AGE_MS, milliseconds of history kept, default 10000 */
    uint32_t dump_signal;        /* DIAL9_DUMP_SIGNAL, signal number (or USR1, USR2...), 0 = none, default SIGUSR2 */
    uint32_t dump_min_interval_ms; /* DIAL9_DUMP_MIN_INTERVAL_MS, milliseconds between dumps, default 10000 */
    uint32_t trigger_slow_syscall_ms; /* DIAL9_TRIGGER_SLOW_SYSCALL_MS, milliseconds, 0 = off (default) */
    uint32_t trigger_busy_ms;    /* DIAL9_TRIGGER_BUSY_MS, milliseconds, 0 = off (default) */
    uint32_t trigger_wake_ms;    /* DIAL9_TRIGGER_WAKE_MS, milliseconds, 0 = off (default) */
    int crash_dump;              /* DIAL9_CRASH_DUMP: 0 or 1, default 1: write buffered events on a fatal signal */
    int clock;                   /* DIAL9_CLOCK: auto (0, default: TSC when invariant) or monotonic (1); clock.h */
};

enum { D9_MODE_CONTINUOUS = 0, D9_MODE_FLIGHT = 1 };

/* Returns the value of variable name, or NULL when unset. */
typedef const char *(*d9_getenv_fn)(void *ctx, const char *name);
/* Receives one message (no "dial9: " prefix, no newline) per bad value, of
 * the form "DIAL9_X=value: reason; using default N". */
typedef void (*d9_config_error_fn)(void *ctx, const char *msg);

/* Fills c with defaults overridden by the environment; a bad value is
 * reported once through err and replaced by its default. uid names the
 * default directory. Returns the number of bad values. */
int d9_config_load(struct d9_config *c, uid_t uid, d9_getenv_fn get, d9_config_error_fn err, void *ctx);

#endif
