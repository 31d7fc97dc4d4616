/* schema.h - the event schema as the decoder uses it: field kinds per type
 * (from a segment's SCHEMA TLV, or the built-in table when a header lacks
 * one) and field names (always the built-in table: the TLV carries none). */
#ifndef DIAL9_DECODER_SCHEMA_H
#define DIAL9_DECODER_SCHEMA_H

#include <stdint.h>

#include "dial9_format.h"

struct d9_schema {
    uint8_t present[256];             /* 1 if the type has an entry */
    uint8_t nfields[256];
    char kinds[256][D9_MAX_FIELDS];   /* 'u', 's', 'b' or 'r' (version 3+) */
};

/* Fills s with D9_SCHEMA_TABLE. */
void d9_schema_builtin(struct d9_schema *s);

/* Name of field i of a type: the built-in name, else "f<i>". Never NULL. */
const char *d9_field_name(unsigned type, unsigned i);

/* Names of an fd_kind (slow_syscall) and a sched_delay source; "unknown"
 * for values this decoder does not know. */
const char *d9_fd_kind_name(uint64_t kind);
const char *d9_sched_source_name(uint64_t source);

#endif
