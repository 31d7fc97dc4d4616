/* protobuf.h - a minimal protobuf wire-format writer: varint, fixed64 and
 * length-delimited fields, with nested messages, into one growable buffer.
 * Enough for the Perfetto export; no schema, no reading. */
#ifndef DIAL9_DECODER_PROTOBUF_H
#define DIAL9_DECODER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#define D9_PB_DEPTH 8

struct d9_pb {
    uint8_t *buf;
    size_t n, cap;
    size_t open[D9_PB_DEPTH]; /* where each open message's payload starts */
    int depth;
    int failed; /* out of memory or nesting too deep: the buffer is unusable */
};

/* Field types; field numbers are 1..2^29-1. */
void d9_pb_varint(struct d9_pb *p, uint32_t field, uint64_t v);  /* uint*, enum, bool */
void d9_pb_int(struct d9_pb *p, uint32_t field, int64_t v);      /* int32 / int64 (not sint) */
void d9_pb_fixed64(struct d9_pb *p, uint32_t field, uint64_t v);
void d9_pb_bytes(struct d9_pb *p, uint32_t field, const void *data, size_t n);
void d9_pb_str(struct d9_pb *p, uint32_t field, const char *s);
/* A nested message: fields written between begin and end are its payload. */
void d9_pb_begin(struct d9_pb *p, uint32_t field);
void d9_pb_end(struct d9_pb *p);
/* Empties the buffer (keeps its memory); clears failed. */
void d9_pb_reset(struct d9_pb *p);
void d9_pb_free(struct d9_pb *p);

#endif
