/* dial9_format.h - the one definition of dial9's event vocabulary and segment
 * format, shared by the agent (writer) and the decoder (reader).
 * docs/FORMAT.md is the prose specification of what this header declares.
 *
 * All multi-byte integers in fixed-size structures are little-endian.
 * Timestamps are nanoseconds on CLOCK_MONOTONIC of the recording host.
 */
#ifndef DIAL9_FORMAT_H
#define DIAL9_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define D9_FORMAT_VERSION 3u     /* what the agent writes: columnar chunks, 'r' kind */
#define D9_FORMAT_VERSION_MIN 1u /* oldest the decoder reads: row chunks */

/* ---- Event vocabulary ------------------------------------------------- */

/* Event type codes. Stable on disk: never renumber, only append. */
enum d9_type {
    D9_EV_THREAD_START = 1, /* a: parent tid (0 = unknown / seen late)          */
    D9_EV_THREAD_NAME = 2,  /* name: up to 15 bytes (pthread_setname_np/prctl)  */
    D9_EV_THREAD_EXIT = 3,  /* no fields                                         */
    D9_EV_PARK = 4,         /* call, target, timeout_ns (-1 = infinite)          */
    D9_EV_UNPARK = 5,       /* call, result (ready count, 0 timeout, -errno)     */
    D9_EV_WAKE = 6,         /* call, target, count (value written / waiters)     */
    D9_EV_DROP = 7,         /* count: events this thread lost to a full buffer   */
    D9_EV_POLL_NOWAIT = 8,  /* call, count: zero-timeout polls since last park   */
    D9_EV_EPOLL_CTL = 9,    /* op, epfd, fd (only for fds the agent tracks)      */
    D9_EV_SLOW_SYSCALL = 10, /* call, fd (-1 none), fd_kind, duration_ns; ts = call start */
    D9_EV_LOCK_WAIT = 11,   /* call, lock address, wait_ns; ts = start of the wait */
    D9_EV_SCHED_DELAY = 12, /* delay_ns: run-queue wait since the last reading, source, window_ns */
    D9_EV_PREEMPT = 13,     /* duration_ns off CPU after an involuntary switch-out; ts = switch-out */
    D9_EV_APP = 14,         /* name, value: an application event (dial9_event, include/dial9.h) */
    D9_EV_TYPE_MAX = 15     /* one past the last type this version writes        */
};

/* The blocking or waking libc entry point behind a park/unpark/wake. */
enum d9_call {
    D9_CALL_NONE = 0,
    D9_CALL_EPOLL_WAIT = 1,
    D9_CALL_EPOLL_PWAIT = 2,
    D9_CALL_EPOLL_PWAIT2 = 3,
    D9_CALL_POLL = 4,
    D9_CALL_PPOLL = 5,
    D9_CALL_SELECT = 6,
    D9_CALL_PSELECT = 7,
    D9_CALL_FUTEX = 8,       /* syscall(SYS_futex, ...) */
    D9_CALL_COND_WAIT = 9,   /* pthread_cond_wait / timedwait / clockwait */
    D9_CALL_SEM_WAIT = 10,   /* sem_wait / sem_timedwait / sem_clockwait */
    D9_CALL_NANOSLEEP = 11,  /* nanosleep / clock_nanosleep */
    D9_CALL_COND_SIGNAL = 12,
    D9_CALL_COND_BROADCAST = 13,
    D9_CALL_SEM_POST = 14,
    D9_CALL_EVENTFD_WRITE = 15, /* write()/eventfd_write() on an eventfd */
    /* Calls timed for slow_syscall events (accept, accept4 and read are
     * parks on a blocking socket: D9_CALL_RECV). */
    D9_CALL_OPEN = 16, D9_CALL_OPENAT = 17, D9_CALL_CLOSE = 18, D9_CALL_SOCKET = 19,
    D9_CALL_ACCEPT = 20, D9_CALL_ACCEPT4 = 21, D9_CALL_CONNECT = 22, D9_CALL_DUP = 23,
    D9_CALL_DUP2 = 24, D9_CALL_DUP3 = 25, D9_CALL_READ = 26, D9_CALL_WRITE = 27,
    D9_CALL_PREAD = 28, D9_CALL_PWRITE = 29, D9_CALL_FSYNC = 30, D9_CALL_FDATASYNC = 31,
    D9_CALL_GETADDRINFO = 32, D9_CALL_MMAP = 33, D9_CALL_MUNMAP = 34,
    /* Locks, for lock_wait events. */
    D9_CALL_MUTEX_LOCK = 35, D9_CALL_RWLOCK_RDLOCK = 36, D9_CALL_RWLOCK_WRLOCK = 37,
    /* A write to a pipe whose read end is in an epoll set (a wake; target = read end). */
    D9_CALL_PIPE_WRITE = 38,
    /* A park until another thread exits: pthread_join, pthread_timedjoin_np,
     * pthread_clockjoin_np (target = the joined thread's tid; 0: unknown). */
    D9_CALL_JOIN = 39,
    /* A park until a signal comes: pause, sigsuspend, sigwait, sigwaitinfo,
     * sigtimedwait (target 0). */
    D9_CALL_SIGNAL_WAIT = 40,
    /* A park until a child process changes state: wait, waitpid, wait4,
     * waitid (target = the pid waited for; 0: any child, or a group). */
    D9_CALL_CHILD_WAIT = 41,
    /* A park until a peer sends: recv, recvfrom, recvmsg, recvmmsg (and the
     * fortified __recv_chk, __recvfrom_chk) on a blocking socket (target =
     * the fd). On a blocking socket, read (26) and accept/accept4 (20, 21)
     * park too. */
    D9_CALL_RECV = 42,
    /* A park in send, sendto, sendmsg, sendmmsg or sendfile on a blocking
     * socket that took at least DIAL9_SLOW_SYSCALL_US: the peer had not
     * taken the data (target = the fd); write (27) on a blocking socket
     * likewise. Recorded once the call returns, the PARK stamped at its
     * start. */
    D9_CALL_SEND = 43,
    D9_CALL_COUNT = 44
};

/* fd kinds (slow_syscall fd_kind), learned from the call that made the fd. */
enum d9_fd_kind {
    D9_FD_UNKNOWN = 0, D9_FD_FILE = 1, D9_FD_SOCKET = 2, D9_FD_PIPE = 3,
    D9_FD_EVENTFD = 4, D9_FD_EPOLL = 5, D9_FD_DIR = 6, D9_FD_OTHER = 7
};
#define D9_FD_KIND_NAMES {"unknown", "file", "socket", "pipe", "eventfd", "epoll", "dir", "other"}

/* sched_delay source. */
enum d9_sched_source { D9_SCHED_SCHEDSTAT = 1 /* /proc/thread-self/schedstat run_delay */ };

/* Printable names, indexed by enum d9_call (NULL-safe helper below). */
#define D9_CALL_NAMES                                                          \
    {"none",        "epoll_wait",  "epoll_pwait",     "epoll_pwait2",          \
     "poll",        "ppoll",       "select",          "pselect",               \
     "futex",       "cond_wait",   "sem_wait",        "nanosleep",             \
     "cond_signal", "cond_broadcast", "sem_post",     "eventfd_write",         \
     "open",        "openat",      "close",           "socket",                \
     "accept",      "accept4",     "connect",         "dup",                   \
     "dup2",        "dup3",        "read",            "write",                 \
     "pread",       "pwrite",      "fsync",           "fdatasync",             \
     "getaddrinfo", "mmap",        "munmap",          "mutex_lock",            \
     "rwlock_rdlock", "rwlock_wrlock", "pipe_write",  "join",   \
     "signal_wait", "child_wait", "recv",   "send"}

static inline const char *d9_call_name(unsigned call)
{
    static const char *const names[D9_CALL_COUNT] = D9_CALL_NAMES;
    return call < D9_CALL_COUNT ? names[call] : "unknown";
}

/* Parks that wait for fds to be ready (calls 1-7: their UNPARK result
 * counts ready fds), and parks that wait for another thread of the process
 * (8-10: futex, condvar, semaphore). One compare each. */
static inline int d9_call_polls(unsigned call) { return call - D9_CALL_EPOLL_WAIT <= D9_CALL_PSELECT - D9_CALL_EPOLL_WAIT; }
static inline int d9_call_syncs(unsigned call) { return call - D9_CALL_FUTEX <= D9_CALL_SEM_WAIT - D9_CALL_FUTEX; }

/* Printable type names, indexed by enum d9_type. */
static inline const char *d9_type_name(unsigned type)
{
    static const char *const names[D9_EV_TYPE_MAX] = {
        "invalid", "thread_start", "thread_name", "thread_exit", "park",
        "unpark",  "wake",         "drop",        "poll_nowait", "epoll_ctl",
        "slow_syscall", "lock_wait", "sched_delay", "preempt", "app"};
    return type < D9_EV_TYPE_MAX ? names[type] : "unknown";
}

/* ---- The raw record the agent puts in a thread's buffer --------------- */

/* 32 bytes, one cache-line half. The writer encodes it using the schema. */
struct d9_raw_event {
    uint64_t ts;    /* in a ring: a stamp (agent/clock.h); CLOCK_MONOTONIC ns once the writer has it */
    union {
        struct {
            uint8_t type;   /* enum d9_type */
            uint8_t call;   /* enum d9_call, or epoll_ctl op */
            uint16_t len;   /* name length for THREAD_NAME; fd kind for SLOW_SYSCALL */
            int32_t x;      /* extra small field: the fd of SLOW_SYSCALL (-1 none) */
        };
        uint64_t word; /* the four above as one word: a ring (agent/ring.h)
                        * publishes an entry by storing it last */
    };
    uint64_t a;     /* first field (target / parent / count / epfd) */
    uint64_t b;     /* second field (timeout / result / count / fd) */
};
/* THREAD_NAME carries its name bytes in a and b (16 bytes, not NUL-terminated).
 * APP carries the name's id in a (1..D9_APP_NAMES, agent/app_names.h) and
 * the value in b; the writer encodes the name itself (source 'i'). */

/* ---- Per-segment schema: field kinds, so unknown types can be skipped -- */

/* Each event type lists its fields after the common (type, ts delta) prefix.
 * Field kinds:
 *   'u' unsigned LEB128 varint
 *   's' signed: zigzag then LEB128
 *   'b' bytes: LEB128 length then that many bytes
 *   'r' recent (version 3+, addresses): LEB128 code; 0: a new value, as a
 *       LEB128 varint, follows; 1..D9_RECENT: the code-th most recent
 *       distinct value of this column in this chunk. Either way the value
 *       moves to the front of the column's recent list (D9_RECENT entries,
 *       empty at the column's start). Futex and condvar addresses recur:
 *       tokio's 6-byte targets become 1 byte (docs/BENCH-HISTORY.md).
 * The schema is written in every segment header (D9_TLV_SCHEMA), so a
 * decoder skips types it does not know using the segment's own description.
 * Field sources: which raw-record member each field is encoded from:
 *   'c' call, 'a' a, 'b' b, 'l' len, 'x' x (sign-extended),
 *   'n' name bytes (a,b with len),
 *   'i' the name the program registered under the id in a (APP).
 */
struct d9_schema_entry {
    uint8_t type;
    const char *kinds;   /* one char per field: u, s, b, r */
    const char *sources; /* one char per field: c, a, b, l, x, n, i */
    const char *names;   /* comma-separated JSON field names */
};

#define D9_SCHEMA_TABLE                                                        \
    {                                                                          \
        {D9_EV_THREAD_START, "u", "a", "parent"},                              \
        {D9_EV_THREAD_NAME, "b", "n", "name"},                                 \
        {D9_EV_THREAD_EXIT, "", "", ""},                                       \
        {D9_EV_PARK, "urs", "cab", "call,target,timeout_ns"},                  \
        {D9_EV_UNPARK, "us", "cb", "call,result"},                             \
        {D9_EV_WAKE, "uru", "cab", "call,target,count"},                       \
        {D9_EV_DROP, "u", "a", "count"},                                       \
        {D9_EV_POLL_NOWAIT, "uu", "ca", "call,count"},                         \
        {D9_EV_EPOLL_CTL, "uuu", "cab", "op,epfd,fd"},                         \
        {D9_EV_SLOW_SYSCALL, "usuu", "cxlb", "call,fd,fd_kind,duration_ns"},   \
        {D9_EV_LOCK_WAIT, "uru", "cab", "call,target,wait_ns"},                \
        {D9_EV_SCHED_DELAY, "uuu", "acb", "delay_ns,source,window_ns"},        \
        {D9_EV_PREEMPT, "u", "a", "duration_ns"},                              \
        {D9_EV_APP, "bs", "ib", "name,value"},                                 \
    }
#define D9_SCHEMA_ENTRIES 14
#define D9_MAX_FIELDS 8
#define D9_RECENT 8 /* entries of an 'r' column's recent list */

/* ---- Segment file ------------------------------------------------------ */

/* A segment file: header, then blocks until end of file.
 *
 *   header := magic[8] "DIAL9SEG", u32 version, u32 header_len (bytes that
 *             follow, up to the first block), TLVs..., u32 crc32c of the TLV
 *             bytes (the last 4 bytes of header_len).
 *   tlv    := u16 tag, u32 len, len bytes
 *   block  := struct d9_block_header, payload (LZ4 frame, payload_len bytes)
 *
 * Block payload after LZ4 decompression: chunks, then end.
 *   end    := varint 0 (where a chunk's tid would be)
 * Version 3: as version 2; schemas may use kind 'r'.
 * Version 2 (columnar: like values side by side, which LZ4 compresses):
 *   chunk  := varint tid (non-zero), varint base_ts (ns), varint n (>= 1),
 *             types[n] (u8 each, non-zero), ts_delta[n] (varints: ns since
 *             the previous event of the chunk, the first relative to base_ts),
 *             then for each type present, in ascending type code, for each
 *             of its fields in schema order: that field of every event of
 *             the type, in event order (each value encoded per its kind)
 * Version 1 (rows):
 *   chunk  := varint tid (non-zero), varint base_ts (ns), events..., u8 0
 *   event  := u8 type (non-zero), varint ts_delta, fields per schema
 */
#define D9_SEG_MAGIC "DIAL9SEG"
#define D9_SEG_MAGIC_LEN 8
#define D9_SEG_SUFFIX ".d9"          /* sealed segment */
#define D9_SEG_OPEN_SUFFIX ".d9.open" /* being written */

enum d9_tlv {
    D9_TLV_PID = 1,           /* u32 */
    D9_TLV_EXE = 2,           /* bytes: /proc/self/exe target */
    D9_TLV_CMDLINE = 3,       /* bytes: /proc/self/cmdline, NULs kept */
    D9_TLV_HOSTNAME = 4,      /* bytes: uname nodename */
    D9_TLV_CLOCK = 5,         /* bytes: clock source name, e.g. "monotonic" */
    D9_TLV_ANCHOR = 6,        /* u64 realtime ns, u64 monotonic ns (read back to back) */
    D9_TLV_SEQ = 7,           /* u32 segment sequence number in this process */
    D9_TLV_THREADS = 8,       /* repeated: u32 tid, u8 len, name bytes */
    D9_TLV_SCHEMA = 9,        /* repeated: u8 type, u8 nfields, kinds[nfields] */
    D9_TLV_AGENT_VERSION = 10, /* bytes */
    D9_TLV_DUMP_REASON = 11,  /* bytes: why this segment was dumped, e.g. "crash: signal 11 (SIGSEGV)" */
    D9_TLV_PROCESS = 12       /* which process of its pid: u64 start (clock ticks since boot,
                               * /proc/self/stat field 22), u64 pid namespace inode (stat of
                               * /proc/self/ns/pid), then the boot id (/proc/sys/kernel/random/
                               * boot_id, up to 36 bytes). Absent when /proc was unreadable. Two
                               * headers with one pid but different PROCESS values are two processes
                               * (pid reuse, a reboot, another pid namespace); an exec keeps all three. */
};
#define D9_BOOT_ID_MAX 36 /* bytes of a boot id: 8-4-4-4-12 hex digits */

/* A D9_TLV_PROCESS value. */
struct d9_proc_identity {
    uint64_t start_ticks; /* clock ticks (sysconf(_SC_CLK_TCK)) from boot to the process's start */
    uint64_t pidns;       /* inode of the pid namespace */
    char boot_id[D9_BOOT_ID_MAX + 1]; /* NUL-terminated */
};

#define D9_BLOCK_MAGIC 0x4b4c4239u /* "9BLK" little-endian */

struct d9_block_header {
    uint32_t magic;       /* D9_BLOCK_MAGIC */
    uint32_t payload_len; /* compressed bytes that follow */
    uint32_t raw_len;     /* decompressed bytes */
    uint32_t crc;         /* crc32c of the compressed payload */
    uint32_t events;      /* events in the block */
    uint32_t hdr_crc;     /* crc32c of the 20 bytes above plus first/last ts */
    uint64_t first_ts;    /* ns, smallest event timestamp */
    uint64_t last_ts;     /* ns, largest event timestamp */
};
#define D9_BLOCK_HEADER_SIZE 40
#define D9_BLOCK_MAX_RAW (4u << 20) /* a reader rejects larger blocks */

/* ---- Small codec helpers (header-only so both sides share them) -------- */

/* CRC-32C (Castagnoli, reflected 0x82F63B78): blocks are checked by the
 * writer thread and the decoder, never on the hot path. The SSE4.2 crc32
 * instruction does 8 bytes a step; the bitwise loop is the fallback (and the
 * reference the unit tests compare against). Start with crc = 0; chain calls
 * by passing the previous result. */
static inline uint32_t d9_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = (const uint8_t *)buf;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static inline uint32_t d9_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = (const uint8_t *)buf;
    uint64_t c = ~crc;
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

static inline uint32_t d9_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return d9_crc32c_hw(crc, buf, len);
#endif
    return d9_crc32c_sw(crc, buf, len);
}

/* Writes v as a LEB128 varint at p, returns its bytes (1..10). One and two
 * bytes (types, calls, most deltas) without the loop. */
static inline size_t d9_put_varint(uint8_t *p, uint64_t v)
{
    if (__builtin_expect(v < 0x80, 1)) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return 2;
    }
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Returns bytes consumed, 0 if the input ends or the varint is over 10 bytes. */
static inline size_t d9_get_varint(const uint8_t *p, size_t avail, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < avail && i < 10; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

static inline uint64_t d9_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t d9_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif
