/* check.c - `dial9-decode check`: verifies segments, one line each. */
#include <stdio.h>

#include "cli.h"
#include "files.h"
#include "report.h"

struct check {
    int verbose, bad;
};

/* One segment's scan: buf is its file mapping (d9_for_each_file). */
struct scan {
    struct d9_seg *seg;
    struct d9_inflater *z;
    const uint8_t *buf;
    size_t dropped; /* buf[0..dropped) left RSS */
};

/* Decodes a block, then lets go of the pages the scan has passed, so check
 * holds about a block and a drop step (d9_drop_pages) of the file, not the whole segment (up to
 * DIAL9_MAX_FILE_SIZE, 16 MiB by default). */
static int check_block(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct scan *sc = ctx;
    int rc = d9_decode_block(sc->seg, sc->z, b, payload, NULL, NULL);
    d9_drop_pages(sc->buf, &sc->dropped, (size_t)b->off);
    return rc;
}

static int check_file(void *ctx, const char *path, const uint8_t *buf, size_t len)
{
    struct check *c = ctx;
    struct d9_seg seg = {0};
    struct scan sc = {&seg, d9_inflater_new(), buf, 0};
    int rc = sc.z ? d9_scan_segment(buf, len, &seg, check_block, &sc) : -1;
    d9_inflater_free(sc.z);
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
