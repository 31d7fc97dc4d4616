/* check.c - `dial9-decode check`: verifies segments, one line each. */
#include <stdio.h>

#include "cli.h"
#include "files.h"
#include "report.h"

struct check {
    int verbose, bad;
};

static int check_file(void *ctx, const char *path, const uint8_t *buf, size_t len)
{
    struct check *c = ctx;
    struct d9_seg seg;
    int rc = d9_read_segment(buf, len, &seg, NULL, NULL);
    if (rc == 0) {
        if (seg.status == D9_SEG_INVALID) { /* not a segment: an error, not a report line */
            fputs("dial9-decode: ", stderr);
            d9_report_segment(stderr, path, &seg, 0);
        } else {
            d9_report_segment(stdout, path, &seg, c->verbose);
            if (seg.dump_reason) { /* a dump's segment: why (sanitised: one line) */
                fputs("  dump reason: ", stdout);
                for (const char *r = seg.dump_reason; *r; r++)
                    putchar((unsigned char)*r < 0x20 || *r == 0x7f ? '?' : *r);
                putchar('\n');
            }
        }
        c->bad += seg.status != D9_SEG_OK;
    }
    d9_seg_free(&seg);
    return rc;
}

int d9_cmd_check(char *const *paths, int npaths, int verbose)
{
    struct check c = {verbose, 0};
    int errors = 0;
    if (d9_for_each_file(paths, npaths, check_file, &c, &errors) != 0) {
        fprintf(stderr, "dial9-decode: out of memory\n");
        return 1;
    }
    return c.bad || errors ? 1 : 0;
}
