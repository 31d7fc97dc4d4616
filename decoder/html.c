/* html.c - see html.h. */
#include "html.h"

#include <string.h>

void d9_html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(c < 0x20 || c == 0x7f ? '?' : c, out); break;
        }
    }
}

void d9_html_shell_word(FILE *out, const char *s)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
    if (*s && strspn(s, plain) == strlen(s)) {
        d9_html_text(out, s);
        return;
    }
    fputs("&#39;", out);
    for (; *s; s++) {
        if (*s == '\'') {
            fputs("&#39;\\&#39;&#39;", out); /* ' -> '\'' */
            continue;
        }
        char one[2] = {*s, 0};
        d9_html_text(out, one);
    }
    fputs("&#39;", out);
}
