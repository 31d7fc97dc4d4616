/* roles.c - see roles.h. */
#include "roles.h"

#include <string.h>

/* Parks on I/O: a readiness wait, or a blocking socket's read, recv,
 * accept or connect, or a send or write that waited (a thread-per-connection
 * server's workers). */
static int is_io_call(unsigned c)
{
    return d9_call_polls(c) || c == D9_CALL_READ || c == D9_CALL_RECV ||
           c == D9_CALL_ACCEPT || c == D9_CALL_ACCEPT4 || c == D9_CALL_SEND || c == D9_CALL_WRITE ||
           c == D9_CALL_CONNECT;
}

static int has_word(const char *name, const char *const *words)
{
    for (; *words; words++)
        if (strcasestr(name, *words))
            return 1;
    return 0;
}

static void sums(const struct d9_tstats *t, uint64_t *io, uint64_t *sync)
{
    *io = *sync = 0;
    for (unsigned k = 0; k < D9_CALL_COUNT; k++) {
        *io += is_io_call(k) ? t->parks_by_call[k] : 0;
        *sync += d9_call_syncs(k) ? t->parks_by_call[k] : 0;
    }
}

static int mostly_sync(const struct d9_tstats *t)
{
    uint64_t io, sync;
    sums(t, &io, &sync);
    return t->parks && sync * 2 > t->parks;
}

/* Another thread of the process with the same name parks mostly on sync. */
static int sync_namesake(const struct d9_summary *s, size_t i)
{
    const struct d9_tstats *t = &s->t[i];
    if (!t->name[0])
        return 0;
    for (size_t j = 0; j < s->nt; j++)
        if (j != i && s->t[j].pid == t->pid && strcmp(s->t[j].name, t->name) == 0 && mostly_sync(&s->t[j]))
            return 1;
    return 0;
}

enum d9_role d9_guess_role(const struct d9_summary *s, size_t i)
{
    static const char *const pool_words[] = {"pool", "blocking", "bio", NULL};
    static const char *const worker_words[] = {"worker", "tokio-runtime-w", NULL};
    const struct d9_tstats *t = &s->t[i];
    uint64_t io, sync;
    sums(t, &io, &sync);
    if (mostly_sync(t) && has_word(t->name, pool_words))
        return D9_ROLE_BLOCKING;
    /* Never parked on I/O, like namesakes: Tokio names workers and its
     * blocking pool both "tokio-runtime-w"; only workers poll the driver. */
    if (io == 0 && mostly_sync(t) && sync_namesake(s, i))
        return D9_ROLE_BLOCKING;
    if (has_word(t->name, worker_words) || (t->parks && io * 2 > t->parks))
        return D9_ROLE_WORKER;
    if (mostly_sync(t) && sync_namesake(s, i))
        return D9_ROLE_BLOCKING;
    return D9_ROLE_OTHER;
}

const char *d9_role_name(enum d9_role r)
{
    return r == D9_ROLE_WORKER ? "worker" : r == D9_ROLE_BLOCKING ? "blocking_pool" : "other";
}
