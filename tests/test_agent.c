// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The real guestagent binary, driven over a socketpair (--channel-fd), a
 * unix socket found through a fake sysfs tree, or a pty standing for a
 * virtio-serial character device, with agent_host.c playing the host
 * through proto's encoder and decoder.
 *
 * No assertion depends on speed: waits for the agent are bounded only so
 * that a hung agent fails the test instead of hanging it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent_host.h"

START_TEST(test_hello)
{
	struct host h;
	struct proto_msg hello;
	char boot_id[64], cs[64];

	host_spawn(&h, NULL);
	host_handshake(&h, &hello);
	ck_assert_str_eq(hello.u.hello.node, NODE);
	ck_assert_str_eq(hello.u.hello.agent_version, LOCKSTEP_VERSION);
	ck_assert_uint_eq(hello.u.hello.proto_min, PROTO_VERSION);
	ck_assert_uint_eq(hello.u.hello.proto_max, PROTO_VERSION);
	ck_assert_uint_eq(hello.u.hello.step, 0);
	ck_assert_str_eq(hello.u.hello.hostkey, "");
	host_read_line("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
	host_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
		       sizeof(cs));
	ck_assert_str_eq(hello.u.hello.boot_id, boot_id);
	ck_assert_str_eq(hello.u.hello.clocksource, cs);
	host_bye(&h);
}
END_TEST

START_TEST(test_cpu_steps)
{
	struct host h;
	struct step_seen s;
	const struct proto_msg *r;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 2);
	host_expect_ready(&h, 1);
	for (uint32_t step = 1; step <= 2; step++) {
		host_run_step(&h, step, &s);
		ck_assert_int_eq(s.started.u.started.late_ns, 0);
		ck_assert_int_eq(s.done.u.done.exit_status, 0);
		ck_assert_int_eq(s.nresults, 2);
		r = host_seen_result(&s, "ops_per_sec");
		ck_assert_str_eq(r->u.result.unit, "ops/s");
		ck_assert(r->u.result.higher_is_better);
		ck_assert_double_gt(r->u.result.value, 0);
		r = host_seen_result(&s, "elapsed");
		ck_assert_str_eq(r->u.result.unit, "s");
		ck_assert(!r->u.result.higher_is_better);
		ck_assert_double_gt(r->u.result.value, 0);
		ck_assert_uint_eq(s.outlen, 0);
		free(s.out);
		if (step == 1)
			host_expect_ready(&h, 2);
	}
	/* After the last step nothing more: the next message answers a ping. */
	host_ping(&h, 9);
	host_expect_pong(&h, 9);
	host_bye(&h);
}
END_TEST

START_TEST(test_stale_go_ignored)
{
	struct host h;
	struct step_seen s;
	struct proto_msg m;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 2);
	host_expect_ready(&h, 1);
	host_go(&h, 2, 0);
	host_go(&h, 7, 0);
	/* gos not asked for are said, and start nothing */
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "go-ignored");
	ck_assert_uint_eq(m.u.error.step, 2);
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "go-ignored");
	ck_assert_uint_eq(m.u.error.step, 7);
	host_ping(&h, 1);
	host_expect_pong(&h, 1); /* no started before it */
	host_run_step(&h, 1, &s);
	free(s.out);
	host_expect_ready(&h, 2);
	host_go(&h, 1, 0); /* the step just done: hostd sent it again */
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "go-again");
	ck_assert_uint_eq(m.u.error.step, 1);
	host_ping(&h, 2);
	host_expect_pong(&h, 2);
	host_bye(&h);
}
END_TEST

START_TEST(test_plan_duplicate_and_conflict)
{
	struct host h;
	struct step_seen s;
	struct proto_msg m;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 2);
	host_expect_ready(&h, 1);
	host_plan(&h, NODE, NULL, 2); /* the same: ignored */
	host_ping(&h, 3);
	host_expect_pong(&h, 3);
	host_run_step(&h, 1, &s);
	free(s.out);
	host_expect_ready(&h, 2);
	host_plan(&h, NODE, NULL, 3);
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "plan-conflict");
	host_plan(&h, "other-node", NULL, 1);
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "wrong-node");
	ck_assert_ptr_nonnull(strstr(m.u.error.text, "other-node"));
	/* Still at step 2 of the first plan. */
	host_run_step(&h, 2, &s);
	free(s.out);
	host_bye(&h);
}
END_TEST

static void send_bytes(struct host *h, const char *data, size_t len)
{
	ck_assert_int_eq(write(h->fd, data, len), (ssize_t)len);
}

/* A plan of command steps too long for one line comes in parts; the agent
 * puts their commands together (a part out of order is refused, a part
 * from step 1 starts over, the same plan again is ignored) and runs them.
 * The commands move from part to plan: ASan and valgrind see every free. */
START_TEST(test_plan_in_parts)
{
	const uint32_t n = 1000;
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION }, err;
	struct proto_buf b = { 0 };
	const char *line[16];
	size_t len[16], nlines = 0;
	struct host h;
	struct step_seen s;

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "%s", NODE);
	m.u.plan.nsteps = n;
	m.u.plan.steps = calloc(n, sizeof(*m.u.plan.steps));
	ck_assert_ptr_nonnull(m.u.plan.steps);
	for (uint32_t i = 0; i < n; i++) {
		struct proto_step *st = &m.u.plan.steps[i];
		char cmd[64];

		st->index = i + 1;
		st->iteration = 1;
		snprintf(st->benchmark, sizeof(st->benchmark), "say");
		st->kind = PROTO_STEP_COMMAND;
		snprintf(cmd, sizeof(cmd), "echo step %u; : a longer command line, %u", i + 1, i);
		ck_assert_int_eq(proto_step_set_command(st, cmd), 0);
	}
	ck_assert_int_eq(proto_encode_plan(&m, &b), 0);
	for (const char *p = b.data, *nl; p < b.data + b.len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(b.data + b.len - p));
		ck_assert_ptr_nonnull(nl);
		ck_assert_uint_lt(nlines, 16);
		line[nlines] = p;
		len[nlines++] = (size_t)(nl + 1 - p);
	}
	ck_assert_uint_ge(nlines, 2);

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	send_bytes(&h, line[1], len[1]);
	host_expect(&h, PROTO_ERROR, &err);
	ck_assert_str_eq(err.u.error.code, "bad-plan");
	send_bytes(&h, line[0], len[0]);
	for (size_t i = 0; i < nlines; i++)
		send_bytes(&h, line[i], len[i]);
	host_expect_ready(&h, 1);
	send_bytes(&h, b.data, b.len); /* the same plan: ignored */
	host_ping(&h, 5);
	host_expect_pong(&h, 5);
	for (uint32_t step = 1; step <= 2; step++) {
		char want[32];

		host_run_step(&h, step, &s);
		snprintf(want, sizeof(want), "step %u\n", step);
		ck_assert_str_eq(s.out, want);
		free(s.out);
		host_expect_ready(&h, step + 1);
	}
	host_bye(&h);
	proto_buf_free(&b);
	proto_msg_clear(&m);
}
END_TEST

START_TEST(test_garbage_resyncs)
{
	struct host h;
	struct proto_msg m;
	struct step_seen s;
	uint64_t first, second;

	host_spawn(&h, NULL);
	first = host_expect_sync(&h);
	host_ack(&h, first);
	host_expect(&h, PROTO_HELLO, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	host_send_raw(&h, "this is not json\n");
	second = host_expect_sync(&h);
	ck_assert_uint_ne(second, first);
	/* Sent before the ack: the agent must drop it, not run the step. */
	host_go(&h, 1, 0);
	host_ack(&h, second);
	host_expect(&h, PROTO_HELLO, &m);
	ck_assert_uint_eq(m.u.hello.step, 1);
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "bad-input");
	host_expect_ready(&h, 1);
	host_run_step(&h, 1, &s);
	free(s.out);
	host_bye(&h);
}
END_TEST

/* The host restarts its side: the agent acks and says again where it is. */
START_TEST(test_host_resync_reannounce)
{
	struct host h;
	struct proto_msg m = { .type = PROTO_SYNC };

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	host_send_raw(&h, "\xff");
	m.u.sync.nonce = 4242;
	host_send(&h, &m);
	host_expect(&h, PROTO_SYNC_ACK, &m);
	ck_assert_uint_eq(m.u.sync.nonce, 4242);
	host_expect(&h, PROTO_HELLO, &m);
	ck_assert_uint_eq(m.u.hello.step, 1);
	host_expect_ready(&h, 1);
	host_bye(&h);
}
END_TEST

START_TEST(test_command_output_status)
{
	struct host h;
	struct step_seen s;

	host_spawn(&h, NULL);
	host_run_command(&h, "echo hi; pwd; exit 3", &s);
	ck_assert_int_eq(s.done.u.done.exit_status, 3);
	ck_assert_int_eq(s.nresults, 1);
	ck_assert_str_eq(host_seen_result(&s, "elapsed")->u.result.unit, "s");
	/* It ran in the work folder. */
	ck_assert_uint_gt(s.outlen, 3);
	ck_assert_int_eq(strncmp(s.out, "hi\n", 3), 0);
	ck_assert_int_eq(strncmp(s.out + 3, h.dir, strlen(h.dir)), 0);
	free(s.out);
	host_bye(&h);
}
END_TEST

START_TEST(test_command_killed_status)
{
	struct host h;
	struct step_seen s;

	host_spawn(&h, NULL);
	host_run_command(&h, "kill -KILL $$", &s);
	ck_assert_int_eq(s.done.u.done.exit_status, 128 + SIGKILL);
	free(s.out);
	host_bye(&h);
}
END_TEST

START_TEST(test_command_utf8_sanitized)
{
	struct host h;
	struct step_seen s;

	host_spawn(&h, NULL);
	/* bad byte, overlong '/', NUL, valid 2-byte; then one split over two
	 * writes that must survive whole */
	host_run_command(&h,
			 "printf 'a\\377b\\300\\257c x\\000y caf\\303\\251\\n'; "
			 "printf 'na\\303'; sleep 0.2; printf '\\257ve\\n'",
			 &s);
	ck_assert_int_eq(s.done.u.done.exit_status, 0);
	ck_assert_str_eq(s.out, "a?b??c x?y caf\xc3\xa9\nna\xc3\xafve\n");
	free(s.out);
	host_bye(&h);
}
END_TEST

START_TEST(test_command_output_truncated)
{
	struct host h;
	struct step_seen s;

	host_spawn(&h, NULL);
	host_run_command(&h, "head -c 3000000 /dev/zero | tr '\\000' a; echo end", &s);
	ck_assert_int_eq(s.done.u.done.exit_status, 0);
	ck_assert_uint_le(s.outlen, 1024 * 1024 + 100);
	ck_assert_uint_ge(s.outlen, 1024 * 1024);
	ck_assert_uint_le(s.max_chunk, PROTO_OUTPUT_MAX);
	ck_assert_ptr_nonnull(strstr(s.out + 1024 * 1024, "truncated"));
	ck_assert_ptr_null(strstr(s.out, "end"));
	free(s.out);
	host_bye(&h);
}
END_TEST

/* Control characters grow sixfold as JSON (\u0001): lines must still fit. */
START_TEST(test_command_output_escaped)
{
	struct host h;
	struct step_seen s;

	host_spawn(&h, NULL);
	host_run_command(&h, "head -c 100000 /dev/zero | tr '\\000' '\\001'", &s);
	ck_assert_int_eq(s.done.u.done.exit_status, 0);
	ck_assert_uint_eq(s.outlen, 100000);
	for (size_t i = 0; i < s.outlen; i++)
		ck_assert_int_eq(s.out[i], 1);
	free(s.out);
	host_bye(&h);
}
END_TEST

START_TEST(test_ping_while_running)
{
	struct host h;
	struct step_seen s;
	const char *cmds[] = { "cat fifo" };
	char fifo[128];
	int fd;

	host_spawn(&h, NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", h.dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, cmds, 1);
	host_expect_ready(&h, 1);
	host_go(&h, 1, 0);
	host_expect_started(&h, 1, &s);
	/* The step blocks on the fifo until we write: the agent still answers. */
	host_ping(&h, 5);
	host_expect_pong(&h, 5);
	fd = open(fifo, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "done\n", 5), 5);
	close(fd);
	host_collect_rest(&h, 1, &s);
	ck_assert_str_eq(s.out, "done\n");
	ck_assert_int_eq(s.done.u.done.exit_status, 0);
	free(s.out);
	host_bye(&h);
}
END_TEST

/* A go whose instant has passed when it arrives starts at once, and says
 * how late. */
START_TEST(test_go_after_its_instant)
{
	struct host h;
	struct step_seen s;
	int64_t at;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	at = host_mono_ns() - 5 * 1000000LL;
	host_go(&h, 1, at);
	host_expect_started(&h, 1, &s);
	ck_assert_int_ge(s.started.u.started.late_ns, 5 * 1000000LL);
	ck_assert_int_eq(s.started.u.started.late_ns, s.started.u.started.mono_ns - at);
	host_collect_rest(&h, 1, &s);
	free(s.out);
	host_bye(&h);
}
END_TEST

START_TEST(test_go_at_instant)
{
	struct host h;
	struct step_seen s;
	struct proto_msg m;
	int64_t at;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	/* An hour ahead is refused, and the agent keeps waiting. */
	host_go(&h, 1, host_mono_ns() + 3600 * 1000000000LL);
	host_expect(&h, PROTO_ERROR, &m);
	ck_assert_str_eq(m.u.error.code, "bad-go");
	ck_assert_uint_eq(m.u.error.step, 1);
	at = host_mono_ns() + 200 * 1000000LL;
	host_go(&h, 1, at);
	host_expect_started(&h, 1, &s);
	/* Never before the instant; the go came in time, so not late (waking
	 * a little after the instant is skew, shown by the start itself). */
	ck_assert_int_ge(s.started.u.started.mono_ns, at);
	ck_assert_int_eq(s.started.u.started.late_ns, 0);
	host_collect_rest(&h, 1, &s);
	free(s.out);
	host_bye(&h);
}
END_TEST

/* Starts `echo $$; exec sleep 100` and returns the sleeping pid. */
static pid_t start_sleeper(struct host *h)
{
	const char *cmds[] = { "echo $$; exec sleep 100" };
	struct proto_msg m;
	pid_t pid;

	host_handshake(h, NULL);
	host_plan(h, NODE, cmds, 1);
	host_expect_ready(h, 1);
	host_go(h, 1, 0);
	host_expect(h, PROTO_STARTED, NULL);
	host_expect(h, PROTO_OUTPUT, &m);
	pid = (pid_t)atoi(m.u.output.data);
	proto_msg_clear(&m);
	ck_assert_int_gt(pid, 1);
	return pid;
}

START_TEST(test_bye_stops_step)
{
	struct host h;
	pid_t sleeper;

	host_spawn(&h, NULL);
	sleeper = start_sleeper(&h);
	host_bye(&h);
	ck_assert_int_eq(kill(sleeper, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
}
END_TEST

START_TEST(test_eof_exits)
{
	struct host h;
	pid_t sleeper;
	int st;

	host_spawn(&h, NULL);
	sleeper = start_sleeper(&h);
	ck_assert_int_eq(shutdown(h.fd, SHUT_RDWR), 0);
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent wait status %#x", st);
	ck_assert_int_eq(kill(sleeper, 0), -1);
}
END_TEST

START_TEST(test_sigterm_says_bye)
{
	struct host h;
	struct proto_msg m;
	int st;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	ck_assert_int_eq(kill(h.pid, SIGTERM), 0);
	host_expect(&h, PROTO_BYE, &m);
	ck_assert_ptr_nonnull(strstr(m.u.bye.reason, "terminated"));
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent wait status %#x", st);
}
END_TEST

START_TEST(test_idle_at_barrier)
{
	struct host h;
	unsigned long long before, after;
	long rss;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	before = host_cpu_ticks(h.pid);
	sleep(1);
	after = host_cpu_ticks(h.pid);
	rss = host_vm_rss_kib(h.pid);
	fprintf(stderr, "agent waiting at a barrier: %llu CPU ticks in 1 s, VmRSS %ld KiB\n",
		after - before, rss);
	ck_assert_uint_le(after - before, 1);
#ifdef AGENT_STATIC
	/* The target for the static agent; sanitizer builds are not static. */
	ck_assert_int_lt(rss, 4096);
#endif
	host_bye(&h);
}
END_TEST

/* Runs the agent with argv (after the program name); no channel yet. */
START_TEST(test_port_discovery_and_reconnect)
{
	struct host h;
	struct proto_msg hello;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dirs[] = { "sys",
			       "sys/class",
			       "sys/class/virtio-ports",
			       "sys/class/virtio-ports/vport0p1",
			       "sys/class/virtio-ports/vport2p3",
			       "dev" };
	char path[256];
	int lfd;

	memset(&h, 0, sizeof(h));
	host_mkworkdir(&h);
	/* Started before the port exists: it must wait for it to appear. */
	host_spawn_args(&h, (const char *const[]){ "--sysfs-root", h.dir, "--node", NODE,
						   "--work-dir", h.dir, NULL });
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", h.dir, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	host_write_file(h.dir, "sys/class/virtio-ports/vport0p1/name", "org.qemu.guest_agent.0\n");
	host_write_file(h.dir, "sys/class/virtio-ports/vport2p3/name", "org.lockstep.agent.0\n");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dev/vport2p3", h.dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);

	host_accept(&h, lfd);
	host_handshake(&h, &hello);
	ck_assert_str_eq(hello.u.hello.node, NODE);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);

	/* The host goes away and comes back: resync, re-announce. */
	close(h.fd);
	proto_decoder_reset(&h.dec);
	host_accept(&h, lfd);
	host_handshake(&h, &hello);
	ck_assert_uint_eq(hello.u.hello.step, 1);
	host_expect_ready(&h, 1);
	host_bye(&h);
	close(lfd);
}
END_TEST

/* A pty stands for a virtio-serial port: the character-device path. */
START_TEST(test_char_device_channel)
{
	struct host h;
	struct termios t;
	struct proto_msg hello;
	int master, slave;
	const char *name;

	memset(&h, 0, sizeof(h));
	host_mkworkdir(&h);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(master, 0);
	ck_assert_int_eq(grantpt(master), 0);
	ck_assert_int_eq(unlockpt(master), 0);
	name = ptsname(master);
	ck_assert_ptr_nonnull(name);
	/* Raw, or the line discipline would echo and translate our bytes. */
	slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(slave, 0);
	ck_assert_int_eq(tcgetattr(slave, &t), 0);
	cfmakeraw(&t);
	ck_assert_int_eq(tcsetattr(slave, TCSANOW, &t), 0);
	host_spawn_args(&h, (const char *const[]){ "--channel", name, "--node", NODE, "--work-dir",
						   h.dir, NULL });
	h.fd = master;
	host_handshake(&h, &hello);
	ck_assert_str_eq(hello.u.hello.node, NODE);
	host_plan(&h, NODE, NULL, 1);
	host_expect_ready(&h, 1);
	host_bye(&h);
	close(slave);
}
END_TEST

START_TEST(test_bad_invocations)
{
	struct host h;
	int st;

	memset(&h, 0, sizeof(h));
	host_mkworkdir(&h);
	host_spawn_args(&h, (const char *const[]){ "--channel", "/proc/self/status", "--node", NODE,
						   NULL });
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "wait status %#x", st);

	host_mkworkdir(&h);
	host_spawn_args(&h, (const char *const[]){ "--node", ".hidden", NULL });
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "wait status %#x", st);

	host_mkworkdir(&h);
	host_spawn_args(&h, (const char *const[]){ "--channel-fd", "999", NULL });
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "wait status %#x", st);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("agent");
	TCase *tc = tcase_create("agent");
	SRunner *sr;
	int failed;

	if (host_find_agent(argc, argv, "test-agent") < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	tcase_add_test(tc, test_hello);
	tcase_add_test(tc, test_cpu_steps);
	tcase_add_test(tc, test_stale_go_ignored);
	tcase_add_test(tc, test_plan_duplicate_and_conflict);
	tcase_add_test(tc, test_plan_in_parts);
	tcase_add_test(tc, test_garbage_resyncs);
	tcase_add_test(tc, test_host_resync_reannounce);
	tcase_add_test(tc, test_command_output_status);
	tcase_add_test(tc, test_command_killed_status);
	tcase_add_test(tc, test_command_utf8_sanitized);
	tcase_add_test(tc, test_command_output_truncated);
	tcase_add_test(tc, test_command_output_escaped);
	tcase_add_test(tc, test_ping_while_running);
	tcase_add_test(tc, test_go_at_instant);
	tcase_add_test(tc, test_go_after_its_instant);
	tcase_add_test(tc, test_bye_stops_step);
	tcase_add_test(tc, test_eof_exits);
	tcase_add_test(tc, test_sigterm_says_bye);
	tcase_add_test(tc, test_idle_at_barrier);
	tcase_add_test(tc, test_port_discovery_and_reconnect);
	tcase_add_test(tc, test_char_device_channel);
	tcase_add_test(tc, test_bad_invocations);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
