/* crash.c - crash dumps (crash.h). The handler runs on the crashing thread
 * with only async-signal-safe code: buffers mapped at init (never the
 * writer's), the pure encoder (encode.h: no allocation; LZ4F_compressFrame
 * of a single independent block allocates nothing with liblz4's default
 * LZ4F_HEAPMODE=0, it uses ~20 KiB of stack), raw syscalls, atomics. The
 * dump runs on a stack of its own, mapped at init: the handler may be on
 * the thread's alternate stack, which can be small (Rust gives each thread
 * 8 KiB and a guard page). */
#include "crash.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h> /* RENAME_NOREPLACE */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "direct.h"
#include "encode.h"
#include "flight.h"
#include "lifecycle.h"
#include "log.h"
#include "real.h"
#include "safe_load.h"
#include "segment.h"
#include "sigchain.h"

#define D9_CRASH_QUIESCE_MS 500       /* wait for the writer's cycle to end */
#define D9_CRASH_OTHER_WAIT_MS 2000   /* a second crashing thread waits for the dump */
#define D9_CRASH_STACK (128u << 10)   /* the dump's stack: write_crash takes ~30 KiB */
#define D9_CRASH_NAME "crash"         /* crash.d9 in the process directory */

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NCRASH (sizeof(crash_signals) / sizeof(crash_signals[0]))
static _Atomic int crashed, dump_done;
static int dumps_on; /* DIAL9_CRASH_DUMP, and its buffers mapped */

/* Mapped at init. */
static uint8_t *raw, *out, *hdr, *stack_top;
static size_t out_cap, hdr_cap;
static uint32_t *tids;
static char (*names)[16];
static uint32_t max_threads;
static struct d9_enc enc;
/* Process facts for the header: segment.c's, read once at its init. */
static struct d9_proc_facts facts;

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t d9_header_add_tlv(uint8_t *h, size_t len, size_t cap, uint16_t tag, const void *val, uint32_t vlen)
{
    size_t tlvs = D9_SEG_MAGIC_LEN + 8, at = len - 4, add = 6 + (size_t)vlen;
    if (len < tlvs + 4 || len + add > cap)
        return 0;
    h[at] = (uint8_t)tag;
    h[at + 1] = (uint8_t)(tag >> 8);
    put_le32(h + at + 2, vlen);
    memcpy(h + at + 6, val, vlen);
    len += add;
    put_le32(h + len - 4, d9_crc32c(0, h + tlvs, len - 4 - tlvs));
    put_le32(h + D9_SEG_MAGIC_LEN + 4, (uint32_t)(len - tlvs));
    return len;
}

/* ---- Async-signal-safe helpers ------------------------------------------ */

static size_t put_str(char *p, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        p[at++] = *s++;
    p[at] = 0;
    return at;
}

static size_t put_uint(char *p, size_t at, size_t cap, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof(tmp));
    while (n && at + 1 < cap)
        p[at++] = tmp[--n];
    p[at] = 0;
    return at;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        long w = syscall(SYS_write, fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "?";
    }
}

/* Compresses and writes the block being built, then starts a new one. */
static int flush(int fd)
{
    if (!enc.events)
        return 0;
    d9_enc_finish(&enc);
    size_t n = d9_block_build(&enc, out, out_cap);
    d9_enc_init(&enc, raw, D9_BLOCK_RAW);
    return n && write_all(fd, out, n) == 0 ? 0 : -1;
}

static int put(int fd, uint32_t tid, const struct d9_raw_event *ev)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if ((enc.in_chunk || d9_enc_begin_chunk(&enc, tid, ev->ts) == 0) && d9_enc_event(&enc, ev) == 0)
            return 0;
        if (flush(fd) < 0)
            return -1;
    }
    return 0; /* does not encode: skipped */
}

/* Every slot's published events. They are one run of used entries
 * (ring.h); a writer stopped mid-pop has freed the first of them before it
 * moved its tail, so the scan steps over free entries up to the run, a
 * ring's length at most. take: the writer is idle (quiesced), so the dump
 * is the consumer and frees what it wrote; the writer's drain at an exit
 * after the dump (a program's handler that calls exit) then does not
 * write them twice. Otherwise they are left to the writer. */
static int write_rings(int fd, int take)
{
    struct d9_clock_line line = d9_clock_line_now(); /* the writer's may be mid-update */
    for (uint32_t i = 0, n = d9_slot_limit(); i < n; i++) {
        struct d9_slot *s = d9_slot_at(i);
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if ((st != D9_SLOT_LIVE && st != D9_SLOT_EXITED) || !s->ring.buf)
            continue;
        uint64_t t = atomic_load_explicit(&s->ring.tail, memory_order_relaxed), end = t + s->ring.cap;
        while (t < end && !d9_ring_entry_used(&s->ring.buf[t & s->ring.mask]))
            t++;
        for (; t < end && d9_ring_entry_used(&s->ring.buf[t & s->ring.mask]); t++) {
            struct d9_raw_event *e = &s->ring.buf[t & s->ring.mask], ev = *e;
            d9_clock_event_on(&line, &ev);
            if (put(fd, s->tid, &ev) < 0)
                return -1;
            if (take)
                d9_ring_free(e);
        }
        if (take)
            atomic_store_explicit(&s->ring.tail, t, memory_order_release);
        d9_enc_end_chunk(&enc);
    }
    return flush(fd);
}

/* Why a dump is written, in the one int call_on_stack passes: the signal,
 * the fault whose handler (the program's) it came from, and whether that
 * handler exited. */
#define D9_WHY(sig, fault, exited) ((sig) | (fault) << 8 | (exited) << 16)
#define D9_WHY_SIG(w) ((w)&0xff)
#define D9_WHY_FAULT(w) (((w) >> 8) & 0xff)
#define D9_WHY_EXITED(w) ((w) >> 16)

static size_t put_signal(char *p, size_t at, size_t cap, int sig)
{
    at = put_str(p, at, cap, "signal ");
    at = put_uint(p, at, cap, (uint64_t)sig);
    at = put_str(p, at, cap, " (");
    at = put_str(p, at, cap, signame(sig));
    return put_str(p, at, cap, ")");
}

/* The reason: "crash: signal 6 (SIGABRT)", "... in the program's handler of
 * signal 11 (SIGSEGV)" (a runtime's stack overflow report that aborts),
 * "...; the program's handler exited". */
static size_t build_header(int why)
{
    struct d9_header_info h = {.pid = (uint32_t)syscall(SYS_getpid), .seq = UINT32_MAX, .exe = facts.exe,
                               .hostname = facts.hostname, .clock = "monotonic", .agent_version = D9_AGENT_VERSION,
                               .cmdline = facts.cmdline, .cmdline_len = facts.cmdline_len, .tids = tids,
                               .names = (const char (*)[16])names, .identity = d9_seg_identity()};
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    h.anchor_real_ns = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
    h.anchor_mono_ns = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
    for (uint32_t i = 0, n = d9_slot_limit(); i < n && h.nthreads < max_threads; i++) {
        struct d9_slot *s = d9_slot_at(i);
        if (atomic_load_explicit(&s->state, memory_order_acquire) != D9_SLOT_LIVE)
            continue;
        tids[h.nthreads] = s->tid;
        memcpy(names[h.nthreads], s->name, 16); /* may be mid-update by the writer: a name, at worst stale */
        names[h.nthreads][15] = 0;
        h.nthreads++;
    }
    size_t len = d9_header_build(hdr, hdr_cap, &h);
    char reason[128];
    size_t rl = put_signal(reason, put_str(reason, 0, sizeof(reason), "crash: "), sizeof(reason), D9_WHY_SIG(why));
    if (D9_WHY_FAULT(why))
        rl = put_signal(reason, put_str(reason, rl, sizeof(reason), " in the program's handler of "), sizeof(reason),
                        D9_WHY_FAULT(why));
    if (D9_WHY_EXITED(why))
        rl = put_str(reason, rl, sizeof(reason), "; the program's handler exited");
    return len ? d9_header_add_tlv(hdr, len, hdr_cap, D9_TLV_DUMP_REASON, reason, (uint32_t)rl) : 0;
}

/* Writes <process dir>/crash.d9.open, renamed crash.d9 once complete.
 * why: D9_WHY. */
static void write_crash(int why)
{
    if (!atomic_load(&d9_recording) || d9_seg_failed())
        return;
    int idle = d9_writer_quiesce(D9_CRASH_QUIESCE_MS);
    char open_path[D9_DIR_MAX + 128], path[D9_DIR_MAX + 128];
    size_t n = put_str(open_path, 0, sizeof(open_path), d9_seg_dir_path());
    if (!d9_seg_dir_claimed()) {
        /* No segment yet (flight mode before a dump, an early crash): made
         * here with the writer's rule (segment.h), never one an earlier
         * process of the same pid left, whose crash.d9 this would replace. */
        size_t base = n;
        for (int i = 1; syscall(SYS_mkdirat, AT_FDCWD, open_path, 0700) != 0; i++) {
            if (errno != EEXIST || i == D9_PROC_NAMES)
                return;
            n = put_uint(open_path, put_str(open_path, base, sizeof(open_path), "."), sizeof(open_path),
                         (uint64_t)i + 1);
        }
        if (idle) /* the writer's segments, if the process goes on (an exit), go beside it */
            d9_seg_dir_adopt(open_path);
    }
    put_str(path, put_str(path, 0, sizeof(path), open_path), sizeof(path), "/" D9_CRASH_NAME D9_SEG_SUFFIX);
    put_str(open_path, n, sizeof(open_path), "/" D9_CRASH_NAME D9_SEG_OPEN_SUFFIX);
    size_t hl = build_header(why);
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int dir = AT_FDCWD;
    const char *open_name = open_path, *name = path;
    int fd = (int)syscall(SYS_openat, dir, open_name, flags, 0600);
    if (fd < 0 && errno == EACCES && (dir = d9_seg_proc_fd()) >= 0) {
        open_name = D9_CRASH_NAME D9_SEG_OPEN_SUFFIX; /* switched from root: the path is closed to us */
        name = D9_CRASH_NAME D9_SEG_SUFFIX;
        fd = (int)syscall(SYS_openat, dir, open_name, flags, 0600);
    }
    if (fd < 0)
        return;
    int rc = hl && write_all(fd, hdr, hl) == 0 ? 0 : -1;
    d9_enc_init(&enc, raw, D9_BLOCK_RAW);
    /* Flight mode: the history the writer kept, when it is not mid-update. */
    for (uint32_t i = 0; rc == 0 && idle && d9_cfg.mode == D9_MODE_FLIGHT && i < d9_flight_blocks(); i++) {
        size_t bl = d9_flight_copy(i, out, out_cap);
        if (bl)
            rc = write_all(fd, out, bl);
    }
    /* The writer's open block: drained before the rings' events, older than them. */
    size_t pending = rc == 0 && idle ? d9_writer_take_block(out, out_cap) : 0;
    if (pending)
        rc = write_all(fd, out, pending);
    if (rc == 0)
        rc = write_rings(fd, idle);
    syscall(SYS_close, fd);
    if (rc == 0) /* never over another crash.d9: it stays .open then (the decoder reads both) */
        syscall(SYS_renameat2, dir, open_name, dir, name, RENAME_NOREPLACE);
    d9_writer_resume(); /* when the program's own handler recovers, recording goes on */
}

#if defined(__x86_64__)
/* Calls fn(arg) with the stack pointer at top (16-byte aligned), and back:
 * only the first crashing thread dumps, so one stack serves. */
static void call_on_stack(void (*fn)(int), int arg, uint8_t *top)
{
    long a = arg;
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "mov %[top], %%rsp\n\t"
                     "call *%[fn]\n\t"
                     "mov %%rbx, %%rsp"
                     : "+D"(a)
                     : [top] "r"(top), [fn] "r"(fn)
                     : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", "xmm1",
                       "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
                       "xmm13", "xmm14", "xmm15");
}
#else
static void call_on_stack(void (*fn)(int), int arg, uint8_t *top)
{
    (void)top;
    fn(arg);
}
#endif

static int fault_sig(int sig) { return sig == SIGSEGV || sig == SIGBUS; }

/* Writes the dump once per process: a second crashing thread waits for the
 * first one's, so that its signal does not end the process meanwhile. */
static void dump_once(int why)
{
    if (!dumps_on) {
        /* Installed for safe loads only: nothing to write. */
    } else if (d9_in_vfork) {
        /* A vfork child (an abort after a failed exec): the rings, the
         * flags and the chain here are its parent's. No dump. */
    } else if (!atomic_exchange(&crashed, 1)) {
        call_on_stack(write_crash, why, stack_top);
        atomic_store(&dump_done, 1);
    } else {
        for (int i = 0; i < D9_CRASH_OTHER_WAIT_MS && !atomic_load(&dump_done); i++) {
            struct timespec ms = {0, 1000000};
            syscall(SYS_nanosleep, &ms, NULL); /* not glibc's: a cancellation point */
        }
    }
}

/* The program's fault handler this thread is in (chain_fault): its signal
 * and the agent's frame it runs under. A jump (the longjmp family below)
 * clears it: a handler that jumped out is no longer running. */
static D9_TLS struct {
    int sig;
    uintptr_t frame;
} in_prog;

/* A fault the kernel raised (si_code > 0: the instruction runs again when
 * the handler returns) goes to the program's handler first, when it has
 * one. A JVM's null checks and safepoint polls, V8's WebAssembly bounds
 * checks, a probe that siglongjmps: they recover there, and are no crash.
 * A handler that does not recover restores the default and returns, raises
 * the signal again or aborts, and the dump is written then (on_crash); or
 * it exits, and d9_crash_at_exit writes it. 1 when a handler ran. */
static int chain_fault(int sig, siginfo_t *si, void *uc)
{
    if (sig == SIGABRT || !si || si->si_code <= 0 || d9_in_vfork)
        return 0;
    __typeof__(in_prog) outer = in_prog; /* a fault inside that handler */
    in_prog.sig = sig;
    in_prog.frame = (uintptr_t)__builtin_frame_address(0);
    atomic_signal_fence(memory_order_seq_cst);
    int ran = d9_sigchain_call(sig, si, uc);
    atomic_signal_fence(memory_order_seq_cst);
    in_prog = outer;
    return ran;
}

/* 1 while the caller runs inside the program's handler chain_fault called:
 * marked, and below its frame on the same stack (stacks grow down on the
 * targets built for), within D9_CRASH_HANDLER_DEPTH, not one on the
 * thread's stack and the other on its alternate stack. The frame checks
 * catch a way out the jumps below do not see (setcontext). */
#define D9_CRASH_HANDLER_DEPTH (8u << 20)
static int in_handler_now(void)
{
    return in_prog.sig && d9_sigstack_below((uintptr_t)__builtin_frame_address(0), in_prog.frame,
                                            D9_CRASH_HANDLER_DEPTH);
}

void d9_crash_at_exit(void)
{
    if (d9_in_vfork || !in_handler_now())
        return;
    int saved = errno;
    d9_busy++;
    dump_once(D9_WHY(in_prog.sig, 0, 1));
    in_prog.sig = 0;
    d9_busy--;
    errno = saved;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    /* A hook's load of a timeout the kernel would refuse (safe_load.h):
     * not a crash, the hook goes on. si_code > 0: sent by the kernel. */
    if (fault_sig(sig) && si && si->si_code > 0 && d9_safe_load_fixup(uc))
        return;
    if (chain_fault(sig, si, uc))
        return;
    int saved = errno;
    d9_busy++;
    dump_once(D9_WHY(sig, in_handler_now() ? in_prog.sig : 0, 0));
    /* As if we had never been there: the program's disposition (installed
     * before or after ours, sigchain.h) back in the kernel, and the same
     * signal with the same siginfo, delivered when this handler returns
     * (the signal is blocked until then). The kernel applies the default
     * action, or runs a handler of a signal sent (abort, raise, kill) with
     * its own flags and mask; a fault re-executes after it returns, exactly
     * as without the agent. A vfork child's action goes back in its own
     * kernel table only (release). */
    if (fault_sig(sig) && !d9_in_vfork) /* the flag is the parent's too in a vfork child */
        __atomic_store_n(&d9_safe_load_armed, 0, __ATOMIC_RELAXED);
    d9_sigchain_release(sig);
    pid_t pid = (pid_t)syscall(SYS_getpid), tid = (pid_t)syscall(SYS_gettid);
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) < 0)
        syscall(SYS_tgkill, pid, tid, sig);
    d9_busy--;
    errno = saved;
}

/* A program's fault handler that calls _exit: the dump first. (exit runs
 * the agent's destructor, which asks the same.) */
static __attribute__((noreturn)) void exit_now(void (*real)(int), int status)
{
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

D9_EXPORT void _exit(int status)
{
    d9_crash_at_exit();
    exit_now(D9_REAL(_exit), status);
}

D9_EXPORT void _Exit(int status)
{
    d9_crash_at_exit();
    exit_now(D9_REAL(_Exit), status);
}

/* A jump out of the program's fault handler: it recovered, and a later
 * exit of the thread is no crash. A jump inside the handler clears the
 * mark too: an exit of that handler then goes without a dump, the safe
 * side. A jump out of a handler that interrupted a direct wait leaves the
 * wait (d9_direct_jumped). The real function never returns. */
#define D9_JUMP(name)                                                          \
    D9_EXPORT __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int val) \
    {                                                                          \
        if (in_prog.sig)                                                       \
            in_prog.sig = 0;                                                   \
        d9_direct_jumped(env);                                                 \
        D9_REAL(name)(env, val);                                               \
        __builtin_trap();                                                      \
    }
D9_JUMP(longjmp)
D9_JUMP(_longjmp)
D9_JUMP(siglongjmp)
D9_JUMP(__longjmp_chk)

/* ---- Init ------------------------------------------------------------- */

/* The dump's buffers and facts. 0, or -1 after logging. */
static int map_dump_buffers(const struct d9_config *c)
{
    max_threads = c->max_threads;
    out_cap = d9_block_bound(D9_BLOCK_RAW);
    hdr_cap = 16384 + D9_CMDLINE_MAX + PATH_MAX + (size_t)max_threads * 24;
    raw = map(D9_BLOCK_RAW);
    out = map(out_cap);
    hdr = map(hdr_cap);
    tids = map(sizeof(uint32_t) * max_threads);
    names = map(16 * (size_t)max_threads);
    uint8_t *stack = map(D9_CRASH_STACK + 4096); /* a guard page below */
    if (stack && mprotect(stack, 4096, PROT_NONE) == 0)
        stack_top = stack + 4096 + D9_CRASH_STACK;
    if (!raw || !out || !hdr || !tids || !names || !stack_top) {
        d9_log("cannot map the crash dump buffers: %s; no crash dumps", strerror(errno));
        return -1;
    }
    d9_seg_facts(&facts);
    return 0;
}

int d9_crash_init(const struct d9_config *c)
{
    int rc = 0;
    if (c->crash_dump) {
        rc = map_dump_buffers(c);
        dumps_on = rc == 0;
    }
    /* Without dumps, SIGSEGV and SIGBUS are still taken for the safe loads;
     * any other fault goes back to the program at once, as below. */
    sigset_t all;
    sigfillset(&all); /* nothing else runs on this thread meanwhile */
    int armed = 0;
    for (size_t i = 0; i < NCRASH; i++) { /* ignored stays ignored (SIGABRT from abort() still ends the process) */
        int sig = crash_signals[i];
        if ((dumps_on || fault_sig(sig)) && d9_sigchain_install(sig, on_crash, SA_ONSTACK, &all, 1) == 1)
            armed += fault_sig(sig);
    }
    __atomic_store_n(&d9_safe_load_armed, armed == 2, __ATOMIC_RELAXED);
    return rc;
}
