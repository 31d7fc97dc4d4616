/* registry.c - the fixed table of per-thread slots. Allocated once at init
 * (mmap, DIAL9_MAX_THREADS slots); a thread claims a slot on its first
 * event (CAS FREE -> CLAIMING -> LIVE) and hands it back at exit (EXITED);
 * the writer frees it after draining. Ring buffers (DIAL9_BUFFER_EVENTS x
 * 32 bytes) are mapped on a slot's first use and kept for the next thread. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"
#include "log.h"
#include "nocancel.h"
#include "real.h"

static struct d9_slot *slots;
static uint32_t nslots, ring_events;
static _Atomic uint32_t limit;        /* one past the highest slot ever claimed */
static _Atomic uint64_t unrecorded;   /* threads that found no free slot */
static _Atomic uint32_t in_use;       /* slots not FREE: claimed, live or exited */
static pthread_key_t exit_key;

static void key_destructor(void *v) { d9_thread_exit(); }

int d9_registry_init(uint32_t max_threads, uint32_t ring_cap)
{
    size_t bytes = (size_t)max_threads * sizeof(struct d9_slot);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        d9_log("cannot map %zu bytes for %u thread slots: %s; not recording", bytes, max_threads, strerror(errno));
        return -1;
    }
    int rc = pthread_key_create(&exit_key, key_destructor);
    if (rc) {
        munmap(p, bytes);
        d9_log("pthread_key_create: %s; not recording", strerror(rc));
        return -1;
    }
    slots = p;
    nslots = max_threads;
    ring_events = ring_cap;
    return 0;
}

uint64_t d9_registry_unrecorded(void) { return atomic_load(&unrecorded); }
uint32_t d9_slot_limit(void) { return atomic_load_explicit(&limit, memory_order_acquire); }
struct d9_slot *d9_slot_at(uint32_t i) { return &slots[i]; }

/* A live thread first; else one that exited and whose slot the writer has
 * not freed yet (a join of a thread that is done), the newest tid if a
 * reused pthread_t names two. The writer may reset a slot, and another
 * thread claim it, while this scans: at worst a slot that changed hands in
 * between names the wrong thread. */
uint32_t d9_tid_of(pthread_t th)
{
    uint32_t n = d9_slot_limit(), exited = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct d9_slot *s = &slots[i];
        uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
        if ((state != D9_SLOT_LIVE && state != D9_SLOT_EXITED) ||
            !pthread_equal(d9_slot_owner(s), th))
            continue;
        uint32_t tid = d9_slot_tid(s);
        if (tid && state == D9_SLOT_LIVE)
            return tid;
        if (tid > exited)
            exited = tid;
    }
    return exited;
}

int d9_read_task(uint32_t tid, const char *file, char *buf, size_t size)
{
    char path[64];
    if (tid)
        snprintf(path, sizeof(path), "/proc/self/task/%u/%s", tid, file);
    else
        snprintf(path, sizeof(path), "/proc/thread-self/%s", file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return (int)n;
}

int d9_read_comm(uint32_t tid, char name[16])
{
    int n = d9_read_task(tid, "comm", name, 16);
    if (n > 0 && name[n - 1] == '\n')
        name[--n] = 0;
    return n;
}

/* Claims a free slot and makes sure it has a ring; NULL when none. */
static struct d9_slot *claim(uint32_t tid)
{
    for (uint32_t i = 0; i < nslots; i++) {
        struct d9_slot *s = &slots[i];
        uint32_t want = D9_SLOT_FREE;
        if (!atomic_compare_exchange_strong(&s->state, &want, D9_SLOT_CLAIMING))
            continue;
        if (!s->ring.buf) {
            void *b = mmap(NULL, (size_t)ring_events * sizeof(struct d9_raw_event), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (b == MAP_FAILED) {
                atomic_store(&s->state, D9_SLOT_FREE);
                return NULL;
            }
            s->ring.buf = b;
            s->ring.cap = ring_events;
            s->ring.mask = ring_events - 1;
        }
        atomic_fetch_add_explicit(&in_use, 1, memory_order_relaxed);
        __atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED); /* atomic: d9_slot_owner, d9_slot_tid */
        __atomic_store_n(&s->owner, pthread_self(), __ATOMIC_RELAXED);
        s->tls = &d9_tls;
        s->name[0] = 0;
        uint32_t l = atomic_load(&limit);
        while (l < i + 1 && !atomic_compare_exchange_weak(&limit, &l, i + 1))
            ;
        atomic_store_explicit(&s->state, D9_SLOT_LIVE, memory_order_release);
        return s;
    }
    return NULL;
}

struct d9_slot *d9_register_self(uint32_t parent_tid)
{
    if (d9_self)
        return d9_self;
    if (d9_exited || !atomic_load_explicit(&d9_recording, memory_order_relaxed) || !slots)
        return NULL;
    int saved = errno;
    d9_busy++; /* before the second look: a handler that ran since the first registered the thread */
    atomic_signal_fence(memory_order_seq_cst);
    if (d9_self) {
        d9_busy--;
        return d9_self;
    }
    int cancel = d9_cancel_off(); /* it opens and reads /proc files */
    uint32_t tid = (uint32_t)gettid();
    struct d9_slot *s = claim(tid);
    if (!s) {
        d9_exited = 1; /* do not retry on every event of this thread */
        if (atomic_fetch_add(&unrecorded, 1) == 0)
            d9_log("more than %u threads (DIAL9_MAX_THREADS) or out of memory: further threads are not recorded",
                   nslots);
    } else {
        d9_ring_head_init(&d9_tls.ring, &s->ring); /* a claimed ring is all free */
        d9_tls.nowait_count = 0;
        uint64_t now = d9_stamp();
        d9_slot_push(s, now, D9_EV_THREAD_START, 0, parent_tid, 0);
        char name[16];
        if (d9_read_comm(0, name) >= 0)
            d9_slot_push_name(s, now, name);
        d9_sched_register(s); /* after THREAD_START: no switch is recorded before it */
        pthread_setspecific(exit_key, s); /* its destructor runs at every thread's exit */
        d9_self = s;
    }
    d9_cancel_restore(cancel);
    d9_busy--;
    errno = saved;
    return s;
}

void d9_thread_exit(void)
{
    struct d9_slot *s = d9_self;
    d9_exited = 1;
    if (!s)
        return;
    int saved = errno;
    d9_busy++;
    d9_flush_nowait(s);
    uint64_t now = d9_stamp();
    d9_sched_exit(s, d9_now()); /* compared with perf's times: ns */
    d9_slot_push(s, now, D9_EV_THREAD_EXIT, 0, 0, 0);
    d9_self = NULL;
    d9_tls.ring = (struct d9_ring_head){0}; /* the inline pushes fail without a d9_self check */
    /* seq_cst, then kicking: d9_direct_cancelled reads this thread's TLS
     * only while it sees LIVE, with kicking set; it is soon cleared, with a
     * wake. The wait sleeps: a real-time thread cancelled by a thread of
     * lower priority on its CPU preempts it, often with kicking set, and
     * yielding would not let it run (a clear before the wait makes the
     * futex return at once; each wait is bounded to 1 ms all the same). */
    atomic_store(&s->state, D9_SLOT_EXITED);
    while (atomic_load(&s->kicking))
        d9_futex(&s->kicking, FUTEX_WAIT_PRIVATE, 1, &(struct timespec){0, 1000000});
    /* Exited slots are freed by the writer once drained; with most slots
     * taken (thread churn), have it do so now rather than at its next
     * period, so new threads still find one. */
    if (atomic_load_explicit(&in_use, memory_order_relaxed) > nslots / 4 * 3)
        d9_writer_kick();
    d9_busy--;
    errno = saved;
}

/* Resets the consumer-side state of s so the next owner starts clean. */
static void reset(struct d9_slot *s)
{
    atomic_store_explicit(&s->ring.tail, 0, memory_order_relaxed);
    atomic_store_explicit(&s->dropped, 0, memory_order_relaxed);
    s->drop_reported = 0;
    s->last_ns = 0;
    s->name[0] = 0;
    __atomic_store_n(&s->tid, 0, __ATOMIC_RELAXED);
    /* A close its owner never ended (a handler left it by pthread_exit, or
     * the owner is a fork child's ghost) is over: its thread is gone. */
    __atomic_store_n(&s->closes_ended, __atomic_load_n(&s->closes_begun, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* A drained ring is all free; a fork child's copy may hold events its
 * parent's writer had not taken: the pages go back to zero (private
 * anonymous memory), without copying them. */
static void release(struct d9_slot *s, int fork_child)
{
    d9_sched_release(s, fork_child);
    size_t bytes = (size_t)s->ring.cap * sizeof(struct d9_raw_event);
    if (fork_child && s->ring.buf && madvise(s->ring.buf, bytes, MADV_DONTNEED) != 0)
        memset(s->ring.buf, 0, bytes);
    reset(s);
    atomic_store_explicit(&s->state, D9_SLOT_FREE, memory_order_release);
    atomic_fetch_sub_explicit(&in_use, 1, memory_order_relaxed);
}

void d9_slot_release(struct d9_slot *s) { release(s, 0); }

void d9_registry_after_fork_child(void)
{
    for (uint32_t i = 0; i < nslots && slots; i++)
        if (atomic_load(&slots[i].state) != D9_SLOT_FREE)
            release(&slots[i], 1);
    atomic_store(&limit, 0);
    atomic_store(&in_use, 0);
    d9_self = NULL;
    d9_tls.ring = (struct d9_ring_head){0};
    d9_exited = 0;
    if (slots)
        pthread_setspecific(exit_key, NULL);
}
