// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Adaptive iterations (MMTEST_ITERATIONS=auto) end to end with local
 * guests: a quiet command step stops at AUTO_MIN with the guests' series
 * and their fairness within the target; a step whose time alternates
 * 0.1 s / 0.4 s runs to AUTO_MAX; a step that fails on a node leaves those
 * values out of its series; AUTO_MIN below the 6 values a median's interval
 * needs is refused.
 */
#include <check.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostd_testlib.h"
#include "testlib.h"

static void setup(void)
{
	hostd_test_setup();
}

static void teardown(void)
{
	hostd_test_teardown();
}

static json_object *auto_obj(json_object *m)
{
	json_object *a = json_object_object_get(m, "auto_iterations");
	ck_assert_msg(a != NULL, "no auto_iterations in the manifest: %s", run_diagnosis());
	return a;
}

/* One guest; a step that alternates between two shell commands (a flag
 * file in tmpdir says which is next), adaptive with rule. */
static void flip_config(const char *first, const char *second, const char *rule)
{
	char g[1024];
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=30\n", 0644);
	snprintf(g, sizeof(g),
		 "MMTESTS=flip\nCOMMAND_FLIP='if [ -e %s/flip ]; then rm %s/flip; %s; "
		 "else touch %s/flip; %s; fi'\nMMTEST_ITERATIONS=auto\n%s",
		 tmpdir, tmpdir, second, tmpdir, first, rule);
	write_file("g.conf", g, 0644);
}

START_TEST(test_quiet_stops_at_min)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=30\n", 0644);
	/* a 0.5 s sleep varies by some ms, tens on a loaded test machine: at
	 * n = 6 the median's interval is the range, within 30% */
	write_file("g.conf",
		   "MMTESTS=quiet\nCOMMAND_QUIET='sleep 0.5'\nMMTEST_ITERATIONS=auto\n"
		   "AUTO_MIN=6\nAUTO_MAX=10\nAUTO_TARGET_CI_PCT=30\n",
		   0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(jint(m, "steps_released"), 6);
	json_object *a = auto_obj(m);
	ck_assert_str_eq(jstr(a, "stopped"), "converged");
	ck_assert_int_eq(jint(a, "rounds"), 6);
	json_object *rule = json_object_object_get(a, "rule");
	ck_assert_int_eq(jint(rule, "min"), 6);
	ck_assert_int_eq(jint(rule, "max"), 10);
	ck_assert_str_eq(jstr(rule, "interval"), "median, order statistics");
	json_object *series = json_object_object_get(a, "series");
	/* the primary series: the guests together and their fairness */
	ck_assert_uint_eq(json_object_array_length(series), 2);
	ck_assert_str_eq(jstr(json_object_array_get_idx(series, 0), "of"), "guests");
	ck_assert_str_eq(jstr(json_object_array_get_idx(series, 1), "of"), "fairness");
	for (size_t i = 0; i < 2; i++) {
		json_object *s = json_object_array_get_idx(series, i);
		ck_assert_str_eq(jstr(s, "series"), "quiet");
		ck_assert_str_eq(jstr(s, "metric"), "elapsed");
		ck_assert_int_eq(jint(s, "n"), 6);
		double pct = json_object_get_double(json_object_object_get(s, "ci_pct"));
		ck_assert_double_le(pct, 30);
		ck_assert(json_object_get_boolean(json_object_object_get(s, "within")));
	}
	/* every guest ok: it ran every step the run ended with */
	ck_assert_str_eq(jstr(participant(m, "guest-1"), "status"), "ok");
	json_object_put(m);
	/* hostctl's header says the rounds run, not the plan's AUTO_MAX */
	char cmd[1024], line[512];
	bool said = false;
	snprintf(cmd, sizeof(cmd), "%s/hostctl/hostctl compare --results %s/results t t 2>&1",
		 getenv("LOCKSTEP_BUILD_ROOT"), tmpdir);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		said |= strstr(line, "; 6 (auto: converged, at most 10) iterations") != NULL;
	pclose(p);
	ck_assert_msg(said, "hostctl compare did not say the rounds run");
	size_t n;
	json_object **smp = read_ndjson("samples.ndjson", &n);
	ck_assert_uint_eq(n, 2 * 6);
	free_ndjson(smp, n);
}
END_TEST

/* The host taking part is a primary series of its own, beside the guests. */
START_TEST(test_host_is_its_own_series)
{
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nHOST_RUNS_BENCHMARKS=yes\n"
		   "BARRIER_TIMEOUT=30\n",
		   0644);
	write_file("g.conf",
		   "MMTESTS=quiet\nCOMMAND_QUIET='sleep 0.2'\nMMTEST_ITERATIONS=auto\n"
		   "AUTO_MIN=6\nAUTO_MAX=6\nAUTO_TARGET_CI_PCT=100\n",
		   0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	json_object *m = manifest();
	json_object *series = json_object_object_get(auto_obj(m), "series");
	ck_assert_uint_eq(json_object_array_length(series), 2);
	bool guests = false, host = false;
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(series, i);
		guests |= !strcmp(jstr(e, "of"), "guests");
		host |= !strcmp(jstr(e, "of"), "host");
		ck_assert_int_eq(jint(e, "n"), 6);
	}
	ck_assert(guests && host);
	json_object_put(m);
}
END_TEST

/* hostd --check says the rule and the range of samples per series. */
START_TEST(test_check_says_the_rule)
{
	static char out[65536];
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=auto\nAUTO_MIN=7\n", 0644);
	ck_assert_int_eq(hostd_test_check("", out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "  at most 30 steps, MMTEST_ITERATIONS=auto: 7 to 30 rounds, until "
				  "every series' 95% interval of the median is within 3%\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "    cpu-probe: 7 to 30\n"), "%s", out);
	/* below the 6 values a median's interval needs: refused, named */
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=auto\nAUTO_MIN=3\n", 0644);
	ck_assert_int_eq(hostd_test_check("", out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "g.conf:3: AUTO_MIN=3 is below 6: the 95% interval of a median"),
		      "%s", out);
	/* AUTO_MAX below AUTO_MIN: refused, named */
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=auto\nAUTO_MIN=8\nAUTO_MAX=7\n",
		   0644);
	ck_assert_int_eq(hostd_test_check("", out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "g.conf:4: AUTO_MAX=7 is below AUTO_MIN=8"), "%s", out);
}
END_TEST

START_TEST(test_noisy_runs_to_the_cap)
{
	/* 0.4, 0.1, 0.4, ...: far from 2%, so it runs past AUTO_MIN to the cap */
	flip_config("sleep 0.4", "sleep 0.1", "AUTO_MIN=6\nAUTO_MAX=8\nAUTO_TARGET_CI_PCT=2\n");
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(jint(m, "steps_released"), 8);
	json_object *a = auto_obj(m);
	ck_assert_str_eq(jstr(a, "stopped"), "cap");
	ck_assert_int_eq(jint(a, "rounds"), 8);
	/* one guest: its series alone, no fairness */
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(a, "series")), 1);
	json_object *s = json_object_array_get_idx(json_object_object_get(a, "series"), 0);
	ck_assert_int_eq(jint(s, "n"), 8);
	ck_assert(!json_object_get_boolean(json_object_object_get(s, "within")));
	ck_assert(json_object_get_boolean(json_object_object_get(s, "hit_max")));
	/* median 0.25 s, interval [0.1, 0.4]: far wider than 2% */
	ck_assert_double_gt(json_object_get_double(json_object_object_get(s, "ci_pct")), 20);
	json_object_put(m);
}
END_TEST

START_TEST(test_failed_steps_are_not_values)
{
	/* every other step exits 1: its elapsed must not count */
	flip_config("sleep 0.2", "sleep 0.2; exit 1",
		    "AUTO_MIN=6\nAUTO_MAX=6\nAUTO_TARGET_CI_PCT=50\n");
	/* a COMMAND_ step's exit status is an event, not a failure record */
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	json_object *m = manifest();
	json_object *s = json_object_array_get_idx(json_object_object_get(auto_obj(m), "series"), 0);
	ck_assert_int_eq(jint(s, "n"), 3);
	/* 3 values have no interval of the median: not within, the cap ended it */
	ck_assert(!json_object_get_boolean(json_object_object_get(s, "within")));
	ck_assert_str_eq(jstr(auto_obj(m), "stopped"), "cap");
	json_object_put(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd_auto");
	TCase *tc = tcase_create("auto");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_quiet_stops_at_min);
	tcase_add_test(tc, test_noisy_runs_to_the_cap);
	tcase_add_test(tc, test_host_is_its_own_series);
	tcase_add_test(tc, test_check_says_the_rule);
	tcase_add_test(tc, test_failed_steps_are_not_values);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
