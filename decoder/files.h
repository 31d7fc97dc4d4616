/* files.h - turns command-line paths into segment files (directories are
 * walked recursively for *.d9 and *.d9.open, in version order) and reads
 * each one into memory. */
#ifndef DIAL9_DECODER_FILES_H
#define DIAL9_DECODER_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Called per file with its bytes; a non-zero return stops the walk. */
typedef int (*d9_file_fn)(void *ctx, const char *path, const uint8_t *buf, size_t len);

/* Walks paths in order. Paths that do not exist, unreadable files and
 * directories holding no segment get a one-line error on stderr and count
 * in *errors. Returns 0, or fn's non-zero return, or -1 out of memory. */
int d9_for_each_file(char *const *paths, int npaths, d9_file_fn fn, void *ctx, int *errors);

#endif
