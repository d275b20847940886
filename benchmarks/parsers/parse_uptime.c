// SPDX-License-Identifier: GPL-2.0-or-later
/* Two readings of /proc/uptime around a stretch of doing nothing (MMTests'
 * nap and monitor): "<seconds up> <idle seconds, summed over CPUs>", once
 * before and once after.  A line of two words is a reading, and both must
 * be numbers; other lines (a benchmark's own messages) are skipped.  There
 * must be exactly two readings, the second not before the first.
 *
 *   wall       seconds between the readings
 *   idle_cpus  how many CPUs were idle on average meanwhile: a quiet node
 *              has nearly all of them */
#include <string.h>

#include "bench_parse_impl.h"

/* blank-separated words on the line */
static size_t words(const struct bench__line *l)
{
	size_t n = 0;
	for (size_t k = 0; k < l->len; k++)
		if (l->s[k] != ' ' && l->s[k] != '\t' && (k == 0 || l->s[k - 1] == ' ' ||
							   l->s[k - 1] == '\t'))
			n++;
	return n;
}

int bench__parse_uptime(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l;
	unsigned long at[2] = { 0 };
	double up[2] = { 0 }, idle[2] = { 0 };
	size_t n = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		char q[BENCH_QUOTE_MAX];
		double u, i;

		if (words(&l) != 2)
			continue;
		bench__skip_blanks(&c);
		if (bench__number(&c, &u) < 0 || bench__cur_done(&c) || (*c.p != ' ' && *c.p != '\t') ||
		    (bench__skip_blanks(&c), bench__number(&c, &i) < 0) || !bench__rest_blank(&c))
			return bench__fail(why, whylen, "line %lu: expected '<up> <idle>' from "
					   "/proc/uptime, found '%s'", l.no,
					   bench__quote(l.s, l.len, q, sizeof(q)));
		if (n == 2)
			return bench__fail(why, whylen, "line %lu: a third reading of /proc/uptime (the "
					   "others are lines %lu and %lu)", l.no, at[0], at[1]);
		if (u < 0 || i < 0)
			return bench__fail(why, whylen, "line %lu: a negative reading of /proc/uptime",
					   l.no);
		at[n] = l.no, up[n] = u, idle[n] = i;
		n++;
	}
	if (n < 2)
		return bench__fail(why, whylen, "%s reading of /proc/uptime ('<up> <idle>'): "
				   "output truncated?", n ? "only one" : "no");
	if (up[1] < up[0] || idle[1] < idle[0])
		return bench__fail(why, whylen, "line %lu: /proc/uptime went backwards from line %lu",
				   at[1], at[0]);
	if (up[1] == up[0])
		return bench__fail(why, whylen, "line %lu: no time passed since line %lu", at[1], at[0]);
	int r = bench__metric_add(m, why, whylen, up[1] - up[0], "s", false, "wall");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, (idle[1] - idle[0]) / (up[1] - up[0]), "cpus",
				      true, "idle_cpus");
	return r;
}
