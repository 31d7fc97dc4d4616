/* app_events.c - application events per process and name (app_events.h). */
#include "app_events.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

static uint64_t app_hash(uint32_t pid, const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull ^ pid; /* FNV-1a over the name */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    return h;
}

int d9_apps_add(struct d9_apps *s, const struct d9_event *e)
{
    if (e->type != D9_EV_APP || e->nfields < 2 || e->kinds[0] != 'b')
        return 0;
    int64_t v = (int64_t)e->f[1];
    size_t len = e->name_len < 16 ? e->name_len : 16;
    uint64_t h = app_hash(e->pid, e->name, len);
    uint32_t i;
    struct d9_app *a = NULL;
    for (; d9_map_get(&s->idx, h, &i); h = h * 31 + 1) /* a clash of hashes: probe on */
        if (s->a[i].pid == e->pid && s->a[i].name_len == len && !memcmp(s->a[i].name, e->name, len)) {
            a = &s->a[i];
            break;
        }
    if (!a) {
        if (d9_grow((void **)&s->a, &s->cap, s->n, sizeof(*s->a)) < 0 || d9_map_put(&s->idx, h, (uint32_t)s->n) < 0)
            return -1;
        a = &s->a[s->n++];
        memset(a, 0, sizeof(*a));
        a->pid = e->pid;
        memcpy(a->name, e->name, len);
        a->name_len = (uint8_t)len;
        a->min = a->max = v;
    }
    a->count++;
    a->min = v < a->min ? v : a->min;
    a->max = v > a->max ? v : a->max;
    a->sum_overflow |= __builtin_add_overflow(a->sum, v, &a->sum);
    return 0;
}

static int by_pid_name(const void *x, const void *y)
{
    const struct d9_app *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

void d9_apps_sort(struct d9_apps *s)
{
    if (s->n)
        qsort(s->a, s->n, sizeof(*s->a), by_pid_name);
    d9_map_free(&s->idx); /* its indices are stale now */
}

void d9_apps_free(struct d9_apps *s)
{
    free(s->a);
    d9_map_free(&s->idx);
    memset(s, 0, sizeof(*s));
}
