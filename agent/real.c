/* real.c - resolves the real libc functions behind our interposers. */
#include <dlfcn.h>
#include <errno.h>

#include "real.h"

struct d9_real d9_real;

/* Set while this thread runs dlsym: if dlsym (or a malloc it calls) reaches
 * one of our interposers, the interposer must not start another resolve. */
static D9_TLS int resolving;

static void *lookup(const char *name, const char *version)
{
#ifdef __SANITIZE_THREAD__
    /* Linked into a TSan program (test/tsan/agent_threads.c): libtsan's
     * interceptors are unversioned, dlvsym would skip them (and TSan would
     * not see condvars); they pick libc's versions themselves. */
    version = NULL;
#endif
    void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
    return p ? p : dlsym(RTLD_NEXT, name);
}

void d9_real_resolve(void)
{
    if (resolving)
        return;
    int saved = errno;
    resolving = 1;
    d9_busy++; /* dlsym may allocate: nothing it does is the host's event */
#define D9_REAL_RESOLVE(ret, name, params, ver)                                \
    if (__atomic_load_n(&d9_real.name, __ATOMIC_RELAXED) == NULL)              \
        __atomic_store_n(&d9_real.name, (__typeof__(d9_real.name))lookup(#name, ver), \
                         __ATOMIC_RELAXED);
    D9_REAL_LIST(D9_REAL_RESOLVE)
#undef D9_REAL_RESOLVE
    d9_busy--;
    resolving = 0;
    errno = saved;
}

/* Before the recorder's constructors (default priority), so the core can use
 * d9_real from its own initialisation. */
__attribute__((constructor(101))) static void d9_real_init(void)
{
    d9_real_resolve();
}
