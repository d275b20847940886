// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * External monitors in a real guest: MONITORS="vmstat mpstat" in g.conf
 * on the busybox demo guest (QEMU/TCG through libvirt), which has neither
 * program (busybox has no vmstat or mpstat applet).  hostd pushes this
 * host's procps vmstat and sysstat mpstat with their libraries, the agent
 * runs them for each of two steps (cpu-probe, a short hackbench through
 * its spec), and their output, the agent's built-in samples and the step
 * summaries come back; and MONITORS=top, a busybox applet's name there,
 * runs procps top.  Needs root, a running libvirtd, the built demo
 * guest, hackbench, vmstat and mpstat on the host; skipped (77) without
 * them.  One guest, named lockstep-gmon-<pid>-1.
 */
#include <check.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "demo_testlib.h"
#include "hostd_testlib.h"
#include "testlib.h"

static char node[96];

static void setup(void)
{
	demo_test_setup("gmon");
	snprintf(node, sizeof(node), "%s1", demo_prefix);
}

static void teardown(void)
{
	demo_test_teardown(1);
}

/* ports of this process's own, above the other e2e tests' ranges */
static void write_hconf(void)
{
	demo_write_hconf(1, 34000,
			 "GUEST_BOOT_TIMEOUT=300\nBARRIER_TIMEOUT=300\nSTEP_TIMEOUT=600\n"
			 "GUEST_SSH_TIMEOUT=120\n");
}

static char *monitor_file(const char *file)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/results/t/nodes/%s/monitors/%s", tmpdir, node, file);
	return read_text(path);
}

/* Lines of monitors/<file> stamped step with metric. */
static int count_stamped(const char *file, int step, const char *metric)
{
	char *text = monitor_file(file);
	int n = 0;

	ck_assert_msg(text != NULL, "no %s of %s; %s", file, node, run_diagnosis());
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);

		ck_assert_msg(o != NULL, "%s: not JSON: %s", file, l);
		if (jint(o, "step") == step && !strcmp(jstr(o, "metric"), metric))
			n++;
		json_object_put(o);
	}
	return n;
}

/* Whether line is words of which the first skip are anything and at
 * least min after them numbers (a monitor's data line, not its header). */
static bool numbers_line(const char *line, int skip, int min)
{
	char *copy = strdup(line);
	int words = 0, numbers = 0;
	bool ok = true;

	for (char *save, *w = strtok_r(copy, " \t", &save); w && ok; w = strtok_r(NULL, " \t", &save)) {
		char *end;

		if (words++ < skip)
			continue;
		strtod(w, &end);
		/* vmstat -t ends in a date and a time */
		if (*end && !strchr(w, '-') && !strchr(w, ':'))
			ok = false;
		else
			numbers++;
	}
	free(copy);
	return ok && numbers >= min;
}

static int count_lines(const char *text, bool (*pick)(const char *))
{
	char *copy = strdup(text);
	int n = 0;

	for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		n += pick(l);
	free(copy);
	return n;
}

/* vmstat -n -t: " r  b   swpd   free ..." then 17 numbers, date, time */
static bool vmstat_header(const char *l)
{
	return strstr(l, " r ") && strstr(l, " free ") && strstr(l, " st ");
}

static bool vmstat_data(const char *l)
{
	return numbers_line(l, 0, 17);
}

/* mpstat -P ALL: "12:00:01  CPU  %usr ..." then "12:00:02  all  0.50 ..."
 * and a line per CPU; "Average:" lines after SIGINT */
static bool mpstat_header(const char *l)
{
	return strstr(l, " CPU ") && strstr(l, "%usr") && strstr(l, "%steal");
}

static bool mpstat_data(const char *l)
{
	return strstr(l, " all ") && numbers_line(l, 2, 10);
}

/* The demo guest's kernel release, as build-demo-guest recorded it. */
static const char *guest_release(void)
{
	static char release[128];
	char *text = read_text(DEMO_DIR "/manifest.txt");
	char *p;

	ck_assert_ptr_nonnull(text);
	p = strstr(text, "\nkernel-release ");
	ck_assert_ptr_nonnull(p);
	sscanf(p, "\nkernel-release %127s", release);
	return release;
}

static long long file_size(const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	ck_assert_msg(realpath(path, real) && stat(real, &st) == 0, "%s", path);
	return (long long)st.st_size;
}

START_TEST(test_vmstat_mpstat_in_busybox_guest)
{
	struct utsname host;
	/* read first: read_text's buffer is the monitor files' too */
	const char *release = guest_release();

	write_hconf();
	write_file("g.conf",
		   "MMTESTS='cpu-probe hackbench-process-pipes'\n"
		   /* seconds under TCG: longer than mpstat's 1 s interval */
		   "CPU_PROBE_UNITS=2000000000\n"
		   "HACKBENCH_MAX_GROUPS=1\nHACKBENCH_LOOPS=50\nHACKBENCH_ITERATIONS=1\n"
		   "MONITORS='vmstat mpstat'\nMONITOR_UPDATE_FREQUENCY=0.5\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());

	json_object *m = manifest();
	const char *mtext = json_object_to_json_string(m);
	ck_assert_str_eq(jstr(m, "status"), "complete");
	/* neither monitor was missing, failed to start or died in a step */
	ck_assert_msg(!strstr(mtext, "monitor vmstat") && !strstr(mtext, "monitor mpstat") &&
			      !strstr(mtext, "error monitor"),
		      "%s", mtext);
	/* pushed: the harness holds at least both programs and the
	 * libraries vmstat alone needs (the guest has none of them) */
	json_object *p = json_object_array_get_idx(json_object_object_get(m, "participants"), 0);
	json_object *h = json_object_object_get(p, "harness");
	ck_assert_ptr_nonnull(h);
	long long need = file_size("/usr/bin/vmstat") + file_size("/usr/bin/mpstat") +
			 file_size("/lib/x86_64-linux-gnu/libproc2.so.0") +
			 file_size("/lib/x86_64-linux-gnu/libsystemd.so.0") +
			 file_size("/lib/x86_64-linux-gnu/libgcrypt.so.20");
	fprintf(stderr, "harness pushed: %s; vmstat, mpstat and three libraries: %lld\n",
		json_object_to_json_string(h), need);
	ck_assert_int_gt(jint(h, "bytes"), need);
	json_object_put(m);

	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	double elapsed[3] = { 0 };
	for (size_t i = 0; i < n; i++) {
		const char *metric = jstr(s[i], "metric");
		int step = (int)jint(s[i], "step");

		if (metric && !strcmp(metric, "elapsed") && step >= 1 && step <= 2)
			elapsed[step] = json_object_get_double(json_object_object_get(s[i], "value"));
	}
	fprintf(stderr, "steps took %.3f s and %.3f s\n", elapsed[1], elapsed[2]);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(!json_object_object_get_ex(s[i], "failed", NULL), "%s",
			      json_object_to_json_string(s[i]));
	ck_assert_int_eq(count_sample(s, n, node, 2, "time"), 1);
	for (int k = 1; k <= 2; k++)
		ck_assert_int_eq(count_sample(s, n, node, k, "steal_pct"), 1);
	free_ndjson(s, n);

	ck_assert_int_eq(uname(&host), 0);
	for (int k = 1; k <= 2; k++) {
		char file[64];
		char *vm, *mp;

		snprintf(file, sizeof(file), "vmstat-step-%d.log", k);
		vm = monitor_file(file);
		ck_assert_msg(vm != NULL, "no %s; %s", file, run_diagnosis());
		fprintf(stderr, "--- %s\n%s", file, vm);
		ck_assert_msg(count_lines(vm, vmstat_header) == 1, "%s: %s", file, vm);
		ck_assert_msg(count_lines(vm, vmstat_data) >= 1, "%s: %s", file, vm);

		snprintf(file, sizeof(file), "mpstat-step-%d.log", k);
		mp = monitor_file(file);
		ck_assert_msg(mp != NULL, "no %s; %s", file, run_diagnosis());
		fprintf(stderr, "--- %s\n%s", file, mp);
		/* its banner names the kernel it ran on: the guest's */
		ck_assert_msg(strstr(mp, release), "%s: not on %s: %s", file, release, mp);
		if (strcmp(host.release, release))
			ck_assert_msg(!strstr(mp, host.release), "%s: %s", file, mp);
		/* mpstat prints its first figures one interval (1 s) after it
		 * started, and nothing when stopped before: the short
		 * hackbench (0.7 s here) may have its banner only */
		if (k == 2 && elapsed[k] < 1.5) {
			fprintf(stderr, "step %d took %.3f s: mpstat's figures not required\n", k,
				elapsed[k]);
			continue;
		}
		ck_assert_msg(count_lines(mp, mpstat_header) >= 1, "%s: %s", file, mp);
		ck_assert_msg(count_lines(mp, mpstat_data) >= 1, "%s: %s", file, mp);
	}
	/* nothing for a step that did not run */
	ck_assert_ptr_null(monitor_file("vmstat-step-3.log"));

	/* the agent's built-in samples, stamped with both steps */
	for (int k = 1; k <= 2; k++) {
		ck_assert_int_ge(count_stamped("stat.ndjson", k, "stat.cpu.steal"), 1);
		ck_assert_int_ge(count_stamped("loadavg.ndjson", k, "loadavg.1"), 1);
		ck_assert_int_ge(count_stamped("vmstat.ndjson", k, "vmstat.nr_free_pages"), 1);
	}
}
END_TEST

/* top is also a busybox applet in the demo guest (/bin/top -> busybox):
 * the agent runs monitors without a shell, PATH with <harness>/bin first,
 * so the pushed procps top runs, not busybox's. */
START_TEST(test_top_applet_name)
{
	char *text;

	write_hconf();
	write_file("g.conf",
		   "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=2000000000\n"
		   "MONITORS=top\nMONITOR_UPDATE_FREQUENCY=0.5\n",
		   0644);
	int code = hostd_test_run(NULL, demo_args);
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());
	text = monitor_file("top-step-1.log");
	ck_assert_msg(text != NULL, "no top-step-1.log; %s", run_diagnosis());
	fprintf(stderr, "--- top-step-1.log\n%.2000s\n", text);
	/* procps: "top - 12:00:01 up ..." and "%Cpu(s):"; busybox: "CPU:" */
	ck_assert_msg(strstr(text, "top - ") && strstr(text, "%Cpu(s):"), "%s", text);
	ck_assert_msg(!strstr(text, "\nCPU:"), "%s", text);
	json_object *m = manifest();
	ck_assert_msg(!strstr(json_object_to_json_string(m), "error monitor"), "%s",
		      json_object_to_json_string(m));
	json_object_put(m);
}
END_TEST

static void skip_unless_possible(void)
{
	demo_skip_unless_possible();
	if (access("/usr/bin/hackbench", X_OK) != 0 || access("/usr/bin/vmstat", X_OK) != 0 ||
	    access("/usr/bin/mpstat", X_OK) != 0 ||
	    access("/lib/x86_64-linux-gnu/libproc2.so.0", R_OK) != 0) {
		fprintf(stderr, "needs root, the demo guest (vm-templates/build-demo-guest), "
				"rt-tests, procps and sysstat\n");
		exit(77);
	}
}

int main(void)
{
	skip_unless_possible();
	Suite *s = suite_create("hostd-guest-monitors");
	TCase *tc = tcase_create("busybox-guest");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_vmstat_mpstat_in_busybox_guest);
	tcase_add_test(tc, test_top_applet_name);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
