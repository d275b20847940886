// SPDX-License-Identifier: GPL-2.0-or-later
/* rt-tests hackbench, process or thread mode, pipes or sockets:
 *
 *   Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)
 *   Each sender will pass 20 messages of 100 bytes
 *   Time: 0.011
 *
 * Only the Time line carries a result; the others describe the run. */
#include "bench_parse_impl.h"

int bench__parse_hackbench(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			   char *why, size_t whylen)
{
	static const char expected[] = "'Time: <seconds>'";
	struct bench__lines it;
	struct bench__line l;
	unsigned long seen = 0;
	double t = 0;
	int r;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);

		if (!bench__eat_label(&c, "Time:"))
			continue;
		r = bench__once(&seen, &l, "'Time:' line", why, whylen);
		if (r < 0)
			return r;
		r = bench__value_line(&c, &l, expected, NULL, &t, why, whylen);
		if (r < 0)
			return r;
	}
	if (!seen)
		return bench__fail(why, whylen, "no %s line: output truncated?", expected);
	return bench__metric_add(m, why, whylen, t, "s", false, "time");
}
