// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostctl compare on the fixtures of tests/data/hostctl (made by
 * make-fixtures.py, which says what each one holds): the rows and verdicts
 * through the library, then the command line's output and exit statuses.
 * argv[1] is the hostctl binary.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "fileio.h"
#include "xalloc.h"

static const char *hostctl;
static char *data;

/* Strings a case made, freed by its teardown (LeakSanitizer runs the tests). */
static char *garbage[64];
static size_t ngarbage;

static char *keep(char *p)
{
	ck_assert_uint_lt(ngarbage, 64);
	return garbage[ngarbage++] = p;
}

static struct run_dict dict;
static struct run runs[2];
static struct cmp_result cmp;

static int load(size_t i, const char *name, struct run_err *e)
{
	char *p = xasprintf("%s/%s", data, name);
	int ret = run_load(&runs[i], p, &dict, e);

	free(p);
	return ret;
}

static void compare2(const char *a, const char *b, const struct cmp_opts *o)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, a, &e), 0);
	ck_assert_int_eq(load(1, b, &e), 0);
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, o, &e) == 0, "%s", e.msg);
}

static void teardown(void)
{
	while (ngarbage)
		free(garbage[--ngarbage]);
	cmp_free(&cmp);
	run_free(&runs[0]);
	run_free(&runs[1]);
	run_dict_free(&dict);
	stats_cleanup();
}

static const struct cmp_row *row(const char *bench, const char *metric, enum cmp_kind kind,
				 const char *node)
{
	for (size_t i = 0; i < cmp.nrows; i++) {
		const struct cmp_row *r = &cmp.rows[i];

		if (r->kind == kind && !strcmp(cmp_name(&cmp, r->bench), bench) &&
		    !strcmp(cmp_name(&cmp, r->metric), metric) &&
		    (kind != CMP_ROW_NODE || !strcmp(cmp_name(&cmp, r->node), node)))
			return r;
	}
	ck_abort_msg("no row %s %s %s", bench, metric, node ? node : "");
	return NULL;
}

static const struct cmp_opts defaults = { .test = CMP_TEST_MWU, .alpha = 0.05, .holm = true };

START_TEST(verdicts_base_new)
{
	const struct cmp_row *r;
	/* 3 metrics x (4 nodes + guests + fairness) */
	const double p1 = 2.0 / 12870; /* all 8 of one side above the other */

	compare2("base", "new", &defaults);
	ck_assert_uint_eq(cmp.nrows, 18);
	ck_assert_uint_eq(cmp.family[1], 18);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1");
	ck_assert_int_eq(r->cells[1].verdict, CMP_BETTER);
	ck_assert_int_eq(r->cells[1].t.method, STATS_MWU_EXACT);
	ck_assert_double_eq_tol(r->cells[1].t.p, p1, 1e-15);
	ck_assert_double_eq_tol(r->cells[1].p_adj, 18 * p1, 1e-12); /* Holm, smallest of ties */
	ck_assert_double_eq_tol(r->cells[1].change_pct, 200 / 1004.545 * 100, 1e-9);
	r = row("cpu-probe", "elapsed", CMP_ROW_NODE, "host");
	ck_assert_int_eq(r->cells[1].verdict, CMP_WORSE);
	ck_assert(r->cells[1].change_pct > 49 && r->cells[1].change_pct < 50);
	r = row("uname", "elapsed", CMP_ROW_NODE, "guest-2");
	ck_assert_int_eq(r->cells[1].verdict, CMP_NO_CHANGE);
	ck_assert(r->cells[1].tested && !r->cells[1].significant);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_GUESTS, NULL);
	ck_assert_uint_eq(r->cells[0].n, 8); /* one mean per iteration */
	ck_assert_int_eq(r->cells[1].verdict, CMP_BETTER);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_FAIRNESS, NULL);
	ck_assert_int_eq(r->cells[1].verdict, CMP_WORSE); /* guest-3 gained less */
	ck_assert(r->cells[0].d.median > 0.9999 && r->cells[1].d.median < 0.999);
	ck_assert(r->cells[1].fair_maxmin > 1.08);
	ck_assert(!cmp.regression);
	/* barrier skew: 16 steps, step 3 with nobody started, skew 1..5 us */
	ck_assert_uint_eq(cmp.skew[0].steps, 16);
	ck_assert_uint_eq(cmp.skew[0].unstarted, 1);
	ck_assert_double_eq(cmp.skew[0].max_ns, 5000);
}
END_TEST

START_TEST(regression_gate)
{
	struct cmp_opts o = defaults;

	o.fail_set = true;
	o.fail_pct = 60; /* elapsed is +50%: below the gate */
	compare2("base", "new", &o);
	ck_assert(!cmp.regression);
	teardown();
	o.fail_pct = 40;
	compare2("base", "new", &o);
	ck_assert(cmp.regression);
	ck_assert(row("cpu-probe", "elapsed", CMP_ROW_NODE, "guest-1")->cells[1].regression);
	ck_assert(!row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].regression);
}
END_TEST

START_TEST(welch_and_no_correction)
{
	struct cmp_opts o = defaults;
	const struct cmp_row *r;

	o.test = CMP_TEST_WELCH;
	o.holm = false;
	compare2("base", "new", &o);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1");
	ck_assert_int_eq(r->cells[1].t.method, STATS_WELCH);
	ck_assert_int_eq(r->cells[1].verdict, CMP_BETTER);
	ck_assert_double_eq(r->cells[1].p_adj, r->cells[1].t.p);
	ck_assert_int_eq(row("uname", "elapsed", CMP_ROW_NODE, "host")->cells[1].verdict,
			 CMP_NO_CHANGE);
}
END_TEST

START_TEST(too_few_in_words)
{
	const struct cmp_row *r;

	compare2("few", "few", &defaults);
	for (size_t i = 0; i < cmp.nrows; i++) {
		ck_assert_int_eq(cmp.rows[i].cells[1].verdict, CMP_TOO_FEW);
		ck_assert_ptr_nonnull(strstr(cmp.rows[i].cells[1].why, "needs 4 per side"));
		ck_assert(!cmp.rows[i].cells[0].d.has_ci); /* n = 3 < 6 */
	}
	r = row("cpu-probe", "elapsed", CMP_ROW_NODE, "guest-1");
	ck_assert_str_eq(r->cells[1].why,
			 "too few samples: with n=3 and 3, U cannot reach p < 0.05 (needs 4 per side)");
	ck_assert_uint_eq(cmp.family[1], 0);
}
END_TEST

START_TEST(missing_node)
{
	const struct cmp_row *r;
	bool noted = false;

	compare2("base", "nonode", &defaults);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-3");
	ck_assert(r->cells[0].present && !r->cells[1].present);
	ck_assert_int_eq(r->cells[1].verdict, CMP_MISSING);
	ck_assert_str_eq(r->cells[1].why, "no samples in run nonode");
	for (size_t i = 0; i < cmp.nnotes; i++)
		noted |= !strcmp(cmp.notes[i], "node guest-3 has no samples at all in run nonode");
	ck_assert_msg(noted, "no note about guest-3");
	ck_assert_int_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].verdict,
			 CMP_BETTER);
}
END_TEST

START_TEST(missing_benchmark)
{
	const struct cmp_row *r;
	bool noted = false;

	compare2("base", "partbench", &defaults);
	r = row("uname", "elapsed", CMP_ROW_NODE, "guest-1");
	ck_assert_int_eq(r->cells[1].verdict, CMP_MISSING);
	ck_assert_str_eq(r->cells[1].why, "no samples in run partbench");
	ck_assert_int_eq(row("uname", "elapsed", CMP_ROW_GUESTS, NULL)->cells[1].verdict, CMP_MISSING);
	for (size_t i = 0; i < cmp.nnotes; i++)
		noted |= !strcmp(cmp.notes[i], "uname elapsed is not in run partbench: "
					       "its rows there are marked missing");
	ck_assert_msg(noted, "no note about uname");
	ck_assert_uint_eq(cmp.family[1], 12); /* the 2 shared metrics x 6 rows */
}
END_TEST

START_TEST(schema_version_refused)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "schema2", &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "schema2/manifest.json: schema_version 2, but this hostctl "
				    "reads version 1"), "%s", e.msg);
}
END_TEST

START_TEST(nan_names_the_sample)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "nan", &e), -EDOM);
	/* 4 nodes x 3 metrics per iteration: iteration 4 starts at line 37,
	 * guest-2's ops_per_sec is its third line */
	ck_assert_msg(strstr(e.msg, "nan/samples.ndjson:39: ") && strstr(e.msg, "guest-2") &&
			      strstr(e.msg, "ops_per_sec") && strstr(e.msg, "iteration 4") &&
			      strstr(e.msg, "not a finite number"), "%s", e.msg);
}
END_TEST

START_TEST(different_benchmarks)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "base", &e), 0);
	ck_assert_int_eq(load(1, "otherbench", &e), 0);
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &defaults, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "runs base and otherbench share no benchmark metric") &&
			      strstr(e.msg, "otherbench has [stream bandwidth]"), "%s", e.msg);
}
END_TEST

START_TEST(different_units)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "base", &e), 0);
	ck_assert_int_eq(load(1, "unit", &e), 0);
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &defaults, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "cpu-probe elapsed is in \"s\"") && strstr(e.msg, "\"ms\"") &&
			      strstr(e.msg, "measured different things"), "%s", e.msg);
}
END_TEST

START_TEST(locate_by_name)
{
	struct run_err e = { "" };
	char *path = NULL;

	ck_assert_int_eq(run_locate("base", data, &path, &e), 0);
	ck_assert_str_eq(path, keep(xasprintf("%s/base", data)));
	free(path);
	ck_assert_int_eq(run_locate("nosuchrun", data, &path, &e), -ENOENT);
	ck_assert_msg(strstr(e.msg, "run 'nosuchrun'") && strstr(e.msg, "--results"), "%s", e.msg);
}
END_TEST

/* ---- the command line ---- */

struct out {
	int status;
	char *out, *err;
};

/* Runs hostctl with the given arguments (NULL-terminated) from data/. */
static struct out run_hostctl(const char *first, ...)
{
	char outp[] = "/tmp/hostctl-out-XXXXXX", errp[] = "/tmp/hostctl-err-XXXXXX";
	int fo = mkstemp(outp), fe = mkstemp(errp), st;
	const char *argv[32] = { hostctl, first };
	posix_spawn_file_actions_t fa;
	struct out o;
	size_t n = 2, len;
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fo, 1);
	posix_spawn_file_actions_adddup2(&fa, fe, 2);
	ck_assert_int_eq(chdir(data), 0);
	ck_assert_int_eq(posix_spawn(&pid, hostctl, &fa, NULL, (char **)argv, NULL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	o.status = WEXITSTATUS(st);
	ck_assert_int_eq(fileio_read_all(outp, 64 << 20, &o.out, &len), 0);
	ck_assert_int_eq(fileio_read_all(errp, 1 << 20, &o.err, &len), 0);
	keep(o.out);
	keep(o.err);
	unlink(outp);
	unlink(errp);
	close(fo);
	close(fe);
	posix_spawn_file_actions_destroy(&fa);
	return o;
}

START_TEST(cli_text_and_exit_status)
{
	struct out o = run_hostctl("compare", "--results", ".", "base", "new", NULL);

	ck_assert_int_eq(o.status, 0);
	ck_assert_msg(strstr(o.out, "+19.91% better") && strstr(o.out, "fairness (Jain)") &&
			      strstr(o.out, "guests (mean)") && strstr(o.out, "barrier skew"), "%s", o.out);
	ck_assert_ptr_nonnull(strstr(o.out, "  ~\n")); /* uname: not significant, shown as ~ */
	o = run_hostctl("compare", "base", "new", "--fail-on-regression", "10", NULL);
	ck_assert_int_eq(o.status, 3);
	ck_assert_ptr_nonnull(strstr(o.out, "worse REGRESSION"));
	ck_assert_ptr_nonnull(strstr(o.err, "exit status 3"));
	o = run_hostctl("compare", "base", "new", "--fail-on-regression", "60", NULL);
	ck_assert_int_eq(o.status, 0);
	o = run_hostctl("compare", "base", NULL);
	ck_assert_int_eq(o.status, 2);
	o = run_hostctl("compare", "--alpha", "2", "base", "new", NULL);
	ck_assert_int_eq(o.status, 2);
	ck_assert_ptr_nonnull(strstr(o.err, "--alpha '2'"));
	o = run_hostctl("compare", "base", "schema2", NULL);
	ck_assert_int_eq(o.status, 1);
	ck_assert_ptr_nonnull(strstr(o.err, "schema_version 2"));
	ck_assert_str_eq(o.out, "");
	o = run_hostctl("compare", "base", "nan", NULL);
	ck_assert_int_eq(o.status, 1);
	ck_assert_ptr_nonnull(strstr(o.err, "not a finite number"));
}
END_TEST

START_TEST(cli_help_names_every_option)
{
	static const char *const opts[] = { "--test", "--alpha", "--correction", "--format",
					    "--fail-on-regression", "--results", "--help" };
	struct out o = run_hostctl("compare", "--help", NULL);

	ck_assert_int_eq(o.status, 0);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		ck_assert_msg(strstr(o.out, opts[i]), "help lacks %s", opts[i]);
	o = run_hostctl("--help", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert(strstr(o.out, "compare") && strstr(o.out, "report"));
	o = run_hostctl("frobnicate", NULL);
	ck_assert_int_eq(o.status, 2);
}
END_TEST

static struct json_object *jget(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, k, &v), "no %s", k);
	return v;
}

START_TEST(cli_json_csv_markdown)
{
	struct out o = run_hostctl("compare", "--format", "json", "base", "new", NULL);
	struct json_object *j, *rows, *r0, *cell;

	ck_assert_int_eq(o.status, 0);
	j = json_tokener_parse(o.out);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_object_get_string(jget(j, "schema")), "lockstep-hostctl-compare");
	ck_assert_int_eq(json_object_get_int(jget(j, "schema_version")), 1);
	rows = jget(j, "rows");
	ck_assert_uint_eq(json_object_array_length(rows), 18);
	r0 = json_object_array_get_idx(rows, 0);
	ck_assert_str_eq(json_object_get_string(jget(r0, "node")), "guest-1");
	cell = json_object_array_get_idx(jget(r0, "runs"), 1);
	ck_assert_str_eq(json_object_get_string(jget(cell, "verdict")), "better");
	ck_assert_str_eq(json_object_get_string(jget(cell, "test")), "mann-whitney-exact");
	ck_assert_double_eq_tol(json_object_get_double(jget(cell, "p")), 2.0 / 12870, 1e-15);
	ck_assert(json_object_get_boolean(jget(cell, "significant")));
	json_object_put(j);

	o = run_hostctl("compare", "--format", "csv", "base", "new", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "benchmark,metric,unit,better,kind,node,run,"));
	ck_assert_ptr_nonnull(strstr(o.out, "\ncpu-probe,ops_per_sec,ops/s,higher,node,guest-1,new,new,8,"));
	o = run_hostctl("compare", "--format", "markdown", "base", "new", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "| node | run | n |"));
	ck_assert_ptr_nonnull(strstr(o.out, "| \\~ |"));
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("hostctl-compare");
	TCase *lib = tcase_create("library"), *cli = tcase_create("cli");
	SRunner *sr;
	int failed;

	if (argc < 2 || !getenv("LOCKSTEP_SOURCE_ROOT")) {
		fprintf(stderr, "usage: test-hostctl-compare HOSTCTL (with LOCKSTEP_SOURCE_ROOT set)\n");
		return EXIT_FAILURE;
	}
	hostctl = argv[1];
	data = xasprintf("%s/tests/data/hostctl", getenv("LOCKSTEP_SOURCE_ROOT"));
	tcase_add_checked_fixture(lib, NULL, teardown);
	tcase_add_test(lib, verdicts_base_new);
	tcase_add_test(lib, regression_gate);
	tcase_add_test(lib, welch_and_no_correction);
	tcase_add_test(lib, too_few_in_words);
	tcase_add_test(lib, missing_node);
	tcase_add_test(lib, missing_benchmark);
	tcase_add_test(lib, schema_version_refused);
	tcase_add_test(lib, nan_names_the_sample);
	tcase_add_test(lib, different_benchmarks);
	tcase_add_test(lib, different_units);
	tcase_add_test(lib, locate_by_name);
	tcase_add_checked_fixture(cli, NULL, teardown);
	tcase_add_test(cli, cli_text_and_exit_status);
	tcase_add_test(cli, cli_help_names_every_option);
	tcase_add_test(cli, cli_json_csv_markdown);
	suite_add_tcase(s, lib);
	suite_add_tcase(s, cli);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(data);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
