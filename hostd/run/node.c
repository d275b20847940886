// SPDX-License-Identifier: GPL-2.0-or-later
#include "node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "uv_errno.h"
#include "xalloc.h"

struct write_req {
	uv_write_t req;
	struct node *n;
	size_t len;
	char data[];
};

static uint64_t node_nonce(const struct node *n)
{
	/* Only needs to differ from the previous sync: a counter mixed with
	 * the address keeps two restarts in a row apart. */
	static uint64_t counter;
	return ((uint64_t)(uintptr_t)n << 16) ^ ++counter;
}

void node_init(struct node *n, const char *name, size_t index, void *owner, const struct node_ops *ops)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->index = index;
	n->owner = owner;
	n->ops = ops;
	proto_decoder_init(&n->dec);
}

/* The peer gone (EPIPE, ECONNRESET) shows as an end of file on the read
 * side, our own close as ECANCELED; any other write error lost bytes on a
 * channel that looks fine. */
static bool write_error_silent(int err)
{
	return err < 0 && err != -ECANCELED && err != -EPIPE && err != -ECONNRESET;
}

static void write_cb(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct node *n = w->n;
	status = errno_from_uv(status);
	if (status == 0)
		n->written_total += w->len;
	free(w);
	/* libuv dropped these bytes and goes on with the requests behind
	 * them: a go lost, or a line cut in two, and a go never counted
	 * written is never sent again (issue 19).  A channel that lost bytes
	 * cannot be trusted: close it and say why. */
	if (write_error_silent(status) && n->open) {
		node_close(n);
		n->ops->closed(n, status);
	}
}

static void report_cb(uv_timer_t *t)
{
	struct node *n = t->data;
	if (!n->open)
		return;
	if (n->report_err) {
		node_close(n);
		n->ops->closed(n, n->report_err);
		return;
	}
	n->ops->flooding(n, n->report_why);
}

/* A write refused at once: the caller learns it from the return value,
 * the owner from the loop (the caller may be looping over every node). */
static void write_refused(struct node *n, int err)
{
	if (!write_error_silent(err) || n->report_err || n->flooded)
		return;
	n->report_err = err;
	uv_read_stop((uv_stream_t *)&n->pipe);
	uv_timer_start(&n->report, report_cb, 0, 0);
}

/* The peer lets our bytes pile up: stop reading it and say so from the
 * loop, outside whatever loop over the nodes is sending. */
static void queue_full(struct node *n, size_t queued)
{
	if (n->flooded)
		return;
	n->flooded = true;
	uv_read_stop((uv_stream_t *)&n->pipe);
	snprintf(n->report_why, sizeof(n->report_why),
		 "does not read its channel: %zu bytes wait for it, the limit is %d", queued,
		 NODE_QUEUE_MAX);
	uv_timer_start(&n->report, report_cb, 0, 0);
}

bool node_reply_unwritten(const struct node *n, enum node_reply kind)
{
	return n->written_total < n->reply_mark[kind];
}

void node_reply_sent(struct node *n, enum node_reply kind)
{
	n->reply_mark[kind] = n->queued_total;
}

/* Writes what it can at once and queues the rest behind it; libuv keeps
 * queued writes in order, and a direct write only happens when nothing is
 * queued, so bytes never overtake each other. */
int node_send_bytes(struct node *n, const char *data, size_t len)
{
	if (!n->open)
		return -ENOTCONN;
	uv_stream_t *s = (uv_stream_t *)&n->pipe;
	size_t done = 0, queued = uv_stream_get_write_queue_size(s);
	if (queued >= NODE_QUEUE_MAX) {
		queue_full(n, queued);
		return -ENOBUFS;
	}
	if (queued == 0) {
		uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
		int r = errno_from_uv(uv_try_write(s, &b, 1));
		if (r >= 0)
			done = (size_t)r;
		else if (r != -EAGAIN) {
			write_refused(n, r);
			return r;
		}
	}
	n->queued_total += len;
	n->written_total += done;
	if (done == len)
		return 0;
	struct write_req *w = xmalloc(sizeof(*w) + len - done);
	w->n = n;
	w->len = len - done;
	memcpy(w->data, data + done, len - done);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)(len - done));
	int r = errno_from_uv(uv_write(&w->req, s, &b, 1, write_cb));
	if (r < 0) {
		n->queued_total -= len - done; /* never to be written: no reply waits for it */
		free(w);
		write_refused(n, r);
	}
	return r;
}

/* Encoding scratch larger than this is let go after use: a plan is tens of
 * KiB, sent once, and 128 nodes would each keep one otherwise. */
#define NODE_SCRATCH_KEEP (8 * 1024)

int node_send(struct node *n, const struct proto_msg *m)
{
	n->out.len = 0;
	int r = proto_encode(m, &n->out);
	if (r == 0)
		r = node_send_bytes(n, n->out.data, n->out.len);
	if (n->out.cap > NODE_SCRATCH_KEEP)
		proto_buf_free(&n->out);
	return r;
}

/* 0xFF + sync(nonce); keep_synced: go on taking the peer's messages while
 * the ack travels. */
static void send_sync(struct node *n, uint64_t nonce, bool keep_synced)
{
	bool synced = n->link.synced;
	n->out.len = 0;
	proto_link_restart(&n->link, nonce, &n->out);
	if (keep_synced)
		n->link.synced = synced;
	node_send_bytes(n, n->out.data, n->out.len);
}

void node_resync(struct node *n)
{
	n->sync_resent = false;
	send_sync(n, node_nonce(n), false);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	/* The decoder copies what it keeps, so every node can share one read
	 * buffer: the loop runs one read callback at a time. */
	static char shared[64 * 1024];
	buf->base = shared;
	buf->len = sizeof(shared);
}

static void on_event(void *ctx, enum proto_event ev, struct proto_msg *msg, int err, const char *detail)
{
	struct node *n = ctx;

	if (!n->open || n->flooded)
		return; /* closed (or given up) by an earlier line of this same read */
	if (n->rx_ns - n->window_ns >= 1000000000LL) {
		n->window_ns = n->rx_ns;
		n->window_msgs = 0;
	}
	if (++n->window_msgs > NODE_MSGS_PER_SEC_MAX) {
		char why[96];
		snprintf(why, sizeof(why),
			 "flooded its channel: %u lines within one second, the "
			 "limit is %d",
			 n->window_msgs, NODE_MSGS_PER_SEC_MAX);
		n->flooded = true;
		n->ops->flooding(n, why);
		return;
	}
	switch (ev) {
	case PROTO_EV_RESET:
		/* The peer restarted its side; its sync follows.  Ours, if still
		 * unanswered, may have been written before the peer was there
		 * to read it (a port nobody held open): say it once more. */
		if (n->link.pending && !n->sync_resent) {
			n->sync_resent = true;
			send_sync(n, n->link.nonce, true);
		}
		if (n->ops->peer_reset)
			n->ops->peer_reset(n);
		return;
	case PROTO_EV_ERROR:
		n->protocol_errors++;
		n->ops->protocol_error(n, err, detail);
		/* Ask the peer where it is (it acks and re-announces hello and
		 * ready), but keep taking its messages meanwhile: they come on
		 * the same connection, and a result or done already on its
		 * way would otherwise be dropped for good. */
		if (n->open) {
			n->sync_resent = false;
			send_sync(n, node_nonce(n), true);
		}
		return;
	case PROTO_EV_MSG: break;
	}

	/* A sync is always acked, but not twice while the peer has not read
	 * the first ack: acks it never reads would pile up here.  The same
	 * sync said again (an agent does so once when our 0xFF crosses it)
	 * needs no second ack: the first is on its way. */
	if (msg->type == PROTO_SYNC && node_reply_unwritten(n, NODE_REPLY_ACK)) {
		if (msg->u.sync.nonce == n->acked_nonce)
			return;
		n->flooded = true;
		n->ops->flooding(n, "sent sync again before reading our sync-ack");
		return;
	}
	n->out.len = 0;
	enum proto_link_verdict v = proto_link_input(&n->link, msg, &n->out);
	if (n->out.len > 0) {
		node_send_bytes(n, n->out.data, n->out.len);
		if (msg->type == PROTO_SYNC) {
			node_reply_sent(n, NODE_REPLY_ACK);
			n->acked_nonce = msg->u.sync.nonce;
		}
	}
	if (v == PROTO_LINK_DELIVER)
		n->ops->message(n, msg);
	else if (v == PROTO_LINK_SYNCED)
		n->ops->resynced(n);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct node *n = s->data;

	if (nread > 0) {
		n->rx_ns = clock_mono_ns();
		proto_decoder_feed(&n->dec, buf->base, (size_t)nread, on_event, n);
		/* a flooding peer costs us no more decoding while its owner decides */
		if (n->flooded && n->open)
			uv_read_stop(s);
		return;
	}
	if (nread == 0)
		return;
	node_close(n);
	n->ops->closed(n, nread == UV_EOF ? 0 : errno_from_uv((int)nread));
}

int node_attach(struct node *n, uv_loop_t *loop, int fd)
{
	int r = errno_from_uv(uv_pipe_init(loop, &n->pipe, 0));
	if (r < 0)
		return r;
	n->pipe.data = n;
	r = errno_from_uv(uv_pipe_open(&n->pipe, fd));
	if (r == 0)
		r = errno_from_uv(uv_read_start((uv_stream_t *)&n->pipe, alloc_cb, read_cb));
	if (r < 0) {
		uv_close((uv_handle_t *)&n->pipe, NULL);
		return r;
	}
	if (!n->report_init) {
		uv_timer_init(loop, &n->report);
		n->report.data = n;
		n->report_init = true;
	}
	n->open = true;
	n->flooded = false;
	n->report_err = 0;
	n->window_ns = n->window_msgs = 0;
	proto_decoder_reset(&n->dec);
	node_resync(n);
	return 0;
}

void node_close(struct node *n)
{
	if (!n->open)
		return;
	n->open = false;
	uv_read_stop((uv_stream_t *)&n->pipe);
	uv_close((uv_handle_t *)&n->pipe, NULL);
	if (n->report_init && !uv_is_closing((uv_handle_t *)&n->report))
		uv_close((uv_handle_t *)&n->report, NULL);
}

void node_fini(struct node *n)
{
	proto_decoder_free(&n->dec);
	proto_buf_free(&n->out);
}
