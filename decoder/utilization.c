/* utilization.c - see utilization.h. */
#include "utilization.h"

#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "vec.h"

static void on_process(void *ctx, uint32_t pid, const char *name)
{
    (void)ctx;
    (void)pid;
    (void)name;
}

static void on_thread(void *ctx, uint32_t pid, uint32_t tid, const char *name)
{
    struct d9_util *u = ctx;
    if (u->oom || d9_grow((void **)&u->rows, &u->cap, u->n, sizeof(*u->rows)) < 0 ||
        d9_map_put(&u->idx, d9_key2(pid, tid), (uint32_t)u->n) < 0) {
        u->oom = 1;
        return;
    }
    struct d9_util_row *r = &u->rows[u->n++];
    memset(r, 0, sizeof(*r));
    r->pid = pid;
    r->tid = tid;
    r->name = name ? name : "";
}

/* Doubles the bin width until end fits, merging adjacent bins of every row. */
static void grow(struct d9_util *u, uint64_t end)
{
    while (end > D9_UTIL_BINS * u->bin_ns) {
        for (size_t k = 0; k < u->n; k++) {
            struct d9_util_row *r = &u->rows[k];
            for (size_t i = 0; i < D9_UTIL_BINS / 2; i++) {
                r->busy[i] = r->busy[2 * i] + r->busy[2 * i + 1];
                r->seen[i] = r->seen[2 * i] + r->seen[2 * i + 1];
            }
            memset(r->busy + D9_UTIL_BINS / 2, 0, sizeof(r->busy) / 2);
            memset(r->seen + D9_UTIL_BINS / 2, 0, sizeof(r->seen) / 2);
        }
        u->bin_ns *= 2;
    }
}

static void on_slice_end(void *ctx, const struct d9_export_item *s)
{
    struct d9_util *u = ctx;
    uint32_t k;
    if (s->end <= s->ts || !d9_map_get(&u->idx, d9_key2(s->pid, s->tid), &k))
        return;
    grow(u, s->end);
    struct d9_util_row *r = &u->rows[k];
    for (uint64_t i = s->ts / u->bin_ns; i * u->bin_ns < s->end; i++) {
        uint64_t lo = i * u->bin_ns, hi = lo + u->bin_ns;
        uint64_t d = (s->end < hi ? s->end : hi) - (s->ts > lo ? s->ts : lo);
        r->seen[i] += d;
        if (!s->park)
            r->busy[i] += d;
    }
}

static void on_item(void *ctx, const struct d9_export_item *it)
{
    (void)ctx;
    (void)it;
}

static void on_flow(void *ctx, const struct d9_export_item *at, uint64_t id, int end)
{
    (void)ctx;
    (void)at;
    (void)id;
    (void)end;
}

static void on_finish(void *ctx) { (void)ctx; }

int d9_util_compute(struct d9_model *m, const struct d9_summary *s, struct d9_util *u)
{
    static const struct d9_export_ops ops = {on_process, on_thread, on_item, on_slice_end,
                                             on_item,    on_flow,   on_finish};
    struct d9_export_opts all = {.to = UINT64_MAX};
    u->bin_ns = D9_UTIL_BIN0_NS;
    int rc = d9_export_walk(m, s, &all, &ops, u);
    return rc < 0 || u->oom ? -1 : 0;
}

void d9_util_free(struct d9_util *u)
{
    free(u->rows);
    d9_map_free(&u->idx);
    memset(u, 0, sizeof(*u));
}
