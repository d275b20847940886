// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tools/demo --cluster (tools/demo-cluster, docs/cluster.md "Trying it on
 * one machine") run as a user runs it: three hosts as network namespaces,
 * Redis in a fourth.  What it prints says the run complete, each follower
 * complete with its samples received and none refused, and the skew across
 * hosts; afterwards none of its namespaces and none of its processes are
 * left.  Its run folders go to this test's own directory.  Skipped (exit
 * 77) without the right to make namespaces (root) or without redis-server.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The processes whose parent is this one (descendants left behind are
 * given to it: it is their subreaper), into pids; how many. */
static int children_left(pid_t *pids, int max)
{
	int n = 0;
	DIR *d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) && n < max;) {
		char path[300], buf[512];
		pid_t pid = (pid_t)atoi(e->d_name), ppid = 0;
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		const char *rp = strrchr(buf, ')'); /* after the command's name */
		char state = 0;
		if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid() &&
		    state != 'Z')
			pids[n++] = pid;
	}
	closedir(d);
	return n;
}

START_TEST(test_demo_cluster)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT"), *build = getenv("LOCKSTEP_BUILD_ROOT");
	ck_assert_msg(src && build, "LOCKSTEP_SOURCE_ROOT or LOCKSTEP_BUILD_ROOT unset (meson test)");
	/* whatever the demo leaves running comes to this process */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && LOCKSTEP_BUILD_ROOT='%s' LOCKSTEP_DEMO_RESULTS='%s/results' "
		 "timeout -s KILL 60 ./tools/demo-cluster 2>&1",
		 src, build, tmpdir);
	double t0 = mono_s();
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	static char out[65536];
	size_t len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = 0;
	int st = pclose(p);
	double took = mono_s() - t0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d after %.1f s:\n%s", cmd,
		      st, took, out);

	/* the run complete, on the leader: its own line and show-results' */
	ck_assert_msg(strstr(out, "hostd: info: run cluster-") && strstr(out, "complete: 60 samples"),
		      "the leader's run is not complete with 60 samples:\n%s", out);
	const char *run = strstr(out, "\nrun cluster-");
	ck_assert_msg(run && strstr(run, ": complete\n"), "no 'run ...: complete' line:\n%s", out);
	/* each follower complete, its records all in, none refused */
	const char *members[] = { "b", "c" };
	for (int i = 0; i < 2; i++) {
		char want[64];
		snprintf(want, sizeof(want), "\nmember %s: complete, ", members[i]);
		const char *l = strstr(out, want);
		int samples = -1, barriers = -1, refused = -1;
		ck_assert_msg(l, "no '%s' line:\n%s", want + 1, out);
		ck_assert_msg(sscanf(l + strlen(want), "%d samples and %d barriers received, %d refused",
				     &samples, &barriers, &refused) == 3,
			      "member %s's line unreadable:\n%s", members[i], out);
		ck_assert_msg(samples == 20 && barriers == 5 && refused == 0,
			      "member %s: %d samples, %d barriers, %d refused (want 20, 5, 0)",
			      members[i], samples, barriers, refused);
	}
	const char *across = strstr(out, "\nacross hosts: start skew median ");
	double median = -1, max = -1;
	ck_assert_msg(across && sscanf(across, "\nacross hosts: start skew median %lf us, max %lf us",
				       &median, &max) == 2,
		      "no readable 'across hosts' line:\n%s", out);
	ck_assert_msg(median >= 0 && max >= median, "across hosts: median %g us, max %g us", median,
		      max);

	/* nothing left: its namespaces (named in its first line) and processes */
	const char *nsl = strstr(out, "network namespaces ");
	char prefix[64] = "";
	ck_assert_msg(nsl && sscanf(nsl, "network namespaces %60[a-z0-9]", prefix) == 1,
		      "no namespaces named:\n%s", out);
	prefix[strlen(prefix) - 1] = 0; /* "lsdemo<pid>a" less the host */
	p = popen("ip netns list", "r");
	ck_assert_ptr_nonnull(p);
	char line[256];
	while (fgets(line, sizeof(line), p))
		ck_assert_msg(strncmp(line, prefix, strlen(prefix)) != 0,
			      "the demo left namespace %s", line);
	pclose(p);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		; /* killed by the demo, reaped here */
	pid_t left[16];
	int n = children_left(left, 16);
	for (int i = 0; i < n; i++)
		kill(left[i], SIGKILL); /* ours: the demo's own, left behind */
	ck_assert_msg(n == 0, "the demo left %d processes behind (the first pid %d)", n,
		      n ? (int)left[0] : 0);
	printf("tools/demo --cluster: complete in %.1f s, skew across hosts median %.1f us, max "
	       "%.1f us; no namespace or process left\n",
	       took, median, max);
}
END_TEST

int main(void)
{
	char probe[64], cmd[256];
	snprintf(probe, sizeof(probe), "lsdc%ldprobe", (long)getpid());
	snprintf(cmd, sizeof(cmd), "ip netns add %s 2>/dev/null && ip netns del %s", probe, probe);
	if (getuid() != 0 || system(cmd) != 0) {
		printf("demo-cluster: skipped: 'ip netns add' is not permitted here (it needs "
		       "root)\n");
		return 77;
	}
	if (system("command -v redis-server >/dev/null") != 0) {
		printf("demo-cluster: skipped: no redis-server (tools/install-deps)\n");
		return 77;
	}
	Suite *s = suite_create("demo-cluster");
	TCase *tc = tcase_create("demo");
	tcase_add_checked_fixture(tc, hostd_test_setup, hostd_test_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_demo_cluster);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
