/* summary.c - `dial9-decode summary`: per process and thread statistics as
 * a readable table or one JSON object. The numbers come from analysis.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "json.h"

/* Human duration: 950ns, 12.3us, 4.56ms, 1.23s. */
static const char *dur(char *buf, size_t n, uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, n, "%" PRIu64 "ns", ns);
    else if (ns < 1000000)
        snprintf(buf, n, "%.3gus", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.3gms", ns / 1e6);
    else
        snprintf(buf, n, "%.3gs", ns / 1e9);
    return buf;
}

static const char *dist_text(char *buf, size_t n, const struct d9_dist *d)
{
    char a[16], b[16], c[16];
    if (!d->n)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%s/%s/%s", dur(a, sizeof(a), d->p50), dur(b, sizeof(b), d->p99), dur(c, sizeof(c), d->max));
    return buf;
}

static double busy_pct(const struct d9_tstats *t)
{
    uint64_t span = t->busy_ns + t->parked_ns;
    return span ? 100.0 * (double)t->busy_ns / (double)span : 0.0;
}

static void print_text(const struct d9_model *m, const struct d9_summary *s)
{
    printf("%" PRIu64 " events, %" PRIu64 " dropped, %zu processes, %zu threads\n", s->events, s->dropped,
           m->nproc, s->nt);
    uint32_t pid = 0;
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        if (i == 0 || t->pid != pid) {
            const struct d9_proc *p = d9_model_proc(m, t->pid);
            pid = t->pid;
            printf("\nprocess %" PRIu32 "  %s  [%s]\n", pid, p && p->exe[0] ? p->exe : "?",
                   p ? p->cmdline : "");
            printf("  %-8s %-16s %-13s %7s %6s  %-24s %-24s %6s %6s %7s %6s  %s\n", "TID", "NAME", "ROLE",
                   "PARKS", "BUSY%", "PARK p50/p99/max", "BUSY p50/p99/max", "WAKES>", ">WAKES", "NOWAIT",
                   "DROPS", "PARKS BY CALL");
        }
        char pd[64], bd[64];
        printf("  %-8" PRIu32 " %-16s %-13s %7" PRIu64 " %5.1f%%  %-24s %-24s %6" PRIu64 " %6" PRIu64 " %7" PRIu64
               " %6" PRIu64 " ",
               t->tid, t->name[0] ? t->name : "-", d9_role_name(t->role), t->parks, busy_pct(t),
               dist_text(pd, sizeof(pd), &t->park_ns), dist_text(bd, sizeof(bd), &t->busy_period_ns),
               t->wakes_sent, t->wakes_received, t->nowait_polls, t->dropped);
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (t->parks_by_call[k])
                printf(" %s=%" PRIu64, d9_call_name(k), t->parks_by_call[k]);
        putchar('\n');
    }
    if (s->nt)
        puts("\nWAKES> sent, >WAKES received (matched to the unpark they caused); BUSY% of the span between "
             "the thread's first and last event");
}

static void json_dist(const char *key, const struct d9_dist *d)
{
    printf(",\"%s\":{\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 ",\"count\":%" PRIu64 "}", key,
           d->p50, d->p99, d->max, d->n);
}

static void print_json(const struct d9_model *m, const struct d9_summary *s, int bad)
{
    printf("{\"events\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"damaged_inputs\":%d,\"processes\":[", s->events,
           s->dropped, bad);
    for (size_t i = 0; i < m->nproc; i++) {
        const struct d9_proc *p = &m->proc[i];
        size_t nt = 0;
        for (size_t k = 0; k < s->nt; k++)
            nt += s->t[k].pid == p->pid;
        printf("%s\n {\"pid\":%" PRIu32 ",\"exe\":", i ? "," : "", p->pid);
        d9_json_str(stdout, p->exe, strlen(p->exe));
        fputs(",\"cmdline\":", stdout);
        d9_json_str(stdout, p->cmdline, strlen(p->cmdline));
        fputs(",\"hostname\":", stdout);
        d9_json_str(stdout, p->hostname, strlen(p->hostname));
        printf(",\"threads\":%zu}", nt);
    }
    fputs("],\"threads\":[", stdout);
    for (size_t i = 0; i < s->nt; i++) {
        const struct d9_tstats *t = &s->t[i];
        printf("%s\n {\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":", i ? "," : "", t->pid, t->tid);
        d9_json_str(stdout, t->name, strlen(t->name));
        printf(",\"role\":\"%s\",\"events\":%" PRIu64 ",\"parks\":%" PRIu64 ",\"parks_by_call\":{",
               d9_role_name(t->role), t->events, t->parks);
        const char *sep = "";
        for (unsigned k = 0; k <= D9_CALL_COUNT; k++)
            if (t->parks_by_call[k]) {
                printf("%s\"%s\":%" PRIu64, sep, d9_call_name(k), t->parks_by_call[k]);
                sep = ",";
            }
        printf("},\"wakes_sent\":%" PRIu64 ",\"wakes_received\":%" PRIu64 ",\"busy_ns\":%" PRIu64
               ",\"parked_ns\":%" PRIu64 ",\"busy_pct\":%.2f,\"nowait_polls\":%" PRIu64 ",\"dropped\":%" PRIu64,
               t->wakes_sent, t->wakes_received, t->busy_ns, t->parked_ns, busy_pct(t), t->nowait_polls, t->dropped);
        json_dist("park_ns", &t->park_ns);
        json_dist("busy_period_ns", &t->busy_period_ns);
        putchar('}');
    }
    puts("]}");
}

int d9_cmd_summary(char *const *paths, int npaths, int json)
{
    struct d9_model m = {0};
    struct d9_summary s = {0};
    int bad = 0, rc = d9_load(&m, paths, npaths, &bad);
    if (rc == 0)
        rc = d9_analyse(&m, &s);
    if (rc < 0)
        fprintf(stderr, "dial9-decode: out of memory\n");
    else if (json)
        print_json(&m, &s, bad);
    else
        print_text(&m, &s);
    d9_summary_free(&s);
    d9_model_free(&m);
    return rc < 0 || bad ? 1 : 0;
}
