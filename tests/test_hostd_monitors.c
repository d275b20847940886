// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Monitors end to end with local guests (issue 6): the real hostd, the
 * real agents.  External monitors named in g.conf run in each guest's
 * agent and their output arrives per step; one that is missing or dies is
 * reported and the run goes on; with HOST_RUNS_BENCHMARKS=no hostd samples
 * the host's /proc itself, stamped with the steps.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

static char saved_path[4096];

static void setup(void)
{
	snprintf(saved_path, sizeof(saved_path), "%s", getenv("PATH") ? getenv("PATH") : "");
	hostd_test_setup();
}

/* a case may have narrowed PATH for its agents; the cleanup needs rm */
static void teardown(void)
{
	setenv("PATH", saved_path, 1);
	hostd_test_teardown();
}

static char *node_file(const char *node, const char *file)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/results/t/nodes/%s/monitors/%s", tmpdir, node, file);
	return read_text(path);
}

/* Lines of nodes/<node>/monitors/<file> stamped step (with metric, if
 * not NULL). */
static int count_stamped(const char *node, const char *file, int step, const char *metric)
{
	char *text = node_file(node, file);
	int n = 0;

	ck_assert_msg(text != NULL, "no %s of %s; %s", file, node, run_diagnosis());
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);

		ck_assert_msg(o != NULL, "%s of %s: not JSON: %s", file, node, l);
		if (jint(o, "step") == step && (!metric || !strcmp(jstr(o, "metric"), metric)))
			n++;
		json_object_put(o);
	}
	return n;
}

static const char *manifest_text(void)
{
	static char buf[1 << 16];
	json_object *m = manifest();

	snprintf(buf, sizeof(buf), "%s", json_object_to_json_string(m));
	json_object_put(m);
	return buf;
}

/* MONITORS="vmstat" in g.conf: each guest's agent runs the host's vmstat
 * for each step, and its output is kept per step and node. */
START_TEST(test_guest_vmstat_per_step)
{
	write_file("h.conf", "GUEST_COUNT=2\n", 0644);
	write_file("g.conf",
		   "MMTESTS=nap\nCOMMAND_NAP='sleep 1'\nMMTEST_ITERATIONS=2\n"
		   "MONITORS=vmstat\n",
		   0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	for (int g = 1; g <= 2; g++) {
		for (int k = 1; k <= 2; k++) {
			char node[16], file[32];
			char *text;

			snprintf(node, sizeof(node), "guest-%d", g);
			snprintf(file, sizeof(file), "vmstat-step-%d.log", k);
			text = node_file(node, file);
			ck_assert_msg(text != NULL, "no %s of %s: %s", file, node, run_diagnosis());
			/* vmstat -n -t: its header once, then a line per interval */
			ck_assert_msg(strstr(text, "procs") && strstr(text, "free"), "%s of %s: %s",
				      file, node, text);
		}
	}
	/* nothing for a step that did not run */
	ck_assert_ptr_null(node_file("guest-1", "vmstat-step-3.log"));
	ck_assert_ptr_null(strstr(manifest_text(), "monitor vmstat"));
}
END_TEST

/* A monitor missing from the guest's PATH and one that dies are each
 * reported (events in the manifest) and the steps run on. */
START_TEST(test_guest_monitor_missing_or_dying)
{
	char bin[600], path[700], link[700];
	const char *m;

	snprintf(bin, sizeof(bin), "%s/bin", tmpdir);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	snprintf(link, sizeof(link), "%s/sleep", bin);
	ck_assert_int_eq(symlink("/bin/sleep", link), 0);
	/* a "vmstat" that says hello and dies */
	write_file("bin/vmstat", "#!/bin/sh\necho fake vmstat here\nexit 3\n", 0755);
	snprintf(path, sizeof(path), "%s", bin);
	ck_assert_int_eq(setenv("PATH", path, 1), 0);
	write_file("h.conf", "GUEST_COUNT=1\n", 0644);
	write_file("g.conf",
		   "MMTESTS=nap\nCOMMAND_NAP='sleep 1'\nMMTEST_ITERATIONS=2\n"
		   "MONITORS='vmstat mpstat'\n",
		   0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	m = manifest_text();
	ck_assert_msg(strstr(m, "mpstat: cannot start: mpstat is not on PATH"), "%s", m);
	ck_assert_msg(strstr(m, "vmstat: exited with status 3 during step 1"), "%s", m);
	ck_assert_msg(strstr(m, "vmstat: exited with status 3 during step 2"), "%s", m);
	ck_assert_ptr_nonnull(strstr(node_file("guest-1", "vmstat-step-2.log"), "fake vmstat here"));
	/* both steps ran to their end */
	size_t n;
	json_object **sm = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(sm, n, "guest-1", 2, "elapsed"), 1);
	free_ndjson(sm, n);
}
END_TEST

/* HOST_RUNS_BENCHMARKS=no with a monitor frequency in h.conf: hostd
 * samples the host's /proc itself, stamped with the step in progress, and
 * each step gets the host's summaries. */
START_TEST(test_host_proc_samples)
{
	write_file("h.conf",
		   "GUEST_COUNT=1\nHOST_RUNS_BENCHMARKS=no\nMONITOR_UPDATE_FREQUENCY=0.2\n", 0644);
	write_file("g.conf", "MMTESTS=nap\nCOMMAND_NAP='sleep 1'\nMMTEST_ITERATIONS=2\n", 0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 0);
	/* 1 s steps sampled every 0.2 s: several each (a bound from below:
	 * a loaded machine only makes a step longer) */
	for (int k = 1; k <= 2; k++) {
		ck_assert_int_ge(count_stamped("host", "stat.ndjson", k, "stat.cpu.user"), 3);
		ck_assert_int_ge(count_stamped("host", "loadavg.ndjson", k, "loadavg.1"), 3);
	}
	/* the waits at the barriers are stamped 0 (loadavg: a gauge, there
	 * even when a wait was shorter than a clock tick of /proc/stat) */
	ck_assert_int_ge(count_stamped("host", "loadavg.ndjson", 0, "loadavg.1"), 1);
	ck_assert_int_eq(count_stamped("host", "stat.ndjson", 3, NULL), 0);
	size_t n;
	json_object **sm = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(sm, n, "host", 1, "steal_pct"), 1);
	ck_assert_int_eq(count_sample(sm, n, "host", 2, "steal_pct"), 1);
	free_ndjson(sm, n);
	/* the guest asked for nothing and sent nothing */
	ck_assert_ptr_null(node_file("guest-1", "stat.ndjson"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-monitors");
	TCase *tc = tcase_create("end-to-end");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_guest_vmstat_per_step);
	tcase_add_test(tc, test_guest_monitor_missing_or_dying);
	tcase_add_test(tc, test_host_proc_samples);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
