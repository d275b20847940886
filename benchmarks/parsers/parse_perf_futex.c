// SPDX-License-Identifier: GPL-2.0-or-later
/* perf bench futex <workload>, default format.  The argument names the
 * workload the spec ran; output of another one is an error.
 *
 *   # Running 'futex/hash' benchmark:
 *   Run summary [PID 11724]: 2 threads, each operating on 1024 [private] futexes for 10 secs.
 *   [thread  0] futexes: 0x5607868b6350 ... 0x5607868b734c [ 151859 ops/sec ]
 *   Averaged 178943 operations/sec (+- 15.14%), total secs = 10
 *
 * lock-pi ends the same way.  wake, wake-parallel and requeue print a line
 * per run ("[Run 3]: ...") and then their mean without the "[Run N]:":
 *
 *   Wokeup 2 of 2 threads in 0.1129 ms (+-31.71%)
 *   Avg per-thread latency (waking 1/2 threads) in 0.0126 ms (+-14.87%)
 *   Requeued 2 of 2 threads in 0.0104 ms (+-21.41%)
 *
 * requeue --pi (MMTests' requeue-pi) runs 'futex/requeue' with "to PI" in
 * its summary.  A run that woke or requeued fewer threads than it blocked
 * did not finish its work: an error, as MMTests counts it a failure
 * (wake-parallel's "waking 1/2 threads" is each waker's share). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

enum futex_kind { FX_RATE, FX_WAKE, FX_WAKE_PARALLEL, FX_REQUEUE };

static const struct futex_workload {
	const char *arg, *running;
	enum futex_kind kind;
	bool pi;
} workloads[] = {
	{ "hash", "futex/hash", FX_RATE, false },
	{ "lock-pi", "futex/lock-pi", FX_RATE, false },
	{ "wake", "futex/wake", FX_WAKE, false },
	{ "wake-parallel", "futex/wake-parallel", FX_WAKE_PARALLEL, false },
	{ "requeue", "futex/requeue", FX_REQUEUE, false },
	{ "requeue-pi", "futex/requeue", FX_REQUEUE, true },
};

static const struct futex_workload *workload_of(const char *arg)
{
	for (size_t i = 0; arg && i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (strcmp(workloads[i].arg, arg) == 0)
			return &workloads[i];
	return NULL;
}

int bench__check_perf_futex_arg(const char *arg, char *why, size_t whylen)
{
	if (workload_of(arg))
		return 0;
	snprintf(why, whylen,
		 "perf-futex parser: '%s' is not one of hash, lock-pi, wake, "
		 "wake-parallel, requeue, requeue-pi",
		 arg ? arg : "");
	return -EINVAL;
}

struct futex_out {
	unsigned long running_at, summary_at, result_at;
	double value;
};

static int check_running(const struct futex_workload *w, const struct bench__line *l,
			 struct futex_out *o, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];
	size_t n = strlen(w->running);

	bench__eat(&c, "# Running '");
	if ((size_t)(c.end - c.p) <= n || memcmp(c.p, w->running, n) != 0 || c.p[n] != '\'')
		return bench__fail(why, whylen,
				   "line %lu: expected \"# Running '%s' benchmark:\", "
				   "found '%s'",
				   l->no, w->running, bench__quote(l->s, l->len, q, sizeof(q)));
	return bench__once(&o->running_at, l, "'# Running' line", why, whylen);
}

static int check_summary(const struct futex_workload *w, const struct bench__line *l,
			 struct futex_out *o, char *why, size_t whylen)
{
	char q[BENCH_QUOTE_MAX];
	int r = bench__once(&o->summary_at, l, "'Run summary' line", why, whylen);

	if (r == 0 && w->kind == FX_REQUEUE && bench__line_has(l, " to PI ") != w->pi)
		r = bench__fail(why, whylen, "line %lu: %s: '%s'", l->no,
				w->pi ? "expected a requeue to a PI futex (requeue --pi)"
				      : "a requeue to a PI futex, not a plain requeue",
				bench__quote(l->s, l->len, q, sizeof(q)));
	return r;
}

/* "<done> of <all> threads in <ms> ms" (wake, requeue) or "(waking
 * <done>/<all> threads) in <ms> ms" (wake-parallel), after the label */
static int threads_in(struct bench__cur *c, const struct bench__line *l, char sep, double *ms,
		      char *why, size_t whylen)
{
	static const char expected[] = "'<n> of <n> threads in <ms> ms'";
	char q[BENCH_QUOTE_MAX];
	double done, all;
	int r = bench__number(c, &done);

	if (r == 0) {
		bench__skip_blanks(c);
		r = sep == '/' ? (bench__eat(c, "/") ? 0 : -EINVAL)
			       : (bench__eat(c, "of") ? 0 : -EINVAL);
	}
	if (r == 0) {
		bench__skip_blanks(c);
		r = bench__number(c, &all);
	}
	if (r == 0) {
		bench__skip_blanks(c);
		r = bench__eat(c, sep == '/' ? "threads) in" : "threads in") ? 0 : -EINVAL;
	}
	if (r < 0)
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c->p, q, sizeof(q)));
	r = bench__number_at(c, l, "'<ms> ms'", ms, why, whylen);
	if (r < 0)
		return r;
	bench__skip_blanks(c);
	if (!bench__eat(c, "ms"))
		return bench__fail(why, whylen, "line %lu: expected '<ms> ms', found '%s'", l->no,
				   bench__found(l, c->p, q, sizeof(q)));
	/* wake-parallel's "waking 1/2" is one waker's share of the threads */
	if (sep != '/' && done != all)
		return bench__fail(why, whylen,
				   "line %lu: %.0f of %.0f threads done: perf could not "
				   "wake or requeue them all",
				   l->no, done, all);
	return 0;
}

static int result_line(const struct futex_workload *w, const struct bench__line *l,
		       struct futex_out *o, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	char q[BENCH_QUOTE_MAX];
	int r;

	switch (w->kind) {
	case FX_RATE:
		if (!bench__eat(&c, "Averaged"))
			return 0;
		r = bench__once(&o->result_at, l, "'Averaged' line", why, whylen);
		if (r == 0)
			r = bench__number_at(&c, l, "'Averaged <ops> operations/sec'", &o->value,
					     why, whylen);
		bench__skip_blanks(&c);
		if (r == 0 && !bench__eat(&c, "operations/sec"))
			r = bench__fail(why, whylen,
					"line %lu: expected 'Averaged <ops> "
					"operations/sec', found '%s'",
					l->no, bench__found(l, c.p, q, sizeof(q)));
		return r;
	case FX_WAKE:
		if (!bench__eat(&c, "Wokeup"))
			return 0;
		break;
	case FX_REQUEUE:
		if (!bench__eat(&c, "Requeued"))
			return 0;
		break;
	case FX_WAKE_PARALLEL:
		if (!bench__eat(&c, "Avg per-thread latency"))
			return 0;
		bench__skip_blanks(&c);
		if (!bench__eat(&c, "(waking"))
			return bench__fail(why, whylen,
					   "line %lu: expected '(waking <n>/<n> threads)'", l->no);
		break;
	}
	r = bench__once(&o->result_at, l, "summary of the runs", why, whylen);
	if (r == 0) {
		bench__skip_blanks(&c);
		r = threads_in(&c, l, w->kind == FX_WAKE_PARALLEL ? '/' : ' ', &o->value, why, whylen);
	}
	return r;
}

int bench__parse_perf_futex(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			    char *why, size_t whylen)
{
	const struct futex_workload *w = workload_of(arg);
	struct futex_out o = { 0 };
	struct bench__lines it;
	struct bench__line l;
	int r = 0;

	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		if (bench__eat(&c, "# Running"))
			r = check_running(w, &l, &o, why, whylen);
		else if (bench__eat(&c, "Run summary"))
			r = check_summary(w, &l, &o, why, whylen);
		else if (!bench__eat(&c, "[")) /* per thread or per run */
			r = result_line(w, &l, &o, why, whylen);
	}
	if (r < 0)
		return r;
	if (!o.running_at)
		return bench__fail(why, whylen,
				   "no \"# Running '%s' benchmark:\" line: not perf "
				   "bench futex's output?",
				   w->running);
	if (!o.summary_at)
		return bench__fail(why, whylen, "no 'Run summary' line: output cut?");
	if (!o.result_at)
		return bench__fail(why, whylen, "no %s line: output truncated?",
				   w->kind == FX_RATE ? "'Averaged <ops> operations/sec'"
						      : "summary of the runs");
	if (w->kind == FX_RATE)
		return bench__metric_add(m, why, whylen, o.value, "ops/s", true, "ops_per_sec");
	return bench__metric_add(m, why, whylen, o.value, "ms", false, "time");
}
