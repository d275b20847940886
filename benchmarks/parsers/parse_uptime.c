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
		if (l->s[k] != ' ' && l->s[k] != '\t' &&
		    (k == 0 || l->s[k - 1] == ' ' || l->s[k - 1] == '\t'))
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
			return bench__fail(why, whylen,
					   "line %lu: expected '<up> <idle>' from "
					   "/proc/uptime, found '%s'",
					   l.no, bench__quote(l.s, l.len, q, sizeof(q)));
		if (n == 2)
			return bench__fail(why, whylen,
					   "line %lu: a third reading of /proc/uptime (the "
					   "others are lines %lu and %lu)",
					   l.no, at[0], at[1]);
		if (u < 0 || i < 0)
			return bench__fail(why, whylen,
					   "line %lu: a negative reading of /proc/uptime", l.no);
		at[n] = l.no, up[n] = u, idle[n] = i;
		n++;
	}
	if (n < 2)
		return bench__fail(why, whylen,
				   "%s reading of /proc/uptime ('<up> <idle>'): "
				   "output truncated?",
				   n ? "only one" : "no");
	if (up[1] < up[0] || idle[1] < idle[0])
		return bench__fail(why, whylen, "line %lu: /proc/uptime went backwards from line %lu",
				   at[1], at[0]);
	if (up[1] == up[0])
		return bench__fail(why, whylen, "line %lu: no time passed since line %lu", at[1],
				   at[0]);
	int r = bench__metric_add(m, why, whylen, up[1] - up[0], "s", false, "wall");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, (idle[1] - idle[0]) / (up[1] - up[0]), "cpus",
				      true, "idle_cpus");
	return r;
}

#define PHASES_MAX 16

/* a phase's label: 1 to 63 of [a-z0-9_], starting with a letter */
static size_t label_len(const struct bench__line *l)
{
	size_t n = 0;
	while (n < l->len && ((l->s[n] >= 'a' && l->s[n] <= 'z') || l->s[n] == '_' ||
			      (n > 0 && l->s[n] >= '0' && l->s[n] <= '9')))
		n++;
	return n > 0 && n < BENCH_METRIC_NAME_MAX && n < l->len && (l->s[n] == ' ' || l->s[n] == '\t')
		       ? n
		       : 0;
}

/*
 * Phases of a step timed by /proc/uptime (MMTests' trunc times a cat and an
 * rm apart): "LABEL <up> <idle>" once before a phase and once after, the
 * label being the metric's name.  Lines of other shapes are skipped.  Each
 * label must have exactly two readings, not backwards; at most PHASES_MAX
 * labels.  /proc/uptime counts hundredths: a phase shorter reads 0.
 *
 *   LABEL   seconds between its two readings
 */
int bench__parse_uptime_phases(const char *out, size_t len, const char *arg,
			       struct bench_metrics *m, char *why, size_t whylen)
{
	struct {
		char name[BENCH_METRIC_NAME_MAX];
		unsigned long at[2];
		double up[2];
		size_t n;
	} ph[PHASES_MAX];
	size_t nph = 0;
	struct bench__lines it;
	struct bench__line l;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		size_t k = label_len(&l);
		char q[BENCH_QUOTE_MAX];
		double u, i;

		if (k == 0 || words(&l) != 3)
			continue;
		struct bench__cur c = { l.s + k, l.s + l.len };
		bench__skip_blanks(&c);
		if (bench__number(&c, &u) < 0 || bench__cur_done(&c) || (*c.p != ' ' && *c.p != '\t') ||
		    (bench__skip_blanks(&c), bench__number(&c, &i) < 0) || !bench__rest_blank(&c) ||
		    u < 0 || i < 0)
			return bench__fail(why, whylen,
					   "line %lu: expected 'LABEL <up> <idle>' from "
					   "/proc/uptime, found '%s'",
					   l.no, bench__quote(l.s, l.len, q, sizeof(q)));
		size_t p = 0;
		while (p < nph && (strlen(ph[p].name) != k || memcmp(ph[p].name, l.s, k)))
			p++;
		if (p == nph) {
			if (nph == PHASES_MAX)
				return bench__fail(why, whylen, "line %lu: more than %d phases",
						   l.no, PHASES_MAX);
			memcpy(ph[p].name, l.s, k);
			ph[p].name[k] = '\0';
			ph[p].n = 0;
			nph++;
		}
		if (ph[p].n == 2)
			return bench__fail(why, whylen,
					   "line %lu: a third reading of phase %s (the "
					   "others are lines %lu and %lu)",
					   l.no, ph[p].name, ph[p].at[0], ph[p].at[1]);
		ph[p].at[ph[p].n] = l.no;
		ph[p].up[ph[p].n++] = u;
	}
	if (nph == 0)
		return bench__fail(why, whylen,
				   "no 'LABEL <up> <idle>' reading of /proc/uptime: "
				   "output truncated?");
	for (size_t p = 0; p < nph; p++) {
		if (ph[p].n < 2)
			return bench__fail(why, whylen,
					   "line %lu: phase %s has no second reading: "
					   "output truncated?",
					   ph[p].at[0], ph[p].name);
		if (ph[p].up[1] < ph[p].up[0])
			return bench__fail(why, whylen,
					   "line %lu: /proc/uptime went backwards from "
					   "line %lu",
					   ph[p].at[1], ph[p].at[0]);
		int r = bench__metric_add(m, why, whylen, ph[p].up[1] - ph[p].up[0], "s", false,
					  "%s", ph[p].name);
		if (r < 0)
			return r;
	}
	return 0;
}
