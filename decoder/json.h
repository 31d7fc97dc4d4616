/* json.h - JSON output: string quoting and a small streaming writer that
 * places commas itself (the one JSON writer behind events, summary, verdict).
 * It writes with stdio's unlocked calls: only one thread may write to the
 * FILE it is given. */
#ifndef DIAL9_DECODER_JSON_H
#define DIAL9_DECODER_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s[0..n) as a quoted JSON string. Bytes that are not printable
 * ASCII (thread names are raw bytes) become \u00XX, so output stays valid. */
void d9_json_str(FILE *out, const char *s, size_t n);

#define D9_JW_DEPTH 16

/* Every call takes key: the member name inside an object, NULL inside an
 * array or at the top. */
struct d9_jw {
    FILE *out;
    int depth, newline;
    char close[D9_JW_DEPTH]; /* '}' or ']' per open level */
    uint8_t any[D9_JW_DEPTH]; /* the level has a member already */
};

void d9_jw_init(struct d9_jw *w, FILE *out);
void d9_jw_obj(struct d9_jw *w, const char *key);
void d9_jw_arr(struct d9_jw *w, const char *key);
void d9_jw_end(struct d9_jw *w); /* closes the innermost object or array */
void d9_jw_u64(struct d9_jw *w, const char *key, uint64_t v);
/* "pid": the pid of a process key (pidkey.h), and "pid_instance": n after it
 * for the n-th process with that pid (n >= 2; absent for the first). */
void d9_jw_pid(struct d9_jw *w, uint32_t key);
void d9_jw_i64(struct d9_jw *w, const char *key, int64_t v);
void d9_jw_num(struct d9_jw *w, const char *key, double v); /* 2 decimals */
void d9_jw_bool(struct d9_jw *w, const char *key, int v);
void d9_jw_null(struct d9_jw *w, const char *key);
void d9_jw_str(struct d9_jw *w, const char *key, const char *s); /* NULL -> null */
void d9_jw_strn(struct d9_jw *w, const char *key, const char *s, size_t n);
/* A newline before the next member: long arrays stay readable. */
void d9_jw_newline(struct d9_jw *w);

#endif
