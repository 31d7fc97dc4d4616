/* config.c - table-driven parsing of the DIAL9_* environment (config.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum kind { K_BOOL, K_SIZE, K_UINT, K_POW2, K_DIR, K_MODE, K_SIGNAL, K_CLOCK };

struct var {
    const char *name;
    enum kind kind;
    size_t off;        /* offset of the member in struct d9_config */
    uint64_t min, max; /* inclusive range for numbers */
    uint64_t def;      /* default for numbers */
};

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define F(m) offsetof(struct d9_config, m)

/* Ranges: a file must hold a header and a block (4 KiB is a floor, not a
 * useful size); 1 ms..60 s flush keeps "data on disk within 1 s" possible
 * by default while allowing slow disks; 64..1M ring entries = 2 KiB..32 MiB
 * per thread. The default ring, 4096 entries (128 KiB), is the smallest
 * that costs the writer no more: a thread writes its ring in a circle, and
 * the larger the circle the colder each line and page it comes back to.
 * With 16384 entries tokio paid 7.1% more CPU a request, node 5.5%; with
 * 4096, 4.7% and 1.7%; with 1024 the writer's wake-ups outweigh it
 * (docs/BENCH-HISTORY.md, "The ring's size"). */
static const struct var vars[] = {
    {"DIAL9_ENABLED", K_BOOL, F(enabled), 0, 1, 1},
    {"DIAL9_QUIET", K_BOOL, F(quiet), 0, 1, 0},
    {"DIAL9_DIR", K_DIR, F(dir), 0, 0, 0},
    {"DIAL9_MAX_FILE_SIZE", K_SIZE, F(max_file_size), 4 * KIB, 64 * GIB, 16 * MIB},
    {"DIAL9_MAX_TOTAL_SIZE", K_SIZE, F(max_total_size), 4 * KIB, 1024 * GIB, 256 * MIB},
    {"DIAL9_ROTATION_SECS", K_UINT, F(rotation_secs), 1, 7 * 86400, 60},
    {"DIAL9_FLUSH_MS", K_UINT, F(flush_ms), 1, 60000, 250},
    {"DIAL9_BUFFER_EVENTS", K_POW2, F(buffer_events), 64, 1048576, 4096},
    {"DIAL9_MAX_THREADS", K_UINT, F(max_threads), 1, 65536, 1024},
    {"DIAL9_SLOW_SYSCALL_US", K_UINT, F(slow_syscall_us), 1, 60000000, 1000},
    {"DIAL9_LOCK_WAIT_US", K_UINT, F(lock_wait_us), 1, 60000000, 100},
    {"DIAL9_SCHED", K_BOOL, F(sched), 0, 1, 1},
    {"DIAL9_SCHED_GAP_MS", K_UINT, F(sched_gap_ms), 1, 60000, 50},
    {"DIAL9_PREEMPT", K_BOOL, F(preempt), 0, 1, 0},
    {"DIAL9_MODE", K_MODE, F(mode), 0, 1, 0},
    /* The flight buffer must hold a few full blocks (~257 KiB each). */
    {"DIAL9_FLIGHT_MAX_BYTES", K_SIZE, F(flight_max_bytes), 1 * MIB, 64 * GIB, 64 * MIB},
    {"DIAL9_FLIGHT_MIN_AGE_MS", K_UINT, F(flight_min_age_ms), 1, 86400000, 10000},
    {"DIAL9_DUMP_SIGNAL", K_SIGNAL, F(dump_signal), 0, 64, SIGUSR2},
    {"DIAL9_DUMP_MIN_INTERVAL_MS", K_UINT, F(dump_min_interval_ms), 0, 86400000, 10000},
    {"DIAL9_TRIGGER_SLOW_SYSCALL_MS", K_UINT, F(trigger_slow_syscall_ms), 0, 3600000, 0},
    {"DIAL9_TRIGGER_BUSY_MS", K_UINT, F(trigger_busy_ms), 0, 3600000, 0},
    {"DIAL9_TRIGGER_WAKE_MS", K_UINT, F(trigger_wake_ms), 0, 3600000, 0},
    {"DIAL9_CRASH_DUMP", K_BOOL, F(crash_dump), 0, 1, 1},
    {"DIAL9_CLOCK", K_CLOCK, F(clock), 0, 1, 0},
};

/* Signals DIAL9_DUMP_SIGNAL may name besides a number. */
static const struct {
    const char *name;
    int sig;
} signames[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"PWR", SIGPWR}, {"URG", SIGURG}};

/* Why a dump trigger cannot use sig, or NULL. The dump handler never
 * applies the default action, so a signal whose default a service relies
 * on would stop working: kill and job control could no longer end or stop
 * it, and PIPE, CHLD and ALRM are the kernel's notices to the program. */
static const char *signal_refused(uint64_t sig)
{
    switch (sig) {
    case SIGKILL: case SIGSTOP: return "signal cannot be caught";
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGABRT: return "is a crash signal";
    case 32: case 33: return "reserved by glibc (SIGCANCEL, SIGSETXID)";
    case SIGINT: case SIGQUIT: case SIGTERM: case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGCONT:
        return "ends or stops the program (kill, job control): its default must stay";
    case SIGPIPE: case SIGCHLD: case SIGALRM: return "the kernel's notice to the program: its action must stay";
    default: return NULL;
    }
}

/* Parses decimal digits with an optional K/M/G (x1024^n) suffix when
 * suffix_ok. Returns NULL on success, else the reason. */
static const char *parse_number(const char *s, int suffix_ok, uint64_t *out)
{
    if (!*s)
        return "empty";
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return "too large";
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == s)
        return "not a number";
    if (*p && suffix_ok && !p[1]) {
        uint64_t m = 0;
        switch (*p) {
        case 'k': case 'K': m = KIB; break;
        case 'm': case 'M': m = MIB; break;
        case 'g': case 'G': m = GIB; break;
        }
        if (!m)
            return "unknown suffix (use K, M or G)";
        if (v > UINT64_MAX / m)
            return "too large";
        v *= m;
        p++;
    }
    if (*p)
        return suffix_ok ? "not a size (digits with optional K, M or G)" : "not a number";
    *out = v;
    return NULL;
}

static void store(struct d9_config *c, const struct var *v, uint64_t x)
{
    char *m = (char *)c + v->off;
    if (v->kind == K_SIZE)
        *(uint64_t *)m = x;
    else if (v->kind == K_BOOL || v->kind == K_MODE || v->kind == K_CLOCK)
        *(int *)m = (int)x;
    else
        *(uint32_t *)m = (uint32_t)x;
}

/* Returns NULL when s is acceptable for v (and stores it), else the reason. */
static const char *apply(struct d9_config *c, const struct var *v, const char *s, char *why, size_t whylen)
{
    if (v->kind == K_DIR) {
        size_t n = strlen(s);
        if (n == 0)
            return "empty";
        if (n >= D9_DIR_MAX)
            return "path too long";
        memcpy(c->dir, s, n + 1);
        return NULL;
    }
    if (v->kind == K_MODE) {
        if (strcmp(s, "continuous") == 0)
            store(c, v, D9_MODE_CONTINUOUS);
        else if (strcmp(s, "flight") == 0)
            store(c, v, D9_MODE_FLIGHT);
        else
            return "must be continuous or flight";
        return NULL;
    }
    if (v->kind == K_CLOCK) {
        if (strcmp(s, "auto") == 0)
            store(c, v, 0);
        else if (strcmp(s, "monotonic") == 0)
            store(c, v, 1);
        else
            return "must be auto or monotonic";
        return NULL;
    }
    if (v->kind == K_SIGNAL) {
        const char *name = strncmp(s, "SIG", 3) == 0 ? s + 3 : s;
        for (size_t i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
            if (strcmp(name, signames[i].name) == 0) {
                store(c, v, (uint64_t)signames[i].sig);
                return NULL;
            }
    }
    if (v->kind == K_BOOL) {
        if ((s[0] != '0' && s[0] != '1') || s[1])
            return "must be 0 or 1";
        store(c, v, (uint64_t)(s[0] - '0'));
        return NULL;
    }
    uint64_t x;
    const char *r = parse_number(s, v->kind == K_SIZE, &x);
    if (r)
        return r;
    if (x < v->min || x > v->max) {
        snprintf(why, whylen, "out of range %llu..%llu", (unsigned long long)v->min,
                 (unsigned long long)v->max);
        return why;
    }
    if (v->kind == K_POW2 && (x & (x - 1)))
        return "not a power of two";
    const char *refused = v->kind == K_SIGNAL ? signal_refused(x) : NULL;
    if (refused)
        return refused;
    store(c, v, x);
    return NULL;
}

int d9_config_load(struct d9_config *c, uid_t uid, d9_getenv_fn get, d9_config_error_fn err, void *ctx)
{
    int bad = 0;
    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "/tmp/dial9-%u", (unsigned)uid);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const struct var *v = &vars[i];
        if (v->kind != K_DIR)
            store(c, v, v->def);
        const char *s = get(ctx, v->name);
        if (!s)
            continue;
        char why[64], msg[384];
        const char *r = apply(c, v, s, why, sizeof(why));
        if (!r)
            continue;
        bad++;
        if (v->kind == K_DIR)
            snprintf(msg, sizeof(msg), "%s=%.64s: %s; using default %.128s", v->name, s, r, c->dir);
        else if (v->kind == K_MODE)
            snprintf(msg, sizeof(msg), "%s=%.64s: %s; using default continuous", v->name, s, r);
        else if (v->kind == K_CLOCK)
            snprintf(msg, sizeof(msg), "%s=%.64s: %s; using default auto", v->name, s, r);
        else
            snprintf(msg, sizeof(msg), "%s=%.64s: %s; using default %llu", v->name, s, r,
                     (unsigned long long)v->def);
        if (err)
            err(ctx, msg);
    }
    /* Retention keeps room for one open segment within the total, so a
     * file limit above half the total would leave no sealed segment. */
    if (c->max_file_size > c->max_total_size / 2) {
        char msg[160];
        uint64_t use = c->max_total_size / 2;
        snprintf(msg, sizeof(msg), "DIAL9_MAX_FILE_SIZE=%llu: more than half of DIAL9_MAX_TOTAL_SIZE; using %llu",
                 (unsigned long long)c->max_file_size, (unsigned long long)use);
        c->max_file_size = use;
        bad++;
        if (err)
            err(ctx, msg);
    }
    return bad;
}
