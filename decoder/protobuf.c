/* protobuf.c - see protobuf.h. A nested message's length prefix is only
 * known at its end: the payload is then moved right by the prefix's size
 * (messages here are small, so the move is cheap). */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "dial9_format.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static int room(struct d9_pb *p, size_t more)
{
    if (p->failed)
        return 0;
    if (p->n + more <= p->cap)
        return 1;
    size_t cap = p->cap ? p->cap : 256;
    while (cap < p->n + more)
        cap *= 2;
    uint8_t *b = realloc(p->buf, cap);
    if (!b) {
        p->failed = 1;
        return 0;
    }
    p->buf = b;
    p->cap = cap;
    return 1;
}

static void put_varint(struct d9_pb *p, uint64_t v)
{
    if (room(p, 10))
        p->n += d9_put_varint(p->buf + p->n, v);
}

static void tag(struct d9_pb *p, uint32_t field, unsigned wt) { put_varint(p, (uint64_t)field << 3 | wt); }

void d9_pb_varint(struct d9_pb *p, uint32_t field, uint64_t v)
{
    tag(p, field, WT_VARINT);
    put_varint(p, v);
}

void d9_pb_int(struct d9_pb *p, uint32_t field, int64_t v) { d9_pb_varint(p, field, (uint64_t)v); }

void d9_pb_fixed64(struct d9_pb *p, uint32_t field, uint64_t v)
{
    tag(p, field, WT_I64);
    if (!room(p, 8))
        return;
    for (int i = 0; i < 8; i++)
        p->buf[p->n++] = (uint8_t)(v >> (8 * i));
}

void d9_pb_bytes(struct d9_pb *p, uint32_t field, const void *data, size_t n)
{
    tag(p, field, WT_LEN);
    put_varint(p, n);
    if (n && room(p, n)) {
        memcpy(p->buf + p->n, data, n);
        p->n += n;
    }
}

void d9_pb_str(struct d9_pb *p, uint32_t field, const char *s) { d9_pb_bytes(p, field, s, strlen(s)); }

void d9_pb_begin(struct d9_pb *p, uint32_t field)
{
    if (p->depth == D9_PB_DEPTH) {
        p->failed = 1;
        return;
    }
    tag(p, field, WT_LEN);
    p->open[p->depth++] = p->n;
}

void d9_pb_end(struct d9_pb *p)
{
    if (p->depth == 0) {
        p->failed = 1;
        return;
    }
    size_t start = p->open[--p->depth];
    uint8_t len[10];
    size_t k = d9_put_varint(len, p->n - start);
    if (!room(p, k))
        return;
    memmove(p->buf + start + k, p->buf + start, p->n - start);
    memcpy(p->buf + start, len, k);
    p->n += k;
}

void d9_pb_reset(struct d9_pb *p)
{
    p->n = 0;
    p->depth = 0;
    p->failed = 0;
}

void d9_pb_free(struct d9_pb *p)
{
    free(p->buf);
    memset(p, 0, sizeof(*p));
}
