/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <check.h>
#include <stdlib.h>

#include "clock_offset.h"

#define MS 1000000LL
#define SEC 1000000000LL

START_TEST(test_symmetric_exchange)
{
	struct clock_offset c = { 0 };
	/* guest runs 1000 ns ahead; 100 ns each way, 50 ns inside the guest */
	ck_assert(clock_offset_add(&c, 0, 1100, 1150, 250));
	ck_assert_int_eq(c.offset_ns, 1000);
	ck_assert_int_eq(c.bound_ns, 100);
	ck_assert_int_eq(clock_offset_to_host(&c, 5000), 4000);
	ck_assert_int_eq(clock_offset_to_guest(&c, 4000), 5000);
}
END_TEST

START_TEST(test_good_exchanges_only)
{
	struct clock_offset c = { 0 };
	/* an asymmetric slow exchange: 900 us out, 100 us back; true offset 0 */
	ck_assert(clock_offset_add(&c, 0, 900000, 900000, 1000000));
	ck_assert_int_eq(c.offset_ns, 400000);
	ck_assert_int_eq(c.bound_ns, 500000);
	/* fast ones push it out: the estimate comes from them alone */
	ck_assert(clock_offset_add(&c, 2 * MS, 2 * MS + 10000, 2 * MS + 10000, 2 * MS + 30000));
	ck_assert(clock_offset_add(&c, 3 * MS, 3 * MS + 10000, 3 * MS + 10000, 3 * MS + 20000));
	ck_assert_int_le(llabs(c.offset_ns), 10000);
	ck_assert_int_le(c.bound_ns, 20000);
	/* the true offset (0) is within the bound */
	ck_assert_int_le(llabs(clock_offset_at(&c, 3 * MS)), c.bound_ns);
	ck_assert_uint_eq(c.samples, 3);
}
END_TEST

/* A guest clock 5 ms ahead and drifting +100 ppm, seen through 200 us
 * exchanges with jitter: the fit finds the drift, and converting an instant
 * minutes later stays within the stated bound. */
START_TEST(test_drift_followed)
{
	struct clock_offset c = { 0 };
	const int64_t off0 = 5 * MS;
	const double ppm = 100e-6;
	unsigned seed = 7;
	for (int i = 0; i < 40; i++) {
		int64_t t1 = (int64_t)i * 3 * SEC;
		int64_t out = 100000 + rand_r(&seed) % 30000, back = 100000 + rand_r(&seed) % 30000;
		int64_t t2_host = t1 + out, t3_host = t2_host + 5000;
		int64_t t2 = t2_host + off0 + (int64_t)(ppm * (double)t2_host);
		int64_t t3 = t3_host + off0 + (int64_t)(ppm * (double)t3_host);
		ck_assert(clock_offset_add(&c, t1, t2, t3, t3_host + back));
	}
	ck_assert_double_eq_tol(c.drift, ppm, 2e-6);
	int64_t when = 130 * SEC;
	int64_t truth = off0 + (int64_t)(ppm * (double)when);
	ck_assert_int_le(llabs(clock_offset_at(&c, when) - truth), c.bound_ns);
	ck_assert_int_lt(c.bound_ns, 200000);
	/* round trip of an instant */
	int64_t g = clock_offset_to_guest(&c, when);
	ck_assert_int_le(llabs(clock_offset_to_host(&c, g) - when), 1);
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

START_TEST(test_window_forgets)
{
	struct clock_offset c = { 0 };
	/* one excellent exchange long ago, then a clock step of +1 ms: once
	 * the old exchange left the window, only the new offset counts */
	ck_assert(clock_offset_add(&c, 0, 5, 5, 10));
	for (int i = 1; i <= CLOCK_OFFSET_WINDOW; i++) {
		int64_t t1 = i * MS;
		ck_assert(clock_offset_add(&c, t1, t1 + MS + 50000, t1 + MS + 50000, t1 + 100000));
	}
	ck_assert_int_le(llabs(c.offset_ns - MS), 1000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock-offset");
	TCase *tc = tcase_create("cristian");
	tcase_add_test(tc, test_symmetric_exchange);
	tcase_add_test(tc, test_good_exchanges_only);
	tcase_add_test(tc, test_drift_followed);
	tcase_add_test(tc, test_impossible_stamps_refused);
	tcase_add_test(tc, test_large_instants);
	tcase_add_test(tc, test_window_forgets);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
