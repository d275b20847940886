// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * External monitors on the host (Debian's procps and sysstat; perf and
 * trace-cmd where the kernel lets them run), started and stopped at step
 * edges on a libuv loop; a missing or dying monitor is reported and the
 * rest go on.  And the monitor keys of a config.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "config.h"
#include "fileio.h"
#include "monitor_ext.h"
#include "monitor_settings.h"

/* the last warning load() saw */
static struct config_diag last_warning;

static int load(const char *text, struct monitor_settings *s, struct config_diag *d)
{
	struct config *c = config_new();
	int r;

	ck_assert_int_eq(config_load_string(c, "h.conf", text, d), 0);
	r = monitor_settings_load(c, s, d);
	const struct config_diag *w;
	size_t nw = config_warnings(c, &w);
	last_warning = (struct config_diag){ 0 };
	if (nw)
		last_warning = w[nw - 1];
	config_free(c);
	return r;
}

START_TEST(test_settings)
{
	struct monitor_settings s;
	struct config_diag d;

	ck_assert_int_eq(load("X=1\n", &s, &d), 0);
	ck_assert_uint_eq(s.interval_ms, 0);
	ck_assert_uint_eq(s.external, 0);
	ck_assert_int_eq(load("MONITOR_UPDATE_FREQUENCY=0.1\n", &s, &d), 0);
	ck_assert_uint_eq(s.interval_ms, 100);
	ck_assert_int_eq(load("MONITORS=\"vmstat  top proc-vmstat\"\nMONITORS_TRACER=perf-event-stat\n"
			      "MONITOR_PERF_EVENTS=cpu-migrations,context-switches\n",
			      &s, &d),
			 0);
	ck_assert_uint_eq(s.interval_ms, MONITOR_DEFAULT_INTERVAL_MS);
	ck_assert_uint_eq(s.external, (1u << MONITOR_EXT_VMSTAT) | (1u << MONITOR_EXT_TOP) |
					      (1u << MONITOR_EXT_PERF_EVENT_STAT));
	ck_assert_str_eq(s.perf_events, "cpu-migrations,context-switches");
	ck_assert_int_eq(load("MONITORS=\"trace-cmd\"\nMONITOR_UPDATE_FREQUENCY=2\n"
			      "MONITOR_FTRACE_EVENTS=\"sched:sched_switch sched:sched_wakeup\"\n",
			      &s, &d),
			 0);
	ck_assert_uint_eq(s.interval_ms, 2000);
	ck_assert_str_eq(s.ftrace_events, "sched:sched_switch sched:sched_wakeup");

	/* a monitor is never a reason to refuse a config (MMTests' configs name
	 * many lockstep lacks): an unknown one is a warning at its line */
	ck_assert_int_eq(load("\nMONITORS=\"vmstat frobstat\"\n", &s, &d), 0);
	ck_assert_uint_eq(s.external, 1u << MONITOR_EXT_VMSTAT);
	ck_assert_int_eq(last_warning.line, 2);
	ck_assert_ptr_nonnull(strstr(last_warning.text, "monitor \"frobstat\" ignored"));
	ck_assert_int_eq(load("MONITOR_PERF_EVENTS=\"a;reboot\"\n", &s, &d), -EINVAL);
	ck_assert_int_eq(load("MONITOR_FTRACE_EVENTS='$(x)'\n", &s, &d), -EINVAL);
	ck_assert_int_eq(load("MONITOR_UPDATE_FREQUENCY=0\n", &s, &d), -EINVAL);
	ck_assert_int_eq(load("MONITOR_UPDATE_FREQUENCY=2h\n", &s, &d), -EINVAL);
}
END_TEST

/* ---- running them ---- */

struct report {
	char monitor[32];
	uint32_t step;
	char what[256];
};

static struct report reports[16];
static unsigned nreports;
static bool closed;
static char dir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* What a case made under /tmp goes when it ends (a fixture's teardown). */
static void remove_tree(void)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void on_report(void *ctx, const char *monitor, uint32_t step, const char *what)
{
	(void)ctx;
	fprintf(stderr, "monitor %s, step %u: %s\n", monitor, step, what);
	ck_assert_uint_lt(nreports, 16);
	snprintf(reports[nreports].monitor, 32, "%s", monitor);
	reports[nreports].step = step;
	snprintf(reports[nreports].what, 256, "%s", what);
	nreports++;
}

static void on_closed(void *ctx)
{
	(void)ctx;
	closed = true;
}

static bool log_holds(const char *name, uint32_t step, const char *needle);

/* Step 1 ends once this says what the test waits for has happened. */
static bool (*step1_over)(void);

static void end_cb(uv_timer_t *t)
{
	struct monitor_ext *m = t->data;

	if (!step1_over())
		return;
	monitor_ext_step_end(m, 1);
	monitor_ext_step_start(m, 2);
	monitor_ext_close(m, on_closed, NULL);
	uv_close((uv_handle_t *)t, NULL);
}

/* Step 1 until over() (looked at every 50 ms: no assertion on speed),
 * then step 2 started and closed at once; runs the loop until everything
 * is gone. */
static void run_steps(unsigned external, bool (*over)(void))
{
	struct monitor_settings s = { .interval_ms = 500, .external = external };
	struct monitor_ext *m;
	uv_loop_t loop;
	uv_timer_t t;

	nreports = 0;
	closed = false;
	snprintf(dir, sizeof(dir), "/tmp/test-monext-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	m = monitor_ext_new(&loop, &s, dir, on_report, NULL);
	ck_assert_ptr_nonnull(m);
	monitor_ext_step_start(m, 1);
	uv_timer_init(&loop, &t);
	t.data = m;
	step1_over = over;
	uv_timer_start(&t, end_cb, 50, 50);
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert(closed);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}

static bool quiet_misses;

static bool log_holds(const char *name, uint32_t step, const char *needle)
{
	char path[256], *text = NULL;
	size_t len;
	bool found;

	snprintf(path, sizeof(path), "%s/%s-step-%u.log", dir, name, step);
	if (fileio_read_all(path, 16 << 20, &text, &len) < 0)
		return false;
	found = strstr(text, needle) != NULL;
	if (!found && !quiet_misses)
		fprintf(stderr, "%s: no \"%s\" in:\n%.400s\n", path, needle, text);
	free(text);
	return found;
}

static bool have(const char *prog)
{
	char path[128];

	snprintf(path, sizeof(path), "/usr/bin/%s", prog);
	return access(path, X_OK) == 0;
}

static bool sysstat;

/* Each monitor has written its first report (or something was reported). */
static bool procps_sysstat_over(void)
{
	bool over;

	quiet_misses = true;
	over = log_holds("vmstat", 1, "procs") && log_holds("top", 1, "load average") &&
	       (!sysstat || (log_holds("mpstat", 1, "%steal") && log_holds("iostat", 1, "avg-cpu")));
	quiet_misses = false;
	return over || nreports;
}

START_TEST(test_procps_sysstat)
{
	unsigned ext = (1u << MONITOR_EXT_VMSTAT) | (1u << MONITOR_EXT_TOP);

	sysstat = have("mpstat");
	if (sysstat)
		ext |= (1u << MONITOR_EXT_MPSTAT) | (1u << MONITOR_EXT_IOSTAT);
	else
		fprintf(stderr, "sysstat is not installed: mpstat and iostat not tried\n");
	run_steps(ext, procps_sysstat_over);
	ck_assert_uint_eq(nreports, 0);
	ck_assert(log_holds("vmstat", 1, "procs"));
	ck_assert(log_holds("top", 1, "load average"));
	if (ext & (1u << MONITOR_EXT_MPSTAT)) {
		ck_assert(log_holds("mpstat", 1, "%steal"));
		ck_assert(log_holds("iostat", 1, "avg-cpu"));
	}
	/* step 2 was started and stopped at once: its files exist */
	ck_assert(log_holds("vmstat", 2, ""));
}
END_TEST

static bool missing_and_dying_over(void)
{
	return nreports >= 2; /* top at once, vmstat when it died */
}

START_TEST(test_missing_and_dying)
{
	char bin[128], path[192];
	const char *script = "#!/bin/sh\necho 'vmstat: out of luck'\nexit 3\n";
	unsigned top = 0;
	bool vmstat_died = false;

	/* a PATH with a vmstat that dies and no top at all */
	snprintf(bin, sizeof(bin), "/tmp/test-monext-bin-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(bin));
	snprintf(path, sizeof(path), "%s/vmstat", bin);
	ck_assert_int_eq(fileio_write_atomic(path, script, strlen(script)), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	setenv("PATH", bin, 1);
	run_steps((1u << MONITOR_EXT_VMSTAT) | (1u << MONITOR_EXT_TOP), missing_and_dying_over);
	/* each for step 1 and for step 2: top never started, vmstat died in 1
	 * (in 2 it was stopped at once, so its death may not be reported) */
	ck_assert_uint_ge(nreports, 3);
	for (unsigned i = 0; i < nreports; i++) {
		if (!strcmp(reports[i].monitor, "top")) {
			ck_assert_ptr_nonnull(strstr(reports[i].what, "cannot start top"));
			top |= 1u << reports[i].step;
		} else if (reports[i].step == 1) {
			ck_assert_str_eq(reports[i].monitor, "vmstat");
			ck_assert_str_eq(reports[i].what,
					 "exited with status 3 during step 1; see vmstat-step-1.log");
			vmstat_died = true;
		}
	}
	ck_assert_uint_eq(top, (1u << 1) | (1u << 2));
	ck_assert(vmstat_died);
	ck_assert(log_holds("vmstat", 1, "out of luck"));
	unlink(path);
	rmdir(bin);
}
END_TEST

/* perf and trace-cmd need a kernel that lets them: either they record, or
 * they are reported; the run goes on either way. */
static bool reported(const char *monitor)
{
	for (unsigned i = 0; i < nreports; i++)
		if (!strcmp(reports[i].monitor, monitor))
			return true;
	return false;
}

/* perf -I prints each interval; trace-cmd says "Hit Ctrl^C" once recording */
static bool perf_trace_cmd_over(void)
{
	bool over;

	quiet_misses = true;
	over = (reported("perf-event-stat") || log_holds("perf-event-stat", 1, "context-switches")) &&
	       (reported("trace-cmd") || log_holds("trace-cmd", 1, "Ctrl"));
	quiet_misses = false;
	return over;
}

START_TEST(test_perf_trace_cmd)
{
	char dat[128];
	struct stat st;

	run_steps((1u << MONITOR_EXT_PERF_EVENT_STAT) | (1u << MONITOR_EXT_TRACE_CMD),
		  perf_trace_cmd_over);
	snprintf(dat, sizeof(dat), "%s/trace-cmd-step-1.dat", dir);
	fprintf(stderr, "perf-event-stat: %s; trace-cmd: %s\n",
		log_holds("perf-event-stat", 1, "context-switches") ? "recorded" : "did not record",
		stat(dat, &st) == 0 && st.st_size > 0 ? "recorded" : "did not record");
	ck_assert(log_holds("perf-event-stat", 1, ""));
	ck_assert(log_holds("trace-cmd", 1, ""));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("monitor-ext");
	TCase *tc = tcase_create("monitor-ext");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_procps_sysstat);
	tcase_add_test(tc, test_missing_and_dying);
	tcase_add_test(tc, test_perf_trace_cmd);
	tcase_add_checked_fixture(tc, NULL, remove_tree);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
