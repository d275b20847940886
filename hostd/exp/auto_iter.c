// SPDX-License-Identifier: GPL-2.0-or-later
#include "auto_iter.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>

int auto_iter_ci(const double *x, size_t n, struct auto_iter_ci *ci)
{
	if (n < 2)
		return -EINVAL;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return -EDOM;
		sum += x[i];
	}
	double mean = sum / (double)n, ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	double sd = sqrt(ss / (double)(n - 1));
	double t = gsl_cdf_tdist_Pinv(1 - (1 - AUTO_ITER_CONFIDENCE) / 2, (double)(n - 1));
	ci->n = n;
	ci->mean = mean;
	ci->half_width = t * sd / sqrt((double)n);
	if (ci->half_width == 0)
		ci->pct = 0;
	else if (mean == 0)
		ci->pct = INFINITY;
	else
		ci->pct = 100 * ci->half_width / fabs(mean);
	return 0;
}

bool auto_iter_within(const struct auto_iter_rule *rule, const struct auto_iter_ci *ci)
{
	return ci->n >= 2 && ci->pct <= rule->target_ci_pct;
}

enum auto_iter_verdict auto_iter_decide(const struct auto_iter_rule *rule, uint32_t rounds,
					size_t nseries, size_t within)
{
	if (rounds < rule->min)
		return AUTO_ITER_MORE;
	if (nseries == 0)
		return AUTO_ITER_NO_DATA;
	if (within >= nseries)
		return AUTO_ITER_CONVERGED;
	return rounds >= rule->max ? AUTO_ITER_CAPPED : AUTO_ITER_MORE;
}

const char *auto_iter_verdict_name(enum auto_iter_verdict v)
{
	switch (v) {
	case AUTO_ITER_MORE:
		return "more";
	case AUTO_ITER_CONVERGED:
		return "converged";
	case AUTO_ITER_CAPPED:
		return "cap";
	case AUTO_ITER_NO_DATA:
		return "no-data";
	}
	return "unknown";
}
