/* files.h - turns command-line paths into segment files (directories are
 * walked recursively for *.d9 and *.d9.open, in version order) and maps
 * them read-only (file pages: what was read can be dropped from RSS). */
#ifndef DIAL9_DECODER_FILES_H
#define DIAL9_DECODER_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Called per file with its (mapped) bytes; a non-zero return stops the walk. */
typedef int (*d9_file_fn)(void *ctx, const char *path, const uint8_t *buf, size_t len);

/* Walks paths in order. Paths that do not exist, unreadable files and
 * directories holding no segment get a one-line error on stderr and count
 * in *errors. A file reached by more than one path (a directory and a
 * segment in it, a path given twice, a link) is read once, at its first
 * place, with a line on stderr (not an error). errors NULL: no line at all
 * (a second walk of paths a first one reported on). Returns 0, or fn's
 * non-zero return, or -1 out of memory. */
int d9_for_each_file(char *const *paths, int npaths, d9_file_fn fn, void *ctx, int *errors);

/* The segment files under paths, in order (free with d9_free_files); errors
 * as for d9_for_each_file. 0 ok, -1 out of memory. */
int d9_list_files(char *const *paths, int npaths, char ***files, size_t *n, int *errors);
void d9_free_files(char **files, size_t n);

/* Maps path read-only (an empty file: len 0). 0 ok, -1 errno set. */
int d9_map_file(const char *path, const uint8_t **buf, size_t *len);
void d9_unmap_file(const uint8_t *buf, size_t len);
/* Drops the mapped pages of buf[*done..upto) from RSS (re-read if touched
 * again) once they make D9_DROP_STEP bytes or more, and moves *done past
 * them: a scan that calls it per block holds at most a step and a block of
 * the file, with one madvise per step, not per block (each madvise of a
 * threaded process is a TLB flush on every CPU it runs on). */
#define D9_DROP_STEP (1u << 20)
void d9_drop_pages(const uint8_t *buf, size_t *done, size_t upto);

#endif
