// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster.h"

#include <errno.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "cluster_roster.h"
#include "redis_link.h"
#include "roadblock_msg.h"
#include "xalloc.h"

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

static const char *stream_suffix(const struct cluster *c, int which)
{
	if (which == S_GLOBAL)
		return "global";
	if (which == S_INBOX)
		return c->s->role == CLUSTER_LEADER ? "leader" : "followers";
	return c->s->member;
}

/* ---- outcome ------------------------------------------------------------ */

/* This host's own barrier of the open step is complete and the hosts'
 * is not: the run waits here.  A step joined early is open while the
 * step before still runs. */
static bool at_barrier(const struct cluster *c)
{
	return c->st.st == ST_WAITING && c->st.local_ready;
}

static void hb_follow(struct cluster *c);

static void deliver(struct cluster *c, enum cluster_outcome out, int64_t at, const char *why)
{
	struct step *st = &c->st;
	struct cluster_result res = { .step = st->k, .outcome = out, .at_realtime_ns = at, .why = why };
	uv_timer_stop(&c->timeout_timer);
	if (st->record) {
		json_object_object_add(st->record, "go_realtime_ns",
				       json_object_new_int64(clock_real_ns()));
		if (at)
			json_object_object_add(st->record, "release_realtime_ns",
					       json_object_new_int64(at));
		json_object_object_add(st->record, "outcome",
				       json_object_new_string(out == CLUSTER_RELEASED ? "released"
							      : out == CLUSTER_TIMED_OUT ? "timeout"
							      : out == CLUSTER_ABORTED	 ? "abort"
							      : out == CLUSTER_HEARTBEAT
								      ? "heartbeat-timeout"
								      : "redis-error"));
		json_object_object_add(st->record, "host_clock", cluster_host_clock(&res.clock_unsync));
	}
	res.record = st->record;
	if (out != CLUSTER_RELEASED)
		c->failed = true;
	c->cb(c->data, &res);
	if (out == CLUSTER_RELEASED)
		hb_follow(c);
}

static void fail(struct cluster *c, enum cluster_outcome out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct cluster *c, enum cluster_outcome out, const char *fmt, ...)
{
	char why[768];
	va_list ap;
	if (c->closing || c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!at_barrier(c)) {
		/* between barriers (a heartbeat): the record of the step
		 * released last is the run's, and stays as it was */
		json_object_put(c->st.record);
		c->st.record = NULL;
	}
	c->st.st = ST_DONE;
	deliver(c, out, 0, why);
}

/* ---- Redis commands ------------------------------------------------------ */

static void link_lost(struct cluster *c, const redisAsyncContext *ac, const char *why);

static bool reply_bad(struct cluster *c, redisAsyncContext *ac, redisReply *rep, const char *what)
{
	if (c->closing)
		return true;
	if (rep && rep->type != REDIS_REPLY_ERROR)
		return false;
	if (!rep) {
		/* the connection went: made again within CLUSTER_TIMEOUT */
		char why[300];
		snprintf(why, sizeof(why), "%s: %s", what,
			 ac->errstr[0] ? ac->errstr : "connection lost");
		link_lost(c, ac, why);
		return true;
	}
	fail(c, CLUSTER_REDIS_ERROR, "cluster: Redis at %s:%d: %s: %s", c->s->redis_host,
	     c->s->redis_port, what,
	     rep	     ? rep->str
	     : ac->errstr[0] ? ac->errstr
			     : "connection lost");
	return true;
}

static void cmd_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	reply_bad(c, ac, reply, priv ? priv : "a command");
}

static void out_free(struct out_cmd *o)
{
	for (int i = 0; i < o->argc; i++)
		free(o->argv[i]);
	free(o->argv);
	free(o->len);
	free(o);
}

static void out_issue(struct cluster *c, struct out_cmd *o);

/* A reply to a command of the outbox: it leaves the outbox, unless the
 * connection went before the reply (no reply, not closing): then it stays,
 * to go again on the next connection. */
static void out_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	struct out_cmd *o = priv, **pp = &c->outbox;
	if (!reply && !c->closing) {
		link_lost(c, ac, ac->errstr[0] ? ac->errstr : "connection lost");
		return;
	}
	while (*pp && *pp != o)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = o->next;
		if (c->outbox_tail == &o->next)
			c->outbox_tail = pp;
	}
	o->cb(ac, reply, o->priv);
	out_free(o);
}

static void out_issue(struct cluster *c, struct out_cmd *o)
{
	if (c->retry.down || !c->cmd)
		return; /* sent when the connection is back */
	redisAsyncCommandArgv(c->cmd, out_done, o, o->argc, (const char **)o->argv, o->len);
}

/* A command on the command connection, through the outbox. */
static void cmd_send(struct cluster *c, redisCallbackFn *cb, void *priv, int argc,
		     const char **argv, const size_t *len)
{
	struct out_cmd *o = xcalloc(1, sizeof(*o));
	o->cb = cb;
	o->priv = priv;
	o->argc = argc;
	o->argv = xcalloc((size_t)argc, sizeof(*o->argv));
	o->len = xcalloc((size_t)argc, sizeof(*o->len));
	for (int i = 0; i < argc; i++) {
		o->len[i] = len ? len[i] : strlen(argv[i]);
		o->argv[i] = xmalloc(o->len[i] + 1);
		memcpy(o->argv[i], argv[i], o->len[i]);
		o->argv[i][o->len[i]] = 0;
	}
	if (!c->outbox_tail)
		c->outbox_tail = &c->outbox;
	*c->outbox_tail = o;
	c->outbox_tail = &o->next;
	out_issue(c, o);
}

/* The same, of words: cmd_words(c, cb, priv, "GET", key, NULL). */
static void cmd_words(struct cluster *c, redisCallbackFn *cb, void *priv, ...)
{
	const char *argv[8];
	int argc = 0;
	va_list ap;
	va_start(ap, priv);
	for (const char *w; argc < 8 && (w = va_arg(ap, const char *));)
		argv[argc++] = w;
	va_end(ap);
	cmd_send(c, cb, priv, argc, argv, NULL);
}

static void xadd(struct cluster *c, const char *rb, const char *stream_suffix_, struct rb_msg *m)
{
	char stream[RB_ID_MAX + RB_NAME_MAX + 16];
	char *text = rb_msg_encode(m);
	rb_msg_clear(m);
	if (!text)
		return; /* only a user-object we build ourselves: never */
	snprintf(stream, sizeof(stream), "%s__stream__%s", rb, stream_suffix_);
	if (c->batching && c->nbatch < BATCH_MAX) {
		c->batch_stream[c->nbatch] = xstrdup(stream);
		c->batch_text[c->nbatch++] = text;
		return;
	}
	const char *argv[] = { "XADD", stream, "*", "msg", text };
	size_t len[] = { 4, strlen(stream), 1, 3, strlen(text) };
	cmd_send(c, cmd_done, "XADD", 5, argv, len);
	free(text);
}

/* The messages written from here to batch_end go in one command.  Redis
 * answers the reads blocked on a stream after each command: three XADDs
 * (all-ready, the instant, all-go) would wake every follower three times,
 * one script wakes each once, with the three. */
static void batch_begin(struct cluster *c)
{
	c->batching = true;
	c->nbatch = 0;
}

static const char batch_script[] =
	"for i = 1, #KEYS do redis.call('XADD', KEYS[i], '*', 'msg', ARGV[i]) end return #KEYS";

static void batch_end(struct cluster *c)
{
	int n = c->nbatch;
	c->batching = false;
	c->nbatch = 0;
	if (n == 0)
		return;
	/* EVAL script numkeys stream... text...: one outbox entry, so that a
	 * reconnect sends it whole again or not at all */
	const char *argv[3 + 2 * BATCH_MAX] = { 0 };
	size_t len[3 + 2 * BATCH_MAX] = { 0 };
	char nk[8];
	snprintf(nk, sizeof(nk), "%d", n);
	argv[0] = "EVAL";
	argv[1] = batch_script;
	argv[2] = nk;
	for (int i = 0; i < n; i++) {
		argv[3 + i] = c->batch_stream[i];
		argv[3 + n + i] = c->batch_text[i];
	}
	for (int i = 0; i < 3 + 2 * n; i++)
		len[i] = strlen(argv[i]);
	cmd_send(c, cmd_done, "EVAL of XADDs", 3 + 2 * n, argv, len);
	for (int i = 0; i < n; i++) {
		free(c->batch_stream[i]);
		free(c->batch_text[i]);
	}
}

/* A message of ours for roadblock rb. */
static void send_rb(struct cluster *c, const char *rb, const char *stream, enum rb_recipient to,
		    const char *to_id, enum rb_command cmd, json_object *user_object, const char *value)
{
	struct rb_msg m;
	char uuid[RB_UUID_LEN + 1];
	rb_uuid_format(uuid, c->uuid_base, ++c->seq);
	rb_msg_init(&m, uuid, rb, clock_real_ns() / 1000000000,
		    c->s->role == CLUSTER_LEADER ? RB_ROLE_LEADER : RB_ROLE_FOLLOWER, c->s->member,
		    to, to_id, cmd);
	m.user_object = user_object;
	if (value)
		snprintf(m.value, sizeof(m.value), "%s", value);
	xadd(c, rb, stream, &m);
}

/* A message of ours for the step's roadblock. */
static void send_msg(struct cluster *c, const char *stream, enum rb_recipient to, const char *to_id,
		     enum rb_command cmd, json_object *user_object, const char *value)
{
	send_rb(c, c->st.id, stream, to, to_id, cmd, user_object, value);
}

static void to_followers(struct cluster *c, enum rb_command cmd, json_object *uo)
{
	send_msg(c, "followers", RB_TO_ALL, NULL, cmd, uo, NULL);
}

static void to_leader(struct cluster *c, enum rb_command cmd, json_object *uo)
{
	send_msg(c, "leader", RB_TO_LEADER, c->s->members[0], cmd, uo, NULL);
}

/* ---- the leader ---------------------------------------------------------- */

/* The followers left out for good, for the step's record. */
static void record_dropped(struct cluster *c)
{
	json_object *d = json_object_new_array();
	for (size_t i = 1; i < c->s->nmembers; i++)
		if (c->roster.dropped[i])
			json_object_array_add(d, json_object_new_string(c->s->members[i]));
	json_object_object_add(c->st.record, "dropped", d);
}

/* Every follower still in the run has said it is lockstep. */
static bool all_lockstep(const struct cluster *c)
{
	for (size_t i = 1; i < c->s->nmembers; i++)
		if (!c->roster.dropped[i] && !c->lockstep[i])
			return false;
	return true;
}

static void leader_advance(struct cluster *c)
{
	struct step *st = &c->st;
	if (st->st != ST_WAITING)
		return;
	if (!st->sent_online_all) {
		if (!roster_all(&c->roster, ROSTER_ONLINE))
			return;
		st->sent_online_all = true;
		to_followers(c, RB_ALL_ONLINE, NULL);
	}
	if (!roster_all(&c->roster, ROSTER_READY) || (!st->local_ready && !st->abort_seen))
		return; /* an abort need not wait for this host's own barrier */
	batch_begin(c);
	to_followers(c, RB_ALL_READY, NULL);
	if (st->abort_seen || c->aborting) {
		to_followers(c, RB_ALL_ABORT, NULL);
		batch_end(c);
		fail(c, CLUSTER_ABORTED,
		     "cluster step %u (roadblock %s): follower %s said "
		     "follower-ready-abort (its run is ending); all-abort sent",
		     st->k, st->id, st->abort_from[0] ? st->abort_from : c->s->member);
		return;
	}
	json_object *rtts = json_object_new_object();
	json_object_object_add(rtts, c->s->member, json_object_new_int64(c->rtt_ns));
	for (size_t i = 1; i < c->s->nmembers; i++)
		if (!c->roster.dropped[i])
			json_object_object_add(rtts, c->s->members[i],
					       c->roster.rtt_ns[i] >= 0
						       ? json_object_new_int64(c->roster.rtt_ns[i])
						       : NULL);
	json_object_object_add(st->record, "rtt_ns", rtts);
	struct rb_release rel = { .step = st->k, .lead_ns = roster_lead(&c->roster, c->rtt_ns, st->k) };
	st->at_real = rel.at_realtime_ns = clock_real_ns() + rel.lead_ns;
	/* a plain roadblock member's timeout runs from the roadblock's
	 * creation: only when every member speaks lockstep */
	c->next_early = rel.next_early = all_lockstep(c);
	json_object_object_add(st->record, "lead_ns", json_object_new_int64(rel.lead_ns));
	to_followers(c, RB_USER_OBJECT, rb_release_object(&rel));
	to_followers(c, RB_ALL_GO, NULL);
	batch_end(c);
	st->st = ST_RELEASED;
	deliver(c, CLUSTER_RELEASED, rel.at_realtime_ns, NULL);
}

static ssize_t member_index(const struct cluster *c, const char *id)
{
	for (size_t i = 0; i < c->s->nmembers; i++)
		if (strcmp(c->s->members[i], id) == 0)
			return (ssize_t)i;
	return -1;
}

static void add_event(struct step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_event(struct step *st, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object *ev = NULL;
	if (!json_object_object_get_ex(st->record, "events", &ev)) {
		ev = json_object_new_array();
		json_object_object_add(st->record, "events", ev);
	}
	if (json_object_array_length(ev) < 32)
		json_object_array_add(ev, json_object_new_string(text));
}

static void leader_handle(struct cluster *c, const struct rb_msg *m)
{
	struct step *st = &c->st;
	ssize_t i = member_index(c, m->sender_id);
	if (m->sender_type != RB_ROLE_FOLLOWER)
		return;
	if (i <= 0 || c->roster.dropped[i]) {
		add_event(st, "%s from %s, not a follower of CLUSTER_MEMBERS%s: ignored",
			  rb_command_name(m->command), m->sender_id, i > 0 ? " (dropped)" : "");
		return;
	}
	char err[256], plan[RB_SHA256_HEX + 1];
	int64_t rtt;
	int r;
	switch (m->command) {
	case RB_FOLLOWER_ONLINE: c->roster.mark[ROSTER_ONLINE][i] = true; break;
	case RB_FOLLOWER_READY_ABORT:
		st->abort_seen = true;
		snprintf(st->abort_from, sizeof(st->abort_from), "%s", m->sender_id);
		/* fall through */
	case RB_FOLLOWER_READY:
	case RB_FOLLOWER_READY_WAITING: c->roster.mark[ROSTER_READY][i] = true; break;
	case RB_FOLLOWER_GONE:
		c->roster.mark[ROSTER_GONE][i] = true;
		if (st->st == ST_RELEASED && roster_all(&c->roster, ROSTER_GONE)) {
			to_followers(c, RB_ALL_GONE, NULL);
			st->st = ST_DONE;
		}
		return;
	case RB_USER_OBJECT:
		r = rb_member_parse(m->user_object, &rtt, plan, err, sizeof(err));
		if (r < 0)
			add_event(st, "a member object from %s: %s", m->sender_id, err);
		if (r <= 0)
			return;
		c->roster.rtt_ns[i] = rtt;
		c->lockstep[i] = true;
		if (strcmp(plan, c->plan) != 0) {
			to_followers(c, RB_ALL_ABORT, NULL);
			fail(c, CLUSTER_ABORTED,
			     "cluster step %u (roadblock %s): member %s runs a "
			     "different plan (sha256 %.12s..., this leader's %.12s...): every member "
			     "must run the same g.conf; all-abort sent",
			     st->k, st->id, m->sender_id, plan, c->plan);
		}
		return;
	default: return;
	}
	leader_advance(c);
}

/* ---- a follower ---------------------------------------------------------- */

/* follower-ready once the leader said all-online and this host's own
 * barrier is complete, whichever comes last. */
static void follower_ready(struct cluster *c)
{
	struct step *st = &c->st;
	if (!st->online_all || !st->local_ready || st->sent_ready)
		return;
	st->sent_ready = true;
	batch_begin(c); /* the leader wakes once, for both */
	to_leader(c, RB_USER_OBJECT, rb_member_object(c->s->member, c->rtt_ns, c->plan));
	to_leader(c, c->aborting ? RB_FOLLOWER_READY_ABORT : RB_FOLLOWER_READY, NULL);
	batch_end(c);
}

static void follower_handle(struct cluster *c, const struct rb_msg *m)
{
	struct step *st = &c->st;
	char err[256];
	struct rb_release rel;
	if (m->sender_type != RB_ROLE_LEADER || strcmp(m->sender_id, c->s->members[0]) != 0) {
		if (m->sender_type == RB_ROLE_LEADER)
			add_event(st, "%s from %s, not the leader %s: ignored",
				  rb_command_name(m->command), m->sender_id, c->s->members[0]);
		return;
	}
	switch (m->command) {
	case RB_ALL_ONLINE:
		st->online_all = true;
		follower_ready(c);
		return;
	case RB_USER_OBJECT: {
		int r = rb_release_parse(m->user_object, &rel, err, sizeof(err));
		if (r < 0)
			add_event(st, "a release from %s: %s", m->sender_id, err);
		else if (r > 0 && rel.step == st->k) {
			st->have_at = true;
			c->lockstep[0] = true;
			c->next_early = rel.next_early;
			st->at_real = rel.at_realtime_ns;
			st->lead = rel.lead_ns;
			json_object_object_add(st->record, "lead_ns",
					       json_object_new_int64(rel.lead_ns));
		}
		return;
	}
	case RB_LEADER_HEARTBEAT: to_leader(c, RB_FOLLOWER_HEARTBEAT, NULL); return;
	case RB_ALL_GO:
		to_leader(c, RB_FOLLOWER_GONE, NULL);
		st->st = ST_DONE;
		deliver(c, CLUSTER_RELEASED, st->have_at ? st->at_real : 0, NULL);
		return;
	case RB_ALL_ABORT:
		to_leader(c, RB_FOLLOWER_GONE, NULL);
		fail(c, CLUSTER_ABORTED, "cluster step %u (roadblock %s): the leader %s sent all-abort",
		     st->k, st->id, m->sender_id);
		return;
	case RB_HEARTBEAT_TIMEOUT:
		fail(c, CLUSTER_HEARTBEAT,
		     "cluster step %u (roadblock %s): the leader %s sent "
		     "heartbeat-timeout",
		     st->k, st->id, m->sender_id);
		return;
	default: return;
	}
}

/* ---- reading --------------------------------------------------------------- */

static void read_next(struct cluster *c);
static void step_begin(struct cluster *c, uint32_t k);
static void early_later(struct cluster *c);
static void timeout_cb(uv_timer_t *t);
static void close_final(uv_timer_t *t);

static bool message_for_me(const struct cluster *c, const struct rb_msg *m)
{
	enum rb_role mine = c->s->role == CLUSTER_LEADER ? RB_ROLE_LEADER : RB_ROLE_FOLLOWER;
	if (m->sender_type == mine && strcmp(m->sender_id, c->s->member) == 0)
		return false;
	if (m->recipient_type == RB_TO_ALL)
		return true;
	return (m->recipient_type == RB_TO_LEADER) == (mine == RB_ROLE_LEADER) &&
	       strcmp(m->recipient_id, c->s->member) == 0;
}

/* A stream entry [id, [field, value, ...]]: its id into last (size
 * bytes) and its "msg" field, or NULL when it has none. */
static const redisReply *entry_msg(const redisReply *e, char *last, size_t size)
{
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
		return NULL;
	snprintf(last, size, "%s", e->element[0]->str);
	const redisReply *f = e->element[1];
	for (size_t j = 0; j + 1 < f->elements; j += 2)
		if (f->element[j]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[j]->str, "msg") == 0 &&
		    f->element[j + 1]->type == REDIS_REPLY_STRING)
			return f->element[j + 1];
	return NULL;
}

static void handle_entry(struct cluster *c, int which, redisReply *e)
{
	struct step *st = &c->st;
	const redisReply *text = entry_msg(e, st->last[which], sizeof(st->last[which]));
	if (text) {
		struct rb_msg m;
		char err[320];
		if (rb_msg_decode(text->str, (size_t)text->len, &m, err, sizeof(err)) < 0) {
			add_event(st, "%s__stream__%s entry %s: %s", st->id,
				  stream_suffix(c, which), e->element[0]->str, err);
			return;
		}
		if (strcmp(m.roadblock, st->id) == 0 && message_for_me(c, &m)) {
			if (c->s->role == CLUSTER_LEADER)
				leader_handle(c, &m);
			else
				follower_handle(c, &m);
		}
		rb_msg_clear(&m);
	}
}

static void read_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	(void)priv;
	c->reading = false;
	if (reply_bad(c, ac, rep, "XREAD"))
		return;
	for (size_t s = 0; rep->type == REDIS_REPLY_ARRAY && s < rep->elements; s++) {
		const char *name;
		const redisReply *entries = redis_xread_stream(rep->element[s], &name);
		if (!entries)
			continue;
		const char *suffix = strstr(name, "__stream__");
		int which = -1;
		for (int w = 0; suffix && w < S_COUNT; w++)
			if (strcmp(suffix + 10, stream_suffix(c, w)) == 0)
				which = w;
		for (size_t i = 0; which >= 0 && i < entries->elements; i++) {
			handle_entry(c, which, entries->element[i]);
			if (c->closing || c->failed || c->st.st == ST_DONE)
				break;
		}
		if (c->closing || c->failed || c->st.st == ST_DONE)
			break;
	}
	if (c->closing || c->failed)
		return;
	if (c->pending && c->st.st != ST_WAITING) {
		uint32_t k = c->pending;
		c->pending = 0;
		step_begin(c, k);
		return;
	}
	if (c->st.st == ST_DONE)
		early_later(c);
	read_next(c);
}

static void read_next(struct cluster *c)
{
	struct step *st = &c->st;
	if (c->reading || c->closing || c->failed || c->retry.down || !c->rd || st->st == ST_DONE ||
	    st->st == ST_IDLE)
		return;
	char names[S_COUNT][RB_ID_MAX + RB_NAME_MAX + 16];
	const char *keys[S_COUNT], *lasts[S_COUNT];
	for (int w = 0; w < S_COUNT; w++) {
		snprintf(names[w], sizeof(names[w]), "%s__stream__%s", st->id, stream_suffix(c, w));
		keys[w] = names[w];
		lasts[w] = st->last[w];
	}
	c->reading = true;
	c->read_t0 = clock_mono_ns();
	redis_xread(c->rd, read_done, 0, CLUSTER_READ_BLOCK_MS, S_COUNT, keys, lasts);
}

static void step_reset(struct cluster *c, uint32_t k);
static void step_join(struct cluster *c);

/* This member's run is ending: the others learn it at this roadblock, or
 * the next one when it is between steps, not at its timeout (roadblock's
 * leader answers a follower's follower-ready-abort with all-abort). */
static void say_abort(struct cluster *c)
{
	/* a follower already ready here may be released here all the same:
	 * the leader learns it at the next one */
	if (c->st.st != ST_WAITING || (c->s->role == CLUSTER_FOLLOWER && c->st.sent_ready)) {
		step_reset(c, c->st.k + 1);
		step_join(c);
	}
	if (c->s->role == CLUSTER_LEADER)
		to_followers(c, RB_ALL_ABORT, NULL);
	else
		to_leader(c, RB_FOLLOWER_READY_ABORT, NULL);
}

/* ---- heartbeats ------------------------------------------------------------ */

/* The run's end, said on the heartbeats' roadblock: the others stop
 * watching this member.  {"lockstep-end":{"member":NAME}} */
static json_object *end_object(const char *member)
{
	json_object *o = json_object_new_object(), *in = json_object_new_object();
	json_object_object_add(in, "member", json_object_new_string(member));
	json_object_object_add(o, "lockstep-end", in);
	return o;
}

/* m (from sender i) is a lockstep-end of its own. */
static bool is_end_object(const struct rb_msg *m)
{
	json_object *in = NULL, *who = NULL;
	return m->command == RB_USER_OBJECT && m->user_object &&
	       json_object_is_type(m->user_object, json_type_object) &&
	       json_object_object_get_ex(m->user_object, "lockstep-end", &in) &&
	       json_object_is_type(in, json_type_object) &&
	       json_object_object_get_ex(in, "member", &who) &&
	       json_object_is_type(who, json_type_string) &&
	       strcmp(json_object_get_string(who), m->sender_id) == 0;
}

/* An event outside any barrier: into the next step's record. */
static void carry_event(struct cluster *c, const char *text)
{
	if (!c->carry)
		c->carry = json_object_new_array();
	if (json_object_array_length(c->carry) < 32)
		json_object_array_add(c->carry, json_object_new_string(text));
}

/* Told, not failed: the run goes on (ON_HOST_FAILURE=continue). */
static void notify(struct cluster *c, const char *why)
{
	struct cluster_result res = { .step = c->st.k, .outcome = CLUSTER_MEMBER_LOST, .why = why };
	c->cb(c->data, &res);
}

/* "silent for 3.2 s (last heard 12:01:02.345 UTC)" of member i. */
static void silence_text(const struct cluster *c, size_t i, int64_t now, char *buf, size_t size)
{
	time_t secs = (time_t)(c->heard_real[i] / 1000000000);
	struct tm tm;
	char at[32];
	gmtime_r(&secs, &tm);
	strftime(at, sizeof(at), "%H:%M:%S", &tm);
	snprintf(buf, size,
		 "silent for %.1f s (last heard %s.%03d UTC, on roadblock %s; heartbeats every "
		 "%.2f s, a member silent for CLUSTER_TIMEOUT/2 = %.2f s is lost)",
		 (double)(now - c->heard[i]) / 1e9, at, (int)(c->heard_real[i] / 1000000 % 1000),
		 c->hb_id, (double)c->hb_every_ns / 1e9, (double)c->hb_silent_ns / 1e9);
}

/* The leader: follower i has been silent too long. */
static void leader_lost_follower(struct cluster *c, size_t i, int64_t now)
{
	char silence[600], why[900];
	silence_text(c, i, now, silence, sizeof(silence));
	if (c->s->on_failure == CLUSTER_ON_FAILURE_ABORT) {
		send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_HEARTBEAT_TIMEOUT, NULL, NULL);
		if (c->st.st == ST_WAITING && strcmp(c->st.id, c->hb_id) != 0)
			to_followers(c, RB_HEARTBEAT_TIMEOUT, NULL); /* those waiting there */
		fail(c, CLUSTER_HEARTBEAT,
		     "cluster: member %s %s: heartbeat-timeout sent (ON_HOST_FAILURE=abort)",
		     c->s->members[i], silence);
		return;
	}
	c->roster.dropped[i] = true;
	snprintf(why, sizeof(why),
		 "cluster: member %s %s: left out of the rest of the run (ON_HOST_FAILURE=continue)",
		 c->s->members[i], silence);
	if (c->st.st == ST_WAITING) {
		add_event(&c->st, "%s", why);
		record_dropped(c);
	} else {
		carry_event(c, why);
	}
	notify(c, why);
	if (c->st.st == ST_RELEASED && roster_all(&c->roster, ROSTER_GONE)) {
		/* it was the last one not gone */
		to_followers(c, RB_ALL_GONE, NULL);
		c->st.st = ST_DONE;
	}
	leader_advance(c); /* it may be the one a barrier waits for */
}

/* A follower: the leader has been silent too long. */
static void follower_lost_leader(struct cluster *c, int64_t now)
{
	char silence[600], why[900];
	silence_text(c, 0, now, silence, sizeof(silence));
	c->leader_lost = true;
	if (c->s->on_failure == CLUSTER_ON_FAILURE_ABORT || at_barrier(c)) {
		const char *policy = at_barrier(c) ? "" : " (ON_HOST_FAILURE=abort)";
		/* a leader only slow, not gone, need not wait for its timeout */
		say_abort(c);
		fail(c, CLUSTER_HEARTBEAT, "cluster: the leader %s %s%s", c->s->members[0], silence,
		     policy);
		return;
	}
	snprintf(why, sizeof(why),
		 "cluster: the leader %s %s: this step finishes, the run ends at the next "
		 "(ON_HOST_FAILURE=continue)",
		 c->s->members[0], silence);
	carry_event(c, why);
	notify(c, why);
}

static void hb_entry(struct cluster *c, redisReply *e)
{
	const redisReply *text = entry_msg(e, c->hb_last, sizeof(c->hb_last));
	struct rb_msg m;
	char err[320];
	/* a bad one was, or will be, an event of the barrier's reader */
	if (!text || rb_msg_decode(text->str, (size_t)text->len, &m, err, sizeof(err)) < 0)
		return;
	ssize_t i = member_index(c, m.sender_id);
	bool leader = c->s->role == CLUSTER_LEADER;
	if (strcmp(m.roadblock, c->hb_id) == 0 && message_for_me(c, &m) && i >= 0 &&
	    (leader ? m.sender_type == RB_ROLE_FOLLOWER && i > 0
		    : m.sender_type == RB_ROLE_LEADER && i == 0)) {
		c->heard[i] = clock_mono_ns();
		c->heard_real[i] = clock_real_ns();
		if (is_end_object(&m))
			c->ended[i] = true;
		else if (!leader && m.command == RB_HEARTBEAT_TIMEOUT)
			fail(c, CLUSTER_HEARTBEAT,
			     "cluster step %u (roadblock %s): the leader %s sent heartbeat-timeout "
			     "(a member went silent; the leader's log names it)",
			     c->hb_step, c->hb_id, m.sender_id);
		else if (!leader && m.command == RB_ALL_ABORT && c->st.st != ST_WAITING)
			fail(c, CLUSTER_ABORTED, "cluster (roadblock %s): the leader %s sent all-abort",
			     c->hb_id, m.sender_id);
	}
	rb_msg_clear(&m);
}

static void hb_read(struct cluster *c);

static void hb_read_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	(void)priv;
	c->hb_reading = false;
	if (reply_bad(c, ac, rep, "XREAD (heartbeats)"))
		return;
	for (size_t s = 0; rep->type == REDIS_REPLY_ARRAY && s < rep->elements; s++) {
		const char *name;
		const redisReply *entries = redis_xread_stream(rep->element[s], &name);
		size_t idlen = strlen(c->hb_id);
		if (!entries || strncmp(name, c->hb_id, idlen) != 0 ||
		    strncmp(name + idlen, "__stream__", 10) != 0)
			continue; /* the roadblock before the one followed now */
		for (size_t i = 0; i < entries->elements && !c->closing && !c->failed; i++)
			hb_entry(c, entries->element[i]);
	}
	hb_read(c);
}

static void hb_read(struct cluster *c)
{
	if (c->hb_reading || c->closing || c->failed || c->retry.down || !c->hb || !c->hb_step)
		return;
	char stream[RB_ID_MAX + 32];
	snprintf(stream, sizeof(stream), "%s__stream__%s", c->hb_id, stream_suffix(c, S_INBOX));
	const char *keys[] = { stream }, *lasts[] = { c->hb_last };
	c->hb_reading = true;
	c->hb_read_t0 = clock_mono_ns();
	redis_xread(c->hb, hb_read_done, 0, c->hb_every_ns / 1000000, 1, keys, lasts);
}

static void hb_tick(uv_timer_t *t)
{
	struct cluster *c = t->data;
	int64_t now = clock_mono_ns(), stuck = c->hb_every_ns + CLUSTER_STUCK_NS;
	int64_t late = now - c->hb_tick_at;
	c->hb_tick_at = now;
	if (c->closing || c->failed || c->retry.down)
		return; /* nobody is judged while this member cannot hear */
	if (late > 2 * c->hb_every_ns)
		return; /* this loop was held up (stopped, starved): what came
			   meanwhile is read before anyone is judged */
	if ((c->hb_reading && now - c->hb_read_t0 > stuck) ||
	    (c->reading && now - c->read_t0 > CLUSTER_READ_BLOCK_MS * 1000000LL + CLUSTER_STUCK_NS)) {
		/* a blocked read that never returns: a connection gone without
		 * a word (a cut cable; the libuv adapter drops socket errors) */
		char why[96];
		snprintf(why, sizeof(why), "an XREAD BLOCK unanswered for %.1f s",
			 (double)(now - (c->hb_reading ? c->hb_read_t0 : c->read_t0)) / 1e9);
		link_lost(c, NULL, why);
		return;
	}
	if (c->s->role == CLUSTER_LEADER)
		send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_LEADER_HEARTBEAT, NULL, NULL);
	else
		send_rb(c, c->hb_id, "leader", RB_TO_LEADER, c->s->members[0],
			RB_FOLLOWER_HEARTBEAT, NULL, NULL);
	if (c->s->role == CLUSTER_FOLLOWER) {
		if (c->lockstep[0] && !c->ended[0] && !c->leader_lost &&
		    now - c->heard[0] > c->hb_silent_ns)
			follower_lost_leader(c, now);
		return;
	}
	for (size_t i = 1; i < c->s->nmembers && !c->failed && !c->closing; i++)
		if (c->lockstep[i] && !c->roster.dropped[i] && !c->ended[i] &&
		    now - c->heard[i] > c->hb_silent_ns)
			leader_lost_follower(c, i, now);
}

/* Step st was released here: heartbeats go on its roadblock from now on,
 * and every member is heard afresh when they begin. */
static void hb_follow(struct cluster *c)
{
	if (c->closing || c->failed)
		return;
	if (!c->hb_step) {
		int64_t now = clock_mono_ns(), real = clock_real_ns();
		for (size_t i = 0; i < c->s->nmembers; i++) {
			c->heard[i] = now;
			c->heard_real[i] = real;
		}
		c->hb_tick_at = now;
		uv_timer_start(&c->hb_timer, hb_tick, (uint64_t)(c->hb_every_ns / 1000000),
			       (uint64_t)(c->hb_every_ns / 1000000));
	}
	c->hb_step = c->st.k;
	snprintf(c->hb_id, sizeof(c->hb_id), "%s", c->st.id);
	snprintf(c->hb_last, sizeof(c->hb_last), "0");
	hb_read(c);
}

/* ---- a step --------------------------------------------------------------- */

static void ping_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	(void)priv;
	if (reply_bad(c, ac, reply, "PING") || c->ping_links != c->links)
		return; /* sent again after a reconnect: it measured the outage */
	/* a decaying maximum: one quick PING after a slow one does not
	 * shorten the next lead at once (on a busy host the slow ones recur) */
	int64_t rtt = clock_mono_ns() - c->ping_t0, decayed = c->rtt_ns - c->rtt_ns / 8;
	c->rtt_ns = rtt > decayed ? rtt : decayed;
}

static void initiate(struct cluster *c)
{
	char ts[32];
	snprintf(ts, sizeof(ts), "%" PRId64,
		 clock_real_ns() / 1000000000 + (int64_t)(c->s->timeout_s + 0.999));
	send_msg(c, "global", RB_TO_ALL, NULL, RB_GLOBAL_STREAM_CREATED, NULL, NULL);
	send_msg(c, "leader", RB_TO_LEADER, c->s->members[0], RB_LEADER_STREAM_CREATED, NULL, NULL);
	send_msg(c, "followers", RB_TO_ALL, NULL, RB_FOLLOWERS_STREAM_CREATED, NULL, NULL);
	send_msg(c, "global", RB_TO_ALL, NULL, RB_TIMEOUT_TS, NULL, ts);
	send_msg(c, "global", RB_TO_ALL, NULL, RB_INITIATOR_INFO, NULL, NULL);
	char key[RB_ID_MAX + 16];
	snprintf(key, sizeof(key), "%s__initialized", c->st.id);
	cmd_words(c, cmd_done, "RPUSH", "RPUSH", key, "1", NULL);
}

/* An integer reply to a command of step k (priv); false when it failed or
 * the step moved on. */
static bool step_int(struct cluster *c, redisAsyncContext *ac, redisReply *rep, void *priv,
		     const char *what, long long *v)
{
	if (reply_bad(c, ac, rep, what) || (uint32_t)(uintptr_t)priv != c->st.k)
		return false;
	*v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
	return true;
}

/* Another member created the roadblock: within CLUSTER_TIMEOUT of now, or
 * an earlier run with the same CLUSTER_ID did, whose messages would
 * release this one. */
static void created_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	if (reply_bad(c, ac, rep, "GET") || (uint32_t)(uintptr_t)priv != c->st.k)
		return;
	long long now = clock_real_ns() / 1000000000, created = now;
	if (rep->type == REDIS_REPLY_STRING)
		created = strtoll(rep->str, NULL, 10);
	/* the others may have joined early, a whole step ago: the measure is
	 * this member's start */
	if (created >= c->started_s - (long long)c->s->timeout_s - CLUSTER_STALE_SLACK_S) {
		read_next(c);
		return;
	}
	fail(c, CLUSTER_ABORTED,
	     "cluster step %u: the roadblock %s was made %lld s ago, %lld s before "
	     "this member started (CLUSTER_TIMEOUT=%gs): CLUSTER_ID=%s was used by an earlier run; "
	     "give every run a new CLUSTER_ID",
	     c->st.k, c->st.id, now - created, (long long)c->started_s - created, c->s->timeout_s,
	     c->s->id);
}

static void msetnx_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	long long v;
	if (!step_int(c, ac, reply, priv, "MSETNX", &v))
		return;
	c->st.initiator = v == 1;
	snprintf(c->known_key, sizeof(c->known_key), "%s", c->st.id);
	json_object_object_add(c->st.record, "initiator", json_object_new_boolean(c->st.initiator));
	/* read only a roadblock known to be this run's */
	if (c->st.initiator) {
		initiate(c);
		read_next(c);
	} else {
		cmd_words(c, created_done, priv, "GET", c->st.id, NULL);
	}
}

static void timedout_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	long long v;
	if (step_int(c, ac, reply, priv, "EXISTS", &v) && v == 1)
		fail(c, CLUSTER_TIMED_OUT,
		     "cluster step %u (roadblock %s): it timed out before this "
		     "member (%s) reached it",
		     c->st.k, c->st.id, c->s->member);
}

/* Step k's roadblock as this member starts it: its state and record. */
static void step_reset(struct cluster *c, uint32_t k)
{
	struct step *st = &c->st;
	json_object_put(st->record);
	memset(st, 0, sizeof(*st));
	st->k = k;
	snprintf(st->id, sizeof(st->id), "%s:step-%" PRIu32, c->s->id, k);
	for (int w = 0; w < S_COUNT; w++)
		snprintf(st->last[w], sizeof(st->last[w]), "0");
	roster_step(&c->roster);
	st->st = ST_WAITING;
	st->record = json_object_new_object();
	json_object_object_add(st->record, "roadblock", json_object_new_string(st->id));
	json_object_object_add(st->record, "role",
			       json_object_new_string(c->s->role == CLUSTER_LEADER ? "leader"
										   : "follower"));
	json_object_object_add(st->record, "member", json_object_new_string(c->s->member));
	if (c->s->role == CLUSTER_LEADER)
		record_dropped(c);
	if (c->carry) {
		json_object_object_add(st->record, "events", c->carry);
		c->carry = NULL;
	}
}

/* This member arrives at the step's roadblock: the initiator's MSETNX, its
 * personal stream, online. */
static void step_join(struct cluster *c)
{
	struct step *st = &c->st;
	uint32_t k = st->k;
	char key[RB_ID_MAX + 16];
	snprintf(key, sizeof(key), "%s__timedout", st->id);
	char now[32];
	snprintf(now, sizeof(now), "%lld", (long long)(clock_real_ns() / 1000000000));
	cmd_words(c, timedout_done, (void *)(uintptr_t)k, "EXISTS", key, NULL);
	cmd_words(c, msetnx_done, (void *)(uintptr_t)k, "MSETNX", st->id, now, NULL);
	send_msg(c, c->s->member, c->s->role == CLUSTER_LEADER ? RB_TO_LEADER : RB_TO_FOLLOWER,
		 c->s->member, RB_PERSONAL_STREAM_CREATED, NULL, NULL);
	if (c->s->role == CLUSTER_LEADER)
		to_followers(c, RB_LEADER_ONLINE, NULL);
	else
		to_leader(c, RB_FOLLOWER_ONLINE, NULL);
}

/* This host's own barrier of the step is complete: CLUSTER_TIMEOUT runs
 * from here, and the step's ready may go. */
static void step_local_ready(struct cluster *c)
{
	struct step *st = &c->st;
	st->local_ready = true;
	/* the round trip at the barrier, where the next is wanted: not while a
	 * step's benchmark has the CPUs (a step joined early) */
	c->ping_t0 = clock_mono_ns();
	c->ping_links = c->links;
	cmd_words(c, ping_done, NULL, "PING", NULL);
	json_object_object_add(st->record, "ready_realtime_ns", json_object_new_int64(clock_real_ns()));
	uv_timer_start(&c->timeout_timer, timeout_cb, (uint64_t)(c->s->timeout_s * 1000), 0);
	if (c->s->role == CLUSTER_LEADER)
		leader_advance(c); /* every follower dropped: nobody to wait for */
	else
		follower_ready(c);
}

static void step_begin(struct cluster *c, uint32_t k)
{
	step_reset(c, k);
	step_join(c);
	step_local_ready(c);
}

/* Step k released and done with here: join step k+1's roadblock now, while
 * the step runs, so that only follower-ready, all-ready and all-go are
 * left for the moment every host is ready (docs/cluster.md "Joining the
 * next step early"). */
static void step_early(uv_timer_t *t)
{
	struct cluster *c = t->data;
	if (c->st.k != c->early_after || c->st.st != ST_DONE || c->closing || c->failed || c->retry.down)
		return; /* the next step came first, or the run ends */
	step_reset(c, c->st.k + 1);
	c->st.early = true;
	json_object_object_add(c->st.record, "joined_early", json_object_new_boolean(true));
	step_join(c);
	if (c->s->role == CLUSTER_LEADER)
		leader_advance(c);
	read_next(c);
}

/* Not at once: the other members are still reading all-go then, and
 * their wake-ups and this join's dozen commands would share Redis and the
 * CPUs; the instant plus CLUSTER_EARLY_AFTER_MS, when the guests have
 * started and the PING measures a quiet round trip. */
static void early_later(struct cluster *c)
{
	if (!c->next_early || c->st.k >= c->nsteps)
		return;
	int64_t wait_ns = c->st.at_real ? c->st.at_real - clock_real_ns() : 0;
	c->early_after = c->st.k;
	uv_timer_start(&c->early_timer, step_early,
		       (uint64_t)(wait_ns > 0 ? wait_ns / 1000000 : 0) + CLUSTER_EARLY_AFTER_MS, 0);
}

static void timeout_cb(uv_timer_t *t)
{
	struct cluster *c = t->data;
	struct step *st = &c->st;
	char missing[512], key[RB_ID_MAX + 16];
	if (c->closing || c->failed || st->st != ST_WAITING)
		return;
	if (c->retry.down) {
		/* nobody could be heard: Redis is the one missing */
		c->retry.down = false;
		fail(c, CLUSTER_REDIS_ERROR,
		     "cluster step %u (roadblock %s): Redis at %s:%d lost (%s) %.1f s ago and not "
		     "back within CLUSTER_TIMEOUT=%gs (%d tries to connect again)",
		     st->k, st->id, c->s->redis_host, c->s->redis_port, c->retry.why,
		     (double)(clock_mono_ns() - c->retry.since_ns) / 1e9, c->s->timeout_s,
		     c->retry.tries);
		return;
	}
	if (st->initiator) {
		/* late members learn that this roadblock already failed */
		snprintf(key, sizeof(key), "%s__timedout", st->id);
		cmd_words(c, cmd_done, "SETNX", "SETNX", key, "1", NULL);
	}
	if (c->s->role == CLUSTER_FOLLOWER) {
		fail(c, CLUSTER_TIMED_OUT,
		     "cluster step %u (roadblock %s): no %s from the leader %s "
		     "within CLUSTER_TIMEOUT=%gs",
		     st->k, st->id, st->sent_ready ? "all-go" : "all-online", c->s->members[0],
		     c->s->timeout_s);
		return;
	}
	enum roster_mark m = st->sent_online_all ? ROSTER_READY : ROSTER_ONLINE;
	const char *what = st->sent_online_all ? "follower-ready" : "follower-online";
	roster_missing(&c->roster, m, (const char *const *)c->s->members, missing, sizeof(missing));
	if (c->s->on_failure == CLUSTER_ON_FAILURE_CONTINUE) {
		roster_drop_missing(&c->roster, m);
		add_event(st,
			  "no %s from %s within CLUSTER_TIMEOUT=%gs: left out of the run "
			  "(ON_HOST_FAILURE=continue)",
			  what, missing, c->s->timeout_s);
		record_dropped(c);
		leader_advance(c);
		return;
	}
	to_followers(c, RB_ALL_ABORT, NULL); /* the others need not wait for theirs */
	fail(c, CLUSTER_TIMED_OUT,
	     "cluster step %u (roadblock %s): no %s from %s within "
	     "CLUSTER_TIMEOUT=%gs (ON_HOST_FAILURE=abort)",
	     st->k, st->id, what, missing, c->s->timeout_s);
}

/* ---- the handle ------------------------------------------------------------ */

/* hiredis frees a context after its disconnect or failed connect */
static void forget(struct cluster *c, const redisAsyncContext *ac)
{
	if (ac == c->cmd)
		c->cmd = NULL;
	else if (ac == c->rd)
		c->rd = NULL;
	else if (ac == c->hb)
		c->hb = NULL;
}

static redisAsyncContext *connect_one(struct cluster *c);

/* Back, with the run's data (or it never had any yet): what was not
 * answered goes again, the reads go on from the last entries seen, and
 * every member is heard afresh (they were cut off too). */
static void resume(struct cluster *c)
{
	int64_t now = clock_mono_ns(), real = clock_real_ns();
	uv_timer_stop(&c->retry_timer);
	redis_retry_back(&c->retry);
	for (size_t i = 0; i < c->s->nmembers; i++) {
		c->heard[i] = now;
		c->heard_real[i] = real;
	}
	for (struct out_cmd *o = c->outbox; o; o = o->next)
		out_issue(c, o);
	if (c->pending && c->st.st != ST_WAITING) {
		/* asked while the last read was out, which the loss ended */
		uint32_t k = c->pending;
		c->pending = 0;
		step_begin(c, k);
	}
	read_next(c);
	hb_read(c);
}

static void persist_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	(void)priv;
	if (c->closing || c->failed)
		return;
	if (!rep) {
		link_lost(c, ac, ac->errstr[0] ? ac->errstr : "connection lost");
		return;
	}
	if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 1) {
		resume(c);
		return;
	}
	c->retry.down = false;
	fail(c, CLUSTER_REDIS_ERROR,
	     "cluster: Redis at %s:%d came back without the run's data (the roadblock key %s is "
	     "gone: it restarted without persistence, appendonly no?) after %s; the "
	     "barriers cannot go on",
	     c->s->redis_host, c->s->redis_port, c->known_key, c->retry.why);
}

/* Every connection of a try is up: is the run's data still there? */
static void link_up(struct cluster *c)
{
	c->links++;
	if (!c->known_key[0]) {
		resume(c);
		return;
	}
	const char *argv[] = { "EXISTS", c->known_key };
	redisAsyncCommandArgv(c->cmd, persist_done, NULL, 2, argv, NULL);
}

static void retry_cb(uv_timer_t *t);

static void retry_later(struct cluster *c)
{
	redis_retry_schedule(&c->retry, &c->retry_timer, retry_cb, c->closing || c->failed);
}

/* A connection went (ac: the one that said so, being freed by hiredis;
 * NULL: one found stuck).  The others are dropped and all made again, for
 * CLUSTER_TIMEOUT. */
static void link_lost(struct cluster *c, const redisAsyncContext *ac, const char *why)
{
	if (ac)
		forget(c, ac);
	if (c->closing || c->failed || c->dropping)
		return;
	if (!c->retry.down) {
		redis_retry_lost(&c->retry, why);
		uv_timer_stop(&c->retry_timer);
		retry_later(c);
		return;
	}
	retry_later(c);
}

/* Outside any hiredis callback: what is left of the connections goes, and
 * new ones are made, unless CLUSTER_TIMEOUT has passed since Redis went. */
static void retry_cb(uv_timer_t *t)
{
	struct cluster *c = t->data;
	redisAsyncContext *old[] = { c->cmd, c->rd, c->hb };
	if (c->closing || c->failed)
		return;
	c->cmd = c->rd = c->hb = NULL;
	c->reading = c->hb_reading = false;
	c->dropping = true;
	for (int i = 0; i < 3; i++)
		if (old[i])
			redisAsyncFree(old[i]); /* their callbacks see the connection lost */
	c->dropping = false;
	if (redis_retry_expired(&c->retry, c->s->timeout_s)) {
		c->retry.down = false;
		fail(c, CLUSTER_REDIS_ERROR,
		     "cluster: Redis at %s:%d lost (%s) and not back within CLUSTER_TIMEOUT=%gs "
		     "(%d tries to connect again)",
		     c->s->redis_host, c->s->redis_port, c->retry.why, c->s->timeout_s,
		     c->retry.tries);
		return;
	}
	c->retry.tries++;
	c->ups = 0;
	c->cmd = connect_one(c);
	c->rd = connect_one(c);
	c->hb = connect_one(c);
	if (c->cmd->err || c->rd->err || c->hb->err) {
		retry_later(c); /* this try's contexts go at the next */
		return;
	}
	/* a try that is not back (connected, its data checked) within this
	 * is dropped for the next: a connect into a dying server's backlog
	 * hangs, the libuv adapter drops its error */
	uv_timer_start(&c->retry_timer, retry_cb, CLUSTER_TRY_MS, 0);
}

static void connected(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;
	if (status != REDIS_OK) {
		forget(c, ac);
		if (!c->closing && !c->retry.down)
			fail(c, CLUSTER_REDIS_ERROR,
			     "cluster: cannot reach Redis at %s:%d (CLUSTER_REDIS): %s",
			     c->s->redis_host, c->s->redis_port, ac->errstr);
		else
			retry_later(c);
		return;
	}
	if (c->retry.down && ++c->ups == 3 && c->cmd && c->rd && c->hb)
		link_up(c);
}

static void disconnected(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;
	forget(c, ac);
	if (c->closing && !c->cmd && !c->rd && uv_is_active((uv_handle_t *)&c->close_timer)) {
		/* flushed: no need to wait out the grace */
		uv_timer_stop(&c->close_timer);
		uv_timer_start(&c->close_timer, close_final, 0, 0);
	}
	if (!c->closing)
		link_lost(c, NULL,
			  status != REDIS_OK && ac->errstr[0] ? ac->errstr
							      : "it closed the connection");
}

static redisAsyncContext *connect_one(struct cluster *c)
{
	return redis_link_connect(c->loop, c->s, c, connected, disconnected, cmd_done);
}

static void handle_closed(uv_handle_t *h)
{
	struct cluster *c = h->data;
	if (--c->handles == 0) {
		json_object_put(c->st.record);
		json_object_put(c->carry);
		while (c->outbox) {
			struct out_cmd *o = c->outbox;
			c->outbox = o->next;
			out_free(o);
		}
		free(c);
	}
}

/* The end: a command connection that did not flush within its grace goes
 * now, and the timers close. */
static void close_final(uv_timer_t *t)
{
	struct cluster *c = t->data;
	redisAsyncContext *cmd = c->cmd;
	if (uv_is_closing((uv_handle_t *)&c->close_timer))
		return;
	c->cmd = NULL;
	if (cmd)
		redisAsyncFree(cmd);
	uv_close((uv_handle_t *)&c->timeout_timer, handle_closed);
	uv_close((uv_handle_t *)&c->close_timer, handle_closed);
	uv_close((uv_handle_t *)&c->hb_timer, handle_closed);
	uv_close((uv_handle_t *)&c->retry_timer, handle_closed);
	uv_close((uv_handle_t *)&c->early_timer, handle_closed);
}

/* What was written last (all-abort, follower-gone) still goes out: the
 * command connection is flushed before it closes, for at most
 * CLUSTER_CLOSE_GRACE_MS; the blocked read is dropped. */
static void close_cb(uv_timer_t *t)
{
	struct cluster *c = t->data;
	redisAsyncContext *rd = c->rd, *hb = c->hb;
	c->rd = c->hb = NULL;
	if (rd)
		redisAsyncFree(rd); /* pending callbacks run with no reply; ours see closing */
	if (hb)
		redisAsyncFree(hb);
	if (!c->cmd) {
		close_final(t);
		return;
	}
	uv_timer_start(&c->close_timer, close_final, CLUSTER_CLOSE_GRACE_MS, 0);
	redisAsyncDisconnect(c->cmd);
}

/* A connection that failed at once (ac->err) is told from the loop. */
static void early_error_cb(uv_timer_t *t)
{
	struct cluster *c = t->data;
	redisAsyncContext *bad = c->cmd && c->cmd->err ? c->cmd
				 : c->rd && c->rd->err ? c->rd
				 : c->hb && c->hb->err ? c->hb
						       : NULL;
	if (bad)
		fail(c, CLUSTER_REDIS_ERROR, "cluster: cannot reach Redis at %s:%d (CLUSTER_REDIS): %s",
		     c->s->redis_host, c->s->redis_port, bad->errstr);
}

/* Random bytes for the messages' uuids; without entropy yet (early boot)
 * the pid and clocks make them differ from another hostd's. */
static void cluster_uuid_base(uint8_t base[16])
{
	uint64_t w[2];

	if (getrandom(base, 16, GRND_NONBLOCK) == 16)
		return;
	w[0] = (uint64_t)clock_real_ns() ^ ((uint64_t)getpid() << 32);
	w[1] = (uint64_t)clock_mono_ns();
	memcpy(base, w, 16);
}

struct cluster *cluster_new(uv_loop_t *loop, const struct cluster_settings *s,
			    const char *plan_sha256, uint32_t nsteps, cluster_cb cb, void *data)
{
	struct cluster *c = xcalloc(1, sizeof(*c));
	c->nsteps = nsteps;
	c->started_s = clock_real_ns() / 1000000000;
	snprintf(c->plan, sizeof(c->plan), "%s", plan_sha256);
	c->loop = loop;
	c->s = s;
	c->cb = cb;
	c->data = data;
	roster_init(&c->roster, s->nmembers);
	cluster_uuid_base(c->uuid_base);
	uv_timer_init(loop, &c->timeout_timer);
	uv_timer_init(loop, &c->close_timer);
	uv_timer_init(loop, &c->hb_timer);
	uv_timer_init(loop, &c->retry_timer);
	uv_timer_init(loop, &c->early_timer);
	c->timeout_timer.data = c->close_timer.data = c->hb_timer.data = c->retry_timer.data =
		c->early_timer.data = c;
	c->handles = 5;
	cluster_heartbeat_bounds(s->timeout_s, &c->hb_every_ns, &c->hb_silent_ns);
	c->cmd = connect_one(c);
	c->rd = connect_one(c);
	c->hb = connect_one(c);
	if (c->cmd->err || c->rd->err || c->hb->err)
		uv_timer_start(&c->close_timer, early_error_cb, 0, 0);
	return c;
}

void cluster_heartbeat_bounds(double timeout_s, int64_t *every_ns, int64_t *silent_ns)
{
	int64_t t = (int64_t)(timeout_s * 1e9);
	*every_ns = t / 6;
	if (*every_ns > CLUSTER_HB_EVERY_MAX_NS)
		*every_ns = CLUSTER_HB_EVERY_MAX_NS;
	if (*every_ns < CLUSTER_HB_EVERY_MIN_NS)
		*every_ns = CLUSTER_HB_EVERY_MIN_NS;
	*silent_ns = t / 2;
}

void cluster_step_ready(struct cluster *c, uint32_t k)
{
	if (c->closing || c->failed ||
	    (!c->retry.down && (!c->cmd || !c->rd || c->cmd->err || c->rd->err)))
		return;
	if (c->leader_lost) {
		/* ON_HOST_FAILURE=continue let the step finish; no leader
		 * releases the next */
		char silence[600];
		silence_text(c, 0, clock_mono_ns(), silence, sizeof(silence));
		say_abort(c); /* at step k: a leader only slow learns it at once */
		fail(c, CLUSTER_HEARTBEAT, "cluster step %u: the leader %s %s: the run ends here",
		     k, c->s->members[0], silence);
		return;
	}
	if (c->st.k == k && c->st.early) {
		step_local_ready(c);
		return;
	}
	if (c->reading) {
		/* the last step's read is out: begin when it is back */
		c->pending = k;
		if (c->st.st == ST_RELEASED)
			c->st.st = ST_DONE;
		return;
	}
	step_begin(c, k);
}

void cluster_abort(struct cluster *c)
{
	if (!c || c->closing)
		return;
	c->aborting = true;
	if (c->failed)
		return;
	c->failed = true; /* no callback follows */
	say_abort(c);
}

void cluster_close(struct cluster *c)
{
	if (!c || c->closing)
		return;
	/* the others stop watching this member: its run is over */
	if (c->hb_step && !c->retry.down && c->cmd) {
		if (c->s->role == CLUSTER_LEADER)
			send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_USER_OBJECT,
				end_object(c->s->member), NULL);
		else
			send_rb(c, c->hb_id, "leader", RB_TO_LEADER, c->s->members[0],
				RB_USER_OBJECT, end_object(c->s->member), NULL);
	}
	c->closing = true;
	uv_timer_stop(&c->timeout_timer);
	uv_timer_stop(&c->close_timer);
	uv_timer_stop(&c->hb_timer);
	uv_timer_stop(&c->retry_timer);
	uv_timer_stop(&c->early_timer);
	/* not from inside a hiredis callback, which may be this caller's */
	uv_timer_start(&c->close_timer, close_cb, 0, 0);
}
