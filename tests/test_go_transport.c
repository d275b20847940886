// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 19: can a go be lost between hostd's write and the agent's start?
 * Everything here goes through real stream sockets, the channel a local
 * guest has (a socketpair), with no fault injected:
 *
 * - hostd's side (hostd/node.c): a host end with the smallest SO_SNDBUF
 *   and a slow reader, so that direct writes are short or EAGAIN and the
 *   rest waits in libuv's queue; every go must arrive whole, once, in
 *   order, behind the ping sent before it.  A go queued when the node
 *   closes ends in an end of file for the peer, never in a silent wait.
 * - the agent's side (the real binary, tests/agent_host.c): a go split
 *   byte by byte across reads, a sync-ack and a go in one buffer (at the
 *   handshake and after a resync), and hundreds of barriers in a row with
 *   the go delivered whole, split, byte by byte, glued to a ping, or for an
 *   instant ahead, over tiny socket buffers; a go without a started within
 *   GT_LOST_MS fails the test as lost.  A go that never comes: the agent
 *   waits (the deadline is hostd's) and leaves with its children at the end
 *   of file hostd's failing of the node makes.
 * - write errors made on demand (the test's own write and writev): the
 *   kernel's ENOBUFS, and a queued write failing for good.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "agent_host.h"
#include "node.h"
#include "write_fault.h"

/* A go whose started has not come within this is lost (the agent's step
 * is a cpu-probe of a fraction of a millisecond). */
#define GT_LOST_MS 3000

static void gt_sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- hostd's side: node.c over a tiny send buffer ---------------------- */

#define NT_GOS 3000
#define NT_TINY_SNDBUF 1 /* the kernel raises it to its minimum (about 4.5 KiB) */
#define NT_QUEUE_HIGH (64 * 1024)

/* What the peer decoded, in order: 'g' (value: step, at: its instant),
 * 'p' (value: ping seq), 'P' (a plan). */
struct nt_seen {
	char kind;
	uint32_t value;
	int64_t at;
};

struct nt_reader {
	int fd;
	size_t chunk;  /* bytes per read */
	long pause_us; /* between reads */
	struct proto_decoder dec;
	struct nt_seen *seen;
	size_t nseen, cap;
	unsigned errors; /* decode errors and messages no host sends */
	uint64_t bytes;
};

static void nt_on_event(void *ctx, enum proto_event ev, struct proto_msg *m, int err, const char *detail)
{
	struct nt_reader *rd = ctx;
	struct nt_seen s = { 0 };

	(void)err;
	(void)detail;
	if (ev == PROTO_EV_RESET)
		return; /* node_attach's 0xFF */
	if (ev != PROTO_EV_MSG) {
		rd->errors++;
		return;
	}
	switch (m->type) {
	case PROTO_SYNC: return;
	case PROTO_GO: s = (struct nt_seen){ 'g', m->u.go.step, m->u.go.at_ns }; break;
	case PROTO_PING: s = (struct nt_seen){ 'p', (uint32_t)m->u.ping.seq, 0 }; break;
	case PROTO_PLAN: s = (struct nt_seen){ 'P', m->u.plan.nsteps, 0 }; break;
	default: rd->errors++; return;
	}
	if (rd->nseen == rd->cap) {
		rd->cap = rd->cap ? 2 * rd->cap : 1024;
		rd->seen = realloc(rd->seen, rd->cap * sizeof(*rd->seen));
	}
	rd->seen[rd->nseen++] = s;
}

/* The slow agent: small reads with a pause, until the end of file. */
static void *nt_read(void *arg)
{
	struct nt_reader *rd = arg;
	char buf[4096];

	proto_decoder_init(&rd->dec);
	for (;;) {
		ssize_t n = read(rd->fd, buf, rd->chunk < sizeof(buf) ? rd->chunk : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rd->bytes += (uint64_t)n;
		proto_decoder_feed(&rd->dec, buf, (size_t)n, nt_on_event, rd);
		if (rd->pause_us)
			gt_sleep_us(rd->pause_us);
	}
	proto_decoder_free(&rd->dec);
	return NULL;
}

static int nt_closed_calls, nt_closed_err, nt_flooding_calls, nt_protocol_errors;

static void nt_message(struct node *n, struct proto_msg *m)
{
	(void)n;
	(void)m;
}

static void nt_resynced(struct node *n)
{
	(void)n;
}

static void nt_protocol_error(struct node *n, int err, const char *detail)
{
	(void)n;
	(void)err;
	(void)detail;
	nt_protocol_errors++;
}

static void nt_closed(struct node *n, int err)
{
	(void)n;
	nt_closed_err = err;
	nt_closed_calls++;
}

static void nt_flooding(struct node *n, const char *why)
{
	(void)n;
	fprintf(stderr, "test-go-transport: node says flooding: %s\n", why);
	nt_flooding_calls++;
}

static const struct node_ops nt_ops = {
	.message = nt_message,
	.resynced = nt_resynced,
	.protocol_error = nt_protocol_error,
	.closed = nt_closed,
	.flooding = nt_flooding,
};

struct nt_host {
	uv_loop_t loop;
	struct node n;
	int peer_fd;
	size_t queued_sends; /* sends that found bytes waiting already */
	size_t max_queue;
};

static void nt_host_init(struct nt_host *t, int sndbuf)
{
	int sv[2];

	memset(t, 0, sizeof(*t));
	nt_closed_calls = nt_flooding_calls = nt_protocol_errors = 0;
	ck_assert_int_eq(uv_loop_init(&t->loop), 0);
	node_init(&t->n, "guest-1", 0, t, &nt_ops);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_msg(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) == 0,
		      "SO_SNDBUF %d: %s", sndbuf, strerror(errno));
	ck_assert_int_eq(node_attach(&t->n, &t->loop, sv[0]), 0);
	t->peer_fd = sv[1];
}

static size_t nt_queue(struct nt_host *t)
{
	return uv_stream_get_write_queue_size((uv_stream_t *)&t->n.pipe);
}

static void nt_note_queue(struct nt_host *t)
{
	size_t q = nt_queue(t);

	if (q)
		t->queued_sends++;
	if (q > t->max_queue)
		t->max_queue = q;
}

/* Runs the loop until at most `left` bytes wait, within 15 s. */
static void nt_drain(struct nt_host *t, size_t left, const char *when)
{
	int64_t deadline = host_mono_ns() + 15 * 1000000000LL;

	while (nt_queue(t) > left) {
		ck_assert_msg(host_mono_ns() < deadline, "%s: %zu bytes still queued after 15 s",
			      when, nt_queue(t));
		uv_run(&t->loop, UV_RUN_ONCE);
	}
}

static void nt_host_fini(struct nt_host *t)
{
	node_close(&t->n);
	uv_run(&t->loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&t->loop), 0);
	node_fini(&t->n);
}

/* A plan of three long command steps: one line larger than the whole send
 * buffer, so that its direct write is short and the rest queues. */
static void nt_send_plan(struct nt_host *t)
{
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };
	char cmd[3000];

	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "guest-1");
	m.u.plan.nsteps = 3;
	m.u.plan.steps = calloc(3, sizeof(*m.u.plan.steps));
	for (uint32_t i = 0; i < 3; i++) {
		struct proto_step *st = &m.u.plan.steps[i];

		st->index = i + 1;
		st->iteration = 1;
		st->kind = PROTO_STEP_COMMAND;
		snprintf(st->benchmark, sizeof(st->benchmark), "filler");
		ck_assert_int_eq(proto_step_set_command(st, cmd), 0);
	}
	int r = node_send(&t->n, &m);

	ck_assert_msg(r == 0, "plan: node_send returned %d (%s)", r, r < 0 ? strerror(-r) : "");
	proto_msg_clear(&m);
}

static int64_t nt_at(uint32_t k)
{
	return (int64_t)k * 1000 + 7;
}

/* ping k, then go k (encoded once and sent as bytes for odd k, as
 * send_go_all does; by node_send for even k, as the scheduled release
 * does), with a long plan every 100 steps; the loop runs now and then. */
static void nt_send_all(struct nt_host *t)
{
	struct proto_msg ping = { .type = PROTO_PING, .version = PROTO_VERSION };
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	struct proto_buf enc = { 0 };

	for (uint32_t k = 1; k <= NT_GOS; k++) {
		int r;

		ping.u.ping.seq = k;
		ping.u.ping.t1 = 1;
		r = node_send(&t->n, &ping);
		ck_assert_msg(r == 0, "ping %u: node_send returned %d", k, r);
		nt_note_queue(t);
		go.u.go.step = k;
		go.u.go.at_ns = nt_at(k);
		if (k % 2) {
			enc.len = 0;
			ck_assert_int_eq(proto_encode(&go, &enc), 0);
			r = node_send_bytes(&t->n, enc.data, enc.len);
		} else {
			r = node_send(&t->n, &go);
		}
		ck_assert_msg(r == 0, "go of step %u: send returned %d (%s), %zu bytes queued", k,
			      r, r < 0 ? strerror(-r) : "", nt_queue(t));
		node_reply_sent(&t->n, NODE_REPLY_GO);
		nt_note_queue(t);
		if (k % 100 == 0)
			nt_send_plan(t);
		if (k % 7 == 0)
			uv_run(&t->loop, UV_RUN_NOWAIT);
		/* hostd never lets a peer fall this far behind without failing
		 * it; the test stays below NODE_QUEUE_MAX */
		if (nt_queue(t) > NT_QUEUE_HIGH)
			nt_drain(t, NT_QUEUE_HIGH / 4, "sending");
	}
	proto_buf_free(&enc);
}

/* Every go once, whole, in order, right behind its ping. */
static void nt_check_seen(const struct nt_reader *rd, uint32_t gos)
{
	uint32_t want = 1;
	bool ping_before = false;
	size_t plans = 0;

	ck_assert_msg(rd->errors == 0, "the peer decoded %u bad or unexpected lines", rd->errors);
	for (size_t i = 0; i < rd->nseen; i++) {
		const struct nt_seen *s = &rd->seen[i];

		if (s->kind == 'P') {
			ck_assert_uint_eq(s->value, 3);
			plans++;
		} else if (s->kind == 'p') {
			ck_assert_msg(s->value == want, "line %zu: ping %u where ping %u was due",
				      i, s->value, want);
			ping_before = true;
		} else {
			ck_assert_msg(s->value == want,
				      "line %zu: go of step %u where the go of step "
				      "%u was due (lost or out of order)",
				      i, s->value, want);
			ck_assert_msg(ping_before, "line %zu: go of step %u without its ping first",
				      i, s->value);
			ck_assert_msg(s->at == nt_at(want), "go of step %u: at_ns %lld, sent %lld",
				      want, (long long)s->at, (long long)nt_at(want));
			ping_before = false;
			want++;
		}
	}
	ck_assert_msg(want == gos + 1, "the peer got the gos of steps 1 to %u of %u", want - 1, gos);
	ck_assert_msg(plans == gos / 100, "the peer got %zu plans of %u", plans, gos / 100);
}

START_TEST(node_go_tiny_sndbuf_slow_reader)
{
	struct nt_host t;
	struct nt_reader rd = { .chunk = 61, .pause_us = 20 };
	pthread_t th;
	int sndbuf = 0;
	socklen_t len = sizeof(sndbuf);
	uv_os_fd_t fd;

	nt_host_init(&t, NT_TINY_SNDBUF);
	ck_assert_int_eq(uv_fileno((uv_handle_t *)&t.n.pipe, &fd), 0);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len), 0);
	rd.fd = t.peer_fd;
	ck_assert_int_eq(pthread_create(&th, NULL, nt_read, &rd), 0);
	nt_send_all(&t);
	nt_drain(&t, 0, "after the last go");
	ck_assert_int_eq(nt_flooding_calls, 0);
	ck_assert_msg(t.n.written_total == t.n.queued_total, "written %llu of %llu bytes queued",
		      (unsigned long long)t.n.written_total, (unsigned long long)t.n.queued_total);
	ck_assert_msg(!node_reply_unwritten(&t.n, NODE_REPLY_GO),
		      "the last go is still counted unwritten after the queue drained");
	nt_host_fini(&t);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(rd.fd);
	/* what the agent would have read first, then how it got there */
	nt_check_seen(&rd, NT_GOS);
	ck_assert_uint_eq(rd.bytes, t.n.written_total);
	/* the queue was used: direct writes were short or refused */
	ck_assert_msg(t.queued_sends > NT_GOS / 10,
		      "only %zu of %d sends found bytes queued "
		      "(SO_SNDBUF %d): the short-write path was not exercised",
		      t.queued_sends, 2 * NT_GOS, sndbuf);
	fprintf(stderr,
		"node_go_tiny_sndbuf_slow_reader: SO_SNDBUF %d, %zu of %d sends queued, "
		"at most %zu bytes waiting, %llu bytes\n",
		sndbuf, t.queued_sends, 2 * NT_GOS, t.max_queue, (unsigned long long)rd.bytes);
	free(rd.seen);
}
END_TEST

/* Gos 1, 2, ... to a peer that reads nothing yet, until `behind` of them
 * wait in libuv's queue; returns the last step sent. */
static uint32_t nt_fill(struct nt_host *t, unsigned behind)
{
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	uint32_t k = 0;
	unsigned queued = 0;

	while (queued < behind) {
		go.u.go.step = ++k;
		go.u.go.at_ns = nt_at(k);
		ck_assert_int_eq(node_send(&t->n, &go), 0);
		ck_assert_msg(k < 100000, "%u gos sent and none queued", k);
		if (nt_queue(t) > 0)
			queued++;
	}
	node_reply_sent(&t->n, NODE_REPLY_GO);
	return k;
}

/*
 * A go queued behind a full socket when the node closes (a run that fails
 * the node, hostd leaving): libuv cancels it, it is never counted written,
 * and the peer reads what did get through and then an end of file, so an
 * agent never sleeps on half a go.  A go after the close is refused, not
 * dropped in silence.
 */
START_TEST(node_go_queued_at_close)
{
	struct nt_host t;
	struct nt_reader rd = { .chunk = 4096 };
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	pthread_t th;
	uint32_t k;
	int r;

	nt_host_init(&t, NT_TINY_SNDBUF);
	k = nt_fill(&t, 1);
	ck_assert(node_reply_unwritten(&t.n, NODE_REPLY_GO));
	node_close(&t.n);
	uv_run(&t.loop, UV_RUN_DEFAULT);
	ck_assert_msg(node_reply_unwritten(&t.n, NODE_REPLY_GO),
		      "a go cancelled by the close counts as written (written %llu, queued %llu)",
		      (unsigned long long)t.n.written_total, (unsigned long long)t.n.queued_total);
	go.u.go.step = k + 1;
	r = node_send(&t.n, &go);
	ck_assert_msg(r == -ENOTCONN, "a go after the close: node_send returned %d", r);
	ck_assert_int_eq(uv_loop_close(&t.loop), 0);
	node_fini(&t.n);
	/* the peer: everything written, then the end of file (the thread
	 * returns only at it) */
	rd.fd = t.peer_fd;
	ck_assert_int_eq(pthread_create(&th, NULL, nt_read, &rd), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(rd.fd);
	ck_assert_uint_eq(rd.bytes, t.n.written_total);
	ck_assert_uint_eq(rd.errors, 0);
	/* the gos that got through are whole and in order; the last, queued
	 * one did not arrive */
	ck_assert_uint_gt(rd.nseen, 0);
	ck_assert_uint_lt(rd.nseen, k);
	for (size_t i = 0; i < rd.nseen; i++) {
		ck_assert_msg(rd.seen[i].kind == 'g' && rd.seen[i].value == i + 1,
			      "line %zu: %c %u where go %zu was due", i, rd.seen[i].kind,
			      rd.seen[i].value, i + 1);
		ck_assert_int_eq(rd.seen[i].at, nt_at((uint32_t)i + 1));
	}
	free(rd.seen);
}
END_TEST

static int nt_host_fd(struct nt_host *t)
{
	uv_os_fd_t fd;

	ck_assert_int_eq(uv_fileno((uv_handle_t *)&t->n.pipe, &fd), 0);
	return fd;
}

/*
 * The kernel out of buffer memory (ENOBUFS) for the go's direct write and
 * for its first retry: libuv takes it for EAGAIN, queues the go and writes
 * it later.  Every tenth go meets it; all arrive, none is refused.
 */
START_TEST(node_go_transient_enobufs)
{
	struct nt_host t;
	struct nt_reader rd = { .chunk = 4096 };
	struct proto_msg ping = { .type = PROTO_PING, .version = PROTO_VERSION };
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	pthread_t th;
	unsigned failed = 0;

	nt_host_init(&t, 64 * 1024);
	rd.fd = t.peer_fd;
	ck_assert_int_eq(pthread_create(&th, NULL, nt_read, &rd), 0);
	for (uint32_t k = 1; k <= 200; k++) {
		int r;

		ping.u.ping.seq = k;
		ping.u.ping.t1 = 1;
		ck_assert_int_eq(node_send(&t.n, &ping), 0);
		nt_drain(&t, 0, "before the go");
		if (k % 10 == 0)
			wf_arm(nt_host_fd(&t), ENOBUFS, 2);
		go.u.go.step = k;
		go.u.go.at_ns = nt_at(k);
		r = node_send(&t.n, &go);
		ck_assert_msg(r == 0, "go of step %u: node_send returned %d (%s) after ENOBUFS", k,
			      r, r < 0 ? strerror(-r) : "");
		node_reply_sent(&t.n, NODE_REPLY_GO);
		nt_drain(&t, 0, "the go after ENOBUFS");
		failed += wf_failed();
		wf_arm(-1, 0, 0);
	}
	ck_assert_msg(failed == 40, "%u writes failed with ENOBUFS, 40 were meant to", failed);
	ck_assert(!node_reply_unwritten(&t.n, NODE_REPLY_GO));
	nt_host_fini(&t);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(rd.fd);
	ck_assert_int_eq(nt_closed_calls, 0);
	for (uint32_t k = 1, i = 0; k <= 200; k++, i += 2) {
		ck_assert_msg(i + 1 < rd.nseen && rd.seen[i + 1].kind == 'g' &&
				      rd.seen[i + 1].value == k && rd.seen[i + 1].at == nt_at(k),
			      "the go of step %u did not arrive whole in its place (%zu lines seen)",
			      k, rd.nseen);
	}
	ck_assert_uint_eq(rd.nseen, 400);
	free(rd.seen);
}
END_TEST

/*
 * A queued write that fails for good (EIO: not EAGAIN, not the peer gone).
 * libuv ends that request with the error and goes on with the next: the
 * gos in it are lost on a channel that looks fine, and since they are never
 * counted written the go re-send (which skips a go still queued) would
 * never send them again.  Before the fix the node ignored the error: "6 of
 * 7 gos arrived (first missing: 6) ... the node said nothing".  It must
 * close the channel and say why.
 */
START_TEST(node_go_behind_failed_write)
{
	struct nt_host t;
	struct nt_reader rd = { .chunk = 4096 };
	pthread_t th;
	uint32_t k;
	int64_t deadline;

	nt_host_init(&t, NT_TINY_SNDBUF);
	k = nt_fill(&t, 2);
	/* the next write libuv makes fails; then the reader drains the socket */
	wf_arm(nt_host_fd(&t), EIO, 1);
	rd.fd = t.peer_fd;
	ck_assert_int_eq(pthread_create(&th, NULL, nt_read, &rd), 0);
	deadline = host_mono_ns() + 2000000000LL;
	while (nt_closed_calls == 0 && nt_queue(&t) > 0 && host_mono_ns() < deadline)
		uv_run(&t.loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(wf_failed(), 1);
	wf_arm(-1, 0, 0);
	bool reported = nt_closed_calls == 1, was_open = t.n.open;
	size_t waiting = nt_queue(&t);

	node_close(&t.n);
	uv_run(&t.loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&t.loop), 0);
	node_fini(&t.n);
	/* the peer gets an end of file either way */
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(rd.fd);
	uint32_t arrived = 0, first_missing = 0;

	for (size_t i = 0; i < rd.nseen; i++)
		if (rd.seen[i].kind == 'g')
			arrived++;
	for (uint32_t want = 1, i = 0; want <= k; want++) {
		if (i < rd.nseen && rd.seen[i].value == want) {
			i++;
			continue;
		}
		first_missing = want;
		break;
	}
	ck_assert_msg(reported && !was_open,
		      "a queued write failed with EIO: %u of %u gos "
		      "arrived (first missing: %u), %zu bytes still wait, and the node said "
		      "nothing (closed called %d times, open %d)",
		      arrived, k, first_missing, waiting, nt_closed_calls, was_open);
	free(rd.seen);
}
END_TEST

/*
 * The direct write of a go refused for good (EIO): the caller hears it
 * (hostd's go_sent makes it an event), and the node, which lost a message
 * on a channel that looks fine, is closed from the loop with the error,
 * not in the middle of the caller's loop over the nodes.
 */
START_TEST(node_go_direct_write_error)
{
	struct nt_host t;
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	int r;

	nt_host_init(&t, 64 * 1024);
	nt_drain(&t, 0, "the sync");
	wf_arm(nt_host_fd(&t), EIO, 1);
	go.u.go.step = 1;
	r = node_send(&t.n, &go);
	ck_assert_uint_eq(wf_failed(), 1);
	wf_arm(-1, 0, 0);
	ck_assert_msg(r == UV_EIO, "node_send returned %d (%s) for a write failed with EIO", r,
		      r < 0 ? strerror(-r) : "");
	ck_assert_msg(nt_closed_calls == 0, "closed called inside node_send");
	for (int i = 0; i < 10 && nt_closed_calls == 0; i++)
		uv_run(&t.loop, UV_RUN_NOWAIT);
	ck_assert_msg(nt_closed_calls == 1 && nt_closed_err == UV_EIO && !t.n.open,
		      "after a go's write failed with EIO: closed called %d times (err %d), node "
		      "open %d",
		      nt_closed_calls, nt_closed_err, t.n.open);
	uv_run(&t.loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&t.loop), 0);
	node_fini(&t.n);
	close(t.peer_fd);
}
END_TEST

/* ---- the agent's side: the real binary --------------------------------- */

/* The next event, or a failure naming the step when nothing comes within
 * ms: a go that got no started in time was lost. */
static struct hev gt_next(struct host *h, uint32_t step, const char *what, int ms)
{
	if (!h->len) {
		struct pollfd p = { .fd = h->fd, .events = POLLIN };

		ck_assert_msg(poll(&p, 1, ms) == 1,
			      "step %u: nothing from the agent within %d ms "
			      "after %s: the go was lost",
			      step, ms, what);
	}
	return host_next(h);
}

static void gt_encode_go(struct proto_buf *b, uint32_t step, int64_t at_ns)
{
	struct proto_msg m = { .type = PROTO_GO, .version = PROTO_VERSION };

	m.u.go.step = step;
	m.u.go.at_ns = at_ns;
	b->len = 0;
	ck_assert_int_eq(proto_encode(&m, b), 0);
}

static void gt_write(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_msg(n > 0, "write of %zu bytes to the agent: %s", len, strerror(errno));
		data += n;
		len -= (size_t)n;
	}
}

/* One byte a write, with a pause after each so that each is its own read. */
static void gt_write_bytewise(int fd, const char *data, size_t len, long pause_us)
{
	for (size_t i = 0; i < len; i++) {
		gt_write(fd, data + i, 1);
		gt_sleep_us(pause_us);
	}
}

/* started(step) first, then results up to done(step); pongs may come
 * between.  Returns the pongs seen. */
static unsigned gt_run_to_done(struct host *h, uint32_t step, const char *how)
{
	bool started = false;
	unsigned pongs = 0;

	for (;;) {
		struct hev e = gt_next(h, step, how, GT_LOST_MS);
		struct proto_msg *m = &e.m;

		ck_assert_msg(e.ev == PROTO_EV_MSG, "step %u (%s): event %d (err %d) from the agent",
			      step, how, (int)e.ev, e.err);
		switch (m->type) {
		case PROTO_STARTED:
			ck_assert_msg(!started && m->u.started.step == step,
				      "step %u (%s): started "
				      "for step %u%s",
				      step, how, m->u.started.step, started ? " again" : "");
			started = true;
			break;
		case PROTO_PONG: pongs++; break;
		case PROTO_RESULT:
			ck_assert_msg(started, "step %u (%s): a result before started", step, how);
			ck_assert_uint_eq(m->u.result.step, step);
			break;
		case PROTO_DONE:
			ck_assert_msg(started, "step %u (%s): done without started", step, how);
			ck_assert_uint_eq(m->u.done.step, step);
			ck_assert_int_eq(m->u.done.exit_status, 0);
			proto_msg_clear(m);
			return pongs;
		case PROTO_ERROR:
			ck_abort_msg("step %u (%s): error %s from the agent: %s", step, how,
				     m->u.error.code, m->u.error.text);
			break;
		default:
			ck_abort_msg("step %u (%s): unexpected %s", step, how,
				     proto_type_name(m->type));
		}
		proto_msg_clear(m);
	}
}

static void gt_expect_ready(struct host *h, uint32_t step)
{
	struct hev e = gt_next(h, step, "the previous done", GT_LOST_MS);

	ck_assert_msg(e.ev == PROTO_EV_MSG && e.m.type == PROTO_READY && e.m.u.ready.step == step,
		      "expected ready for step %u, got event %d %s (step %u)", step, (int)e.ev,
		      e.ev == PROTO_EV_MSG ? proto_type_name(e.m.type) : "-", e.m.u.ready.step);
	proto_msg_clear(&e.m);
}

/* Each go byte by byte, 2 ms apart: no started before its newline, and
 * the started right after it. */
START_TEST(agent_go_split_byte_by_byte)
{
	struct host h;
	struct proto_buf b = { 0 };
	struct pollfd p;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 3);
	for (uint32_t k = 1; k <= 3; k++) {
		gt_expect_ready(&h, k);
		gt_encode_go(&b, k, 0);
		gt_write_bytewise(h.fd, b.data, b.len - 1, 2000);
		p = (struct pollfd){ .fd = h.fd, .events = POLLIN };
		ck_assert_msg(poll(&p, 1, 100) == 0,
			      "step %u: the agent said something before the "
			      "go's newline",
			      k);
		gt_write(h.fd, b.data + b.len - 1, 1);
		gt_run_to_done(&h, k, "a go written byte by byte");
	}
	proto_buf_free(&b);
	host_bye(&h);
}
END_TEST

/* The agent's sync answered by one write holding the ack, the plan and the
 * go; later, after a resync the host's bad line caused, the ack and the go
 * again in one write. */
START_TEST(agent_sync_ack_and_go_one_buffer)
{
	struct host h;
	struct proto_buf b = { 0 };
	struct proto_msg m = { .version = PROTO_VERSION }, plan;
	uint64_t nonce;
	int resets = 0;

	host_spawn(&h, NULL);
	nonce = host_expect_sync(&h);
	m.type = PROTO_SYNC_ACK;
	m.u.sync.nonce = nonce;
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	/* the plan of host_plan, encoded into the same buffer */
	host_plan_msg(&plan, NODE, NULL, 2);
	ck_assert_int_eq(proto_encode(&plan, &b), 0);
	proto_msg_clear(&plan);
	m = (struct proto_msg){ .type = PROTO_GO, .version = PROTO_VERSION };
	m.u.go.step = 1;
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	gt_write(h.fd, b.data, b.len);
	host_expect(&h, PROTO_HELLO, NULL);
	gt_expect_ready(&h, 1);
	gt_run_to_done(&h, 1, "ack, plan and go in one write");
	gt_expect_ready(&h, 2);

	/* a bad line: the agent says so and restarts its link */
	host_send_raw(&h, "{\"v\":1,\"type\":\"nonsense\"\n");
	for (;;) {
		struct hev e = gt_next(&h, 2, "a bad line", GT_LOST_MS);

		if (e.ev == PROTO_EV_RESET) {
			resets++;
			continue;
		}
		ck_assert_msg(e.ev == PROTO_EV_MSG, "event %d after a bad line", (int)e.ev);
		if (e.m.type == PROTO_SYNC) {
			nonce = e.m.u.sync.nonce;
			break;
		}
		ck_assert_msg(e.m.type == PROTO_ERROR, "%s after a bad line",
			      proto_type_name(e.m.type));
		proto_msg_clear(&e.m);
	}
	ck_assert_int_eq(resets, 1);
	b.len = 0;
	m = (struct proto_msg){ .type = PROTO_SYNC_ACK, .version = PROTO_VERSION };
	m.u.sync.nonce = nonce;
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	m = (struct proto_msg){ .type = PROTO_GO, .version = PROTO_VERSION };
	m.u.go.step = 2;
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	gt_write(h.fd, b.data, b.len);
	/* it re-announces itself (its error about the bad line waited for
	 * the link), then acts on the go behind the ack */
	host_expect(&h, PROTO_HELLO, NULL);
	for (int errors = 0;; errors++) {
		struct hev e = gt_next(&h, 2, "the ack and go after a resync", GT_LOST_MS);

		ck_assert_msg(e.ev == PROTO_EV_MSG, "event %d after the ack", (int)e.ev);
		if (e.m.type == PROTO_READY) {
			ck_assert_uint_eq(e.m.u.ready.step, 2);
			break;
		}
		ck_assert_msg(e.m.type == PROTO_ERROR && !strcmp(e.m.u.error.code, "bad-input") &&
				      errors == 0,
			      "after the ack: %s (%s) where ready for step 2 was due",
			      proto_type_name(e.m.type),
			      e.m.type == PROTO_ERROR ? e.m.u.error.code : "-");
		proto_msg_clear(&e.m);
	}
	gt_run_to_done(&h, 2, "sync-ack and go in one write after a resync");
	proto_buf_free(&b);
	host_bye(&h);
}
END_TEST

/* The agent's children now (its prepared step, its keeper). */
static size_t gt_children(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	FILE *f;
	size_t n = 0;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	while (n < max && fscanf(f, "%d", &c) == 1)
		out[n++] = c;
	fclose(f);
	return n;
}

/* Gone, or a zombie nobody has reaped yet. */
static bool gt_gone(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;
	bool gone = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) && p[1] && p[2] != 'Z')
		gone = false;
	fclose(f);
	return gone;
}

/*
 * A go that never comes: the agent waits without a timeout of its own and
 * says nothing; the barrier deadline is hostd's, which fails the node by
 * closing its channel (and SIGKILLs a local guest).  At that end of file
 * the agent leaves at once, with its prepared child and its keeper.
 */
START_TEST(agent_go_never_comes_eof_ends_it)
{
	struct host h;
	struct pollfd p;
	pid_t kids[8];
	size_t nkids;
	int st;
	int64_t t0;

	host_spawn(&h, NULL);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, 1);
	gt_expect_ready(&h, 1);
	p = (struct pollfd){ .fd = h.fd, .events = POLLIN };
	ck_assert_msg(poll(&p, 1, 500) == 0, "the agent said something while waiting for a go");
	nkids = gt_children(h.pid, kids, 8);
	ck_assert_msg(nkids >= 1, "no prepared child under the agent (pid %d)", (int)h.pid);
	t0 = host_mono_ns();
	ck_assert_int_eq(shutdown(h.fd, SHUT_RDWR), 0);
	st = host_wait(&h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent wait status %#x", st);
	ck_assert_msg(host_mono_ns() - t0 < 2000000000LL, "the agent took %lld ms to leave",
		      (long long)((host_mono_ns() - t0) / 1000000));
	for (size_t i = 0; i < nkids; i++) {
		for (int tries = 0; tries < 200 && !gt_gone(kids[i]); tries++)
			gt_sleep_us(10000);
		ck_assert_msg(gt_gone(kids[i]), "the agent's child %d outlived it by 2 s",
			      (int)kids[i]);
	}
}
END_TEST

#define GT_BARRIERS 400

/*
 * GT_BARRIERS barriers in a row, each go sent the moment its ready is read
 * (the case: the go follows the ready fastest), over the smallest
 * socket buffers on both ends.  The go is written whole, split in two at a
 * point that moves, byte by byte, behind a ping in the same write, or for
 * an instant 2 ms ahead.  No go may be lost.
 */
START_TEST(agent_many_barriers_no_go_lost)
{
	static const char *const how[] = { "whole", "split in two", "byte by byte",
					   "glued behind a ping", "2 ms ahead" };
	struct host h;
	struct proto_buf b = { 0 };
	unsigned pongs = 0, pings = 0;
	int64_t t0 = host_mono_ns();

	host_spawn_sndbuf(&h, NULL, 1);
	host_handshake(&h, NULL);
	host_plan(&h, NODE, NULL, GT_BARRIERS);
	for (uint32_t k = 1; k <= GT_BARRIERS; k++) {
		unsigned mode = k % 5;

		gt_expect_ready(&h, k);
		if (mode == 3) {
			struct proto_msg ping = { .type = PROTO_PING, .version = PROTO_VERSION };

			b.len = 0;
			ping.u.ping.seq = k;
			ping.u.ping.t1 = 1;
			ck_assert_int_eq(proto_encode(&ping, &b), 0);
			pings++;
			/* proto_encode appends: the go follows the ping */
			struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };

			go.u.go.step = k;
			ck_assert_int_eq(proto_encode(&go, &b), 0);
		} else {
			gt_encode_go(&b, k, mode == 4 ? host_mono_ns() + 2000000 : 0);
		}
		if (mode == 1) {
			size_t cut = 1 + (k * 7) % (b.len - 1);

			gt_write(h.fd, b.data, cut);
			gt_sleep_us(200);
			gt_write(h.fd, b.data + cut, b.len - cut);
		} else if (mode == 2) {
			gt_write_bytewise(h.fd, b.data, b.len, 20);
		} else {
			gt_write(h.fd, b.data, b.len);
		}
		pongs += gt_run_to_done(&h, k, how[mode]);
	}
	ck_assert_uint_eq(pongs, pings);
	fprintf(stderr, "agent_many_barriers_no_go_lost: %d barriers in %.2f s, no go lost\n",
		GT_BARRIERS, (double)(host_mono_ns() - t0) / 1e9);
	proto_buf_free(&b);
	host_bye(&h);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("go-transport");
	TCase *tn = tcase_create("hostd-node");
	TCase *ta = tcase_create("agent");
	SRunner *sr;
	int failed;

	if (host_find_agent(argc, argv, "test-go-transport") < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	tcase_set_timeout(tn, 30);
	tcase_set_timeout(ta, 30);
	tcase_add_test(tn, node_go_tiny_sndbuf_slow_reader);
	tcase_add_test(tn, node_go_queued_at_close);
	tcase_add_test(tn, node_go_transient_enobufs);
	tcase_add_test(tn, node_go_behind_failed_write);
	tcase_add_test(tn, node_go_direct_write_error);
	tcase_add_test(ta, agent_go_split_byte_by_byte);
	tcase_add_test(ta, agent_sync_ack_and_go_one_buffer);
	tcase_add_test(ta, agent_many_barriers_no_go_lost);
	tcase_add_test(ta, agent_go_never_comes_eof_ends_it);
	suite_add_tcase(s, tn);
	suite_add_tcase(s, ta);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
