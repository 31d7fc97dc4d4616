/* segment.h - the files: DIAL9_DIR/<exe>.<pid>/NNNNNN.d9.open while being
 * written, renamed NNNNNN.d9 when sealed; retention by total size.
 * Used by the writer thread only (and by init/fork handlers before it runs). */
#ifndef DIAL9_SEGMENT_H
#define DIAL9_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Creates DIAL9_DIR (mkdir -p, 0700) and checks it is ours; caches
 * exe/cmdline/hostname. This process's directory (0700) is created with
 * its first segment. 0, or -1 after logging one line. */
int d9_seg_init(const struct d9_config *c);
const char *d9_seg_dir_path(void); /* the process directory (maybe not yet created) */

/* Opens the next segment and writes its header (THREADS = live slots).
 * 0, or -1 after logging; after any failure the segment layer stays failed. */
int d9_seg_open(void);
int d9_seg_write(const void *buf, size_t len); /* whole buffer or -1 (logged once) */
void d9_seg_seal(void);                        /* rename to .d9, apply retention */
int d9_seg_failed(void);
int d9_seg_is_open(void);
uint64_t d9_seg_size(void);      /* bytes in the open segment */
uint64_t d9_seg_opened_ns(void); /* CLOCK_MONOTONIC ns when it was opened */

/* In a forked child: forget the parent's open file and directory without
 * touching them; the child's directory is created by the next d9_seg_open. */
void d9_seg_after_fork_child(void);

#endif
