/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A member's records on their way to the leader through Redis
 * (docs/cluster.md, "Records on the leader"), on a connection of their own
 * beside the barrier's: each follower XADDs to its own stream
 * "<CLUSTER_ID>__records__<member>" (MAXLEN ~ CREC_STREAM_MAXLEN) entries
 * of four fields, member, seq (1, 2, ...), kind and data; the leader reads
 * every follower's stream (XREAD BLOCK), hands each entry whose fields are
 * whole, in bounds and its stream's own to the caller, names every other,
 * and trims what it read.  What an entry's data says is the caller's to
 * check (member_records.h).  Nothing here logs.
 */
#ifndef LOCKSTEP_CLUSTER_RECORDS_H
#define LOCKSTEP_CLUSTER_RECORDS_H

#include <stddef.h>
#include <uv.h>

#include "cluster_settings.h"

/* Entries a follower's stream keeps at most (Redis' memory bound); the
 * leader trims what it read, so only a leader far behind loses any (the
 * seq gap is named). */
#define CREC_STREAM_MAXLEN 10000
/* At the end, how long a follower's last entries may take to go out. */
#define CREC_CLOSE_GRACE_MS 5000
/* Entries the leader takes per read. */
#define CREC_READ_COUNT 16

enum crec_kind { CREC_FACTS, CREC_SAMPLES, CREC_BARRIERS, CREC_END, CREC_NKINDS };

struct crec_ops {
	/* an entry of members[member]'s stream (the leader) */
	void (*entry)(void *data, size_t member, enum crec_kind kind, const char *payload, size_t len);
	/* an entry of its stream refused, and why */
	void (*refused)(void *data, size_t member, const char *why);
	/* Redis failed (once): nothing more is sent or read */
	void (*error)(void *data, const char *why);
};

struct crec;

/* Connects; the leader starts reading its followers' streams at once.
 * s must outlive the handle. */
struct crec *crec_new(uv_loop_t *loop, const struct cluster_settings *s, const struct crec_ops *ops,
		      void *data);
const char *crec_kind_name(enum crec_kind k);
/* The largest payload of a kind (member_records.h's bounds). */
size_t crec_kind_max(enum crec_kind k);
/* Bytes of a follower's entries sent and not yet acknowledged by Redis at
 * most (a Redis that does not answer makes hiredis' buffer grow). */
#define CREC_UNACKED_MAX (64u << 20)
/* A follower's entry; payload at most crec_kind_max(kind).  0, or -ENOBUFS
 * past CREC_UNACKED_MAX, -EPIPE when Redis failed or the handle closes. */
int crec_send(struct crec *c, enum crec_kind kind, const char *payload, size_t len);
/* Closes: a follower's entries sent go out first (at most
 * CREC_CLOSE_GRACE_MS), a leader stops reading.  No callback follows; the
 * handle goes when its connection and timer have.  Accepts NULL; safe
 * inside a callback. */
void crec_close(struct crec *c);

#endif
