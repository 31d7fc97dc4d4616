/* fmt.c - see fmt.h. */
#include "fmt.h"

#include <inttypes.h>
#include <stdio.h>

const char *d9_fmt_dur(char *buf, size_t n, uint64_t ns)
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

const char *d9_fmt_share(char *buf, size_t n, uint64_t part, uint64_t whole)
{
    char w[24];
    if (!whole)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f%% of %s", 100.0 * (double)part / (double)whole, d9_fmt_dur(w, sizeof(w), whole));
    return buf;
}

const char *d9_fmt_ts(char *buf, size_t n, uint64_t ns)
{
    snprintf(buf, n, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
    return buf;
}

const char *d9_fmt_name(char *buf, size_t n, const char *name)
{
    size_t i = 0;
    if (!n)
        return buf;
    if (!*name)
        name = "-";
    for (; name[i] && i + 1 < n; i++)
        buf[i] = name[i] > ' ' && name[i] < 0x7f ? name[i] : '_';
    buf[i] = 0;
    return buf;
}
