// SPDX-License-Identifier: GPL-2.0-or-later
/* dbench 4 (and tbench, its network twin): the last line sums the run,
 *
 *   Throughput 122.945 MB/sec  2 clients  2 procs  max_latency=49.919 ms
 *
 * after the per-operation table; the "execute" lines before it are
 * progress.  throughput (MB/s, higher) and max_latency (ms, lower). */
#include "bench_parse_impl.h"

int bench__parse_dbench(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			char *why, size_t whylen)
{
	static const char expected[] = "'Throughput <MB/s> MB/sec ... max_latency=<ms> ms'";
	struct bench__lines it;
	struct bench__line l;
	unsigned long seen = 0;
	double tput = 0, lat = 0;
	char q[BENCH_QUOTE_MAX];
	int r;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);

		if (!bench__eat(&c, "Throughput "))
			continue;
		r = bench__once(&seen, &l, "'Throughput' line", why, whylen);
		if (r == 0)
			r = bench__number_at(&c, &l, expected, &tput, why, whylen);
		if (r < 0)
			return r;
		bench__skip_blanks(&c);
		if (!bench__eat(&c, "MB/sec"))
			return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l.no,
					   expected, bench__found(&l, c.p, q, sizeof(q)));
		while (c.p < c.end && !bench__eat(&c, "max_latency="))
			c.p++;
		if (bench__cur_done(&c))
			return bench__fail(why, whylen,
					   "line %lu: expected %s: no max_latency=", l.no, expected);
		r = bench__value_line(&c, &l, expected, "ms", &lat, why, whylen);
		if (r < 0)
			return r;
	}
	if (!seen)
		return bench__fail(why, whylen, "no %s line: output truncated?", expected);
	r = bench__metric_add(m, why, whylen, tput, "MB/s", true, "throughput");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, lat, "ms", false, "max_latency");
	return r;
}
