// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A run that fails before its first step: hostd exits 1 and leaves no run
 * folder holding the name, and what can be checked before guests start
 * (the SSH key) is checked before the run folder is made and before
 * libvirt is contacted.  A run folder of the same name made earlier is
 * never touched.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

static void setup(void)
{
	hostd_test_setup();
	write_file("g.conf", "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=1000\n", 0644);
}

static void teardown(void)
{
	hostd_test_teardown();
}

static void said(const char *what)
{
	const char *err = hostd_stderr();
	ck_assert_msg(strstr(err, what), "no \"%s\" in hostd's stderr:\n%s", what, err);
}

/* The guests' agents die at once: no step ran. */
START_TEST(test_guests_that_cannot_start)
{
	write_file("dead-agent", "#!/bin/sh\nexit 3\n", 0755);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=10\n", 0644);
	char agent[512];
	snprintf(agent, sizeof(agent), "%s/dead-agent", tmpdir);
	ck_assert_int_eq(hostd_test_run(agent, NULL), 1);
	assert_no_run_folder();
	said("before its first step");
	said("nothing ran: the run folder ");
}
END_TEST

/* GUEST_SSH_KEY unreadable: said before the folder and before libvirt,
 * which here could not be reached either. */
START_TEST(test_ssh_key_checked_first)
{
	char h[1024], state[512];
	snprintf(h, sizeof(h),
		 "GUEST_KIND=libvirt\nGUEST_COUNT=1\nGUEST_SSH_KEY=%s/no-key\n"
		 "LIBVIRT_URI=qemu+unix:///system?socket=%s/no-such-socket\n"
		 "GUEST_TEMPLATE=%s/vm-templates/demo-guest.xml.in\n",
		 tmpdir, tmpdir, getenv("LOCKSTEP_SOURCE_ROOT"));
	write_file("h.conf", h, 0644);
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	const char *ga = getenv("LOCKSTEP_GUEST_AGENT");
	const char *extra[] = { "--state-dir", state, ga ? "--guest-agent" : NULL, ga, NULL };
	ck_assert_int_eq(hostd_test_run(NULL, extra), 1);
	assert_no_run_folder();
	char want[600];
	snprintf(want, sizeof(want),
		 "GUEST_SSH_KEY=%s/no-key: cannot read the private key: No such "
		 "file or directory",
		 tmpdir);
	said(want);
	ck_assert_msg(!strstr(hostd_stderr(), "no-such-socket"), "libvirt was contacted first:\n%s",
		      hostd_stderr());
}
END_TEST

/* --run-name of a folder that exists: refused, and that folder kept. */
START_TEST(test_existing_run_folder_kept)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\n", 0644);
	char path[512];
	snprintf(path, sizeof(path), "%s/results", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/results/t", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	write_file("results/t/mine", "keep\n", 0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 1);
	said("(choose another --run-name)");
	snprintf(path, sizeof(path), "%s/results/t/mine", tmpdir);
	ck_assert_msg(access(path, F_OK) == 0, "%s was removed", path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd_prestart");
	TCase *tc = tcase_create("prestart");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_guests_that_cannot_start);
	tcase_add_test(tc, test_ssh_key_checked_first);
	tcase_add_test(tc, test_existing_run_folder_kept);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
