// SPDX-License-Identifier: GPL-2.0-or-later
/* The list of parsers, and the checks every metric passes on its way out. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

static const struct bench_parser parsers[] = {
	{ "hackbench", "rt-tests hackbench: 'Time: <s>'", NULL, NULL, bench__parse_hackbench },
	{ "perf-sched-pipe", "perf bench sched pipe: total time, usecs/op, ops/sec", NULL, NULL,
	  bench__parse_perf_sched_pipe },
	{ "perf-sched-messaging", "perf bench sched messaging: total time", NULL, NULL,
	  bench__parse_perf_sched_messaging },
	{ "sysbench-cpu", "sysbench 1.0 cpu: events/s, events, total time, latency", NULL, NULL,
	  bench__parse_sysbench_cpu },
	{ "sysbench-threads", "sysbench 1.0 threads: events, total time, latency", NULL, NULL,
	  bench__parse_sysbench_threads },
	{ "sysbench-mutex", "sysbench 1.0 mutex: events, total time, latency", NULL, NULL,
	  bench__parse_sysbench_mutex },
	{ "stress-ng", "stress-ng --metrics-brief: bogo ops and bogo ops/s per stressor",
	  "a stressor name: only its metrics, unprefixed", bench__check_stress_ng_arg,
	  bench__parse_stress_ng },
	{ "cyclictest", "cyclictest -q [-h US]: latency min/avg/max, percentiles",
	  "'overall': no per-thread metrics", bench__check_cyclictest_arg, bench__parse_cyclictest },
	{ "fio-json", "fio --output-format=json: bandwidth, IOPS, completion latency", NULL, NULL,
	  bench__parse_fio_json },
	{ "pattern", "one number from the first line that matches a pattern",
	  "a pattern with one '{}' where the number is: 'Time: {}', '{} ops/s'",
	  bench__check_pattern_arg, bench__parse_pattern },
	{ "perf-syscall", "perf bench syscall basic: total time, usecs/op, ops/sec", NULL, NULL,
	  bench__parse_perf_syscall },
	{ "perf-futex", "perf bench futex: ops/sec (hash, lock-pi) or ms per wake/requeue",
	  "the workload: hash, lock-pi, wake, wake-parallel, requeue, requeue-pi",
	  bench__check_perf_futex_arg, bench__parse_perf_futex },
	{ "pmqtest", "rt-tests pmqtest -q: latency min/avg/max per pair and overall", NULL, NULL,
	  bench__parse_pmqtest },
	{ "pi-stress", "rt-tests pi_stress: priority inversions, total and per second", NULL, NULL,
	  bench__parse_pi_stress },
	{ "rt-migrate-test", "rt-tests rt-migrate-test: wake-up latency max/avg per task and overall",
	  NULL, NULL, bench__parse_rt_migrate },
	{ "uptime", "two readings of /proc/uptime: wall time and idle CPUs between them", NULL,
	  NULL, bench__parse_uptime },
	{ "iperf3-json", "iperf3 -J: send and receive throughput; UDP jitter and losses", NULL,
	  NULL, bench__parse_iperf3_json },
	{ "redis-benchmark", "redis-benchmark --csv: requests/s, mean and p99 latency per test",
	  NULL, NULL, bench__parse_redis_benchmark },
	{ "dbench", "dbench 4 and tbench: throughput, max latency", NULL, NULL, bench__parse_dbench },
	{ "perf-numa", "perf bench numa mem: convergence latency, runtimes, data and speed", NULL,
	  NULL, bench__parse_perf_numa },
	{ "bonnie", "bonnie++ 1.98 CSV: rates and latencies of each test that was timed", NULL,
	  NULL, bench__parse_bonnie },
	{ "fsmark", "fs_mark 3.3: files/s (mean and slowest iteration), app overhead", NULL, NULL,
	  bench__parse_fsmark },
	{ "apachebench", "ab (ApacheBench): requests/s, time per request, latency percentiles",
	  NULL, NULL, bench__parse_apachebench },
	{ "pgbench", "pgbench 15: transactions/s, mean latency, transactions processed", NULL, NULL,
	  bench__parse_pgbench },
	{ "time-p", "time -p of one command: elapsed, user and system seconds", NULL, NULL,
	  bench__parse_time_p },
	{ "uptime-phases", "/proc/uptime read before and after each labelled phase: its seconds",
	  NULL, NULL, bench__parse_uptime_phases },
};

const struct bench_parser *bench_parsers(size_t *n)
{
	*n = sizeof(parsers) / sizeof(parsers[0]);
	return parsers;
}

const struct bench_parser *bench_parser_find(const char *name)
{
	for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++)
		if (strcmp(parsers[i].name, name) == 0)
			return &parsers[i];
	return NULL;
}

int bench_parser_check_arg(const struct bench_parser *p, const char *arg, char *why, size_t whylen)
{
	if (!p->arg_help && arg) {
		snprintf(why, whylen, "parser '%s' takes no argument, got '%s'", p->name, arg);
		return -EINVAL;
	}
	if (p->check_arg)
		return p->check_arg(arg, why, whylen);
	return 0;
}

int bench_parse(const struct bench_parser *p, const char *out, size_t len, const char *arg,
		struct bench_metrics *m, char *why, size_t whylen)
{
	int r = bench_parser_check_arg(p, arg, why, whylen);

	m->n = 0;
	if (r < 0)
		return r;
	r = p->parse(out, len, arg, m, why, whylen);
	if (r == 0 && m->n == 0) /* a parser's bug, but never a silent gap */
		r = bench__fail(why, whylen, "no metrics in the output");
	if (r < 0)
		m->n = 0;
	return r;
}

const struct bench_metric *bench_metrics_get(const struct bench_metrics *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

int bench__fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (whylen > 0)
		vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

const char *bench__quote(const char *s, size_t len, char *buf, size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	/* room for "\xNN", "..." and the NUL */
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (o + 4 + 4 > buflen || o >= 60) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			buf[o++] = (char)ch;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}

static bool name_ok(const char *name)
{
	if (!*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '.' || *p == '-'))
			return false;
	return true;
}

int bench__metric_add(struct bench_metrics *m, char *why, size_t whylen, double value,
		      const char *unit, bool higher_is_better, const char *fmt, ...)
{
	char name[BENCH_METRIC_NAME_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= BENCH_METRIC_NAME_MAX || !name_ok(name)) {
		char q[BENCH_QUOTE_MAX];

		return bench__fail(why, whylen,
				   "metric name '%s' is not 1 to %d characters of [a-z0-9_.-]",
				   bench__quote(name, strnlen(name, sizeof(name)), q, sizeof(q)),
				   BENCH_METRIC_NAME_MAX - 1);
	}
	if (!isfinite(value))
		return bench__fail(why, whylen, "metric '%s' is not a finite number", name);
	if (m->n >= BENCH_METRICS_MAX)
		return bench__fail(why, whylen, "more than %d metrics (at '%s')", BENCH_METRICS_MAX,
				   name);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return bench__fail(why, whylen, "metric '%s' twice", name);

	struct bench_metric *x = &m->v[m->n++];
	memcpy(x->name, name, (size_t)n + 1);
	x->value = value;
	snprintf(x->unit, sizeof(x->unit), "%s", unit);
	x->higher_is_better = higher_is_better;
	return 0;
}
