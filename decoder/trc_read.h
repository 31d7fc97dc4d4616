/* trc_read.h - a reader of the dial9 crate's trace format (`TRC\0` v1,
 * dial9-rs/dial9 dial9-trace-format/SPEC.md; see docs/EXPORT-DIAL9.md), the
 * format `dial9-decode export --format dial9` writes. It exists to check that
 * export against the spec, so it is strict: anything the spec calls invalid,
 * and anything it cannot size, stops the parse with an error and its offset.
 * The wire constants below are the spec's; the writer (export_dial9.c)
 * shares them and nothing else. */
#ifndef DIAL9_DECODER_TRC_READ_H
#define DIAL9_DECODER_TRC_READ_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"

/* SPEC.md "Header". */
#define TRC_MAGIC "TRC\0"
#define TRC_VERSION 1
#define TRC_HEADER_LEN 5

/* SPEC.md "Frames": the frame tags. */
enum { TRC_SCHEMA = 1, TRC_EVENT = 2, TRC_STRING_POOL = 3, TRC_STACK_POOL = 4, TRC_TS_RESET = 5,
       TRC_ANNOTATIONS = 6 };

/* SPEC.md "Field Types"; TRC_OPTIONAL is the "Optional Field Modifier". */
enum { TRC_I64 = 1, TRC_F64 = 2, TRC_BOOL = 3, TRC_STRING = 4, TRC_BYTES = 5, TRC_POOLED_STACK = 6,
       TRC_POOLED_STRING = 7, TRC_STACK = 8, TRC_VARINT = 9, TRC_STRING_MAP = 10, TRC_U8 = 11, TRC_U16 = 12,
       TRC_U32 = 13, TRC_DYN_LIST = 14, TRC_DYN_MAP = 15, TRC_OPTIONAL = 0x80 };

#define TRC_MAX_DELTA 16777215u /* u24: SPEC.md "Event Frame" */

struct trc_field {
    char *name;
    uint8_t type; /* as on the wire: the optional bit included */
};

struct trc_annotation {
    uint16_t field;
    char *key, *value;
};

struct trc_schema {
    char *name;
    int has_ts;
    uint16_t nfields;
    struct trc_field *f;
    struct trc_annotation *ann;
    size_t nann, ann_cap;
};

/* A decoded value. Integers (I64, Varint, U8/U16/U32, Bool, the pool ids of
 * PooledString/PooledStackFrames, and the counts of containers) are in u (i
 * for I64); F64 in f; String and Bytes: p, len (not NUL-terminated);
 * StackFrames, StringMap, DynamicList/Map: their encoded bytes after the
 * count in p, len, the count in u. present = 0: an absent optional field. */
struct trc_value {
    uint8_t type; /* inner type tag */
    uint8_t present;
    uint64_t u;
    int64_t i;
    double f;
    const uint8_t *p;
    size_t len;
};

struct trc_event {
    uint16_t type_id;
    const struct trc_schema *schema;
    int has_ts;
    uint64_t ts; /* absolute ns (base + delta) */
    const struct trc_value *v; /* schema->nfields values */
};

/* Stops the parse when it returns non-zero (that value is returned). */
typedef int (*trc_event_fn)(void *ctx, const struct trc_event *e);

struct trc {
    struct trc_schema **schemas; /* 65536, by type_id; NULL: not registered */
    struct d9_map strings;             /* pool_id -> index into str */
    char **str;
    size_t *str_len;
    size_t nstr, str_cap, str_len_cap;
    struct d9_map stacks; /* pool_id -> frame count (stack contents are only validated) */
    uint64_t ts_base;
    uint64_t frames, events;
    size_t err_off;
    char err[160];
};

/* Parses a whole stream, calling fn for each event frame in order. 0 ok; -1
 * invalid or truncated input (t->err says why, t->err_off where); otherwise
 * fn's non-zero return. t is zeroed first; trc_free it after, either way. */
int trc_parse(struct trc *t, const uint8_t *buf, size_t len, trc_event_fn fn, void *ctx);
void trc_free(struct trc *t);

/* The pooled string id, NULL when the pool has not defined it (yet). */
const char *trc_string(const struct trc *t, uint32_t id, size_t *len);
/* Entry i (from 0, in order) of a StringMap value: 0 and the four out
 * pointers set, -1 past the end. The value was validated by the parse. */
int trc_map_entry(const struct trc_value *v, uint64_t i, const char **k, size_t *klen, const char **val,
                  size_t *vlen);
/* The field named name of e's schema, or NULL. */
const struct trc_value *trc_field(const struct trc_event *e, const char *name);

/* `dial9-decode trc-dump FILE`: each event as a JSON Lines object
 * {"type":NAME,"ts":NS|null,"fields":{...}} with pooled strings resolved;
 * exit 0, 1 unreadable or invalid (reported on stderr), 2 usage error. */
int d9_cmd_trc_dump(int argc, char **argv);

#endif
