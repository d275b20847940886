// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 14, cases 4 to 7: nothing a guest says is trusted unchecked.  Two
 * local guests; guest-2's agent is tests/hostile_agent.c, which speaks the
 * protocol and lies (LOCKSTEP_HOSTILE picks how), guest-1's the real one.
 * Each case checks what hostd made of the lie: the node failed with a
 * reason that names it, or its data flagged, and guest-1's run untouched.
 * Memory under the floods is bench/hostile-rss's to print, not asserted.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostd_testlib.h"
#include "testlib.h"

static char hostile_path[512];

static void setup(void)
{
	hostd_test_setup();
	snprintf(hostile_path, sizeof(hostile_path), "%s/tests/hostile-agent",
		 getenv("LOCKSTEP_BUILD_ROOT"));
	setenv("LOCKSTEP_HOSTILE_REAL", agent_path, 1);
	setenv("LOCKSTEP_HOSTILE_NODE", "guest-2", 1);
	setenv("LOCKSTEP_HOSTILE_SECONDS", "60", 1);
}

static void teardown(void)
{
	hostd_test_teardown();
}

#define HCONF "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=30\n"
#define GCONF "MMTESTS='cpu-probe'\nITERATIONS=3\nCPU_PROBE_UNITS=1000\n"

/* hostd with guest-2 hostile in mode; its exit code. */
static int run_hostile(const char *mode, const char *hconf_extra, const char *gconf)
{
	char h[1024];
	snprintf(h, sizeof(h), HCONF "%s", hconf_extra ? hconf_extra : "ON_GUEST_FAILURE=continue\n");
	write_file("h.conf", h, 0644);
	write_file("g.conf", gconf ? gconf : GCONF, 0644);
	setenv("LOCKSTEP_HOSTILE", mode, 1);
	return hostd_test_run(hostile_path, NULL);
}

/* guest-2 failed, once, for a reason with `want` in it; guest-1 ran all
 * its steps. */
static void assert_guest2_failed(const char *want, int guest1_steps)
{
	json_object *m = manifest();
	json_object *f = json_object_object_get(m, "failures");
	ck_assert_msg(json_object_array_length(f) >= 1, "%s", run_diagnosis());
	json_object *f0 = json_object_array_get_idx(f, 0);
	ck_assert_str_eq(jstr(f0, "node"), "guest-2");
	ck_assert_msg(strstr(jstr(f0, "reason"), want), "reason \"%s\" lacks \"%s\"",
		      jstr(f0, "reason"), want);
	ck_assert_str_eq(jstr(participant(m, "guest-2"), "status"), "failed");
	if (guest1_steps >= 0) {
		json_object *g1 = participant(m, "guest-1");
		ck_assert_str_eq(jstr(g1, "status"), "ok");
		ck_assert_int_eq(jint(g1, "steps_done"), guest1_steps);
		ck_assert_str_eq(jstr(m, "status"), "degraded");
	}
	json_object_put(m);
}

/* ---- case 4: memory bounded under floods ------------------------------ */

/* The lies that cost guest-2 its place at once, and what hostd says. */
static const struct {
	const char *mode, *reason, *hconf;
} failing[] = {
	/* case 4: asking again for what it never reads */
	{ "hello-flood", "hello again before it read the plan", NULL },
	/* a clock of its own: hello is answered with a ping first */
	{ "hello-flood", "hello again before it read the clock ping",
	  "ON_GUEST_FAILURE=continue\nLOCAL_GUEST_CLOCK_OFFSET_NS=1000000\n" },
	{ "sync-flood", "sync again before reading our sync-ack", NULL },
	{ "ready-flood", "ready for step 1 again before it read its go", NULL },
	/* case 7: names hostd measures itself */
	{ "reserved-sample", "monitor sample named vcpu.all.time, which hostd measures itself", NULL },
};

START_TEST(test_fails_node)
{
	ck_assert_int_eq(run_hostile(failing[_i].mode, failing[_i].hconf, NULL), 2);
	assert_guest2_failed(failing[_i].reason, 3);
}
END_TEST

/* A plan of 600 steps with long commands (about 700 KiB): one copy goes,
 * the next hello finds it unwritten. */
START_TEST(test_hello_flood_big_plan)
{
	char g[2048], pad[1201];
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(g, sizeof(g), "BENCHMARKS='pad'\nITERATIONS=600\nCOMMAND_PAD='true %s'\n", pad);
	/* aborted before its first step: exit 1, the reason said, no run
	 * folder left (issue 15) */
	ck_assert_int_eq(run_hostile("hello-flood", "ON_GUEST_FAILURE=abort\n", g), 1);
	const char *err = hostd_stderr();
	ck_assert_msg(strstr(err, "guest-2") && strstr(err, "hello again before it read the plan") &&
			      strstr(err, "run t aborted before its first step"),
		      "%s", err);
	assert_no_run_folder();
}
END_TEST

/* The same sync said again while our ack waits: owed once, not a flood
 * (an agent says its sync twice when our 0xFF crosses it). */
START_TEST(test_sync_same_not_flood)
{
	setenv("LOCKSTEP_HOSTILE_SECONDS", "2", 1);
	ck_assert_msg(run_hostile("sync-same", NULL, NULL) == 0, "%s", run_diagnosis());
	json_object *m = manifest();
	ck_assert_str_eq(jstr(participant(m, "guest-2"), "status"), "ok");
	json_object_put(m);
}
END_TEST

/* ---- case 5: guest text bounded and escaped --------------------------- */

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

START_TEST(test_error_flood)
{
	ck_assert_int_eq(run_hostile("error-flood", NULL, NULL), 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_ptr_nonnull(err);
	/* 4000 errors of 1000 bytes: 16 KiB of them shown, then one line */
	size_t shown = count_of(err, "agent error evil");
	ck_assert_msg(shown >= 10 && shown <= 17, "%zu errors shown", shown);
	ck_assert_uint_eq(count_of(err, "suppressed "), 1);
	ck_assert_ptr_nonnull(strstr(err, "bytes of agent error text"));
	/* no control character reached the log, only their escapes */
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t',
			      "control byte 0x%02x in hostd's stderr", (unsigned char)*p);
	ck_assert_ptr_nonnull(strstr(err, "\\x1b[2J\\x07"));
	ck_assert_ptr_null(strstr(err, "\n2026-01-01 00:00:00.000 hostd: error: fake"));

	snprintf(path, sizeof(path), "%s/results/t/manifest.json", tmpdir);
	const char *raw = read_text(path);
	ck_assert_ptr_nonnull(raw);
	ck_assert_msg(!strstr(raw, "\\u001b") && !strstr(raw, "\\u0007") && !strstr(raw, "\\n2026"),
		      "a control character in the manifest");
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_str_eq(jstr(participant(m, "guest-2"), "agent_version"), "hostile\\x1b[2J");
	ck_assert_str_eq(jstr(participant(m, "guest-2"), "status"), "ok");
	json_object_put(m);
}
END_TEST

/* ---- case 6: every step accounted for --------------------------------- */

static json_object *failure_record(json_object **s, size_t n, const char *node, int step)
{
	for (size_t i = 0; i < n; i++) {
		json_object *f;
		if (json_object_object_get_ex(s[i], "failed", &f) &&
		    !strcmp(jstr(s[i], "node"), node) && jint(s[i], "step") == step)
			return s[i];
	}
	return NULL;
}

START_TEST(test_skip_done)
{
	ck_assert_int_eq(run_hostile("skip-done", NULL, NULL), 2);
	assert_guest2_failed("said ready for step 2 before done for step 1", 3);
	json_object *m = manifest();
	ck_assert_int_eq(jint(participant(m, "guest-2"), "steps_done"), 0);
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	json_object *f = failure_record(s, n, "guest-2", 1);
	ck_assert_msg(f, "no failure record for guest-2's step 1");
	ck_assert_ptr_nonnull(strstr(jstr(f, "reason"), "before done"));
	free_ndjson(s, n);
}
END_TEST

/* Started step 2 and then gone, or silent past the deadline: the step has
 * its failure record all the same. */
static const struct {
	const char *mode, *reason;
} lost[] = {
	{ "vanish", "closed its channel" },
	{ "hang", "BARRIER_TIMEOUT=3s" },
};

START_TEST(test_step_lost)
{
	ck_assert_int_eq(run_hostile(lost[_i].mode,
				     "ON_GUEST_FAILURE=continue\nBARRIER_TIMEOUT=3\n", NULL),
			 2);
	assert_guest2_failed(lost[_i].reason, 3);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	json_object *f = failure_record(s, n, "guest-2", 2);
	ck_assert_msg(f, "no failure record for guest-2's step 2");
	ck_assert_ptr_nonnull(strstr(jstr(f, "reason"), lost[_i].reason));
	ck_assert_int_eq(count_sample(s, n, "guest-2", 1, "elapsed"), 1);
	free_ndjson(s, n);
	json_object *m = manifest();
	ck_assert_int_eq(jint(participant(m, "guest-2"), "steps_done"), 1);
	json_object_put(m);
}
END_TEST

/* Aborted by guest-2's lie: guest-1 did not run its plan, so it is not
 * "ok", and whatever step it was in has its failure record. */
START_TEST(test_skip_done_abort)
{
	ck_assert_int_eq(run_hostile("skip-done", "ON_GUEST_FAILURE=abort\n", NULL), 2);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "aborted");
	json_object *g1 = participant(m, "guest-1");
	ck_assert_int_lt(jint(g1, "steps_done"), 3);
	ck_assert_str_eq(jstr(g1, "status"), "incomplete");
	/* the abort is guest-2's failure, not guest-1's */
	ck_assert_int_eq(json_object_array_length(json_object_object_get(m, "failures")), 1);
	json_object_put(m);
}
END_TEST

/* ---- case 7: guest data in its place ---------------------------------- */

START_TEST(test_spec_result)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/specs", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	setenv("LOCKSTEP_BENCHMARKS_DIR", dir, 1);
	write_file("specs/tiny.bench",
		   "BENCH_NAME=tiny\nBENCH_COMMAND='echo Time: 0.5'\n"
		   "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		   0644);
	ck_assert_int_eq(run_hostile("spec-result", NULL, "MMTESTS=tiny\nITERATIONS=2\n"), 2);
	assert_guest2_failed("a benchmark spec's", 2);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 1, "time"), 0);
	ck_assert_ptr_nonnull(failure_record(s, n, "guest-2", 1));
	ck_assert_int_eq(count_sample(s, n, "guest-1", 1, "time"), 1);
	ck_assert_int_eq(count_sample(s, n, "guest-1", 2, "time"), 1);
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_twice_result)
{
	ck_assert_int_eq(run_hostile("twice-result", NULL,
				     "BENCHMARKS='hi'\nITERATIONS=2\nCOMMAND_HI='echo hi'\n"),
			 2);
	assert_guest2_failed("sent the result elapsed twice for step 1", 2);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_le(count_sample(s, n, "guest-2", 1, "elapsed"), 1);
	free_ndjson(s, n);
}
END_TEST

START_TEST(test_reserved_result)
{
	ck_assert_int_eq(run_hostile("reserved-result", NULL, NULL), 2);
	assert_guest2_failed("result named steal_pct, which hostd measures itself", 3);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_eq(count_sample(s, n, "guest-2", 1, "steal_pct"), 0);
	free_ndjson(s, n);
}
END_TEST

/* Each barrier record: guest-2 flagged with flag (NULL: nobody flagged at
 * all), its stamp out of started_ns and of the skew. */
static void assert_flagged(const char *flag, bool every)
{
	size_t n, flagged = 0;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		json_object *flags = json_object_object_get(b[i], "flags"), *g2;
		ck_assert_ptr_nonnull(flags);
		ck_assert_ptr_null(json_object_object_get(flags, "guest-1"));
		if (!json_object_object_get_ex(flags, "guest-2", &g2)) {
			ck_assert_msg(!every, "step %zu: guest-2 not flagged: %s", i + 1,
				      json_object_to_json_string(b[i]));
			continue;
		}
		flagged++;
		bool has = false;
		for (size_t k = 0; k < json_object_array_length(g2); k++)
			has |= !strcmp(json_object_get_string(json_object_array_get_idx(g2, k)), flag);
		ck_assert_msg(has, "step %zu: %s", i + 1, json_object_to_json_string(g2));
		if (!strcmp(flag, "start-implausible")) {
			json_object *st = json_object_object_get(b[i], "started_ns");
			ck_assert_ptr_null(json_object_object_get(st, "guest-2"));
			ck_assert_ptr_nonnull(json_object_object_get(st, "guest-1"));
			ck_assert_int_eq(jint(b[i], "skew_ns"), 0); /* guest-1 alone */
			ck_assert_ptr_nonnull(
				json_object_object_get(json_object_object_get(b[i], "claimed_started_ns"),
						       "guest-2"));
			ck_assert_int_eq(json_object_array_length(
						 json_object_object_get(b[i], "not_started")),
					 0);
		}
	}
	ck_assert_uint_ge(flagged, 1);
	free_ndjson(b, n);
}

START_TEST(test_stamp_zero)
{
	ck_assert_int_eq(run_hostile("stamp-zero", NULL, NULL), 0);
	assert_flagged("start-implausible", true);
}
END_TEST

START_TEST(test_stamp_max)
{
	ck_assert_int_eq(run_hostile("stamp-max", NULL, NULL), 0);
	assert_flagged("start-implausible", true);
}
END_TEST

/* A true stamp, but a lateness after the scheduled instant that the
 * receipt of started rules out (it would grow every later lead). */
START_TEST(test_late_lie)
{
	ck_assert_int_eq(run_hostile("late-lie", NULL, NULL), 0);
	assert_flagged("start-implausible", true);
	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	for (size_t i = 0; i < n; i++)
		ck_assert_ptr_null(
			json_object_object_get(json_object_object_get(b[i], "late_ns"), "guest-2"));
	free_ndjson(b, n);
}
END_TEST

/* The start timing of started (issue 21): the real agent's (guest-1) is in
 * every record, in an order that can be true; guest-2's is not, whether
 * it sent none (an agent from before the timing: honest) or one that
 * cannot be true (timing-lie, said once in hostd's log). */
START_TEST(test_start_timing)
{
	const char *mode = _i ? "timing-lie" : "honest";
	ck_assert_int_eq(run_hostile(mode, NULL, NULL), 0);
	size_t n;
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_object_get(b[i], "timing"), *g1;
		ck_assert_msg(t, "step %zu: no timing: %s", i + 1, json_object_to_json_string(b[i]));
		ck_assert_ptr_null(json_object_object_get(t, "guest-2"));
		ck_assert(json_object_object_get_ex(t, "guest-1", &g1));
		int64_t start = jint(json_object_object_get(b[i], "started_ns"), "guest-1");
		ck_assert_int_le(jint(b[i], "go_sent_ns"), jint(g1, "agent_go_ns"));
		ck_assert_int_le(jint(g1, "agent_go_ns"), jint(g1, "child_go_ns"));
		ck_assert_int_le(jint(g1, "child_go_ns"), start);
		ck_assert_int_ge(jint(g1, "runq_ns"), 0);
		ck_assert_int_le(jint(g1, "runq_ns"), start - jint(g1, "child_go_ns"));
	}
	free_ndjson(b, n);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *log = read_text(path); /* its own buffer */
	const char *said = strstr(log, "guest-2: its start timing for step 1 cannot be true");
	if (_i) {
		ck_assert_msg(said, "%s", log);
		ck_assert_ptr_null(strstr(said + strlen("guest-2: its"), "its start timing for step"));
	} else {
		ck_assert_ptr_null(said);
	}
}
END_TEST

/* Clocks of their own (a ping/pong offset): guest-2's jumps by 10 s after
 * step 1; guest-1's, honest, is never flagged.  hostd refreshes a clock
 * only while its node waits at a barrier for the others, so guest-1 does
 * real work (some 40 ms a step) and the hostile guest-2, which does none,
 * always waits for it: with 1000 units either could be last, and on a
 * loaded machine guest-2 was, at every barrier, so nothing was flagged. */
START_TEST(test_offset_jump)
{
	ck_assert_int_eq(run_hostile("offset-jump",
				     "ON_GUEST_FAILURE=continue\n"
				     "LOCAL_GUEST_CLOCK_OFFSET_NS=1000000\n",
				     "MMTESTS='cpu-probe'\nITERATIONS=3\nCPU_PROBE_UNITS=20000000\n"),
			 0);
	assert_flagged("offset-jump", false);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	ck_assert_ptr_nonnull(strstr(read_text(path), "its clock offset jumped by"));
}
END_TEST

/* Pongs near 2^63: every exchange refused, nothing overflows, the run ends. */
START_TEST(test_offset_huge)
{
	ck_assert_int_eq(run_hostile("offset-huge",
				     "ON_GUEST_FAILURE=continue\n"
				     "LOCAL_GUEST_CLOCK_OFFSET_NS=1000000\n",
				     NULL),
			 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	ck_assert_ptr_nonnull(strstr(read_text(path), "none of 16 clock exchanges was possible"));
	json_object *m = manifest();
	ck_assert_int_eq(jint(json_object_object_get(participant(m, "guest-2"), "clock"), "offset_ns"),
			 0);
	json_object_put(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-hostile");
	TCase *tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_loop_test(tc, test_fails_node, 0, sizeof(failing) / sizeof(failing[0]));
	tcase_add_test(tc, test_hello_flood_big_plan);
	tcase_add_test(tc, test_sync_same_not_flood);
	tcase_add_test(tc, test_error_flood);
	tcase_add_test(tc, test_skip_done);
	tcase_add_test(tc, test_skip_done_abort);
	tcase_add_loop_test(tc, test_step_lost, 0, sizeof(lost) / sizeof(lost[0]));
	tcase_add_test(tc, test_spec_result);
	tcase_add_test(tc, test_twice_result);
	tcase_add_test(tc, test_reserved_result);
	tcase_add_test(tc, test_stamp_zero);
	tcase_add_test(tc, test_stamp_max);
	tcase_add_test(tc, test_late_lie);
	tcase_add_loop_test(tc, test_start_timing, 0, 2);
	tcase_add_test(tc, test_offset_jump);
	tcase_add_test(tc, test_offset_huge);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
