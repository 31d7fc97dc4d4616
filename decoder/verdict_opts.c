/* verdict_opts.c - the verdict threshold options (d9_limit_option in
 * cli.h), parsed alike by `verdict` (main.c) and `report` (report_html.c);
 * outside main.c so the unit tests and the fuzzer link without it. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Verdict threshold options: the name and where the value goes. */
static const struct {
    const char *name;
    size_t off;
    int count; /* 1: a count, 0: milliseconds */
} limit_opts[] = {
    {"--wake-latency-ms", offsetof(struct d9_limits, wake_ns), 0},
    {"--sched-delay-ms", offsetof(struct d9_limits, sched_ns), 0},
    {"--slow-syscall-ms", offsetof(struct d9_limits, slow_ns), 0},
    {"--busy-ms", offsetof(struct d9_limits, busy_ns), 0},
    {"--lock-wait-ms", offsetof(struct d9_limits, lock_ns), 0},
    {"--max-drops", offsetof(struct d9_limits, max_drops), 1},
};

int d9_limit_option(int argc, char **argv, int *i, struct d9_limits *lim)
{
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof(limit_opts) / sizeof(limit_opts[0]); k++) {
        size_t n = strlen(limit_opts[k].name);
        if (strncmp(a, limit_opts[k].name, n) || (a[n] && a[n] != '='))
            continue;
        const char *v = a[n] ? a + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
        if (!v) {
            fprintf(stderr, "dial9-decode: missing value for %s\ntry 'dial9-decode --help'\n", limit_opts[k].name);
            return 2;
        }
        uint64_t *dst = (uint64_t *)((char *)lim + limit_opts[k].off);
        if ((limit_opts[k].count ? d9_parse_count(v, dst) : d9_parse_ms(v, dst)) < 0) {
            fprintf(stderr, "dial9-decode: %s: not a %s: %s\ntry 'dial9-decode --help'\n", limit_opts[k].name,
                    limit_opts[k].count ? "count (0, 1, ...)" : "number of milliseconds (e.g. 5, 0.5)", v);
            return 2;
        }
        return 1;
    }
    return 0;
}
