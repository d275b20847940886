// SPDX-License-Identifier: GPL-2.0-or-later
/* The stopping rule of adaptive iterations on samples whose interval was
 * worked out by hand: the median, and the order-statistic pair
 * [x(k), x(n+1-k)] with the largest k such that P(B <= k-1) <= 0.025 for
 * B ~ Binomial(n, 1/2): n = 6 and 8 give k = 1 (P(B <= 0) = 1/64, 1/256;
 * P(B <= 1) = 7/64, 9/256 are above), n = 9 gives k = 2 (P(B <= 1) =
 * 10/512, P(B <= 2) = 46/512). */
#include <check.h>
#include <errno.h>
#include <math.h>

#include "auto_iter.h"
#include "testlib.h"

static const struct auto_iter_rule rule = { .min = 6, .max = 30, .target_ci_pct = 3 };

START_TEST(test_ci_noisy_six)
{
	struct auto_iter_ci ci;
	const double x[] = { 10, 12, 11, 9, 13, 11 }; /* 9 10 11 11 12 13 */
	ck_assert_int_eq(auto_iter_ci(x, 6, &ci), 0);
	ck_assert_uint_eq(ci.n, 6);
	ck_assert_double_eq(ci.median, 11);
	ck_assert_double_eq(ci.lo, 9);
	ck_assert_double_eq(ci.hi, 13);
	ck_assert_double_eq_tol(ci.level, 1 - 2.0 / 64, 1e-12);
	ck_assert_double_eq(ci.half_width, 2);
	ck_assert_double_eq_tol(ci.pct, 200.0 / 11, 1e-9);
	ck_assert(!auto_iter_within(&rule, &ci));
}
END_TEST

START_TEST(test_ci_quiet_eight)
{
	struct auto_iter_ci ci;
	const double x[] = { 100, 101, 99, 100, 100, 101, 99, 100 };
	ck_assert_int_eq(auto_iter_ci(x, 8, &ci), 0);
	ck_assert_double_eq(ci.median, 100);
	ck_assert_double_eq(ci.lo, 99);
	ck_assert_double_eq(ci.hi, 101);
	ck_assert_double_eq_tol(ci.level, 1 - 2.0 / 256, 1e-12);
	ck_assert_double_eq_tol(ci.pct, 1, 1e-12);
	ck_assert(auto_iter_within(&rule, &ci));
}
END_TEST

/* The interval of the median ignores how far the outliers lie: the mean's
 * would not. */
START_TEST(test_ci_nine_with_outliers)
{
	struct auto_iter_ci ci;
	const double x[] = { 50, 1, 2, 3, 4, 5, 6, 7, -40 }; /* -40 1 2 3 4 5 6 7 50 */
	ck_assert_int_eq(auto_iter_ci(x, 9, &ci), 0);
	ck_assert_double_eq(ci.median, 4);
	ck_assert_double_eq(ci.lo, 1);
	ck_assert_double_eq(ci.hi, 7);
	ck_assert_double_eq_tol(ci.level, 1 - 20.0 / 512, 1e-12);
	ck_assert_double_eq(ci.half_width, 3);
	ck_assert_double_eq_tol(ci.pct, 75, 1e-12);
	/* uneven sides: the larger one counts */
	const double y[] = { 100, 100, 100, 100, 100, 110 };
	ck_assert_int_eq(auto_iter_ci(y, 6, &ci), 0);
	ck_assert_double_eq(ci.half_width, 10);
	ck_assert_double_eq_tol(ci.pct, 10, 1e-12);
}
END_TEST

START_TEST(test_ci_negative_median)
{
	struct auto_iter_ci ci;
	const double x[] = { -10, -12, -11, -9, -13, -11 };
	ck_assert_int_eq(auto_iter_ci(x, 6, &ci), 0);
	ck_assert_double_eq(ci.median, -11);
	ck_assert_double_eq_tol(ci.pct, 200.0 / 11, 1e-9);
}
END_TEST

START_TEST(test_ci_edges)
{
	struct auto_iter_ci ci;
	const double same[] = { 5, 5, 5, 5, 5, 5 };
	ck_assert_int_eq(auto_iter_ci(same, 6, &ci), 0);
	ck_assert_double_eq(ci.pct, 0);
	ck_assert(auto_iter_within(&rule, &ci));
	const double zero_median[] = { -1, -1, 0, 0, 1, 1 };
	ck_assert_int_eq(auto_iter_ci(zero_median, 6, &ci), 0);
	ck_assert(isinf(ci.pct));
	ck_assert(!auto_iter_within(&rule, &ci));
	/* fewer than 6 values have no 95% interval of the median */
	ck_assert_int_eq(auto_iter_ci(same, 5, &ci), -ERANGE);
	const double bad[] = { 1, NAN, 2, 3, 4, 5 };
	ck_assert_int_eq(auto_iter_ci(bad, 6, &ci), -EDOM);
}
END_TEST

START_TEST(test_within_at_the_target)
{
	struct auto_iter_ci ci = { .n = 6, .median = 100, .half_width = 3, .pct = 3 };
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
	tcase_add_test(tc, test_ci_nine_with_outliers);
	tcase_add_test(tc, test_ci_negative_median);
	tcase_add_test(tc, test_ci_edges);
	tcase_add_test(tc, test_within_at_the_target);
	tcase_add_test(tc, test_decide);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
