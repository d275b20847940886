/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One member's side of the barrier (cluster.h) as its five files share
 * it: cluster.c (the steps), cluster_outbox.c (what is written),
 * cluster_heartbeat.c, cluster_reconnect.c (a lost Redis) and
 * cluster_handle.c (made and closed); nothing else includes this.  The
 * functions below are each file's that another calls, with the file's name
 * above them; the rest stay static in their file. */
#ifndef LOCKSTEP_CLUSTER_PRIV_H
#define LOCKSTEP_CLUSTER_PRIV_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "cluster.h"
#include "cluster_roster.h"
#include "redis_link.h"
#include "roadblock_msg.h"

/* At most this many messages go in one command (batch_end). */
#define BATCH_MAX 4

/* The three streams a member reads: global, its role's inbox, its own. */
enum { S_GLOBAL, S_INBOX, S_PERSONAL, S_COUNT };

enum step_state { ST_IDLE, ST_WAITING, ST_RELEASED, ST_DONE };

struct step {
	uint32_t k;
	char id[RB_ID_MAX];
	enum step_state st;
	char last[S_COUNT][48]; /* the last stream entry id read */
	bool initiator, sent_online_all, sent_ready, abort_seen, have_at;
	/* joined before this member's own barrier of the step was complete
	 * (docs/cluster.md "Joining the next step early"); that barrier done */
	bool early, local_ready;
	bool online_all;	      /* a follower: the leader's all-online read */
	char abort_from[RB_NAME_MAX]; /* the follower that said follower-ready-abort */
	int64_t at_real, lead;
	json_object *record;
};

struct cluster {
	uv_loop_t *loop;
	const struct cluster_settings *s;
	cluster_cb cb;
	void *data;
	redisAsyncContext *cmd, *rd; /* rd only blocks in XREAD */
	uv_timer_t timeout_timer, close_timer;
	uv_timer_t early_timer; /* joins the next step's roadblock after the instant */
	int handles;
	bool closing, failed, reading, aborting;
	struct roster roster; /* the leader's: who said what, who was dropped */
	uint64_t seq;
	uint8_t uuid_base[16]; /* random; each message's uuid mixes seq in */
	int64_t rtt_ns, ping_t0;
	uint32_t links, ping_links; /* connections made (again); at the PING */
	uint32_t pending;	    /* a step ready while the last read was out */
	uint32_t nsteps;	    /* the plan's: no roadblock is joined past the last */
	bool next_early;	    /* join the next step's roadblock once this one is released */
	uint32_t early_after;	    /* the step whose instant early_timer waits out */
	int64_t started_s;	    /* CLOCK_REALTIME s at cluster_new */
	char plan[RB_SHA256_HEX + 1];
	struct step st;
	/* heartbeats (docs/cluster.md "Heartbeats"): on the roadblock of the
	 * step released last, read by hb */
	redisAsyncContext *hb;
	uv_timer_t hb_timer;
	uint32_t hb_step; /* 0: no step released yet, no heartbeats */
	char hb_id[RB_ID_MAX], hb_last[48];
	bool hb_reading, leader_lost;
	int64_t hb_read_t0, hb_every_ns, hb_silent_ns;
	int64_t heard[CLUSTER_MEMBERS_MAX];	 /* mono ns a member's message was last read */
	int64_t heard_real[CLUSTER_MEMBERS_MAX]; /* the same on CLOCK_REALTIME, for the message */
	bool ended[CLUSTER_MEMBERS_MAX];	 /* said lockstep-end: its run is over */
	bool lockstep[CLUSTER_MEMBERS_MAX];	 /* a lockstep member: a plain roadblock one
					       sends no heartbeats in a step, and is
					       not watched */
	json_object *carry;			 /* events between steps, for the next record */
	/* Redis lost and reconnected (docs/cluster.md "Redis restarts") */
	struct out_cmd *outbox, **outbox_tail; /* commands without a reply yet, in order */
	uv_timer_t retry_timer;
	bool dropping;		   /* freeing the last try's: their losses are known */
	struct redis_retry retry;  /* the connections are being remade while down */
	int ups;		   /* connections up in this try */
	char known_key[RB_ID_MAX]; /* a roadblock key known to be in Redis */
	int64_t read_t0;	   /* the barrier's XREAD sent (mono ns) */
	int64_t hb_tick_at;	   /* the last heartbeat tick (mono ns) */
	/* messages written by one command (batch_begin .. batch_end) */
	bool batching;
	int nbatch;
	char *batch_stream[BATCH_MAX], *batch_text[BATCH_MAX];
};

/* A command on the command connection, kept until its reply comes: a
 * connection lost before sends it again on the next. */
struct out_cmd {
	struct out_cmd *next;
	redisCallbackFn *cb;
	void *priv;
	int argc;
	char **argv;
	size_t *len;
};

/* cluster.c */
/* The tail of a stream's name: "global", the role's inbox or this member. */
const char *cl_stream_suffix(const struct cluster *c, int which);
/* This host's barrier of the open step is complete, the hosts' is not. */
bool cl_at_barrier(const struct cluster *c);
/* The one callback of a failure, with the sentence; nothing after it. */
void cl_fail(struct cluster *c, enum cluster_outcome out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The followers left out for good, into the step's record. */
void cl_record_dropped(struct cluster *c);
/* The leader: all-online, then all-ready and the release, once due. */
void cl_leader_advance(struct cluster *c);
/* Member id's index in CLUSTER_MEMBERS, or -1. */
ssize_t cl_member_index(const struct cluster *c, const char *id);
/* An event into the step's record (32 at most). */
void cl_add_event(struct step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Message m is to this member and not its own. */
bool cl_message_for_me(const struct cluster *c, const struct rb_msg *m);
/* A stream entry's id into last, and its "msg" field or NULL. */
const redisReply *cl_entry_msg(const redisReply *e, char *last, size_t size);
/* The barrier's next XREAD, unless one is out or no step is open. */
void cl_read_next(struct cluster *c);
/* This member's run is ending: the others learn it at a roadblock. */
void cl_say_abort(struct cluster *c);
/* Step k: its roadblock joined and this host's barrier complete. */
void cl_step_begin(struct cluster *c, uint32_t k);

/* cluster_outbox.c */
/* A reply that is an error (failed) or none (link lost): the caller stops. */
bool cl_reply_bad(struct cluster *c, redisAsyncContext *ac, redisReply *rep, const char *what);
/* A command's callback when only a bad reply matters. */
void cl_cmd_done(redisAsyncContext *ac, void *reply, void *priv);
/* Frees one command of the outbox. */
void cl_out_free(struct out_cmd *o);
/* Sends a command of the outbox again, unless Redis is down. */
void cl_out_issue(struct cluster *c, struct out_cmd *o);
/* A command of words (NULL ends them) through the outbox. */
void cl_cmd_words(struct cluster *c, redisCallbackFn *cb, void *priv, ...);
/* The messages written until cl_batch_end go in one command. */
void cl_batch_begin(struct cluster *c);
/* Sends the messages written since cl_batch_begin, one EVAL. */
void cl_batch_end(struct cluster *c);
/* A message of ours for roadblock rb. */
void cl_send_rb(struct cluster *c, const char *rb, const char *stream, enum rb_recipient to,
		const char *to_id, enum rb_command cmd, json_object *user_object, const char *value);
/* A message of ours for the step's roadblock. */
void cl_send_msg(struct cluster *c, const char *stream, enum rb_recipient to, const char *to_id,
		 enum rb_command cmd, json_object *user_object, const char *value);
/* A message to every follower on the step's roadblock. */
void cl_to_followers(struct cluster *c, enum rb_command cmd, json_object *uo);
/* A message to the leader on the step's roadblock. */
void cl_to_leader(struct cluster *c, enum rb_command cmd, json_object *uo);

/* cluster_heartbeat.c */
/* The lockstep-end user-object that stops the others watching member. */
json_object *cl_end_object(const char *member);
/* How long member i has been silent, for a message. */
void cl_silence_text(const struct cluster *c, size_t i, int64_t now, char *buf, size_t size);
/* The heartbeats' next XREAD, unless one is out or no step was released. */
void cl_hb_read(struct cluster *c);
/* The step just released: the heartbeats go on its roadblock. */
void cl_hb_follow(struct cluster *c);

/* cluster_reconnect.c */
/* A connection went (ac) or hangs (NULL): all are made again. */
void cl_link_lost(struct cluster *c, const redisAsyncContext *ac, const char *why);
/* One connection to Redis with this member's callbacks. */
redisAsyncContext *cl_connect_one(struct cluster *c);

/* cluster_handle.c */
/* The end: the command connection goes, the timers close. */
void cl_close_final(uv_timer_t *t);

#endif
