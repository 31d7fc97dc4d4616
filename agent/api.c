/* api.c - the public C ABI declared in include/dial9.h. */
#include "dial9.h"

#include <errno.h>

#include "app_names.h"
#include "core.h"
#include "dump.h"
#include "real.h" /* d9_stamp_if_recording */

#define D9_FLUSH_TIMEOUT_MS 1000 /* documented in dial9.h */
#define D9_DUMP_TIMEOUT_MS 2000  /* documented in dial9.h */

D9_EXPORT int dial9_is_recording(void) { return atomic_load(&d9_recording) != 0; }

D9_EXPORT int dial9_flush(void)
{
    struct d9_slot *s = d9_self;
    if (s && !d9_busy) { /* the caller's pending zero-timeout polls count as recorded */
        d9_busy++;
        d9_flush_nowait(s);
        d9_busy--;
    }
    return d9_writer_flush(D9_FLUSH_TIMEOUT_MS);
}

D9_EXPORT int dial9_dump(const char *reason)
{
    if (!atomic_load(&d9_recording)) {
        errno = ENOTCONN;
        return -1;
    }
    struct d9_slot *s = d9_self;
    d9_busy++; /* the request's mutex and futex are the agent's, not the program's */
    if (s && d9_busy == 1)
        d9_flush_nowait(s);
    int err = d9_dump_request(reason, D9_DUMP_TIMEOUT_MS);
    d9_busy--;
    if (err)
        errno = err;
    return err ? -1 : 0;
}

D9_EXPORT int dial9_event_id(const char *name)
{
    int id = d9_app_register(name);
    if (id < 0) {
        errno = -id;
        return -1;
    }
    return id;
}

D9_EXPORT int dial9_event(int id, long long value)
{
    if (D9_UNLIKELY(!d9_app_known(id))) {
        errno = EINVAL;
        return -1;
    }
    uint64_t ts = d9_stamp_if_recording();
    if (D9_UNLIKELY(!ts)) {
        errno = ENOTCONN;
        return -1;
    }
    d9_emit_since(ts, D9_EV_APP, 0, (uint64_t)id, (uint64_t)value);
    return 0;
}

D9_EXPORT const char *dial9_version(void) { return D9_AGENT_VERSION; }
