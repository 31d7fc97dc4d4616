/* stream_boots.c - inputs recorded across a reboot. CLOCK_MONOTONIC starts
 * again at each boot, so the events of two boots would interleave in one
 * timeline. Each segment's header names its boot (the PROCESS record's boot
 * id) and anchors its clock to CLOCK_REALTIME (realtime - monotonic, read
 * when the segment opened): every boot's timestamps move onto the clock of
 * the earliest, by the difference of their anchors, so the boots follow
 * each other as they did on the wall clock. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_int.h"
#include "vec.h"

struct boot {
    const char *id;
    uint64_t off;  /* realtime - monotonic, ns: the least of its segments' (a clock step moves it) */
    size_t files;
};

/* The boot of f, NULL when its header does not say or has no anchor. */
static const char *boot_of(const struct sfile *f)
{
    const struct d9_seg *g = &f->seg;
    if (!g->has_identity || !g->identity.boot_id[0] || !g->anchor_real_ns || g->anchor_real_ns < g->anchor_mono_ns)
        return NULL;
    return g->identity.boot_id;
}

int d9s_align_boots(struct d9_stream *s)
{
    struct boot *b = NULL;
    size_t nb = 0, cap = 0;
    for (size_t i = 0; i < s->nf; i++) {
        const char *id = boot_of(&s->f[i]);
        if (!id)
            continue;
        uint64_t off = s->f[i].seg.anchor_real_ns - s->f[i].seg.anchor_mono_ns;
        size_t k = 0;
        while (k < nb && strcmp(b[k].id, id) != 0)
            k++;
        if (k == nb) {
            if (d9_grow((void **)&b, &cap, nb, sizeof(*b)) < 0) {
                free(b);
                return -1;
            }
            b[nb++] = (struct boot){id, off, 0};
        }
        b[k].off = off < b[k].off ? off : b[k].off;
        b[k].files++;
    }
    size_t first = 0;
    for (size_t k = 1; k < nb; k++)
        if (b[k].off < b[first].off)
            first = k;
    for (size_t k = 0; nb > 1 && k < nb; k++) {
        uint64_t shift = b[k].off - b[first].off;
        for (size_t i = 0; i < s->nf; i++) {
            const char *id = boot_of(&s->f[i]);
            if (id && strcmp(id, b[k].id) == 0)
                s->f[i].shift = shift;
        }
        if (k != first)
            fprintf(stderr,
                    "dial9-decode: boot %.8s (%zu segment%s): timestamps moved +%" PRIu64 ".%03" PRIu64
                    " s onto the clock of boot %.8s, the earliest of %zu boots (by the realtime anchors)\n",
                    b[k].id, b[k].files, b[k].files == 1 ? "" : "s", shift / 1000000000u, shift / 1000000u % 1000u,
                    b[first].id, nb);
    }
    free(b);
    return 0;
}
