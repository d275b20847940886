/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <check.h>
#include <stdlib.h>

#include "clock_offset.h"

START_TEST(test_symmetric_exchange)
{
	struct clock_offset c = { 0 };
	/* guest runs 1000 ns ahead; 100 ns each way, 50 ns inside the guest */
	ck_assert(clock_offset_add(&c, 0, 1100, 1150, 250));
	ck_assert_int_eq(c.offset_ns, 1000);
	ck_assert_int_eq(c.bound_ns, 100);
	ck_assert_int_eq(clock_offset_to_host(&c, 5000), 4000);
}
END_TEST

START_TEST(test_best_exchange_kept)
{
	struct clock_offset c = { 0 };
	/* an asymmetric slow exchange: 900 out, 100 back; true offset 0 */
	ck_assert(clock_offset_add(&c, 0, 900, 900, 1000));
	ck_assert_int_eq(c.offset_ns, 400);
	ck_assert_int_eq(c.bound_ns, 500);
	/* the true offset is within the bound */
	ck_assert_int_le(c.offset_ns - 0, c.bound_ns);
	/* a faster one replaces it */
	ck_assert(clock_offset_add(&c, 2000, 2010, 2010, 2030));
	ck_assert_int_eq(c.offset_ns, -5);
	ck_assert_int_eq(c.bound_ns, 15);
	/* a slower one does not */
	ck_assert(clock_offset_add(&c, 3000, 3500, 3500, 3600));
	ck_assert_int_eq(c.bound_ns, 15);
	ck_assert_uint_eq(c.samples, 3);
}
END_TEST

START_TEST(test_impossible_stamps_refused)
{
	struct clock_offset c = { 0 };
	ck_assert(!clock_offset_add(&c, 100, 0, 0, 50));   /* t4 before t1 */
	ck_assert(!clock_offset_add(&c, 0, 10, 5, 50));    /* t3 before t2 */
	ck_assert(!clock_offset_add(&c, 0, 0, 100, 50));   /* held longer than the trip */
	ck_assert_uint_eq(c.samples, 0);
}
END_TEST

START_TEST(test_large_instants)
{
	struct clock_offset c = { 0 };
	int64_t big = INT64_MAX / 2;
	ck_assert(clock_offset_add(&c, big, big + 10, big + 20, big + 30));
	ck_assert_int_eq(c.offset_ns, 0);
	ck_assert_int_eq(c.bound_ns, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock-offset");
	TCase *tc = tcase_create("cristian");
	tcase_add_test(tc, test_symmetric_exchange);
	tcase_add_test(tc, test_best_exchange_kept);
	tcase_add_test(tc, test_impossible_stamps_refused);
	tcase_add_test(tc, test_large_instants);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
