/* json.c - see json.h. Output goes through stdio's unlocked calls: only
 * the thread that runs the command writes its output (the decode threads
 * of stream_ahead.c never print), yet with two threads in the process each
 * locked call takes and releases the FILE's lock. Integers are formatted
 * here, not by fprintf, which parses its format on every number. */
#include "json.h"

#include <string.h>

/* v in decimal, after a '-' when negative: at most 20 digits, or 19 and
 * the sign (the magnitude of INT64_MIN). */
static void put_u64(FILE *out, uint64_t v, int negative)
{
    char buf[21], *end = buf + sizeof(buf), *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (negative)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(end - p), out);
}

/* Runs of characters that need no escape go out in one fwrite: a call
 * per character was a quarter of `events --json`. */
void d9_json_str(FILE *out, const char *s, size_t n)
{
    putc_unlocked('"', out);
    size_t plain = 0; /* the start of the run not written yet */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20 && c < 0x7f)
            continue;
        fwrite_unlocked(s + plain, 1, i - plain, out);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else
            fprintf(out, "\\u%04x", c);
        plain = i + 1;
    }
    fwrite_unlocked(s + plain, 1, n - plain, out);
    putc_unlocked('"', out);
}

void d9_jw_init(struct d9_jw *w, FILE *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
}

/* Comma and key before a member. */
static void member(struct d9_jw *w, const char *key)
{
    if (w->depth > 0 && w->depth <= D9_JW_DEPTH) {
        if (w->any[w->depth - 1])
            putc_unlocked(',', w->out);
        w->any[w->depth - 1] = 1;
    }
    if (w->newline)
        putc_unlocked('\n', w->out);
    w->newline = 0;
    if (key) {
        d9_json_str(w->out, key, strlen(key));
        putc_unlocked(':', w->out);
    }
}

static void jw_open(struct d9_jw *w, const char *key, char o, char c)
{
    member(w, key);
    putc_unlocked(o, w->out);
    if (w->depth < D9_JW_DEPTH) {
        w->close[w->depth] = c;
        w->any[w->depth] = 0;
    }
    w->depth++;
}

void d9_jw_obj(struct d9_jw *w, const char *key) { jw_open(w, key, '{', '}'); }
void d9_jw_arr(struct d9_jw *w, const char *key) { jw_open(w, key, '[', ']'); }

void d9_jw_end(struct d9_jw *w)
{
    if (w->depth <= 0)
        return;
    w->depth--;
    putc_unlocked(w->depth < D9_JW_DEPTH ? w->close[w->depth] : '}', w->out);
}

void d9_jw_u64(struct d9_jw *w, const char *key, uint64_t v)
{
    member(w, key);
    put_u64(w->out, v, 0);
}

void d9_jw_i64(struct d9_jw *w, const char *key, int64_t v)
{
    member(w, key);
    put_u64(w->out, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}

void d9_jw_num(struct d9_jw *w, const char *key, double v)
{
    member(w, key);
    fprintf(w->out, "%.2f", v);
}

void d9_jw_bool(struct d9_jw *w, const char *key, int v)
{
    member(w, key);
    fputs_unlocked(v ? "true" : "false", w->out);
}

void d9_jw_null(struct d9_jw *w, const char *key)
{
    member(w, key);
    fputs_unlocked("null", w->out);
}

void d9_jw_strn(struct d9_jw *w, const char *key, const char *s, size_t n)
{
    member(w, key);
    d9_json_str(w->out, s, n);
}

void d9_jw_str(struct d9_jw *w, const char *key, const char *s)
{
    if (s)
        d9_jw_strn(w, key, s, strlen(s));
    else
        d9_jw_null(w, key);
}

void d9_jw_newline(struct d9_jw *w) { w->newline = 1; }
