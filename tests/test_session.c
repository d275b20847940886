// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's session (guestagent/session.c) on its own: every phase (no
 * plan, waiting, running, finished), every action it returns (none, run,
 * exit) and every line it queues, read back the way the host reads them:
 * the outq flushed into a socketpair and decoded.  The agent's clock is
 * testlib's fake one, so go instants and pong stamps are known exactly.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aclock.h"
#include "outq.h"
#include "ptp.h"
#include "session.h"
#include "testlib.h"

/* session.c and ptp.c read the agent's clock: here it is the fake one. */
int64_t aclock_now(void)
{
	return testlib_clock_now();
}

#define GOT_MAX 64

static struct outq q;
static struct session s;
static struct proto_decoder dec;
static int sv[2];
static struct {
	struct proto_msg m[GOT_MAX];
	size_t n;
	unsigned resets;
} got;

static void got_clear(void)
{
	for (size_t i = 0; i < got.n; i++)
		proto_msg_clear(&got.m[i]);
	got.n = 0;
	got.resets = 0;
}

static void on_line(void *ctx, enum proto_event ev, struct proto_msg *msg, int err, const char *detail)
{
	(void)ctx;
	switch (ev) {
	case PROTO_EV_RESET: got.resets++; return;
	case PROTO_EV_ERROR:
		ck_abort_msg("the agent wrote a line the host refuses: %s: %s", strerror(-err),
			     detail ? detail : "");
		return;
	case PROTO_EV_MSG:
		ck_assert_msg(got.n < GOT_MAX, "more than %d lines from the agent", GOT_MAX);
		/* taken whole: the decoder then clears a zeroed message */
		got.m[got.n++] = *msg;
		memset(msg, 0, sizeof(*msg));
		return;
	}
}

/* Everything the queue lets out now, as the host would read it. */
static void drain(void)
{
	char buf[64 * 1024];
	ssize_t r;

	while (outq_writable(&q)) {
		ck_assert_int_eq(outq_flush(&q, sv[0]), 0);
		while ((r = read(sv[1], buf, sizeof(buf))) > 0)
			proto_decoder_feed(&dec, buf, (size_t)r, on_line, NULL);
		ck_assert_msg(r < 0 && errno == EAGAIN, "read from the agent: %zd (%s)", r,
			      strerror(errno));
	}
}

/* drain, then: exactly these types in this order. */
static void expect(const enum proto_type *types, size_t n)
{
	drain();
	for (size_t i = 0; i < n && i < got.n; i++)
		ck_assert_msg(got.m[i].type == types[i], "line %zu is %s, expected %s", i + 1,
			      proto_type_name(got.m[i].type), proto_type_name(types[i]));
	ck_assert_msg(got.n == n, "%zu lines from the agent (first %s), expected %zu", got.n,
		      got.n ? proto_type_name(got.m[0].type) : "-", n);
}
#define EXPECT(...)                                              \
	do {                                                     \
		const enum proto_type want_[] = { __VA_ARGS__ }; \
		expect(want_, sizeof(want_) / sizeof(want_[0])); \
	} while (0)
#define EXPECT_NOTHING() expect(NULL, 0)

/* drain, then: one error line for step, with code, whose text holds part. */
static void expect_error(uint32_t step, const char *code, const char *part)
{
	EXPECT(PROTO_ERROR);
	ck_assert_uint_eq(got.m[0].u.error.step, step);
	ck_assert_str_eq(got.m[0].u.error.code, code);
	ck_assert_msg(strstr(got.m[0].u.error.text, part) != NULL, "error text '%s' lacks '%s'",
		      got.m[0].u.error.text, part);
}

static struct sess_action input(struct proto_msg *m, int64_t rx_ns)
{
	struct sess_action a;

	m->version = PROTO_VERSION;
	a = sess_input(&s, m, rx_ns);
	proto_msg_clear(m);
	return a;
}

static struct sess_action host_says(enum proto_type type)
{
	struct proto_msg m = { .type = type };

	return input(&m, testlib_clock_now());
}

static void host_acks(uint64_t nonce)
{
	struct proto_msg m = { .type = PROTO_SYNC_ACK };

	m.u.sync.nonce = nonce;
	ck_assert_int_eq(input(&m, 0).kind, SESS_ACT_NONE);
}

static struct proto_msg plan_of(const char *node, uint32_t n, uint32_t first)
{
	struct proto_msg m = { .type = PROTO_PLAN };

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "%s", node);
	m.u.plan.nsteps = n;
	m.u.plan.steps = calloc(n ? n : 1, sizeof(*m.u.plan.steps));
	for (uint32_t i = 0; i < n; i++) {
		struct proto_step *st = &m.u.plan.steps[i];

		st->index = first + i;
		st->iteration = 1;
		snprintf(st->benchmark, sizeof(st->benchmark), "b%u", first + i);
		st->kind = PROTO_STEP_COMMAND;
		ck_assert_int_eq(proto_step_set_command(st, "true"), 0);
	}
	return m;
}

static void send_plan(uint32_t n)
{
	struct proto_msg m = plan_of("n1", n, 1);

	ck_assert_int_eq(input(&m, 0).kind, SESS_ACT_NONE);
}

static struct sess_action go(uint32_t step, int64_t at_ns)
{
	struct proto_msg m = { .type = PROTO_GO };

	m.u.go.step = step;
	m.u.go.at_ns = at_ns;
	return input(&m, testlib_clock_now());
}

static void setup(void)
{
	struct sess_identity id = { 0 };

	snprintf(id.node, sizeof(id.node), "n1");
	snprintf(id.boot_id, sizeof(id.boot_id), "boot-1");
	snprintf(id.clocksource, sizeof(id.clocksource), "kvm-clock");
	snprintf(id.hostkey, sizeof(id.hostkey), "SHA256:key");
	testlib_clock_set(1000 * TESTLIB_SEC);
	outq_init(&q);
	sess_init(&s, &q, &id, 42);
	proto_decoder_init(&dec);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	memset(&got, 0, sizeof(got));
}

static void teardown(void)
{
	got_clear();
	sess_free(&s);
	outq_free(&q);
	proto_decoder_free(&dec);
	close(sv[0]);
	close(sv[1]);
}

/* Connected and synced, with the hello read: the state every case below
 * starts from unless it is about the handshake. */
static void synced(void)
{
	sess_connected(&s);
	host_acks(s.link.nonce);
	drain();
	got_clear();
}

/* Synced, a plan of n steps taken, ready(1) read. */
static void waiting(uint32_t n)
{
	synced();
	send_plan(n);
	EXPECT(PROTO_READY);
	got_clear();
}

START_TEST(test_connect_sends_reset_and_sync)
{
	struct proto_msg plan = plan_of("n1", 2, 1);

	sess_connected(&s);
	EXPECT(PROTO_SYNC);
	ck_assert_uint_eq(got.resets, 1);
	ck_assert_uint_ne(got.m[0].u.sync.nonce, 0);
	ck_assert_uint_eq(got.m[0].u.sync.nonce, s.link.nonce);
	ck_assert(!q.gate_open);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	got_clear();
	/* before the ack, the host's messages are dropped: no plan is taken */
	ck_assert_int_eq(input(&plan, 0).kind, SESS_ACT_NONE);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	ck_assert_int_eq(host_says(PROTO_BYE).kind, SESS_ACT_NONE);
	EXPECT_NOTHING();
}
END_TEST

START_TEST(test_ack_announces_hello)
{
	sess_connected(&s);
	drain();
	got_clear();
	/* an ack of another nonce changes nothing */
	host_acks(s.link.nonce + 1);
	ck_assert(!q.gate_open);
	EXPECT_NOTHING();
	host_acks(s.link.nonce);
	ck_assert(q.gate_open);
	EXPECT(PROTO_HELLO);
	ck_assert_str_eq(got.m[0].u.hello.node, "n1");
	ck_assert_str_eq(got.m[0].u.hello.boot_id, "boot-1");
	ck_assert_str_eq(got.m[0].u.hello.clocksource, "kvm-clock");
	ck_assert_str_eq(got.m[0].u.hello.hostkey, "SHA256:key");
	ck_assert_str_eq(got.m[0].u.hello.agent_version, LOCKSTEP_VERSION);
	ck_assert_uint_eq(got.m[0].u.hello.proto_min, PROTO_VERSION);
	ck_assert_uint_eq(got.m[0].u.hello.step, 0);
	got_clear();
	/* a second ack of the same nonce: already synced, no second hello */
	host_acks(s.link.nonce);
	EXPECT_NOTHING();
}
END_TEST

/* The host restarted its side: its sync is acked at once (prio lane, even
 * before ours is acked), and when ours is synced the agent says again
 * where it is, since the host dropped what came before its sync. */
START_TEST(test_host_sync_acked_and_reannounced)
{
	struct proto_msg m = { .type = PROTO_SYNC };

	sess_connected(&s);
	drain();
	got_clear();
	m.u.sync.nonce = 77;
	input(&m, 0);
	EXPECT(PROTO_SYNC_ACK);
	ck_assert_uint_eq(got.m[0].u.sync.nonce, 77);
	got_clear();
	host_acks(s.link.nonce);
	send_plan(2);
	drain();
	got_clear();
	m.type = PROTO_SYNC;
	m.u.sync.nonce = 78;
	input(&m, 0);
	EXPECT(PROTO_SYNC_ACK, PROTO_HELLO, PROTO_READY);
	ck_assert_uint_eq(got.m[0].u.sync.nonce, 78);
	ck_assert_uint_eq(got.m[1].u.hello.step, 1);
	ck_assert_uint_eq(got.m[2].u.ready.step, 1);
}
END_TEST

START_TEST(test_plan_enters_waiting)
{
	synced();
	send_plan(3);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_uint_eq(s.nsteps, 3);
	ck_assert_uint_eq(sess_current_step(&s), 1);
	EXPECT(PROTO_READY);
	ck_assert_uint_eq(got.m[0].u.ready.step, 1);
	got_clear();
	/* the same plan again (the host re-sends it after each hello) */
	send_plan(3);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	EXPECT_NOTHING();
}
END_TEST

START_TEST(test_empty_plan_finishes)
{
	synced();
	send_plan(0);
	ck_assert_int_eq(s.phase, SESS_FINISHED);
	ck_assert_uint_eq(sess_current_step(&s), 0);
	EXPECT_NOTHING();
}
END_TEST

START_TEST(test_plan_for_other_node)
{
	struct proto_msg m = plan_of("n2", 2, 1);

	synced();
	input(&m, 0);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	expect_error(0, "wrong-node", "plan is for node 'n2', this is node 'n1'");
}
END_TEST

/* Plans the decoder lets through but the session refuses, each named:
 * 0 indexes not rising, 1 an unknown kind, 2 a command step without one. */
START_TEST(test_bad_plan)
{
	struct proto_msg m = plan_of("n1", 3, 1);
	const char *want[] = { "step index 2 is not above the previous one (2)",
			       "step 3: unknown kind 9", "step 2: empty command" };

	synced();
	if (_i == 0)
		m.u.plan.steps[2].index = 2;
	else if (_i == 1)
		m.u.plan.steps[2].kind = 9;
	else
		proto_step_set_command(&m.u.plan.steps[1], NULL);
	input(&m, 0);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	expect_error(0, "bad-plan", want[_i]);
}
END_TEST

START_TEST(test_new_plan_before_any_step)
{
	struct proto_msg m = plan_of("n1", 2, 5);

	waiting(3);
	input(&m, 0);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_uint_eq(s.nsteps, 2);
	EXPECT(PROTO_READY);
	ck_assert_uint_eq(got.m[0].u.ready.step, 5);
}
END_TEST

START_TEST(test_new_plan_after_a_step_refused)
{
	struct proto_msg m = plan_of("n1", 2, 1);

	waiting(3);
	ck_assert_int_eq(go(1, 0).kind, SESS_ACT_RUN);
	input(&m, 0);
	ck_assert_uint_eq(s.nsteps, 3);
	ck_assert_int_eq(s.phase, SESS_RUNNING);
	expect_error(0, "plan-conflict",
		     "a different plan (2 steps) arrived after steps ran "
		     "(now at step 1); keeping the current plan (3 steps)");
}
END_TEST

/* A plan too long for one line travels in parts from step 1. */
START_TEST(test_plan_in_parts)
{
	struct proto_msg a = plan_of("n1", 2, 1), b = plan_of("n1", 2, 3), c = plan_of("n1", 1, 5);

	synced();
	a.u.plan.total = b.u.plan.total = c.u.plan.total = 5;
	input(&a, 0);
	input(&b, 0);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	EXPECT_NOTHING();
	input(&c, 0);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_uint_eq(s.nsteps, 5);
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(s.steps[i].index, i + 1);
		ck_assert_str_eq(s.steps[i].command, "true");
	}
	EXPECT(PROTO_READY);
}
END_TEST

/* A part that does not follow is reported and dropped with those before
 * it; the next plan from step 1 is taken whole. */
START_TEST(test_plan_part_out_of_order)
{
	struct proto_msg a = plan_of("n1", 2, 1), c = plan_of("n1", 1, 5);
	struct proto_msg a2 = plan_of("n1", 4, 1), b2 = plan_of("n1", 1, 5);

	synced();
	a.u.plan.total = c.u.plan.total = 5;
	input(&a, 0);
	input(&c, 0);
	ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	expect_error(0, "bad-plan",
		     "plan part from step 5 of 5 does not follow the 2 steps "
		     "received");
	got_clear();
	a2.u.plan.total = b2.u.plan.total = 5;
	input(&a2, 0);
	input(&b2, 0);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_uint_eq(s.nsteps, 5);
	EXPECT(PROTO_READY);
}
END_TEST

START_TEST(test_go_runs_the_step)
{
	struct sess_action a;

	waiting(2);
	a = go(1, 0);
	ck_assert_int_eq(a.kind, SESS_ACT_RUN);
	ck_assert_ptr_eq(a.step, &s.steps[0]);
	ck_assert_uint_eq(a.step->index, 1);
	ck_assert_int_eq(a.at_ns, 0);
	ck_assert_int_eq(s.phase, SESS_RUNNING);
	EXPECT_NOTHING();
}
END_TEST

/* A scheduled go: up to SESS_GO_AHEAD_MAX ahead of the agent's clock it
 * runs at its instant, past that it is refused and the agent keeps
 * waiting. */
START_TEST(test_go_scheduled_and_too_far)
{
	int64_t now = testlib_clock_now();
	struct sess_action a;

	waiting(2);
	a = go(1, now + SESS_GO_AHEAD_MAX + 1);
	ck_assert_int_eq(a.kind, SESS_ACT_NONE);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	expect_error(1, "bad-go", "more than 60 s ahead");
	got_clear();
	a = go(1, now + SESS_GO_AHEAD_MAX);
	ck_assert_int_eq(a.kind, SESS_ACT_RUN);
	ck_assert_int_eq(a.at_ns, now + SESS_GO_AHEAD_MAX);
	EXPECT_NOTHING();
}
END_TEST

/* Gos that do nothing: 0 before a plan (in silence), 1 for a step not
 * next (said: a go-ignored error naming what the node was doing), 2 a
 * negative instant is "now", not a refusal (at_ns 0 in the action). */
START_TEST(test_go_ignored)
{
	struct sess_action a;

	if (_i == 0) {
		synced();
		ck_assert_int_eq(go(1, 0).kind, SESS_ACT_NONE);
		ck_assert_int_eq(s.phase, SESS_NO_PLAN);
	} else if (_i == 1) {
		waiting(3);
		ck_assert_int_eq(go(2, 0).kind, SESS_ACT_NONE);
		expect_error(2, "go-ignored",
			     "go for step 2 ignored: this node is waiting for the go of step 1");
		got_clear();
		ck_assert_int_eq(go(0, 0).kind, SESS_ACT_NONE);
		expect_error(0, "go-ignored", "go for step 0 ignored");
		got_clear();
		ck_assert_int_eq(s.phase, SESS_WAITING);
		/* the go asked for still runs the step */
		ck_assert_int_eq(go(1, 0).kind, SESS_ACT_RUN);
		return;
	} else {
		waiting(3);
		a = go(1, -5);
		ck_assert_int_eq(a.kind, SESS_ACT_RUN);
		ck_assert_int_eq(a.at_ns, 0);
	}
	EXPECT_NOTHING();
}
END_TEST

/* hostd sends a go again when it heard no started in time: the agent
 * answers go-again for the step running and for one already done. */
START_TEST(test_go_again)
{
	waiting(3);
	ck_assert_int_eq(go(1, 0).kind, SESS_ACT_RUN);
	ck_assert_int_eq(go(1, 0).kind, SESS_ACT_NONE);
	expect_error(1, "go-again", "go for step 1 received again; the first one got here");
	got_clear();
	sess_step_started(&s, 1, 0, NULL);
	sess_step_done(&s, 2, 0);
	drain();
	got_clear();
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_int_eq(go(1, 0).kind, SESS_ACT_NONE);
	expect_error(1, "go-again", "go for step 1 received again; the first one got here");
	/* the go of the step waited for still runs it */
	ck_assert_int_eq(go(2, 0).kind, SESS_ACT_RUN);
}
END_TEST

START_TEST(test_step_lines_then_next_ready)
{
	waiting(2);
	go(1, 0);
	sess_step_started(&s, 5000, 12, NULL);
	sess_step_output(&s, "out\n", 4);
	sess_step_result(&s, "ops", 2.5, "ops/s", true);
	sess_step_error(&s, "warn", "something");
	sess_step_done(&s, 9000, 3);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	ck_assert_uint_eq(sess_current_step(&s), 2);
	EXPECT(PROTO_STARTED, PROTO_OUTPUT, PROTO_RESULT, PROTO_ERROR, PROTO_DONE, PROTO_READY);
	ck_assert_uint_eq(got.m[0].u.started.step, 1);
	ck_assert_int_eq(got.m[0].u.started.mono_ns, 5000);
	ck_assert_int_eq(got.m[0].u.started.late_ns, 12);
	ck_assert_uint_eq(got.m[1].u.output.len, 4);
	ck_assert_int_eq(memcmp(got.m[1].u.output.data, "out\n", 4), 0);
	ck_assert_str_eq(got.m[2].u.result.metric, "ops");
	ck_assert_double_eq(got.m[2].u.result.value, 2.5);
	ck_assert_str_eq(got.m[2].u.result.unit, "ops/s");
	ck_assert(got.m[2].u.result.higher_is_better);
	ck_assert_uint_eq(got.m[3].u.error.step, 1);
	ck_assert_str_eq(got.m[3].u.error.code, "warn");
	ck_assert_uint_eq(got.m[4].u.done.step, 1);
	ck_assert_int_eq(got.m[4].u.done.mono_ns, 9000);
	ck_assert_int_eq(got.m[4].u.done.exit_status, 3);
	ck_assert_uint_eq(got.m[5].u.ready.step, 2);
}
END_TEST

START_TEST(test_last_done_finishes)
{
	waiting(1);
	go(1, 0);
	sess_step_started(&s, 1, 0, NULL);
	sess_step_done(&s, 2, 0);
	ck_assert_int_eq(s.phase, SESS_FINISHED);
	/* past the end, hello reports the last step */
	ck_assert_uint_eq(sess_current_step(&s), 1);
	EXPECT(PROTO_STARTED, PROTO_DONE);
	got_clear();
	ck_assert_int_eq(go(2, 0).kind, SESS_ACT_NONE);
	expect_error(2, "go-ignored", "go for step 2 ignored: this node is finished after step 1");
}
END_TEST

/* bye from the host ends the agent in every phase. */
START_TEST(test_bye_exits_in_every_phase)
{
	enum sess_phase want[] = { SESS_NO_PLAN, SESS_WAITING, SESS_RUNNING, SESS_FINISHED };
	struct proto_msg m = { .type = PROTO_BYE };

	if (_i == 0)
		synced();
	else
		waiting(1);
	if (_i >= 2)
		go(1, 0);
	if (_i == 3)
		sess_step_done(&s, 1, 0);
	ck_assert_int_eq(s.phase, want[_i]);
	snprintf(m.u.bye.reason, sizeof(m.u.bye.reason), "run over");
	ck_assert_int_eq(input(&m, 0).kind, SESS_ACT_EXIT);
}
END_TEST

START_TEST(test_ping_pong)
{
	struct proto_msg m = { .type = PROTO_PING };

	synced();
	m.u.ping.seq = 7;
	m.u.ping.t1 = 123;
	testlib_clock_set(2000);
	input(&m, 1500);
	EXPECT(PROTO_PONG);
	ck_assert_uint_eq(got.m[0].u.ping.seq, 7);
	ck_assert_int_eq(got.m[0].u.ping.t1, 123);
	ck_assert_int_eq(got.m[0].u.ping.t2, 1500);
	ck_assert_int_eq(got.m[0].u.ping.t3, 2000);
	ck_assert_int_eq(got.m[0].u.ping.ptp_window_ns, 0);
}
END_TEST

/* A PTP clock double: the host's realtime 5 s ahead of this system's,
 * read exactly; or a clock that fails. */
static int64_t fake_sys_ns;
static bool ptp_fails;

static int fake_pairs(struct ptp_clock *c, struct ptp_pair *out, unsigned max)
{
	(void)c;
	ck_assert_uint_ge(max, 1);
	if (ptp_fails)
		return -EIO;
	out[0] = (struct ptp_pair){ .sys_ns = fake_sys_ns, .phc_ns = fake_sys_ns + 5 * TESTLIB_SEC };
	return 1;
}

static int64_t fake_sys_now(struct ptp_clock *c)
{
	(void)c;
	return fake_sys_ns += 10;
}

START_TEST(test_pong_with_ptp)
{
	static const struct ptp_ops ops = { .pairs = fake_pairs, .sys_now = fake_sys_now };
	struct ptp_clock clk = { .ops = &ops, .fd = -1, .path = "fake-ptp" };
	struct proto_msg m = { .type = PROTO_PING };

	synced();
	s.ptp = &clk;
	fake_sys_ns = 100 * TESTLIB_SEC;
	ptp_fails = _i;
	testlib_clock_set(3000);
	m.u.ping.seq = 1;
	input(&m, 2500);
	EXPECT(PROTO_PONG);
	ck_assert_int_eq(got.m[0].u.ping.t3, 3000);
	if (_i) {
		ck_assert_int_eq(got.m[0].u.ping.ptp_mono_ns, 0);
		ck_assert_int_eq(got.m[0].u.ping.ptp_window_ns, 0);
		ck_assert_uint_eq(clk.failures, 1);
	} else {
		ck_assert_int_eq(got.m[0].u.ping.ptp_mono_ns, 3000);
		ck_assert_int_eq(got.m[0].u.ping.ptp_real_ns, 100 * TESTLIB_SEC + 15);
		ck_assert_int_eq(got.m[0].u.ping.ptp_host_real_ns, 105 * TESTLIB_SEC + 15);
		ck_assert_int_eq(got.m[0].u.ping.ptp_window_ns, 11);
	}
}
END_TEST

static void host_monitor(uint32_t index, uint32_t count, const char *name, const char *command)
{
	struct proto_msg m = { .type = PROTO_MONITOR };

	m.u.monitor.index = index;
	m.u.monitor.count = count;
	snprintf(m.u.monitor.name, sizeof(m.u.monitor.name), "%s", name);
	snprintf(m.u.monitor.command, sizeof(m.u.monitor.command), "%s", command);
	ck_assert_int_eq(input(&m, 0).kind, SESS_ACT_NONE);
}

START_TEST(test_monitor_set)
{
	uint32_t gen;

	synced();
	host_monitor(2, 2, "vmstat", "vmstat 1");
	ck_assert_uint_eq(s.mon_count, 2);
	ck_assert_str_eq(s.mon_name[1], "vmstat");
	ck_assert_str_eq(s.mon_command[1], "vmstat 1");
	gen = s.mon_gen;
	ck_assert_uint_ne(gen, 0);
	/* the set re-sent unchanged after a hello changes nothing */
	host_monitor(2, 2, "vmstat", "vmstat 1");
	ck_assert_uint_eq(s.mon_gen, gen);
	host_monitor(2, 2, "vmstat", "vmstat 2");
	ck_assert_uint_eq(s.mon_gen, gen + 1);
	ck_assert_str_eq(s.mon_command[1], "vmstat 2");
	/* a smaller set */
	host_monitor(1, 1, "top", "top -b");
	ck_assert_uint_eq(s.mon_gen, gen + 2);
	ck_assert_uint_eq(s.mon_count, 1);
	ck_assert_str_eq(s.mon_name[0], "top");
	EXPECT_NOTHING();
}
END_TEST

/* Messages the agent takes without acting: the host's error, and types
 * only an agent sends. */
START_TEST(test_host_error_and_stray_types)
{
	struct proto_msg m = { .type = PROTO_ERROR };

	waiting(1);
	snprintf(m.u.error.code, sizeof(m.u.error.code), "x");
	ck_assert_int_eq(input(&m, 0).kind, SESS_ACT_NONE);
	ck_assert_int_eq(host_says(PROTO_READY).kind, SESS_ACT_NONE);
	ck_assert_int_eq(host_says(PROTO_DONE).kind, SESS_ACT_NONE);
	ck_assert_int_eq(s.phase, SESS_WAITING);
	EXPECT_NOTHING();
}
END_TEST

START_TEST(test_samples_monitor_lines_and_bye)
{
	synced();
	sess_sample(&s, 0, 77, "cpu.user", 12.5, "%");
	sess_monitor_output(&s, 3, "vmstat", "a b\n", 4);
	sess_monitor_error(&s, 3, "vmstat died");
	sess_bye(&s, "SIGTERM");
	EXPECT(PROTO_SAMPLE, PROTO_MONITOR_OUTPUT, PROTO_ERROR, PROTO_BYE);
	ck_assert_uint_eq(got.m[0].u.sample.step, 0);
	ck_assert_int_eq(got.m[0].u.sample.mono_ns, 77);
	ck_assert_str_eq(got.m[0].u.sample.metric, "cpu.user");
	ck_assert_double_eq(got.m[0].u.sample.value, 12.5);
	ck_assert_uint_eq(got.m[1].u.monitor_output.step, 3);
	ck_assert_str_eq(got.m[1].u.monitor_output.monitor, "vmstat");
	ck_assert_uint_eq(got.m[1].u.monitor_output.len, 4);
	ck_assert_str_eq(got.m[2].u.error.code, "monitor");
	ck_assert_uint_eq(got.m[2].u.error.step, 3);
	ck_assert_str_eq(got.m[3].u.bye.reason, "SIGTERM");
}
END_TEST

/* A line the decoder refused while synced: the agent says so and resyncs
 * (0xFF, a new nonce); until the ack only link lines leave.  While already
 * resyncing, garbage is expected and says nothing. */
START_TEST(test_bad_input_resyncs)
{
	uint64_t old;

	waiting(2);
	old = s.link.nonce;
	sess_bad_input(&s, -EBADMSG, "not JSON");
	ck_assert(!q.gate_open);
	EXPECT(PROTO_SYNC);
	ck_assert_uint_eq(got.resets, 1);
	ck_assert_uint_ne(got.m[0].u.sync.nonce, old);
	got_clear();
	sess_bad_input(&s, -EBADMSG, "more");
	EXPECT_NOTHING();
	/* the late ack of the old sync does not end this one */
	host_acks(old);
	ck_assert(!q.gate_open);
	host_acks(s.link.nonce);
	/* hello first (pushed in front of what waited), then the error, then
	 * where we are */
	EXPECT(PROTO_HELLO, PROTO_ERROR, PROTO_READY);
	ck_assert_str_eq(got.m[1].u.error.code, "bad-input");
	ck_assert_ptr_nonnull(strstr(got.m[1].u.error.text, "not JSON"));
	ck_assert_uint_eq(got.m[2].u.ready.step, 1);
}
END_TEST

/* The host's 0xFF while our sync waits for its ack: the same sync again,
 * once; when synced, nothing. */
START_TEST(test_peer_reset)
{
	uint64_t nonce;

	sess_connected(&s);
	drain();
	got_clear();
	nonce = s.link.nonce;
	sess_peer_reset(&s);
	EXPECT(PROTO_SYNC);
	ck_assert_uint_eq(got.resets, 1);
	ck_assert_uint_eq(got.m[0].u.sync.nonce, nonce);
	got_clear();
	sess_peer_reset(&s);
	EXPECT_NOTHING();
	host_acks(nonce);
	drain();
	got_clear();
	sess_peer_reset(&s);
	EXPECT_NOTHING();
}
END_TEST

/* A reconnect in each phase: the new link announces hello with the step
 * and, while waiting, ready again (the host may have lost it); lines the
 * old connection queued and the new one has not written wait for the ack. */
START_TEST(test_reconnect_reannounces)
{
	waiting(3);
	if (_i) {
		go(1, 0);
		sess_step_started(&s, 1, 0, NULL);
		sess_step_done(&s, 2, 0);
		go(2, 0);
	}
	sess_connected(&s);
	sess_sample(&s, 0, 5, "cpu.user", 1, "%");
	EXPECT(PROTO_SYNC);
	got_clear();
	host_acks(s.link.nonce);
	if (_i) {
		EXPECT(PROTO_HELLO, PROTO_STARTED, PROTO_DONE, PROTO_READY, PROTO_SAMPLE);
		ck_assert_uint_eq(got.m[0].u.hello.step, 2);
		ck_assert_uint_eq(got.m[3].u.ready.step, 2);
	} else {
		EXPECT(PROTO_HELLO, PROTO_SAMPLE, PROTO_READY);
		ck_assert_uint_eq(got.m[0].u.hello.step, 1);
		ck_assert_uint_eq(got.m[2].u.ready.step, 1);
	}
}
END_TEST

int main(void)
{
	Suite *st = suite_create("session");
	TCase *tc = tcase_create("session");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_connect_sends_reset_and_sync);
	tcase_add_test(tc, test_ack_announces_hello);
	tcase_add_test(tc, test_host_sync_acked_and_reannounced);
	tcase_add_test(tc, test_plan_enters_waiting);
	tcase_add_test(tc, test_empty_plan_finishes);
	tcase_add_test(tc, test_plan_for_other_node);
	tcase_add_loop_test(tc, test_bad_plan, 0, 3);
	tcase_add_test(tc, test_new_plan_before_any_step);
	tcase_add_test(tc, test_new_plan_after_a_step_refused);
	tcase_add_test(tc, test_plan_in_parts);
	tcase_add_test(tc, test_plan_part_out_of_order);
	tcase_add_test(tc, test_go_runs_the_step);
	tcase_add_test(tc, test_go_scheduled_and_too_far);
	tcase_add_loop_test(tc, test_go_ignored, 0, 3);
	tcase_add_test(tc, test_go_again);
	tcase_add_test(tc, test_step_lines_then_next_ready);
	tcase_add_test(tc, test_last_done_finishes);
	tcase_add_loop_test(tc, test_bye_exits_in_every_phase, 0, 4);
	tcase_add_test(tc, test_ping_pong);
	tcase_add_loop_test(tc, test_pong_with_ptp, 0, 2);
	tcase_add_test(tc, test_monitor_set);
	tcase_add_test(tc, test_host_error_and_stray_types);
	tcase_add_test(tc, test_samples_monitor_lines_and_bye);
	tcase_add_test(tc, test_bad_input_resyncs);
	tcase_add_test(tc, test_peer_reset);
	tcase_add_loop_test(tc, test_reconnect_reannounces, 0, 2);
	suite_add_tcase(st, tc);
	return testlib_main(st);
}
