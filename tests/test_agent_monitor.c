// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The real guestagent's built-in monitors, driven by agent_host.c: samples
 * arrive at the asked interval stamped with the step they cover, a system
 * without /proc/pressure is tolerated, and without monitors nothing is
 * sampled.  Also prints the agent's CPU and RSS while it samples (figures
 * for docs/monitors.md; not asserted, speed is bench/'s business).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_host.h"

static void send_plan(struct host *h, const char *cmd, uint32_t interval_ms)
{
	struct proto_msg m = { .type = PROTO_PLAN };
	struct proto_step *st;

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "%s", NODE);
	m.u.plan.nsteps = 1;
	m.u.plan.steps = calloc(1, sizeof(*st));
	m.u.plan.monitor_interval_ms = interval_ms;
	st = &m.u.plan.steps[0];
	st->index = 1;
	st->iteration = 1;
	snprintf(st->benchmark, sizeof(st->benchmark), "mon");
	st->kind = PROTO_STEP_COMMAND;
	ck_assert_int_eq(proto_step_set_command(st, cmd), 0);
	host_send(h, &m);
	proto_msg_clear(&m);
}

struct seen {
	unsigned n[2];	      /* samples stamped 0 and 1 */
	unsigned instants[2]; /* distinct mono_ns among them */
	int64_t last_ns[2];
	int64_t first1_ns;
	bool psi, steal, load, nr_free;
	int64_t started_ns, done_ns;
};

static void note(struct seen *s, const struct proto_msg *m)
{
	unsigned k = m->u.sample.step;

	ck_assert_uint_le(k, 1);
	s->n[k]++;
	if (m->u.sample.mono_ns != s->last_ns[k])
		s->instants[k]++;
	s->last_ns[k] = m->u.sample.mono_ns;
	if (k == 1 && !s->first1_ns)
		s->first1_ns = m->u.sample.mono_ns;
	s->psi |= !strncmp(m->u.sample.metric, "psi.", 4);
	s->steal |= !strcmp(m->u.sample.metric, "stat.cpu.steal");
	s->load |= !strcmp(m->u.sample.metric, "loadavg.1");
	s->nr_free |= !strcmp(m->u.sample.metric, "vmstat.nr_free_pages");
	if (!strcmp(m->u.sample.metric, "stat.cpu.steal")) {
		ck_assert_str_eq(m->u.sample.unit, "%");
		ck_assert(m->u.sample.value >= 0 && m->u.sample.value <= 100);
	}
}

/* Everything up to done(1), samples counted; at least `waiting` samples
 * stamped 0 are awaited at the barrier before the go.  With release set,
 * the step waits for a file "go" in its work folder, made once two timer
 * samples of the step came: no assertion depends on speed. */
static void run_one(struct host *h, struct seen *s, unsigned waiting, bool release)
{
	bool released = !release;

	memset(s, 0, sizeof(*s));
	host_expect_ready(h, 1);
	while (s->n[0] < waiting) {
		struct hev e = host_next(h);

		ck_assert_int_eq(e.ev, PROTO_EV_MSG);
		ck_assert_int_eq(e.m.type, PROTO_SAMPLE);
		note(s, &e.m);
		proto_msg_clear(&e.m);
	}
	host_go(h, 1, 0);
	for (;;) {
		struct hev e = host_next(h);

		ck_assert_int_eq(e.ev, PROTO_EV_MSG);
		if (e.m.type == PROTO_SAMPLE) {
			/* what was sampled before the step is stamped 0 */
			ck_assert(e.m.u.sample.step == 0 || s->started_ns);
			note(s, &e.m);
			if (!released && s->instants[1] >= 2) {
				host_write_file(h->dir, "go", "");
				released = true;
			}
		} else if (e.m.type == PROTO_STARTED) {
			s->started_ns = e.m.u.started.mono_ns;
		} else if (e.m.type == PROTO_DONE) {
			s->done_ns = e.m.u.done.mono_ns;
			proto_msg_clear(&e.m);
			break;
		} else {
			ck_assert_msg(e.m.type == PROTO_RESULT || e.m.type == PROTO_OUTPUT,
				      "unexpected %s", proto_type_name(e.m.type));
		}
		proto_msg_clear(&e.m);
	}
}

START_TEST(test_samples_stamped_with_step)
{
	struct host h;
	struct seen s;
	struct stat st;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	send_plan(&h, "while [ ! -e go ]; do sleep 0.01; done", 100);
	run_one(&h, &s, 1, true);
	ck_assert(s.steal && s.load && s.nr_free);
	ck_assert(s.psi == (stat("/proc/pressure/cpu", &st) == 0));
	/* the step's samples: from its start, two timer ticks (the step
	 * waited for them) and the last one taken at its end */
	ck_assert_uint_ge(s.instants[1], 3);
	ck_assert_int_ge(s.first1_ns, s.started_ns);
	ck_assert_int_ge(s.last_ns[1], s.done_ns);
	host_bye(&h);
}
END_TEST

START_TEST(test_no_pressure_tolerated)
{
	static const char *const files[] = { "stat", "loadavg", "vmstat" };
	const char *extra[] = { "--proc-root", NULL, NULL };
	char root[128], text[65536];
	struct host h;
	struct seen s;

	/* a frozen copy of the host's files, without pressure/ or schedstat */
	snprintf(root, sizeof(root), "/tmp/test-agent-mon-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(text, sizeof(text), "%s/proc", root);
	ck_assert_int_eq(mkdir(text, 0755), 0);
	for (size_t i = 0; i < 3; i++) {
		char src[64], rel[64];
		FILE *f;
		size_t n;

		snprintf(src, sizeof(src), "/proc/%s", files[i]);
		f = fopen(src, "r");
		ck_assert_ptr_nonnull(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		snprintf(rel, sizeof(rel), "proc/%s", files[i]);
		host_write_file(root, rel, text);
	}
	extra[1] = root;
	host_spawn(&h, extra);
	host_handshake(&h, NULL);
	send_plan(&h, "true", 50);
	run_one(&h, &s, 2, false);
	ck_assert(!s.psi);
	ck_assert(s.load && s.nr_free);
	ck_assert(!s.steal); /* frozen counters: no interval to speak of */
	ck_assert_uint_ge(s.n[1], 1);
	host_bye(&h);
	for (size_t i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "%s/proc/%s", root, files[i]);
		unlink(text);
	}
	snprintf(text, sizeof(text), "%s/proc", root);
	rmdir(text);
	rmdir(root);
}
END_TEST

START_TEST(test_off_means_silent)
{
	struct host h;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	send_plan(&h, "true", 0);
	host_expect_ready(&h, 1);
	usleep(300 * 1000); /* room for samples that must not come */
	host_ping(&h, 5);
	host_expect_pong(&h, 5);
	host_go(&h, 1, 0);
	host_expect(&h, PROTO_STARTED, NULL);
	host_expect(&h, PROTO_RESULT, NULL);
	host_expect(&h, PROTO_DONE, NULL);
	host_bye(&h);
}
END_TEST

/* Figures only: CPU over 5 s of waiting at a barrier with monitors on.
 * Samples are read by a ping at the end (the socket buffer holds them). */
START_TEST(test_cost_figures)
{
	static const uint32_t intervals[] = { 1000, 100 };
	struct host h;
	unsigned long long before, after;
	long ticks_per_s = sysconf(_SC_CLK_TCK);

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	send_plan(&h, "true", intervals[_i]);
	host_expect_ready(&h, 1);
	before = host_cpu_ticks(h.pid);
	for (int i = 0; i < 5; i++) {
		/* drain so the agent never meets a full socket */
		host_ping(&h, (uint64_t)i);
		for (;;) {
			struct hev e = host_next(&h);
			bool pong = e.ev == PROTO_EV_MSG && e.m.type == PROTO_PONG;

			proto_msg_clear(&e.m);
			if (pong)
				break;
		}
		sleep(1);
	}
	after = host_cpu_ticks(h.pid);
	fprintf(stderr,
		"agent sampling every %u ms at a barrier: %.2f%% of a CPU (%llu ticks in "
		"5 s), VmRSS %ld KiB\n",
		intervals[_i], 100.0 * (double)(after - before) / (double)ticks_per_s / 5,
		after - before, host_vm_rss_kib(h.pid));
	ck_assert_int_gt(host_vm_rss_kib(h.pid), 0);
	kill(h.pid, SIGTERM);
	host_wait(&h);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("agent-monitor");
	TCase *tc = tcase_create("agent-monitor");
	SRunner *sr;
	int failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s GUESTAGENT\n", argv[0]);
		return 2;
	}
	snprintf(agent_host_bin, sizeof(agent_host_bin), "%s", argv[1]);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_samples_stamped_with_step);
	tcase_add_test(tc, test_no_pressure_tolerated);
	tcase_add_test(tc, test_off_means_silent);
	tcase_add_loop_test(tc, test_cost_figures, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
