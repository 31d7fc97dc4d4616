/* check_ring.c - the SPSC ring (agent/ring.h): capacity, half-full signal,
 * wrap-around, and order under a real producer/consumer pair. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "unit.h"

#define CAP 64

/* The consumer as the writer's drain is: up to max published events copied
 * into out in order, their entries freed, the tail moved on; returns n. */
static uint32_t d9_ring_pop(struct d9_ring *r, struct d9_raw_event *out, uint32_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t n = 0;
    for (struct d9_raw_event *e; n < max && (e = d9_ring_at(r, t + n)); n++) {
        out[n] = *e;
        d9_ring_free(e);
    }
    atomic_store_explicit(&r->tail, t + n, memory_order_relaxed);
    return n;
}

/* A ring and its producer's cursor, as a slot and its owner's TLS hold them. */
struct pair {
    struct d9_ring r;
    struct d9_ring_head p;
    char *mem; /* what r.buf is in */
};

/* The buffer starts skew bytes past a multiple of its own size: the check
 * points (ring.h) are found by address bits, so where they fall depends on
 * it (every cap / 8 entries from the start when skew is 0, as in an agent's
 * mmap'ed slot). */
static struct pair *ring_new_at(uint32_t cap, size_t skew)
{
    struct pair *x = malloc(sizeof(*x));
    ck_assert_ptr_nonnull(x);
    size_t size = (size_t)cap * sizeof(struct d9_raw_event);
    ck_assert_int_eq(posix_memalign((void **)&x->mem, size, size + skew), 0);
    memset(x->mem, 0, size + skew);
    x->r = (struct d9_ring){.buf = (struct d9_raw_event *)(x->mem + skew), .cap = cap, .mask = cap - 1};
    d9_ring_head_init(&x->p, &x->r);
    return x;
}

static struct pair *ring_new(uint32_t cap)
{
    return ring_new_at(cap, 0);
}

static void ring_free(struct pair *x)
{
    free(x->mem);
    free(x);
}

/* Events published and not yet taken (consumer, or a reader that stopped it). */
static uint64_t ring_used(const struct d9_ring *r)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed), n = 0;
    while (n < r->cap && d9_ring_entry_used(&r->buf[(t + n) & r->mask]))
        n++;
    return n;
}

/* A push as the agent's makes it (emit.c): reserve, fill, publish the word.
 * 0 when stored, -1 when full; *half: d9_ring_publish's signal. */
static int push_keep(struct pair *x, const struct d9_raw_event *ev, int *half, uint32_t keep)
{
    struct d9_raw_event *e = d9_ring_reserve(&x->p, keep);
    if (!e)
        return -1;
    e->ts = ev->ts;
    e->a = ev->a;
    e->b = ev->b;
    *half = d9_ring_publish(&x->p, e, d9_ring_word(ev->type, ev->call, ev->len, ev->x));
    return 0;
}

static int push_seq(struct pair *x, uint64_t seq, int *half)
{
    struct d9_raw_event ev = {.ts = seq, .type = D9_EV_WAKE, .call = 3, .len = 7, .x = -1, .a = seq * 3, .b = ~seq};
    return push_keep(x, &ev, half, 0);
}

/* A push as the agent's inline path makes it (agent.h: d9_push_fast),
 * falling back to the exact path (keep 1) at the limit. */
static int push_agent(struct pair *x, uint64_t seq, int *half)
{
    struct d9_raw_event ev = {.ts = seq, .type = D9_EV_WAKE, .call = 3, .len = 7, .x = -1, .a = seq * 3, .b = ~seq};
    struct d9_raw_event *e;
    *half = 0;
    if (!d9_ring_reserve_fast(&x->p, &e))
        return push_keep(x, &ev, half, 1);
    e->ts = ev.ts;
    e->a = ev.a;
    e->b = ev.b;
    d9_ring_commit_fast(&x->p, e, d9_ring_word(ev.type, ev.call, ev.len, ev.x));
    return 0;
}

START_TEST(fill_then_full)
{
    struct pair *x = ring_new(CAP);
    int half;
    for (uint64_t i = 0; i < CAP; i++)
        ck_assert_int_eq(push_seq(x, i, &half), 0);
    ck_assert_uint_eq(ring_used(&x->r), CAP);
    ck_assert_int_eq(push_seq(x, CAP, &half), -1);
    ck_assert_uint_eq(ring_used(&x->r), CAP); /* a failed push stores nothing */
    struct d9_raw_event out[CAP + 1];
    ck_assert_uint_eq(d9_ring_pop(&x->r, out, CAP + 1), CAP);
    for (uint64_t i = 0; i < CAP; i++) {
        ck_assert_uint_eq(out[i].ts, i);
        ck_assert_uint_eq(out[i].type, D9_EV_WAKE);
        ck_assert_uint_eq(out[i].call, 3);
        ck_assert_uint_eq(out[i].len, 7);
        ck_assert_int_eq(out[i].x, -1);
        ck_assert_uint_eq(out[i].a, i * 3);
        ck_assert_uint_eq(out[i].b, ~i);
    }
    ck_assert_uint_eq(d9_ring_pop(&x->r, out, CAP), 0);
    for (uint32_t i = 0; i < CAP; i++) /* popped entries are free again: all zero words */
        ck_assert_uint_eq(x->r.buf[i].word, 0);
    ring_free(x);
}
END_TEST

/* keep = 1 leaves the last entry free; keep = 0 (THREAD_EXIT) may take it. */
START_TEST(keep_reserves_last_entry)
{
    struct pair *x = ring_new(CAP);
    int half;
    struct d9_raw_event ev = {.type = D9_EV_WAKE};
    for (int i = 0; i < CAP - 1; i++)
        ck_assert_int_eq(push_keep(x, &ev, &half, 1), 0);
    ck_assert_int_eq(push_keep(x, &ev, &half, 1), -1);
    ev.type = D9_EV_THREAD_EXIT;
    ck_assert_int_eq(push_keep(x, &ev, &half, 0), 0);
    ck_assert_uint_eq(ring_used(&x->r), CAP);
    ck_assert_int_eq(push_keep(x, &ev, &half, 0), -1);
    /* One taken: keep = 1 still finds no room, keep = 0 does. */
    struct d9_raw_event out[1];
    ck_assert_uint_eq(d9_ring_pop(&x->r, out, 1), 1);
    ck_assert_int_eq(push_keep(x, &ev, &half, 1), -1);
    ck_assert_int_eq(push_keep(x, &ev, &half, 0), 0);
    ring_free(x);
}
END_TEST

/* The half-full signal: never while the ring holds half its capacity or
 * less, and by the check point after it holds more (at most cap/8 later);
 * for every placement of the check points (_i: the buffer's skew in
 * 16-byte steps over one check span, 8 entries). */
START_TEST(half_fires_past_half)
{
    struct pair *x = ring_new_at(CAP, (size_t)_i * 16);
    int half, first = -1;
    for (int i = 0; i < CAP; i++) {
        push_seq(x, (uint64_t)i, &half);
        uint64_t used = (uint64_t)i + 1;
        if (half) {
            ck_assert_uint_gt(used, CAP / 2);
            if (first < 0)
                first = (int)used;
        }
    }
    ck_assert_int_gt(first, 0);
    ck_assert_int_le(first, CAP / 2 + CAP / 8);
    /* A consumer that keeps up: no signal at all. */
    struct d9_raw_event out[CAP];
    d9_ring_pop(&x->r, out, CAP);
    for (int i = 0; i < 4 * CAP; i++) {
        push_seq(x, (uint64_t)i, &half);
        ck_assert_int_eq(half, 0);
        ck_assert_uint_eq(d9_ring_pop(&x->r, out, CAP), 1);
    }
    ring_free(x);
}
END_TEST

START_TEST(wraps_in_order)
{
    struct pair *x = ring_new(16);
    struct d9_raw_event out[16];
    uint64_t next_in = 0, next_out = 0;
    int half;
    /* Uneven push/pop counts walk head and tail across the end many times. */
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 1 + round % 13; k++)
            if (push_seq(x, next_in, &half) == 0)
                next_in++;
        uint32_t n = d9_ring_pop(&x->r, out, 1 + round % 9);
        for (uint32_t i = 0; i < n; i++)
            ck_assert_uint_eq(out[i].ts, next_out++);
    }
    ck_assert_uint_gt(next_out, 16 * 100);
    ck_assert_uint_eq(next_in - next_out, ring_used(&x->r));
    ring_free(x);
}
END_TEST

/* The inline push (d9_ring_reserve_fast) turns down exactly the check
 * points, one every cap / 8 entries from the ring's start, whatever the
 * buffer's alignment (_i as in half_fires_past_half), and a full ring. */
START_TEST(fast_declines_check_points)
{
    struct pair *x = ring_new_at(CAP, (size_t)_i * 16);
    struct d9_ring_head *p = &x->p;
    struct d9_raw_event out[1], *e;
    int declined = 0, gap = 0, max_gap = 0;
    for (int i = 0; i < 4 * CAP; i++) {
        if (d9_ring_reserve_fast(p, &e)) {
            ck_assert_ptr_eq(e, d9_ring_reserve(p, 1)); /* the same entry as the exact check */
            d9_ring_commit_fast(p, e, d9_ring_word(D9_EV_WAKE, 0, 0, 0));
            gap++;
        } else {
            declined++;
            max_gap = gap > max_gap ? gap : max_gap;
            gap = 0;
            e = d9_ring_reserve(p, 1);
            ck_assert_ptr_nonnull(e); /* not full: a check point */
            ck_assert_uint_eq(((uintptr_t)e - (uintptr_t)x->r.buf) % (CAP / 8 * sizeof(*e)), 0);
            d9_ring_publish(p, e, d9_ring_word(D9_EV_WAKE, 0, 0, 0));
        }
        ck_assert_uint_eq(d9_ring_pop(&x->r, out, 1), 1);
    }
    ck_assert_int_eq(declined, 4 * 8);
    ck_assert_int_eq(max_gap, CAP / 8 - 1);
    /* Full but for the entry kept for THREAD_EXIT: declined, and so is the exact check. */
    for (int i = 0; i < CAP - 1; i++) {
        e = d9_ring_reserve(p, 1);
        ck_assert_ptr_nonnull(e);
        d9_ring_publish(p, e, d9_ring_word(D9_EV_WAKE, 0, 0, 0));
    }
    ck_assert_int_eq(d9_ring_reserve_fast(p, &e), 0);
    ck_assert_ptr_null(d9_ring_reserve(p, 1));
    ring_free(x);
}
END_TEST

/* Against a consumer that lags by every amount: the inline push only ever
 * fills a free entry and leaves the one after it free (the room kept for
 * THREAD_EXIT), and the events come out whole and in order (_i seeds the
 * consumer's pattern). */
START_TEST(fast_never_overruns)
{
    struct pair *x = ring_new(CAP);
    struct d9_raw_event out[CAP];
    uint64_t in = 0, taken = 0, fast = 0;
    unsigned seed = (unsigned)_i * 2654435761u + 1;
    int half;
    for (int round = 0; round < 4000; round++) {
        seed = seed * 1103515245u + 12345u;
        int burst = (int)(seed >> 16) % (CAP + 8);
        for (int k = 0; k < burst; k++) {
            struct d9_raw_event *e;
            if (d9_ring_reserve_fast(&x->p, &e)) {
                ck_assert_uint_eq(e->word, 0);
                ck_assert_uint_eq(((struct d9_raw_event *)d9_ring_after(&x->p, e))->word, 0);
                fast++;
            }
            if (push_agent(x, in, &half) == 0)
                in++;
        }
        seed = seed * 1103515245u + 12345u;
        uint32_t n = d9_ring_pop(&x->r, out, (seed >> 16) % (CAP + 1));
        for (uint32_t i = 0; i < n; i++, taken++)
            if (out[i].ts != taken || out[i].a != taken * 3 || out[i].b != ~taken || out[i].x != -1)
                ck_abort_msg("event %llu out of order or torn", (unsigned long long)taken);
    }
    ck_assert_uint_eq(in - taken, ring_used(&x->r));
    ck_assert_uint_gt(fast, in / 2); /* the inline path made most pushes */
    ring_free(x);
}
END_TEST

/* A thread without a ring has an all-zero cursor: both reservations fail,
 * and neither reads memory. */
START_TEST(no_ring_declines)
{
    struct d9_ring_head p = {0};
    struct d9_raw_event *e;
    ck_assert_int_eq(d9_ring_reserve_fast(&p, &e), 0);
    ck_assert_ptr_null(d9_ring_reserve(&p, 1));
    ck_assert_ptr_null(d9_ring_reserve(&p, 0));
}
END_TEST

/* d9_ring_word makes the word the struct's members make. */
START_TEST(word_is_the_members)
{
    const int32_t xs[] = {0, 1, -1, INT32_MIN, INT32_MAX};
    for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        struct d9_raw_event e = {.type = D9_EV_SLOW_SYSCALL, .call = 0xfe, .len = 0xbeef, .x = xs[i]};
        ck_assert_uint_eq(d9_ring_word(e.type, e.call, e.len, e.x), e.word);
    }
}
END_TEST

#define STRESS_EVENTS 1000000u

static void *producer(void *arg)
{
    struct pair *x = arg;
    int half;
    for (uint64_t i = 0; i < STRESS_EVENTS;)
        if (push_agent(x, i, &half) == 0)
            i++;
    return NULL;
}

START_TEST(two_thread_stress)
{
    struct pair *x = ring_new(1024);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, producer, x), 0);
    struct d9_raw_event out[100];
    uint64_t next = 0;
    while (next < STRESS_EVENTS) {
        uint32_t n = d9_ring_pop(&x->r, out, 100);
        for (uint32_t i = 0; i < n; i++) {
            if (out[i].ts != next || out[i].a != next * 3 || out[i].b != ~next || out[i].type != D9_EV_WAKE ||
                out[i].x != -1)
                ck_abort_msg("event %llu out of order or torn", (unsigned long long)next);
            next++;
        }
    }
    pthread_join(t, NULL);
    ck_assert_uint_eq(ring_used(&x->r), 0);
    ring_free(x);
}
END_TEST

D9_SUITE(ring)
{
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fill_then_full);
    tcase_add_test(tc, keep_reserves_last_entry);
    tcase_add_loop_test(tc, half_fires_past_half, 0, CAP / 8 * 2);
    tcase_add_test(tc, wraps_in_order);
    tcase_add_loop_test(tc, fast_declines_check_points, 0, CAP / 8 * 2);
    tcase_add_loop_test(tc, fast_never_overruns, 0, 8);
    tcase_add_test(tc, no_ring_declines);
    tcase_add_test(tc, word_is_the_members);
    tcase_add_test(tc, two_thread_stress);
    suite_add_tcase(s, tc);
    return s;
}
