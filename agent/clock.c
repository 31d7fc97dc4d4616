/* clock.c - TSC calibration and conversion (clock.h).
 *
 * The line: ns = anchor ns + (tsc - anchor tsc) * mult >> 32. The
 * constructor fits it over ~200 us; each writer cycle then takes a fresh
 * (TSC, CLOCK_MONOTONIC) pair and fits the line through the previous pair
 * and this one, so the events of the cycle, stamped between the two, are
 * interpolated between real readings of CLOCK_MONOTONIC: NTP's slewing of
 * CLOCK_MONOTONIC and the calibration's error do not accumulate. */
#include "clock.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "dial9_format.h"
#include "log.h"

int d9_clock_tsc;

#define CAL_NS 200000u       /* constructor's calibration span */
#define REFIT_NS 1000000u    /* a shorter span between pairs keeps the slope */
#define PAIR_TRIES 5         /* pairs taken, the tightest kept */
#define CAL_TRIES 100000     /* ~1000 pairs span CAL_NS; 100x that is a clock that stopped */

static _Atomic uint64_t cur_mult; /* the line's slope, for the crash handler */
static struct d9_clock_line line; /* writer: the current line, through the last pair */

#if defined(__x86_64__)
static uint64_t cal_mult; /* writer: the rate refits are checked against (1/64) */
static uint64_t off_mult; /* writer: the last fit rejected as far off cal_mult, else 0 */

/* a within 1/frac of b */
static int near(uint64_t a, uint64_t b, uint64_t frac) { return a >= b - b / frac && a <= b + b / frac; }

/* lfence orders the read after earlier loads, as the vDSO's own read is. */
static inline uint64_t rdtsc_ordered(void)
{
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
}

/* One (tsc, ns) reading: the TSC midway between two reads around the
 * clock, from the tightest of a few tries (an interrupt widens one). */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < PAIR_TRIES; i++) {
        uint64_t t0 = rdtsc_ordered();
        uint64_t n = d9_now();
        uint64_t t1 = rdtsc_ordered();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *tsc = t0 + (t1 - t0) / 2;
            *ns = n;
        }
    }
}

/* constant_tsc (fixed rate) and nonstop_tsc (runs in idle states) on the
 * first "flags" line of /proc/cpuinfo: the kernel's own verdict. */
static int tsc_invariant(void)
{
    static char buf[16384];
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    buf[n] = 0;
    char *flags = strstr(buf, "\nflags");
    if (!flags)
        return 0;
    char *end = strchr(flags + 1, '\n');
    if (!end)
        return 0; /* cut off: do not guess */
    *end = 0;
    return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

/* Fits the first line; 0 when the TSC ran at a rate no CPU has (0.1-20 GHz)
 * or the clock did not advance (bounded: a broken clock cannot hang us). */
static int calibrate(void)
{
    uint64_t t0, n0, t1, n1;
    pair(&t0, &n0);
    int tries = 0;
    do
        pair(&t1, &n1);
    while (n1 - n0 < CAL_NS && ++tries < CAL_TRIES);
    uint64_t m = d9_clock_fit(t0, n0, t1, n1);
    if (m < ((uint64_t)1 << D9_CLOCK_SHIFT) / 20 || m > ((uint64_t)10 << D9_CLOCK_SHIFT))
        return 0;
    cal_mult = m;
    line = (struct d9_clock_line){t1, n1, m, 0};
    atomic_store_explicit(&cur_mult, m, memory_order_relaxed);
    return 1;
}

void d9_clock_init(int mode)
{
    if (mode != D9_CLOCK_AUTO || !tsc_invariant())
        return;
    if (!calibrate()) {
        d9_log("the TSC's rate looks wrong: timestamps from CLOCK_MONOTONIC");
        return;
    }
    d9_clock_tsc = 1;
}

static void refit(void)
{
    if (!d9_clock_tsc)
        return;
    uint64_t t, n;
    pair(&t, &n);
    if (n - line.ns < REFIT_NS)
        return;
    uint64_t m = d9_clock_fit(line.tsc, line.ns, t, n);
    /* Far off the calibration: the TSC jumped (resume, live migration).
     * Keep the slope and start again from this pair. Two such fits in a
     * row that agree are a new rate (migration to another host): take it. */
    if (!near(m, cal_mult, 64)) {
        uint64_t seen = off_mult;
        off_mult = m;
        if (!m || !near(m, seen, 1024))
            m = line.mult;
        else
            cal_mult = m;
    } else {
        off_mult = 0;
    }
    line = (struct d9_clock_line){t, n, m, 0};
    atomic_store_explicit(&cur_mult, m, memory_order_relaxed);
}
#else
void d9_clock_init(int mode) { (void)mode; }
static void refit(void) {}
static void pair(uint64_t *tsc, uint64_t *ns) { *tsc = *ns = 0; }
#endif

/* CLOCK_REALTIME - CLOCK_MONOTONIC now (vDSO reads: async-signal-safe). */
static int64_t rt_offset(void)
{
    struct timespec r = {0, 0};
    clock_gettime(CLOCK_REALTIME, &r);
    return ((int64_t)r.tv_sec * 1000000000 + r.tv_nsec) - (int64_t)d9_now();
}

void d9_clock_anchor(void)
{
    refit();
    line.rt_off = rt_offset();
}

struct d9_clock_line d9_clock_line_now(void)
{
    struct d9_clock_line l = {0, 0, atomic_load_explicit(&cur_mult, memory_order_relaxed), rt_offset()};
    if (d9_clock_tsc)
        pair(&l.tsc, &l.ns);
    return l;
}

uint64_t d9_now_call(void) { return d9_now(); }

uint64_t d9_ns_stamp(uint64_t ns)
{
    if (!d9_clock_tsc)
        return ns;
    uint64_t m = atomic_load_explicit(&cur_mult, memory_order_relaxed);
    unsigned __int128 t = ((unsigned __int128)ns << D9_CLOCK_SHIFT) / m;
    return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

struct d9_clock_line d9_clock_line_cur(void) { return line; }
