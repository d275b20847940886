// SPDX-License-Identifier: GPL-2.0-or-later
/* The benchmark output parsers on captured output: every file of
 * tests/data/bench-output/<parser>/ is a variant (<name>.out), and its
 * <name>.expect says exactly what the parse yields:
 *
 *   arg <text>                          the parser's argument (optional)
 *   metric <name> <value> <unit|-> higher|lower    one per metric, in order
 *   error <why>                         or: -EBADMSG with that reason
 *   einval <why>                        or: -EINVAL (a bad argument)
 *
 * plus the limits no captured output reaches. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_parse.h"
#include "testlib.h"
#include "xalloc.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *buf;

	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	buf = xmalloc(cap);
	for (;;) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		buf = xrealloc(buf, cap);
	}
	fclose(f);
	buf[n < cap ? n : cap - 1] = '\0';
	*len = n;
	return buf;
}

static char *data_dir(void)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");

	return xasprintf("%s/tests/data/bench-output", src ? src : ".");
}

/* the next line of the .expect text, NUL-terminated in place */
static char *next_line(char **p)
{
	char *s = *p, *nl;

	if (!*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

static void check_metric(const char *file, const struct bench_metrics *m, size_t i, char *line)
{
	char name[128], unit[64], dir[16];
	double want;

	ck_assert_msg(sscanf(line, "metric %127s %lf %63s %15s", name, &want, unit, dir) == 4,
		      "%s: bad expect line '%s'", file, line);
	ck_assert_msg(i < m->n, "%s: expected metric %zu '%s', the parse yielded %zu", file, i,
		      name, m->n);
	const struct bench_metric *x = &m->v[i];
	ck_assert_msg(strcmp(x->name, name) == 0, "%s: metric %zu is '%s', expected '%s'", file, i,
		      x->name, name);
	ck_assert_msg(fabs(x->value - want) <= 1e-12 * fabs(want), "%s: %s = %.17g, expected %.17g",
		      file, name, x->value, want);
	ck_assert_msg(strcmp(x->unit, strcmp(unit, "-") == 0 ? "" : unit) == 0,
		      "%s: %s in '%s', expected '%s'", file, name, x->unit, unit);
	ck_assert_msg(x->higher_is_better == (strcmp(dir, "higher") == 0),
		      "%s: %s: higher_is_better %d, expected %s", file, name, x->higher_is_better,
		      dir);
}

/* parses one captured variant and compares with its .expect */
static void check_variant(const struct bench_parser *p, const char *dir, const char *base)
{
	static struct bench_metrics m;
	char why[512], *arg = NULL, *path = xasprintf("%s/%s.out", dir, base);
	size_t len, elen, i = 0;
	int r;

	char *out = slurp(path, &len);
	free(path);
	path = xasprintf("%s/%s.expect", dir, base);
	char *expect = slurp(path, &elen), *cur = expect, *line;

	if (strncmp(cur, "arg ", 4) == 0)
		arg = next_line(&cur) + 4;
	why[0] = '\0';
	r = bench_parse(p, out, len, arg, &m, why, sizeof(why));
	while ((line = next_line(&cur))) {
		if (strncmp(line, "error ", 6) == 0 || strncmp(line, "einval ", 7) == 0) {
			int want = line[1] == 'r' ? -EBADMSG : -EINVAL;

			ck_assert_msg(r == want, "%s: returned %d (%s), expected %d", path, r, why,
				      want);
			ck_assert_msg(strcmp(why, strchr(line, ' ') + 1) == 0,
				      "%s: why is\n  '%s', expected\n  '%s'", path, why,
				      strchr(line, ' ') + 1);
			ck_assert_msg(m.n == 0, "%s: %zu metrics after an error", path, m.n);
		} else {
			ck_assert_msg(r == 0, "%s: returned %d: %s", path, r, why);
			check_metric(path, &m, i++, line);
		}
	}
	ck_assert_msg(r < 0 || i == m.n, "%s: %zu metrics, expected %zu", path, m.n, i);
	ck_assert_msg(r < 0 || i > 0, "%s: expects nothing", path);
	free(out);
	free(expect);
	free(path);
}

START_TEST(captured_variants)
{
	size_t n;
	const struct bench_parser *all = bench_parsers(&n);
	const struct bench_parser *p = &all[_i];
	char *root = data_dir(), *dir = xasprintf("%s/%s", root, p->name);
	struct dirent *e;
	int variants = 0;

	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "parser '%s' has no captured output in %s", p->name, dir);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char base[256];

		if (l > 4 && strcmp(e->d_name + l - 4, ".out") == 0 && l - 4 < sizeof(base)) {
			memcpy(base, e->d_name, l - 4);
			base[l - 4] = '\0';
			check_variant(p, dir, base);
			variants++;
		} else if (l > 7 && strcmp(e->d_name + l - 7, ".expect") == 0) {
			char *other = xasprintf("%s/%.*s.out", dir, (int)(l - 7), e->d_name);

			ck_assert_msg(access(other, R_OK) == 0, "%s: an .expect without its .out",
				      other);
			free(other);
		}
	}
	closedir(d);
	free(dir);
	free(root);
	/* each parser has its real outputs and the damaged ones */
	ck_assert_msg(variants >= 8, "parser '%s': only %d variants", p->name, variants);
}
END_TEST

START_TEST(registry)
{
	size_t n;
	const struct bench_parser *all = bench_parsers(&n);
	static const char *const names[] = {
		"hackbench",	"perf-sched-pipe",  "perf-sched-messaging",
		"sysbench-cpu", "sysbench-threads", "sysbench-mutex",
		"stress-ng",	"cyclictest",	    "fio-json",
		"pattern",	"perf-syscall",	    "perf-futex",
		"pmqtest",	"pi-stress",	    "rt-migrate-test",
		"uptime",	"iperf3-json",	    "redis-benchmark",
		"dbench",	"perf-numa",	    "bonnie",
		"fsmark",	"apachebench",	    "pgbench",
		"time-p",	"uptime-phases",
	};
	char why[256];

	ck_assert_uint_eq(n, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_eq(bench_parser_find(names[i]), &all[i]);
		ck_assert_str_eq(all[i].name, names[i]);
		ck_assert(all[i].summary && all[i].summary[0]);
	}
	ck_assert_ptr_null(bench_parser_find("hackbench2"));
	ck_assert_ptr_null(bench_parser_find(""));

	ck_assert_int_eq(bench_parser_check_arg(bench_parser_find("hackbench"), "x", why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "parser 'hackbench' takes no argument, got 'x'");
	ck_assert_int_eq(bench_parser_check_arg(bench_parser_find("pattern"), "Time: {}", why,
						sizeof(why)),
			 0);
	ck_assert_int_eq(bench_parser_check_arg(bench_parser_find("pattern"), "T\x01{}", why,
						sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "pattern 'T\x01{}': byte 0x01 at 1 is not printable ASCII");
	ck_assert_int_eq(bench_parser_check_arg(bench_parser_find("stress-ng"), NULL, why, sizeof(why)),
			 0);
	ck_assert_int_eq(bench_parser_check_arg(bench_parser_find("cyclictest"), "overall", why,
						sizeof(why)),
			 0);
}
END_TEST

static int parse(const char *parser, const char *out, size_t len, const char *arg,
		 struct bench_metrics *m, char *why, size_t whylen)
{
	return bench_parse(bench_parser_find(parser), out, len, arg, m, why, whylen);
}

/* a megabyte line costs no more than its length, and matches nothing */
START_TEST(huge_line)
{
	static struct bench_metrics m;
	size_t len = 1 << 20;
	char *out = xmalloc(len), why[256];

	memset(out, '1', len);
	/* the first place "1{}" matches has a number of a million digits */
	ck_assert_int_eq(parse("pattern", out, len, "1{}", &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "line 1: the number of '1{}' is out of range: "
			      "'111111111111111111111111111111111111111111111111111111111111...'");
	ck_assert_int_eq(parse("pattern", out, len, "{}", &m, why, sizeof(why)), -EBADMSG);
	memcpy(out, "Time: ", 6);
	ck_assert_int_eq(parse("hackbench", out, len, NULL, &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "line 1: expected 'Time: <seconds>', found "
			      "'Time: 111111111111111111111111111111111111111111111111111111...'");
	free(out);
}
END_TEST

/* more stressors than metrics fit: an error, never a cut list */
START_TEST(too_many_metrics)
{
	static struct bench_metrics m;
	size_t cap = 1 << 16, len = 0;
	char *out = xmalloc(cap), why[256];

	len += (size_t)snprintf(out + len, cap - len, "dispatching hogs:");
	for (int i = 0; i < 90; i++)
		len += (size_t)snprintf(out + len, cap - len, " 1 s%d,", i);
	len += (size_t)snprintf(out + len, cap - len, "\nstressor bogo ops\n");
	for (int i = 0; i < 90; i++)
		len += (size_t)snprintf(out + len, cap - len, "s%d 1 1 1 1 1 1\n", i);
	ck_assert_int_eq(parse("stress-ng", out, len, NULL, &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "line 1: more than 85 stressors");
	ck_assert_uint_eq(m.n, 0);

	/* 85 fit in the table, 255 metrics: one more stressor would not */
	len = (size_t)snprintf(out, cap, "dispatching hogs:");
	for (int i = 0; i < 85; i++)
		len += (size_t)snprintf(out + len, cap - len, " 1 s%d,", i);
	len += (size_t)snprintf(out + len, cap - len, "\nstressor bogo ops\n");
	for (int i = 0; i < 85; i++)
		len += (size_t)snprintf(out + len, cap - len, "s%d 1 1 1 1 1 1\n", i);
	ck_assert_int_eq(parse("stress-ng", out, len, NULL, &m, why, sizeof(why)), 0);
	ck_assert_uint_eq(m.n, 255);
	ck_assert_str_eq(m.v[254].name, "s84.bogo_ops_s_usr_sys");
	ck_assert_ptr_eq(bench_metrics_get(&m, "s3.bogo_ops"), &m.v[9]);
	ck_assert_ptr_null(bench_metrics_get(&m, "s85.bogo_ops"));

	/* cyclictest: 100 threads of per-thread metrics do not fit */
	len = 0;
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(out + len, cap - len,
					"T:%2d (%5d) P: 0 I:1000 C:    100 Min:     50 Act:   60 Avg:   60 Max:      70\n",
					i, 1000 + i);
	ck_assert_int_eq(parse("cyclictest", out, len, NULL, &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "more than 256 metrics (at 't84.lat_avg')");
	ck_assert_int_eq(parse("cyclictest", out, len, "overall", &m, why, sizeof(why)), 0);
	ck_assert_uint_eq(m.n, 3);
	free(out);
}
END_TEST

/* JSON nested deeper than json-c allows is an error, not a crash */
START_TEST(fio_deep_json)
{
	static struct bench_metrics m;
	size_t len = 100000;
	char *out = xmalloc(len), why[256];

	out[0] = '{';
	memset(out + 1, '[', len - 1);
	memcpy(out, "{\"jobs\":", 8);
	ck_assert_int_eq(parse("fio-json", out, len, NULL, &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "the JSON from line 1 is not valid at byte 39: nesting too deep");
	free(out);
}
END_TEST

/* the reason is cut to the caller's buffer, and NULL-free */
START_TEST(short_why)
{
	static struct bench_metrics m;
	char why[8];

	ck_assert_int_eq(parse("hackbench", "x\n", 2, NULL, &m, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "no 'Tim");
	ck_assert_int_eq(parse("hackbench", "Time: 1\n", 8, NULL, &m, NULL, 0), 0);
	ck_assert_uint_eq(m.n, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench-parse");
	TCase *tc = tcase_create("parsers");
	size_t n;

	bench_parsers(&n);
	tcase_add_test(tc, registry);
	tcase_add_loop_test(tc, captured_variants, 0, (int)n);
	tcase_add_test(tc, huge_line);
	tcase_add_test(tc, too_many_metrics);
	tcase_add_test(tc, fio_deep_json);
	tcase_add_test(tc, short_why);
	suite_add_tcase(s, tc);

	return testlib_main(s);
}
