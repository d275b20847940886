// SPDX-License-Identifier: GPL-2.0-or-later
/* perf bench numa mem (one test, "main"), default format: after the
 * progress lines, one row per result,
 *
 *    main,                                    0.882, secs,           NUMA-convergence-latency
 *    main,                                    6.548, GB/sec,         thread-speed
 *
 * The convergence row is there with -m once the tasks converged; the
 * others always.  Rows of names this parser does not know (a later perf)
 * are skipped; a known name with another unit is an error, never a
 * converted guess. */
#include <string.h>

#include "bench_parse_impl.h"

static const struct numa_row {
	const char *name, *unit; /* as perf prints them */
	const char *metric, *metric_unit;
	bool higher, required;
} rows[] = {
	{ "NUMA-convergence-latency", "secs", "convergence", "s", false, false },
	{ "runtime-max/thread", "secs", "runtime_max", "s", false, true },
	{ "runtime-min/thread", "secs", "runtime_min", "s", false, true },
	{ "runtime-avg/thread", "secs", "runtime_avg", "s", false, true },
	{ "spread-runtime/thread", "%", "runtime_spread", "%", false, true },
	{ "data/thread", "GB", "data_per_thread", "GB", true, true },
	{ "data-total", "GB", "data_total", "GB", true, true },
	{ "runtime/byte/thread", "nsecs", "ns_per_byte", "ns", false, true },
	{ "thread-speed", "GB/sec", "thread_speed", "GB/s", true, true },
	{ "total-speed", "GB/sec", "total_speed", "GB/s", true, true },
};
#define NUMA_ROWS (sizeof(rows) / sizeof(rows[0]))

/* the next comma-separated field, blanks around it cut */
static struct bench__cur field(struct bench__cur *c)
{
	bench__skip_blanks(c);
	struct bench__cur f = { c->p, c->p };
	while (c->p < c->end && *c->p != ',')
		c->p++;
	f.end = c->p;
	while (f.end > f.p && (f.end[-1] == ' ' || f.end[-1] == '\t'))
		f.end--;
	if (c->p < c->end)
		c->p++; /* the comma */
	return f;
}

static bool field_is(const struct bench__cur *f, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(f->end - f->p) == n && memcmp(f->p, s, n) == 0;
}

static int numa_line(const struct bench__line *l, unsigned long *seen, double *val, char *why,
		     size_t whylen)
{
	static const char expected[] = "' main, <value>, <unit>, <name>'";
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];

	bench__skip_blanks(&c);
	if (!bench__eat(&c, "main,"))
		return 0;
	struct bench__cur num = field(&c), unit = field(&c), name = field(&c);
	if (!bench__cur_done(&c))
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__quote(l->s, l->len, q, sizeof(q)));
	size_t k = 0;
	while (k < NUMA_ROWS && !field_is(&name, rows[k].name))
		k++;
	if (k == NUMA_ROWS)
		return 0;
	if (!field_is(&unit, rows[k].unit))
		return bench__fail(why, whylen, "line %lu: expected '%s' in %s, found '%s'", l->no,
				   rows[k].unit, rows[k].name,
				   bench__quote(unit.p, (size_t)(unit.end - unit.p), q, sizeof(q)));
	int r = bench__once(&seen[k], l, rows[k].name, why, whylen);
	if (r == 0) {
		struct bench__cur n = num; /* the field alone: a number, then nothing */
		r = bench__value_line(&n, l, expected, NULL, &val[k], why, whylen);
	}
	return r;
}

int bench__parse_perf_numa(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			   char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l;
	unsigned long seen[NUMA_ROWS] = { 0 };
	double val[NUMA_ROWS] = { 0 };
	int r = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		r = bench__perf_check_running(&l, "numa/mem", why, whylen);
		if (r == 0)
			r = numa_line(&l, seen, val, why, whylen);
	}
	for (size_t k = 0; r == 0 && k < NUMA_ROWS; k++)
		if (rows[k].required && !seen[k])
			r = bench__fail(why, whylen,
					"no ' main, <value>, %s, %s' line: output "
					"truncated?",
					rows[k].unit, rows[k].name);
	for (size_t k = 0; r == 0 && k < NUMA_ROWS; k++)
		if (seen[k])
			r = bench__metric_add(m, why, whylen, val[k], rows[k].metric_unit,
					      rows[k].higher, "%s", rows[k].metric);
	return r;
}
