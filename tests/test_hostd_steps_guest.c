// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 20 in a real guest (libvirt, the busybox demo guest under TCG):
 * a step that leaves processes behind, including a setsid double fork;
 * the next step looks inside the guest for them.  The agent there has no
 * cgroup (the demo guest mounts none): its process groups, its subreaper
 * and its keeper must do.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_testlib.h"
#include "hostd_testlib.h"
#include "testlib.h"

static char node[96];

static void setup(void)
{
	demo_test_setup("steps");
	snprintf(node, sizeof(node), "%s1", demo_prefix);
}

static void teardown(void)
{
	demo_test_teardown(1);
}

START_TEST(test_guest_leftovers_killed)
{
	demo_write_hconf(1, 35000,
			 "GUEST_BOOT_TIMEOUT=300\nBARRIER_TIMEOUT=300\nSTEP_TIMEOUT=600\n"
			 "GUEST_SSH_TIMEOUT=120\nON_GUEST_FAILURE=continue\n");
	/* step 1 leaves three sleeps (one in a session of its own); step 2
	 * counts the sleeps of that length still alive in the guest */
	write_file("g.conf",
		   "MMTESTS='leaky look'\n"
		   "COMMAND_LEAKY=\"sleep 3901 & sleep 3902 & (setsid sleep 3903 &); echo left\"\n"
		   "COMMAND_LOOK=\"echo alive: \\$(ps | grep -c '[s]leep 390')\"\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	const char *text = json_object_to_json_string(m);
	ck_assert_msg(strstr(text, "step 1 left 3 processes: "), "%s", text);
	json_object_put(m);

	char path[700];
	snprintf(path, sizeof(path), "%s/results/t/nodes/%s/step-2.out", tmpdir, node);
	char *out = read_text(path);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(strstr(out, "alive: 0"), "step 2 saw: %s", out);
}
END_TEST

int main(void)
{
	demo_skip_unless_possible();
	Suite *s = suite_create("hostd-steps-guest");
	TCase *tc = tcase_create("libvirt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_guest_leftovers_killed);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
