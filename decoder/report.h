/* report.h - the one-line description of how a segment read went, shared
 * by `check` (stdout) and the loaders of `events`/`summary` (stderr). */
#ifndef DIAL9_DECODER_REPORT_H
#define DIAL9_DECODER_REPORT_H

#include <stdio.h>

#include "reader.h"

/* "OK path (N blocks, M events)", "DAMAGED path: block K at offset O:
 * reason; recovered X blocks, Y events, skipped Z bytes", "TRUNCATED ...",
 * or "path: <error>" for an input that is not a segment. With verbose, every
 * kept problem follows on its own indented line. Ends with a newline. */
void d9_report_segment(FILE *out, const char *path, const struct d9_seg *seg, int verbose);

#endif
