// SPDX-License-Identifier: GPL-2.0-or-later
#include "auto_iter.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

int auto_iter_ci(const double *x, size_t n, struct auto_iter_ci *ci)
{
	if (n < MEDIAN_CI_MIN_N)
		return -ERANGE;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EDOM;
	double *s = xmalloc(n * sizeof(*s));
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), dbl_cmp);
	ci->n = n;
	ci->median = median_sorted(s, n);
	int err = median_ci(s, n, AUTO_ITER_CONFIDENCE, &ci->lo, &ci->hi, &ci->level);
	free(s);
	if (err < 0)
		return err;
	ci->half_width = fmax(ci->median - ci->lo, ci->hi - ci->median);
	if (ci->half_width == 0)
		ci->pct = 0;
	else if (ci->median == 0)
		ci->pct = INFINITY;
	else
		ci->pct = 100 * ci->half_width / fabs(ci->median);
	return 0;
}

bool auto_iter_within(const struct auto_iter_rule *rule, const struct auto_iter_ci *ci)
{
	return ci->n >= MEDIAN_CI_MIN_N && ci->pct <= rule->target_ci_pct;
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
	case AUTO_ITER_MORE: return "more";
	case AUTO_ITER_CONVERGED: return "converged";
	case AUTO_ITER_CAPPED: return "cap";
	case AUTO_ITER_NO_DATA: return "no-data";
	}
	return "unknown";
}
