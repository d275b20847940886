/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the parsers share: walking lines of untrusted bytes, strict numbers,
 * adding checked metrics, and error messages that quote what was found. */
#ifndef LOCKSTEP_BENCH_PARSE_IMPL_H
#define LOCKSTEP_BENCH_PARSE_IMPL_H

#include <stdarg.h>

#include <json-c/json.h>

#include "bench_parse.h"

/* one line without its '\n' (and without a trailing '\r'); may hold NULs */
struct bench__line {
	const char *s;
	size_t len;
	unsigned long no; /* from 1 */
};

struct bench__lines {
	const char *p, *end;
	unsigned long no;
};

void bench__lines_init(struct bench__lines *it, const char *out, size_t len);
bool bench__line_next(struct bench__lines *it, struct bench__line *l);

/* a cursor over part of a line */
struct bench__cur {
	const char *p, *end;
};

static inline struct bench__cur bench__cur_of(const struct bench__line *l)
{
	return (struct bench__cur){ l->s, l->s + l->len };
}

static inline bool bench__cur_done(const struct bench__cur *c)
{
	return c->p >= c->end;
}

void bench__skip_blanks(struct bench__cur *c);
/* advances past lit when the cursor starts with it */
bool bench__eat(struct bench__cur *c, const char *lit);
/* blanks, lit, blanks: the usual "label:" of a report line */
bool bench__eat_label(struct bench__cur *c, const char *lit);
/* true when only blanks remain */
bool bench__rest_blank(const struct bench__cur *c);
/* a line that is blank or holds only blanks */
bool bench__line_blank(const struct bench__line *l);
/* the line holds lit somewhere */
bool bench__line_has(const struct bench__line *l, const char *lit);

#define BENCH_NUMBER_MAX 63 /* longest token read as a number */
/* a decimal number, [+-]digits[.digits][e[+-]digits], nothing else (no
 * hex, inf or nan): 0 and the cursor past it, -EINVAL when there is none
 * (the cursor stays), -ERANGE when it does not fit a double */
int bench__number(struct bench__cur *c, double *v);
/* the length of the number bench__number would read at p, or 0 */
size_t bench__number_len(const char *p, const char *end);
/* a number that must be finite, >= 0, and end the line or be followed by
 * a blank; on failure why names the line, what was expected and what was
 * found */
int bench__number_at(struct bench__cur *c, const struct bench__line *l, const char *expected,
		     double *v, char *why, size_t whylen);

/* the rest of a "label: value" line after the label: a number >= 0, then
 * blanks, then suffix (when not NULL, e.g. "[sec]"), then nothing */
int bench__value_line(struct bench__cur *c, const struct bench__line *l, const char *expected,
		      const char *suffix, double *v, char *why, size_t whylen);
/* records that what was seen at line l: -EBADMSG naming both lines when
 * *seen says it was already (a line a tool prints once, twice) */
int bench__once(unsigned long *seen, const struct bench__line *l, const char *what, char *why,
		size_t whylen);

/* perf bench's "# Running 'sched/pipe' benchmark:" line, when l is one,
 * names bench: -EBADMSG naming the line when it names another (output of
 * another benchmark is an error, not a number); 0 for any other line */
int bench__perf_check_running(const struct bench__line *l, const char *bench, char *why, size_t whylen);

/* formats why and returns -EBADMSG */
int bench__fail(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the bytes as a short printable excerpt for a message: non-printable
 * bytes as \xNN, longer than about 60 characters cut with "..." */
const char *bench__quote(const char *s, size_t len, char *buf, size_t buflen);
#define BENCH_QUOTE_MAX 96
/* the line quoted for "found '...'": whole when short, else from a little
 * before at */
const char *bench__found(const struct bench__line *l, const char *at, char *buf, size_t buflen);

/* appends a metric named by fmt; -EBADMSG when the name is not
 * [a-z0-9_.-]{1,63}, the value not finite, or m is full */
int bench__metric_add(struct bench_metrics *m, char *why, size_t whylen, double value,
		      const char *unit, bool higher_is_better, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* JSON reports (bench_json.c): obj[key] as a finite number >= 0; and the
 * one report of an output handed to report().  hint says how to get one. */
struct json_object;
int bench__json_num(struct json_object *obj, const char *path, const char *key, double *v,
		    char *why, size_t whylen);
int bench__parse_json(const char *out, size_t len, const char *hint,
		      int (*report)(struct json_object *root, struct bench_metrics *m, char *why,
				    size_t whylen),
		      struct bench_metrics *m, char *why, size_t whylen);

/* each parser, defined in parse_<format>.c; bench_parse.c lists them */
#define BENCH__PARSE_FN(fn)                                                                      \
	int fn(const char *out, size_t len, const char *arg, struct bench_metrics *m, char *why, \
	       size_t whylen)
BENCH__PARSE_FN(bench__parse_hackbench);
BENCH__PARSE_FN(bench__parse_perf_sched_pipe);
BENCH__PARSE_FN(bench__parse_perf_sched_messaging);
BENCH__PARSE_FN(bench__parse_sysbench_cpu);
BENCH__PARSE_FN(bench__parse_sysbench_threads);
BENCH__PARSE_FN(bench__parse_sysbench_mutex);
BENCH__PARSE_FN(bench__parse_stress_ng);
BENCH__PARSE_FN(bench__parse_cyclictest);
BENCH__PARSE_FN(bench__parse_fio_json);
BENCH__PARSE_FN(bench__parse_pattern);
BENCH__PARSE_FN(bench__parse_perf_syscall);
BENCH__PARSE_FN(bench__parse_perf_futex);
BENCH__PARSE_FN(bench__parse_pmqtest);
BENCH__PARSE_FN(bench__parse_pi_stress);
BENCH__PARSE_FN(bench__parse_rt_migrate);
BENCH__PARSE_FN(bench__parse_uptime);
BENCH__PARSE_FN(bench__parse_iperf3_json);
BENCH__PARSE_FN(bench__parse_redis_benchmark);
BENCH__PARSE_FN(bench__parse_dbench);
BENCH__PARSE_FN(bench__parse_perf_numa);
BENCH__PARSE_FN(bench__parse_bonnie);
BENCH__PARSE_FN(bench__parse_fsmark);
BENCH__PARSE_FN(bench__parse_uptime_phases);
BENCH__PARSE_FN(bench__parse_apachebench);
BENCH__PARSE_FN(bench__parse_pgbench);
BENCH__PARSE_FN(bench__parse_time_p);
int bench__check_stress_ng_arg(const char *arg, char *why, size_t whylen);
int bench__check_cyclictest_arg(const char *arg, char *why, size_t whylen);
int bench__check_pattern_arg(const char *arg, char *why, size_t whylen);
int bench__check_perf_futex_arg(const char *arg, char *why, size_t whylen);

#endif
