// SPDX-License-Identifier: GPL-2.0-or-later
/* The heartbeats once a step is released (docs/cluster.md "Heartbeats"):
 * on the roadblock of the step released last, read by their own
 * connection; a member silent too long is named, and the run aborts or
 * goes on without it (ON_HOST_FAILURE); a member's lockstep-end at its
 * close. */
#include "cluster_priv.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* The run's end, said on the heartbeats' roadblock: the others stop
 * watching this member.  {"lockstep-end":{"member":NAME}} */
json_object *cl_end_object(const char *member)
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
void cl_silence_text(const struct cluster *c, size_t i, int64_t now, char *buf, size_t size)
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
	cl_silence_text(c, i, now, silence, sizeof(silence));
	if (c->s->on_failure == CLUSTER_ON_FAILURE_ABORT) {
		cl_send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_HEARTBEAT_TIMEOUT, NULL, NULL);
		if (c->st.st == ST_WAITING && strcmp(c->st.id, c->hb_id) != 0)
			cl_to_followers(c, RB_HEARTBEAT_TIMEOUT, NULL); /* those waiting there */
		cl_fail(c, CLUSTER_HEARTBEAT,
			"cluster: member %s %s: heartbeat-timeout sent (ON_HOST_FAILURE=abort)",
			c->s->members[i], silence);
		return;
	}
	c->roster.dropped[i] = true;
	snprintf(why, sizeof(why),
		 "cluster: member %s %s: left out of the rest of the run (ON_HOST_FAILURE=continue)",
		 c->s->members[i], silence);
	if (c->st.st == ST_WAITING) {
		cl_add_event(&c->st, "%s", why);
		cl_record_dropped(c);
	} else {
		carry_event(c, why);
	}
	notify(c, why);
	if (c->st.st == ST_RELEASED && roster_all(&c->roster, ROSTER_GONE)) {
		/* it was the last one not gone */
		cl_to_followers(c, RB_ALL_GONE, NULL);
		c->st.st = ST_DONE;
	}
	cl_leader_advance(c); /* it may be the one a barrier waits for */
}

/* A follower: the leader has been silent too long. */
static void follower_lost_leader(struct cluster *c, int64_t now)
{
	char silence[600], why[900];
	cl_silence_text(c, 0, now, silence, sizeof(silence));
	c->leader_lost = true;
	if (c->s->on_failure == CLUSTER_ON_FAILURE_ABORT || cl_at_barrier(c)) {
		const char *policy = cl_at_barrier(c) ? "" : " (ON_HOST_FAILURE=abort)";
		/* a leader only slow, not gone, need not wait for its timeout */
		cl_say_abort(c);
		cl_fail(c, CLUSTER_HEARTBEAT, "cluster: the leader %s %s%s", c->s->members[0],
			silence, policy);
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
	const redisReply *text = cl_entry_msg(e, c->hb_last, sizeof(c->hb_last));
	struct rb_msg m;
	char err[320];
	/* a bad one was, or will be, an event of the barrier's reader */
	if (!text || rb_msg_decode(text->str, (size_t)text->len, &m, err, sizeof(err)) < 0)
		return;
	ssize_t i = cl_member_index(c, m.sender_id);
	bool leader = c->s->role == CLUSTER_LEADER;
	if (strcmp(m.roadblock, c->hb_id) == 0 && cl_message_for_me(c, &m) && i >= 0 &&
	    (leader ? m.sender_type == RB_ROLE_FOLLOWER && i > 0
		    : m.sender_type == RB_ROLE_LEADER && i == 0)) {
		c->heard[i] = clock_mono_ns();
		c->heard_real[i] = clock_real_ns();
		if (is_end_object(&m))
			c->ended[i] = true;
		else if (!leader && m.command == RB_HEARTBEAT_TIMEOUT)
			cl_fail(c, CLUSTER_HEARTBEAT,
				"cluster step %u (roadblock %s): the leader %s sent heartbeat-timeout "
				"(a member went silent; the leader's log names it)",
				c->hb_step, c->hb_id, m.sender_id);
		else if (!leader && m.command == RB_ALL_ABORT && c->st.st != ST_WAITING)
			cl_fail(c, CLUSTER_ABORTED,
				"cluster (roadblock %s): the leader %s sent all-abort", c->hb_id,
				m.sender_id);
	}
	rb_msg_clear(&m);
}

static void hb_read_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	(void)priv;
	c->hb_reading = false;
	if (cl_reply_bad(c, ac, rep, "XREAD (heartbeats)"))
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
	cl_hb_read(c);
}

void cl_hb_read(struct cluster *c)
{
	if (c->hb_reading || c->closing || c->failed || c->retry.down || !c->hb || !c->hb_step)
		return;
	char stream[RB_ID_MAX + 32];
	snprintf(stream, sizeof(stream), "%s__stream__%s", c->hb_id, cl_stream_suffix(c, S_INBOX));
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
		cl_link_lost(c, NULL, why);
		return;
	}
	if (c->s->role == CLUSTER_LEADER)
		cl_send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_LEADER_HEARTBEAT, NULL, NULL);
	else
		cl_send_rb(c, c->hb_id, "leader", RB_TO_LEADER, c->s->members[0],
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
void cl_hb_follow(struct cluster *c)
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
	cl_hb_read(c);
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
