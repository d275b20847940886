// SPDX-License-Identifier: GPL-2.0-or-later
#include "auto_settings.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int auto_settings_load(const struct config *c, const char *path, uint32_t max_rounds,
		       struct auto_iter_rule *rule, struct config_diag *d)
{
	int64_t min = AUTO_ITER_MIN_DEFAULT, max = AUTO_ITER_MAX_DEFAULT;
	if (config_get_int(c, "AUTO_MIN", 1, max_rounds, &min, d) < 0 ||
	    config_get_int(c, "AUTO_MAX", 1, max_rounds, &max, d) < 0)
		return -EINVAL;
	if (min < MEDIAN_CI_MIN_N)
		return config_diag_at(d, c, "AUTO_MIN", path,
				      "AUTO_MIN=%lld is below %d: the 95%% interval of a median, "
				      "which the rule judges, needs %d values",
				      (long long)min, MEDIAN_CI_MIN_N, MEDIAN_CI_MIN_N);
	if (max < min)
		return config_diag_at(d, c, "AUTO_MAX", path,
				      "AUTO_MAX=%lld is below AUTO_MIN=%lld: the cap must allow "
				      "the least number of iterations",
				      (long long)max, (long long)min);
	double target = AUTO_ITER_TARGET_DEFAULT;
	const char *v = config_get(c, "AUTO_TARGET_CI_PCT");
	if (v) {
		char *end;
		target = strtod(v, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		if (end == v || *end || !isfinite(target) || target <= 0 || target > 100)
			return config_diag_at(d, c, "AUTO_TARGET_CI_PCT", path,
					      "AUTO_TARGET_CI_PCT=\"%s\": expected a percentage "
					      "above 0 and at most 100, such as 3 or 1.5",
					      v);
	}
	rule->min = (uint32_t)min;
	rule->max = (uint32_t)max;
	rule->target_ci_pct = target;
	return 0;
}
