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

/* A flag for thread t when the analysis counted values of x above its
 * threshold: the largest one (exact), or for sched_delay the reading
 * furthest above its own threshold. */
static int thread_flag(struct flags *f, enum d9_flag_kind k, const struct d9_tstats *t, const struct d9_hist *x,
                       enum d9_over o, uint64_t limit, int call)
{
    if (!t->over[o])
        return 0;
    struct d9_flag g = {k, x->max, limit, t->over[o], t->pid, t->tid, t->name, call, 0};
    if (o == D9_OVER_SCHED) {
        g.value = t->sched_worst;
        g.threshold = t->sched_worst_limit;
        g.window = t->sched_worst_window;
    }
    return push(f, g);
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
                rc = thread_flag(&f, k, t, &t->wake_lat, D9_OVER_WAKE, lim->wake_ns, -1);
                break;
            case D9_FLAG_SCHED_DELAY: rc = thread_flag(&f, k, t, &t->sched, D9_OVER_SCHED, lim->sched_ns, -1); break;
            case D9_FLAG_SLOW_SYSCALL:
                rc = thread_flag(&f, k, t, &t->slow, D9_OVER_SLOW, lim->slow_ns, t->slow_worst_call);
                break;
            case D9_FLAG_BUSY_PERIOD: rc = thread_flag(&f, k, t, &t->busy, D9_OVER_BUSY, lim->busy_ns, -1); break;
            default: rc = thread_flag(&f, k, t, &t->lockw, D9_OVER_LOCK, lim->lock_ns, t->lock_worst_call); break;
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
