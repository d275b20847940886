// SPDX-License-Identifier: GPL-2.0-or-later
/* pgbench 15 (Debian's postgresql-client-15): the summary after a run,
 *
 *   number of transactions actually processed: 16012
 *   number of failed transactions: 0 (0.000%)
 *   latency average = 0.249 ms
 *   initial connection time = 5.804 ms
 *   tps = 8027.175689 (without initial connection time)
 *
 * (pgbench 14 and older: "tps = N (excluding connections establishing)",
 * read the same; its "including" line is skipped).  What comes before,
 * `pgbench -i`'s progress included, and -r's statement latencies after,
 * are skipped.  A failed transaction or "Run was aborted" means the
 * numbers are not the whole run's: an error naming the line.  Each line
 * is read once; a second is two runs. */
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

enum pg_line { PG_TXNS, PG_FAILED, PG_LATENCY, PG_TPS, PG_LINES };

/* "<count>" (-T), or "<count>/<asked>" (-t): fewer than asked is a run
 * cut short (aborted clients). */
static int pg_processed(struct bench__cur *c, const struct bench__line *l, const char *expected,
			double *v, char *why, size_t whylen)
{
	char q[BENCH_QUOTE_MAX];
	double asked;

	bench__skip_blanks(c);
	if (bench__number(c, v) < 0 || *v < 0)
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c->p, q, sizeof(q)));
	if (!bench__eat(c, "/"))
		return bench__rest_blank(c)
			       ? 0
			       : bench__fail(why, whylen, "line %lu: expected %s, found '%s'",
					     l->no, expected, bench__found(l, c->p, q, sizeof(q)));
	int r = bench__value_line(c, l, expected, NULL, &asked, why, whylen);
	if (r == 0 && *v < asked)
		r = bench__fail(why, whylen,
				"line %lu: %.0f of the %.0f transactions asked for were "
				"processed: clients aborted?",
				l->no, *v, asked);
	return r;
}

int bench__parse_pgbench(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			 char *why, size_t whylen)
{
	static const char *const expected[PG_LINES] = {
		[PG_TXNS] = "'number of transactions actually processed: <count>'",
		[PG_FAILED] = "'number of failed transactions: <count> (<percent>%)'",
		[PG_LATENCY] = "'latency average = <ms> ms'",
		[PG_TPS] = "'tps = <number> (without initial connection time)'",
	};
	unsigned long seen[PG_LINES] = { 0 };
	double v[PG_LINES] = { 0 };
	struct bench__lines it;
	struct bench__line l;
	int r;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		const char *suffix = NULL;
		struct bench__cur c = bench__cur_of(&l);
		char q[BENCH_QUOTE_MAX];
		int k;

		if (bench__eat(&c, "Run was aborted"))
			return bench__fail(why, whylen,
					   "line %lu: '%s': the numbers are not the "
					   "whole run's",
					   l.no, bench__quote(l.s, l.len, q, sizeof(q)));
		if (bench__eat(&c, "number of transactions actually processed:")) {
			k = PG_TXNS;
		} else if (bench__eat(&c, "number of failed transactions:")) {
			k = PG_FAILED;
		} else if (bench__eat(&c, "latency average =")) {
			k = PG_LATENCY;
			suffix = "ms";
		} else if (bench__eat(&c, "tps =")) {
			if (bench__line_has(&l, "(including connections establishing)"))
				continue;
			k = PG_TPS;
			suffix = bench__line_has(&l, "(excluding")
					 ? "(excluding connections establishing)"
					 : "(without initial connection time)";
		} else {
			continue;
		}
		if (k == PG_TXNS) {
			r = pg_processed(&c, &l, expected[k], &v[k], why, whylen);
		} else if (k == PG_FAILED) {
			r = bench__number_at(&c, &l, expected[k], &v[k], why, whylen);
			bench__skip_blanks(&c);
			if (r == 0 && (c.p == c.end || *c.p != '('))
				r = bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l.no,
						expected[k], bench__found(&l, c.p, q, sizeof(q)));
		} else {
			r = bench__value_line(&c, &l, expected[k], suffix, &v[k], why, whylen);
		}
		if (r == 0)
			r = bench__once(&seen[k], &l, expected[k], why, whylen);
		if (r < 0)
			return r;
	}
	for (int k = 0; k < PG_LINES; k++)
		if (!seen[k])
			return bench__fail(why, whylen,
					   "no %s line: output truncated, or pgbench "
					   "failed?",
					   expected[k]);
	if (v[PG_FAILED] != 0)
		return bench__fail(why, whylen,
				   "line %lu: %.0f transactions failed: the numbers are "
				   "not the whole run's",
				   seen[PG_FAILED], v[PG_FAILED]);
	if (v[PG_TXNS] == 0)
		return bench__fail(why, whylen, "line %lu: no transaction was processed",
				   seen[PG_TXNS]);
	r = bench__metric_add(m, why, whylen, v[PG_TPS], "txn/s", true, "tps");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, v[PG_LATENCY], "ms", false, "latency_avg");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, v[PG_TXNS], "txn", true, "transactions");
	return r;
}
