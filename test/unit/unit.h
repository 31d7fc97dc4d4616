/* unit.h - Check suites register themselves; check_main.c runs them all.
 * In a test file:  D9_SUITE(ring) { TCase *tc = tcase_create("push"); ...; return s; }
 * where the body builds and returns the Suite *s (already created for you). */
#ifndef DIAL9_UNIT_H
#define DIAL9_UNIT_H
#include <check.h>

typedef Suite *(*d9_suite_fn)(Suite *s);
void d9_unit_register(const char *name, d9_suite_fn fn);

#define D9_SUITE(name)                                                         \
    static Suite *d9_suite_##name(Suite *s);                                   \
    __attribute__((constructor)) static void d9_reg_##name(void)               \
    {                                                                          \
        d9_unit_register(#name, d9_suite_##name);                              \
    }                                                                          \
    static Suite *d9_suite_##name(Suite *s)
#endif
