/* check_main.c - runs every registered Check suite; exit 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

#define MAX_SUITES 64
static struct { const char *name; d9_suite_fn fn; } suites[MAX_SUITES];
static int nsuites;

void d9_unit_register(const char *name, d9_suite_fn fn)
{
    if (nsuites < MAX_SUITES)
        suites[nsuites++] = (typeof(suites[0])){name, fn};
}

int main(void)
{
    if (nsuites == 0) {
        fprintf(stderr, "check_dial9: no suites registered\n");
        return 1;
    }
    SRunner *sr = srunner_create(NULL);
    for (int i = 0; i < nsuites; i++)
        srunner_add_suite(sr, suites[i].fn(suite_create(suites[i].name)));
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
