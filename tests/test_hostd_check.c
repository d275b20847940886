// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --check and --set on the real binary, and an MMTests-style g.conf
 * run as it is with local guests: its job file shipped into each node's
 * work folder, its set-up lines read as settings, its monitors that
 * lockstep lacks listed as ignored, not refused.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hostd_testlib.h"
#include "testlib.h"

/* An MMTests-style g.conf: every line of it is an idiom MMTests uses. */
static const char *const gconf = "export MMTESTS=\"show\"\n"
				 ". $SHELLPACK_INCLUDE/include-sizes.sh\n"
				 "get_numa_details\n"
				 "export MONITORS_GZIP=\"proc-vmstat turbostat iotop\"\n"
				 "export MMTEST_ITERATIONS=3\n"
				 "JOBFILE=\"/tmp/job-$$\"\n"
				 "export COMMAND_SHOW=\"cat $JOBFILE\"\n"
				 "disable_transhuge\n"
				 "echo Starting\n"
				 "cat >$JOBFILE <<END\n"
				 "cpus=$NUMCPUS\n"
				 "END\n";

static void setup(void)
{
	hostd_test_setup();
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\n", 0644);
	write_file("g.conf", gconf, 0644);
}

static void teardown(void)
{
	hostd_test_teardown();
}

static int check(const char *extra, char *out, size_t size)
{
	return hostd_test_check(extra, out, size);
}

static void has(const char *out, const char *what)
{
	ck_assert_msg(strstr(out, what), "no \"%s\" in:\n%s", what, out);
}

START_TEST(test_check_prints_plan_and_starts_nothing)
{
	static char out[65536];
	ck_assert_int_eq(check("--set MMTEST_ITERATIONS=2", out, sizeof(out)), 0);
	has(out, "--set MMTEST_ITERATIONS=2\n");
	has(out, "plan of guest-1 guest-2 (");
	has(out, "  2 steps, MMTEST_ITERATIONS=2\n");
	/* the shipped file's name replaces /tmp/job-$$ in the command */
	has(out, "  step 1: show iteration 1 (the config's command: cat ./job-");
	has(out, "  step 2: show iteration 2 (the config's command: cat ./job-");
	ck_assert_ptr_null(strstr(out, "step 3:"));
	/* U with 2 per run cannot reach p < 0.05 (2 / C(4, 2) = 0.33); 4 can (0.029) */
	has(out, "hostctl compare's U test reaches p < 0.05 with 4 per run or more):\n");
	has(out, "    show: 2: too few to tell a change from noise; raise MMTEST_ITERATIONS");
	ck_assert_int_eq(check("--set MMTEST_ITERATIONS=4", out, sizeof(out)), 0);
	has(out, "    show: 4\n");
	has(out, ", pushed to the work folder as ./job-");
	has(out, "  transparent huge pages: never\n");
	has(out, "MONITORS_GZIP: monitor turbostat ignored: ");
	has(out, "MONITORS_GZIP: monitor iotop ignored: ");
	has(out, "g.conf:9:1: echo \"Starting\" ignored");
	has(out, "none: local guests run the host's own binaries\n");
	has(out, "results folder ");
	has(out, "check passed: nothing was started\n");
	/* nothing was made */
	char path[512];
	snprintf(path, sizeof(path), "%s/results", tmpdir);
	ck_assert_ptr_null(read_text(path));
}
END_TEST

/* MMTests' lists (iperf3's sizes) are series of their own, counted by
 * their names; a fixed-port server (tbench) on nodes that share the
 * host's network is flagged, and not on one. */
START_TEST(test_check_series_and_fixed_port)
{
	static char out[65536];
	write_file("g.conf",
		   "export MMTESTS=\"iperf3-ipv4-tcp tbench\"\n"
		   "export IPERF3_BUFFER_SIZES=200,8920\nexport IPERF3_MAX_STREAMS=2\n"
		   "export IPERF3_ITERATIONS=2\nexport TBENCH_MAX_CLIENTS=1\n",
		   0644);
	ck_assert_int_eq(check("--set MMTEST_ITERATIONS=2", out, sizeof(out)), 0);
	has(out, "    iperf3-ipv4-tcp size=200,bitrate=0,streams=1: 4\n"
		 "    iperf3-ipv4-tcp size=200,bitrate=0,streams=2: 4\n"
		 "    iperf3-ipv4-tcp size=8920,bitrate=0,streams=1: 4\n"
		 "    iperf3-ipv4-tcp size=8920,bitrate=0,streams=2: 4\n"
		 "    tbench clients=1: 2: too few");
	has(out, "  step 10: iperf3-ipv4-tcp size=200,bitrate=0,streams=1 iteration 3\n");
	has(out, "  tbench: its server listens on the fixed port 7003, and 2 nodes share this "
		 "host's network");
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\n", 0644);
	ck_assert_int_eq(check("", out, sizeof(out)), 0);
	ck_assert_msg(!strstr(out, "fixed port"), "%s", out);
}
END_TEST

START_TEST(test_check_errors_exit_1)
{
	static char out[65536];
	write_file("g.conf", "export MMTESTS=cpu-probe\nexport N=`hostname`\n", 0644);
	ck_assert_int_eq(check("", out, sizeof(out)), 1);
	has(out, "g.conf:2:10: expected a value, found the command substitution of 'hostname'");
	write_file("g.conf", gconf, 0644);
	ck_assert_int_eq(check("--set 9X=1", out, sizeof(out)), 1);
	has(out, "--set: expected NAME=VALUE, found \"9X=1\"");
	/* a shipped file may not take the name of the harness's agent */
	write_file("g.conf", "MMTESTS=cpu-probe\ncat >/tmp/guestagent <<END\nx\nEND\n", 0644);
	ck_assert_int_eq(check("", out, sizeof(out)), 1);
	has(out, "g.conf:2: cat >/tmp/guestagent: guestagent is a name the harness takes in the "
		 "work folder; name the file otherwise");
	write_file("g.conf", gconf, 0644);
	/* a results folder that cannot be made fails the pre-flight */
	write_file("file", "", 0644);
	char extra[600];
	snprintf(extra, sizeof(extra), "--results '%s/file/results'", tmpdir);
	ck_assert_int_eq(check(extra, out, sizeof(out)), 1);
	has(out, "not writable: Not a directory");
	has(out, "check failed\n");
}
END_TEST

/* A name in h.conf that is no key stops hostd, run or --check, before
 * anything starts; --lenient makes it a warning. */
START_TEST(test_unknown_host_names)
{
	static char out[65536];
	write_file("h.conf", "GUEST_KIND=local\nGEUST_COUNT=2\nMY_HELPER=1\n", 0644);
	ck_assert_int_eq(check("", out, sizeof(out)), 1);
	has(out, "h.conf:2:1: unknown name GEUST_COUNT, did you mean GUEST_COUNT?; 1 more unknown "
		 "name in the file (h.conf takes lockstep's keys only, docs/config.md; hostd --lenient "
		 "makes unknown names warnings)");
	/* a real run: exit 1, and no run folder made */
	const char *extra[] = { "--set", "MMTEST_ITERATIONS=1", NULL };
	ck_assert_int_eq(hostd_test_run(NULL, extra), 1);
	ck_assert_msg(strstr(hostd_stderr(), "unknown name GEUST_COUNT, did you mean GUEST_COUNT?"),
		      "%s", hostd_stderr());
	assert_no_run_folder();
	/* --lenient: warnings, and the run goes (GUEST_COUNT's default: 1) */
	ck_assert_int_eq(check("--lenient", out, sizeof(out)), 0);
	has(out, "h.conf:2:1: unknown name GEUST_COUNT, did you mean GUEST_COUNT?\n");
	has(out, "h.conf:3:1: unknown name MY_HELPER\n");
}
END_TEST

/* libvirt guests from a template (libvirt's test driver: no daemon): the
 * template's size is the nodes' facts, the binaries pushed are listed with
 * their sizes, and libvirt is reached or not. */
START_TEST(test_check_libvirt_guests)
{
	static char out[65536];
	char hconf[1024];
	snprintf(hconf, sizeof(hconf),
		 "GUEST_KIND=libvirt\nGUEST_COUNT=2\n"
		 "LIBVIRT_URI=test:///default\nGUEST_TEMPLATE=%s/vm-templates/demo-guest.xml.in\n",
		 getenv("LOCKSTEP_SOURCE_ROOT"));
	write_file("h.conf", hconf, 0644);
	/* a guest's /sys files from its facts (the template's vCPUs), others
	 * from this machine's with a warning: the guest's are not known */
	write_file("g.conf",
		   "MMTESTS=hackbench-process-pipes\nHACKBENCH_MAX_GROUPS=$NUMCPUS\n"
		   "HACKBENCH_ITERATIONS=1\nHACKBENCH_WARMUP=0\n"
		   "cpupower frequency-set -g performance\n"
		   "[ `cat /sys/devices/system/cpu/online` = 0 ] && HACKBENCH_MAX_GROUPS=3\n"
		   "A=`cat /proc/sys/kernel/ostype`\n",
		   0644);
	/* a sanitizer build's agent is not static: the test command names the
	 * plain build's, as it does for the demo guests */
	const char *ga = getenv("LOCKSTEP_GUEST_AGENT");
	char extra[600] = "";
	if (ga)
		snprintf(extra, sizeof(extra), "--guest-agent '%s'", ga);
	ck_assert_int_eq(check(extra, out, sizeof(out)), 0);
	has(out, "2 guests (libvirt)");
	has(out, "  step 1: hackbench-process-pipes groups=1 iteration 1\n");
	has(out, "  step 2: hackbench-process-pipes groups=2 iteration 1\n");
	has(out, "  step 3: hackbench-process-pipes groups=3 iteration 1\n");
	has(out, "    hackbench-process-pipes groups=1: 1: too few");
	has(out, "/g.conf:7:3: cat /proc/sys/kernel/ostype answered \"Linux\" from hostd's machine: "
		 "this node is a libvirt guest, whose own file is not known before it runs");
	has(out, "  cpufreq governor of every CPU: performance\n");
	has(out, "  libexec/hackbench (");
	has(out, " bytes in all\n");
	has(out, "  libvirt test:///default: reachable\n");
	has(out, ": statically linked\n");
	snprintf(hconf + strlen(hconf), sizeof(hconf) - strlen(hconf),
		 "LIBVIRT_URI=qemu+unix:///system?socket=%s/no-such-socket\n", tmpdir);
	write_file("h.conf", hconf, 0644);
	ck_assert_int_eq(check("", out, sizeof(out)), 1);
	has(out, "/no-such-socket: not reachable: ");
	has(out, "check failed\n");
}
END_TEST

/* The run itself: the job file reaches each guest's work folder, where its
 * step reads it; the manifest records --set. */
START_TEST(test_shipped_file_reaches_the_step)
{
	/* THP would change this machine's sysfs: the run goes without it */
	char text[1024];
	snprintf(text, sizeof(text), "%.*s%s", (int)(strstr(gconf, "disable_transhuge") - gconf),
		 gconf, strstr(gconf, "echo Starting"));
	write_file("g.conf", text, 0644);
	const char *extra[] = { "--set", "MMTEST_ITERATIONS=1", NULL };
	ck_assert_int_eq(hostd_test_run(NULL, extra), 0);
	for (int g = 1; g <= 2; g++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/results/t/nodes/guest-%d/step-1.out", tmpdir, g);
		char *out = read_text(path);
		ck_assert_msg(out, "no %s", path);
		ck_assert_msg(!strncmp(out, "cpus=", 5), "step output: %s", out);
	}
	json_object *m = manifest(), *from, *sets;
	ck_assert(json_object_object_get_ex(m, "config_from", &from));
	ck_assert(json_object_object_get_ex(from, "overrides", &sets));
	ck_assert_uint_eq(json_object_array_length(sets), 1);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(sets, 0)),
			 "MMTEST_ITERATIONS=1");
	/* what the configs say is ignored, as --check prints it */
	json_object *warnings;
	ck_assert(json_object_object_get_ex(from, "warnings", &warnings));
	bool turbostat = false, echo = false;
	for (size_t i = 0; i < json_object_array_length(warnings); i++) {
		const char *w = json_object_get_string(json_object_array_get_idx(warnings, i));
		turbostat |= strstr(w, "g.conf:4:8: MONITORS_GZIP: monitor turbostat ignored: ") != 0;
		echo |= strstr(w, "g.conf:8:1: echo \"Starting\" ignored: a config prints nothing") !=
			0;
	}
	ck_assert_msg(turbostat && echo, "%s", json_object_to_json_string(warnings));
	json_object_put(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-check");
	TCase *tc = tcase_create("check");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_check_prints_plan_and_starts_nothing);
	tcase_add_test(tc, test_check_errors_exit_1);
	tcase_add_test(tc, test_unknown_host_names);
	tcase_add_test(tc, test_check_series_and_fixed_port);
	tcase_add_test(tc, test_check_libvirt_guests);
	tcase_add_test(tc, test_shipped_file_reaches_the_step);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
