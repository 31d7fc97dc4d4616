/* app_names.h - the names of application events (include/dial9.h:
 * dial9_event_id): registered by the program, read by the writer when it
 * encodes an APP event (source 'i', dial9_format.h). No lock: registration
 * and lookup are async-signal-safe. */
#ifndef DIAL9_APP_NAMES_H
#define DIAL9_APP_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define D9_APP_NAMES 256   /* names a process may register */
#define D9_APP_NAME_MAX 15 /* bytes a name may have */

/* The id (1..D9_APP_NAMES) of name, registered now or before: a name given
 * twice at the same time may get two ids, which record the same. -EINVAL
 * for a name that is empty, longer than D9_APP_NAME_MAX or holds a byte
 * outside [A-Za-z0-9_.:/-]; -ENOSPC when D9_APP_NAMES are registered. */
int d9_app_register(const char *name);
/* 1 when id was returned by d9_app_register. */
int d9_app_known(int id);
/* The name of id into out (not NUL-terminated): its length, 0 for an id
 * never registered. */
size_t d9_app_name(uint64_t id, uint8_t out[16]);

#endif
