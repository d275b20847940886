// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd end to end on real guests: demo guests (Debian's kernel, busybox,
 * dropbear) under the system libvirtd, made from the demo template, the
 * agent pushed in over SSH, every step released through the virtio-serial
 * channels.  Needs root, a running libvirtd and the built demo guest
 * (tools/test provides all three); skipped (77) without them.
 *
 * Guests are named lockstep-e2e-<pid>-N and use their own loopback ports,
 * so that other tests' guests are never touched.
 */
#include <check.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "demo_testlib.h"
#include "hostd_testlib.h"
#include "testlib.h"

static void setup(void)
{
	demo_test_setup("e2e");
}

static void teardown(void)
{
	/* whatever happened, no guest of this case may outlive it */
	demo_test_teardown(2);
}

/* a port range of this process's own, away from the default 22200 */
static void write_hconf(const char *extra)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "GUEST_BOOT_TIMEOUT=180\nBARRIER_TIMEOUT=60\nHOST_RUNS_BENCHMARKS=yes\n%s", extra);
	demo_write_hconf(2, 23000, text);
}

START_TEST(test_two_guests_and_host)
{
	write_hconf("");
	write_file("g.conf",
		   "MMTESTS='cpu-probe uname'\nITERATIONS=2\nCPU_PROBE_UNITS=200000\n"
		   "COMMAND_UNAME='uname -r'\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	json_object *parts = json_object_object_get(m, "participants");
	ck_assert_int_eq(json_object_array_length(parts), 3);
	for (int i = 0; i < 2; i++) {
		json_object *p = json_object_array_get_idx(parts, i);
		ck_assert_str_eq(jstr(p, "kind"), "libvirt");
		json_object *h = json_object_object_get(p, "harness");
		ck_assert_ptr_nonnull(h);
		ck_assert_int_gt(jint(h, "bytes"), 100000);
		/* the key seen over SSH was the one the console printed */
		ck_assert_str_eq(jstr(h, "hostkey_trust"), "pinned");
		json_object *c = json_object_object_get(p, "clock");
		ck_assert_str_eq(jstr(c, "method"), "ping");
		ck_assert_int_gt(jint(c, "bound_ns"), 0);
	}
	json_object_put(m);

	char node[96];
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_uint_eq(n, 3 * (2 * 2 + 2));
	for (int g = 1; g <= 2; g++) {
		snprintf(node, sizeof(node), "%s%d", demo_prefix, g);
		for (int step = 1; step <= 4; step++)
			ck_assert_int_eq(count_sample(s, n, node, step, "elapsed"), 1);
		ck_assert_int_eq(count_sample(s, n, node, 3, "ops_per_sec"), 1);
	}
	ck_assert_int_eq(count_sample(s, n, "host", 1, "ops_per_sec"), 1);
	free_ndjson(s, n);

	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_ge(jint(b[i], "skew_ns"), 0);
		ck_assert_int_gt(jint(b[i], "skew_bound_ns"), 0);
		ck_assert_int_eq(json_object_object_length(json_object_object_get(b[i], "started_ns")),
				 3);
	}
	free_ndjson(b, n);

	/* raw output came back from the guest */
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/nodes/%s1/step-2.out", tmpdir, demo_prefix);
	char *out = read_text(path);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(strstr(out, "6.1."));

	/* guests made for the run are gone */
	snprintf(node, sizeof(node), "%s1", demo_prefix);
	ck_assert(!demo_domain_exists(node));
	snprintf(node, sizeof(node), "%s2", demo_prefix);
	ck_assert(!demo_domain_exists(node));
}
END_TEST

/* The test destroys guest 2 while step 2 runs: hostd must name it at once
 * (from libvirt's lifecycle event, not at a deadline) and finish with the
 * others under ON_GUEST_FAILURE=continue. */
START_TEST(test_guest_destroyed_mid_run)
{
	/* deadlines far longer than what the test accepts: only the event can
	 * explain a quick failure */
	write_hconf("ON_GUEST_FAILURE=continue\nBARRIER_TIMEOUT=120\nSTEP_TIMEOUT=600\n");
	write_file("g.conf",
		   "MMTESTS='cpu-probe nap'\nITERATIONS=3\nCPU_PROBE_UNITS=200000\n"
		   "COMMAND_NAP='sleep 4'\n",
		   0644);
	pid_t pid = hostd_test_start(NULL, demo_args);

	/* step 1's record is written once step 1 started everywhere; step 2
	 * (the nap) is released right after it */
	hostd_test_wait_first_barrier(180);
	usleep(1500 * 1000); /* inside the 4 s nap of step 2 */

	virConnectPtr c = virConnectOpen("qemu:///system");
	ck_assert_ptr_nonnull(c);
	char name[96];
	snprintf(name, sizeof(name), "%s2", demo_prefix);
	virDomainPtr d = virDomainLookupByName(c, name);
	ck_assert_ptr_nonnull(d);
	struct timespec t0, t1;
	clock_gettime(CLOCK_REALTIME, &t0);
	ck_assert_int_eq(virDomainDestroy(d), 0);
	virDomainFree(d);
	virConnectClose(c);

	ck_assert_int_eq(hostd_test_wait(pid), 2);
	clock_gettime(CLOCK_REALTIME, &t1);

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	json_object *f = json_object_object_get(m, "failures");
	ck_assert_msg(json_object_array_length(f) == 1, "%s", run_diagnosis());
	json_object *f0 = json_object_array_get_idx(f, 0);
	ck_assert_str_eq(jstr(f0, "node"), name);
	ck_assert_int_eq(jint(f0, "step"), 2);
	/* named within seconds of the destroy, far from any deadline */
	struct tm tm = { 0 };
	double frac = 0;
	const char *at = jstr(f0, "at");
	ck_assert_ptr_nonnull(strptime(at, "%Y-%m-%dT%H:%M:%S", &tm));
	sscanf(strchr(at, '.'), "%lf", &frac);
	double failed_at = (double)timegm(&tm) + frac;
	double destroyed_at = (double)t0.tv_sec + t0.tv_nsec / 1e9;
	ck_assert_double_le(failed_at - destroyed_at, 10.0);
	json_object_put(m);

	/* the others ran every step */
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	snprintf(name, sizeof(name), "%s1", demo_prefix);
	for (int step = 1; step <= 6; step++) {
		ck_assert_int_eq(count_sample(s, n, name, step, "elapsed"), 1);
		ck_assert_int_eq(count_sample(s, n, "host", step, "elapsed"), 1);
	}
	free_ndjson(s, n);
	(void)t1;
}
END_TEST

/* SSH pointed at a closed loopback port: the guest boots, the push cannot
 * reach it, and the failure names the guest and the address within
 * GUEST_SSH_TIMEOUT. */
START_TEST(test_unreachable_guest_named)
{
	write_hconf("GUEST_ADDRESSES=\"127.0.0.1:1 127.0.0.1:1\"\nGUEST_SSH_TIMEOUT=3\n"
		    "ON_GUEST_FAILURE=abort\n");
	write_file("g.conf", "MMTESTS=cpu-probe\n", 0644);
	/* aborted before its first step: exit 1, said, no run folder (issue 15) */
	ck_assert_int_eq(hostd_test_run(NULL, demo_args), 1);
	const char *err = hostd_stderr();
	ck_assert_msg(strstr(err, demo_prefix) && strstr(err, "127.0.0.1:1") &&
			      strstr(err, "aborted before its first step"),
		      "%s", err);
	assert_no_run_folder();
	char node[96];
	snprintf(node, sizeof(node), "%s1", demo_prefix);
	ck_assert(!demo_domain_exists(node));
}
END_TEST

int main(void)
{
	demo_skip_unless_possible();
	Suite *s = suite_create("hostd-libvirt");
	TCase *tc = tcase_create("demo-guests");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 400);
	tcase_add_test(tc, test_two_guests_and_host);
	tcase_add_test(tc, test_guest_destroyed_mid_run);
	tcase_add_test(tc, test_unreachable_guest_named);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
