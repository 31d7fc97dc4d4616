/* writer.c - the one agent thread: every DIAL9_FLUSH_MS (or when a ring is
 * half full) it drains every slot's ring into one chunk per thread, writes
 * the block (LZ4) to the current segment, rotates and seals segments.
 * It runs with every signal blocked and d9_busy raised for its whole life,
 * so nothing it calls is recorded. A write fault (disk full, ...) is one
 * line; the blocks built meanwhile wait in flight.c's ring (at most
 * DIAL9_FLIGHT_MAX_BYTES, oldest forced out first, as DROP records) and are
 * written first when the disk takes them again. The host never waits for
 * the writer except in dial9_flush and at exit. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "crash.h"
#include "dump.h"
#include "encode.h"
#include "flight.h"
#include "log.h"
#include "nocancel.h"
#include "real.h"
#include "segment.h"

#define D9_POP_BATCH 512          /* preemption records taken from perf at a time (16 KiB) */
#define D9_WRITER_STACK (1u << 20) /* bytes; LZ4F_compressFrame needs ~20 KiB */

static pthread_t thread;
static _Atomic int running;        /* a writer thread exists */
static _Atomic int stopping;
static _Atomic uint32_t kicked;    /* futex word: work is waiting */
static _Atomic int sleeping;       /* the writer is (about to be) in FUTEX_WAIT */
static _Atomic int idle;           /* the writer sleeps its idle sleep: the doorbell kicks it */
static _Atomic int names_flag;     /* some thread was renamed by another */
static pid_t writer_pid;           /* the process the writer thread runs in */
static _Atomic uint32_t flush_req; /* dial9_flush requests made */
static _Atomic uint32_t flush_done; /* futex word: requests served */
static _Atomic int hand_asked;      /* d9_writer_hand_to: hand the files to hand_owner */
static _Atomic uint64_t hand_owner; /* uid << 32 | gid */
static _Atomic int in_cycle;       /* the writer is draining / writing */
static _Atomic uint32_t progress;  /* bumped after each block written (or not): join_writer */
static _Atomic int quiesced;       /* crash handler: start no new cycle */
static _Atomic pid_t writer_tid;
/* futex word: GATE_OPEN, or at the start GATE_HELD until the constructor
 * is through (d9_writer_go), GATE_QUIT when it failed (d9_writer_cancel). */
enum { GATE_OPEN, GATE_HELD, GATE_QUIT };
static _Atomic uint32_t gate;

/* Writer-thread state. */
static uint8_t raw[D9_BLOCK_RAW];
static uint8_t *out;
static size_t out_cap;
static struct d9_enc enc;
static struct d9_raw_event batch[D9_POP_BATCH];
static uint32_t seg_blocks;  /* blocks in the open segment */
static uint64_t taken;       /* events put into blocks so far (quiet cycles: writer_main) */
static uint64_t discarded;   /* events not written after a failure */

/* What a block stands for, per thread: events it holds, and weight = those
 * plus the events its DROP records count. A block forced out of memory
 * during an outage becomes DROP records of those threads (weight each) in
 * the next block, so the trace's drop totals stay exact. More threads in
 * one block than fit here are counted to the last one. */
#define D9_COUNTS_MAX 256
struct tid_count {
    uint32_t tid, events;
    uint64_t weight;
};
struct tid_counts {
    uint32_t n;
    struct tid_count e[D9_COUNTS_MAX];
};
_Static_assert(sizeof(((struct tid_counts *)0)->e) <= D9_FLIGHT_META_MAX, "block metadata too large");
static struct tid_counts meta;  /* the block being built */
static struct tid_counts carry; /* forced out, not yet in a DROP record */
/* The current outage: kept blocks written, and events forced out. */
static uint64_t outage_blocks, outage_bytes, outage_lost;
static uint64_t outage_peak; /* most bytes held in memory at once (the bound applies to this) */

/* Wakes the writer even if it is not sleeping yet (it rechecks kicked).
 * Async-signal-safe: the dump signal handler calls it. */
static void wake_writer(void)
{
    atomic_store(&kicked, 1);
    d9_futex(&kicked, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void d9_writer_wake(void) { wake_writer(); }

int d9_writer_quiesce(int timeout_ms)
{
    atomic_store(&quiesced, 1); /* seq_cst, paired with cycle()'s in_cycle store + load */
    if (!atomic_load(&running) || (pid_t)syscall(SYS_gettid) == atomic_load(&writer_tid))
        return !atomic_load(&running);
    for (int i = 0; i < timeout_ms; i++) {
        if (!atomic_load(&in_cycle))
            return 1;
        struct timespec ms = {0, 1000000};
        syscall(SYS_nanosleep, &ms, NULL); /* not glibc's: a cancellation point, in a crash handler */
    }
    return !atomic_load(&in_cycle);
}

void d9_writer_resume(void) { atomic_store(&quiesced, 0); }

void d9_writer_kick(void)
{
    /* Hot path: one relaxed load when already kicked; a syscall only
     * when the writer sleeps. seq_cst store/load pair with the writer's
     * sleeping store / kicked check, so a wake is never missed. */
    if (atomic_load_explicit(&kicked, memory_order_relaxed))
        return;
    atomic_store(&kicked, 1);
    if (atomic_load(&sleeping)) {
        int saved = errno;
        d9_futex(&kicked, FUTEX_WAKE_PRIVATE, 1, NULL);
        errno = saved;
    }
}

void d9_writer_doorbell(void)
{
    if (atomic_load_explicit(&idle, memory_order_relaxed))
        d9_writer_kick();
}

void d9_names_changed(void) { atomic_store_explicit(&names_flag, 1, memory_order_relaxed); }

/* Sleeps until kicked, stopping, or deadline (CLOCK_MONOTONIC ns). */
static void wait_for_work(uint64_t deadline)
{
    while (!atomic_load(&kicked) && !atomic_load(&stopping)) {
        uint64_t now = d9_now();
        if (now >= deadline)
            break;
        uint64_t left = deadline - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        atomic_store(&sleeping, 1);
        if (!atomic_load(&kicked))
            d9_futex(&kicked, FUTEX_WAIT_PRIVATE, 0, &ts);
        atomic_store(&sleeping, 0);
    }
    atomic_store(&kicked, 0);
}

/* ---- Blocks and segments ---------------------------------------------- */

static uint64_t flush_period(void) { return (uint64_t)d9_cfg.flush_ms * 1000000u; }

/* A process that records nothing need not wake its writer every period
 * (an idle writer's wake-up costs 24-45 us of CPU on the bench VM, 4 a
 * second; nginx's master records nothing: docs/BENCH-HISTORY.md, session
 * 49). After D9_QUIET_CYCLES quiet cycles in a row (cycle()), the writer
 * sleeps idle_sleep() and raises idle; a thread that ends a park of 20 us
 * or more whose schedstat read is due (d9_sched_unpark: at most every
 * DIAL9_SCHED_GAP_MS a thread, so the first long park to end after a quiet
 * spell) rings the doorbell, d9_writer_doorbell, which kicks the writer
 * back to its period. Events the doorbell misses (a thread that records
 * without ending a long park, DIAL9_SCHED=0) wait for the idle sleep's
 * end: 8 periods, at most 2 s, and never less than one period. */
#define D9_QUIET_CYCLES 2
#define D9_IDLE_PERIODS 8
#define D9_IDLE_SLEEP_MAX_NS 2000000000u
static uint64_t idle_sleep(void)
{
    uint64_t p = flush_period(), s = p * D9_IDLE_PERIODS;
    return s < D9_IDLE_SLEEP_MAX_NS ? s : p > D9_IDLE_SLEEP_MAX_NS ? p : D9_IDLE_SLEEP_MAX_NS;
}

static inline void count_for(struct tid_counts *c, uint32_t tid, uint32_t events, uint64_t weight)
{
    uint32_t i = c->n;
    while (i && c->e[i - 1].tid != tid) /* the last one first: a chunk's events come in a run */
        i--;
    if (D9_UNLIKELY(!i)) {
        if (c->n < D9_COUNTS_MAX)
            c->e[c->n++] = (struct tid_count){.tid = tid};
        i = c->n;
    }
    c->e[i - 1].events += events;
    c->e[i - 1].weight += weight;
}

static uint64_t weight_of(const struct tid_counts *c)
{
    uint64_t w = 0;
    for (uint32_t i = 0; i < c->n; i++)
        w += c->e[i].weight;
    return w;
}

/* flight.c forced the oldest kept block out: its threads' DROP records. */
static void evicted(const uint8_t *m, size_t len)
{
    struct tid_counts b;
    b.n = (uint32_t)(len / sizeof(b.e[0]));
    memcpy(b.e, m, (size_t)b.n * sizeof(b.e[0]));
    for (uint32_t i = 0; i < b.n; i++) {
        count_for(&carry, b.e[i].tid, 0, b.e[i].weight);
        outage_lost += b.e[i].events;
    }
}

/* The DROP records owed for forced-out blocks, at the start of a block. */
static void put_carried(void)
{
    uint64_t now = d9_now();
    for (uint32_t i = 0; i < carry.n; i++) {
        struct d9_raw_event ev = {.ts = now, .type = D9_EV_DROP, .a = carry.e[i].weight};
        if (d9_enc_begin_chunk(&enc, carry.e[i].tid, now) == 0 && d9_enc_event(&enc, &ev) == 0)
            count_for(&meta, carry.e[i].tid, 0, carry.e[i].weight);
        else
            discarded += carry.e[i].weight; /* no room in a block: never with 256 of them */
    }
    d9_enc_end_chunk(&enc);
    carry.n = 0;
}

static void fail_stop(void)
{
    atomic_store(&d9_recording, 0); /* the hooks go quiet; rings are still drained */
}

static void write_block(const uint8_t *buf, size_t n)
{
    if (d9_seg_is_open() && seg_blocks && d9_seg_size() + n > d9_cfg.max_file_size)
        d9_seg_seal();
    if (!d9_seg_is_open()) {
        if (d9_seg_open() < 0) {
            fail_stop();
            return;
        }
        seg_blocks = 0;
    }
    int rc = d9_seg_write(buf, n);
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    if (rc < 0) {
        fail_stop();
        return;
    }
    seg_blocks++;
}

/* An outage is over (everything kept is written): one line. */
static void end_outage(void)
{
    if (!d9_seg_resume())
        return;
    d9_log("writing to %s again; %llu blocks (%llu bytes) kept in memory during the outage written first "
           "(at most %llu bytes held at once), %llu events forced out of memory (DIAL9_FLIGHT_MAX_BYTES, "
           "counted as dropped)",
           d9_seg_dir_path(), (unsigned long long)outage_blocks, (unsigned long long)outage_bytes,
           (unsigned long long)outage_peak, (unsigned long long)outage_lost);
    outage_blocks = outage_bytes = outage_lost = outage_peak = 0;
}

/* Continuous mode: the ring the blocks of an outage wait in, mapped at the
 * first outage. No MinAge: only DIAL9_FLIGHT_MAX_BYTES bounds it. */
static int keep_ready(void)
{
    static int map_failed;
    if (d9_flight_ready())
        return 0;
    if (map_failed)
        return -1;
    if (d9_flight_map(d9_cfg.flight_max_bytes, UINT32_MAX) < 0) {
        map_failed = 1;
        d9_log("cannot map %llu bytes to keep the trace during the outage: %s; dropping it (counted)",
               (unsigned long long)d9_cfg.flight_max_bytes, strerror(errno));
        return -1;
    }
    d9_flight_on_evict(evicted);
    return 0;
}

/* Continuous mode: writes out[0..n), unless the disk refuses it or older
 * blocks wait: then it waits in memory behind them (write_kept). */
static void store_block(size_t n)
{
    if (!d9_flight_blocks() && !d9_seg_failed()) {
        write_block(out, n);
        if (!d9_seg_failed()) {
            end_outage();
            return;
        }
    }
    if (d9_seg_stopped() || keep_ready() < 0)
        discarded += weight_of(&meta);
    else {
        d9_flight_add(out, n, meta.e, meta.n * sizeof(meta.e[0]), d9_now());
        if (d9_flight_bytes() > outage_peak)
            outage_peak = d9_flight_bytes();
    }
}

/* Writes the ring's blocks, oldest first, and forgets them; stops at a
 * fault (the block it cut off the file stays, with the ones after it).
 * Adds the blocks and bytes written to *blocks and *bytes. */
static void write_ring(uint64_t *blocks, uint64_t *bytes)
{
    uint32_t done = 0, n = d9_flight_blocks();
    while (done < n && !d9_seg_failed()) {
        size_t len = d9_flight_copy(done, out, out_cap);
        write_block(out, len);
        if (d9_seg_failed())
            break;
        done++;
        *bytes += len;
    }
    d9_flight_forget(done);
    *blocks += done;
}

/* Continuous mode, once the disk takes blocks again: the kept ones before
 * anything newer. */
static void write_kept(void)
{
    write_ring(&outage_blocks, &outage_bytes);
    if (!d9_flight_blocks())
        end_outage();
}

/* Compresses the block being built (if it has events) and writes it (flight
 * mode: keeps it), then starts a new one. */
static void flush_block(void)
{
    if (enc.events) {
        d9_enc_finish(&enc);
        size_t n = d9_seg_stopped() ? 0 : d9_block_build(&enc, out, out_cap);
        if (!n)
            discarded += weight_of(&meta);
        else if (d9_cfg.mode == D9_MODE_FLIGHT)
            d9_flight_add(out, n, NULL, 0, d9_now()); /* on disk only when a dump is asked */
        else
            store_block(n);
    }
    d9_enc_init(&enc, raw, sizeof(raw));
    meta.n = 0;
}

/* At exit: one more attempt at once; what still cannot be written is counted. */
static void write_kept_at_exit(void)
{
    if (!d9_flight_blocks() && !carry.n)
        return;
    d9_seg_retry_now();
    write_kept();
    if (carry.n) {
        put_carried();
        flush_block();
        write_kept();
    }
    struct tid_counts b;
    for (uint32_t i = 0, n = d9_flight_blocks(); i < n; i++) {
        b.n = (uint32_t)(d9_flight_meta(i, (uint8_t *)b.e, sizeof(b.e)) / sizeof(b.e[0]));
        discarded += weight_of(&b);
    }
    discarded += weight_of(&carry);
    d9_flight_clear();
}

size_t d9_writer_take_block(uint8_t *buf, size_t cap)
{
    if (!enc.events)
        return 0;
    d9_enc_finish(&enc);
    size_t n = d9_block_build(&enc, buf, cap);
    d9_enc_init(&enc, raw, sizeof(raw));
    meta.n = 0;
    return n;
}

/* ---- Draining ---------------------------------------------------------- */

/* Ends the run of events put inline (put_next): e's members again, and
 * the run's events added to the block's count. */
static inline void put_settle(struct d9_slot *s, struct d9_enc_run *run)
{
    d9_enc_run_end(&enc, run);
    uint32_t k = run->n - run->n0;
    if (k) {
        count_for(&meta, s->tid, k, k);
        taken += k;
    }
}

/* Encodes ev in s's chunk, flushing the block when it is full. */
static void put_full(struct d9_slot *s, const struct d9_raw_event *ev)
{
    taken++;
    if (ev->type == D9_EV_THREAD_NAME) { /* the name the header tables will show */
        size_t n = ev->len < 15 ? ev->len : 15;
        memcpy(s->name, &ev->a, n < 8 ? n : 8);
        if (n > 8)
            memcpy(s->name + 8, &ev->b, n - 8);
        s->name[n] = 0;
    }
    if (d9_dump_noting)
        d9_dump_note((uint32_t)(s - d9_slot_at(0)), ev);
    if (d9_seg_stopped()) {
        discarded++;
        return;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if ((enc.in_chunk || d9_enc_begin_chunk(&enc, s->tid, ev->ts) == 0) && d9_enc_event(&enc, ev) == 0) {
            int drop = ev->type == D9_EV_DROP;
            count_for(&meta, s->tid, !drop, drop ? ev->a : 1);
            return;
        }
        flush_block(); /* full: write it, retry in an empty block */
    }
    discarded++;
}

/* Puts one drained event of s (a ring's or perf's: never a DROP, which the
 * writer makes and puts with put_full). The every-event case is inline: the event
 * has no name to keep, no trigger to feed (noting: d9_dump_noting, read
 * once a run), no weight of its own, and the run takes it (s's chunk is
 * open: a drain ends it); such events add to the block's count once for
 * the run, not once each (about 9 instructions an event). Any other ends
 * the run (put_settle) before put_full, which may write the block and
 * start the next, and starts a new one after; the caller ends the last.
 * After a failure stopped the segments, they still go into the block,
 * which flush_block then counts as discarded. */
static inline __attribute__((always_inline)) void put_next(struct d9_slot *s, const struct d9_raw_event *ev,
                                                           struct d9_enc_run *run, int noting)
{
    if (D9_LIKELY(ev->type != D9_EV_THREAD_NAME && !noting) && D9_LIKELY(d9_enc_run_event(&enc, run, ev) == 0))
        return;
    put_settle(s, run);
    put_full(s, ev);
    d9_enc_run_begin(&enc, run);
}

static void put_run(struct d9_slot *s, const struct d9_raw_event *ev, uint32_t n)
{
    struct d9_enc_run run;
    const int noting = d9_dump_noting;
    d9_enc_run_begin(&enc, &run);
    for (uint32_t i = 0; i < n; i++)
        put_next(s, &ev[i], &run, noting);
    put_settle(s, &run);
}

/* The thread's preemptions, in a chunk of their own: perf records carry
 * their own times, which interleave with the ring's (the decoder sorts).
 * First, so lost perf records are in this cycle's DROP. */
static void drain_preempts(struct d9_slot *s)
{
    uint32_t n;
    do {
        n = d9_sched_drain(s, batch, D9_POP_BATCH);
        put_run(s, batch, n);
    } while (n == D9_POP_BATCH);
    d9_enc_end_chunk(&enc);
}

static void drain(struct d9_slot *s, int check_name)
{
    drain_preempts(s);
    /* Bounded: at most one ring's worth per cycle, so a thread producing
     * as fast as we drain cannot keep the writer from the other slots.
     * Each event goes from its entry straight into the chunk, its stamps
     * made ns on the way (a batch copied out, converted, then put cost 8-11
     * instructions an event more: docs/BENCH-HISTORY.md, session 41). */
    struct d9_ring *r = &s->ring;
    const struct d9_clock_line line = d9_clock_line_cur();
    const int tsc = d9_clock_tsc;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed), end = t + r->cap;
    uint64_t last = s->last_ns;
    struct d9_enc_run run;
    const int noting = d9_dump_noting;
    d9_enc_run_begin(&enc, &run);
    for (struct d9_raw_event *e; t < end && (e = d9_ring_at(r, t)); t++) {
        struct d9_raw_event ev = *e;
        d9_ring_free(e);
        d9_clock_event_line(&line, tsc, &ev); /* stamps -> ns, before anyone reads them */
        if (ev.ts < last)
            ev.ts = last; /* a refit moved the line back a little: keep the thread's order */
        last = ev.ts;
        put_next(s, &ev, &run, noting);
    }
    put_settle(s, &run);
    atomic_store_explicit(&r->tail, t, memory_order_relaxed);
    s->last_ns = last;
    uint64_t dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
    uint64_t now = d9_now(); /* after the pops: not before any popped event */
    if (dropped != s->drop_reported) {
        struct d9_raw_event ev = {.ts = now, .type = D9_EV_DROP, .a = dropped - s->drop_reported};
        put_full(s, &ev);
        s->drop_reported = dropped;
    }
    char name[16];
    int named = 0;
    if (check_name) {
        d9_seg_gate(1); /* its fd: segment.h */
        named = d9_read_comm(s->tid, name) >= 0;
        d9_seg_gate(0);
    }
    if (named && strcmp(name, s->name) != 0) {
        struct d9_raw_event ev;
        d9_name_event(&ev, now, name);
        put_full(s, &ev);
    }
    d9_enc_end_chunk(&enc);
}

/* ---- Dumps ----------------------------------------------------------- */

/* Flight mode: writes the kept history as sealed segments (rotating at
 * DIAL9_MAX_FILE_SIZE), then forgets it; on a fault, what was not written
 * stays for the next dump. 0 or an errno value. */
static int dump_flight(const char *reason)
{
    uint32_t n = d9_flight_blocks();
    uint64_t bytes = d9_flight_bytes();
    if (d9_seg_failed())
        return EIO;
    if (!n) {
        d9_log_info("dump (%s): nothing recorded since the last dump", reason);
        return ENODATA;
    }
    d9_seg_seal(); /* never open in flight mode; the dump starts a segment of its own */
    d9_seg_set_reason(reason); /* every segment of the dump says why it exists */
    uint64_t blocks = 0, written = 0;
    write_ring(&blocks, &written);
    d9_seg_seal();
    d9_seg_set_reason(NULL);
    if (d9_seg_failed())
        return EIO;
    end_outage();
    d9_log_info("dump (%s): %u blocks, %llu bytes written to %s", reason, n, (unsigned long long)bytes,
                d9_seg_dir_path());
    return 0;
}

/* A dump trigger taken (d9_dump_take) after this cycle's block was written:
 * flight mode writes the kept history; continuous mode has just written
 * everything. */
static void serve_dump(const char *reason)
{
    int err = 0;
    if (d9_cfg.mode == D9_MODE_FLIGHT)
        err = dump_flight(reason);
    else if (d9_seg_failed())
        err = EIO;
    else /* continuous: this cycle has just written everything */
        d9_log_info("dump (%s): trace flushed to %s", reason, d9_seg_dir_path());
    d9_dump_finish(err);
}

/* The open block is written when it is due: a flush or a dump was asked
 * for, the writer stops, or its oldest event is DIAL9_FLUSH_MS old, so an
 * event still reaches the file within DIAL9_FLUSH_MS (plus a cycle). A full
 * block is written as soon as it fills (put_full). Not at the end of every
 * cycle: a busy thread's half-full ring starts a cycle every 2,048 events,
 * and a block a cycle paid its LZ4 frame, CRC and system calls, cold, each
 * time (Tokio at 4,000 requests/s: 61 -> 34 blocks in 10 s, 6% less writer
 * CPU: docs/BENCH-HISTORY.md, session 41). */
static uint64_t block_deadline(uint64_t now)
{
    return (enc.events && enc.first_ts <= now ? enc.first_ts : now) + flush_period();
}

static int block_due(int asked, uint64_t now)
{
    return enc.events && (asked || atomic_load(&stopping) || now >= block_deadline(now));
}

/* Continuous mode: blocks kept in memory through an outage wait to be written. */
static int kept_waiting(void) { return d9_cfg.mode != D9_MODE_FLIGHT && d9_flight_blocks(); }

/* One drain of every ring and what is due after it. 1 when the cycle was
 * quiet: it found no event, and nothing waits to be written (no open
 * block, no carried drops, no block kept through an outage). */
static int cycle(void)
{
    atomic_store(&in_cycle, 1);
    if (atomic_load(&quiesced)) { /* a crash handler reads the rings and the history */
        atomic_store(&in_cycle, 0);
        return 0;
    }
    uint64_t taken0 = taken;
    uint32_t req = atomic_load(&flush_req);
    int names = atomic_exchange(&names_flag, 0);
    d9_clock_anchor(); /* before the pops: this cycle's events lie before the pair */
    if (carry.n)
        put_carried();
    for (uint32_t i = 0, n = d9_slot_limit(); i < n; i++) {
        struct d9_slot *s = d9_slot_at(i);
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st != D9_SLOT_LIVE && st != D9_SLOT_EXITED)
            continue;
        drain(s, names && st == D9_SLOT_LIVE);
        if (st == D9_SLOT_EXITED) /* its last push happened before EXITED: all drained */
            d9_slot_release(s);
    }
    char reason[D9_REASON_MAX];
    uint64_t now = d9_now();
    int api, dump = d9_dump_take(reason, &api, now); /* after the drains, which may raise one */
    if (block_due(dump || req != atomic_load(&flush_done), now))
        flush_block();
    if (kept_waiting())
        write_kept();
    if (d9_seg_is_open() && seg_blocks &&
        d9_now() - d9_seg_opened_ns() >= (uint64_t)d9_cfg.rotation_secs * 1000000000u)
        d9_seg_seal(); /* the next block opens the next segment */
    if (d9_cfg.mode == D9_MODE_FLIGHT)
        d9_flight_expire(d9_now());
    if (dump)
        serve_dump(reason);
    if (atomic_load_explicit(&hand_asked, memory_order_relaxed) && atomic_exchange(&hand_asked, 0)) {
        /* after the flush: its segment is handed over too */
        uint64_t o = atomic_load(&hand_owner);
        d9_seg_hand_to((uid_t)(o >> 32), (gid_t)o);
    }
    if (req != atomic_load(&flush_done)) { /* a flush was asked for: its callers wait */
        atomic_store(&flush_done, req);
        d9_futex(&flush_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
    }
    atomic_store(&in_cycle, 0);
    return taken == taken0 && !enc.events && !carry.n && !kept_waiting();
}

/* The writer inherits the scheduling policy of the thread that started it
 * (glibc's PTHREAD_INHERIT_SCHED). Under a SCHED_FIFO or SCHED_RR host
 * thread it would be a real-time thread that preempts every normal thread
 * of the host while it compresses; it drops to SCHED_OTHER (lowering one's
 * own policy needs no privilege) and keeps its inherited nice value. Under
 * a saturating real-time host it then runs late and the rings drop, counted,
 * rather than the host waiting. */
static void leave_realtime(void)
{
    int policy = sched_getscheduler(0);
    if (policy < 0)
        return;
    policy &= ~SCHED_RESET_ON_FORK;
    if (policy != SCHED_FIFO && policy != SCHED_RR)
        return;
    struct sched_param normal = {.sched_priority = 0};
    if (sched_setscheduler(0, SCHED_OTHER, &normal) != 0)
        d9_log("the writer thread stays real-time (%s): it may delay the host's other threads",
               strerror(errno));
}

static void *writer_main(void *arg)
{
    d9_busy = 1; /* for good: nothing this thread does is recorded */
    leave_realtime(); /* before the name: whoever sees "dial9-writer" sees its policy */
    pthread_setname_np(pthread_self(), "dial9-writer");
    atomic_store(&writer_tid, (pid_t)syscall(SYS_gettid));
    if (atomic_load(&gate) == GATE_HELD) { /* the start: DIAL9_DIR first, off the constructor */
        d9_seg_open_dir();
        uint32_t g;
        while ((g = atomic_load(&gate)) == GATE_HELD)
            d9_futex(&gate, FUTEX_WAIT_PRIVATE, GATE_HELD, NULL);
        if (g == GATE_QUIT)
            return NULL;
    }
    unsigned quiet = 0; /* quiet cycles in a row */
    while (!atomic_load(&stopping)) {
        uint64_t now = d9_now();
        /* a period, or less while a block is open; the idle sleep after a quiet spell */
        wait_for_work(quiet >= D9_QUIET_CYCLES ? now + idle_sleep() : block_deadline(now));
        atomic_store_explicit(&idle, 0, memory_order_relaxed);
        quiet = cycle() ? quiet + 1 : 0;
        if (quiet >= D9_QUIET_CYCLES)
            atomic_store(&idle, 1); /* before the wait's sleeping store: a doorbell after it kicks */
    }
    cycle(); /* final drain: everything recorded before the stop */
    if (!atomic_load(&quiesced)) {
        if (d9_cfg.mode != D9_MODE_FLIGHT)
            write_kept_at_exit();
        d9_seg_seal();
    }
    if (discarded)
        d9_log("%llu events were not written", (unsigned long long)discarded);
    return NULL;
}

/* ---- Control ----------------------------------------------------------- */

/* Joins the writer if it ends within 100 ms: 0, else ETIMEDOUT. On
 * CLOCK_REALTIME, pthread_timedjoin_np's (a step of it changes one wait;
 * callers time longer waits on d9_now). Not pthread_clockjoin_np: TSan
 * sees no join in it. Inside the agent (d9_busy): the join interposer
 * records no park of the agent's own. */
static int join_slice(void)
{
    d9_busy++;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    int rc = pthread_timedjoin_np(thread, NULL, &until);
    d9_busy--;
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

static int spawn(uint32_t first)
{
    if (!out) {
        out_cap = d9_block_bound(sizeof(raw));
        void *m = mmap(NULL, out_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            d9_log("cannot map %zu bytes for the writer: %s; not recording", out_cap, strerror(errno));
            return -1;
        }
        out = m;
    }
    d9_enc_init(&enc, raw, sizeof(raw));
    atomic_store(&stopping, 0);
    atomic_store(&kicked, 0);
    atomic_store(&idle, 0);
    seg_blocks = 0;
    discarded = 0;
    meta.n = carry.n = 0;
    outage_blocks = outage_bytes = outage_lost = outage_peak = 0;
    atomic_store(&gate, first);
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, D9_WRITER_STACK);
    d9_busy++; /* the pthread_create interposer passes straight through */
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: the writer never takes the host's signals */
    int rc = pthread_create(&thread, &attr, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    d9_busy--;
    pthread_attr_destroy(&attr);
    if (rc) {
        d9_log("cannot start the writer thread: %s; not recording", strerror(rc));
        return -1;
    }
    writer_pid = (pid_t)syscall(SYS_getpid);
    return 0;
}

int d9_writer_start(void)
{
    if (spawn(GATE_OPEN) < 0)
        return -1;
    atomic_store(&running, 1);
    return 0;
}

int d9_writer_start_held(void) { return spawn(GATE_HELD); }

static void open_gate(uint32_t to)
{
    atomic_store(&gate, to);
    d9_futex(&gate, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void d9_writer_go(void)
{
    atomic_store(&running, 1);
    open_gate(GATE_OPEN);
}

void d9_writer_cancel(void)
{
    open_gate(GATE_QUIT);
    if (join_slice() != 0)
        pthread_detach(thread); /* still inside DIAL9_DIR's open: it ends on its own */
}

/* 0 in a child made without fork() (raw clone, syscall(SYS_fork),
 * _Fork()): no atfork handler ran, and the writer it would wait for is
 * its parent's. A system call: for exit, exec and flush requests only. */
static int writer_here(void) { return (pid_t)syscall(SYS_getpid) == writer_pid; }

/* Exit waits for the final drain as long as the writer gets blocks
 * written; after D9_EXIT_STALL_MS with none (a trace directory on a file
 * system that stopped answering) it goes on without it: the program's exit
 * must not hang on the agent's files. */
#define D9_EXIT_STALL_MS 5000
static void join_writer(void)
{
    uint32_t seen = atomic_load_explicit(&progress, memory_order_relaxed);
    uint64_t since = d9_now();
    for (;;) {
        if (join_slice() == 0)
            return;
        uint32_t now = atomic_load_explicit(&progress, memory_order_relaxed);
        if (now != seen) {
            seen = now;
            since = d9_now();
        } else if (d9_now() - since >= (uint64_t)D9_EXIT_STALL_MS * 1000000u) {
            d9_log("the writer has finished no write for %d s (is DIAL9_DIR=%s answering?); exiting "
                   "without the events still in memory", D9_EXIT_STALL_MS / 1000, d9_cfg.dir);
            return;
        }
    }
}

void d9_writer_stop(void)
{
    if (!atomic_exchange(&running, 0) || !writer_here())
        return;
    d9_busy++;
    atomic_store(&stopping, 1);
    wake_writer();
    join_writer();
    d9_busy--;
}

int d9_writer_flush(int timeout_ms)
{
    if (!atomic_load(&running) || d9_seg_failed() || !writer_here())
        return -1;
    int rc = 0, saved = errno;
    d9_busy++;
    uint32_t want = atomic_fetch_add(&flush_req, 1) + 1;
    wake_writer();
    uint64_t deadline = d9_now() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint32_t done = atomic_load(&flush_done);
        if ((int32_t)(done - want) >= 0)
            break;
        uint64_t now = d9_now();
        if (now >= deadline) {
            rc = -1;
            break;
        }
        uint64_t left = deadline - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        d9_futex(&flush_done, FUTEX_WAIT_PRIVATE, done, &ts);
    }
    d9_busy--;
    errno = saved;
    return rc || d9_seg_failed() ? -1 : 0;
}

int d9_writer_hand_to(uid_t uid, gid_t gid, int timeout_ms)
{
    atomic_store(&hand_owner, (uint64_t)uid << 32 | gid);
    atomic_store(&hand_asked, 1); /* before the flush request: the cycle that answers it sees this */
    int rc = d9_writer_flush(timeout_ms);
    /* Not taken (no writer, an outage, a timeout): after the switch it
     * would be made as the new user and fail, so it is not made at all. */
    atomic_store(&hand_asked, 0);
    return rc;
}

void d9_writer_after_fork_child(void)
{
    if (!atomic_load(&running))
        return; /* not recording in the parent */
    atomic_store(&hand_asked, 0); /* the parent's request is answered by the parent's writer */
    d9_busy++;
    int cancel = d9_cancel_off(); /* fork is no cancellation point; the new files' calls are */
    /* Only the forking thread exists here: the parent's writer and its
     * events stay the parent's. Start over with empty slots and files. */
    atomic_store(&running, 0);
    atomic_store(&sleeping, 0);
    atomic_store(&names_flag, 0);
    atomic_store(&flush_req, 0);
    atomic_store(&flush_done, 0);
    d9_registry_after_fork_child();
    d9_seg_after_fork_child();
    d9_flight_clear(); /* the parent's history stays the parent's */
    atomic_store(&quiesced, 0);
    if (d9_writer_start() < 0)
        atomic_store(&d9_recording, 0);
    d9_cancel_restore(cancel);
    d9_busy--;
}
