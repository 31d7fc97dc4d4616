/* verdict.c - see verdict.h. */
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

const char *d9_flag_name(enum d9_flag_kind k)
{
    static const char *const names[] = {"wake_latency", "sched_delay", "slow_syscall", "busy_period",
                                        "lock_wait",    "drops",       "damaged_input"};
    return k <= D9_FLAG_DAMAGED_INPUT ? names[k] : "unknown";
}

int d9_flag_is_duration(enum d9_flag_kind k) { return k <= D9_FLAG_LOCK_WAIT; }

struct flags {
    struct d9_flag *v;
    size_t n, cap;
};

static int push(struct flags *f, struct d9_flag x)
{
    if (d9_grow((void **)&f->v, &f->cap, f->n, sizeof(*f->v)) < 0)
        return -1;
    f->v[f->n++] = x;
    return 0;
}

/* A flag for thread t when the analysis counted values of kind o above
 * their threshold: the worst one's figure (value), the threshold it was
 * above, and for sched_delay its window. */
static int thread_flag(struct flags *f, enum d9_flag_kind k, const struct d9_tstats *t, enum d9_over o,
                       uint64_t value, uint64_t threshold, uint64_t window, int call)
{
    if (!t->over[o])
        return 0;
    return push(f, (struct d9_flag){k, value, threshold, t->over[o], t->pid, t->tid, t->name, call, window});
}

int d9_verdict(const struct d9_summary *s, int bad, struct d9_flag **out, size_t *nout)
{
    const struct d9_limits *lim = &s->lim;
    struct flags f = {0};
    int rc = 0;
    for (enum d9_flag_kind k = D9_FLAG_WAKE_LATENCY; rc == 0 && k <= D9_FLAG_LOCK_WAIT; k++)
        for (size_t i = 0; rc == 0 && i < s->nt; i++) {
            const struct d9_tstats *t = &s->t[i];
            switch (k) {
            case D9_FLAG_WAKE_LATENCY:
                rc = thread_flag(&f, k, t, D9_OVER_WAKE, t->wake_lat.max, lim->wake_ns, 0, -1);
                break;
            case D9_FLAG_SCHED_DELAY: /* the reading furthest above its own threshold */
                rc = thread_flag(&f, k, t, D9_OVER_SCHED, t->sched_worst, t->sched_worst_limit, t->sched_worst_window,
                                 -1);
                break;
            case D9_FLAG_SLOW_SYSCALL:
                rc = thread_flag(&f, k, t, D9_OVER_SLOW, t->slow.max, lim->slow_ns, 0, t->slow_worst_call);
                break;
            case D9_FLAG_BUSY_PERIOD: rc = thread_flag(&f, k, t, D9_OVER_BUSY, t->busy.max, lim->busy_ns, 0, -1); break;
            default:
                rc = thread_flag(&f, k, t, D9_OVER_LOCK, t->lockw.max, lim->lock_ns, 0, t->lock_worst_call);
                break;
            }
        }
    if (rc == 0 && s->dropped > lim->max_drops) {
        const struct d9_tstats *worst = NULL;
        uint64_t threads = 0;
        for (size_t i = 0; i < s->nt; i++) {
            threads += s->t[i].dropped > 0;
            if (s->t[i].dropped && (!worst || s->t[i].dropped > worst->dropped))
                worst = &s->t[i];
        }
        rc = push(&f, (struct d9_flag){D9_FLAG_DROPS, s->dropped, lim->max_drops, threads, worst ? worst->pid : 0,
                                       worst ? worst->tid : 0, worst ? worst->name : NULL, -1, 0});
    }
    if (rc == 0 && bad > 0)
        rc = push(&f, (struct d9_flag){D9_FLAG_DAMAGED_INPUT, (uint64_t)bad, 0, (uint64_t)bad, 0, 0, NULL, -1, 0});
    if (rc < 0) {
        free(f.v);
        f.v = NULL;
        f.n = 0;
    }
    *out = f.v;
    *nout = f.n;
    return rc;
}

int d9_parse_ms(const char *s, uint64_t *ns)
{
    char *end;
    if (!((*s >= '0' && *s <= '9') || *s == '.'))
        return -1;
    errno = 0;
    double ms = strtod(s, &end);
    if (errno || *end || !isfinite(ms) || ms < 0 || ms * 1e6 >= 1.8e19)
        return -1;
    *ns = (uint64_t)(ms * 1e6 + 0.5);
    return 0;
}

int d9_parse_count(const char *s, uint64_t *n)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *n = v;
    return 0;
}
