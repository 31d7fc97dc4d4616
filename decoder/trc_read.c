/* trc_read.c - the TRC v1 reader (trc_read.h) and `dial9-decode trc-dump`.
 * Written from SPEC.md alone, not from the writer, so that the export's
 * round trip through it checks the writer against the spec. */
#include "trc_read.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "vec.h"

#define MAX_DEPTH 32 /* nested dynamic containers: bounds recursion on hostile input */

/* d9_grow to any index n (it grows by one doubling per call). */
static int fit(void **v, size_t *cap, size_t n, size_t size)
{
    while (n >= *cap)
        if (d9_grow(v, cap, n, size) < 0)
            return -1;
    return 0;
}

struct cur {
    struct trc *t;
    const uint8_t *b;
    size_t len, pos;
    struct d9_map pending_stacks; /* PooledStackFrames ids used before their pool entry */
};

__attribute__((format(printf, 2, 3))) static int fail(struct cur *c, const char *fmt, ...)
{
    if (!c->t->err[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->t->err, sizeof(c->t->err), fmt, ap);
        va_end(ap);
        c->t->err_off = c->pos;
    }
    return -1;
}

static int need(struct cur *c, size_t n, const char *what)
{
    if (c->len - c->pos < n)
        return fail(c, "truncated: %s needs %zu bytes, %zu left", what, n, c->len - c->pos);
    return 0;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* An n-byte little-endian integer into *v. */
static int rd(struct cur *c, int n, uint64_t *v, const char *what)
{
    if (need(c, (size_t)n, what) < 0)
        return -1;
    *v = le(c->b + c->pos, n);
    c->pos += (size_t)n;
    return 0;
}

/* Unsigned LEB128: at most 10 bytes, and the 10th may only carry bit 63. */
static int rd_leb(struct cur *c, uint64_t *v, const char *what)
{
    uint64_t x = 0;
    for (int i = 0;; i++) {
        if (i == 10)
            return fail(c, "%s: LEB128 longer than 10 bytes", what);
        if (need(c, 1, what) < 0)
            return -1;
        uint8_t b = c->b[c->pos++];
        if (i == 9 && (b & 0x7e))
            return fail(c, "%s: LEB128 overflows u64", what);
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            break;
    }
    *v = x;
    return 0;
}

/* n bytes as a new NUL-terminated string. */
static char *rd_str(struct cur *c, size_t n, const char *what)
{
    if (need(c, n, what) < 0)
        return NULL;
    char *s = malloc(n + 1);
    if (!s) {
        fail(c, "out of memory");
        return NULL;
    }
    memcpy(s, c->b + c->pos, n);
    s[n] = 0;
    c->pos += n;
    return s;
}

static int valid_type(uint8_t t)
{
    uint8_t inner = t & 0x7f;
    return inner >= TRC_I64 && inner <= TRC_DYN_MAP;
}

static void schema_free(struct trc_schema *s)
{
    if (!s)
        return;
    for (uint16_t i = 0; i < s->nfields; i++)
        free(s->f[i].name);
    for (size_t i = 0; i < s->nann; i++) {
        free(s->ann[i].key);
        free(s->ann[i].value);
    }
    free(s->f);
    free(s->ann);
    free(s->name);
    free(s);
}

static int same_schema(const struct trc_schema *a, const struct trc_schema *b)
{
    if (strcmp(a->name, b->name) || a->has_ts != b->has_ts || a->nfields != b->nfields)
        return 0;
    for (uint16_t i = 0; i < a->nfields; i++)
        if (strcmp(a->f[i].name, b->f[i].name) || a->f[i].type != b->f[i].type)
            return 0;
    return 1;
}

static int schema_frame(struct cur *c)
{
    uint64_t id, n, ts, nf;
    if (rd(c, 2, &id, "schema type_id") < 0 || rd(c, 2, &n, "schema name_len") < 0)
        return -1;
    struct trc_schema *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(c, "out of memory");
    int rc = -1;
    if (!(s->name = rd_str(c, n, "schema name")) || rd(c, 1, &ts, "schema has_timestamp") < 0 ||
        rd(c, 2, &nf, "schema field_count") < 0)
        goto out;
    if (ts > 1) {
        fail(c, "schema %" PRIu64 " (%s): has_timestamp is %" PRIu64 ", not 0 or 1", id, s->name, ts);
        goto out;
    }
    s->has_ts = (int)ts;
    if (nf && !(s->f = calloc(nf, sizeof(*s->f)))) {
        fail(c, "out of memory");
        goto out;
    }
    s->nfields = (uint16_t)nf; /* the names are freed from here on, read or not */
    for (uint64_t i = 0; i < nf; i++) {
        struct trc_field *f = &s->f[i];
        uint64_t fl, ft;
        if (rd(c, 2, &fl, "field name_len") < 0 || !(f->name = rd_str(c, fl, "field name")) ||
            rd(c, 1, &ft, "field_type") < 0)
            goto out;
        f->type = (uint8_t)ft;
        if (!valid_type(f->type)) { /* its wire size is unknown: the spec says reject */
            fail(c, "schema %" PRIu64 " (%s): field %s has unknown type 0x%02x", id, s->name, f->name, f->type);
            goto out;
        }
    }
    struct trc_schema *old = c->t->schemas[id];
    if (old && !same_schema(old, s)) {
        fail(c, "type_id %" PRIu64 " registered again with a different schema (%s, then %s)", id, old->name, s->name);
        goto out;
    }
    if (!old) {
        c->t->schemas[id] = s;
        s = NULL;
    }
    rc = 0;
out:
    schema_free(s); /* a failed or duplicate (identical) one */
    return rc;
}

static int value(struct cur *c, uint8_t type, struct trc_value *v, int depth);

/* count items of a container: each one (tag, value), or for maps two. */
static int dynamic(struct cur *c, uint64_t count, int pairs, int depth)
{
    for (uint64_t i = 0; i < count * (pairs ? 2 : 1); i++) {
        uint64_t tag;
        struct trc_value x;
        if (rd(c, 1, &tag, "dynamic element tag") < 0)
            return -1;
        if (!valid_type((uint8_t)tag))
            return fail(c, "dynamic element with unknown type 0x%02" PRIx64, tag);
        if (value(c, (uint8_t)tag, &x, depth + 1) < 0)
            return -1;
    }
    return 0;
}

static int value(struct cur *c, uint8_t type, struct trc_value *v, int depth)
{
    memset(v, 0, sizeof(*v));
    v->type = type & 0x7f;
    if (depth > MAX_DEPTH)
        return fail(c, "dynamic containers nested deeper than %d", MAX_DEPTH);
    if (type & TRC_OPTIONAL) {
        uint64_t p;
        if (rd(c, 1, &p, "optional presence byte") < 0)
            return -1;
        if (p > 1)
            return fail(c, "optional presence byte 0x%02" PRIx64 ", not 0x00 or 0x01", p);
        if (!p)
            return 0;
    }
    v->present = 1;
    uint64_t n;
    size_t start;
    switch (v->type) {
    case TRC_I64:
        if (rd(c, 8, &v->u, "I64") < 0)
            return -1;
        v->i = (int64_t)v->u;
        return 0;
    case TRC_F64:
        if (rd(c, 8, &v->u, "F64") < 0)
            return -1;
        memcpy(&v->f, &v->u, sizeof(v->f));
        return 0;
    case TRC_BOOL:
        if (rd(c, 1, &v->u, "Bool") < 0)
            return -1;
        v->u = v->u != 0;
        return 0;
    case TRC_STRING:
    case TRC_BYTES:
        if (rd(c, 4, &n, "length") < 0 || need(c, n, v->type == TRC_STRING ? "String" : "Bytes") < 0)
            return -1;
        v->p = c->b + c->pos;
        v->len = n;
        c->pos += n;
        return 0;
    case TRC_POOLED_STACK: {
        uint32_t dummy;
        if (rd(c, 4, &v->u, "PooledStackFrames id") < 0)
            return -1;
        /* Lazy resolution is allowed: checked at the end of the stream. */
        if (!d9_map_get(&c->t->stacks, v->u, &dummy) && d9_map_put(&c->pending_stacks, v->u, (uint32_t)c->pos) < 0)
            return fail(c, "out of memory");
        return 0;
    }
    case TRC_POOLED_STRING: return rd(c, 4, &v->u, "PooledString id");
    case TRC_STACK:
        if (rd(c, 4, &v->u, "StackFrames count") < 0 || need(c, v->u * 8, "StackFrames addresses") < 0)
            return -1;
        v->p = c->b + c->pos;
        v->len = v->u * 8;
        c->pos += v->len;
        return 0;
    case TRC_VARINT: return rd_leb(c, &v->u, "Varint");
    case TRC_STRING_MAP:
        if (rd(c, 4, &v->u, "StringMap count") < 0)
            return -1;
        start = c->pos;
        for (uint64_t i = 0; i < v->u * 2; i++)
            if (rd(c, 4, &n, "StringMap length") < 0 || need(c, n, "StringMap bytes") < 0)
                return -1;
            else
                c->pos += n;
        v->p = c->b + start;
        v->len = c->pos - start;
        return 0;
    case TRC_U8: return rd(c, 1, &v->u, "U8");
    case TRC_U16: return rd(c, 2, &v->u, "U16");
    case TRC_U32: return rd(c, 4, &v->u, "U32");
    case TRC_DYN_LIST:
    case TRC_DYN_MAP:
        if (rd(c, 4, &v->u, "dynamic count") < 0)
            return -1;
        start = c->pos;
        if (dynamic(c, v->u, v->type == TRC_DYN_MAP, depth) < 0)
            return -1;
        v->p = c->b + start;
        v->len = c->pos - start;
        return 0;
    }
    return fail(c, "unknown field type 0x%02x", type);
}

static int event_frame(struct cur *c, struct trc_value **vals, size_t *cap, trc_event_fn fn, void *ctx)
{
    uint64_t id, delta;
    if (rd(c, 2, &id, "event type_id") < 0)
        return -1;
    const struct trc_schema *s = c->t->schemas[id];
    if (!s)
        return fail(c, "event of type_id %" PRIu64 " before any schema for it", id);
    struct trc_event e = {.type_id = (uint16_t)id, .schema = s, .has_ts = s->has_ts};
    if (s->has_ts) {
        if (rd(c, 3, &delta, "event timestamp_delta_ns") < 0)
            return -1;
        e.ts = c->t->ts_base + delta; /* the base then advances to it (SPEC "Timestamp Encoding") */
        c->t->ts_base = e.ts;
    }
    if (fit((void **)vals, cap, s->nfields, sizeof(**vals)) < 0)
        return fail(c, "out of memory");
    for (uint16_t i = 0; i < s->nfields; i++)
        if (value(c, s->f[i].type, &(*vals)[i], 0) < 0)
            return -1;
    e.v = *vals;
    c->t->events++;
    return fn ? fn(ctx, &e) : 0;
}

static int string_pool(struct cur *c)
{
    struct trc *t = c->t;
    uint64_t count, id, n;
    if (rd(c, 4, &count, "string pool count") < 0)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        char *s;
        if (rd(c, 4, &id, "pool_id") < 0 || rd(c, 4, &n, "pool data_len") < 0 || !(s = rd_str(c, n, "pool data")))
            return -1;
        if (d9_grow((void **)&t->str, &t->str_cap, t->nstr, sizeof(*t->str)) < 0 ||
            d9_grow((void **)&t->str_len, &t->str_len_cap, t->nstr, sizeof(*t->str_len)) < 0 ||
            d9_map_put(&t->strings, id, (uint32_t)t->nstr) < 0) {
            free(s);
            return fail(c, "out of memory");
        }
        t->str_len[t->nstr] = n;
        t->str[t->nstr++] = s; /* a redefinition: the newest wins, the old one stays owned */
    }
    return 0;
}

static int stack_pool(struct cur *c)
{
    uint64_t count, id, n;
    if (rd(c, 4, &count, "stack pool count") < 0)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        if (rd(c, 4, &id, "stack pool_id") < 0 || rd(c, 4, &n, "stack frame_count") < 0 ||
            need(c, n * 8, "stack frames") < 0)
            return -1;
        c->pos += n * 8;
        if (d9_map_put(&c->t->stacks, id, (uint32_t)n) < 0)
            return fail(c, "out of memory");
    }
    return 0;
}

static int annotations(struct cur *c)
{
    uint64_t id, count;
    if (rd_leb(c, &id, "annotations type_id") < 0 || rd(c, 2, &count, "annotations count") < 0)
        return -1;
    struct trc_schema *s = id < 65536 ? c->t->schemas[id] : NULL; /* unknown: skipped (SPEC allows) */
    for (uint64_t i = 0; i < count; i++) {
        uint64_t field, kl, vl;
        char *k = NULL, *v = NULL;
        if (rd(c, 2, &field, "annotation field_index") < 0 || rd(c, 2, &kl, "annotation key_len") < 0 ||
            !(k = rd_str(c, kl, "annotation key")) || rd(c, 4, &vl, "annotation value_len") < 0 ||
            !(v = rd_str(c, vl, "annotation value"))) {
            free(k);
            return -1;
        }
        if (s && field >= s->nfields) {
            free(k);
            free(v);
            return fail(c, "annotation of field %" PRIu64 " of %s, which has %u fields", field, s->name, s->nfields);
        }
        if (s && d9_grow((void **)&s->ann, &s->ann_cap, s->nann, sizeof(*s->ann)) < 0) {
            free(k);
            free(v);
            return fail(c, "out of memory");
        }
        if (s)
            s->ann[s->nann++] = (struct trc_annotation){(uint16_t)field, k, v};
        else {
            free(k);
            free(v);
        }
    }
    return 0;
}

int trc_parse(struct trc *t, const uint8_t *buf, size_t len, trc_event_fn fn, void *ctx)
{
    memset(t, 0, sizeof(*t));
    struct cur c = {.t = t, .b = buf, .len = len};
    struct trc_value *vals = NULL;
    size_t cap = 0;
    int rc = 0;
    if (!(t->schemas = calloc(65536, sizeof(*t->schemas))))
        return fail(&c, "out of memory");
    if (len < TRC_HEADER_LEN)
        rc = fail(&c, "truncated header: %zu of %d bytes", len, TRC_HEADER_LEN);
    else if (memcmp(buf, TRC_MAGIC, 4))
        rc = fail(&c, "not a TRC stream: bad magic bytes");
    else if (buf[4] != TRC_VERSION)
        rc = fail(&c, "unsupported version %u (this reader knows %d)", buf[4], TRC_VERSION);
    c.pos = TRC_HEADER_LEN;
    while (rc == 0 && c.pos < len) {
        uint8_t tag = buf[c.pos++];
        uint64_t ts = 0;
        t->frames++;
        switch (tag) {
        case TRC_SCHEMA: rc = schema_frame(&c); break;
        case TRC_EVENT: rc = event_frame(&c, &vals, &cap, fn, ctx); break;
        case TRC_STRING_POOL: rc = string_pool(&c); break;
        case TRC_STACK_POOL: rc = stack_pool(&c); break;
        case TRC_TS_RESET:
            if ((rc = rd(&c, 8, &ts, "timestamp reset")) == 0)
                t->ts_base = ts;
            break;
        case TRC_ANNOTATIONS: rc = annotations(&c); break;
        default:
            c.pos--;
            rc = fail(&c, "unknown frame tag 0x%02x: the stream cannot be advanced", tag);
        }
    }
    for (size_t i = 0; rc == 0 && i < c.pending_stacks.cap; i++) {
        uint32_t dummy;
        uint64_t id = c.pending_stacks.keys[i];
        if (c.pending_stacks.vals[i] && !d9_map_get(&t->stacks, id, &dummy)) {
            c.pos = c.pending_stacks.vals[i] - 1;
            rc = fail(&c, "PooledStackFrames id %" PRIu64 " is never defined", id);
        }
    }
    d9_map_free(&c.pending_stacks);
    free(vals);
    return rc;
}

void trc_free(struct trc *t)
{
    if (t->schemas)
        for (size_t i = 0; i < 65536; i++)
            schema_free(t->schemas[i]);
    free(t->schemas);
    for (size_t i = 0; i < t->nstr; i++)
        free(t->str[i]);
    free(t->str);
    free(t->str_len);
    d9_map_free(&t->strings);
    d9_map_free(&t->stacks);
    t->schemas = NULL;
    t->str = NULL;
    t->str_len = NULL;
    t->nstr = 0;
}

const char *trc_string(const struct trc *t, uint32_t id, size_t *len)
{
    uint32_t i;
    if (!d9_map_get(&t->strings, id, &i))
        return NULL;
    if (len)
        *len = t->str_len[i];
    return t->str[i];
}

int trc_map_entry(const struct trc_value *v, uint64_t i, const char **k, size_t *klen, const char **val,
                  size_t *vlen)
{
    if (v->type != TRC_STRING_MAP || !v->present || i >= v->u)
        return -1;
    const uint8_t *p = v->p;
    for (uint64_t j = 0;; j++) {
        *klen = (size_t)le(p, 4);
        *k = (const char *)p + 4;
        p += 4 + *klen;
        *vlen = (size_t)le(p, 4);
        *val = (const char *)p + 4;
        p += 4 + *vlen;
        if (j == i)
            return 0;
    }
}

const struct trc_value *trc_field(const struct trc_event *e, const char *name)
{
    for (uint16_t i = 0; i < e->schema->nfields; i++)
        if (!strcmp(e->schema->f[i].name, name))
            return &e->v[i];
    return NULL;
}

/* ---- trc-dump ---- */

struct dump {
    const struct trc *t;
    struct d9_jw w;
};

static int dump_event(void *ctx, const struct trc_event *e)
{
    struct dump *d = ctx;
    struct d9_jw *w = &d->w;
    d9_jw_obj(w, NULL);
    d9_jw_str(w, "type", e->schema->name);
    if (e->has_ts)
        d9_jw_u64(w, "ts", e->ts);
    else
        d9_jw_null(w, "ts");
    d9_jw_obj(w, "fields");
    for (uint16_t i = 0; i < e->schema->nfields; i++) {
        const char *k = e->schema->f[i].name;
        const struct trc_value *v = &e->v[i];
        const char *s;
        size_t n;
        if (!v->present) {
            d9_jw_null(w, k);
            continue;
        }
        switch (v->type) {
        case TRC_I64: d9_jw_i64(w, k, v->i); break;
        case TRC_F64: d9_jw_num(w, k, v->f); break;
        case TRC_BOOL: d9_jw_bool(w, k, (int)v->u); break;
        case TRC_STRING:
        case TRC_BYTES: d9_jw_strn(w, k, (const char *)v->p, v->len); break;
        case TRC_POOLED_STRING:
            if ((s = trc_string(d->t, (uint32_t)v->u, &n)))
                d9_jw_strn(w, k, s, n);
            else { /* defined later, or never: shown by id */
                d9_jw_obj(w, k);
                d9_jw_u64(w, "pool_id", v->u);
                d9_jw_end(w);
            }
            break;
        case TRC_STRING_MAP: {
            const char *mk, *mv;
            size_t kl, vl;
            char key[256];
            d9_jw_obj(w, k);
            for (uint64_t j = 0; trc_map_entry(v, j, &mk, &kl, &mv, &vl) == 0; j++) {
                snprintf(key, sizeof(key), "%.*s", (int)(kl < 255 ? kl : 255), mk);
                d9_jw_strn(w, key, mv, vl);
            }
            d9_jw_end(w);
            break;
        }
        case TRC_STACK:
            d9_jw_arr(w, k);
            for (uint64_t j = 0; j < v->u; j++)
                d9_jw_u64(w, NULL, le(v->p + 8 * j, 8));
            d9_jw_end(w);
            break;
        case TRC_DYN_LIST:
        case TRC_DYN_MAP:
            d9_jw_obj(w, k);
            d9_jw_u64(w, "count", v->u);
            d9_jw_end(w);
            break;
        default: d9_jw_u64(w, k, v->u); break; /* Varint, U8/16/32, PooledStackFrames id */
        }
    }
    d9_jw_end(w);
    d9_jw_end(w);
    fputc('\n', stdout);
    return ferror(stdout) ? 1 : 0;
}

/* The whole file (or stdin for "-"); NULL with errno. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (fit((void **)&b, &cap, n + 65536, 1) < 0) {
            errno = ENOMEM;
            break;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f) || errno == ENOMEM;
    if (f != stdin)
        fclose(f);
    if (bad) {
        free(b);
        return NULL;
    }
    *len = n;
    return b ? b : malloc(1);
}

int d9_cmd_trc_dump(int argc, char **argv)
{
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1])) {
        fprintf(stderr, "dial9-decode trc-dump: give one FILE (a TRC v1 trace, \"-\": stdin)\n"
                        "try 'dial9-decode --help'\n");
        return 2;
    }
    size_t len = 0;
    uint8_t *buf = slurp(argv[0], &len);
    if (!buf) {
        fprintf(stderr, "dial9-decode trc-dump: %s: %s\n", argv[0], strerror(errno));
        return 1;
    }
    struct trc *t = malloc(sizeof(*t));
    if (!t) {
        free(buf);
        fprintf(stderr, "dial9-decode trc-dump: out of memory\n");
        return 1;
    }
    struct dump d = {.t = t};
    d9_jw_init(&d.w, stdout);
    int rc = trc_parse(t, buf, len, dump_event, &d);
    if (rc < 0)
        fprintf(stderr, "dial9-decode trc-dump: %s: at byte %zu: %s\n", argv[0], t->err_off, t->err);
    else if (rc > 0 || fflush(stdout) != 0)
        fprintf(stderr, "dial9-decode trc-dump: stdout: write error\n");
    trc_free(t);
    free(t);
    free(buf);
    return rc ? 1 : 0;
}
