/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd end to end with local guests, about the core of a step (issues 19
 * and 20): a go the channel lost is sent again, and nothing a step started
 * outlives it.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostd_testlib.h"

static char chaos_path[512];

static void setup(void)
{
	hostd_test_setup();
	snprintf(chaos_path, sizeof(chaos_path), "%s/bench/chaos-agent",
		 getenv("LOCKSTEP_BUILD_ROOT"));
}

static void teardown(void)
{
	unsetenv("LOCKSTEP_CHAOS_PLAN");
	hostd_test_teardown();
}

/* The events of the manifest for (node, step) whose text holds want. */
static int count_events(json_object *m, const char *node, int64_t step, const char *want)
{
	json_object *ev = json_object_object_get(m, "events");
	int n = 0;
	for (size_t i = 0; ev && i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		if (!strcmp(jstr(e, "node"), node) && jint(e, "step") == step &&
		    strstr(jstr(e, "what"), want))
			n++;
	}
	return n;
}

/* A go lost on its way to one agent costs the re-send bound, not the
 * barrier timeout: the run completes and says what happened. */
static void check_go_resent(const char *release)
{
	char h[256], plan[300];
	snprintf(h, sizeof(h), "GUEST_KIND=local\nGUEST_COUNT=2\nRELEASE=%s\n"
		 "BARRIER_TIMEOUT=60\nON_GUEST_FAILURE=abort\n", release);
	write_file("h.conf", h, 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=5\nCPU_PROBE_UNITS=1000\n", 0644);
	snprintf(plan, sizeof(plan), "%s/chaos.plan", tmpdir);
	write_file("chaos.plan", "guest-1 3 go drop-go\n", 0644);
	setenv("LOCKSTEP_CHAOS_PLAN", plan, 1);
	ck_assert_msg(hostd_test_run(chaos_path, NULL) == 0, "%s", run_diagnosis());

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(count_events(m, "guest-1", 3, "go sent again"), 1);
	ck_assert_int_eq(count_events(m, "guest-1", 3, "the first go was lost"), 1);
	ck_assert_int_eq(count_events(m, "guest-2", 3, "go sent again"), 0);
	json_object_put(m);

	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(json_object_object_length(json_object_object_get(b[i], "started_ns")),
				 2);
	free_ndjson(b, n);
}

START_TEST(test_lost_go_resent_immediate)
{
	check_go_resent("immediate");
}
END_TEST

START_TEST(test_lost_go_resent_scheduled)
{
	check_go_resent("scheduled");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-steps");
	TCase *tc = tcase_create("end-to-end");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_lost_go_resent_immediate);
	tcase_add_test(tc, test_lost_go_resent_scheduled);
	suite_add_tcase(s, tc);
	return hostd_test_main(s);
}
