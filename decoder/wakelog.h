/* wakelog.h - every matched wake, in wake order, for a later pass that
 * needs a wake's result at the wake (events --json, export). Matches are
 * decided in unpark order: a reorder heap holds those of wakes newer than
 * the oldest wake still pending, the rest go to a temporary file in wake
 * order. The heap is bounded by D9_WAKELOG_HELD: past it the analysis gives
 * up on the oldest pending wake (its remaining candidates count as
 * unmatched), so memory does not grow with trace length. */
#ifndef DIAL9_DECODER_WAKELOG_H
#define DIAL9_DECODER_WAKELOG_H

#include <stddef.h>
#include <stdint.h>

#include "latency.h"

#define D9_WAKELOG_HELD (1u << 18) /* matches held for reordering: 14 MB */

struct d9_wakelog;

struct d9_wakelog *d9_wakelog_new(void);
void d9_wakelog_free(struct d9_wakelog *l);
/* A decided match. 0 ok, -1 out of memory. */
int d9_wakelog_add(struct d9_wakelog *l, const struct d9_wake *w);
/* Writes out the held matches of wakes before position oldest. 0, -1 write error. */
int d9_wakelog_flush(struct d9_wakelog *l, uint64_t oldest);
size_t d9_wakelog_held(const struct d9_wakelog *l);
/* Reading, from the start, in wake order (match order within a wake). */
int d9_wakelog_rewind(struct d9_wakelog *l);
/* The next match: 1, 0 at the end. */
int d9_wakelog_next(struct d9_wakelog *l, struct d9_wake *w);
/* Matches read (returned or passed over) so far. */
uint64_t d9_wakelog_read(const struct d9_wakelog *l);
/* The next match if it belongs to the wake at position ev (matches of
 * earlier wakes are passed over): 1, else 0. */
int d9_wakelog_next_of(struct d9_wakelog *l, uint64_t ev, struct d9_wake *w);

#endif
