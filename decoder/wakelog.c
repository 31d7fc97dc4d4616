/* wakelog.c - see wakelog.h. */
#include "wakelog.h"

#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

struct d9_wakelog {
    FILE *f;
    struct d9_wake *heap; /* min-heap by (ev, nth) */
    size_t n, cap;
    struct d9_wake ahead; /* reading: the next record, when have */
    int have;
    uint64_t read;
};

struct d9_wakelog *d9_wakelog_new(void)
{
    struct d9_wakelog *l = calloc(1, sizeof(*l));
    if (l && !(l->f = tmpfile())) {
        free(l);
        l = NULL;
    }
    return l;
}

void d9_wakelog_free(struct d9_wakelog *l)
{
    if (!l)
        return;
    fclose(l->f);
    free(l->heap);
    free(l);
}

static int before(const struct d9_wake *a, const struct d9_wake *b)
{
    return a->ev != b->ev ? a->ev < b->ev : a->nth < b->nth;
}

int d9_wakelog_add(struct d9_wakelog *l, const struct d9_wake *w)
{
    if (d9_grow((void **)&l->heap, &l->cap, l->n, sizeof(*l->heap)) < 0)
        return -1;
    size_t i = l->n++;
    for (; i && before(w, &l->heap[(i - 1) / 2]); i = (i - 1) / 2)
        l->heap[i] = l->heap[(i - 1) / 2];
    l->heap[i] = *w;
    return 0;
}

static struct d9_wake pop(struct d9_wakelog *l)
{
    struct d9_wake top = l->heap[0], last = l->heap[--l->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->n)
            break;
        if (c + 1 < l->n && before(&l->heap[c + 1], &l->heap[c]))
            c++;
        if (!before(&l->heap[c], &last))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    if (l->n)
        l->heap[i] = last;
    return top;
}

int d9_wakelog_flush(struct d9_wakelog *l, uint64_t oldest)
{
    while (l->n && l->heap[0].ev < oldest) {
        struct d9_wake w = pop(l);
        if (fwrite(&w, sizeof(w), 1, l->f) != 1)
            return -1;
    }
    return 0;
}

size_t d9_wakelog_held(const struct d9_wakelog *l) { return l->n; }

int d9_wakelog_rewind(struct d9_wakelog *l)
{
    if (d9_wakelog_flush(l, UINT64_MAX) < 0 || fflush(l->f) != 0)
        return -1;
    rewind(l->f);
    l->have = 0;
    l->read = 0;
    return 0;
}

int d9_wakelog_next(struct d9_wakelog *l, struct d9_wake *w)
{
    if (l->have) {
        *w = l->ahead;
        l->have = 0;
    } else if (fread(w, sizeof(*w), 1, l->f) != 1)
        return 0;
    l->read++;
    return 1;
}

uint64_t d9_wakelog_read(const struct d9_wakelog *l) { return l->read; }

int d9_wakelog_next_of(struct d9_wakelog *l, uint64_t ev, struct d9_wake *w)
{
    while (l->have || (l->have = (int)fread(&l->ahead, sizeof(l->ahead), 1, l->f)) != 0) {
        if (l->ahead.ev > ev)
            return 0;
        l->have = 0;
        l->read++;
        if (l->ahead.ev == ev) {
            *w = l->ahead;
            return 1;
        }
    }
    return 0;
}
