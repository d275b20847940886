// SPDX-License-Identifier: GPL-2.0-or-later
/* sysbench 1.0 (1.0.20) reports, the same for cpu, threads and mutex but
 * for the "CPU speed" section, which only cpu prints:
 *
 *   CPU speed:
 *       events per second:  3411.45
 *
 *   General statistics:
 *       total time:                          0.0573s
 *       total number of events:              200
 *
 *   Latency (ms):
 *            min:                                    0.28
 *            avg:                                    0.28
 *            max:                                    0.35
 *            95th percentile:                        0.31
 *            sum:                                   56.98
 *
 * With --percentile=0 the percentile line reads "percentile stats:
 * disabled"; --histogram and --report-interval add lines that are not
 * read.  Threads fairness is not a result. */
#include "bench_parse_impl.h"

struct sb_out {
	unsigned long eps_at, time_at, events_at, min_at, avg_at, max_at, pct_at;
	double eps, time, events, min, avg, max, pct, pct_of;
	bool in_latency;
};

static int sb_latency_line(struct sb_out *o, const struct bench__line *l, char *why, size_t whylen)
{
	const struct {
		const char *label, *what, *expected;
		unsigned long *at;
		double *v;
	} rows[] = {
		{ "min:", "'min:' latency line", "'min: <ms>'", &o->min_at, &o->min },
		{ "avg:", "'avg:' latency line", "'avg: <ms>'", &o->avg_at, &o->avg },
		{ "max:", "'max:' latency line", "'max: <ms>'", &o->max_at, &o->max },
	};
	struct bench__cur c = bench__cur_of(l);
	int r;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!bench__eat_label(&c, rows[i].label))
			continue;
		r = bench__once(rows[i].at, l, rows[i].what, why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, rows[i].expected, NULL, rows[i].v, why, whylen);
	}
	/* "95th percentile:  0.31"; the percentile is a whole number 1..100 */
	double p;
	bench__skip_blanks(&c);
	if (bench__number(&c, &p) == 0 && bench__eat(&c, "th percentile:")) {
		r = bench__once(&o->pct_at, l, "'th percentile:' line", why, whylen);
		if (r < 0)
			return r;
		if (p < 1 || p > 100 || p != (double)(int)p)
			return bench__fail(why, whylen,
					   "line %lu: percentile %g is not a whole number from 1 to 100",
					   l->no, p);
		o->pct_of = p;
		return bench__value_line(&c, l, "'<N>th percentile: <ms>'", NULL, &o->pct, why, whylen);
	}
	return 0;
}

static int sb_line(struct sb_out *o, const struct bench__line *l, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	int r;

	if (bench__line_blank(l)) {
		o->in_latency = false;
		return 0;
	}
	if (bench__eat_label(&c, "Latency (ms):")) {
		o->in_latency = true;
		return 0;
	}
	if (o->in_latency)
		return sb_latency_line(o, l, why, whylen);
	if (bench__eat_label(&c, "events per second:")) {
		r = bench__once(&o->eps_at, l, "'events per second:' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'events per second: <N>'", NULL, &o->eps,
						 why, whylen);
	}
	if (bench__eat_label(&c, "total time:")) {
		r = bench__once(&o->time_at, l, "'total time:' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'total time: <seconds>s'", "s", &o->time,
						 why, whylen);
	}
	if (bench__eat_label(&c, "total number of events:")) {
		r = bench__once(&o->events_at, l, "'total number of events:' line", why, whylen);
		return r < 0 ? r
			     : bench__value_line(&c, l, "'total number of events: <N>'", NULL,
						 &o->events, why, whylen);
	}
	return 0;
}

static int sb_parse(const char *out, size_t len, bool cpu, struct bench_metrics *m, char *why,
		    size_t whylen)
{
	struct sb_out o = { 0 };
	struct bench__lines it;
	struct bench__line l;
	int r;

	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		r = sb_line(&o, &l, why, whylen);
		if (r < 0)
			return r;
	}
	if (cpu && !o.eps_at)
		return bench__fail(why, whylen, "no 'events per second:' line: output truncated?");
	if (!cpu && o.eps_at)
		return bench__fail(why, whylen,
				   "line %lu: 'events per second:' is in the output of sysbench cpu, "
				   "not of threads or mutex",
				   o.eps_at);
	if (!o.time_at)
		return bench__fail(why, whylen, "no 'total time:' line: output truncated?");
	if (!o.events_at)
		return bench__fail(why, whylen, "no 'total number of events:' line: output truncated?");
	if (!o.min_at || !o.avg_at || !o.max_at)
		return bench__fail(why, whylen,
				   "no 'Latency (ms):' section with min, avg and max: output truncated?");

	r = 0;
	if (cpu)
		r = bench__metric_add(m, why, whylen, o.eps, "events/s", true, "events_per_sec");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, o.events, "events", true, "events");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, o.time, "s", false, "time");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, o.min, "ms", false, "lat_min");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, o.avg, "ms", false, "lat_avg");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, o.max, "ms", false, "lat_max");
	if (r == 0 && o.pct_at)
		r = bench__metric_add(m, why, whylen, o.pct, "ms", false, "lat_p%d", (int)o.pct_of);
	return r;
}

int bench__parse_sysbench_cpu(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			      char *why, size_t whylen)
{
	(void)arg;
	return sb_parse(out, len, true, m, why, whylen);
}

int bench__parse_sysbench_threads(const char *out, size_t len, const char *arg,
				  struct bench_metrics *m, char *why, size_t whylen)
{
	(void)arg;
	return sb_parse(out, len, false, m, why, whylen);
}

int bench__parse_sysbench_mutex(const char *out, size_t len, const char *arg,
				struct bench_metrics *m, char *why, size_t whylen)
{
	(void)arg;
	return sb_parse(out, len, false, m, why, whylen);
}
