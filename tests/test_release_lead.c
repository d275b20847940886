// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * release_lead: how the lead of a scheduled release learns (issue 21):
 * from a late go, from a need that comes close before any go is late,
 * shrinking when neither, capped, and never overflowing.
 */
#include <check.h>
#include <stdint.h>

#include "release_lead.h"
#include "testlib.h"

#define US 1000LL

START_TEST(test_shrinks_when_nothing_came_close)
{
	ck_assert_int_eq(release_lead_learn(3200 * US, 0, 0), 3200 * US - 100 * US);
	/* a need under two thirds of the lead does not hold it up */
	ck_assert_int_eq(release_lead_learn(3200 * US, 0, 1000 * US), 3100 * US);
}
END_TEST

START_TEST(test_late_go_grows_by_its_lateness)
{
	ck_assert_int_eq(release_lead_learn(300 * US, 200 * US, 0),
			 300 * US + 200 * US + RELEASE_LEAD_MARGIN_NS);
	/* a need known too: the larger of the two */
	ck_assert_int_eq(release_lead_learn(300 * US, 200 * US, 500 * US),
			 750 * US + RELEASE_LEAD_MARGIN_NS);
	ck_assert_int_eq(release_lead_learn(300 * US, 600 * US, 500 * US),
			 900 * US + RELEASE_LEAD_MARGIN_NS);
}
END_TEST

/* The go reached every child in time, but the last with little to spare:
 * grown before a go is late. */
START_TEST(test_close_need_grows_first)
{
	ck_assert_int_eq(release_lead_learn(300 * US, 0, 250 * US), 375 * US + RELEASE_LEAD_MARGIN_NS);
	/* just under the lead it would be without shrinking */
	ck_assert_int_eq(release_lead_learn(425 * US, 0, 250 * US), 425 * US - 425 * US / 32);
	ck_assert_int_eq(release_lead_learn(424 * US, 0, 250 * US), 425 * US);
}
END_TEST

START_TEST(test_capped_without_overflow)
{
	ck_assert_int_eq(release_lead_learn(INT64_MAX, INT64_MAX, INT64_MAX), RELEASE_LEAD_MAX_NS);
	ck_assert_int_eq(release_lead_learn(RELEASE_LEAD_MAX_NS, 1, 0), RELEASE_LEAD_MAX_NS);
	ck_assert_int_eq(release_lead_learn(0, 0, INT64_MAX), RELEASE_LEAD_MAX_NS);
	/* nonsense in reads as nothing */
	ck_assert_int_eq(release_lead_learn(-5, -5, -5), 0);
	ck_assert_int_eq(release_lead_learn(320 * US, INT64_MIN, INT64_MIN), 310 * US);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("release_lead");
	TCase *tc = tcase_create("release_lead");

	tcase_add_test(tc, test_shrinks_when_nothing_came_close);
	tcase_add_test(tc, test_late_go_grows_by_its_lateness);
	tcase_add_test(tc, test_close_need_grows_first);
	tcase_add_test(tc, test_capped_without_overflow);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
