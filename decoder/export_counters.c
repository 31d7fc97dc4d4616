/* export_counters.c - see export_counters.h. Memory: one entry per process. */
#include "export_counters.h"

#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "vec.h"

const char *const d9_counter_name[D9_CTR_COUNT] = {"busy threads", "dropped events"};

struct pcount {
    uint32_t pid;
    int64_t value[D9_CTR_COUNT];
    uint64_t last_ts[D9_CTR_COUNT];
    uint8_t seen[D9_CTR_COUNT];
};

struct d9_counters {
    struct d9_map idx; /* pid -> p index */
    struct pcount *p;
    size_t n, cap;
};

struct d9_counters *d9_counters_new(void) { return calloc(1, sizeof(struct d9_counters)); }

void d9_counters_free(struct d9_counters *c)
{
    if (!c)
        return;
    d9_map_free(&c->idx);
    free(c->p);
    free(c);
}

static struct pcount *proc(struct d9_counters *c, uint32_t pid)
{
    uint32_t i;
    if (d9_map_get(&c->idx, pid, &i))
        return &c->p[i];
    if (d9_grow((void **)&c->p, &c->cap, c->n, sizeof(*c->p)) < 0 || d9_map_put(&c->idx, pid, (uint32_t)c->n) < 0)
        return NULL;
    struct pcount *p = &c->p[c->n++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    return p;
}

static int change(struct d9_counters *c, uint32_t pid, enum d9_counter k, uint64_t ts, int64_t delta,
                  struct d9_counter_sample *out)
{
    struct pcount *p = proc(c, pid);
    if (!p)
        return -1;
    /* Values are absolute, so a sample placed before the track's newest one
     * would leave that newer sample stale. The walker reports the ends of
     * slices still open when it stops after every event, each at its
     * thread's last event: such an end counts at the newest sample's time. */
    if (ts < p->last_ts[k])
        ts = p->last_ts[k];
    p->value[k] += delta;
    p->last_ts[k] = ts;
    *out = (struct d9_counter_sample){pid, k, !p->seen[k], ts, p->value[k]};
    p->seen[k] = 1;
    return 1;
}

int d9_counters_slice(struct d9_counters *c, const struct d9_export_item *s, int end, struct d9_counter_sample *out)
{
    if (s->park)
        return 0;
    return change(c, s->pid, D9_CTR_BUSY, end ? s->end : s->ts, end ? -1 : 1, out);
}

int d9_counters_instant(struct d9_counters *c, const struct d9_export_item *i, struct d9_counter_sample *out)
{
    if (strcmp(i->name, "drop"))
        return 0;
    for (unsigned k = 0; k < i->nargs; k++)
        if (!strcmp(i->args[k].key, "count") && !i->args[k].str)
            return change(c, i->pid, D9_CTR_DROPS, i->ts, i->args[k].v, out);
    return 0;
}
