// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hoststate against a fake sysfs tree: saved before anything changes, put
 * back on every exit path, and restored by the next start after a SIGKILL
 * (through tests/hoststate_driver.c, which uses the module as hostd does).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "hoststate.h"
#include "log.h"
#include "testlib.h"

#define NCPUS 4
#define CPU "sys/devices/system/cpu"

static char driver[512];
static char top[64], root[128], state[128];

/* Each CPU starts with a different governor: all of them must come back. */
static const char *const orig_gov[NCPUS] = { "powersave", "schedutil", "powersave", "ondemand" };
static const char *const orig_epp[NCPUS] = { "balance_power", "power", "balance_performance",
					     "default" };

static void put(const char *rel, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	*strrchr(path, '/') = '\0';
	ck_assert_int_eq(fileio_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void get(const char *rel, char *out, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_ptr_nonnull(fgets(out, (int)size, f));
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

static void expect(const char *rel, const char *want)
{
	char v[128];

	get(rel, v, sizeof(v));
	ck_assert_msg(!strcmp(v, want), "%s is \"%s\", expected \"%s\"", rel, v, want);
}

static void cpu_rel(char *buf, size_t size, int cpu, const char *file)
{
	snprintf(buf, size, CPU "/cpu%d/cpufreq/%s", cpu, file);
}

static void make_tree(void)
{
	char rel[256];

	testlib_tmpdir(top, sizeof(top), "hoststate");
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(state, sizeof(state), "%s/state", top);
	for (int i = 0; i < NCPUS; i++) {
		cpu_rel(rel, sizeof(rel), i, "scaling_governor");
		put(rel, orig_gov[i]);
		cpu_rel(rel, sizeof(rel), i, "energy_performance_preference");
		put(rel, orig_epp[i]);
		cpu_rel(rel, sizeof(rel), i, "scaling_available_governors");
		put(rel, "performance powersave schedutil ondemand");
	}
	/* an offline CPU without cpufreq, and names that are not CPUs */
	put(CPU "/cpu4/online", "0");
	put(CPU "/cpufreq/boost", "1");
	put(CPU "/cpuidle/current_driver", "none");
	put(CPU "/intel_pstate/no_turbo", "0");
}

static void expect_original(void)
{
	char rel[256];

	for (int i = 0; i < NCPUS; i++) {
		cpu_rel(rel, sizeof(rel), i, "scaling_governor");
		expect(rel, orig_gov[i]);
		cpu_rel(rel, sizeof(rel), i, "energy_performance_preference");
		expect(rel, orig_epp[i]);
	}
	expect(CPU "/intel_pstate/no_turbo", "0");
}

static void expect_changed(const char *gov, const char *epp)
{
	char rel[256];

	for (int i = 0; i < NCPUS; i++) {
		cpu_rel(rel, sizeof(rel), i, "scaling_governor");
		expect(rel, gov);
		cpu_rel(rel, sizeof(rel), i, "energy_performance_preference");
		expect(rel, epp ? epp : orig_epp[i]);
	}
	expect(CPU "/intel_pstate/no_turbo", "1");
}

static bool state_file_exists(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	return access(path, F_OK) == 0;
}

static char *state_file_text(void)
{
	char path[256], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	ck_assert_int_eq(fileio_read_all(path, 1 << 20, &text, &len), 0);
	return text;
}

static void settings(struct hoststate_settings *s, const char *gov, const char *epp, int nt)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->governor, sizeof(s->governor), "%s", gov ? gov : "");
	snprintf(s->epp, sizeof(s->epp), "%s", epp ? epp : "");
	s->no_turbo = nt;
}

START_TEST(test_saved_before_set)
{
	struct hoststate_settings s;
	struct hoststate *h;
	char *text, line[256];

	make_tree();
	settings(&s, "performance", NULL, 1);
	ck_assert_int_eq(hoststate_save(state, root, &s, &h), 0);
	ck_assert_ptr_nonnull(h);
	/* 4 governors, 4 EPPs, no_turbo: saved, and nothing changed yet */
	ck_assert_uint_eq(hoststate_count(h), 2 * NCPUS + 1);
	ck_assert(state_file_exists());
	expect_original();
	text = state_file_text();
	ck_assert_msg(!strncmp(text, "lockstep-hoststate 1\nowner ", 27), "%s", text);
	for (int i = 0; i < NCPUS; i++) {
		snprintf(line, sizeof(line), "governor " CPU "/cpu%d/cpufreq/scaling_governor %s\n",
			 i, orig_gov[i]);
		ck_assert_msg(strstr(text, line), "missing \"%s\" in\n%s", line, text);
		snprintf(line, sizeof(line),
			 "epp " CPU "/cpu%d/cpufreq/energy_performance_preference %s\n", i,
			 orig_epp[i]);
		ck_assert_msg(strstr(text, line), "missing \"%s\" in\n%s", line, text);
	}
	ck_assert_ptr_nonnull(strstr(text, "no_turbo " CPU "/intel_pstate/no_turbo 0\n"));
	ck_assert_ptr_null(strstr(text, "cpu4"));
	free(text);

	ck_assert_int_eq(hoststate_set(h), 0);
	expect_changed("performance", NULL);
	ck_assert_int_eq(hoststate_restore(h), 0);
	expect_original();
	ck_assert(!state_file_exists());
}
END_TEST

START_TEST(test_epp_restored_after_governor)
{
	struct hoststate_settings s;
	struct hoststate *h;

	make_tree();
	settings(&s, "performance", "performance", 1);
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	expect_changed("performance", "performance");
	ck_assert_int_eq(hoststate_restore(h), 0);
	expect_original();
}
END_TEST

START_TEST(test_unsavable_changes_nothing)
{
	struct hoststate_settings s;
	struct hoststate *h = (void *)1;

	make_tree();
	/* the state dir is a regular file: nothing can be saved */
	put("../state", "not a folder");
	settings(&s, "performance", "performance", 1);
	ck_assert_int_lt(hoststate_apply(state, root, &s, &h), 0);
	ck_assert_ptr_null(h);
	expect_original();
}
END_TEST

START_TEST(test_unavailable_governor)
{
	struct hoststate_settings s;
	struct hoststate *h = (void *)1;

	make_tree();
	put(CPU "/cpu2/cpufreq/scaling_available_governors", "powersave performance");
	settings(&s, "schedutil", NULL, -1);
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), -EINVAL);
	ck_assert_ptr_null(h);
	expect_original();
	ck_assert(!state_file_exists());
}
END_TEST

START_TEST(test_no_cpufreq)
{
	struct hoststate_settings s;
	struct hoststate *h = (void *)1;

	make_tree();
	snprintf(root, sizeof(root), "%s/empty", top);
	put(CPU "/cpu0/online", "1");
	put(CPU "/cpu1/online", "1");
	settings(&s, "performance", NULL, -1);
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	ck_assert_ptr_null(h);
	ck_assert(!state_file_exists());
	/* and asking nothing touches nothing, even with cpufreq */
	snprintf(root, sizeof(root), "%s/root", top);
	settings(&s, NULL, NULL, -1);
	ck_assert(hoststate_settings_empty(&s));
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	ck_assert_ptr_null(h);
	ck_assert(!state_file_exists());
}
END_TEST

/* ---- the driver: hostd's way of using it, killed ---- */

static pid_t spawn_driver(const char *gov, int *out_fd)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(driver, driver, "run", state, root, gov, "performance", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

static void wait_applied(int fd)
{
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf) - 1); /* blocks until the driver speaks */

	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_msg(!strcmp(buf, "applied 9\n"), "driver said \"%s\"", buf);
}

static int wait_exit(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

START_TEST(test_sigterm_restores)
{
	int fd, st;
	pid_t pid;

	make_tree();
	pid = spawn_driver("performance", &fd);
	wait_applied(fd);
	expect_changed("performance", "performance");
	ck_assert(state_file_exists());
	kill(pid, _i ? SIGINT : SIGTERM);
	st = wait_exit(pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	expect_original();
	ck_assert(!state_file_exists());
	close(fd);
}
END_TEST

START_TEST(test_sigkill_then_next_start_restores)
{
	int fd, st;
	pid_t pid;
	char *text;

	make_tree();
	pid = spawn_driver("performance", &fd);
	wait_applied(fd);
	kill(pid, SIGKILL);
	st = wait_exit(pid);
	ck_assert(WIFSIGNALED(st));
	close(fd);
	/* killed holding state: still changed, and the file says what to restore */
	expect_changed("performance", "performance");
	ck_assert(state_file_exists());
	text = state_file_text();
	ck_assert_ptr_nonnull(strstr(text, CPU "/cpu3/cpufreq/scaling_governor ondemand\n"));
	free(text);

	if (_i == 0) {
		/* the next start recovers before doing anything else */
		ck_assert_int_eq(hoststate_recover(state, root), 1);
	} else {
		/* a whole new run: recovers, applies, and restores again on SIGTERM */
		pid = spawn_driver("schedutil", &fd);
		wait_applied(fd);
		expect_changed("schedutil", "performance");
		kill(pid, SIGTERM);
		st = wait_exit(pid);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		close(fd);
	}
	expect_original();
	ck_assert(!state_file_exists());
	ck_assert_int_eq(hoststate_recover(state, root), 0);
}
END_TEST

START_TEST(test_live_owner_left_alone)
{
	int fd, st;
	pid_t pid, other;
	char *argv[] = { driver, "recover", state, root, NULL };

	make_tree();
	pid = spawn_driver("performance", &fd);
	wait_applied(fd);
	/* a second hostd-like process must not undo what a live one holds */
	other = fork();
	ck_assert_int_ge(other, 0);
	if (other == 0) {
		execv(driver, argv);
		_exit(127);
	}
	st = wait_exit(other);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 1);
	expect_changed("performance", "performance");
	ck_assert(state_file_exists());
	kill(pid, SIGTERM);
	wait_exit(pid);
	close(fd);
	expect_original();
}
END_TEST

START_TEST(test_bad_state_file_kept)
{
	static const char *const bad[] = {
		"lockstep-hoststate 1\nowner 1 x\ngovernor sys/devices/system/cpu/../../../etc/passwd root\n",
		"lockstep-hoststate 1\nowner 1 x\ngovernor sys/devices/system/cpu/cpu0/cpufreq/no_turbo 1\n",
		"lockstep-hoststate 1\nowner 1 x\ngovernor sys/devices/system/cpu/cpu0/cpufreq/scaling_governor a;b\n",
		"lockstep-hoststate 1\nowner 1 x\nfrobnicate sys/devices/system/cpu/cpu0/cpufreq/scaling_governor x\n",
		"lockstep-hoststate 1\nowner 1 x\ngovernor sys/devices/system/cpu/cpu0/cpufreq/scaling_governor\n",
		"something else\n",
		"lockstep-hoststate 1\n",
	};
	char path[256], rel[256];

	make_tree();
	ck_assert_int_eq(fileio_mkdir_p(state, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(fileio_write_atomic(path, bad[i], strlen(bad[i])), 0);
		ck_assert_msg(hoststate_recover(state, root) == -EINVAL, "accepted:\n%s", bad[i]);
		ck_assert(state_file_exists());
		expect_original();
	}
	/* a good line after bad ones is not half-applied either */
	cpu_rel(rel, sizeof(rel), 0, "scaling_governor");
	put(rel, "performance");
	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	{
		const char *t =
			"lockstep-hoststate 1\nowner 1 x\n"
			"governor sys/devices/system/cpu/cpu0/cpufreq/scaling_governor powersave\n"
			"governor /etc/passwd x\n";
		ck_assert_int_eq(fileio_write_atomic(path, t, strlen(t)), 0);
	}
	ck_assert_int_eq(hoststate_recover(state, root), -EINVAL);
	expect(rel, "performance");
}
END_TEST

/* disable_transhuge in a config: THP set for the run, the choice in
 * effect (the bracketed word) saved, and put back by restore and by the
 * next start after a hostd that died. */
START_TEST(test_transparent_hugepages)
{
	static const char *const thp = "sys/kernel/mm/transparent_hugepage/enabled";
	struct hoststate_settings s;
	struct hoststate *h;
	char *text;

	make_tree();
	put(thp, "always [madvise] never");
	settings(&s, NULL, NULL, -1);
	snprintf(s.thp, sizeof(s.thp), "never");
	ck_assert(!hoststate_settings_empty(&s));
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	ck_assert_ptr_nonnull(h);
	expect(thp, "never");
	text = state_file_text();
	ck_assert_msg(strstr(text, "thp sys/kernel/mm/transparent_hugepage/enabled madvise\n"),
		      "%s", text);
	free(text);
	ck_assert_int_eq(hoststate_restore(h), 0);
	expect(thp, "madvise");
	/* a run that died holding it: its state file (our pid: not a live
	 * owner) brings THP back at the next start */
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	text = state_file_text();
	ck_assert_int_eq(hoststate_restore(h), 0);
	put(thp, "always madvise [never]");
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	ck_assert_int_eq(fileio_write_atomic(path, text, strlen(text)), 0);
	free(text);
	ck_assert_int_eq(hoststate_recover(state, root), 1);
	expect(thp, "madvise");
	ck_assert(!state_file_exists());
}
END_TEST

/* echo defer+madvise > .../transparent_hugepage/defrag in a config: the
 * defrag mode set beside THP, its '+' kept in the state file, both put
 * back in the order saved. */
START_TEST(test_thp_defrag)
{
	static const char *const thp = "sys/kernel/mm/transparent_hugepage/enabled";
	static const char *const defrag = "sys/kernel/mm/transparent_hugepage/defrag";
	struct hoststate_settings s;
	struct hoststate *h;
	char *text;

	make_tree();
	put(thp, "always [madvise] never");
	put(defrag, "always defer defer+madvise [madvise] never");
	settings(&s, NULL, NULL, -1);
	snprintf(s.thp_defrag, sizeof(s.thp_defrag), "defer+madvise");
	ck_assert(!hoststate_settings_empty(&s));
	ck_assert_int_eq(hoststate_apply(state, root, &s, &h), 0);
	expect(defrag, "defer+madvise");
	text = state_file_text();
	ck_assert_msg(strstr(text, "thp_defrag sys/kernel/mm/transparent_hugepage/defrag "
				   "madvise\n"),
		      "%s", text);
	/* THP itself was not asked for: neither saved nor touched */
	ck_assert_msg(!strstr(text, "\nthp "), "%s", text);
	expect(thp, "always [madvise] never");
	free(text);
	ck_assert_int_eq(hoststate_restore(h), 0);
	expect(defrag, "madvise");
	/* a state file naming another file for thp_defrag is not ours */
	char path[256];
	const char *bad = "lockstep-hoststate 1\nowner 1 x\n"
			  "thp_defrag sys/kernel/mm/transparent_hugepage/enabled never\n";
	snprintf(path, sizeof(path), "%s/%s", state, HOSTSTATE_FILE);
	ck_assert_int_eq(fileio_write_atomic(path, bad, strlen(bad)), 0);
	ck_assert_int_eq(hoststate_recover(state, root), -EINVAL);
	expect(thp, "always [madvise] never");
}
END_TEST

START_TEST(test_settings)
{
	static const struct {
		const char *text;
		int r;
		const char *gov, *epp;
		int no_turbo;
	} cases[] = {
		{ "X=1\n", 0, "", "", -1 },
		{ "CPUFREQ_GOVERNOR=performance\n", 0, "performance", "", -1 },
		{ "CPUFREQ_GOVERNOR=performance\nCPUFREQ_NO_TURBO=yes\nCPUFREQ_EPP=power\n", 0,
		  "performance", "power", 1 },
		{ "CPUFREQ_NO_TURBO=off\n", 0, "", "", 0 },
		{ "CPUFREQ_GOVERNOR=\"perf ormance\"\n", -EINVAL, NULL, NULL, 0 },
		{ "CPUFREQ_GOVERNOR=../x\n", -EINVAL, NULL, NULL, 0 },
		{ "CPUFREQ_NO_TURBO=maybe\n", -EINVAL, NULL, NULL, 0 },
		{ "TRANSPARENT_HUGEPAGES_DEFRAG=sometimes\n", -EINVAL, NULL, NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *c = config_new();
		struct config_diag d;
		struct hoststate_settings s;

		ck_assert_int_eq(config_load_string(c, "h.conf", cases[i].text, &d), 0);
		ck_assert_int_eq(hoststate_settings_load(c, &s, &d), cases[i].r);
		if (cases[i].r == 0) {
			ck_assert_str_eq(s.governor, cases[i].gov);
			ck_assert_str_eq(s.epp, cases[i].epp);
			ck_assert_int_eq(s.no_turbo, cases[i].no_turbo);
		} else {
			ck_assert_str_eq(d.file, "h.conf");
			ck_assert_int_eq(d.line, 1);
		}
		config_free(c);
	}
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("hoststate");
	TCase *tc = tcase_create("hoststate");

	if (argc < 2) {
		fprintf(stderr, "usage: %s HOSTSTATE_DRIVER\n", argv[0]);
		return 2;
	}
	snprintf(driver, sizeof(driver), "%s", argv[1]);
	log_init("test-hoststate", LOG_LVL_ERROR);
	tcase_add_test(tc, test_saved_before_set);
	tcase_add_test(tc, test_epp_restored_after_governor);
	tcase_add_test(tc, test_unsavable_changes_nothing);
	tcase_add_test(tc, test_unavailable_governor);
	tcase_add_test(tc, test_no_cpufreq);
	tcase_add_loop_test(tc, test_sigterm_restores, 0, 2);
	tcase_add_loop_test(tc, test_sigkill_then_next_start_restores, 0, 2);
	tcase_add_test(tc, test_live_owner_left_alone);
	tcase_add_test(tc, test_bad_state_file_kept);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_transparent_hugepages);
	tcase_add_test(tc, test_thp_defrag);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
