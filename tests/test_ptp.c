// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The KVM PTP clock.  These machines run TCG, where ptp_kvm cannot load, so:
 * the agent's detection on fake sysfs trees, its arithmetic on made-up
 * pairs and through the test double; then end to end, local agents on a
 * synthetic clock 7 s ahead whose "PTP clock" reads the host's realtime
 * while their own realtime lags it, and guests that report a clocksource
 * unfit for microsecond timing.
 */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "hostd_testlib.h"
#include "testlib.h"
#include "ptp.h"

#define SEC 1000000000LL

/* ---- the agent's side ------------------------------------------------ */

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	write_file(rel, text, 0644);
}

static void rm(const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(unlink(path), 0);
}

/* Several PTP clocks: the lowest-numbered KVM one that has a device node. */
START_TEST(test_find_kvm_clock)
{
	char dev[512], want[512];

	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, sizeof(dev)), -ENOENT); /* no sys/class/ptp */
	put("sys/class/ptp/ptp0/clock_name", "e1000e\n");
	put("dev/ptp0", "");
	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, sizeof(dev)), -ENOENT);
	put("sys/class/ptp/ptp1/clock_name", "KVM virtual PTP clock\n"); /* not the name */
	put("dev/ptp1", "");
	put("sys/class/ptp/ptpx/clock_name", "KVM virtual PTP\n"); /* not ptpN */
	put("sys/class/ptp/ptp2/clock_name", "KVM virtual PTP\n"); /* no device node */
	put("sys/class/ptp/ptp10/clock_name", "KVM virtual PTP");  /* no newline */
	put("dev/ptp10", "");
	put("sys/class/ptp/ptp3/clock_name", "KVM virtual PTP\n");
	put("dev/ptp3", "");
	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, sizeof(dev)), 0);
	snprintf(want, sizeof(want), "%s/dev/ptp3", tmpdir);
	ck_assert_str_eq(dev, want);
	rm("dev/ptp3");
	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, sizeof(dev)), 0);
	snprintf(want, sizeof(want), "%s/dev/ptp10", tmpdir);
	ck_assert_str_eq(dev, want);
	/* KVM clocks but none with a device node: named, refused */
	rm("dev/ptp10");
	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, sizeof(dev)), -ENODEV);
	snprintf(want, sizeof(want), "%s/dev/ptp2", tmpdir);
	ck_assert_str_eq(dev, want);
	ck_assert_int_eq(ptp_find_kvm(tmpdir, dev, 8), -ENAMETOOLONG);
}
END_TEST

/* A device node that is not a PTP clock, or none at all. */
START_TEST(test_open_refuses)
{
	struct ptp_clock c;
	char path[512];

	put("dev/ptp0", "");
	snprintf(path, sizeof(path), "%s/dev/ptp0", tmpdir);
	ck_assert_int_eq(ptp_open(&c, path), -ENOTTY);
	ck_assert_int_eq(c.fd, -1);
	snprintf(path, sizeof(path), "%s/dev/ptp9", tmpdir);
	ck_assert_int_eq(ptp_open(&c, path), -ENOENT);
	struct ptp_reading rd;
	ck_assert_int_eq(ptp_read(&c, &rd), -ENODEV);
}
END_TEST

START_TEST(test_combine)
{
	const int64_t rt = 1700000000 * SEC;
	struct ptp_pair pairs[] = {
		{ rt + 500, rt + 500 + 3 * SEC, 40 },
		{ rt + 900, rt + 900 + 3 * SEC + 7, 10 }, /* the tightest */
		{ rt + 950, rt + 950, -1 },		  /* impossible: skipped */
		{ rt + 990, rt + 990 + 3 * SEC + 2, 25 },
	};
	struct ptp_reading rd;

	ck_assert_int_eq(ptp_combine(rt, 5000, rt + 100, pairs, 4, &rd), 0);
	ck_assert_int_eq(rd.mono_ns, 5000);
	ck_assert_int_eq(rd.real_ns, rt + 50);
	ck_assert_int_eq(rd.host_real_ns, rt + 50 + 3 * SEC + 7);
	ck_assert_int_eq(rd.window_ns, 100 + 10 + 1);
	/* a cross-timestamp and a clock read twice in the same nanosecond:
	 * the window is still at least 1 */
	struct ptp_pair exact = { rt, rt - 2 * SEC, 0 };
	ck_assert_int_eq(ptp_combine(rt, 1, rt, &exact, 1, &rd), 0);
	ck_assert_int_eq(rd.window_ns, 1);
	ck_assert_int_eq(rd.host_real_ns, rt - 2 * SEC);

	ck_assert_int_eq(ptp_combine(rt, 5000, rt - 1, pairs, 4, &rd), -EAGAIN);
	ck_assert_int_eq(ptp_combine(rt, 5000, rt + 100, &pairs[2], 1, &rd), -ERANGE);
	ck_assert_int_eq(ptp_combine(rt, 5000, rt + 100, pairs, 0, &rd), -ERANGE);
	ck_assert_int_eq(ptp_combine(rt, 0, rt + 100, pairs, 4, &rd), -ERANGE);
	ck_assert_int_eq(ptp_combine(rt, 5000, rt + 2 * SEC, pairs, 4, &rd), -ERANGE);
	struct ptp_pair huge = { INT64_MAX - 5, INT64_MAX, 0 };
	ck_assert_int_eq(ptp_combine(rt, 5000, rt + 100, &huge, 1, &rd), -ERANGE);
}
END_TEST

/* The double: a PHC that reads this machine's realtime while the "guest's"
 * lags it by 2.5 s.  Every instant of the reading lies between stamps the
 * test takes around it. */
START_TEST(test_synthetic_reading)
{
	const int64_t behind = 2500000000LL;
	struct ptp_clock c;
	struct ptp_reading rd;

	ptp_open_synthetic(&c, behind);
	int64_t mono0 = clock_mono_ns(), real0 = clock_real_ns();
	ck_assert_int_eq(ptp_read(&c, &rd), 0);
	int64_t real1 = clock_real_ns(), mono1 = clock_mono_ns();
	ck_assert_int_ge(rd.mono_ns, mono0);
	ck_assert_int_le(rd.mono_ns, mono1);
	ck_assert_int_ge(rd.real_ns + behind, real0);
	ck_assert_int_le(rd.real_ns + behind, real1);
	ck_assert_int_ge(rd.window_ns, 1);
	/* the host's realtime was real0..real1, known to within the window */
	ck_assert_int_ge(rd.host_real_ns + rd.window_ns, real0);
	ck_assert_int_le(rd.host_real_ns - rd.window_ns, real1);
	ck_assert_int_le(llabs(rd.host_real_ns - rd.real_ns - behind), rd.window_ns);
	ck_assert_uint_eq(c.failures, 0);
	ptp_close(&c);
}
END_TEST

static int scripted_result;
static int scripted_pairs(struct ptp_clock *c, struct ptp_pair *out, unsigned max)
{
	(void)c;
	for (int i = 0; i < scripted_result && (unsigned)i < max; i++)
		out[i] = (struct ptp_pair){ clock_real_ns(), clock_real_ns(), 0 };
	return scripted_result;
}
static int64_t scripted_now(struct ptp_clock *c)
{
	(void)c;
	return clock_real_ns();
}

/* A clock that fails, or returns nothing: said, counted, no reading. */
START_TEST(test_read_failures)
{
	static const struct ptp_ops ops = { scripted_pairs, scripted_now };
	struct ptp_clock c = { .ops = &ops, .fd = -1 };
	struct ptp_reading rd;

	scripted_result = -EOPNOTSUPP;
	ck_assert_int_eq(ptp_read(&c, &rd), -EOPNOTSUPP);
	scripted_result = 0;
	ck_assert_int_eq(ptp_read(&c, &rd), -EIO);
	ck_assert_uint_eq(c.failures, 2);
	scripted_result = 3;
	ck_assert_int_eq(ptp_read(&c, &rd), 0);
	ck_assert_uint_eq(c.failures, 2);
	ck_assert_str_eq(ptp_method_name(PTP_PRECISE), "cross-timestamp");
	ck_assert_str_eq(ptp_method_name(PTP_PLAIN), "plain");
}
END_TEST

/* ---- end to end through hostd ------------------------------------------ */

/* An agent wrapper that adds args for every node, or only for one. */
static void agent_wrapper(const char *node, const char *args, char *path, size_t len)
{
	char text[2048];
	if (node)
		snprintf(text, sizeof(text),
			 "#!/bin/sh\ncase \"$*\" in *'--node %s'*) exec '%s' %s \"$@\";; esac\n"
			 "exec '%s' \"$@\"\n",
			 node, agent_path, args, agent_path);
	else
		snprintf(text, sizeof(text), "#!/bin/sh\nexec '%s' %s \"$@\"\n", agent_path, args);
	write_file("agent-wrapper", text, 0755);
	snprintf(path, len, "%s/agent-wrapper", tmpdir);
}

/* Guests 7 s ahead, without drift: the truth of every offset is 7 s, and
 * the PTP estimate must hold it within its own bound.  Their realtime lags
 * the host's by 2.5 s, which must not matter (only the host's realtime is
 * read from the PHC). */
START_TEST(test_ptp_offsets)
{
	const int64_t truth = 7 * SEC;
	char agent[512];
	agent_wrapper(NULL, "--ptp-synthetic-ns 2500000000", agent, sizeof(agent));
	write_file("h.conf",
		   "GUEST_COUNT=2\nHOST_RUNS_BENCHMARKS=yes\n"
		   "LOCAL_GUEST_CLOCK_OFFSET_NS=7000000000\n",
		   0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nITERATIONS=8\nCPU_PROBE_UNITS=1000\n", 0644);
	ck_assert_msg(hostd_test_run(agent, NULL) == 0, "%s", run_diagnosis());

	json_object *m = manifest();
	for (int g = 1; g <= 2; g++) {
		char node[16];
		snprintf(node, sizeof(node), "guest-%d", g);
		json_object *c = json_object_object_get(participant(m, node), "clock");
		ck_assert_str_eq(jstr(c, "method"), "ptp-kvm");
		ck_assert_int_ge(jint(c, "ptp_readings"), 16);
		ck_assert_int_eq(jint(c, "ptp_refused"), 0);
		ck_assert_int_le(llabs(jint(c, "offset_ns") - truth), jint(c, "bound_ns") + 1);
		/* ping/pong measured the same clock, within its own bound */
		ck_assert_int_le(llabs(jint(c, "ping_offset_ns") - truth),
				 jint(c, "ping_bound_ns") + 1);
		/* the guest's own realtime is carried, not used: 2.5 s behind,
		 * give or take the double's read window */
		ck_assert_int_le(llabs(jint(c, "guest_realtime_behind_ns") - 2500000000LL),
				 10 * 1000 * 1000);
	}
	ck_assert_str_eq(jstr(json_object_object_get(participant(m, "host"), "clock"), "method"),
			 "shared");
	json_object_put(m);

	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 8);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(jstr(b[i], "release"), "scheduled");
		json_object *offs = json_object_object_get(b[i], "clock_offsets");
		json_object *started = json_object_object_get(b[i], "started_ns");
		int64_t go = jint(b[i], "go_sent_ns");
		for (int g = 1; g <= 2; g++) {
			char node[16];
			snprintf(node, sizeof(node), "guest-%d", g);
			json_object *c = json_object_object_get(offs, node);
			ck_assert_str_eq(jstr(c, "method"), "ptp-kvm");
			int64_t bound = jint(c, "bound_ns");
			ck_assert_int_le(llabs(jint(c, "offset_ns") - truth), bound + 1);
			/* a start converted to the host's clock is after the go
			 * left, give or take the bound (7 s off if unconverted) */
			ck_assert_int_ge(jint(started, node), go - bound);
			/* and before the next barrier's ready arrived */
			if (i + 1 < n)
				ck_assert_int_le(jint(started, node),
						 jint(json_object_object_get(b[i + 1], "ready_ns"),
						      node) +
							 bound);
		}
		ck_assert_int_lt(jint(b[i], "skew_ns"), SEC);
	}
	free_ndjson(b, n);
}
END_TEST

/* A guest on jiffies: warned about before the first step, and every
 * barrier released immediately; one on hpet: warned about, scheduled. */
START_TEST(test_clocksource_unfit)
{
	static const struct {
		const char *cs, *release, *warning;
	} cases[] = {
		{ "jiffies", "immediate", "guest-2: clocksource jiffies counts timer ticks" },
		{ "hpet", "scheduled", "guest-2: clocksource hpet is slow to read" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char agent[512], args[600], text[64], path[512];
		snprintf(text, sizeof(text), "%s\n", cases[k].cs);
		put("fake/sys/devices/system/clocksource/clocksource0/current_clocksource", text);
		snprintf(args, sizeof(args), "--sysfs-root '%s/fake'", tmpdir);
		agent_wrapper("guest-2", args, agent, sizeof(agent));
		write_file("h.conf", "GUEST_COUNT=2\nLOCAL_GUEST_CLOCK_OFFSET_NS=1000000\n", 0644);
		write_file("g.conf", "MMTESTS=cpu-probe\nITERATIONS=3\nCPU_PROBE_UNITS=1000\n", 0644);
		ck_assert_msg(hostd_test_run(agent, NULL) == 0, "%s", run_diagnosis());

		json_object *m = manifest();
		ck_assert_str_eq(jstr(participant(m, "guest-2"), "clocksource"), cases[k].cs);
		ck_assert_str_ne(jstr(participant(m, "guest-1"), "clocksource"), cases[k].cs);
		const char *events = json_object_to_json_string(json_object_object_get(m, "events"));
		ck_assert_msg(strstr(events, cases[k].warning + strlen("guest-2: ")), "%s", events);
		json_object_put(m);
		size_t n;
		json_object **b = read_ndjson("barriers.ndjson", &n);
		ck_assert_uint_eq(n, 3);
		for (size_t i = 0; i < n; i++)
			ck_assert_str_eq(jstr(b[i], "release"), cases[k].release);
		free_ndjson(b, n);
		snprintf(path, sizeof(path), "%s/stderr", tmpdir);
		const char *err = read_text(path);
		ck_assert_msg(strstr(err, cases[k].warning), "%s", err);
		/* said once, before the first step was released */
		ck_assert_ptr_null(strstr(strstr(err, cases[k].warning) + 1, cases[k].warning));
		const char *step1 = strstr(err, "step 1/3");
		ck_assert_ptr_nonnull(step1);
		ck_assert_int_lt(strstr(err, cases[k].warning) - err, step1 - err);
		hostd_test_teardown_results();
	}
}
END_TEST

static void setup(void)
{
	hostd_test_setup();
}

static void teardown(void)
{
	hostd_test_teardown();
}

int main(void)
{
	Suite *s = suite_create("ptp");
	TCase *unit = tcase_create("agent");
	tcase_add_checked_fixture(unit, setup, teardown);
	tcase_add_test(unit, test_find_kvm_clock);
	tcase_add_test(unit, test_open_refuses);
	tcase_add_test(unit, test_combine);
	tcase_add_test(unit, test_synthetic_reading);
	tcase_add_test(unit, test_read_failures);
	suite_add_tcase(s, unit);
	TCase *e2e = tcase_create("hostd");
	tcase_add_checked_fixture(e2e, setup, teardown);
	tcase_set_timeout(e2e, 240);
	tcase_add_test(e2e, test_ptp_offsets);
	tcase_add_test(e2e, test_clocksource_unfit);
	suite_add_tcase(s, e2e);
	return testlib_main(s);
}
