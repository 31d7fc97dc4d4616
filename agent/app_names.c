/* app_names.c - the names of application events (app_names.h). */
#include "app_names.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

static _Atomic uint32_t taken; /* slots reserved; may pass D9_APP_NAMES */
static _Atomic uint8_t ready[D9_APP_NAMES]; /* 1 once the slot's name is written */
static char names[D9_APP_NAMES][D9_APP_NAME_MAX];
static uint8_t lens[D9_APP_NAMES];

/* Bytes a name may hold: what a log line or a JSON key shows as it is. */
static int name_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == ':' || c == '/' || c == '-';
}

int d9_app_register(const char *name)
{
    size_t len = 0;
    while (name && len <= D9_APP_NAME_MAX && name[len])
        if (!name_byte((unsigned char)name[len++]))
            return -EINVAL;
    if (!name || len == 0 || len > D9_APP_NAME_MAX)
        return -EINVAL;
    uint32_t n = atomic_load(&taken);
    for (uint32_t i = 0; i < n && i < D9_APP_NAMES; i++)
        if (atomic_load_explicit(&ready[i], memory_order_acquire) && lens[i] == len && !memcmp(names[i], name, len))
            return (int)i + 1;
    uint32_t i = atomic_fetch_add(&taken, 1);
    if (i >= D9_APP_NAMES) {
        atomic_store(&taken, D9_APP_NAMES); /* no wrap however often it is asked */
        return -ENOSPC;
    }
    memcpy(names[i], name, len);
    lens[i] = (uint8_t)len;
    atomic_store_explicit(&ready[i], 1, memory_order_release);
    return (int)i + 1;
}

int d9_app_known(int id)
{
    return id >= 1 && id <= D9_APP_NAMES && atomic_load_explicit(&ready[id - 1], memory_order_relaxed);
}

size_t d9_app_name(uint64_t id, uint8_t out[16])
{
    if (id < 1 || id > D9_APP_NAMES || !atomic_load_explicit(&ready[id - 1], memory_order_acquire))
        return 0;
    memcpy(out, names[id - 1], lens[id - 1]);
    return lens[id - 1];
}
