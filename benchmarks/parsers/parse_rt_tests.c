// SPDX-License-Identifier: GPL-2.0-or-later
/* rt-tests beside cyclictest and hackbench: pmqtest, pi_stress and
 * rt-migrate-test (rt-tests 2.x), in the forms MMTests runs them.
 *
 * pmqtest -q: one line per pair of threads naming both, then the latency
 * of each pair (receiver -> sender), in microseconds:
 *
 *   #0: ID11157, P99, CPU1, I1000; #1: ID11159, P99, CPU0, TO 0, Cycles 1652
 *   #1 -> #0, Min    5, Cur   39, Avg   57, Max 2491
 *
 * pi_stress: "Total inversion performed: <n>" and "Test Duration: <d> days,
 * <h> hours, <m> minutes, <s> seconds" at the end.
 *
 * rt-migrate-test: per task, after "Parent pid:",
 *
 *    Task 0 (prio 2) (pid 15897):
 *      Max: 20059 us
 *      Min: 36 us
 *      Tot: 80231 us
 *      Avg: 16046 us
 *
 * and with --check " Passed!" or " Failed!" (an error: a task of lower
 * priority ran first). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define PMQ_PAIRS_MAX ((BENCH_METRICS_MAX - 3) / 3)
#define RTM_TASKS_MAX ((BENCH_METRICS_MAX - 2) / 2)

/* "<label> <n>," or "<label> <n>" at the end: one field of a pmqtest line */
static int pmq_field(struct bench__cur *c, const struct bench__line *l, const char *label,
		     double *v, char *why, size_t whylen)
{
	char expected[48], q[BENCH_QUOTE_MAX];

	snprintf(expected, sizeof(expected), "'%s <us>'", label);
	bench__skip_blanks(c);
	if (!bench__eat(c, label))
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c->p, q, sizeof(q)));
	bench__skip_blanks(c);
	const char *at = c->p;
	int r = bench__number(c, v);
	if (r < 0 || *v < 0 || (c->p < c->end && *c->p != ',' && *c->p != ' ' && *c->p != '\t'))
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, at, q, sizeof(q)));
	bench__eat(c, ",");
	return 0;
}

struct pmq_pair {
	unsigned long at;
	double min, avg, max;
};

int bench__parse_pmqtest(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			 char *why, size_t whylen)
{
	struct pmq_pair pairs[PMQ_PAIRS_MAX] = { 0 };
	struct bench__lines it;
	struct bench__line l;
	size_t nids = 0, npairs = 0;
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		double rx, tx;

		if (!bench__eat(&c, "#") || bench__number(&c, &rx) < 0)
			continue;
		if (bench__eat(&c, ": ID")) {
			nids++;
			continue;
		}
		bench__skip_blanks(&c);
		if (!bench__eat(&c, "-> #") || bench__number(&c, &tx) < 0 || !bench__eat(&c, ","))
			continue;
		/* pair k is threads #2k (sender) and #2k+1 (receiver) */
		/* range first: a cast of a number out of size_t's range is
		 * undefined (the fuzzer sent #3.3e25) */
		if (!(tx >= 0 && tx / 2 < PMQ_PAIRS_MAX) || tx != floor(tx) || fmod(tx, 2) != 0 ||
		    rx != tx + 1)
			return bench__fail(why, whylen,
					   "line %lu: thread #%.0f -> #%.0f is not a pair "
					   "of pmqtest (at most %d pairs)",
					   l.no, rx, tx, PMQ_PAIRS_MAX);
		struct pmq_pair *p = &pairs[(size_t)tx / 2];
		double cur;
		r = bench__once(&p->at, &l, "line for this pair", why, whylen);
		if (r == 0)
			r = pmq_field(&c, &l, "Min", &p->min, why, whylen);
		if (r == 0)
			r = pmq_field(&c, &l, "Cur", &cur, why, whylen);
		if (r == 0)
			r = pmq_field(&c, &l, "Avg", &p->avg, why, whylen);
		if (r == 0)
			r = pmq_field(&c, &l, "Max", &p->max, why, whylen);
		if (r == 0 && !bench__rest_blank(&c))
			r = bench__fail(why, whylen, "line %lu: unexpected text after 'Max <us>'",
					l.no);
		npairs++;
	}
	if (r < 0)
		return r;
	if (npairs == 0)
		return bench__fail(why, whylen,
				   "no '#1 -> #0, Min <us>, Cur <us>, Avg <us>, Max <us>' "
				   "line: not pmqtest -q output, or cut?");
	if (npairs != nids)
		return bench__fail(why, whylen,
				   "%zu pairs of threads started ('#N: ID' lines), %zu "
				   "reported: output cut?",
				   nids, npairs);
	double min = 0, max = 0, sum = 0;
	size_t k = 0;
	for (size_t i = 0; i < PMQ_PAIRS_MAX && k < npairs; i++) {
		if (!pairs[i].at)
			return bench__fail(why, whylen,
					   "no line for the pair #%zu -> #%zu: output cut?",
					   2 * i + 1, 2 * i);
		min = k == 0 || pairs[i].min < min ? pairs[i].min : min;
		max = pairs[i].max > max ? pairs[i].max : max;
		sum += pairs[i].avg;
		k++;
	}
	/* the pairs run for the same time at the same interval: their
	 * averages weigh the same */
	r = bench__metric_add(m, why, whylen, min, "us", false, "lat_min");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, sum / (double)npairs, "us", false, "lat_avg");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, max, "us", false, "lat_max");
	for (size_t i = 0; r == 0 && i < npairs; i++) {
		r = bench__metric_add(m, why, whylen, pairs[i].min, "us", false, "p%zu.lat_min", i);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, pairs[i].avg, "us", false,
					      "p%zu.lat_avg", i);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, pairs[i].max, "us", false,
					      "p%zu.lat_max", i);
	}
	return r;
}

/* "Test Duration: <d> days, <h> hours, <m> minutes, <s> seconds" */
static int pi_duration(struct bench__cur *c, const struct bench__line *l, double *secs, char *why,
		       size_t whylen)
{
	static const char *const units[] = { "days", "hours", "minutes", "seconds" };
	static const double scale[] = { 86400, 3600, 60, 1 };
	char q[BENCH_QUOTE_MAX];

	*secs = 0;
	for (size_t i = 0; i < 4; i++) {
		double v;
		int r = bench__number_at(c, l, "'<n> days, <n> hours, <n> minutes, <n> seconds'",
					 &v, why, whylen);
		if (r < 0)
			return r;
		bench__skip_blanks(c);
		if (!bench__eat(c, units[i]))
			return bench__fail(why, whylen, "line %lu: expected '%s', found '%s'",
					   l->no, units[i], bench__found(l, c->p, q, sizeof(q)));
		bench__eat(c, ",");
		*secs += v * scale[i];
	}
	return 0;
}

int bench__parse_pi_stress(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			   char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l;
	unsigned long start_at = 0, total_at = 0, dur_at = 0;
	double total = 0, secs = 0;
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);

		if (bench__eat(&c, "Starting PI Stress Test")) {
			r = bench__once(&start_at, &l, "'Starting PI Stress Test' line", why, whylen);
		} else if (bench__eat_label(&c, "Total inversion performed:")) {
			r = bench__once(&total_at, &l, "'Total inversion performed:' line", why,
					whylen);
			if (r == 0)
				r = bench__value_line(&c, &l, "'Total inversion performed: <n>'",
						      NULL, &total, why, whylen);
		} else if (bench__eat_label(&c, "Test Duration:")) {
			r = bench__once(&dur_at, &l, "'Test Duration:' line", why, whylen);
			if (r == 0)
				r = pi_duration(&c, &l, &secs, why, whylen);
		}
	}
	if (r < 0)
		return r;
	if (!start_at)
		return bench__fail(why, whylen,
				   "no 'Starting PI Stress Test' line: not pi_stress's output?");
	if (!total_at || !dur_at)
		return bench__fail(why, whylen, "no '%s' line: output truncated?",
				   !total_at ? "Total inversion performed: <n>" : "Test Duration:");
	if (secs <= 0)
		return bench__fail(why, whylen, "line %lu: a test of 0 seconds has no rate", dur_at);
	r = bench__metric_add(m, why, whylen, total, "inversions", true, "inversions");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, total / secs, "inversions/s", true,
				      "inversions_per_sec");
	return r;
}

struct rtm_task {
	double v[4]; /* Max Min Tot Avg */
	unsigned seen;
};

int bench__parse_rt_migrate(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			    char *why, size_t whylen)
{
	static const char *const labels[] = { "Max:", "Min:", "Tot:", "Avg:" };
	struct rtm_task tasks[RTM_TASKS_MAX] = { 0 };
	struct bench__lines it;
	struct bench__line l;
	unsigned long parent_at = 0;
	size_t ntasks = 0;
	struct rtm_task *cur = NULL;
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		double n;

		bench__skip_blanks(&c);
		if (bench__eat(&c, "Parent pid:")) {
			r = bench__once(&parent_at, &l, "'Parent pid:' line", why, whylen);
			continue;
		}
		if (bench__eat(&c, "Failed!"))
			return bench__fail(why, whylen,
					   "line %lu: rt-migrate-test --check failed: a task "
					   "of lower priority ran before one of higher",
					   l.no);
		if (!parent_at)
			continue;
		if (bench__eat(&c, "Task ") && bench__number(&c, &n) == 0 && bench__eat(&c, " (prio")) {
			if (n != (double)ntasks || ntasks == RTM_TASKS_MAX)
				return bench__fail(why, whylen,
						   "line %lu: expected task %zu (at most %d), "
						   "found task %.0f",
						   l.no, ntasks, RTM_TASKS_MAX, n);
			if (cur && cur->seen != 0xf)
				return bench__fail(why, whylen,
						   "line %lu: task %zu lacks its Max, Min, Tot "
						   "or Avg line",
						   l.no, ntasks - 1);
			cur = &tasks[ntasks++];
			continue;
		}
		for (size_t i = 0; cur && i < 4; i++) {
			if (!bench__eat(&c, labels[i]))
				continue;
			if (cur->seen & (1u << i))
				return bench__fail(why, whylen,
						   "line %lu: a second '%s' line for task %zu",
						   l.no, labels[i], ntasks - 1);
			r = bench__value_line(&c, &l, "'<label> <us> us'", "us", &cur->v[i], why,
					      whylen);
			cur->seen |= 1u << i;
			break;
		}
	}
	if (r < 0)
		return r;
	if (!parent_at)
		return bench__fail(why, whylen,
				   "no 'Parent pid:' line: not rt-migrate-test's output, "
				   "or cut before its summary?");
	if (ntasks == 0 || cur->seen != 0xf)
		return bench__fail(why, whylen,
				   "the summary of task %zu is incomplete: output truncated?",
				   ntasks ? ntasks - 1 : 0);
	double max = 0, avg = 0;
	for (size_t i = 0; i < ntasks; i++) {
		max = tasks[i].v[0] > max ? tasks[i].v[0] : max;
		avg += tasks[i].v[3];
	}
	/* every task runs the same loops: their averages weigh the same */
	r = bench__metric_add(m, why, whylen, max, "us", false, "lat_max");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, avg / (double)ntasks, "us", false, "lat_avg");
	for (size_t i = 0; r == 0 && i < ntasks; i++) {
		r = bench__metric_add(m, why, whylen, tasks[i].v[0], "us", false, "t%zu.lat_max", i);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, tasks[i].v[3], "us", false,
					      "t%zu.lat_avg", i);
	}
	return r;
}
