/* report.c - see report.h. */
#include "report.h"

#include <inttypes.h>

static void where(FILE *out, const struct d9_problem *p)
{
    if (p->block == D9_PROBLEM_HEADER)
        fprintf(out, "header at offset %" PRIu64 ": %s", p->offset, p->reason);
    else
        fprintf(out, "block %" PRIu32 " at offset %" PRIu64 ": %s", p->block, p->offset, p->reason);
}

void d9_report_segment(FILE *out, const char *path, const struct d9_seg *s, int verbose)
{
    switch (s->status) {
    case D9_SEG_INVALID:
        fprintf(out, "%s: %s\n", path, s->error);
        return;
    case D9_SEG_OK:
        fprintf(out, "OK %s (%" PRIu32 " blocks, %" PRIu64 " events)\n", path, s->blocks, s->events);
        return;
    default:
        break;
    }
    fprintf(out, "%s %s: ", s->status == D9_SEG_DAMAGED ? "DAMAGED" : "TRUNCATED", path);
    where(out, &s->problems[0]);
    if (s->nproblems > 1)
        fprintf(out, " (and %" PRIu32 " more problem%s)", s->nproblems - 1, s->nproblems > 2 ? "s" : "");
    fprintf(out, "; recovered %" PRIu32 " blocks, %" PRIu64 " events, skipped %" PRIu64 " bytes\n",
            s->blocks, s->events, s->skipped);
    if (!verbose)
        return;
    for (uint32_t i = 0; i < s->nproblems && i < D9_MAX_PROBLEMS; i++) {
        fputs("  ", out);
        where(out, &s->problems[i]);
        fputc('\n', out);
    }
    if (s->nproblems > D9_MAX_PROBLEMS)
        fprintf(out, "  ... %" PRIu32 " more\n", s->nproblems - D9_MAX_PROBLEMS);
}
