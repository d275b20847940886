// SPDX-License-Identifier: GPL-2.0-or-later
/* stress-ng --metrics-brief (or --metrics), on stderr:
 *
 *   stress-ng: metrc: [12473] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
 *   stress-ng: metrc: [12473]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
 *   stress-ng: metrc: [12473] cpu                2819      1.00      1.14      0.02      2817.34        2428.65
 *   stress-ng: metrc: [12473] switch           419695      1.00      0.08      0.76    419547.06      500684.77
 *   stress-ng: metrc: [12473] miscellaneous metrics:
 *
 * Older releases (before 0.14) print "info:" where this says "metrc:";
 * --log-brief drops the "stress-ng: level: [pid]" prefix; --metrics adds
 * columns after the six read here (CPU used per instance, RSS max).
 * The argument names the stressor whose metrics are read unprefixed, or is
 * '*': the one stressor of a run of one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define SN_STRESSORS_MAX (BENCH_METRICS_MAX / 3)
#define SN_NAME_MAX 40

int bench__check_stress_ng_arg(const char *arg, char *why, size_t whylen)
{
	size_t n = arg ? strlen(arg) : 0;

	if (!arg || strcmp(arg, "*") == 0)
		return 0;
	if (n == 0 || n > SN_NAME_MAX || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
		snprintf(why, whylen,
			 "stress-ng parser: '%s' is not a stressor name "
			 "(1 to %d characters of [a-z0-9_-])",
			 arg, SN_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

/* past "stress-ng: <level>: [<pid>] " when the line has it */
static void skip_prefix(struct bench__cur *c)
{
	struct bench__cur t = *c;

	if (!bench__eat(&t, "stress-ng:"))
		return;
	bench__skip_blanks(&t);
	while (t.p < t.end && *t.p >= 'a' && *t.p <= 'z')
		t.p++;
	if (!bench__eat(&t, ":"))
		return;
	bench__skip_blanks(&t);
	if (!bench__eat(&t, "["))
		return;
	while (t.p < t.end && *t.p >= '0' && *t.p <= '9')
		t.p++;
	if (!bench__eat(&t, "]"))
		return;
	bench__skip_blanks(&t);
	*c = t;
}

struct sn_row {
	char name[SN_NAME_MAX + 1];
	unsigned long at;
	double v[6]; /* bogo ops, real, usr, sys, ops/s real, ops/s usr+sys */
};

struct sn_state {
	unsigned long header_at, hogs_at;
	/* "dispatching hogs: 2 cpu, 1 switch": what must have a row */
	size_t nhogs;
	char hogs[SN_STRESSORS_MAX][SN_NAME_MAX + 1];
	bool in_table;
	struct sn_row rows[SN_STRESSORS_MAX]; /* by hog; .at 0 until seen */
};

/* a row of the table: the stressor's name, then six numbers at least */
static int sn_row(struct sn_state *s, struct bench__cur *c, const struct bench__line *l, char *why,
		  size_t whylen)
{
	static const char expected[] = "'<stressor> <bogo ops> <real s> <usr s> <sys s> "
				       "<bogo ops/s real> <bogo ops/s usr+sys>'";
	const char *name = c->p;
	char q[BENCH_QUOTE_MAX];
	struct sn_row row;
	int r;

	while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
		c->p++;
	size_t n = (size_t)(c->p - name);
	if (n > SN_NAME_MAX || memchr(name, '\0', n))
		return bench__fail(why, whylen, "line %lu: expected a stressor name, found '%s'",
				   l->no, bench__quote(name, n, q, sizeof(q)));
	memcpy(row.name, name, n);
	row.name[n] = '\0';
	row.at = l->no;
	for (int i = 0; i < 6; i++) {
		r = bench__number_at(c, l, expected, &row.v[i], why, whylen);
		if (r < 0)
			return r;
	}
	while (!bench__rest_blank(c)) { /* --metrics columns */
		double extra;

		r = bench__number_at(c, l, expected, &extra, why, whylen);
		if (r < 0)
			return r;
	}
	size_t h = 0;
	while (h < s->nhogs && strcmp(s->hogs[h], row.name) != 0)
		h++;
	if (h == s->nhogs)
		return bench__fail(why, whylen,
				   "line %lu: a row for stressor '%s', which no 'dispatching hogs:' line names",
				   l->no, row.name);
	if (s->rows[h].at)
		return bench__fail(why, whylen,
				   "line %lu: stressor '%s' a second time (the first is line %lu): two runs in one output?",
				   l->no, row.name, s->rows[h].at);
	/* stress-ng prints a rate of 0 when its time is 0: that is no rate */
	if ((row.v[1] == 0 && row.v[4] == 0) || (row.v[2] + row.v[3] == 0 && row.v[5] == 0))
		return bench__fail(why, whylen,
				   "line %lu: stressor '%s' ran for 0 s: its bogo ops/s are undefined",
				   l->no, row.name);
	s->rows[h] = row;
	return 0;
}

/* "dispatching hogs: 2 cpu, 1 switch" */
static int sn_hogs(struct sn_state *s, struct bench__cur *c, const struct bench__line *l, char *why,
		   size_t whylen)
{
	static const char expected[] = "'dispatching hogs: <N> <stressor>, ...'";
	char q[BENCH_QUOTE_MAX];
	double n;
	int r = bench__once(&s->hogs_at, l, "'dispatching hogs:' line", why, whylen);

	while (r == 0 && !bench__rest_blank(c)) {
		r = bench__number_at(c, l, expected, &n, why, whylen);
		if (r < 0)
			return r;
		bench__skip_blanks(c);
		const char *name = c->p;
		while (c->p < c->end && *c->p != ',' && *c->p != ' ' && *c->p != '\t')
			c->p++;
		size_t len = (size_t)(c->p - name);
		if (s->nhogs >= SN_STRESSORS_MAX)
			return bench__fail(why, whylen, "line %lu: more than %d stressors", l->no,
					   SN_STRESSORS_MAX);
		if (len == 0 || len > SN_NAME_MAX || memchr(name, '\0', len))
			return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
					   expected, bench__found(l, name, q, sizeof(q)));
		memcpy(s->hogs[s->nhogs], name, len);
		s->hogs[s->nhogs++][len] = '\0';
		bench__skip_blanks(c);
		bench__eat(c, ",");
	}
	if (r == 0 && s->nhogs == 0)
		return bench__fail(why, whylen, "line %lu: expected %s, found no stressor", l->no,
				   expected);
	return r;
}

static int sn_line(struct sn_state *s, const struct bench__line *l, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	int r;

	skip_prefix(&c);
	if (bench__eat(&c, "dispatching hogs:"))
		return sn_hogs(s, &c, l, why, whylen);
	if (bench__eat(&c, "stressor") && bench__line_has(l, "bogo ops")) {
		r = bench__once(&s->header_at, l, "stress-ng metrics table", why, whylen);
		s->in_table = true;
		return r;
	}
	if (!s->in_table)
		return 0;
	bench__skip_blanks(&c);
	if (bench__eat(&c, "(secs)"))
		return 0;
	/* a row is a name and a number; anything else ends the table */
	struct bench__cur t = c;
	double v;
	while (t.p < t.end && *t.p != ' ' && *t.p != '\t')
		t.p++;
	bench__skip_blanks(&t);
	if (t.p == c.p || bench__number(&t, &v) < 0) {
		s->in_table = false;
		return 0;
	}
	return sn_row(s, &c, l, why, whylen);
}

int bench__parse_stress_ng(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			   char *why, size_t whylen)
{
	static struct sn_state zero;
	struct sn_state s = zero;
	struct bench__lines it;
	struct bench__line l;
	int r;

	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		r = sn_line(&s, &l, why, whylen);
		if (r < 0)
			return r;
	}
	if (!s.hogs_at)
		return bench__fail(why, whylen, "no 'dispatching hogs:' line: not stress-ng's output?");
	if (!s.header_at)
		return bench__fail(why, whylen,
				   "no metrics table ('stressor  bogo ops ...'): run with --metrics-brief");
	/* "*": the one stressor of the run, whichever it is (MMTests'
	 * stressng picks it with STRESSNG_TESTNAME) */
	if (arg && strcmp(arg, "*") == 0) {
		if (s.nhogs != 1)
			return bench__fail(why, whylen,
					   "line %lu: %zu stressors dispatched; the "
					   "argument '*' reads a run of one",
					   s.hogs_at, s.nhogs);
		arg = s.hogs[0];
	}
	bool named = !arg;
	for (size_t i = 0; i < s.nhogs; i++) {
		const struct sn_row *w = &s.rows[i];
		const char *dot = arg ? "" : ".";
		const char *pre = arg ? "" : w->name;

		/* a table cut short loses rows silently: every stressor
		 * dispatched must have one */
		if (!w->at)
			return bench__fail(why, whylen,
					   "no row for stressor '%s', dispatched at line %lu: output truncated?",
					   s.hogs[i], s.hogs_at);
		if (arg && strcmp(arg, w->name) != 0)
			continue;
		named = true;
		r = bench__metric_add(m, why, whylen, w->v[0], "bogo-ops", true, "%s%sbogo_ops",
				      pre, dot);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, w->v[4], "bogo-ops/s", true,
					      "%s%sbogo_ops_s", pre, dot);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, w->v[5], "bogo-ops/s", true,
					      "%s%sbogo_ops_s_usr_sys", pre, dot);
		if (r < 0)
			return r;
	}
	if (!named)
		return bench__fail(why, whylen, "no row for stressor '%s' in the metrics table", arg);
	return 0;
}
