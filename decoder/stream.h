/* stream.h - every event of every input, merged in time order, without
 * holding the trace in memory. Opening reads each segment's header (into
 * the model: processes, thread tables) and indexes its blocks (scan of the
 * block headers and payload crcs, resync on damage; the file's pages are
 * dropped as the scan passes). A pass then decodes blocks lazily in
 * first_ts order (pread of one block at a time, up to three blocks ahead
 * of the merge: on a second thread, and on the caller's when it would
 * otherwise wait): a block is taken when the merge point reaches its
 * first_ts, and its events are merged through a heap of per-thread runs
 * ordered by (ts, pid, tid, input order). Memory: the index (one entry per
 * block) plus the events of the blocks that overlap the merge point in
 * time (about writer flush interval x rate) and of those decoded ahead,
 * not the trace length. Each pass decodes again. */
#ifndef DIAL9_DECODER_STREAM_H
#define DIAL9_DECODER_STREAM_H

#include <stdint.h>

#include "reader.h"

struct d9_model;
struct d9_stream;

/* Opens the inputs under paths. Inputs found damaged, truncated, unreadable
 * or not segments get one stderr line now and count in *bad; damage found
 * while decoding (a block that does not inflate or parse) is reported when
 * the first pass ends, and counted then in *bad (which must outlive s).
 * 0 ok, -1 out of memory. */
int d9_stream_open(struct d9_stream **s, struct d9_model *m, char *const *paths, int npaths, int *bad);
/* The next events in time order, ev[0..*n) (*n >= 1, all of one thread:
 * a span of one run), valid until the next call: 1, 0 at the end (the pass is over: the next call starts a new
 * one), -1 out of memory. */
int d9_stream_next(struct d9_stream *s, const struct d9_event **ev, size_t *n);
/* Ends the current pass early (the next d9_stream_next starts a new one). */
void d9_stream_stop(struct d9_stream *s);
/* ts of the first / last event by the block headers (0 when none). */
uint64_t d9_stream_first_ts(const struct d9_stream *s);
uint64_t d9_stream_last_ts(const struct d9_stream *s);
/* Progress on stderr (when a terminal, after a second): passes expected. */
void d9_stream_set_passes(struct d9_stream *s, int passes);
void d9_stream_close(struct d9_stream *s);

#endif
