/* app_events.h - application events (type APP: dial9_event, include/dial9.h)
 * counted per process and name, for `summary`. */
#ifndef DIAL9_DECODER_APP_EVENTS_H
#define DIAL9_DECODER_APP_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "reader.h"

struct d9_app {
    uint32_t pid;
    char name[17];  /* NUL-terminated (a damaged trace's may hold a NUL: name_len counts) */
    uint8_t name_len;
    uint64_t count; /* events */
    int64_t min, max, sum; /* of their values; sum is meaningless when sum_overflow */
    int sum_overflow;      /* the sum left the int64 range */
};

struct d9_apps {
    struct d9_app *a; /* after d9_apps_sort: by pid, then name */
    size_t n, cap;
    struct d9_map idx; /* hash of (pid, name) -> a index (probed on a clash) */
};

/* Counts an APP event e (its name: e->name, its value: field 1). 0, -1 out
 * of memory. Events of another type, or without both fields, are skipped. */
int d9_apps_add(struct d9_apps *s, const struct d9_event *e);
void d9_apps_sort(struct d9_apps *s);
void d9_apps_free(struct d9_apps *s);

#endif
