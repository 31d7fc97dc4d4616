/* load.c - fills a model from command-line paths (see d9_load in model.h). */
#include <stdio.h>

#include "files.h"
#include "model.h"
#include "report.h"

struct load {
    struct d9_model *m;
    int *bad;
};

static int load_file(void *ctx, const char *path, const uint8_t *buf, size_t len)
{
    struct load *l = ctx;
    struct d9_seg seg;
    int rc = d9_read_segment(buf, len, &seg, d9_model_add_event, l->m);
    if (rc == 0 && seg.status != D9_SEG_INVALID)
        rc = d9_model_add_header(l->m, &seg);
    if (rc == 0 && seg.status != D9_SEG_OK) {
        fputs("dial9-decode: ", stderr);
        d9_report_segment(stderr, path, &seg, 0);
        (*l->bad)++;
    }
    d9_seg_free(&seg);
    return rc;
}

int d9_load(struct d9_model *m, char *const *paths, int npaths, int *bad)
{
    struct load l = {m, bad};
    int rc = d9_for_each_file(paths, npaths, load_file, &l, bad);
    if (rc == 0)
        d9_model_sort(m);
    return rc < 0 ? -1 : rc;
}
