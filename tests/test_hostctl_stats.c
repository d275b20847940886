// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostctl/stats.c against reference values, each with its source beside it.
 * "Enumeration" values were computed once by listing every assignment of
 * the pooled values to the two samples (Python, itertools.combinations) and
 * counting those with U at least as extreme: the exact null distribution
 * by definition, independent of the recurrence stats.c uses.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats.h"
#include "testlib.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Hollander & Wolfe (1973), p. 69f, quoted in R's ?wilcox.test: permeability
 * of the chorioamnion at term (x) and at 12-26 weeks (y).  R prints W = 35,
 * one-sided p = 0.1272; by enumeration P(U >= 35) = 382/3003 exactly, so the
 * two-sided p is 764/3003. */
static const double hw_x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
static const double hw_y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };

/* Student's sleep data (R's datasets::sleep, extra by group). */
static const double sleep1[] = { 0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0 };
static const double sleep2[] = { 1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4 };

START_TEST(mwu_exact_hollander_wolfe)
{
	struct stats_test t;

	ck_assert_int_eq(stats_mann_whitney(hw_x, N(hw_x), hw_y, N(hw_y), &t), 0);
	ck_assert_int_eq(t.method, STATS_MWU_EXACT);
	ck_assert_double_eq(t.stat, 35);
	ck_assert_double_eq_tol(t.p, 764.0 / 3003, 1e-12);
	ck_assert_double_eq_tol(t.p / 2, 0.1272, 5e-5); /* R's printed one-sided p */
	/* the other way round: U' = 50 - 35, same two-sided p */
	ck_assert_int_eq(stats_mann_whitney(hw_y, N(hw_y), hw_x, N(hw_x), &t), 0);
	ck_assert_double_eq(t.stat, 15);
	ck_assert_double_eq_tol(t.p, 764.0 / 3003, 1e-12);
}
END_TEST

/* 8 against 8, no ties: U = 15; by enumeration of C(16,8) = 12870 splits,
 * 534 have U <= 15, so p = 1068/12870. */
START_TEST(mwu_exact_enumerated_8_8)
{
	static const double x[] = { 1.1, 2.3, 3.5, 4.2, 6.0, 7.7, 8.1, 9.9 };
	static const double y[] = { 2.0, 5.1, 6.6, 8.8, 10.2, 11.5, 12.0, 13.3 };
	struct stats_test t;

	ck_assert_int_eq(stats_mann_whitney(x, 8, y, 8, &t), 0);
	ck_assert_int_eq(t.method, STATS_MWU_EXACT);
	ck_assert_double_eq(t.stat, 15);
	ck_assert_double_eq_tol(t.p, 1068.0 / 12870, 1e-12);
}
END_TEST

/* Complete separation: only 2 of the C(m+n, m) splits are as extreme. */
START_TEST(mwu_separated_and_min_p)
{
	static const double x[] = { 1, 2, 3, 4 }, y[] = { 5, 6, 7, 8 };
	struct stats_test t;

	ck_assert_int_eq(stats_mann_whitney(x, 4, y, 4, &t), 0);
	ck_assert_double_eq(t.stat, 0);
	ck_assert_double_eq_tol(t.p, 2.0 / 70, 1e-12);
	ck_assert_double_eq_tol(stats_mwu_min_p(4, 4), 2.0 / 70, 1e-12);
	ck_assert_double_eq_tol(stats_mwu_min_p(3, 3), 0.1, 1e-12); /* cannot reach 0.05 */
	ck_assert_double_eq_tol(stats_mwu_min_p(1, 1), 1, 1e-12);
}
END_TEST

/* Ties: R, wilcox.test(extra ~ group, data = sleep) prints "Wilcoxon rank
 * sum test with continuity correction, W = 25.5, p-value = 0.06933" (and a
 * warning that the exact p cannot be computed with ties). */
START_TEST(mwu_ties_normal_sleep)
{
	struct stats_test t;

	ck_assert_int_eq(stats_mann_whitney(sleep1, N(sleep1), sleep2, N(sleep2), &t), 0);
	ck_assert_int_eq(t.method, STATS_MWU_NORMAL);
	ck_assert_double_eq(t.stat, 25.5);
	ck_assert_double_eq_tol(t.p, 0.06933, 5e-6);
}
END_TEST

/* Above 50 per side the normal approximation is used even without ties:
 * x = 0..59, y = x + 0.5 + 20: U = sum over x of #(y < x).  Every y_j
 * = j + 20.5 is below x_i when j <= i - 21: U = sum_{i=21}^{59} (i - 20)
 * = 780.  mn/2 = 1800, sigma^2 = 3600 * 121 / 12 = 36300;
 * z = (780 - 1800 + 0.5) / sqrt(36300) = -5.35099, p = erfc(5.35099 / sqrt 2)
 * = 8.7476e-8 (Python's math.erfc, computed once). */
START_TEST(mwu_large_normal)
{
	double x[60], y[60];
	struct stats_test t;

	for (int i = 0; i < 60; i++) {
		x[i] = i;
		y[i] = i + 20.5;
	}
	ck_assert_int_eq(stats_mann_whitney(x, 60, y, 60, &t), 0);
	ck_assert_int_eq(t.method, STATS_MWU_NORMAL);
	ck_assert_double_eq(t.stat, 780);
	ck_assert_double_eq_tol(t.p, 8.75e-8, 0.05e-8);
}
END_TEST

START_TEST(mwu_identical_and_n1)
{
	static const double five[] = { 5, 5, 5, 5 }, one[] = { 1 }, two[] = { 2 };
	struct stats_test t;

	ck_assert_int_eq(stats_mann_whitney(five, 4, five, 4, &t), 0);
	ck_assert_double_eq(t.p, 1);
	ck_assert_int_eq(stats_mann_whitney(one, 1, two, 1, &t), 0);
	ck_assert_double_eq(t.stat, 0);
	ck_assert_double_eq(t.p, 1); /* 2 of 2 splits are as extreme */
	ck_assert_int_eq(stats_mann_whitney(one, 0, two, 1, &t), -EINVAL);
}
END_TEST

START_TEST(non_finite_rejected)
{
	double x[] = { 1, 2, NAN, 4 }, y[] = { 1, INFINITY, 3 }, ok[] = { 1, 2, 3 };
	struct stats_test t;
	struct stats_desc d;
	size_t bad = 99;

	ck_assert_int_eq(stats_check_finite(x, 4, &bad), -EDOM);
	ck_assert_uint_eq(bad, 2);
	ck_assert_int_eq(stats_check_finite(y, 3, &bad), -EDOM);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(stats_check_finite(ok, 3, &bad), 0);
	ck_assert_int_eq(stats_mann_whitney(x, 4, ok, 3, &t), -EDOM);
	ck_assert_int_eq(stats_mann_whitney(ok, 3, y, 3, &t), -EDOM);
	ck_assert_int_eq(stats_welch(x, 4, ok, 3, &t), -EDOM);
	ck_assert_int_eq(stats_describe(y, 3, &d), -EDOM);
}
END_TEST

/* R, t.test(extra ~ group, data = sleep) (the example of ?t.test):
 * "Welch Two Sample t-test: t = -1.8608, df = 17.776, p-value = 0.07939". */
START_TEST(welch_sleep)
{
	struct stats_test t;

	ck_assert_int_eq(stats_welch(sleep1, N(sleep1), sleep2, N(sleep2), &t), 0);
	ck_assert_int_eq(t.method, STATS_WELCH);
	ck_assert_double_eq_tol(t.stat, -1.8608, 5e-5);
	ck_assert_double_eq_tol(t.df, 17.776, 5e-4);
	ck_assert_double_eq_tol(t.p, 0.07939, 5e-6);
}
END_TEST

START_TEST(welch_edges)
{
	static const double one[] = { 1 }, a[] = { 2, 2, 2 }, b[] = { 3, 3, 3 };
	struct stats_test t;

	ck_assert_int_eq(stats_welch(one, 1, a, 3, &t), -ERANGE);
	ck_assert_int_eq(stats_welch(a, 3, b, 3, &t), -ENODATA);
	ck_assert_int_eq(stats_welch(a, 3, a, 3, &t), 0);
	ck_assert_double_eq(t.p, 1);
}
END_TEST

/* The order-statistic interval [x(k), x(n+1-k)] covers the median with
 * probability 1 - 2 P(B <= k-1), B ~ Bin(n, 1/2) (Conover, Practical
 * Nonparametric Statistics, 3rd ed., sec. 3.2).  n = 10: P(B <= 1) =
 * 11/1024, P(B <= 2) = 56/1024, so k = 2 and the level is 1 - 22/1024.
 * n = 6: k = 1, level 1 - 2/64.  n = 5: 1 - 2/32 < 0.95: no interval. */
START_TEST(median_ci_order_statistics)
{
	static const double ten[] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	static const double six[] = { 6, 5, 4, 3, 2, 1 }, five[] = { 1, 2, 3, 4, 5 };
	struct stats_desc d;

	ck_assert_int_eq(stats_describe(ten, 10, &d), 0);
	ck_assert(d.has_ci);
	ck_assert_double_eq(d.ci_lo, 2);
	ck_assert_double_eq(d.ci_hi, 9);
	ck_assert_double_eq_tol(d.ci_level, 1 - 22.0 / 1024, 1e-12);
	ck_assert_double_eq(d.median, 5.5);
	ck_assert_int_eq(stats_describe(six, 6, &d), 0);
	ck_assert(d.has_ci);
	ck_assert_double_eq(d.ci_lo, 1);
	ck_assert_double_eq(d.ci_hi, 6);
	ck_assert_double_eq_tol(d.ci_level, 1 - 2.0 / 64, 1e-12);
	ck_assert_int_eq(stats_describe(five, 5, &d), 0);
	ck_assert(!d.has_ci);
	ck_assert_double_eq(d.median, 3);
}
END_TEST

/* Sleep data group 1: mean 0.75 (R's t.test prints "mean in group 1 0.75");
 * sd 1.789010 (sqrt of sum of squares 28.805 / 9, by hand). */
START_TEST(describe_sleep_and_n1)
{
	static const double one[] = { 42 };
	struct stats_desc d;

	ck_assert_int_eq(stats_describe(sleep1, N(sleep1), &d), 0);
	ck_assert_double_eq_tol(d.mean, 0.75, 1e-12);
	ck_assert_double_eq_tol(d.sd, 1.789010, 5e-7);
	ck_assert_double_eq_tol(d.cv, 1.789010 / 0.75, 1e-6);
	ck_assert_double_eq_tol(d.median, 0.35, 1e-12);
	ck_assert_int_eq(stats_describe(one, 1, &d), 0);
	ck_assert_double_eq(d.median, 42);
	ck_assert(isnan(d.sd) && isnan(d.cv) && !d.has_ci);
	ck_assert_int_eq(stats_describe(one, 0, &d), -EINVAL);
}
END_TEST

/* Holm (1979): sorted p(1) <= ... <= p(m), adjusted max_{j<=i} (m-j+1) p(j),
 * capped at 1 (R's p.adjust(method = "holm")).  By hand:
 * 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06. */
START_TEST(holm_by_hand)
{
	static const double p[] = { 0.01, 0.04, 0.03, 0.005 }, q[] = { 0.5, 0.6 };
	double a[4];

	stats_holm(p, 4, a);
	ck_assert_double_eq_tol(a[0], 0.03, 1e-15);
	ck_assert_double_eq_tol(a[1], 0.06, 1e-15);
	ck_assert_double_eq_tol(a[2], 0.06, 1e-15);
	ck_assert_double_eq_tol(a[3], 0.02, 1e-15);
	stats_holm(q, 2, a);
	ck_assert_double_eq(a[0], 1);
	ck_assert_double_eq(a[1], 1);
	stats_holm(q, 0, a); /* an empty family is fine */
}
END_TEST

/* Jain, Chiu & Hawe (1984): 1 when all equal, 1/n when one gets all;
 * (1+2+3+4)^2 / (4 * 30) = 5/6 by hand. */
START_TEST(jain_index)
{
	static const double eq[] = { 3, 3, 3, 3 }, one[] = { 1, 0, 0, 0 }, ramp[] = { 1, 2, 3, 4 };
	static const double neg[] = { 1, -1 }, zero[] = { 0, 0 };
	double j;

	ck_assert_int_eq(stats_jain(eq, 4, &j), 0);
	ck_assert_double_eq_tol(j, 1, 1e-15);
	ck_assert_int_eq(stats_jain(one, 4, &j), 0);
	ck_assert_double_eq_tol(j, 0.25, 1e-15);
	ck_assert_int_eq(stats_jain(ramp, 4, &j), 0);
	ck_assert_double_eq_tol(j, 5.0 / 6, 1e-15);
	ck_assert_int_eq(stats_jain(neg, 2, &j), -ERANGE);
	ck_assert_int_eq(stats_jain(zero, 2, &j), -ERANGE);
	ck_assert_int_eq(stats_jain(eq, 0, &j), -EINVAL);
}
END_TEST

static void teardown(void)
{
	stats_cleanup();
}

int main(void)
{
	Suite *s = suite_create("hostctl-stats");
	TCase *tc = tcase_create("stats");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, mwu_exact_hollander_wolfe);
	tcase_add_test(tc, mwu_exact_enumerated_8_8);
	tcase_add_test(tc, mwu_separated_and_min_p);
	tcase_add_test(tc, mwu_ties_normal_sleep);
	tcase_add_test(tc, mwu_large_normal);
	tcase_add_test(tc, mwu_identical_and_n1);
	tcase_add_test(tc, non_finite_rejected);
	tcase_add_test(tc, welch_sleep);
	tcase_add_test(tc, welch_edges);
	tcase_add_test(tc, median_ci_order_statistics);
	tcase_add_test(tc, describe_sleep_and_n1);
	tcase_add_test(tc, holm_by_hand);
	tcase_add_test(tc, jain_index);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
