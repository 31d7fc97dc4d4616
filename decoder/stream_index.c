/* stream_index.c - opening a stream's inputs: each segment's header goes to
 * the model, its verified blocks to the index (scan of block headers and
 * payload crcs, resync on damage; the file's pages are dropped as the scan
 * passes), then the index is sorted by first_ts. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "model.h"
#include "report.h"
#include "stream_int.h"
#include "vec.h"

struct index_ctx {
    struct d9_stream *s;
    uint32_t file;
    const uint8_t *base;
    size_t dropped; /* base[0..dropped) left RSS */
};

static int index_block(void *ctx, const struct d9_block_ref *b, const uint8_t *payload)
{
    struct index_ctx *c = ctx;
    struct d9_stream *s = c->s;
    (void)payload;
    if (d9_grow((void **)&s->b, &s->b_cap, s->nb, sizeof(*s->b)) < 0)
        return -1;
    s->b[s->nb++] = (struct sblock){*b, c->file};
    s->bytes_total += b->payload_len;
    d9_drop_pages(c->base, &c->dropped, (size_t)b->off); /* what the scan passed */
    return 0;
}

void d9s_report(struct d9_stream *s, struct sfile *f)
{
    f->reported = 1;
    (*s->bad)++;
    fputs("dial9-decode: ", stderr);
    d9_report_segment(stderr, f->path, &f->seg, 0);
}

/* One line when a pid names a second (third, ...) process: what tells it
 * from the first. */
static void say_later_process(const struct d9_model *m, const char *path, const struct d9_seg *seg)
{
    const struct d9_proc *first = d9_model_proc(m, d9_pid_of(seg->pid));
    const struct d9_proc_identity *a = first && first->has_identity ? &first->identity : NULL, *b = &seg->identity;
    /* The kernel reuses namespace inode numbers: the same pidns says little. */
    const char *why = !a                                   ? ""
                      : strcmp(a->boot_id, b->boot_id) != 0 ? " (another boot)"
                      : a->pidns != b->pidns                ? " (another pid namespace)"
                                                            : " (started at another time)";
    fprintf(stderr, "dial9-decode: %s: pid %" PRIu32 " again, another process%s; shown as pid %s\n", path,
            d9_pid_of(seg->pid), why, D9_PID_STR(seg->pid));
}

/* Maps path, indexes its verified blocks and reads its header into a new
 * s->f entry (the model gets it later: add_file). 0, -1 out of memory. */
static int scan_file(struct d9_stream *s, const char *path)
{
    const uint8_t *buf;
    size_t len;
    if (d9_map_file(path, &buf, &len) < 0) {
        int err = errno;
        fprintf(stderr, "dial9-decode: %s: %s\n", path, strerror(err));
        (*s->bad)++;
        return err == ENOMEM ? -1 : 0;
    }
    struct sfile *f = &s->f[s->nf];
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->b0 = s->nb;
    struct index_ctx c = {s, (uint32_t)s->nf, buf, 0};
    int rc = d9_scan_segment(buf, len, &f->seg, index_block, &c);
    d9_unmap_file(buf, len);
    f->nblk = s->nb - f->b0;
    if (rc == 0 && !(f->path = strdup(path)))
        rc = -1;
    s->nf++;
    return rc;
}

/* The scanned file f: its timestamps moved by f->shift, its header into
 * the model, its fd opened for the passes; damage reported. 0, -1 out of
 * memory. */
static int add_file(struct d9_stream *s, struct sfile *f)
{
    int rc = 0;
    for (size_t i = f->b0; i < f->b0 + f->nblk; i++) {
        s->b[i].ref.first_ts += f->shift;
        s->b[i].ref.last_ts += f->shift;
    }
    f->seg.anchor_mono_ns += f->shift; /* the same instant on the clock its events now use (0: none moved) */
    /* A header cut before its pid (a writer stopped by a full disk or a kill
     * while it wrote one) with no block after it adds no process: pid 0 would
     * be counted as one with nothing in it. */
    if (f->seg.status != D9_SEG_INVALID && (f->seg.pid != 0 || f->seg.blocks != 0)) {
        rc = d9_model_add_header(s->m, &f->seg);
        if (rc == 1) {
            say_later_process(s->m, f->path, &f->seg);
            rc = 0;
        }
        if (rc == 0 && (f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
            fprintf(stderr, "dial9-decode: %s: %s\n", f->path, strerror(errno));
            (*s->bad)++;
            f->reported = 1;
            for (size_t i = f->b0; i < f->b0 + f->nblk; i++) /* nothing of it can be read */
                s->bytes_total -= s->b[i].ref.payload_len;
            f->nblk = 0;
        }
    }
    if (rc == 0 && f->seg.status != D9_SEG_OK && !f->reported)
        d9s_report(s, f);
    return rc;
}

/* Drops the index entries of files that could not be opened. */
static void drop_unread(struct d9_stream *s)
{
    size_t out = 0;
    for (size_t i = 0; i < s->nb; i++) {
        const struct sfile *f = &s->f[s->b[i].file];
        if (i - f->b0 < f->nblk)
            s->b[out++] = s->b[i];
    }
    s->nb = out;
}

static int by_first_ts(const void *x, const void *y)
{
    const struct sblock *a = x, *b = y;
    if (a->ref.first_ts != b->ref.first_ts)
        return a->ref.first_ts < b->ref.first_ts ? -1 : 1;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return (a->ref.off > b->ref.off) - (a->ref.off < b->ref.off);
}

int d9s_index(struct d9_stream *s, char *const *paths, int npaths)
{
    char **files = NULL;
    size_t n = 0;
    if (d9_list_files(paths, npaths, &files, &n, s->bad) < 0)
        return -1;
    s->f = calloc(n ? n : 1, sizeof(*s->f));
    int rc = s->f ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = scan_file(s, files[i]);
    d9_free_files(files, n);
    if (rc == 0)
        rc = d9s_align_boots(s);
    for (size_t i = 0; rc == 0 && i < s->nf; i++)
        rc = add_file(s, &s->f[i]);
    if (rc == 0)
        drop_unread(s);
    if (rc == 0 && s->nb)
        qsort(s->b, s->nb, sizeof(*s->b), by_first_ts);
    return rc;
}
