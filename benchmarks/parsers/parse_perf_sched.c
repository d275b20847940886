// SPDX-License-Identifier: GPL-2.0-or-later
/* perf bench sched pipe and sched messaging, default format:
 *
 *   # Running 'sched/pipe' benchmark:
 *   # Executed 2000 pipe operations between two processes
 *
 *        Total time: 0.021 [sec]
 *
 *         10.647000 usecs/op
 *             93923 ops/sec
 *
 * (messaging prints the Total time line only), or with `perf bench -f
 * simple` the total time alone: "0.021".  perf bench syscall basic
 * ("# Running 'syscall/basic'", "# Executed N getppid() calls") prints
 * what sched pipe prints. */
#include <string.h>

#include "bench_parse_impl.h"

struct perf_out {
	unsigned long time_at, usecs_at, ops_at, simple_at, lines;
	double time, usecs, ops;
};

/* "# Running 'sched/pipe' benchmark:" names the benchmark: output of
 * another one is an error, not a time */
int bench__perf_check_running(const struct bench__line *l, const char *bench, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];

	if (!bench__eat(&c, "# Running '"))
		return 0;
	size_t n = strlen(bench);
	if ((size_t)(c.end - c.p) > n && memcmp(c.p, bench, n) == 0 && c.p[n] == '\'')
		return 0;
	return bench__fail(why, whylen, "line %lu: expected \"# Running '%s' benchmark:\", found '%s'",
			   l->no, bench, bench__quote(l->s, l->len, q, sizeof(q)));
}

static int perf_line(struct perf_out *o, const struct bench__line *l, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	int r;

	if (bench__eat_label(&c, "Total time:")) {
		r = bench__once(&o->time_at, l, "'Total time:' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'Total time: <seconds> [sec]'", "[sec]",
						 &o->time, why, whylen);
	}
	if (bench__line_has(l, "usecs/op")) {
		r = bench__once(&o->usecs_at, l, "'usecs/op' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'<usecs> usecs/op'", "usecs/op", &o->usecs,
						 why, whylen);
	}
	if (bench__line_has(l, "ops/sec")) {
		r = bench__once(&o->ops_at, l, "'ops/sec' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'<ops> ops/sec'", "ops/sec", &o->ops, why,
						 whylen);
	}
	/* -f simple: one line that is a number and nothing else */
	double v;
	bench__skip_blanks(&c);
	if (l->len > 0 && l->s[0] != '#' && bench__number(&c, &v) == 0 && bench__rest_blank(&c) &&
	    v >= 0) {
		o->simple_at = l->no;
		o->time = v;
	}
	return 0;
}

static int perf_parse(const char *out, size_t len, const char *bench, bool pipe,
		      struct bench_metrics *m, char *why, size_t whylen)
{
	struct perf_out o = { 0 };
	struct bench__lines it;
	struct bench__line l;
	int r;

	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		if (bench__line_blank(&l))
			continue;
		o.lines++;
		r = bench__perf_check_running(&l, bench, why, whylen);
		if (r == 0)
			r = perf_line(&o, &l, why, whylen);
		if (r < 0)
			return r;
	}
	if (!o.time_at) {
		if (o.simple_at && o.lines == 1)
			return bench__metric_add(m, why, whylen, o.time, "s", false, "time");
		return bench__fail(why, whylen,
				   "no 'Total time: <seconds> [sec]' line: output truncated?");
	}
	if (pipe && !o.usecs_at)
		return bench__fail(why, whylen, "no '<usecs> usecs/op' line: output truncated?");
	if (pipe && !o.ops_at)
		return bench__fail(why, whylen, "no '<ops> ops/sec' line: output truncated?");
	r = bench__metric_add(m, why, whylen, o.time, "s", false, "time");
	if (r == 0 && pipe)
		r = bench__metric_add(m, why, whylen, o.usecs, "us", false, "usecs_per_op");
	if (r == 0 && pipe)
		r = bench__metric_add(m, why, whylen, o.ops, "ops/s", true, "ops_per_sec");
	return r;
}

int bench__parse_perf_sched_pipe(const char *out, size_t len, const char *arg,
				 struct bench_metrics *m, char *why, size_t whylen)
{
	(void)arg;
	return perf_parse(out, len, "sched/pipe", true, m, why, whylen);
}

int bench__parse_perf_sched_messaging(const char *out, size_t len, const char *arg,
				      struct bench_metrics *m, char *why, size_t whylen)
{
	(void)arg;
	return perf_parse(out, len, "sched/messaging", false, m, why, whylen);
}

int bench__parse_perf_syscall(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			      char *why, size_t whylen)
{
	(void)arg;
	return perf_parse(out, len, "syscall/basic", true, m, why, whylen);
}
