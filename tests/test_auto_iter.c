/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stopping rule of adaptive iterations on samples whose interval was
 * worked out by hand: mean, s = sqrt(SS / (n-1)), se = s / sqrt(n), and
 * Student's t(0.975, n-1) from a printed table (5: 2.570582, 7: 2.364624,
 * 1: 12.706205). */
#include <check.h>
#include <errno.h>
#include <math.h>

#include "auto_iter.h"

static const struct auto_iter_rule rule = { .min = 6, .max = 30, .target_ci_pct = 3 };

START_TEST(test_ci_noisy_six)
{
	/* mean 11, SS 10, s^2 2, se 0.577350; half 2.570582 * 0.577350 */
	const double x[] = { 10, 12, 11, 9, 13, 11 };
	struct auto_iter_ci ci;
	ck_assert_int_eq(auto_iter_ci(x, 6, &ci), 0);
	ck_assert_uint_eq(ci.n, 6);
	ck_assert_double_eq_tol(ci.mean, 11, 1e-12);
	ck_assert_double_eq_tol(ci.half_width, 1.484126, 1e-5);
	ck_assert_double_eq_tol(ci.pct, 13.49205, 1e-4);
	ck_assert(!auto_iter_within(&rule, &ci));
}
END_TEST

START_TEST(test_ci_quiet_eight)
{
	/* mean 100, SS 4, s^2 4/7, se 0.267261; half 2.364624 * 0.267261 */
	const double x[] = { 100, 101, 99, 100, 100, 101, 99, 100 };
	struct auto_iter_ci ci;
	ck_assert_int_eq(auto_iter_ci(x, 8, &ci), 0);
	ck_assert_double_eq_tol(ci.mean, 100, 1e-12);
	ck_assert_double_eq_tol(ci.half_width, 0.631971, 1e-5);
	ck_assert_double_eq_tol(ci.pct, 0.631971, 1e-5);
	ck_assert(auto_iter_within(&rule, &ci));
}
END_TEST

START_TEST(test_ci_two_values_and_negative_mean)
{
	/* n 2: mean 2, s sqrt(2), se 1, half t(0.975, 1) */
	const double x[] = { 1, 3 };
	struct auto_iter_ci ci;
	ck_assert_int_eq(auto_iter_ci(x, 2, &ci), 0);
	ck_assert_double_eq_tol(ci.half_width, 12.706205, 1e-5);
	ck_assert_double_eq_tol(ci.pct, 635.31025, 1e-3);
	/* the percentage is of |mean| */
	const double y[] = { -1, -3 };
	ck_assert_int_eq(auto_iter_ci(y, 2, &ci), 0);
	ck_assert_double_eq_tol(ci.mean, -2, 1e-12);
	ck_assert_double_eq_tol(ci.pct, 635.31025, 1e-3);
}
END_TEST

START_TEST(test_ci_edges)
{
	struct auto_iter_ci ci;
	const double same[] = { 5, 5, 5 };
	ck_assert_int_eq(auto_iter_ci(same, 3, &ci), 0);
	ck_assert_double_eq(ci.pct, 0);
	ck_assert(auto_iter_within(&rule, &ci));
	const double zero_mean[] = { -1, 1 };
	ck_assert_int_eq(auto_iter_ci(zero_mean, 2, &ci), 0);
	ck_assert(isinf(ci.pct));
	ck_assert(!auto_iter_within(&rule, &ci));
	ck_assert_int_eq(auto_iter_ci(same, 1, &ci), -EINVAL);
	const double bad[] = { 1, NAN, 2 };
	ck_assert_int_eq(auto_iter_ci(bad, 3, &ci), -EDOM);
}
END_TEST

START_TEST(test_within_at_the_target)
{
	struct auto_iter_ci ci = { .n = 6, .mean = 100, .half_width = 3, .pct = 3 };
	ck_assert(auto_iter_within(&rule, &ci));
	ci.pct = 3.0001;
	ck_assert(!auto_iter_within(&rule, &ci));
}
END_TEST

START_TEST(test_decide)
{
	/* below AUTO_MIN nothing stops it, converged or not */
	ck_assert_int_eq(auto_iter_decide(&rule, 5, 3, 3), AUTO_ITER_MORE);
	ck_assert_int_eq(auto_iter_decide(&rule, 5, 0, 0), AUTO_ITER_MORE);
	ck_assert_int_eq(auto_iter_decide(&rule, 6, 3, 3), AUTO_ITER_CONVERGED);
	ck_assert_int_eq(auto_iter_decide(&rule, 6, 3, 2), AUTO_ITER_MORE);
	ck_assert_int_eq(auto_iter_decide(&rule, 29, 3, 2), AUTO_ITER_MORE);
	ck_assert_int_eq(auto_iter_decide(&rule, 30, 3, 2), AUTO_ITER_CAPPED);
	ck_assert_int_eq(auto_iter_decide(&rule, 30, 3, 3), AUTO_ITER_CONVERGED);
	ck_assert_int_eq(auto_iter_decide(&rule, 6, 0, 0), AUTO_ITER_NO_DATA);
	ck_assert_str_eq(auto_iter_verdict_name(AUTO_ITER_CAPPED), "cap");
	ck_assert_str_eq(auto_iter_verdict_name(AUTO_ITER_CONVERGED), "converged");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("auto_iter");
	TCase *tc = tcase_create("rule");
	tcase_add_test(tc, test_ci_noisy_six);
	tcase_add_test(tc, test_ci_quiet_eight);
	tcase_add_test(tc, test_ci_two_values_and_negative_mean);
	tcase_add_test(tc, test_ci_edges);
	tcase_add_test(tc, test_within_at_the_target);
	tcase_add_test(tc, test_decide);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
