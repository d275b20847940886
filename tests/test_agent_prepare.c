// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's session and step handling around the go (issue 19): the go
 * delivered at each point of the prepare sequence (before the fork, between
 * the fork and the child's set-up, after it), immediate and scheduled, and
 * again after it was acted on.  The agent is this process (agent.c is
 * compiled in, as chrony's tests do); the child is held at each point by
 * step_test_hooks, so that no ordering depends on timing.  The host is the
 * other end of a socketpair.
 */
#include <check.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "agent.c"

static struct agent ta;
static int host_fd = -1;

static void ta_setup(void)
{
	struct sess_identity id = { 0 };
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };
	int sv[2];

	memset(&ta, 0, sizeof(ta));
	ta.sigfd = agent_signalfd();
	ck_assert_int_ge(ta.sigfd, 0);
	ta.workdir_fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(ta.workdir_fd, 0);
	snprintf(id.node, sizeof(id.node), "n1");
	outq_init(&ta.q);
	sess_init(&ta.sess, &ta.q, &id, 1);
	proto_decoder_init(&ta.dec);
	step_run_init(&ta.run);
	sampler_init(&ta.mon, NULL);
	mext_init(&ta.mext, &ta.sess);
	stepgroup_init(&ta.grp, "", 0, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ta.chan.mode = ACHAN_FD;
	ta.chan.fd = sv[0];
	ck_assert_int_eq(achan_open(&ta.chan), 0);
	host_fd = sv[1];
	ta.up = true;
	/* the link as after a handshake */
	ta.sess.link.synced = true;
	ta.q.gate_open = true;

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "n1");
	m.u.plan.nsteps = 2;
	m.u.plan.steps = calloc(2, sizeof(*m.u.plan.steps));
	for (uint32_t i = 0; i < 2; i++) {
		m.u.plan.steps[i].index = i + 1;
		m.u.plan.steps[i].iteration = 1;
		m.u.plan.steps[i].kind = PROTO_STEP_CPU_PROBE;
		m.u.plan.steps[i].units = 1000;
		snprintf(m.u.plan.steps[i].benchmark, sizeof(m.u.plan.steps[i].benchmark), "b");
	}
	agent_on_event(&ta, PROTO_EV_MSG, &m, 0, NULL);
	proto_msg_clear(&m);
	ck_assert_int_eq(ta.sess.phase, SESS_WAITING);
	ck_assert(!ta.prepared && !ta.running);
}

static void ta_teardown(void)
{
	step_test_hooks(-1, -1);
	agent_leave(&ta, 0, NULL);
	stepgroup_fini(&ta.grp);
	sampler_fini(&ta.mon);
	achan_close(&ta.chan);
	proto_decoder_free(&ta.dec);
	sess_free(&ta.sess);
	outq_free(&ta.q);
	close(ta.workdir_fd);
	close(ta.sigfd);
	close(host_fd);
}

static void go(uint32_t step, int64_t at_ns)
{
	struct proto_msg m = { .type = PROTO_GO, .version = PROTO_VERSION };

	m.u.go.step = step;
	m.u.go.at_ns = at_ns;
	agent_on_event(&ta, PROTO_EV_MSG, &m, 0, NULL);
}

/* Runs the agent's loop until step is done (its done is queued). */
static void run_until_done(uint32_t step)
{
	while (ta.sess.cur < step && !ta.leaving)
		agent_loop_once(&ta);
	ck_assert(!ta.leaving);
	agent_flush(&ta);
}

static struct proto_msg seen[32];
static size_t nseen, nagain;

static void on_host_event(void *ctx, enum proto_event ev, struct proto_msg *m, int err,
			  const char *detail)
{
	(void)ctx;
	(void)err;
	(void)detail;
	ck_assert_int_eq(ev, PROTO_EV_MSG);
	if (m->type == PROTO_ERROR) {
		/* a go again for a step that started: said, not acted on */
		ck_assert_str_eq(m->u.error.code, "go-again");
		ck_assert_uint_eq(m->u.error.step, 1);
		nagain++;
		return;
	}
	ck_assert_uint_lt(nseen, 32);
	seen[nseen++] = *m;
	memset(m, 0, sizeof(*m));
}

/* What the agent sent, in order: ready(1), started(1), two results,
 * done(1) with status 0, ready(2); exactly one started; and go_again
 * reports of a go it got again. */
static void check_sent(size_t go_again)
{
	struct proto_decoder dec;
	char buf[65536];
	ssize_t n;
	size_t started = 0;

	agent_flush(&ta);
	proto_decoder_init(&dec);
	fcntl(host_fd, F_SETFL, O_NONBLOCK);
	while ((n = read(host_fd, buf, sizeof(buf))) > 0)
		proto_decoder_feed(&dec, buf, (size_t)n, on_host_event, NULL);
	proto_decoder_free(&dec);
	ck_assert_uint_eq(nseen, 6);
	ck_assert_int_eq(seen[0].type, PROTO_READY);
	ck_assert_uint_eq(seen[0].u.ready.step, 1);
	ck_assert_int_eq(seen[1].type, PROTO_STARTED);
	ck_assert_uint_eq(seen[1].u.started.step, 1);
	ck_assert_int_eq(seen[2].type, PROTO_RESULT);
	ck_assert_int_eq(seen[3].type, PROTO_RESULT);
	ck_assert_int_eq(seen[4].type, PROTO_DONE);
	ck_assert_uint_eq(seen[4].u.done.step, 1);
	ck_assert_int_eq(seen[4].u.done.exit_status, 0);
	ck_assert_int_eq(seen[5].type, PROTO_READY);
	ck_assert_uint_eq(seen[5].u.ready.step, 2);
	for (size_t i = 0; i < nseen; i++) {
		started += seen[i].type == PROTO_STARTED;
		proto_msg_clear(&seen[i]);
	}
	ck_assert_uint_eq(started, 1);
	ck_assert_uint_eq(nagain, go_again);
}

static int64_t at_for(int scheduled)
{
	return scheduled ? aclock_now() + 2 * 1000000LL : 0;
}

/* The go comes before any child was forked for the step: it forks one. */
START_TEST(test_go_before_fork)
{
	go(1, at_for(_i));
	ck_assert(ta.running);
	/* a go again (hostd's re-send) changes nothing */
	go(1, at_for(_i));
	run_until_done(1);
	go(1, at_for(_i)); /* stale now */
	ck_assert(!ta.running);
	check_sent(2);
}
END_TEST

/* The child is forked and held before its set-up; the go is handed over
 * then, and the child finds it once it gets to wait. */
START_TEST(test_go_between_fork_and_setup)
{
	int hold[2];

	ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
	step_test_hooks(hold[0], -1);
	agent_prepare(&ta);
	step_test_hooks(-1, -1);
	ck_assert(ta.prepared);
	go(1, at_for(_i));
	ck_assert(ta.running && !ta.prepared);
	go(1, at_for(_i));
	ck_assert_int_eq(write(hold[1], "x", 1), 1);
	run_until_done(1);
	close(hold[0]);
	close(hold[1]);
	check_sent(1);
}
END_TEST

/* The child has set up and waits in read(2) when the go comes. */
START_TEST(test_go_after_setup)
{
	int setup[2];
	char c;

	ck_assert_int_eq(pipe2(setup, O_CLOEXEC), 0);
	step_test_hooks(-1, setup[1]);
	agent_prepare(&ta);
	step_test_hooks(-1, -1);
	ck_assert(ta.prepared);
	ck_assert_int_eq(read(setup[0], &c, 1), 1);
	go(1, at_for(_i));
	ck_assert(ta.running);
	run_until_done(1);
	close(setup[0]);
	close(setup[1]);
	check_sent(0);
}
END_TEST

/* The go read in the same pass of the loop as the ready went out: the
 * loop's own order (flush, prepare, then the next read). */
START_TEST(test_go_through_the_channel)
{
	struct proto_buf b = { 0 };
	struct proto_msg m = { .type = PROTO_GO, .version = PROTO_VERSION };

	m.u.go.step = 1;
	m.u.go.at_ns = at_for(_i);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	/* on the wire before the agent flushed its ready or forked */
	ck_assert_int_eq(write(host_fd, b.data, b.len), (ssize_t)b.len);
	proto_buf_free(&b);
	run_until_done(1);
	check_sent(0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent-prepare");
	TCase *tc = tcase_create("go");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, ta_setup, ta_teardown);
	tcase_set_timeout(tc, 30);
	/* _i: 0 immediate, 1 scheduled */
	tcase_add_loop_test(tc, test_go_before_fork, 0, 2);
	tcase_add_loop_test(tc, test_go_between_fork_and_setup, 0, 2);
	tcase_add_loop_test(tc, test_go_after_setup, 0, 2);
	tcase_add_loop_test(tc, test_go_through_the_channel, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
