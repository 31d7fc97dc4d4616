/* json.h - JSON string output. */
#ifndef DIAL9_DECODER_JSON_H
#define DIAL9_DECODER_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) as a quoted JSON string. Bytes that are not printable
 * ASCII (thread names are raw bytes) become \u00XX, so output stays valid. */
void d9_json_str(FILE *out, const char *s, size_t n);

#endif
