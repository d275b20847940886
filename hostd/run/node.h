/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A participant's channel: the stream socket to its agent (a socketpair end
 * for local guests, the unix socket of a virtio-serial port for libvirt
 * guests), the decoder and the resync link.  A node hands every message
 * that survived decoding and resync to its owner through node_ops; it never
 * interprets the protocol beyond that.
 */
#ifndef LOCKSTEP_NODE_H
#define LOCKSTEP_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "proto.h"

/* More protocol errors than this from one peer and it is dropped from the
 * run as sending garbage: a resync fixes a glitch, not a broken peer. */
#define NODE_PROTOCOL_ERROR_LIMIT 8
/* Lines (messages, refused lines and reset bytes alike) one peer may send
 * within one second.  An agent sends a handful per step plus its monitor
 * samples and output chunks, far below this; past it the peer is failed as
 * flooding, so that it cannot starve the release of everybody else. */
#define NODE_MSGS_PER_SEC_MAX 20000
/* Bytes we hold for one peer that does not read (above what its socket
 * buffer took).  hostd sends a peer a handful of short lines per step and
 * its plan once per hello; a send is refused once this much waits, so a
 * node costs at most this plus its largest message (the plan), whatever
 * the peer does.  A refused send makes the node fail as flooding. */
#define NODE_QUEUE_MAX (256 * 1024)

/* Answers a peer can ask for again (by repeating hello, sync, ready): a
 * repeat gets a new copy only once the previous one was written, else the
 * peer is not reading what it asks for and is failed as flooding. */
enum node_reply {
	NODE_REPLY_HELLO, /* monitors + plan, or a clock ping */
	NODE_REPLY_ACK,	  /* sync-ack */
	NODE_REPLY_GO,
	NODE_REPLY_COUNT,
};

struct node;

struct node_ops {
	/* a message from a synced peer; msg is cleared after the call */
	void (*message)(struct node *n, struct proto_msg *msg);
	/* our resync completed: the peer will re-announce itself */
	void (*resynced)(struct node *n);
	/* a decode error: counted; the link restarts */
	void (*protocol_error)(struct node *n, int err, const char *detail);
	/* the channel closed: EOF, a read error, or a write that failed for
	 * another reason than the peer leaving (bytes were lost: the node is
	 * closed already, err says why) */
	void (*closed)(struct node *n, int err);
	/* the peer sent 0xFF: it restarted its side (a reconnect, or a resync
	 * of its own); may be NULL */
	void (*peer_reset)(struct node *n);
	/* more than NODE_MSGS_PER_SEC_MAX lines within a second, a sync
	 * repeated before our ack was written, or NODE_QUEUE_MAX bytes
	 * waiting for the peer; the node stops reading until the owner closes
	 * it.  why says which, for a failure record. */
	void (*flooding)(struct node *n, const char *why);
};

struct node {
	char name[PROTO_NAME_MAX];
	size_t index; /* in the run's participant table */
	void *owner;
	const struct node_ops *ops;

	uv_pipe_t pipe;
	bool open;
	struct proto_decoder dec;
	struct proto_link link;
	unsigned protocol_errors;
	bool sync_resent;     /* our pending sync was said twice already */
	int64_t window_ns;    /* start of the current one-second window */
	unsigned window_msgs; /* lines in it */
	bool flooded;
	int64_t rx_ns;	      /* CLOCK_MONOTONIC when the bytes being handled were read */
	struct proto_buf out; /* encoding scratch */
	/* bytes ever handed to node_send_bytes / taken by the socket: a
	 * reply is written once written_total reaches its mark */
	uint64_t queued_total, written_total;
	uint64_t reply_mark[NODE_REPLY_COUNT];
	uint64_t acked_nonce; /* of the peer's last sync we acked */
	/* a send was refused (NODE_QUEUE_MAX): reported from a timer, since
	 * the sender may be in the middle of a loop over every node */
	uv_timer_t report;
	bool report_init;
	char report_why[160];
	int report_err; /* a write failed: the channel is closed from the timer */
};

void node_init(struct node *n, const char *name, size_t index, void *owner, const struct node_ops *ops);
/* Starts reading fd (a connected stream socket, now owned by the node) and
 * sends 0xFF + sync. */
int node_attach(struct node *n, uv_loop_t *loop, int fd);
/* Sends one message; tries a direct write first so that a go leaves at
 * once, queues the rest.  0 or -errno; -ENOBUFS when NODE_QUEUE_MAX bytes
 * wait already (nothing is sent, and the node reports flooding from the
 * loop: the caller need not).  Any other write error but the peer leaving
 * (which its end of file tells) also closes the node from the loop and
 * reports closed(err): no message is lost in silence. */
int node_send(struct node *n, const struct proto_msg *m);
/* Sends bytes already encoded (one go for everybody, encoded once). */
int node_send_bytes(struct node *n, const char *data, size_t len);
/* Whether the last reply of this kind is still waiting to be written (a
 * repeat of the request that asked for it is then a flood). */
bool node_reply_unwritten(const struct node *n, enum node_reply kind);
/* Everything sent so far ends a reply of this kind. */
void node_reply_sent(struct node *n, enum node_reply kind);
/* Restarts the link: 0xFF + sync, and nothing but sync and sync-ack is
 * taken until the ack (a new connection). */
void node_resync(struct node *n);
/* Closes the channel (again: nothing).  No closed() report follows: the
 * caller knows; n->open is false at once, the handle is let go by libuv. */
void node_close(struct node *n);
void node_fini(struct node *n);

#endif
