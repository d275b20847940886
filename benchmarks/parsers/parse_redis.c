// SPDX-License-Identifier: GPL-2.0-or-later
/* redis-benchmark --csv (redis 6 and 7): a header, then one row per test,
 * every field quoted:
 *
 *   "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
 *   "SET","249999.98","0.078","0.032","0.063","0.175","0.335","0.367"
 *   "LRANGE_100 (first 100 elements)","111111.12","0.160",...
 *
 * A test is named by its first word in lower case (set, lrange_100,
 * mset); the "LPUSH (needed to benchmark LRANGE)" row only fills the list
 * for LRANGE and is skipped.  Per test: <test>.rps (requests/s, higher),
 * <test>.lat_avg and <test>.lat_p99 (ms, lower). */
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define REDIS_FIELDS 8
#define REDIS_NAME_MAX 40

static const char header[] = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\","
			     "\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\","
			     "\"max_latency_ms\"";

/* one quoted field: its text (without quotes) in [*s, *e) */
static bool field(struct bench__cur *c, const char **s, const char **e)
{
	if (!bench__eat(c, "\""))
		return false;
	*s = c->p;
	while (c->p < c->end && *c->p != '"')
		c->p++;
	if (c->p == c->end)
		return false;
	*e = c->p++;
	return c->p == c->end || bench__eat(c, ",");
}

static int redis_row(const struct bench__line *l, struct bench_metrics *m, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	const char *s[REDIS_FIELDS], *e[REDIS_FIELDS];
	char q[BENCH_QUOTE_MAX], name[REDIS_NAME_MAX + 1];
	double v[REDIS_FIELDS];

	for (size_t i = 0; i < REDIS_FIELDS; i++)
		if (!field(&c, &s[i], &e[i]))
			return bench__fail(why, whylen,
					   "line %lu: expected %d quoted fields, found '%s'", l->no,
					   REDIS_FIELDS, bench__quote(l->s, l->len, q, sizeof(q)));
	if (!bench__cur_done(&c))
		return bench__fail(why, whylen, "line %lu: more than %d fields", l->no, REDIS_FIELDS);
	static const char filler[] = "(needed to benchmark";
	size_t n = 0, flen = (size_t)(e[0] - s[0]);
	while (n < flen && s[0][n] != ' ')
		n++;
	if (memmem(s[0], flen, filler, sizeof(filler) - 1))
		return 0;
	if (n == 0 || n > REDIS_NAME_MAX)
		return bench__fail(why, whylen, "line %lu: '%s' is not the name of a test", l->no,
				   bench__quote(s[0], (size_t)(e[0] - s[0]), q, sizeof(q)));
	for (size_t i = 0; i < n; i++) {
		char ch = s[0][i];
		name[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
	}
	name[n] = '\0';
	for (size_t i = 1; i < REDIS_FIELDS; i++) {
		struct bench__cur f = { s[i], e[i] };
		if (i == 1 && e[i] - s[i] == 3 && memcmp(s[i], "inf", 3) == 0)
			return bench__fail(why, whylen,
					   "line %lu: %s ended too soon to be timed ('inf' "
					   "requests/s): give it more requests",
					   l->no, name);
		if (bench__number(&f, &v[i]) < 0 || !bench__cur_done(&f) || v[i] < 0)
			return bench__fail(why, whylen,
					   "line %lu: field %zu of %s is '%s', not a number "
					   ">= 0",
					   l->no, i + 1, name,
					   bench__quote(s[i], (size_t)(e[i] - s[i]), q, sizeof(q)));
	}
	snprintf(q, sizeof(q), "%s.rps", name);
	if (bench_metrics_get(m, q))
		return bench__fail(why, whylen,
				   "line %lu: a second row for %s: two runs in one "
				   "output?",
				   l->no, name);
	int r = bench__metric_add(m, why, whylen, v[1], "requests/s", true, "%s.rps", name);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, v[2], "ms", false, "%s.lat_avg", name);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, v[6], "ms", false, "%s.lat_p99", name);
	return r;
}

int bench__parse_redis_benchmark(const char *out, size_t len, const char *arg,
				 struct bench_metrics *m, char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l;
	unsigned long header_at = 0;
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		if (l.len == sizeof(header) - 1 && memcmp(l.s, header, l.len) == 0) {
			r = bench__once(&header_at, &l, "CSV header", why, whylen);
			continue;
		}
		if (header_at && l.len > 0 && l.s[0] == '"')
			r = redis_row(&l, m, why, whylen);
	}
	if (r < 0)
		return r;
	if (!header_at)
		return bench__fail(why, whylen,
				   "no '\"test\",\"rps\",...' header: not redis-benchmark "
				   "--csv output?");
	if (m->n == 0)
		return bench__fail(why, whylen, "no test rows after the header: output truncated?");
	return 0;
}
