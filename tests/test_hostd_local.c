// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd end to end with local guests: the real hostd binary, the real agent
 * processes, the real protocol.  Faults are made by the steps themselves
 * (a command step that kills or stops its own agent), so they happen at a
 * known step and on a known node.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

static int run_hostd(const char *agent)
{
	return hostd_test_run(agent, NULL);
}

START_TEST(test_16_guests_10_steps)
{
	write_file("h.conf", "GUEST_KIND=local\nexport GUEST_COUNT=16\nBARRIER_TIMEOUT=60\n", 0644);
	write_file("g.conf", "MMTESTS=\"cpu-probe\"\nMMTEST_ITERATIONS=10\nCPU_PROBE_UNITS=20000\n",
		   0644);
	ck_assert_int_eq(run_hostd(NULL), 0);

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(jint(m, "steps_released"), 10);
	ck_assert_int_eq(json_object_array_length(json_object_object_get(m, "failures")), 0);
	ck_assert_int_eq(json_object_array_length(json_object_object_get(m, "participants")), 16);
	json_object_put(m);

	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_uint_eq(n, 16 * 10 * 2);
	for (int g = 1; g <= 16; g++) {
		char node[32];
		snprintf(node, sizeof(node), "guest-%d", g);
		for (int step = 1; step <= 10; step++) {
			ck_assert_int_eq(count_sample(s, n, node, step, "ops_per_sec"), 1);
			ck_assert_int_eq(count_sample(s, n, node, step, "elapsed"), 1);
		}
	}
	free_ndjson(s, n);

	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 10);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(jint(b[i], "step"), (int64_t)i + 1);
		ck_assert_int_ge(jint(b[i], "skew_ns"), 0);
		ck_assert_int_eq(json_object_object_length(json_object_object_get(b[i], "started_ns")),
				 16);
		ck_assert_int_ge(jint(b[i], "go_sent_ns"), 0);
	}
	free_ndjson(b, n);
}
END_TEST

START_TEST(test_host_takes_part)
{
	write_file("h.conf", "GUEST_COUNT=2\nHOST_RUNS_BENCHMARKS=yes\n", 0644);
	write_file("g.conf",
		   "BENCHMARKS='cpu-probe hello'\nITERATIONS=2\nCPU_PROBE_UNITS=1000\n"
		   "COMMAND_HELLO='echo hello from $PWD'\n",
		   0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(s, n, "host", 1, "ops_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, "host", 4, "elapsed"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 2, "elapsed"), 1);
	free_ndjson(s, n);
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/nodes/host/step-2.out", tmpdir);
	char *out = read_text(path);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(strstr(out, "hello from"));
	snprintf(path, sizeof(path), "%s/results/t/config/g.conf", tmpdir);
	out = read_text(path);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(strstr(out, "COMMAND_HELLO"));
}
END_TEST

/* Step 2 of guest-2 SIGKILLs its own agent. */
static const char *kill_guest2_gconf =
	"MMTESTS=\"cpu-probe suicide\"\nMMTEST_ITERATIONS=3\nCPU_PROBE_UNITS=1000\n"
	"COMMAND_SUICIDE='case $PWD in */guest-2/work) kill -KILL $PPID; sleep 5;; esac'\n";

START_TEST(test_killed_agent_continue)
{
	write_file("h.conf", "GUEST_COUNT=4\nBARRIER_TIMEOUT=30\nON_GUEST_FAILURE=continue\n", 0644);
	write_file("g.conf", kill_guest2_gconf, 0644);
	ck_assert_int_eq(run_hostd(NULL), 2);

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	json_object *f = json_object_object_get(m, "failures");
	ck_assert_int_eq(json_object_array_length(f), 1);
	json_object *f0 = json_object_array_get_idx(f, 0);
	ck_assert_str_eq(jstr(f0, "node"), "guest-2");
	ck_assert_int_eq(jint(f0, "step"), 2);
	json_object_put(m);

	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	/* guest-2's first step is kept; the others ran all six steps */
	ck_assert_int_eq(count_sample(s, n, "guest-2", 1, "ops_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 3, "ops_per_sec"), 0);
	for (int step = 1; step <= 6; step++) {
		ck_assert_int_eq(count_sample(s, n, "guest-1", step, "elapsed"), 1);
		ck_assert_int_eq(count_sample(s, n, "guest-4", step, "elapsed"), 1);
	}
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_killed_agent_abort)
{
	write_file("h.conf", "GUEST_COUNT=3\nON_GUEST_FAILURE=abort\n", 0644);
	write_file("g.conf", kill_guest2_gconf, 0644);
	ck_assert_int_eq(run_hostd(NULL), 2);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "aborted");
	json_object *f0 = json_object_array_get_idx(json_object_object_get(m, "failures"), 0);
	ck_assert_str_eq(jstr(f0, "node"), "guest-2");
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	/* everything of step 1 is there */
	for (int g = 1; g <= 3; g++) {
		char node[32];
		snprintf(node, sizeof(node), "guest-%d", g);
		ck_assert_int_eq(count_sample(s, n, node, 1, "ops_per_sec"), 1);
	}
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_stopped_agent_named_at_deadline)
{
	/* guest-3 stops its own agent: only the barrier deadline can tell */
	write_file("h.conf", "GUEST_COUNT=3\nBARRIER_TIMEOUT=1\nON_GUEST_FAILURE=continue\n", 0644);
	write_file("g.conf",
		   "MMTESTS='freeze cpu-probe'\nCPU_PROBE_UNITS=1000\n"
		   "COMMAND_FREEZE='case $PWD in */guest-3/work) kill -STOP $PPID;; esac'\n",
		   0644);
	ck_assert_int_eq(run_hostd(NULL), 2);
	json_object *m = manifest();
	json_object *f0 = json_object_array_get_idx(json_object_object_get(m, "failures"), 0);
	ck_assert_str_eq(jstr(f0, "node"), "guest-3");
	ck_assert_ptr_nonnull(strstr(jstr(f0, "reason"), "BARRIER_TIMEOUT"));
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(s, n, "guest-1", 2, "ops_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 2, "ops_per_sec"), 1);
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_garbage_agent)
{
	/* guest-2's "agent" writes garbage and a flood of resets; the rest are real */
	char wrapper[2048];
	snprintf(wrapper, sizeof(wrapper),
		 "#!/bin/sh\n"
		 "case \"$*\" in *'--node guest-2'*)\n"
		 "  i=0; while [ $i -lt 50 ]; do printf '{\"v\":1,\"type\":\"ready\",\"step\":\\377garbage\\n"
		 "{]]\\n\\000\\001' >&3 || exit 0; i=$((i+1)); done; sleep 30;;\n"
		 "esac\n"
		 "exec '%s' \"$@\"\n",
		 agent_path);
	write_file("agent-wrapper", wrapper, 0755);
	write_file("h.conf", "GUEST_COUNT=3\nBARRIER_TIMEOUT=20\nON_GUEST_FAILURE=continue\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=1000\n", 0644);
	char agent[512];
	snprintf(agent, sizeof(agent), "%s/agent-wrapper", tmpdir);
	ck_assert_int_eq(run_hostd(agent), 2);
	json_object *m = manifest();
	json_object *f0 = json_object_array_get_idx(json_object_object_get(m, "failures"), 0);
	ck_assert_str_eq(jstr(f0, "node"), "guest-2");
	ck_assert_ptr_nonnull(strstr(jstr(f0, "reason"), "garbage"));
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(s, n, "guest-1", 1, "ops_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-3", 1, "ops_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 1, "ops_per_sec"), 0);
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_config_error_names_line)
{
	write_file("h.conf", "GUEST_COUNT=2\n# fine\nBARRIER_TIMEOUT=soon\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 1);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	char *err = read_text(path);
	ck_assert_ptr_nonnull(strstr(err, "h.conf:3"));
	ck_assert_ptr_nonnull(strstr(err, "soon"));

	write_file("h.conf", "GUEST_COUNT=2\n", 0644);
	write_file("g.conf", "MMTESTS=\"cpu-probe hackbench\"\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 1);
	err = read_text(path);
	ck_assert_ptr_nonnull(strstr(err, "g.conf:1"));
	/* a family's name is answered with one of its members, never with
	 * "define COMMAND_HACKBENCH", which misleads */
	ck_assert_msg(strstr(err, "did you mean \"hackbench-"), "%s", err);
	ck_assert_ptr_null(strstr(err, "COMMAND_HACKBENCH"));

	write_file("g.conf", "MMTESTS=cpu-probe\nA=$(rm -rf /)\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 1);
	err = read_text(path);
	ck_assert_ptr_nonnull(strstr(err, "g.conf:2:"));

	/* a plan over the step limit is refused before anything starts */
	write_file("g.conf",
		   "MMTESTS=\"cpu-probe cpu-probe cpu-probe cpu-probe cpu-probe\"\n"
		   "ITERATIONS=1000\n",
		   0644);
	ck_assert_int_eq(run_hostd(NULL), 1);
	err = read_text(path);
	ck_assert_msg(strstr(err, "g.conf:1: the plan would have more than 4096 steps"), "%s", err);
}
END_TEST

/* 1000 barriers: the plan goes to the agents in parts */
START_TEST(test_thousand_steps)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=1000\nCPU_PROBE_UNITS=100\n", 0644);
	ck_assert_msg(run_hostd(NULL) == 0, "%s", run_diagnosis());
	json_object *m = manifest();
	ck_assert_int_eq(jint(m, "steps_released"), 1000);
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_uint_eq(n, 2 * 1000 * 2);
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_interrupted_by_sigterm)
{
	write_file("h.conf", "GUEST_COUNT=2\n", 0644);
	write_file("g.conf", "MMTESTS='nap'\nCOMMAND_NAP='sleep 30'\n", 0644);
	pid_t pid = hostd_test_start(NULL, NULL);
	/* wait until the step is released: barriers.ndjson gets its record */
	hostd_test_wait_first_barrier(30);
	kill(pid, SIGTERM);
	ck_assert_int_eq(hostd_test_wait(pid), 2);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "interrupted");
	json_object_put(m);
}
END_TEST

/* Local guests on a synthetic clock 7 s ahead and drifting 200 ppm: hostd
 * must find the offset by ping/pong, release at a common instant, and
 * report starts on its own clock (else the skew would be 7 s). */
START_TEST(test_synthetic_clock_found)
{
	write_file("h.conf",
		   "GUEST_COUNT=3\nHOST_RUNS_BENCHMARKS=yes\n"
		   "LOCAL_GUEST_CLOCK_OFFSET_NS=7000000000\nLOCAL_GUEST_CLOCK_DRIFT_PPM=200\n",
		   0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nITERATIONS=10\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 10);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(jstr(b[i], "release"), "scheduled");
		ck_assert_int_lt(jint(b[i], "skew_ns"), 100 * 1000 * 1000);
		json_object *offs = json_object_object_get(b[i], "clock_offsets");
		json_object *g1 = json_object_object_get(offs, "guest-1");
		json_object *host = json_object_object_get(offs, "host");
		ck_assert_str_eq(jstr(g1, "method"), "ping");
		ck_assert_str_eq(jstr(host, "method"), "shared");
		/* the truth is 7 s plus at most 200 ppm of a run of a few
		 * seconds; the estimate may miss it by its bound */
		int64_t err = jint(g1, "offset_ns") - 7000000000LL;
		ck_assert_int_ge(err, -jint(g1, "bound_ns") - 1000);
		ck_assert_int_le(err, jint(g1, "bound_ns") + 5 * 200 * 1000);
	}
	free_ndjson(b, n);
}
END_TEST

START_TEST(test_late_go_reported)
{
	/* a lead of 1 us: every go arrives after its instant */
	write_file("h.conf", "GUEST_COUNT=2\nRELEASE_LEAD=0.000001\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nITERATIONS=5\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	size_t n, late = 0;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(jstr(b[i], "release"), "scheduled");
		late += json_object_object_length(json_object_object_get(b[i], "late_ns"));
	}
	free_ndjson(b, n);
	ck_assert_uint_gt(late, 0);
}
END_TEST

START_TEST(test_unusable_clock_falls_back)
{
	/* 20 ms of noise on the guests' clock: no offset is known well enough
	 * for a common instant, so every barrier is released immediately */
	write_file("h.conf", "GUEST_COUNT=2\nLOCAL_GUEST_CLOCK_JITTER_NS=20000000\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nITERATIONS=3\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(jstr(b[i], "release"), "immediate");
	free_ndjson(b, n);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	ck_assert_ptr_nonnull(strstr(read_text(path), "releasing immediately"));

	/* and immediate when asked for */
	hostd_test_teardown();
	hostd_test_setup();
	write_file("h.conf", "GUEST_COUNT=2\nRELEASE=immediate\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	b = read_ndjson("barriers.ndjson", &n);
	ck_assert_str_eq(jstr(b[0], "release"), "immediate");
	free_ndjson(b, n);
}
END_TEST

/* Monitors on: samples arrive during the run at about the asked
 * frequency, stamped with the step they belong to, and every step yields
 * summary samples beside the benchmark's. */
START_TEST(test_monitor_samples_arrive)
{
	write_file("h.conf", "GUEST_COUNT=2\n", 0644);
	write_file("g.conf", "MMTESTS=nap\nCOMMAND_NAP='sleep 1'\nMONITOR_UPDATE_FREQUENCY=0.1\n",
		   0644);
	ck_assert_int_eq(run_hostd(NULL), 0);
	char path[600];
	snprintf(path, sizeof(path), "%s/results/t/nodes/guest-1/monitors/loadavg.ndjson", tmpdir);
	char *text = read_text(path);
	ck_assert_ptr_nonnull(text);
	int in_step = 0, lines = 0;
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);
		ck_assert_ptr_nonnull(o);
		lines++;
		if (jint(o, "step") == 1 && !strcmp(jstr(o, "metric"), "loadavg.1"))
			in_step++;
		json_object_put(o);
	}
	/* the step lasts at least 1 s: sampled every 0.1 s, it has several
	 * (a bound from below only: a loaded machine makes the step longer) */
	ck_assert_int_ge(in_step, 5);
	size_t n;
	json_object **sm = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(sm, n, "guest-1", 1, "steal_pct"), 1);
	ck_assert_int_eq(count_sample(sm, n, "guest-2", 1, "elapsed"), 1);
	free_ndjson(sm, n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-local");
	TCase *tc = tcase_create("end-to-end");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_16_guests_10_steps);
	tcase_add_test(tc, test_thousand_steps);
	tcase_add_test(tc, test_host_takes_part);
	tcase_add_test(tc, test_killed_agent_continue);
	tcase_add_test(tc, test_killed_agent_abort);
	tcase_add_test(tc, test_stopped_agent_named_at_deadline);
	tcase_add_test(tc, test_garbage_agent);
	tcase_add_test(tc, test_config_error_names_line);
	tcase_add_test(tc, test_interrupted_by_sigterm);
	tcase_add_test(tc, test_synthetic_clock_found);
	tcase_add_test(tc, test_late_go_reported);
	tcase_add_test(tc, test_unusable_clock_falls_back);
	tcase_add_test(tc, test_monitor_samples_arrive);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
