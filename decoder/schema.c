/* schema.c - built-in schema kinds and field names (see schema.h). */
#include "schema.h"

#include <string.h>

static const struct d9_schema_entry table[D9_SCHEMA_ENTRIES] = D9_SCHEMA_TABLE;

void d9_schema_builtin(struct d9_schema *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        uint8_t t = table[i].type;
        size_t n = strlen(table[i].kinds);
        s->present[t] = 1;
        s->nfields[t] = (uint8_t)n;
        memcpy(s->kinds[t], table[i].kinds, n);
    }
}

/* Names split out of the comma-separated table strings on first use. */
#define NAME_MAX_LEN 24
static char names[D9_EV_TYPE_MAX][D9_MAX_FIELDS][NAME_MAX_LEN];
static int names_ready;

static void split_names(void)
{
    for (size_t i = 0; i < D9_SCHEMA_ENTRIES; i++) {
        const char *p = table[i].names;
        for (unsigned f = 0; *p && f < D9_MAX_FIELDS; f++) {
            size_t n = strcspn(p, ",");
            size_t k = n < NAME_MAX_LEN - 1 ? n : NAME_MAX_LEN - 1;
            memcpy(names[table[i].type][f], p, k);
            p += n + (p[n] == ',');
        }
    }
    names_ready = 1;
}

const char *d9_field_name(unsigned type, unsigned i)
{
    static const char *const generic[D9_MAX_FIELDS] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
    if (!names_ready)
        split_names();
    if (i >= D9_MAX_FIELDS)
        return "f";
    if (type < D9_EV_TYPE_MAX && names[type][i][0])
        return names[type][i];
    return generic[i];
}

const char *d9_fd_kind_name(uint64_t kind)
{
    static const char *const names[] = D9_FD_KIND_NAMES;
    return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *d9_sched_source_name(uint64_t source)
{
    return source == D9_SCHED_SCHEDSTAT ? "schedstat" : "unknown";
}
