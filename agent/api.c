/* api.c - the public C ABI declared in include/dial9.h. */
#include "dial9.h"

#include <errno.h>

#include "core.h"
#include "dump.h"

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

D9_EXPORT const char *dial9_version(void) { return D9_AGENT_VERSION; }
