/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics of a comparison: descriptive figures with a distribution-
 * free confidence interval of the median, the Mann-Whitney U test, Welch's
 * t test, Holm's correction and Jain's fairness index.  Distributions come
 * from GSL.  Functions return 0 or -errno and never log; every input must
 * be finite (-EDOM otherwise, with the index of the first bad value).
 */
#ifndef HOSTCTL_STATS_H
#define HOSTCTL_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "median_ci.h"

/* Exact U distribution below this many per side when there are no ties
 * (R's wilcox.test does the same); the normal approximation above. */
#define STATS_MWU_EXACT_MAX 50
/* A 95% interval of the median (common/median_ci.h) needs n >= 6. */
#define STATS_CI_MIN_N MEDIAN_CI_MIN_N

struct stats_desc {
	size_t n;
	double median, mean, sd, cv, min, max; /* sd, cv: NAN when n < 2 */
	bool has_ci;			       /* false when n < STATS_CI_MIN_N */
	double ci_lo, ci_hi, ci_level;	       /* level actually covered, >= 0.95 */
};

enum stats_method { STATS_MWU_EXACT, STATS_MWU_NORMAL, STATS_WELCH };

struct stats_test {
	enum stats_method method;
	double stat; /* U of the first sample, or t */
	double df;   /* Welch only */
	double p;    /* two-sided */
};

const char *stats_method_name(enum stats_method m);

/* -EDOM when some x[i] is not finite; *bad gets i. */
int stats_check_finite(const double *x, size_t n, size_t *bad);
/* -EINVAL when n == 0. */
int stats_describe(const double *x, size_t n, struct stats_desc *d);
/* Two-sided Mann-Whitney U (Wilcoxon rank-sum) of x against y.  Exact when
 * both sides are below STATS_MWU_EXACT_MAX and there are no ties, else the
 * normal approximation with tie and continuity correction.  Identical
 * samples give p = 1.  -EINVAL when a side is empty. */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *t);
/* The smallest two-sided p the U test can give with these sizes:
 * 2 / C(nx+ny, nx).  Below alpha is the least a decision needs. */
double stats_mwu_min_p(size_t nx, size_t ny);
/* Two-sided Welch t test; -ERANGE when a side has fewer than 2 values,
 * -ENODATA when both sides are constant and differ (t is infinite). */
int stats_welch(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *t);
/* Holm-Bonferroni adjusted p-values (R's p.adjust "holm"). */
void stats_holm(const double *p, size_t n, double *adj);
/* Jain's fairness index (sum x)^2 / (n sum x^2), 1/n..1; -EINVAL when
 * n == 0, -ERANGE when some x < 0 or all are 0. */
int stats_jain(const double *x, size_t n, double *j);
/* Frees the cached exact distributions. */
void stats_cleanup(void);

#endif
