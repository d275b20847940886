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
#include "out.h"
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

static const struct cmp_opts defaults = {
	.test = CMP_TEST_MWU, .alpha = 0.05, .holm = true, .noise_pct = 5
};

START_TEST(verdicts_base_new)
{
	const struct cmp_row *r;
	/* 3 metrics x (4 nodes + guests + fairness) */
	const double p1 = 2.0 / 12870; /* all 8 of one side above the other */

	compare2("base", "new", &defaults);
	ck_assert_uint_eq(cmp.nrows, 18);
	/* primary: host, guests and fairness of cpu-probe ops_per_sec and of
	 * uname elapsed; cpu-probe's elapsed is the agent's, beside its metric */
	ck_assert_uint_eq(cmp.family[1], 6);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1");
	ck_assert(!r->primary);
	ck_assert_int_eq(r->cells[1].verdict, CMP_BETTER);
	ck_assert_int_eq(r->cells[1].t.method, STATS_MWU_EXACT);
	ck_assert_double_eq_tol(r->cells[1].t.p, p1, 1e-15);
	ck_assert_double_eq_tol(r->cells[1].p_adj, p1, 1e-15); /* secondary: its raw p */
	ck_assert_double_eq_tol(r->cells[1].change_pct, 200 / 1004.545 * 100, 1e-9);
	r = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "host");
	ck_assert(r->primary);
	ck_assert_double_eq_tol(r->cells[1].p_adj, 6 * p1, 1e-12); /* Holm, smallest of ties */
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
	o.family_all = true;
	compare2("base", "new", &o);
	ck_assert(!cmp.regression);
	teardown();
	o.fail_pct = 40;
	compare2("base", "new", &o);
	ck_assert(cmp.regression);
	ck_assert(row("cpu-probe", "elapsed", CMP_ROW_NODE, "guest-1")->cells[1].regression);
	ck_assert(!row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].regression);
	teardown();
	/* by default the gate is the verdict's: cpu-probe's elapsed is the
	 * agent's (secondary); new against base, ops_per_sec of the host and
	 * the guests together fell by about 16% */
	o.family_all = false;
	compare2("base", "new", &o);
	ck_assert(!cmp.regression);
	ck_assert(!row("cpu-probe", "elapsed", CMP_ROW_NODE, "guest-1")->cells[1].regression);
	teardown();
	o.fail_pct = 10;
	compare2("new", "base", &o);
	ck_assert(cmp.regression);
	ck_assert(row("cpu-probe", "ops_per_sec", CMP_ROW_GUESTS, NULL)->cells[1].regression);
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
	/* the verdict names the series that cannot decide (issue 15) */
	struct out_lines l = { 0 };
	out_verdict(&cmp, 1, &l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.line[1], "no primary row could be tested (6 primary rows)");
	ck_assert_str_eq(l.line[2], "too few samples to decide: cpu-probe ops_per_sec, host; cpu-probe "
				    "ops_per_sec, guests together; cpu-probe ops_per_sec, fairness "
				    "(Jain); uname elapsed, host; uname elapsed, guests together; "
				    "uname elapsed, fairness (Jain)");
	out_lines_free(&l);
}
END_TEST

START_TEST(missing_node)
{
	const struct cmp_row *r;
	bool noted = false;

	struct cmp_opts o = defaults;

	o.force = true; /* 2 guests against 3: refused without it (see guests_must_match) */
	compare2("base", "nonode", &o);
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

	struct cmp_opts o = defaults;

	o.force = true; /* another plan: refused without it */
	compare2("base", "partbench", &o);
	r = row("uname", "elapsed", CMP_ROW_NODE, "guest-1");
	ck_assert_int_eq(r->cells[1].verdict, CMP_MISSING);
	ck_assert_str_eq(r->cells[1].why, "no samples in run partbench");
	ck_assert_int_eq(row("uname", "elapsed", CMP_ROW_GUESTS, NULL)->cells[1].verdict, CMP_MISSING);
	for (size_t i = 0; i < cmp.nnotes; i++)
		noted |= !strcmp(cmp.notes[i], "uname elapsed is not in run partbench: "
					       "its rows there are marked missing");
	ck_assert_msg(noted, "no note about uname");
	/* of the 2 shared metrics, ops_per_sec's host, guests and fairness;
	 * cpu-probe's elapsed is secondary */
	ck_assert_uint_eq(cmp.family[1], 3);
}
END_TEST

START_TEST(schema_version_refused)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "schema2", &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "schema2/manifest.json: schema_version 2, but this hostctl "
				    "reads version 1"),
		      "%s", e.msg);
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
			      strstr(e.msg, "not a finite number"),
		      "%s", e.msg);
}
END_TEST

START_TEST(different_benchmarks)
{
	struct run_err e = { "" };

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "base", &e), 0);
	ck_assert_int_eq(load(1, "otherbench", &e), 0);
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &defaults, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "REFUSED  plan: "), "%s", e.msg); /* another plan */
	struct cmp_opts o = defaults;
	o.force = true;
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &o, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "runs base and otherbench share no benchmark metric") &&
			      strstr(e.msg, "otherbench has [stream bandwidth]"),
		      "%s", e.msg);
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
			      strstr(e.msg, "measured different things"),
		      "%s", e.msg);
}
END_TEST

static bool has_note(const char *want)
{
	for (size_t i = 0; i < cmp.nnotes; i++)
		if (strstr(cmp.notes[i], want))
			return true;
	return false;
}

static const struct cmp_diff *diff_with(const char *want)
{
	for (size_t i = 0; i < cmp.ndiffs; i++)
		if (strstr(cmp.diffs[i].what, want))
			return &cmp.diffs[i];
	return NULL;
}

/* Issue 15: guest-2's cpu-probe failed in iterations 2 and 5; hostd wrote
 * a failure record and the agent's elapsed of 0.001 s for each.  Neither
 * may reach a median, a test, the guests' mean or fairness. */
START_TEST(failed_steps_are_not_samples)
{
	const struct cmp_row *r;

	compare2("base", "failedguest", &defaults);
	ck_assert_uint_eq(runs[1].failed_steps, 2);
	ck_assert_uint_eq(runs[1].dropped_samples, 2); /* the two elapsed */
	ck_assert_str_eq(runs[1].failures[0].reason, "cpu-probe exited with status 1");
	ck_assert_int_eq(runs[1].failures[0].iteration, 2);
	r = row("cpu-probe", "elapsed", CMP_ROW_NODE, "guest-2");
	ck_assert_uint_eq(r->cells[1].n, 6);
	ck_assert_msg(r->cells[1].d.min > 1.4, "a failed step's elapsed is in: min %g",
		      r->cells[1].d.min);
	ck_assert_int_eq(r->cells[1].verdict, CMP_WORSE); /* +50%, as on the other guests */
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-2")->cells[1].n, 6);
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].n, 8);
	/* the iterations with a failed guest leave the guests' mean and fairness */
	for (int k = 0; k < 2; k++) {
		const char *metric = k ? "elapsed" : "ops_per_sec";

		ck_assert_uint_eq(row("cpu-probe", metric, CMP_ROW_GUESTS, NULL)->cells[1].n, 6);
		ck_assert_uint_eq(row("cpu-probe", metric, CMP_ROW_FAIRNESS, NULL)->cells[1].n, 6);
		ck_assert_uint_eq(row("cpu-probe", metric, CMP_ROW_GUESTS, NULL)->cells[0].n, 8);
	}
	r = row("cpu-probe", "elapsed", CMP_ROW_GUESTS, NULL);
	ck_assert_msg(r->cells[1].d.min > 1.4, "guests' mean with a failed step: %g",
		      r->cells[1].d.min);
	ck_assert_uint_eq(cmp.left_out[1], 4); /* 2 iterations x 2 metrics */
	ck_assert(has_note("cpu-probe elapsed in run failedguest: 2 iterations where a guest's "
			   "step failed are left out of guests (mean) and fairness"));
	/* uname ran everywhere: untouched */
	ck_assert_uint_eq(row("uname", "elapsed", CMP_ROW_GUESTS, NULL)->cells[1].n, 8);
	ck_assert_uint_eq(row("uname", "elapsed", CMP_ROW_NODE, "guest-2")->cells[1].n, 8);
}
END_TEST

/* Issue 15: 200 loops against 400 loops is not a kernel's doing. */
START_TEST(refused_unless_forced_or_varied)
{
	struct run_err e = { "" };
	struct cmp_opts o = defaults;
	const struct cmp_diff *df;

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "loops200", &e), 0);
	ck_assert_int_eq(load(1, "loops400", &e), 0);
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &defaults, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "--force") &&
			      strstr(e.msg,
				     "differs  g.conf HACKBENCH_LOOPS: loops200 200, loops400 400") &&
			      strstr(e.msg, "REFUSED  plan: only in loops200: hackbench command "
					    "hackbench -g 4 -l 200 --pipe"),
		      "%s", e.msg);
	o.force = true;
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &o, &e) == 0, "%s", e.msg);
	ck_assert(cmp.forced);
	ck_assert_int_eq(diff_with("plan: ")->kind, CMP_DIFF_REFUSED);
	ck_assert_int_eq(row("hackbench", "time", CMP_ROW_GUESTS, NULL)->cells[1].verdict, CMP_WORSE);
	cmp_free(&cmp);
	o = defaults;
	o.vary[o.nvary++] = "HACKBENCH_LOOPS";
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &o, &e) == 0, "%s", e.msg);
	ck_assert(!cmp.forced);
	df = diff_with("g.conf HACKBENCH_LOOPS");
	ck_assert_ptr_nonnull(df);
	ck_assert_int_eq(df->kind, CMP_DIFF_EXPECTED);
	ck_assert_int_eq(diff_with("plan: ")->kind, CMP_DIFF_EXPECTED);
}
END_TEST

START_TEST(guests_must_match)
{
	struct run_err e = { "" };
	struct cmp_opts o = defaults;

	run_dict_init(&dict);
	ck_assert_int_eq(load(0, "base", &e), 0);
	ck_assert_int_eq(load(1, "nonode", &e), 0);
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &defaults, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "REFUSED  guest_count (GUEST_COUNT): base 3, nonode 2"), "%s",
		      e.msg);
	o.vary[o.nvary++] = "GUEST_COUNT";
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &o, &e) == 0, "%s", e.msg);
	ck_assert(!cmp.forced);
	ck_assert_int_eq(diff_with("guest_count")->kind, CMP_DIFF_EXPECTED);
	cmp_free(&cmp);
	/* vCPUs per guest: refused when both record them and differ; shown
	 * when one manifest (an older hostd's) does not say */
	runs[0].meta.guest_vcpus = 2;
	runs[1].meta.guest_vcpus = 4;
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &o, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "REFUSED  guest_vcpus (GUEST_VCPUS): base 2, nonode 4"), "%s",
		      e.msg);
	runs[1].meta.guest_vcpus = -1;
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &o, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(diff_with("guest_vcpus")->kind, CMP_DIFF_SHOWN);
	ck_assert_str_eq(diff_with("guest_vcpus")->what,
			 "guest_vcpus (GUEST_VCPUS): base 2, nonode (not recorded)");
	cmp_free(&cmp);
	/* memory per guest and the kind of guest: refused the same way */
	runs[0].meta.guest_memory_mib = 512;
	runs[1].meta.guest_memory_mib = 1024;
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &o, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg,
			     "REFUSED  guest_memory_mib (GUEST_MEMORY_MIB): base 512, nonode 1024"),
		      "%s", e.msg);
	runs[1].meta.guest_memory_mib = 512;
	free(runs[1].meta.guest_kind);
	runs[1].meta.guest_kind = xstrdup("libvirt");
	ck_assert_int_eq(cmp_build(&cmp, runs, 2, &dict, &o, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "REFUSED  guest_kind (GUEST_KIND): base local, nonode libvirt"),
		      "%s", e.msg);
}
END_TEST

/* The kernel is what the comparison is about: shown, never refused. */
START_TEST(kernels_expected_and_header_read)
{
	const struct cmp_diff *df;

	compare2("base", "new", &defaults);
	ck_assert(!cmp.forced);
	df = diff_with("host kernel");
	ck_assert_ptr_nonnull(df);
	ck_assert_int_eq(df->kind, CMP_DIFF_EXPECTED);
	ck_assert_str_eq(df->what, "host kernel: base 6.1.0-base, new 6.1.0-patched");
	ck_assert_str_eq(runs[0].meta.kernel, "6.1.0-base");
	ck_assert_str_eq(runs[0].meta.hostname, "lab-7");
	ck_assert_str_eq(runs[0].meta.cpu_model, "Example CPU 9000 @ 3.0GHz");
	ck_assert_str_eq(runs[0].meta.started, "2026-12-01T10:00:00.000000Z");
	ck_assert_str_eq(runs[0].meta.ended, "2026-12-01T10:05:00.000000Z");
	ck_assert_str_eq(runs[0].meta.hostd_version, "0.1.0");
	ck_assert_str_eq(runs[0].meta.release, "scheduled");
	ck_assert_int_eq(runs[0].meta.guest_count, 3);
	ck_assert_int_eq(runs[0].meta.guest_vcpus, -1); /* not in a local run's manifest */
	ck_assert_ptr_null(runs[0].meta.guest_kernels); /* no participant said its kernel */
}
END_TEST

/* The kernel the guests' agents said they run on (participants[].kernel):
 * read, shown in the header (each guest's when they differ), and expected
 * to differ between runs; shown, not refused, when one run lacks it. */
START_TEST(guest_kernels_read_shown_expected)
{
	struct run_err e = { "" };
	struct out_lines l = { 0 };
	struct run_meta m;
	struct json_object *j = json_tokener_parse(
		"{\"participants\":[{\"node\":\"guest-1\",\"kind\":\"libvirt\",\"kernel\":"
		"\"6.1.0-a\"},{\"node\":\"host\",\"kind\":\"host\",\"kernel\":\"6.9-host\"},"
		"{\"node\":\"guest-2\",\"kind\":\"libvirt\",\"kernel\":\"6.1.0-b\"}]}");

	/* the host's own agent is not a guest */
	run_meta_load(&m, j, "/nonexistent");
	ck_assert_str_eq(m.guest_kernels, "guest-1 6.1.0-a, guest-2 6.1.0-b");
	run_meta_free(&m);
	/* guest-2 gone: the guests agree */
	json_object_array_del_idx(json_object_object_get(j, "participants"), 2, 1);
	run_meta_load(&m, j, "/nonexistent");
	ck_assert_str_eq(m.guest_kernels, "6.1.0-a");
	run_meta_free(&m);
	json_object_put(j);

	compare2("base", "new", &defaults);
	cmp_free(&cmp);
	runs[1].meta.guest_kernels = xstrdup("guest-1 6.1.0-a, guest-2 6.1.0-b");
	runs[0].meta.guest_kernels = xstrdup("6.1.0-a");
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &defaults, &e) == 0, "%s", e.msg);
	ck_assert(!cmp.forced);
	ck_assert_int_eq(diff_with("guest kernel (running)")->kind, CMP_DIFF_EXPECTED);
	ck_assert_str_eq(diff_with("guest kernel (running)")->what,
			 "guest kernel (running): base 6.1.0-a, new guest-1 6.1.0-a, guest-2 6.1.0-b");
	out_header(&cmp, 0, &l);
	ck_assert_str_eq(l.line[1], "host kernel 6.1.0-base; guest kernel 6.1.0-a");
	out_lines_free(&l);
	cmp_free(&cmp);
	free(runs[0].meta.guest_kernels);
	runs[0].meta.guest_kernels = NULL;
	ck_assert_msg(cmp_build(&cmp, runs, 2, &dict, &defaults, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(diff_with("guest kernel (running)")->kind, CMP_DIFF_SHOWN);
}
END_TEST

/* Issue 15: a +0.45% change of every node (exact U p = 0.00466) hidden by
 * Holm over 18 rows, half of them secondary; kept by Holm over the 6
 * primary ones.  Its size is printed either way. */
START_TEST(holm_over_primary_family)
{
	struct cmp_opts o = defaults;
	const struct cmp_row *g, *n1;

	compare2("base", "subtle", &defaults);
	ck_assert_uint_eq(cmp.family[1], 6);
	g = row("cpu-probe", "ops_per_sec", CMP_ROW_GUESTS, NULL);
	ck_assert(g->primary);
	ck_assert_double_eq_tol(g->cells[1].t.p, 60.0 / 12870, 1e-12);
	ck_assert_int_eq(g->cells[1].verdict, CMP_BETTER);
	ck_assert_int_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "host")->cells[1].verdict,
			 CMP_BETTER);
	n1 = row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1");
	ck_assert(!n1->primary);
	ck_assert_double_eq(n1->cells[1].p_adj, n1->cells[1].t.p);
	ck_assert(!row("cpu-probe", "elapsed", CMP_ROW_GUESTS, NULL)->primary);
	ck_assert(row("uname", "elapsed", CMP_ROW_GUESTS, NULL)->primary); /* its only metric */
	teardown();
	o.family_all = true;
	compare2("base", "subtle", &o);
	ck_assert_uint_eq(cmp.family[1], 18);
	g = row("cpu-probe", "ops_per_sec", CMP_ROW_GUESTS, NULL);
	ck_assert_int_eq(g->cells[1].verdict, CMP_NO_CHANGE);
	ck_assert(g->cells[1].change_pct > 0.44 && g->cells[1].change_pct < 0.46);
}
END_TEST

/* Issue 15: the monitors' steal_pct says 20% on guest-1 in cpu-probe's
 * iterations 3 and 6: those two steps are noisy for every node, counted
 * per series; steal_pct's own rows are secondary. */
START_TEST(noise_flags_and_monitor_rows)
{
	struct cmp_opts o = defaults;

	compare2("base", "noisy", &defaults);
	ck_assert_uint_eq(cmp.noisy_steps[0], 0);
	ck_assert_uint_eq(cmp.noisy_steps[1], 2);
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].noisy, 2);
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-3")->cells[1].noisy, 2);
	ck_assert_uint_eq(row("cpu-probe", "elapsed", CMP_ROW_GUESTS, NULL)->cells[1].noisy, 2);
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[0].noisy, 0);
	ck_assert_uint_eq(row("uname", "elapsed", CMP_ROW_NODE, "guest-1")->cells[1].noisy, 0);
	ck_assert(!row("cpu-probe", "steal_pct", CMP_ROW_GUESTS, NULL)->primary);
	ck_assert(!row("cpu-probe", "steal_pct", CMP_ROW_NODE, "host")->primary);
	/* a monitor's metric does not make uname's elapsed the agent's by-product */
	ck_assert(row("uname", "elapsed", CMP_ROW_GUESTS, NULL)->primary);
	ck_assert(!row("cpu-probe", "elapsed", CMP_ROW_GUESTS, NULL)->primary);
	ck_assert_uint_eq(cmp.family[1], 6);
	teardown();
	o.noise_pct = 25;
	compare2("base", "noisy", &o);
	ck_assert_uint_eq(cmp.noisy_steps[1], 0);
	ck_assert_uint_eq(row("cpu-probe", "ops_per_sec", CMP_ROW_NODE, "guest-1")->cells[1].noisy, 0);
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
			      strstr(o.out, "guests (mean)") && strstr(o.out, "barrier skew"),
		      "%s", o.out);
	/* uname: not significant; its change is printed, ~ beside it (issue 15) */
	ck_assert_msg(strstr(o.out, "  +0.12% ~\n"), "%s", o.out);
	o = run_hostctl("compare", "new", "base", "--fail-on-regression", "10", NULL);
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
	static const char *const opts[] = {
		"--test",     "--alpha", "--correction", "--format", "--fail-on-regression",
		"--results",  "--help",	 "--family",	 "--vary",   "--force",
		"--noise-pct"
	};
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
	ck_assert_ptr_nonnull(
		strstr(o.out, "\ncpu-probe,ops_per_sec,ops/s,higher,node,guest-1,new,new,8,"));
	o = run_hostctl("compare", "--format", "markdown", "base", "new", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "| node | run | n |"));
	ck_assert_ptr_nonnull(strstr(o.out, "| +0.12% \\~ |"));
}
END_TEST

/* Issue 15: what a kernel engineer reads first comes first. */
START_TEST(cli_verdict_failures_header_on_top)
{
	struct out o = run_hostctl("compare", "base", "subtle", NULL);
	const char *table;

	ck_assert_int_eq(o.status, 0);
	ck_assert_msg(!strncmp(o.out,
			       "verdict, subtle against base:\n"
			       "  significantly better: cpu-probe ops_per_sec, host +0.45% (p 0.028); "
			       "cpu-probe ops_per_sec, guests together +0.45% (p 0.028)",
			       strlen("verdict, subtle against base:\n  significantly better: cpu-probe "
				      "ops_per_sec, host +0.45% (p 0.028); cpu-probe ops_per_sec, guests "
				      "together +0.45% (p 0.028)")),
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, "  no significant change elsewhere (3 other primary rows)\n"),
		      "%s", o.out);
	/* secondary rows: their raw p, marked */
	ck_assert_msg(strstr(o.out, "guest-1 (secondary)") && strstr(o.out, "0.0047 raw"), "%s", o.out);
	o = run_hostctl("compare", "--family", "all", "base", "subtle", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_msg(strstr(o.out, "no significant change in any of the 18 primary rows tested"),
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, "+0.45% ~\n"), "%s", o.out); /* the size, never hidden */
	ck_assert_int_eq(run_hostctl("compare", "--family", "some", "base", "new", NULL).status, 2);
	o = run_hostctl("compare", "base", "noisy", NULL);
	ck_assert_msg(strstr(o.out, "  run noisy has 2 noisy steps (some node's steal time, CPU "
				    "pressure or vCPU delay over 5%)") &&
			      strstr(o.out, " 8, 2 noisy "),
		      "%s", o.out);
	o = run_hostctl("compare", "--noise-pct", "25", "base", "noisy", NULL);
	ck_assert_ptr_null(strstr(o.out, "noisy step"));

	o = run_hostctl("compare", "base", "failedguest", NULL);
	ck_assert_int_eq(o.status, 0);
	table = strstr(o.out, "cpu-probe ops_per_sec [");
	ck_assert_ptr_nonnull(table);
	ck_assert_msg(strstr(o.out, "failures (a failed step gives no number from its node):\n"
				    "  failedguest: guest-2 cpu-probe: 2 failed steps: cpu-probe exited "
				    "with status 1\n") < table,
		      "%s", o.out);
	ck_assert_ptr_nonnull(strstr(o.out, "failedguest (new): degraded, failedguest\n"));
	ck_assert_ptr_nonnull(strstr(o.out, "failures: 2 failed steps, 0 participant failures"));

	/* the header of each run, before any table */
	o = run_hostctl("compare", "base", "new", NULL);
	table = strstr(o.out, "cpu-probe ops_per_sec [");
	static const char *const header[] = {
		"base (base): complete, base\n",
		"  host kernel 6.1.0-base; guest kernel the host's (local guests)\n",
		"  host kernel 6.1.0-patched; ",
		"  host lab-7, CPU Example CPU 9000 @ 3.0GHz\n",
		"  guests: 3 local; 8 iterations\n",
		"  from 2026-12-01T10:00:00.000000Z to 2026-12-01T10:05:00.000000Z; hostd 0.1.0; "
		"release scheduled\n",
		"  barrier skew median 3 us, max 5 us over 16 steps\n",
		"  failures: none\n",
		"  expected host kernel: base 6.1.0-base, new 6.1.0-patched\n",
	};
	for (size_t i = 0; i < sizeof(header) / sizeof(header[0]); i++) {
		const char *at = strstr(o.out, header[i]);

		ck_assert_msg(at && at < table, "no \"%s\" above the tables in:\n%s", header[i], o.out);
	}
}
END_TEST

/* Issue 15: the 200-against-400-loops pair: refused, then compared with
 * --force and the warning in every output; --vary names what differs. */
START_TEST(cli_refused_then_forced)
{
	static const char *const fmts[] = { "text", "markdown", "json", "csv" };
	struct out o = run_hostctl("compare", "loops200", "loops400", NULL);
	struct json_object *j;

	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(o.out, "");
	ck_assert_msg(strstr(o.err, "g.conf HACKBENCH_LOOPS: loops200 200, loops400 400") &&
			      strstr(o.err, "--force") && strstr(o.err, "--vary NAME"),
		      "%s", o.err);
	o = run_hostctl("report", "-o", "/nonexistent/never", "loops200", "loops400", NULL);
	ck_assert_int_eq(o.status, 1); /* refused before anything is written */
	ck_assert_ptr_nonnull(strstr(o.err, "HACKBENCH_LOOPS"));
	for (size_t i = 0; i < 4; i++) {
		o = run_hostctl("compare", "--force", "--format", fmts[i], "loops200", "loops400",
				NULL);
		ck_assert_int_eq(o.status, 0);
		ck_assert_msg(strstr(o.err, "WARNING: these runs differ"), "%s: %s", fmts[i], o.err);
		if (i < 3)
			ck_assert_msg(strstr(o.out, "WARNING: these runs differ"), "%s: %s",
				      fmts[i], o.out);
	}
	o = run_hostctl("compare", "--force", "--format", "json", "loops200", "loops400", NULL);
	j = json_tokener_parse(o.out);
	ck_assert_ptr_nonnull(j);
	ck_assert(!json_object_get_boolean(jget(j, "comparable")));
	ck_assert_str_eq(json_object_get_string(
				 jget(json_object_array_get_idx(jget(j, "differences"), 1), "kind")),
			 "refused");
	json_object_put(j);
	o = run_hostctl("compare", "--vary", "HACKBENCH_LOOPS", "loops200", "loops400", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_null(strstr(o.out, "WARNING"));
	ck_assert_msg(strstr(o.out, "  expected g.conf HACKBENCH_LOOPS: loops200 200, loops400 400\n"),
		      "%s", o.out);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("hostctl-compare");
	TCase *lib = tcase_create("library"), *cli = tcase_create("cli");
	SRunner *sr;
	int failed;

	if (argc < 2 || !getenv("LOCKSTEP_SOURCE_ROOT")) {
		fprintf(stderr,
			"usage: test-hostctl-compare HOSTCTL (with LOCKSTEP_SOURCE_ROOT set)\n");
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
	tcase_add_test(lib, failed_steps_are_not_samples);
	tcase_add_test(lib, refused_unless_forced_or_varied);
	tcase_add_test(lib, guests_must_match);
	tcase_add_test(lib, guest_kernels_read_shown_expected);
	tcase_add_test(lib, kernels_expected_and_header_read);
	tcase_add_test(lib, holm_over_primary_family);
	tcase_add_test(lib, noise_flags_and_monitor_rows);
	tcase_add_checked_fixture(cli, NULL, teardown);
	tcase_add_test(cli, cli_text_and_exit_status);
	tcase_add_test(cli, cli_help_names_every_option);
	tcase_add_test(cli, cli_json_csv_markdown);
	tcase_add_test(cli, cli_verdict_failures_header_on_top);
	tcase_add_test(cli, cli_refused_then_forced);
	suite_add_tcase(s, lib);
	suite_add_tcase(s, cli);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(data);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
