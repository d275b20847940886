/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsers of benchmark output.  A guest streams the raw output of a step to
 * hostd, which turns it into metrics here, on the host.  That output is
 * untrusted: a parser reads it as bytes (it may hold NULs or invalid UTF-8),
 * never allocates in proportion to it, and fails with a reason rather than
 * guess a number.  README.md lists each parser, the flags its tool must be
 * run with and the metrics it yields. */
#ifndef LOCKSTEP_BENCH_PARSE_H
#define LOCKSTEP_BENCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#define BENCH_METRICS_MAX 256 /* metrics one parse may yield */
#define BENCH_METRIC_NAME_MAX 64
#define BENCH_METRIC_UNIT_MAX 48

struct bench_metric {
	char name[BENCH_METRIC_NAME_MAX]; /* [a-z0-9_.-]: "time", "lat_p99" */
	double value;			  /* finite */
	char unit[BENCH_METRIC_UNIT_MAX]; /* "s", "us", "ops/s", "" (pattern) */
	bool higher_is_better;
};

struct bench_metrics {
	size_t n;
	struct bench_metric v[BENCH_METRICS_MAX];
};

struct bench_parser {
	const char *name;    /* what a spec names: "hackbench", "fio-json" */
	const char *summary; /* one line for docs and --help */
	/* what the spec's parser argument means, or NULL when the parser
	 * takes none (then a non-NULL arg is -EINVAL) */
	const char *arg_help;
	/* whether arg is acceptable: 0, or -EINVAL with why; NULL when any
	 * arg the parse accepts is fine */
	int (*check_arg)(const char *arg, char *why, size_t whylen);
	/* out: the step's whole raw output, len bytes, not NUL-terminated.
	 * Returns 0 with m filled (m->n >= 1), -EBADMSG when the output is
	 * not what was expected, -EINVAL when arg is not valid; why then says
	 * what was expected and where.  m is reset first. */
	int (*parse)(const char *out, size_t len, const char *arg, struct bench_metrics *m,
		     char *why, size_t whylen);
};

/* the parser of that name, or NULL */
const struct bench_parser *bench_parser_find(const char *name);
/* all of them, *n of them, for docs and tests */
const struct bench_parser *bench_parsers(size_t *n);
/* checks arg against what p accepts, before any output exists (when a spec
 * is loaded): 0 or -EINVAL with why */
int bench_parser_check_arg(const struct bench_parser *p, const char *arg, char *why, size_t whylen);
/* p->parse with the argument checked first: use this rather than the
 * function pointer */
int bench_parse(const struct bench_parser *p, const char *out, size_t len, const char *arg,
		struct bench_metrics *m, char *why, size_t whylen);
/* the metric of that name in m, or NULL */
const struct bench_metric *bench_metrics_get(const struct bench_metrics *m, const char *name);

#endif
