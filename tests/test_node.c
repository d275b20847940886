// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd's channel to one agent (hostd/node.c) on a real socketpair and a
 * real libuv loop, with the test as the agent: framing (a line split at
 * every byte, lines joined in one read, a partial line cut by 0xFF), the
 * resync handshake both ways, refused lines (not JSON, over
 * PROTO_LINE_MAX), and the limits (NODE_MSGS_PER_SEC_MAX lines within a
 * second, NODE_QUEUE_MAX bytes for a peer that does not read, a sync
 * repeated before our ack was read).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "node.h"
#include "testlib.h"

#define GOT_MAX 64

static uv_loop_t loop;
static struct node n;
static int peer = -1; /* the agent's end */
static struct proto_decoder peer_dec;

/* what the node told its owner */
static struct {
	enum proto_type type[GOT_MAX];
	uint32_t step[GOT_MAX]; /* ready's */
	size_t messages;
	unsigned resynced, peer_resets, closed;
	int closed_err;
	int error_err[GOT_MAX];
	char error_detail[GOT_MAX][128];
	size_t errors;
	unsigned floods;
	char flood_why[256];
} own;

/* what the agent read */
static struct {
	struct proto_msg m[GOT_MAX];
	size_t n;
	unsigned resets;
} peer_got;

static void on_message(struct node *nd, struct proto_msg *msg)
{
	ck_assert_ptr_eq(nd, &n);
	ck_assert_msg(own.messages < GOT_MAX, "more than %d messages", GOT_MAX);
	own.type[own.messages] = msg->type;
	own.step[own.messages] = msg->type == PROTO_READY ? msg->u.ready.step : 0;
	own.messages++;
}

static void on_resynced(struct node *nd)
{
	(void)nd;
	own.resynced++;
}

static void on_protocol_error(struct node *nd, int err, const char *detail)
{
	(void)nd;
	ck_assert_msg(own.errors < GOT_MAX, "more than %d protocol errors", GOT_MAX);
	own.error_err[own.errors] = err;
	snprintf(own.error_detail[own.errors], sizeof(own.error_detail[0]), "%s", detail ? detail : "");
	own.errors++;
}

static void on_closed(struct node *nd, int err)
{
	(void)nd;
	own.closed++;
	own.closed_err = err;
}

static void on_peer_reset(struct node *nd)
{
	(void)nd;
	own.peer_resets++;
}

static void on_flooding(struct node *nd, const char *why)
{
	(void)nd;
	own.floods++;
	snprintf(own.flood_why, sizeof(own.flood_why), "%s", why);
}

static const struct node_ops ops = {
	.message = on_message,
	.resynced = on_resynced,
	.protocol_error = on_protocol_error,
	.closed = on_closed,
	.peer_reset = on_peer_reset,
	.flooding = on_flooding,
};

/* The node's end was written to before: a few turns of the loop without
 * blocking take every byte waiting on a local socket. */
static void pump(void)
{
	for (int i = 0; i < 4; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
}

static void peer_write(const void *data, size_t len)
{
	ssize_t r = write(peer, data, len);

	ck_assert_msg(r == (ssize_t)len, "agent wrote %zd of %zu bytes: %s", r, len, strerror(errno));
}

static void peer_send(const struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	struct proto_msg c = *m;

	c.version = PROTO_VERSION;
	ck_assert_int_eq(proto_encode(&c, &b), 0);
	peer_write(b.data, b.len);
	proto_buf_free(&b);
}

static void peer_ready(uint32_t step)
{
	struct proto_msg m = { .type = PROTO_READY };

	m.u.ready.step = step;
	peer_send(&m);
}

static void peer_sync(enum proto_type type, uint64_t nonce)
{
	struct proto_msg m = { .type = type };

	m.u.sync.nonce = nonce;
	peer_send(&m);
}

static void peer_line(void *ctx, enum proto_event ev, struct proto_msg *msg, int err, const char *detail)
{
	(void)ctx;
	if (ev == PROTO_EV_RESET) {
		peer_got.resets++;
		return;
	}
	ck_assert_msg(ev == PROTO_EV_MSG, "hostd wrote a line the agent refuses: %s: %s",
		      strerror(-err), detail ? detail : "");
	ck_assert_msg(peer_got.n < GOT_MAX, "more than %d lines from hostd", GOT_MAX);
	peer_got.m[peer_got.n++] = *msg;
	memset(msg, 0, sizeof(*msg));
}

/* Reads what hostd wrote so far (forgetting what was read before). */
static void peer_read(void)
{
	char buf[64 * 1024];
	ssize_t r;

	for (size_t i = 0; i < peer_got.n; i++)
		proto_msg_clear(&peer_got.m[i]);
	memset(&peer_got, 0, sizeof(peer_got));
	pump();
	while ((r = read(peer, buf, sizeof(buf))) > 0)
		proto_decoder_feed(&peer_dec, buf, (size_t)r, peer_line, NULL);
	ck_assert_msg(r < 0 && errno == EAGAIN, "agent's read: %zd (%s)", r, strerror(errno));
}

/* Reads hostd's lines: one reset and one sync, whose nonce it returns. */
static uint64_t peer_read_sync(void)
{
	peer_read();
	ck_assert_uint_eq(peer_got.resets, 1);
	ck_assert_uint_eq(peer_got.n, 1);
	ck_assert_msg(peer_got.m[0].type == PROTO_SYNC, "hostd wrote %s, expected sync",
		      proto_type_name(peer_got.m[0].type));
	return peer_got.m[0].u.sync.nonce;
}

static void setup(void)
{
	int sv[2];

	memset(&own, 0, sizeof(own));
	memset(&peer_got, 0, sizeof(peer_got));
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	peer = sv[1];
	proto_decoder_init(&peer_dec);
	node_init(&n, "vm-1", 3, &own, &ops);
	ck_assert_str_eq(n.name, "vm-1");
	ck_assert_uint_eq(n.index, 3);
	ck_assert_int_eq(node_attach(&n, &loop, sv[0]), 0);
}

static void teardown(void)
{
	node_close(&n);
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	node_fini(&n);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	for (size_t i = 0; i < peer_got.n; i++)
		proto_msg_clear(&peer_got.m[i]);
	proto_decoder_free(&peer_dec);
	if (peer >= 0)
		close(peer);
}

/* Attached and synced: the agent acked hostd's sync. */
static void synced(void)
{
	peer_sync(PROTO_SYNC_ACK, peer_read_sync());
	pump();
	ck_assert_uint_eq(own.resynced, 1);
	ck_assert(n.link.synced);
}

/* hostd waits for the ack of nonce: a ready before it is dropped, the ack
 * completes the resync (the resynced'th), and a ready after it is taken. */
static void expect_dropped_until_ack(uint64_t nonce, unsigned resynced)
{
	ck_assert_uint_eq(nonce, n.link.nonce);
	ck_assert(!n.link.synced);
	peer_ready(5);
	pump();
	ck_assert_uint_eq(own.messages, 0);
	peer_sync(PROTO_SYNC_ACK, nonce);
	peer_ready(6);
	pump();
	ck_assert_uint_eq(own.resynced, resynced);
	ck_assert_uint_eq(own.messages, 1);
	ck_assert_int_eq(own.type[0], PROTO_READY);
	ck_assert_uint_eq(own.step[0], 6);
}

START_TEST(test_attach_syncs)
{
	uint64_t nonce = peer_read_sync();

	/* an ack of another nonce does not sync */
	peer_sync(PROTO_SYNC_ACK, nonce + 1);
	pump();
	ck_assert_uint_eq(own.resynced, 0);
	expect_dropped_until_ack(nonce, 1);
}
END_TEST

/* The agent's sync is acked whether or not ours was; sync and ack are the
 * link's, never the owner's. */
START_TEST(test_peer_sync_acked)
{
	peer_read_sync();
	peer_sync(PROTO_SYNC, 99);
	peer_read();
	ck_assert_uint_eq(peer_got.n, 1);
	ck_assert_int_eq(peer_got.m[0].type, PROTO_SYNC_ACK);
	ck_assert_uint_eq(peer_got.m[0].u.sync.nonce, 99);
	ck_assert_uint_eq(own.messages, 0);
}
END_TEST

/* One line written a byte at a time, each byte its own read: delivered
 * once, whole.  Then the same line cut in two at every place. */
START_TEST(test_split_reads)
{
	struct proto_msg m = { .type = PROTO_READY, .version = PROTO_VERSION };
	struct proto_buf b = { 0 };

	synced();
	m.u.ready.step = 7;
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	for (size_t i = 0; i < b.len; i++) {
		peer_write(b.data + i, 1);
		pump();
		ck_assert_msg(own.messages == (i + 1 == b.len),
			      "%zu messages after %zu of %zu bytes", own.messages, i + 1, b.len);
	}
	ck_assert_uint_eq(own.step[0], 7);
	for (size_t cut = 1; cut < b.len; cut++) {
		peer_write(b.data, cut);
		pump();
		peer_write(b.data + cut, b.len - cut);
		pump();
		ck_assert_msg(own.messages == cut + 1, "%zu messages after the cut at %zu",
			      own.messages, cut);
	}
	ck_assert_uint_eq(own.errors, 0);
	proto_buf_free(&b);
}
END_TEST

/* Three lines in one write: three messages, in order. */
START_TEST(test_lines_joined)
{
	struct proto_buf b = { 0 };

	synced();
	for (uint32_t i = 1; i <= 3; i++) {
		struct proto_msg m = { .type = PROTO_READY, .version = PROTO_VERSION };

		m.u.ready.step = i;
		ck_assert_int_eq(proto_encode(&m, &b), 0);
	}
	peer_write(b.data, b.len);
	pump();
	ck_assert_uint_eq(own.messages, 3);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(own.step[i], i + 1);
	proto_buf_free(&b);
}
END_TEST

/* 0xFF drops the partial line before it: the agent restarted its side. */
START_TEST(test_reset_drops_partial_line)
{
	static const char half[] = "{\"v\":1,\"type\":\"ready\",\"st";
	const unsigned char ff = PROTO_RESET_BYTE;

	synced();
	peer_read();
	peer_write(half, sizeof(half) - 1);
	peer_write(&ff, 1);
	peer_ready(4);
	pump();
	ck_assert_uint_eq(own.peer_resets, 1);
	ck_assert_uint_eq(own.errors, 0);
	ck_assert_uint_eq(own.messages, 1);
	ck_assert_uint_eq(own.step[0], 4);
	/* our sync was acked: nothing is said again */
	peer_read();
	ck_assert_uint_eq(peer_got.n, 0);
}
END_TEST

/* The agent's 0xFF while our sync waits for its ack: our sync once more,
 * same nonce (it may have been written before anybody read the port). */
START_TEST(test_reset_before_ack_resends_sync_once)
{
	const unsigned char ff = PROTO_RESET_BYTE;
	uint64_t nonce = peer_read_sync();

	peer_write(&ff, 1);
	ck_assert_uint_eq(peer_read_sync(), nonce);
	peer_write(&ff, 1);
	peer_read();
	ck_assert_uint_eq(peer_got.n, 0);
	ck_assert_uint_eq(own.peer_resets, 2);
	peer_sync(PROTO_SYNC_ACK, nonce);
	pump();
	ck_assert_uint_eq(own.resynced, 1);
}
END_TEST

/* A refused line: counted, reported with why, and hostd asks the agent
 * where it is (a new sync) while it goes on taking its messages. */
START_TEST(test_bad_line)
{
	static const char *lines[] = { "not json\n", "{\"v\":2,\"type\":\"ready\",\"step\":1}\n",
				       "{\"v\":1,\"type\":\"nonsense\"}\n" };
	static const int errs[] = { -EBADMSG, -EPROTONOSUPPORT, -ENOMSG };
	uint64_t first;

	synced();
	first = n.link.nonce;
	peer_write(lines[_i], strlen(lines[_i]));
	peer_ready(2);
	pump();
	ck_assert_uint_eq(own.errors, 1);
	ck_assert_msg(own.error_err[0] == errs[_i], "error %d (%s) for '%s', expected %d",
		      own.error_err[0], strerror(-own.error_err[0]), lines[_i], errs[_i]);
	ck_assert_uint_eq(n.protocol_errors, 1);
	ck_assert_uint_eq(own.messages, 1);
	ck_assert_uint_eq(own.step[0], 2);
	ck_assert_uint_ne(peer_read_sync(), first);
	ck_assert(n.link.synced);
}
END_TEST

/* A line over PROTO_LINE_MAX is refused as -EMSGSIZE without holding more
 * than the limit; the line after it is whole and delivered. */
START_TEST(test_oversize_line)
{
	size_t len = PROTO_LINE_MAX + 100;
	char *big = malloc(len + 1);

	synced();
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', len);
	big[len] = '\n';
	/* in pieces: the socket need not hold it all at once */
	for (size_t off = 0; off < len + 1; off += 4096) {
		peer_write(big + off, len + 1 - off < 4096 ? len + 1 - off : 4096);
		pump();
	}
	peer_ready(3);
	pump();
	free(big);
	ck_assert_uint_eq(own.errors, 1);
	ck_assert_int_eq(own.error_err[0], -EMSGSIZE);
	ck_assert_uint_le(n.dec.cap, PROTO_LINE_MAX + 1);
	ck_assert_uint_eq(own.messages, 1);
	ck_assert_uint_eq(own.step[0], 3);
}
END_TEST

/* hostd restarts the link: nothing but sync and ack is taken until the
 * agent acks the new nonce. */
START_TEST(test_resync)
{
	uint64_t nonce;

	synced();
	node_resync(&n);
	nonce = peer_read_sync();
	expect_dropped_until_ack(nonce, 2);
}
END_TEST

/* NODE_MSGS_PER_SEC_MAX lines within a second are taken; one more and the
 * node reports flooding once, and reads no further. */
START_TEST(test_flood_limit)
{
	size_t lines = NODE_MSGS_PER_SEC_MAX + (_i ? 1 : 0);
	unsigned char *ff = malloc(lines);

	ck_assert_ptr_nonnull(ff);
	memset(ff, PROTO_RESET_BYTE, lines);
	/* the agent's first bytes, in one write and so one read: every line
	 * counts in one window, opened by that read */
	peer_write(ff, lines);
	free(ff);
	pump();
	if (!_i) {
		ck_assert_uint_eq(own.floods, 0);
		ck_assert_uint_eq(own.peer_resets, NODE_MSGS_PER_SEC_MAX);
		return;
	}
	ck_assert_uint_eq(own.floods, 1);
	ck_assert_uint_eq(own.peer_resets, NODE_MSGS_PER_SEC_MAX);
	ck_assert_str_eq(own.flood_why, "flooded its channel: 20001 lines within one second, "
					"the limit is 20000");
	ck_assert(n.flooded);
	peer_ready(1);
	pump();
	ck_assert_uint_eq(own.messages, 0);
	ck_assert_uint_eq(own.floods, 1);
}
END_TEST

/* len bytes (at most 64 KiB) that the agent will never read */
static int send_filler(size_t len)
{
	static char filler[64 * 1024];

	ck_assert_uint_le(len, sizeof(filler));
	memset(filler, 'y', sizeof(filler));
	return node_send_bytes(&n, filler, len);
}

/* An agent that reads nothing: once NODE_QUEUE_MAX bytes wait, sends are
 * refused and the node reports flooding from the loop, once. */
START_TEST(test_queue_limit)
{
	int r = 0;
	unsigned sends;

	synced();
	for (sends = 0; sends < 1000 && r == 0; sends++)
		r = send_filler(32 * 1024);
	ck_assert_msg(r == -ENOBUFS, "send %u: %d (%s), expected -ENOBUFS", sends, r, strerror(-r));
	ck_assert_uint_ge(uv_stream_get_write_queue_size((uv_stream_t *)&n.pipe), NODE_QUEUE_MAX);
	ck_assert_uint_eq(own.floods, 0); /* not from inside the sender's loop */
	ck_assert_int_eq(send_filler(1), -ENOBUFS);
	pump();
	ck_assert_uint_eq(own.floods, 1);
	ck_assert_msg(strstr(own.flood_why, "does not read its channel") &&
			      strstr(own.flood_why, "the limit is 262144"),
		      "why: '%s'", own.flood_why);
	ck_assert(node_reply_unwritten(&n, NODE_REPLY_GO) == false);
	node_reply_sent(&n, NODE_REPLY_GO);
	ck_assert(node_reply_unwritten(&n, NODE_REPLY_GO));
}
END_TEST

/* A sync repeated while our ack of the first waits to be read: the same
 * nonce again is let be, another is a flood. */
START_TEST(test_sync_before_ack_read)
{
	int one = 1;
	uv_os_fd_t fd;

	synced();
	/* the smallest socket buffer, filled: what hostd sends now waits */
	ck_assert_int_eq(uv_fileno((uv_handle_t *)&n.pipe, &fd), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one)), 0);
	ck_assert_int_eq(send_filler(64 * 1024), 0);
	ck_assert(node_reply_unwritten(&n, NODE_REPLY_ACK) == false);
	peer_sync(PROTO_SYNC, 41);
	pump();
	ck_assert(node_reply_unwritten(&n, NODE_REPLY_ACK));
	peer_sync(PROTO_SYNC, 41);
	pump();
	ck_assert_uint_eq(own.floods, 0);
	peer_sync(PROTO_SYNC, 42);
	pump();
	ck_assert_uint_eq(own.floods, 1);
	ck_assert_str_eq(own.flood_why, "sent sync again before reading our sync-ack");
}
END_TEST

/* The agent hangs up: closed once with no error; sends then fail. */
START_TEST(test_peer_closes)
{
	struct proto_msg m = { .type = PROTO_GO, .version = PROTO_VERSION };

	synced();
	close(peer);
	peer = -1;
	pump();
	ck_assert_uint_eq(own.closed, 1);
	ck_assert_int_eq(own.closed_err, 0);
	ck_assert(!n.open);
	m.u.go.step = 1;
	ck_assert_int_eq(node_send(&n, &m), -ENOTCONN);
	ck_assert_int_eq(node_send_bytes(&n, "x", 1), -ENOTCONN);
}
END_TEST

/* node_send writes one whole line the agent decodes as sent. */
START_TEST(test_send)
{
	struct proto_msg m = { .type = PROTO_GO, .version = PROTO_VERSION };

	synced();
	peer_read();
	m.u.go.step = 9;
	m.u.go.at_ns = 123456789;
	ck_assert_int_eq(node_send(&n, &m), 0);
	peer_read();
	ck_assert_uint_eq(peer_got.n, 1);
	ck_assert(proto_msg_equal(&peer_got.m[0], &m));
	ck_assert_uint_eq(n.written_total, n.queued_total);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("node");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_attach_syncs);
	tcase_add_test(tc, test_peer_sync_acked);
	tcase_add_test(tc, test_split_reads);
	tcase_add_test(tc, test_lines_joined);
	tcase_add_test(tc, test_reset_drops_partial_line);
	tcase_add_test(tc, test_reset_before_ack_resends_sync_once);
	tcase_add_loop_test(tc, test_bad_line, 0, 3);
	tcase_add_test(tc, test_oversize_line);
	tcase_add_test(tc, test_resync);
	tcase_add_loop_test(tc, test_flood_limit, 0, 2);
	tcase_add_test(tc, test_queue_limit);
	tcase_add_test(tc, test_sync_before_ack_read);
	tcase_add_test(tc, test_peer_closes);
	tcase_add_test(tc, test_send);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
