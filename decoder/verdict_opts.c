/* verdict_opts.c - the verdict threshold options (d9_limit_option in
 * cli.h), parsed alike by `verdict` (main.c) and `report` (report_html.c);
 * outside main.c so the unit tests and the fuzzer link without it. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum kind { MS, COUNT, PCT };

/* Verdict threshold options: the name, where the value goes, and its kind. */
static const struct {
    const char *name;
    size_t off;
    enum kind kind;
} limit_opts[] = {
    {"--wake-latency-ms", offsetof(struct d9_limits, wake_ns), MS},
    {"--sched-delay-ms", offsetof(struct d9_limits, sched_ns), MS},
    {"--sched-delay-pct", offsetof(struct d9_limits, sched_pct), PCT},
    {"--slow-syscall-ms", offsetof(struct d9_limits, slow_ns), MS},
    {"--busy-ms", offsetof(struct d9_limits, busy_ns), MS},
    {"--lock-wait-ms", offsetof(struct d9_limits, lock_ns), MS},
    {"--max-drops", offsetof(struct d9_limits, max_drops), COUNT},
};

static int parse(enum kind k, const char *v, uint64_t *dst)
{
    if (k == MS)
        return d9_parse_ms(v, dst);
    return d9_parse_count(v, dst) < 0 || (k == PCT && *dst > 100) ? -1 : 0;
}

int d9_limit_option(int argc, char **argv, int *i, struct d9_limits *lim)
{
    static const char *const what[] = {"number of milliseconds (e.g. 5, 0.5)", "count (0, 1, ...)",
                                       "whole percentage (0-100)"};
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
        if (parse(limit_opts[k].kind, v, (uint64_t *)((char *)lim + limit_opts[k].off)) < 0) {
            fprintf(stderr, "dial9-decode: %s: not a %s: %s\ntry 'dial9-decode --help'\n", limit_opts[k].name,
                    what[limit_opts[k].kind], v);
            return 2;
        }
        return 1;
    }
    return 0;
}
