// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostile-agent: a guest agent that lies, started by hostd in place of a
 * local guest's agent (hostd --agent hostile-agent).  It speaks the protocol
 * itself (proto/), runs no step at all, and misbehaves the way
 * LOCKSTEP_HOSTILE says on the node LOCKSTEP_HOSTILE_NODE (default
 * guest-2); every other node execs the real agent (LOCKSTEP_HOSTILE_REAL)
 * with the same arguments.  Issue 14, cases 4 to 7:
 *
 *   hello-flood     hello again and again, never reading (the plan each time)
 *   sync-flood      sync again and again, never reading (a sync-ack each time)
 *   sync-same       the same sync again and again for LOCKSTEP_HOSTILE_SECONDS,
 *                   never reading, then on as an honest agent (one ack is
 *                   owed, no more: not a flood)
 *   ready-flood     released into step 1, ready for it again and again, never
 *                   reading (a go each time)
 *   error-flood     in step 1, 4000 agent errors of 1000 bytes with escape
 *                   sequences and fake log lines; then on as an honest agent
 *   skip-done       started step 1, then ready for step 2: never a done
 *   vanish, hang    started step 2, then exits, or says nothing more
 *   spec-result     four "time" results for each step besides its output
 *   twice-result    its "elapsed" twice in each step
 *   reserved-sample a monitor sample vcpu.all.time in step 1
 *   reserved-result a result steal_pct in step 1
 *   stamp-zero, stamp-max   start stamps of 0 and INT64_MAX
 *   late-lie        a true start stamp, but 1000 s late after the go's instant
 *   timing-lie      a true start stamp with a timing that cannot be true (its
 *                   child read the go before the agent did)
 *   offset-jump     honest pongs with its clock 1 ms ahead until step 2, then
 *                   10 s ahead (hostd must run it with a clock of its own:
 *                   LOCAL_GUEST_CLOCK_OFFSET_NS)
 *   offset-huge     pongs near 2^63: refused, no overflow
 *   (anything else) an honest agent
 *
 *   hostile-agent --channel-fd 3 --node NODE --work-dir DIR [ignored ...]
 *
 * LOCKSTEP_HOSTILE_SECONDS bounds a flood (default 60).  Test and bench
 * tool: it trusts its environment, not its peer.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

#define QUEUE_MAX 4096

static struct {
	int fd;
	const char *node, *mode;
	struct proto_decoder dec;
	struct proto_link link;
	struct proto_msg q[QUEUE_MAX]; /* decoded, not yet handled */
	size_t qhead, qlen;
	uint32_t nsteps;   /* the plan's, once whole */
	int64_t offset_ns; /* our clock ahead of the host's */
	int64_t until_ns;  /* a flood stops here */
} hx = { .fd = -1 };

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool mode(const char *m)
{
	return !strcmp(hx.mode, m);
}

static void write_all(const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(hx.fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			exit(0); /* hostd closed the channel: done */
		p += w;
		len -= (size_t)w;
	}
}

static void send_buf(struct proto_buf *b)
{
	write_all(b->data, b->len);
	b->len = 0;
}

static void send_msg(struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	m->version = PROTO_VERSION;
	if (proto_encode(m, &b) != 0) {
		fprintf(stderr, "hostile-agent: cannot encode a %s\n", proto_type_name(m->type));
		exit(2);
	}
	send_buf(&b);
	proto_buf_free(&b);
}

static void on_event(void *ctx, enum proto_event ev, struct proto_msg *m, int err, const char *detail)
{
	(void)ctx;
	(void)err;
	if (ev == PROTO_EV_ERROR)
		fprintf(stderr, "hostile-agent: bad line from hostd: %s\n", detail);
	if (ev != PROTO_EV_MSG || hx.qlen == QUEUE_MAX)
		return;
	struct proto_msg *slot = &hx.q[(hx.qhead + hx.qlen++) % QUEUE_MAX];
	*slot = *m;
	memset(m, 0, sizeof(*m)); /* ours now */
}

/* The next message hostd sent that the link delivers (syncs acked). */
static void next_msg(struct proto_msg *out)
{
	for (;;) {
		while (hx.qlen) {
			struct proto_msg *m = &hx.q[hx.qhead];
			hx.qhead = (hx.qhead + 1) % QUEUE_MAX;
			hx.qlen--;
			struct proto_buf b = { 0 };
			enum proto_link_verdict v = proto_link_input(&hx.link, m, &b);
			if (b.len)
				send_buf(&b);
			proto_buf_free(&b);
			if (v == PROTO_LINK_DELIVER || v == PROTO_LINK_SYNCED) {
				*out = *m;
				if (v == PROTO_LINK_SYNCED)
					out->type = PROTO_SYNC_ACK;
				return;
			}
			proto_msg_clear(m);
		}
		char buf[65536];
		ssize_t n = read(hx.fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			exit(0);
		proto_decoder_feed(&hx.dec, buf, (size_t)n, on_event, NULL);
	}
}

static void send_hello(void)
{
	struct proto_msg m = { .type = PROTO_HELLO };
	snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s", hx.node);
	snprintf(m.u.hello.agent_version, sizeof(m.u.hello.agent_version), "hostile\x1b[2J");
	m.u.hello.proto_min = m.u.hello.proto_max = PROTO_VERSION;
	snprintf(m.u.hello.clocksource, sizeof(m.u.hello.clocksource), "tsc");
	send_msg(&m);
}

/* Sends line over and over, about 10000 a second (half hostd's rate limit:
 * the flood must be caught by what it costs, not by its rate), never
 * reading, until hostd closes the channel or the time is up. */
static void flood(struct proto_msg *m, bool fresh_nonce)
{
	struct proto_buf b = { 0 };
	m->version = PROTO_VERSION;
	if (proto_encode(m, &b) != 0)
		exit(2);
	for (unsigned i = 0; now_ns() < hx.until_ns; i++) {
		if (fresh_nonce) {
			b.len = 0;
			m->u.sync.nonce = i + 1000;
			proto_encode(m, &b);
		}
		write_all(b.data, b.len);
		if (i % 20 == 19) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	proto_buf_free(&b);
	if (!mode("sync-same"))
		exit(0);
}

static void send_result(uint32_t step, const char *metric, double value, const char *unit)
{
	struct proto_msg m = { .type = PROTO_RESULT };
	m.u.result.step = step;
	snprintf(m.u.result.metric, sizeof(m.u.result.metric), "%s", metric);
	m.u.result.value = value;
	snprintf(m.u.result.unit, sizeof(m.u.result.unit), "%s", unit);
	send_msg(&m);
}

static void send_ready(uint32_t step)
{
	struct proto_msg m = { .type = PROTO_READY };
	m.u.ready.step = step;
	send_msg(&m);
}

/* A step, "run": stamps, the output a hackbench parser takes, elapsed. */
static void run_step(uint32_t step)
{
	struct proto_msg m = { .type = PROTO_STARTED };
	m.u.started.step = step;
	m.u.started.mono_ns = mode("stamp-zero")  ? 0
			      : mode("stamp-max") ? INT64_MAX
						  : now_ns() + hx.offset_ns;
	if (mode("late-lie"))
		m.u.started.late_ns = 1000 * 1000000000LL;
	if (mode("timing-lie")) {
		m.u.started.agent_go_ns = m.u.started.mono_ns - 1000;
		m.u.started.child_go_ns = m.u.started.mono_ns - 2000;
		m.u.started.runq_ns = 10;
	}
	send_msg(&m);
	if (mode("skip-done")) {
		send_ready(step + 1);
		return;
	}
	if (mode("vanish") && step == 2)
		exit(0);
	while (mode("hang") && step == 2)
		pause();
	if (mode("error-flood") && step == 1) {
		char text[1001];
		memset(text, 'e', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		/* a screen clear, a bell, a fake log line */
		memcpy(text, "\x1b[2J\x07\n2026-01-01 00:00:00.000 hostd: error: fake\r", 48);
		for (int i = 0; i < 4000; i++) {
			struct proto_msg e = { .type = PROTO_ERROR };
			e.u.error.step = step;
			snprintf(e.u.error.code, sizeof(e.u.error.code), "evil\x1b]0;title\x07");
			snprintf(e.u.error.text, sizeof(e.u.error.text), "%s", text);
			send_msg(&e);
			if (i % 20 == 19) {
				struct timespec ts = { 0, 2 * 1000 * 1000 };
				nanosleep(&ts, NULL);
			}
		}
	}
	if (mode("reserved-sample") && step == 1) {
		struct proto_msg s = { .type = PROTO_SAMPLE };
		s.u.sample.step = step;
		s.u.sample.mono_ns = now_ns() + hx.offset_ns;
		snprintf(s.u.sample.metric, sizeof(s.u.sample.metric), "vcpu.all.time");
		s.u.sample.value = 100;
		snprintf(s.u.sample.unit, sizeof(s.u.sample.unit), "%%");
		send_msg(&s);
	}
	if (mode("reserved-result") && step == 1)
		send_result(step, "steal_pct", 0, "%");
	struct proto_msg o = { .type = PROTO_OUTPUT };
	char out[] = "Running in process mode with 1 groups using 40 file descriptors each\n"
		     "Time: 0.500\n";
	o.u.output.step = step;
	o.u.output.data = out;
	o.u.output.len = strlen(out);
	send_msg(&o);
	if (mode("spec-result"))
		for (int i = 0; i < 4; i++)
			send_result(step, "time", 0.001, "s");
	send_result(step, "elapsed", 0.01, "s");
	if (mode("twice-result"))
		send_result(step, "elapsed", 0.01, "s");
	struct proto_msg d = { .type = PROTO_DONE };
	d.u.done.step = step;
	d.u.done.mono_ns = now_ns() + hx.offset_ns;
	send_msg(&d);
	if (step < hx.nsteps)
		send_ready(step + 1);
}

static void on_pong(struct proto_msg *ping, uint32_t step)
{
	struct proto_msg m = { .type = PROTO_PONG };
	m.u.ping = ping->u.ping;
	int64_t off = hx.offset_ns;
	if (mode("offset-jump") && step >= 2)
		off += 10 * 1000000000LL;
	if (mode("offset-huge")) {
		m.u.ping.t2 = INT64_MAX - 5;
		m.u.ping.t3 = INT64_MAX - 1;
	} else {
		m.u.ping.t2 = now_ns() + off;
		m.u.ping.t3 = now_ns() + off;
	}
	send_msg(&m);
}

int main(int argc, char **argv)
{
	const char *only = getenv("LOCKSTEP_HOSTILE_NODE");
	const char *secs = getenv("LOCKSTEP_HOSTILE_SECONDS");
	hx.mode = getenv("LOCKSTEP_HOSTILE") ? getenv("LOCKSTEP_HOSTILE") : "honest";
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--channel-fd"))
			hx.fd = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--node"))
			hx.node = argv[i + 1];
	}
	if (hx.fd < 0 || !hx.node) {
		fprintf(stderr, "usage: hostile-agent --channel-fd FD --node NODE ...\n");
		return 2;
	}
	if (strcmp(hx.node, only ? only : "guest-2") != 0) {
		const char *real = getenv("LOCKSTEP_HOSTILE_REAL");
		if (!real) {
			fprintf(stderr, "hostile-agent: LOCKSTEP_HOSTILE_REAL is not set\n");
			return 2;
		}
		argv[0] = (char *)real;
		execv(real, argv);
		perror(real);
		return 127;
	}
	signal(SIGPIPE, SIG_IGN);
	hx.until_ns = now_ns() + (secs ? atoll(secs) : 60) * 1000000000LL;
	hx.offset_ns = 1000000; /* a guest's clock of its own, 1 ms ahead */
	fprintf(stderr, "hostile-agent %s: %s\n", hx.node, hx.mode);

	struct proto_buf b = { 0 };
	proto_link_restart(&hx.link, (uint64_t)now_ns(), &b);
	send_buf(&b);
	proto_buf_free(&b);
	struct proto_msg m;
	for (;;) { /* until our sync is acked */
		next_msg(&m);
		bool synced = m.type == PROTO_SYNC_ACK;
		proto_msg_clear(&m);
		if (synced)
			break;
	}
	send_hello();
	if (mode("hello-flood")) {
		struct proto_msg h = { .type = PROTO_HELLO };
		snprintf(h.u.hello.node, sizeof(h.u.hello.node), "%s", hx.node);
		h.u.hello.proto_min = h.u.hello.proto_max = PROTO_VERSION;
		flood(&h, false);
	}
	if (mode("sync-flood") || mode("sync-same")) {
		struct proto_msg s = { .type = PROTO_SYNC };
		s.u.sync.nonce = 999;
		flood(&s, mode("sync-flood"));
	}

	uint32_t step = 0, have = 0;
	for (;;) {
		next_msg(&m);
		switch (m.type) {
		case PROTO_PING: on_pong(&m, step); break;
		case PROTO_PLAN: {
			uint32_t n = m.u.plan.nsteps;
			uint32_t last = n ? m.u.plan.steps[n - 1].index : 0;
			have = last;
			if (!m.u.plan.total || last == m.u.plan.total) {
				hx.nsteps = have;
				if (step == 0 && hx.nsteps)
					send_ready(1);
			}
			break;
		}
		case PROTO_GO:
			if (m.u.go.step <= step)
				break; /* stale */
			step = m.u.go.step;
			if (mode("ready-flood")) {
				struct proto_msg r = { .type = PROTO_READY };
				r.u.ready.step = step;
				flood(&r, false);
			}
			run_step(step);
			break;
		case PROTO_BYE: proto_msg_clear(&m); return 0;
		default: break;
		}
		proto_msg_clear(&m);
	}
}
