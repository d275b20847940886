// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd end to end with local guests, about the core of a step (issues 19
 * and 20): a go the channel lost is sent again, and nothing a step started
 * outlives it.
 */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

static char chaos_path[512];

static void setup(void)
{
	hostd_test_setup();
	snprintf(chaos_path, sizeof(chaos_path), "%s/bench/chaos-agent", getenv("LOCKSTEP_BUILD_ROOT"));
}

static void teardown(void)
{
	unsetenv("LOCKSTEP_CHAOS_PLAN");
	unsetenv("LOCKSTEP_STEP_PIDS_MAX");
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
	snprintf(h, sizeof(h),
		 "GUEST_KIND=local\nGUEST_COUNT=2\nRELEASE=%s\n"
		 "BARRIER_TIMEOUT=60\nON_GUEST_FAILURE=abort\n",
		 release);
	write_file("h.conf", h, 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=5\nCPU_PROBE_UNITS=1000\n", 0644);
	snprintf(plan, sizeof(plan), "%s/chaos.plan", tmpdir);
	write_file("chaos.plan", "guest-1 3 go drop-go\n", 0644);
	setenv("LOCKSTEP_CHAOS_PLAN", plan, 1);
	ck_assert_msg(hostd_test_run(chaos_path, NULL) == 0, "%s", run_diagnosis());

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	/* once, or more if the re-sent go also waited out its (doubled) bound
	 * on a loaded host */
	int resent1 = count_events(m, "guest-1", 3, "go sent again");
	ck_assert_int_ge(resent1, 1);
	/* it started only after the re-send, and never got the first go */
	ck_assert_int_eq(count_events(m, "guest-1", 3, "only after its go was sent again"), 1);
	ck_assert_int_eq(count_events(m, "guest-1", 3, "go-again"), 0);
	/* the run's tally: that one lost go; any other re-send (a busy host
	 * that ran an agent late) was answered with go-again, not lost */
	json_object *gos = json_object_object_get(m, "gos");
	ck_assert_ptr_nonnull(gos);
	ck_assert_int_eq(jint(gos, "lost"), 1);
	ck_assert_int_ge(jint(gos, "resent"), resent1);
	ck_assert_int_eq(jint(gos, "resent") - resent1, jint(gos, "go_again"));
	ck_assert_int_ge(jint(gos, "started_after_resend"), 1);
	ck_assert_int_le(jint(gos, "started_after_resend"), 1 + jint(gos, "go_again"));
	/* and hostd's last lines say so */
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "sent again (no started within the bound)") &&
			      strstr(err, " 1 lost (manifest: gos)"),
		      "hostd's stderr: %s", err);
	json_object_put(m);

	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(json_object_object_length(json_object_object_get(b[i], "started_ns")),
				 2);
		/* the record of step 3 says guest-1's go went twice */
		json_object *gr = json_object_object_get(b[i], "go_resent");
		ck_assert_ptr_nonnull(gr);
		if (jint(b[i], "step") == 3)
			ck_assert_int_eq(jint(gr, "guest-1"), resent1);
	}
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

/* ---- issue 20: nothing of a step outlives it ---- */

/* Live processes whose command line starts with prefix ("sleep 3131"). */
static int count_alive(const char *prefix)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[300], buf[256], stat[512], *rp;
		ssize_t len;
		int fd;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		if (strncmp(buf, prefix, strlen(prefix)))
			continue;
		/* a zombie is not alive */
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, stat, sizeof(stat) - 1);
		close(fd);
		if (len <= 0)
			continue;
		stat[len] = '\0';
		rp = strrchr(stat, ')');
		if (rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X')
			n++;
	}
	closedir(d);
	return n;
}

/* Waits (at most seconds: a liveness bound, what is measured is the end
 * state) until no process starts with prefix; returns how many are left. */
static int wait_gone(const char *prefix, int seconds)
{
	int n = count_alive(prefix);
	for (int i = 0; n && i < seconds * 50; i++) {
		usleep(20 * 1000);
		n = count_alive(prefix);
	}
	return n;
}

/* A step "leaky" running command (quoted for the config), then a probe. */
static void write_gconf(const char *quoted)
{
	char g[512];
	snprintf(g, sizeof(g),
		 "MMTESTS=\"leaky cpu-probe\"\nCPU_PROBE_UNITS=1000\n"
		 "COMMAND_LEAKY=%s\n",
		 quoted);
	write_file("g.conf", g, 0644);
}

/* issue 20's second reproduction: a step that leaves a process running
 * in the background and ends: complete, the leftover killed and named. */
START_TEST(test_background_leftover_killed)
{
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nSTEP_TIMEOUT=20\n"
		   "ON_GUEST_FAILURE=continue\n",
		   0644);
	write_gconf("'sleep 3151 & echo started'");
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	ck_assert_int_eq(count_alive("sleep 3151"), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	/* named as it was when the agent looked ("sleep 3151", or the shell's
	 * fork if it had not exec'd sleep yet) */
	ck_assert_int_eq(count_events(m, "guest-1", 1, "step 1 left 1 process: "), 1);
	ck_assert_int_eq(count_events(m, "guest-1", 1, "; killed"), 1);
	json_object_put(m);
}
END_TEST

/* issue 20's first reproduction: the step outlives STEP_TIMEOUT, hostd
 * kills the agent (SIGKILL): its keeper takes the step's group along. */
START_TEST(test_step_timeout_leftovers_killed)
{
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nSTEP_TIMEOUT=2\n"
		   "ON_GUEST_FAILURE=continue\n",
		   0644);
	write_gconf("'sleep 3131 & sleep 3141 & sleep 3099'");
	ck_assert_int_ne(hostd_test_run(NULL, NULL), 0);
	json_object *m = manifest();
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(m), "STEP_TIMEOUT=2s"));
	json_object_put(m);
	ck_assert_int_eq(wait_gone("sleep 3131", 10), 0);
	ck_assert_int_eq(wait_gone("sleep 3141", 10), 0);
	ck_assert_int_eq(wait_gone("sleep 3099", 10), 0);
}
END_TEST

/* Escapees: a double fork into a new session, out of the step's group. */
START_TEST(test_setsid_double_fork_killed)
{
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nSTEP_TIMEOUT=20\n"
		   "ON_GUEST_FAILURE=continue\n",
		   0644);
	write_gconf("\"(setsid sh -c 'sleep 3171 & exec sleep 3172' &); "
		    "while ! pgrep -f 'sleep 3172' >/dev/null; do :; done; echo forked\"");
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	ck_assert_int_eq(count_alive("sleep 3171"), 0);
	ck_assert_int_eq(count_alive("sleep 3172"), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(count_events(m, "guest-1", 1, "sleep 3172"), 1);
	json_object_put(m);
}
END_TEST

/* Forks until the per-step pids limit: the node survives (the next step
 * runs), the step's record names the limit, nothing is left. */
START_TEST(test_pids_limit_named)
{
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nSTEP_TIMEOUT=30\n"
		   "ON_GUEST_FAILURE=continue\n",
		   0644);
	write_gconf("'i=0; while [ $i -lt 200 ]; do sleep 3191 & i=$((i+1)); done 2>/dev/null; "
		    "echo forked'");
	setenv("LOCKSTEP_STEP_PIDS_MAX", "50", 1);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	ck_assert_int_eq(count_alive("sleep 3191"), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(jint(m, "steps_released"), 2);
	ck_assert_int_eq(count_events(m, "guest-1", 1, "limit of 50 processes (pids.max)"), 1);
	json_object_put(m);
}
END_TEST

/* hostd SIGKILLed while two local guests run a step that started more
 * processes: none of them survives. */
START_TEST(test_hostd_sigkill_mid_step)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nSTEP_TIMEOUT=120\n", 0644);
	write_gconf("'sleep 3203 & sleep 3204 & sleep 3205'");
	pid_t pid = hostd_test_start(NULL, NULL);
	hostd_test_wait_first_barrier(60);
	ck_assert_int_ge(count_alive("sleep 3205"), 1);
	kill(pid, SIGKILL);
	hostd_test_wait_signal(pid);
	ck_assert_int_eq(wait_gone("sleep 3203", 10), 0);
	ck_assert_int_eq(wait_gone("sleep 3204", 10), 0);
	ck_assert_int_eq(wait_gone("sleep 3205", 10), 0);
}
END_TEST

/* A run interrupted (SIGTERM to hostd) mid-step: the agents leave on bye
 * and kill what their steps started. */
START_TEST(test_interrupted_run_leaves_nothing)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nSTEP_TIMEOUT=120\n", 0644);
	write_gconf("'sleep 3501 & sleep 3502 & sleep 3503'");
	pid_t pid = hostd_test_start(NULL, NULL);
	hostd_test_wait_first_barrier(60);
	kill(pid, SIGTERM);
	ck_assert_int_ne(hostd_test_wait(pid), 0);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "interrupted");
	json_object_put(m);
	/* hostd waited for its agents, and they for their steps */
	ck_assert_int_eq(count_alive("sleep 3501"), 0);
	ck_assert_int_eq(count_alive("sleep 3502"), 0);
	ck_assert_int_eq(count_alive("sleep 3503"), 0);
}
END_TEST

/* The host's external monitors die with hostd, SIGKILL included. */
START_TEST(test_host_monitor_dies_with_hostd)
{
	if (access("/usr/bin/setpriv", X_OK) < 0 || system("command -v vmstat >/dev/null") != 0)
		return; /* nothing to run it with: monitor_ext.c says so */
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=1\nSTEP_TIMEOUT=120\n"
		   "MONITORS=vmstat\nMONITOR_UPDATE_FREQUENCY=7\n",
		   0644);
	write_gconf("'sleep 3401'");
	pid_t pid = hostd_test_start(NULL, NULL);
	hostd_test_wait_first_barrier(60);
	/* setpriv execs it: wait until it has */
	for (int i = 0; i < 500 && !count_alive("vmstat -n -t 7"); i++)
		usleep(20 * 1000);
	ck_assert_int_ge(count_alive("vmstat -n -t 7"), 1);
	kill(pid, SIGKILL);
	hostd_test_wait_signal(pid);
	ck_assert_int_eq(wait_gone("vmstat -n -t 7", 10), 0);
	ck_assert_int_eq(wait_gone("sleep 3401", 10), 0);
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
	tcase_add_test(tc, test_background_leftover_killed);
	tcase_add_test(tc, test_step_timeout_leftovers_killed);
	tcase_add_test(tc, test_setsid_double_fork_killed);
	tcase_add_test(tc, test_pids_limit_named);
	tcase_add_test(tc, test_hostd_sigkill_mid_step);
	tcase_add_test(tc, test_host_monitor_dies_with_hostd);
	tcase_add_test(tc, test_interrupted_run_leaves_nothing);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
