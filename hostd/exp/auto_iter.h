/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive iterations (MMTEST_ITERATIONS=auto): the stopping rule, pure.
 * After each round (one pass over the plan's benchmarks), every series
 * (the guests taken together, their fairness, or the host; one benchmark,
 * sweep point and metric: run_auto.c) is judged by the 95% confidence
 * interval of its median from order statistics (common/median_ci.h, the
 * interval hostctl compare prints): its larger side, as a percentage of
 * |median|.  Such an interval needs 6 values, hence AUTO_MIN >= 6.
 * Rounds go on until every series is within the target, at least min and
 * at most max rounds.  No I/O, no clock: run_auto.c feeds it.
 */
#ifndef LOCKSTEP_AUTO_ITER_H
#define LOCKSTEP_AUTO_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "median_ci.h"

#define AUTO_ITER_CONFIDENCE 0.95
/* the defaults of AUTO_MIN, AUTO_MAX and AUTO_TARGET_CI_PCT */
#define AUTO_ITER_MIN_DEFAULT 6
#define AUTO_ITER_MAX_DEFAULT 30
#define AUTO_ITER_TARGET_DEFAULT 3.0

struct auto_iter_rule {
	uint32_t min, max;    /* rounds: MEDIAN_CI_MIN_N <= min <= max */
	double target_ci_pct; /* > 0 */
};

struct auto_iter_ci {
	size_t n;
	double median;
	double lo, hi, level; /* the interval and its coverage (>= 0.95) */
	double half_width;    /* its larger side from the median, in the metric's unit */
	double pct;	      /* half_width as % of |median|: 0 when the interval is
			       * one value, INFINITY when the median is 0 and it is not */
};

enum auto_iter_verdict {
	AUTO_ITER_MORE,	     /* run another round */
	AUTO_ITER_CONVERGED, /* every series is within the target */
	AUTO_ITER_CAPPED,    /* max rounds ran, some series is not within */
	AUTO_ITER_NO_DATA,   /* min rounds ran and no series has a number */
};

/* The interval of the median of x[0..n) (any order): -ERANGE when n <
 * MEDIAN_CI_MIN_N, -EDOM when a value is not finite. */
int auto_iter_ci(const double *x, size_t n, struct auto_iter_ci *ci);
/* The series is within the rule's target. */
bool auto_iter_within(const struct auto_iter_rule *rule, const struct auto_iter_ci *ci);
/* After rounds rounds, within of nseries series within the target. */
enum auto_iter_verdict auto_iter_decide(const struct auto_iter_rule *rule, uint32_t rounds,
					size_t nseries, size_t within);
/* "converged", "cap", "no-data" ("more" for AUTO_ITER_MORE). */
const char *auto_iter_verdict_name(enum auto_iter_verdict v);

#endif
