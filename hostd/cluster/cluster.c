// SPDX-License-Identifier: GPL-2.0-or-later
/* The barrier's steps (cluster.h): one roadblock a step, the leader's and a
 * follower's side of it, the reads of its streams, the release, a step's
 * timeout and joining the next step's roadblock early.  What is written
 * goes through cluster_outbox.c, the heartbeats between barriers are
 * cluster_heartbeat.c's, a lost Redis cluster_reconnect.c's, the handle's
 * making and closing cluster_handle.c's. */
#include "cluster_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

const char *cl_stream_suffix(const struct cluster *c, int which)
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
bool cl_at_barrier(const struct cluster *c)
{
	return c->st.st == ST_WAITING && c->st.local_ready;
}

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
		cl_hb_follow(c);
}

void cl_fail(struct cluster *c, enum cluster_outcome out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cl_fail(struct cluster *c, enum cluster_outcome out, const char *fmt, ...)
{
	char why[768];
	va_list ap;
	if (c->closing || c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!cl_at_barrier(c)) {
		/* between barriers (a heartbeat): the record of the step
		 * released last is the run's, and stays as it was */
		json_object_put(c->st.record);
		c->st.record = NULL;
	}
	c->st.st = ST_DONE;
	deliver(c, out, 0, why);
}

/* ---- the leader ---------------------------------------------------------- */

/* The followers left out for good, for the step's record. */
void cl_record_dropped(struct cluster *c)
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

void cl_leader_advance(struct cluster *c)
{
	struct step *st = &c->st;
	if (st->st != ST_WAITING)
		return;
	if (!st->sent_online_all) {
		if (!roster_all(&c->roster, ROSTER_ONLINE))
			return;
		st->sent_online_all = true;
		cl_to_followers(c, RB_ALL_ONLINE, NULL);
	}
	if (!roster_all(&c->roster, ROSTER_READY) || (!st->local_ready && !st->abort_seen))
		return; /* an abort need not wait for this host's own barrier */
	cl_batch_begin(c);
	cl_to_followers(c, RB_ALL_READY, NULL);
	if (st->abort_seen || c->aborting) {
		cl_to_followers(c, RB_ALL_ABORT, NULL);
		cl_batch_end(c);
		cl_fail(c, CLUSTER_ABORTED,
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
	cl_to_followers(c, RB_USER_OBJECT, rb_release_object(&rel));
	cl_to_followers(c, RB_ALL_GO, NULL);
	cl_batch_end(c);
	st->st = ST_RELEASED;
	deliver(c, CLUSTER_RELEASED, rel.at_realtime_ns, NULL);
}

ssize_t cl_member_index(const struct cluster *c, const char *id)
{
	for (size_t i = 0; i < c->s->nmembers; i++)
		if (strcmp(c->s->members[i], id) == 0)
			return (ssize_t)i;
	return -1;
}

void cl_add_event(struct step *st, const char *fmt, ...)
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
	ssize_t i = cl_member_index(c, m->sender_id);
	if (m->sender_type != RB_ROLE_FOLLOWER)
		return;
	if (i <= 0 || c->roster.dropped[i]) {
		cl_add_event(st, "%s from %s, not a follower of CLUSTER_MEMBERS%s: ignored",
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
			cl_to_followers(c, RB_ALL_GONE, NULL);
			st->st = ST_DONE;
		}
		return;
	case RB_USER_OBJECT:
		r = rb_member_parse(m->user_object, &rtt, plan, err, sizeof(err));
		if (r < 0)
			cl_add_event(st, "a member object from %s: %s", m->sender_id, err);
		if (r <= 0)
			return;
		c->roster.rtt_ns[i] = rtt;
		c->lockstep[i] = true;
		if (strcmp(plan, c->plan) != 0) {
			cl_to_followers(c, RB_ALL_ABORT, NULL);
			cl_fail(c, CLUSTER_ABORTED,
				"cluster step %u (roadblock %s): member %s runs a "
				"different plan (sha256 %.12s..., this leader's %.12s...): every member "
				"must run the same g.conf; all-abort sent",
				st->k, st->id, m->sender_id, plan, c->plan);
		}
		return;
	default: return;
	}
	cl_leader_advance(c);
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
	cl_batch_begin(c); /* the leader wakes once, for both */
	cl_to_leader(c, RB_USER_OBJECT, rb_member_object(c->s->member, c->rtt_ns, c->plan));
	cl_to_leader(c, c->aborting ? RB_FOLLOWER_READY_ABORT : RB_FOLLOWER_READY, NULL);
	cl_batch_end(c);
}

static void follower_handle(struct cluster *c, const struct rb_msg *m)
{
	struct step *st = &c->st;
	char err[256];
	struct rb_release rel;
	if (m->sender_type != RB_ROLE_LEADER || strcmp(m->sender_id, c->s->members[0]) != 0) {
		if (m->sender_type == RB_ROLE_LEADER)
			cl_add_event(st, "%s from %s, not the leader %s: ignored",
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
			cl_add_event(st, "a release from %s: %s", m->sender_id, err);
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
	case RB_LEADER_HEARTBEAT: cl_to_leader(c, RB_FOLLOWER_HEARTBEAT, NULL); return;
	case RB_ALL_GO:
		cl_to_leader(c, RB_FOLLOWER_GONE, NULL);
		st->st = ST_DONE;
		deliver(c, CLUSTER_RELEASED, st->have_at ? st->at_real : 0, NULL);
		return;
	case RB_ALL_ABORT:
		cl_to_leader(c, RB_FOLLOWER_GONE, NULL);
		cl_fail(c, CLUSTER_ABORTED,
			"cluster step %u (roadblock %s): the leader %s sent all-abort", st->k,
			st->id, m->sender_id);
		return;
	case RB_HEARTBEAT_TIMEOUT:
		cl_fail(c, CLUSTER_HEARTBEAT,
			"cluster step %u (roadblock %s): the leader %s sent "
			"heartbeat-timeout",
			st->k, st->id, m->sender_id);
		return;
	default: return;
	}
}

/* ---- reading --------------------------------------------------------------- */

static void early_later(struct cluster *c);
static void timeout_cb(uv_timer_t *t);

bool cl_message_for_me(const struct cluster *c, const struct rb_msg *m)
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
const redisReply *cl_entry_msg(const redisReply *e, char *last, size_t size)
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
	const redisReply *text = cl_entry_msg(e, st->last[which], sizeof(st->last[which]));
	if (text) {
		struct rb_msg m;
		char err[320];
		if (rb_msg_decode(text->str, (size_t)text->len, &m, err, sizeof(err)) < 0) {
			cl_add_event(st, "%s__stream__%s entry %s: %s", st->id,
				     cl_stream_suffix(c, which), e->element[0]->str, err);
			return;
		}
		if (strcmp(m.roadblock, st->id) == 0 && cl_message_for_me(c, &m)) {
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
	if (cl_reply_bad(c, ac, rep, "XREAD"))
		return;
	for (size_t s = 0; rep->type == REDIS_REPLY_ARRAY && s < rep->elements; s++) {
		const char *name;
		const redisReply *entries = redis_xread_stream(rep->element[s], &name);
		if (!entries)
			continue;
		const char *suffix = strstr(name, "__stream__");
		int which = -1;
		for (int w = 0; suffix && w < S_COUNT; w++)
			if (strcmp(suffix + 10, cl_stream_suffix(c, w)) == 0)
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
		cl_step_begin(c, k);
		return;
	}
	if (c->st.st == ST_DONE)
		early_later(c);
	cl_read_next(c);
}

void cl_read_next(struct cluster *c)
{
	struct step *st = &c->st;
	if (c->reading || c->closing || c->failed || c->retry.down || !c->rd || st->st == ST_DONE ||
	    st->st == ST_IDLE)
		return;
	char names[S_COUNT][RB_ID_MAX + RB_NAME_MAX + 16];
	const char *keys[S_COUNT], *lasts[S_COUNT];
	for (int w = 0; w < S_COUNT; w++) {
		snprintf(names[w], sizeof(names[w]), "%s__stream__%s", st->id, cl_stream_suffix(c, w));
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
void cl_say_abort(struct cluster *c)
{
	/* a follower already ready here may be released here all the same:
	 * the leader learns it at the next one */
	if (c->st.st != ST_WAITING || (c->s->role == CLUSTER_FOLLOWER && c->st.sent_ready)) {
		step_reset(c, c->st.k + 1);
		step_join(c);
	}
	if (c->s->role == CLUSTER_LEADER)
		cl_to_followers(c, RB_ALL_ABORT, NULL);
	else
		cl_to_leader(c, RB_FOLLOWER_READY_ABORT, NULL);
}

/* ---- a step --------------------------------------------------------------- */

static void ping_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	(void)priv;
	if (cl_reply_bad(c, ac, reply, "PING") || c->ping_links != c->links)
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
	cl_send_msg(c, "global", RB_TO_ALL, NULL, RB_GLOBAL_STREAM_CREATED, NULL, NULL);
	cl_send_msg(c, "leader", RB_TO_LEADER, c->s->members[0], RB_LEADER_STREAM_CREATED, NULL, NULL);
	cl_send_msg(c, "followers", RB_TO_ALL, NULL, RB_FOLLOWERS_STREAM_CREATED, NULL, NULL);
	cl_send_msg(c, "global", RB_TO_ALL, NULL, RB_TIMEOUT_TS, NULL, ts);
	cl_send_msg(c, "global", RB_TO_ALL, NULL, RB_INITIATOR_INFO, NULL, NULL);
	char key[RB_ID_MAX + 16];
	snprintf(key, sizeof(key), "%s__initialized", c->st.id);
	cl_cmd_words(c, cl_cmd_done, "RPUSH", "RPUSH", key, "1", NULL);
}

/* An integer reply to a command of step k (priv); false when it failed or
 * the step moved on. */
static bool step_int(struct cluster *c, redisAsyncContext *ac, redisReply *rep, void *priv,
		     const char *what, long long *v)
{
	if (cl_reply_bad(c, ac, rep, what) || (uint32_t)(uintptr_t)priv != c->st.k)
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
	if (cl_reply_bad(c, ac, rep, "GET") || (uint32_t)(uintptr_t)priv != c->st.k)
		return;
	long long now = clock_real_ns() / 1000000000, created = now;
	if (rep->type == REDIS_REPLY_STRING)
		created = strtoll(rep->str, NULL, 10);
	/* the others may have joined early, a whole step ago: the measure is
	 * this member's start */
	if (created >= c->started_s - (long long)c->s->timeout_s - CLUSTER_STALE_SLACK_S) {
		cl_read_next(c);
		return;
	}
	cl_fail(c, CLUSTER_ABORTED,
		"cluster step %u: the roadblock %s was made %lld s ago, %lld s before "
		"this member started (CLUSTER_TIMEOUT=%gs): CLUSTER_ID=%s was used by an earlier run; "
		"give every run a new CLUSTER_ID",
		c->st.k, c->st.id, now - created, (long long)c->started_s - created,
		c->s->timeout_s, c->s->id);
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
		cl_read_next(c);
	} else {
		cl_cmd_words(c, created_done, priv, "GET", c->st.id, NULL);
	}
}

static void timedout_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	long long v;
	if (step_int(c, ac, reply, priv, "EXISTS", &v) && v == 1)
		cl_fail(c, CLUSTER_TIMED_OUT,
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
		cl_record_dropped(c);
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
	cl_cmd_words(c, timedout_done, (void *)(uintptr_t)k, "EXISTS", key, NULL);
	cl_cmd_words(c, msetnx_done, (void *)(uintptr_t)k, "MSETNX", st->id, now, NULL);
	cl_send_msg(c, c->s->member, c->s->role == CLUSTER_LEADER ? RB_TO_LEADER : RB_TO_FOLLOWER,
		    c->s->member, RB_PERSONAL_STREAM_CREATED, NULL, NULL);
	if (c->s->role == CLUSTER_LEADER)
		cl_to_followers(c, RB_LEADER_ONLINE, NULL);
	else
		cl_to_leader(c, RB_FOLLOWER_ONLINE, NULL);
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
	cl_cmd_words(c, ping_done, NULL, "PING", NULL);
	json_object_object_add(st->record, "ready_realtime_ns", json_object_new_int64(clock_real_ns()));
	uv_timer_start(&c->timeout_timer, timeout_cb, (uint64_t)(c->s->timeout_s * 1000), 0);
	if (c->s->role == CLUSTER_LEADER)
		cl_leader_advance(c); /* every follower dropped: nobody to wait for */
	else
		follower_ready(c);
}

void cl_step_begin(struct cluster *c, uint32_t k)
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
		cl_leader_advance(c);
	cl_read_next(c);
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
		cl_fail(c, CLUSTER_REDIS_ERROR,
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
		cl_cmd_words(c, cl_cmd_done, "SETNX", "SETNX", key, "1", NULL);
	}
	if (c->s->role == CLUSTER_FOLLOWER) {
		cl_fail(c, CLUSTER_TIMED_OUT,
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
		cl_add_event(st,
			     "no %s from %s within CLUSTER_TIMEOUT=%gs: left out of the run "
			     "(ON_HOST_FAILURE=continue)",
			     what, missing, c->s->timeout_s);
		cl_record_dropped(c);
		cl_leader_advance(c);
		return;
	}
	cl_to_followers(c, RB_ALL_ABORT, NULL); /* the others need not wait for theirs */
	cl_fail(c, CLUSTER_TIMED_OUT,
		"cluster step %u (roadblock %s): no %s from %s within "
		"CLUSTER_TIMEOUT=%gs (ON_HOST_FAILURE=abort)",
		st->k, st->id, what, missing, c->s->timeout_s);
}

/* ---- the caller's steps ---------------------------------------------------- */

void cluster_step_ready(struct cluster *c, uint32_t k)
{
	if (c->closing || c->failed ||
	    (!c->retry.down && (!c->cmd || !c->rd || c->cmd->err || c->rd->err)))
		return;
	if (c->leader_lost) {
		/* ON_HOST_FAILURE=continue let the step finish; no leader
		 * releases the next */
		char silence[600];
		cl_silence_text(c, 0, clock_mono_ns(), silence, sizeof(silence));
		cl_say_abort(c); /* at step k: a leader only slow learns it at once */
		cl_fail(c, CLUSTER_HEARTBEAT, "cluster step %u: the leader %s %s: the run ends here",
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
	cl_step_begin(c, k);
}

void cluster_abort(struct cluster *c)
{
	if (!c || c->closing)
		return;
	c->aborting = true;
	if (c->failed)
		return;
	c->failed = true; /* no callback follows */
	cl_say_abort(c);
}
