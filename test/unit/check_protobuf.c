/* check_protobuf.c - the protobuf writer's bytes against hand-encoded
 * wire format (protobuf.h). */
#include <string.h>

#include "protobuf.h"
#include "unit.h"

#define ASSERT_BYTES(pb, ...)                                                                                         \
    do {                                                                                                              \
        static const uint8_t want_[] = {__VA_ARGS__};                                                                 \
        ck_assert_uint_eq((pb)->n, sizeof(want_));                                                                    \
        ck_assert(memcmp((pb)->buf, want_, sizeof(want_)) == 0);                                                      \
    } while (0)

START_TEST(scalars)
{
    struct d9_pb pb = {0};
    d9_pb_varint(&pb, 1, 150);        /* the protobuf docs' example: 08 96 01 */
    d9_pb_int(&pb, 2, -1);            /* int64 -1: ten bytes */
    d9_pb_fixed64(&pb, 47, 0x0102030405060708ull);
    d9_pb_str(&pb, 23, "hi");
    ASSERT_BYTES(&pb, 0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                 0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0xba, 0x01, 0x02, 'h', 'i');
    ck_assert_int_eq(pb.failed, 0);
    d9_pb_free(&pb);
}
END_TEST

START_TEST(nested)
{
    struct d9_pb pb = {0};
    d9_pb_begin(&pb, 1);
    d9_pb_begin(&pb, 60);
    d9_pb_varint(&pb, 1, 5);
    d9_pb_end(&pb);
    d9_pb_end(&pb);
    ASSERT_BYTES(&pb, 0x0a, 0x05, 0xe2, 0x03, 0x02, 0x08, 0x05);
    /* A payload over 127 bytes gets a two-byte length. */
    d9_pb_reset(&pb);
    char s[200];
    memset(s, 'x', sizeof(s));
    d9_pb_begin(&pb, 1);
    d9_pb_bytes(&pb, 2, s, sizeof(s));
    d9_pb_end(&pb);
    ck_assert_uint_eq(pb.n, 2 + 3 + 200 + 1);
    ck_assert_uint_eq(pb.buf[0], 0x0a);
    ck_assert_uint_eq(pb.buf[1], (203 & 0x7f) | 0x80);
    ck_assert_uint_eq(pb.buf[2], 1);
    ck_assert_uint_eq(pb.buf[3], 0x12);
    d9_pb_free(&pb);
}
END_TEST

START_TEST(misuse)
{
    struct d9_pb pb = {0};
    d9_pb_end(&pb); /* nothing open */
    ck_assert_int_eq(pb.failed, 1);
    d9_pb_reset(&pb);
    for (int i = 0; i <= D9_PB_DEPTH; i++)
        d9_pb_begin(&pb, 1);
    ck_assert_int_eq(pb.failed, 1);
    d9_pb_free(&pb);
}
END_TEST

D9_SUITE(protobuf)
{
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, scalars);
    tcase_add_test(tc, nested);
    tcase_add_test(tc, misuse);
    suite_add_tcase(s, tc);
    return s;
}
