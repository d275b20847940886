// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd puts the host back: the real hostd binary with CPUFREQ_GOVERNOR
 * against a fake sysfs tree (--sysfs-root), once run to its end and once
 * killed with SIGKILL mid-run and restarted.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "hostd_testlib.h"
#include "testlib.h"

#define GOV "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor"
static const char *const orig[] = { "powersave", "schedutil" };
static char root[512], state[512];

static void put_gov(int cpu, const char *value)
{
	char path[800], dir[800];
	snprintf(path, sizeof(path), "%s/" GOV, root, cpu);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	ck_assert_int_eq(fileio_mkdir_p(dir, 0755), 0);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", value);
	fclose(f);
	snprintf(path, sizeof(path), "%.700s/scaling_available_governors", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("performance powersave schedutil\n", f);
	fclose(f);
}

static void expect_gov(int cpu, const char *want)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/" GOV, root, cpu);
	char *v = read_text(path);
	ck_assert_ptr_nonnull(v);
	v[strcspn(v, "\n")] = '\0';
	ck_assert_msg(strcmp(v, want) == 0, "cpu%d governor is %s, expected %s", cpu, v, want);
}

static void setup(void)
{
	hostd_test_setup();
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	for (int i = 0; i < 2; i++)
		put_gov(i, orig[i]);
}

static void teardown(void)
{
	hostd_test_teardown();
}

START_TEST(test_set_during_run_restored_after)
{
	char g[1024];
	write_file("h.conf", "GUEST_COUNT=1\nCPUFREQ_GOVERNOR=performance\n", 0644);
	/* the step itself reads the governor while the run is on */
	snprintf(g, sizeof(g), "MMTESTS=peek\nCOMMAND_PEEK='cat %s/" GOV "'\n", root, 1);
	write_file("g.conf", g, 0644);
	const char *args[] = { "--state-dir", state, "--sysfs-root", root, NULL };
	ck_assert_int_eq(hostd_test_run(NULL, args), 0);
	char path[600];
	snprintf(path, sizeof(path), "%s/results/t/nodes/guest-1/step-1.out", tmpdir);
	char *out = read_text(path);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(strstr(out, "performance"));
	expect_gov(0, orig[0]);
	expect_gov(1, orig[1]);
}
END_TEST

START_TEST(test_sigkill_restored_at_next_start)
{
	write_file("h.conf", "GUEST_COUNT=1\nCPUFREQ_GOVERNOR=performance\n", 0644);
	write_file("g.conf", "MMTESTS=nap\nCOMMAND_NAP='sleep 30'\n", 0644);
	const char *args[] = { "--state-dir", state, "--sysfs-root", root, NULL };
	pid_t pid = hostd_test_start(NULL, args);
	hostd_test_wait_first_barrier(30);
	expect_gov(0, "performance");
	kill(pid, SIGKILL);
	hostd_test_wait_signal(pid);
	/* hostd had no chance to put anything back */
	expect_gov(0, "performance");
	expect_gov(1, "performance");

	/* the next hostd, whatever it runs, puts the host back first */
	hostd_test_teardown_results();
	write_file("h.conf", "GUEST_COUNT=1\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_int_eq(hostd_test_run(NULL, args), 0);
	expect_gov(0, orig[0]);
	expect_gov(1, orig[1]);
	char path[600];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	ck_assert_ptr_nonnull(strstr(read_text(path), "restored the host state"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-hoststate");
	TCase *tc = tcase_create("cpufreq");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_set_during_run_restored_after);
	tcase_add_test(tc, test_sigkill_restored_at_next_start);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
