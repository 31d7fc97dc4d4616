/* html.h - text into HTML and SVG: escaping for element text and quoted
 * attribute values alike, and shell quoting for command lines shown in a
 * page (the report's export commands). */
#ifndef DIAL9_DECODER_HTML_H
#define DIAL9_DECODER_HTML_H

#include <stdio.h>

/* Writes s with & < > " ' escaped; control bytes become '?' (thread names
 * and paths are arbitrary bytes, and a page must stay well-formed). */
void d9_html_text(FILE *out, const char *s);
/* Writes s as one shell word (single-quoted unless it is plain), escaped
 * for HTML. */
void d9_html_shell_word(FILE *out, const char *s);

#endif
