/* Test programs' ground truth: per-call counts printed as a JSON object. */
#ifndef D9_TEST_CALL_COUNTS_H
#define D9_TEST_CALL_COUNTS_H

#include <stdio.h>

#include "dial9_format.h"

/* Prints "KEY":{"call":n,...} for the calls with a non-zero count; c has
 * D9_CALL_COUNT entries indexed by D9_CALL_*. */
static inline void print_counts(const char *key, const unsigned *c)
{
    printf("\"%s\":{", key);
    const char *sep = "";
    for (unsigned k = 1; k < D9_CALL_COUNT; k++)
        if (c[k]) {
            printf("%s\"%s\":%u", sep, d9_call_name(k), c[k]);
            sep = ",";
        }
    printf("}");
}

#endif
