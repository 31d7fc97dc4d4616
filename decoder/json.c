/* json.c - see json.h. Output goes through stdio's unlocked calls: only
 * the thread that runs the command writes its output (the decode threads
 * of stream_ahead.c never print), yet with two threads in the process each
 * locked call takes and releases the FILE's lock. Integers are formatted
 * here, not by fprintf, which parses its format on every number. */
#include "json.h"

#include <string.h>

#include "pidkey.h"

/* s[0..n) to out. With glibc, a run that fits the FILE's buffer is copied
 * straight into it, under the test putc_unlocked makes for one byte (a
 * line-buffered or unbuffered stream never passes it: its write end stays
 * at the buffer's start). fwrite_unlocked is a call through
 * _IO_file_xsputn and its checks per run; those calls were a third of
 * `events --json`'s time (docs/BENCH-HISTORY.md, session 23). */
static inline void put_n(FILE *out, const char *s, size_t n)
{
#ifdef __GLIBC__
    if (out->_IO_write_end - out->_IO_write_ptr >= (ptrdiff_t)n) {
        memcpy(out->_IO_write_ptr, s, n);
        out->_IO_write_ptr += n;
        return;
    }
#endif
    fwrite_unlocked(s, 1, n, out);
}

/* v in decimal, after a '-' when negative: at most 20 digits, or 19 and
 * the sign (the magnitude of INT64_MIN). Two digits a division: a
 * timestamp has 19. */
static void put_u64(FILE *out, uint64_t v, int negative)
{
    static const char pairs[] = "0001020304050607080910111213141516171819"
                                "2021222324252627282930313233343536373839"
                                "4041424344454647484950515253545556575859"
                                "6061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char buf[21], *end = buf + sizeof(buf), *p = end;
    while (v >= 100) {
        p -= 2;
        memcpy(p, pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    if (negative)
        *--p = '-';
    put_n(out, p, (size_t)(end - p));
}

/* Runs of characters that need no escape go out in one put_n: a call
 * per character was a quarter of `events --json`. */
void d9_json_str(FILE *out, const char *s, size_t n)
{
    putc_unlocked('"', out);
    size_t plain = 0; /* the start of the run not written yet */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20 && c < 0x7f)
            continue;
        put_n(out, s + plain, i - plain);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else
            fprintf(out, "\\u%04x", c);
        plain = i + 1;
    }
    put_n(out, s + plain, n - plain);
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

void d9_jw_pid(struct d9_jw *w, uint32_t key)
{
    d9_jw_u64(w, "pid", d9_pid_of(key));
    if (d9_pid_instance(key) > 1)
        d9_jw_u64(w, "pid_instance", d9_pid_instance(key));
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
