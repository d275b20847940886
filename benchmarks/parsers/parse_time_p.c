// SPDX-License-Identifier: GPL-2.0-or-later
/* The POSIX `time -p` report (GNU time -p, the shells' time -p) of one
 * command:
 *
 *   real 10.69
 *   user 5.69
 *   sys 1.90
 *
 * each line once, anywhere in the output (other lines are the step's own:
 * kernbench says which kernel it builds).  MMTests' Elapsed, User and
 * System: elapsed, user, system (s, lower).  A second "real" is two
 * commands timed in one output: an error. */
#include <stdio.h>

#include "bench_parse_impl.h"

int bench__parse_time_p(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			char *why, size_t whylen)
{
	static const char *const label[3] = { "real ", "user ", "sys " };
	static const char *const metric[3] = { "elapsed", "user", "system" };
	unsigned long seen[3] = { 0 };
	double v[3] = { 0 };
	struct bench__lines it;
	struct bench__line l;
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		for (int k = 0; k < 3; k++) {
			struct bench__cur c = bench__cur_of(&l);
			char expected[32];

			if (!bench__eat(&c, label[k]))
				continue;
			snprintf(expected, sizeof(expected), "'%s<seconds>'", label[k]);
			r = bench__value_line(&c, &l, expected, NULL, &v[k], why, whylen);
			if (r == 0)
				r = bench__once(&seen[k], &l, expected, why, whylen);
			if (r < 0)
				return r;
		}
	}
	for (int k = 0; k < 3; k++)
		if (!seen[k])
			return bench__fail(why, whylen,
					   "no '%s<seconds>' line of time -p: output "
					   "truncated, or the command failed?",
					   label[k]);
	for (int k = 0; k < 3 && r == 0; k++)
		r = bench__metric_add(m, why, whylen, v[k], "s", false, "%s", metric[k]);
	return r;
}
