// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Binaries from the host, end to end: hackbench (rt-tests) and sysbench,
 * dynamically linked against this host's glibc, pushed with their loader
 * and libraries into the busybox demo guest (which has no glibc at all)
 * and run there as command steps.  Needs root, a running libvirtd, the
 * built demo guest and both tools on the host; skipped (77) without them.
 * One guest, named lockstep-bundle-<pid>-1.
 */
#include <check.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo_testlib.h"
#include "hostd_testlib.h"
#include "testlib.h"

static void setup(void)
{
	demo_test_setup("bundle");
}

static void teardown(void)
{
	demo_test_teardown(1);
}

/* ports of this process's own, away from the other e2e tests' */
static void write_hconf(void)
{
	demo_write_hconf(1, 24000,
			 "GUEST_BOOT_TIMEOUT=300\nBARRIER_TIMEOUT=300\nSTEP_TIMEOUT=600\n"
			 "GUEST_SSH_TIMEOUT=120\n");
}

static const char *step_out(int step)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/nodes/%s1/step-%d.out", tmpdir, demo_prefix, step);
	return read_text(path);
}

START_TEST(test_hackbench_and_sysbench_in_busybox_guest)
{
	write_hconf();
	write_file("g.conf",
		   "MMTESTS='hb sb maps ship'\n"
		   "HARNESS_BINARIES='hackbench sysbench /usr/bin/cat'\n"
		   "COMMAND_HB='hackbench -g 1 -l 50'\n"
		   "COMMAND_SB='sysbench cpu --events=200 --time=0 run'\n"
		   /* by its path: busybox sh runs its own applet for a bare "cat",
		    * whatever PATH says */
		   "COMMAND_MAPS='/run/lockstep/bin/cat /proc/self/maps'\n"
		   /* a job file as MMTests' fio configs write it: shipped with
		    * the harness into the work folder, where the step reads it */
		   "JOBFILE=/tmp/jobfile-$$\n"
		   "COMMAND_SHIP=\"cat $JOBFILE\"\n"
		   "cat >$JOBFILE <<END\nshipped with $NUMCPUS CPUs\nEND\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	json_object *p = json_object_array_get_idx(json_object_object_get(m, "participants"), 0);
	json_object *h = json_object_object_get(p, "harness");
	ck_assert_ptr_nonnull(h);
	/* the agent and both programs with their libraries: megabytes */
	ck_assert_int_gt(jint(h, "bytes"), 4 << 20);
	fprintf(stderr, "harness pushed: %s\n", json_object_to_json_string(h));
	json_object_put(m);

	size_t n;
	const char *out;
	json_object **s = read_ndjson("samples.ndjson", &n);
	char node[96];
	snprintf(node, sizeof(node), "%s1", demo_prefix);
	for (int step = 1; step <= 4; step++)
		ck_assert_int_eq(count_sample(s, n, node, step, "elapsed"), 1);
	free_ndjson(s, n);
	out = step_out(4);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(!strncmp(out, "shipped with ", 13), "the shipped file read: %s", out);

	/* the raw output came back: the programs ran, not a shell's complaint */
	out = step_out(1);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(strstr(out, "Time:"), "hackbench printed: %s", out);
	out = step_out(2);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(strstr(out, "events per second"), "sysbench printed: %s", out);

	/* The pushed cat (coreutils, glibc) maps only the pushed loader and
	 * libraries: the guest's own /lib (dropbear's libc) is never used. */
	out = step_out(3);
	ck_assert_ptr_nonnull(out);
	char *maps = strdup(out);
	int mapped = 0;
	for (char *save, *line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		mapped++;
		ck_assert_msg(!strncmp(path, "/run/lockstep/", 14), "mapped in the guest: %s", line);
	}
	ck_assert_int_ge(mapped, 3);
	ck_assert_ptr_nonnull(strstr(out, "/run/lockstep/lib/libc.so.6"));
	free(maps);
}
END_TEST

/* Runs g.conf on one demo guest: every sample, none a failure record;
 * node gets the guest's name. */
static json_object **run_specs(char *node, size_t nodelen, size_t *n)
{
	write_hconf();
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());
	json_object **s = read_ndjson("samples.ndjson", n);
	snprintf(node, nodelen, "%s1", demo_prefix);
	for (size_t i = 0; i < *n; i++)
		ck_assert_msg(!json_object_object_get_ex(s[i], "failed", NULL), "%s",
			      json_object_to_json_string(s[i]));
	return s;
}

/* The same through benchmark specs: the specs name their binaries, hostd
 * pushes them, and parses what they print into metrics. */
START_TEST(test_specs_in_busybox_guest)
{
	write_file("g.conf",
		   "MMTESTS='hackbench-process-pipes sysbenchcpu'\n"
		   "HACKBENCH_MAX_GROUPS=1\nHACKBENCH_LOOPS=50\nHACKBENCH_ITERATIONS=1\n"
		   "SYSBENCHCPU_MAX_THREADS=1\nSYSBENCHCPU_EVENTS=200\nSYSBENCHCPU_ITERATIONS=1\n",
		   0644);
	size_t n;
	char node[96];
	json_object **s = run_specs(node, sizeof(node), &n);
	ck_assert_int_eq(count_sample(s, n, node, 1, "time"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 2, "events_per_sec"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 2, "lat_p99"), 1);
	free_ndjson(s, n);
}
END_TEST

/* MMTests' scheduler benchmarks in a guest without glibc: stress-ng, perf
 * (futexbench), pmqtest and iperf3 (client and server inside the guest over
 * its loopback) run from binaries pushed from the host. */
START_TEST(test_mmtests_specs_in_busybox_guest)
{
	write_file("g.conf",
		   "MMTESTS='stressng futexbench-wake pmqtest-pinned iperf3-ipv4-tcp'\n"
		   "STRESSNG_RUNTIME=2\nSTRESSNG_ITERATIONS=1\n"
		   "FUTEXBENCH_MAX_THREADS=1\n"
		   "PMQTEST_PAIRS=1\nPMQTEST_DURATION=1\n"
		   "IPERF3_MAX_STREAMS=1\nIPERF3_DURATION=1\nIPERF3_ITERATIONS=1\n",
		   0644);
	size_t n;
	char node[96];
	json_object **s = run_specs(node, sizeof(node), &n);
	ck_assert_int_eq(count_sample(s, n, node, 1, "bogo_ops_s"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 2, "time"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 3, "lat_max"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 4, "send"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 4, "recv"), 1);
	free_ndjson(s, n);
}
END_TEST

/* A binary this host does not have stops the run before any guest starts,
 * naming it. */
START_TEST(test_missing_binary_before_boot)
{
	write_hconf();
	write_file("g.conf",
		   "MMTESTS=x\nHARNESS_BINARIES='hackbench lockstep-not-on-host'\n"
		   "COMMAND_X=true\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_int_ne(code, 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "lockstep-not-on-host: not found on this host"), "%s", err);
	ck_assert_msg(strstr(err, "g.conf:2"), "%s", err);
	virConnectPtr c = virConnectOpen("qemu:///system");
	ck_assert_ptr_nonnull(c);
	char name[96];
	snprintf(name, sizeof(name), "%s1", demo_prefix);
	virDomainPtr d = virDomainLookupByName(c, name);
	ck_assert_ptr_null(d);
	virConnectClose(c);
}
END_TEST

static void skip_unless_possible(void)
{
	demo_skip_unless_possible();
	if (access("/usr/bin/hackbench", X_OK) != 0 || access("/usr/bin/sysbench", X_OK) != 0) {
		fprintf(stderr, "needs root, the demo guest (vm-templates/build-demo-guest), "
				"rt-tests and sysbench\n");
		exit(77);
	}
}

int main(void)
{
	skip_unless_possible();
	Suite *s = suite_create("hostd-bundle");
	TCase *tc = tcase_create("busybox-guest");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_missing_binary_before_boot);
	tcase_add_test(tc, test_hackbench_and_sysbench_in_busybox_guest);
	tcase_add_test(tc, test_specs_in_busybox_guest);
	suite_add_tcase(s, tc);
	/* a case of its own, so that CK_RUN_CASE=mmtests-specs runs it alone */
	TCase *mm = tcase_create("mmtests-specs");
	tcase_add_checked_fixture(mm, setup, teardown);
	tcase_set_timeout(mm, 900);
	tcase_add_test(mm, test_mmtests_specs_in_busybox_guest);
	suite_add_tcase(s, mm);
	return testlib_main(s);
}
