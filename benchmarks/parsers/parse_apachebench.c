// SPDX-License-Identifier: GPL-2.0-or-later
/* ApacheBench (ab 2.3, Debian's apache2-utils): a report of labelled lines
 * after the run,
 *
 *   Complete requests:      2000
 *   Failed requests:        0
 *   Requests per second:    1537.15 [#/sec] (mean)
 *   Time per request:       1.301 [ms] (mean)
 *   Time per request:       0.651 [ms] (mean, across all concurrent requests)
 *   Transfer rate:          98700.66 [Kbytes/sec] received
 *
 * then "Percentage of the requests served within a certain time (ms)" and
 * rows "  50%      1" up to " 100%     20 (longest request)" (not with
 * -d).  MMTests records the first "Time per request" (mean-request).  A
 * failed request or a non-2xx response means the numbers measure errors
 * (a missing page, a server gone): an error naming the line, not a
 * result.  Each labelled line is read once; a second is two runs. */
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

enum ab_line { AB_COMPLETE, AB_FAILED, AB_RPS, AB_TPR, AB_TPR_ALL, AB_RATE, AB_LINES };

static const struct {
	const char *label, *suffix, *metric, *unit;
	bool higher;
} ab_lines[AB_LINES] = {
	[AB_COMPLETE] = { "Complete requests:", NULL, NULL, NULL, true },
	[AB_FAILED] = { "Failed requests:", NULL, NULL, NULL, false },
	[AB_RPS] = { "Requests per second:", "[#/sec] (mean)", "rps", "requests/s", true },
	[AB_TPR] = { "Time per request:", "[ms] (mean)", "time_per_request", "ms", false },
	[AB_TPR_ALL] = { "Time per request:", "[ms] (mean, across all concurrent requests)",
			 "time_per_request_all", "ms", false },
	[AB_RATE] = { "Transfer rate:", "[Kbytes/sec] received", "transfer_rate", "KiB/s", true },
};

#define AB_PERCENTILES 16 /* ab prints 9 rows */

struct ab_report {
	unsigned long seen[AB_LINES], table;
	double v[AB_LINES];
	unsigned pct[AB_PERCENTILES];
	double pct_v[AB_PERCENTILES];
	size_t npct;
	bool table_done;
};

/* One "Label: <number> <suffix>" line; a "Time per request:" line is
 * either kind, told apart by its suffix. */
static int ab_labelled(struct ab_report *a, const struct bench__line *l, char *why, size_t whylen)
{
	for (int k = 0; k < AB_LINES; k++) {
		struct bench__cur c = bench__cur_of(l);
		char expected[96];
		double v;
		int r;

		if (!bench__eat(&c, ab_lines[k].label))
			continue;
		snprintf(expected, sizeof(expected), "'%s <number>%s%s'", ab_lines[k].label,
			 ab_lines[k].suffix ? " " : "", ab_lines[k].suffix ? ab_lines[k].suffix : "");
		if (k == AB_TPR && bench__line_has(l, "across all"))
			continue;
		/* "Failed requests: 5" is followed by a line of the kinds;
		 * the count is what matters */
		r = bench__value_line(&c, l, expected, ab_lines[k].suffix, &v, why, whylen);
		if (r == 0)
			r = bench__once(&a->seen[k], l, expected, why, whylen);
		if (r < 0)
			return r;
		a->v[k] = v;
		return 1;
	}
	return 0;
}

/* A row of the percentage table: "  <P>%  <ms>", the last with
 * "(longest request)". */
static int ab_row(struct ab_report *a, const struct bench__line *l, char *why, size_t whylen)
{
	static const char expected[] = "a row '<percent>% <ms>'";
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];
	double p, v;
	int r;

	bench__skip_blanks(&c);
	if (bench__number(&c, &p) < 0 || !bench__eat(&c, "%"))
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c.p, q, sizeof(q)));
	if (p < 1 || p > 100 || p != (unsigned)p || (a->npct && p <= a->pct[a->npct - 1]))
		return bench__fail(why, whylen,
				   "line %lu: percentile %g is not a whole number above "
				   "the row before and at most 100",
				   l->no, p);
	if (a->npct == AB_PERCENTILES)
		return bench__fail(why, whylen, "line %lu: more than %d percentile rows", l->no,
				   AB_PERCENTILES);
	bench__skip_blanks(&c);
	if (p == 100) {
		r = bench__number_at(&c, l, expected, &v, why, whylen);
		bench__skip_blanks(&c);
		if (r == 0 && (!bench__eat(&c, "(longest request)") || !bench__rest_blank(&c)))
			return bench__fail(why, whylen,
					   "line %lu: expected '100%% <ms> (longest "
					   "request)', found '%s'",
					   l->no, bench__found(l, c.p, q, sizeof(q)));
		a->table_done = true;
	} else {
		r = bench__value_line(&c, l, expected, NULL, &v, why, whylen);
	}
	if (r < 0)
		return r;
	a->pct[a->npct] = (unsigned)p;
	a->pct_v[a->npct++] = v;
	return 0;
}

static int ab_line(struct ab_report *a, const struct bench__line *l, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];

	if (a->table && !a->table_done)
		return ab_row(a, l, why, whylen);
	if (bench__eat(&c, "Percentage of the requests served"))
		return bench__once(&a->table, l, "percentage table", why, whylen);
	if (bench__eat(&c, "Non-2xx responses:"))
		return bench__fail(why, whylen,
				   "line %lu: '%s': the server answered with errors "
				   "(a missing page?), the numbers measure those",
				   l->no, bench__quote(l->s, l->len, q, sizeof(q)));
	int r = ab_labelled(a, l, why, whylen);
	return r < 0 ? r : 0;
}

int bench__parse_apachebench(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			     char *why, size_t whylen)
{
	struct ab_report a;
	struct bench__lines it;
	struct bench__line l;
	int r;

	(void)arg;
	memset(&a, 0, sizeof(a));
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		r = ab_line(&a, &l, why, whylen);
		if (r < 0)
			return r;
	}
	for (int k = 0; k < AB_LINES; k++)
		if (!a.seen[k])
			return bench__fail(why, whylen,
					   "no '%s ...%s%s' line: output truncated, or ab "
					   "failed?",
					   ab_lines[k].label, ab_lines[k].suffix ? " " : "",
					   ab_lines[k].suffix ? ab_lines[k].suffix : "");
	if (a.v[AB_COMPLETE] == 0)
		return bench__fail(why, whylen, "line %lu: no request completed", a.seen[AB_COMPLETE]);
	if (a.v[AB_FAILED] != 0)
		return bench__fail(why, whylen,
				   "line %lu: %.0f of the requests failed: the numbers "
				   "measure errors",
				   a.seen[AB_FAILED], a.v[AB_FAILED]);
	if (a.table && !a.table_done)
		return bench__fail(why, whylen,
				   "line %lu: the percentage table has no '100%%' row: "
				   "output truncated?",
				   a.table);
	r = 0;
	for (int k = AB_RPS; k < AB_LINES && r == 0; k++)
		r = bench__metric_add(m, why, whylen, a.v[k], ab_lines[k].unit, ab_lines[k].higher,
				      "%s", ab_lines[k].metric);
	for (size_t k = 0; k < a.npct && r == 0; k++)
		r = bench__metric_add(m, why, whylen, a.pct_v[k], "ms", false, "lat_p%u", a.pct[k]);
	return r;
}
