/* check_crc.c - CRC-32C: the standard check value, and the SSE4.2 path
 * agreeing with the bitwise reference at every length and alignment. */
#include <stdint.h>
#include <stdlib.h>

#include "dial9_format.h"
#include "unit.h"

START_TEST(known_value)
{
    ck_assert_uint_eq(d9_crc32c(0, "123456789", 9), 0xe3069283u);
    ck_assert_uint_eq(d9_crc32c_sw(0, "123456789", 9), 0xe3069283u);
    /* chaining equals one call over the whole buffer */
    ck_assert_uint_eq(d9_crc32c(d9_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}
END_TEST

START_TEST(hw_matches_sw)
{
    uint8_t buf[300];
    srand(9);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rand();
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len + off <= sizeof(buf); len += 7)
            ck_assert_uint_eq(d9_crc32c(5, buf + off, len), d9_crc32c_sw(5, buf + off, len));
}
END_TEST

D9_SUITE(crc)
{
    TCase *tc = tcase_create("crc32c");
    tcase_add_test(tc, known_value);
    tcase_add_test(tc, hw_matches_sw);
    suite_add_tcase(s, tc);
    return s;
}
