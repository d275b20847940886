// SPDX-License-Identifier: GPL-2.0-or-later
#include "run_cluster_records.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cluster_records.h"
#include "log.h"
#include "member_records.h"
#include "run_priv.h"
#include "xalloc.h"

struct lines {
	char *buf;
	size_t len, cap;
};

/* What the leader knows of one follower. */
struct member_in {
	json_object *nodes;   /* its declared nodes; NULL until its facts came */
	json_object *facts;   /* its manifest facts, the latest accepted */
	json_object *pending; /* {"<step>": summary} of barrier records not yet written */
	uint64_t samples, barriers, refused;
	json_object *refusals; /* the first RUN_CREC_REFUSALS_SAID, said */
	uint32_t last_step;    /* of its latest barrier record */
	bool ended, warned_unsync;
};

struct held {
	json_object *o;
	uint32_t step;
	int64_t since_ns;
};

struct run_crec {
	struct run *r;
	const struct cluster_settings *s;
	struct crec *tx;
	bool leader, closing, done, failed;
	/* a follower's: lines not yet sent, its facts */
	struct lines out[2];
	uint64_t dropped; /* lines past RUN_CREC_QUEUED_MAX or MREC_LINE_MAX */
	uint64_t unsent;  /* entries Redis had no room for (CREC_UNACKED_MAX) */
	char *facts_now, *facts_sent;
	uv_timer_t flush_timer;
	/* the leader's */
	struct member_in *m; /* [nmembers]; [0] the leader itself, unused */
	struct mrec_units units;
	struct held held[RUN_CREC_HELD_MAX];
	size_t nheld;
	json_object *dropped_members; /* the leader's latest cluster.dropped */
	uv_timer_t hold_timer, end_timer;
	uint64_t across_steps;
	uint32_t released_step; /* the last of its own records written */
	int64_t across_max_ns, across_bound_max_ns;
	int handles;
};

/* ---- a follower ---------------------------------------------------------- */

static void lines_add(struct run_crec *c, struct lines *l, const char *line, size_t len)
{
	if (c->out[0].len + c->out[1].len + len > RUN_CREC_QUEUED_MAX) {
		if (!c->dropped++)
			log_warn("cluster: more than %u MiB of records wait for Redis: the rest stay "
				 "in this host's own folder only",
				 RUN_CREC_QUEUED_MAX >> 20);
		return;
	}
	if (l->len + len > l->cap) {
		l->cap = (l->len + len) * 2;
		l->buf = xrealloc(l->buf, l->cap);
	}
	memcpy(l->buf + l->len, line, len);
	l->len += len;
}

/* The lines of l as entries of whole lines, each at most MREC_LINES_MAX;
 * a line longer than MREC_LINE_MAX stays here (counted). */
static void lines_send(struct run_crec *c, struct lines *l, enum crec_kind kind)
{
	for (size_t at = 0; at < l->len;) {
		size_t skipped;
		at += mrec_skip_long(l->buf + at, l->len - at, &skipped);
		c->dropped += skipped;
		size_t n = mrec_take_lines(l->buf + at, l->len - at);
		if (n && crec_send(c->tx, kind, l->buf + at, n) == -ENOBUFS && !c->unsent++)
			log_warn("cluster: Redis has not taken the last %u MiB of records: the "
				 "rest stay in this host's own folder only",
				 CREC_UNACKED_MAX >> 20);
		at += n;
	}
	l->len = 0;
}

static void follower_flush(struct run_crec *c)
{
	if (c->facts_now && (!c->facts_sent || strcmp(c->facts_now, c->facts_sent) != 0)) {
		crec_send(c->tx, CREC_FACTS, c->facts_now, strlen(c->facts_now));
		free(c->facts_sent);
		c->facts_sent = xstrdup(c->facts_now);
	}
	lines_send(c, &c->out[0], CREC_SAMPLES);
	lines_send(c, &c->out[1], CREC_BARRIERS);
}

static void flush_cb(uv_timer_t *t)
{
	follower_flush(t->data);
}

static void line_queued(void *data, enum results_line kind, const char *line, size_t len)
{
	struct run_crec *c = data;
	if (c->leader) {
		if (kind == RESULTS_LINE_SAMPLE)
			mrec_units_note(&c->units, line, len);
		return;
	}
	if (c->closing)
		return;
	lines_add(c, &c->out[kind == RESULTS_LINE_BARRIER], line, len);
	/* every node started: the release is over, the step's work runs */
	if (kind == RESULTS_LINE_BARRIER)
		uv_timer_start(&c->flush_timer, flush_cb, 0, 0);
}

/* The facts a follower's manifest gives the leader. */
static char *facts_of(json_object *m)
{
	static const char *const keys[] = { "run",	    "status",	   "reason",
					    "host",	    "started",	   "ended",
					    "participants", "failures",	   "steps_released",
					    "samples",	    "failed_steps" };
	json_object *f = json_object_new_object(), *v;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_object_get_ex(m, keys[i], &v))
			json_object_object_add(f, keys[i], json_object_get(v));
	char *text = xstrdup(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN));
	json_object_put(f);
	return text;
}

/* ---- the leader ---------------------------------------------------------- */

static void refused(void *data, size_t member, const char *why)
{
	struct run_crec *c = data;
	struct member_in *mi = &c->m[member];
	char text[600];
	if (mi->refused++ >= RUN_CREC_REFUSALS_SAID)
		return;
	snprintf(text, sizeof(text), "cluster: a record of member %s refused: %s",
		 c->s->members[member], why);
	log_warn("%s", text);
	json_object_array_add(mi->refusals, json_object_new_string(text));
	run_add_event(c->r, NULL, 0, text);
}

static void refusedf(struct run_crec *c, size_t member, const char *kind, size_t line, const char *why)
{
	char text[400];
	snprintf(text, sizeof(text), "%s line %zu: %s", kind, line, why);
	refused(c, member, text);
}

static bool is_dropped(const struct run_crec *c, size_t member)
{
	for (size_t i = 0; c->dropped_members && i < json_object_array_length(c->dropped_members); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(c->dropped_members, i)),
			   c->s->members[member]) == 0)
			return true;
	return false;
}

/* Step k's record of member is in, or will never come: a member that sent
 * no facts (they go before its first step) sends no records, as a plain
 * roadblock follower. */
static bool member_settled(const struct run_crec *c, size_t member, uint32_t k)
{
	char key[16];
	const struct member_in *mi = &c->m[member];
	snprintf(key, sizeof(key), "%" PRIu32, k);
	return !mi->facts || json_object_object_get_ex(mi->pending, key, NULL) || mi->ended ||
	       mi->last_step > k || is_dropped(c, member) || c->failed;
}

static json_object *obj(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_object) ? v
											       : NULL;
}

/* o's "cluster" object, made when it has none */
static json_object *cluster_of(json_object *o)
{
	json_object *cl = obj(o, "cluster");
	if (!cl) {
		cl = json_object_new_object();
		json_object_object_add(o, "cluster", cl);
	}
	return cl;
}

/* pending's summaries of step k and before: their record is written */
static void prune(json_object *pending, uint32_t k)
{
	json_object *gone = json_object_new_array();
	json_object_object_foreach(pending, key, s)
	{
		(void)s;
		if (strtoul(key, NULL, 10) <= k)
			json_object_array_add(gone, json_object_new_string(key));
	}
	for (size_t i = 0; i < json_object_array_length(gone); i++)
		json_object_object_del(pending,
				       json_object_get_string(json_object_array_get_idx(gone, i)));
	json_object_put(gone);
}

/* The head of the held records, with every member's part of its step. */
static void release_head(struct run_crec *c)
{
	struct held h = c->held[0];
	char key[16];
	memmove(&c->held[0], &c->held[1], --c->nheld * sizeof(c->held[0]));
	snprintf(key, sizeof(key), "%" PRIu32, h.step);
	json_object *cl = cluster_of(h.o), *hosts = json_object_new_object(),
		    *members = json_object_new_object(), *missing = json_object_new_array();
	json_object *own = mrec_own_summary(h.o);
	if (own)
		json_object_object_add(hosts, c->s->member, own);
	for (size_t i = 1; i < c->s->nmembers; i++) {
		json_object *s = NULL;
		if (json_object_object_get_ex(c->m[i].pending, key, &s)) {
			json_object_object_add(members, c->s->members[i], json_object_get(s));
			json_object_object_add(hosts, c->s->members[i], json_object_get(s));
		} else if (!is_dropped(c, i)) {
			json_object_array_add(missing, json_object_new_string(c->s->members[i]));
		}
		prune(c->m[i].pending, h.step);
	}
	json_object *across = mrec_across(hosts);
	json_object_object_add(across, "missing", missing);
	json_object *skew = NULL, *bound = NULL;
	if (json_object_object_get_ex(across, "skew_ns", &skew) && skew &&
	    json_object_object_get_ex(across, "skew_bound_ns", &bound) && bound) {
		c->across_steps++;
		if (json_object_get_int64(skew) > c->across_max_ns)
			c->across_max_ns = json_object_get_int64(skew);
		if (json_object_get_int64(bound) > c->across_bound_max_ns)
			c->across_bound_max_ns = json_object_get_int64(bound);
	}
	json_object_object_add(cl, "members", members);
	json_object_object_add(cl, "across_hosts", across);
	c->released_step = h.step > c->released_step ? h.step : c->released_step;
	json_object_put(hosts);
	results_append_barrier(c->r->results, h.o);
	json_object_put(h.o);
}

static void hold_cb(uv_timer_t *t);

/* Writes the held records that may go: settled, held for CLUSTER_TIMEOUT,
 * or all of them at the end. */
static void release_ready(struct run_crec *c, bool all)
{
	int64_t now = clock_mono_ns(), wait = (int64_t)(c->s->timeout_s * 1e9);
	while (c->nheld) {
		bool settled = true;
		for (size_t i = 1; i < c->s->nmembers && settled; i++)
			settled = member_settled(c, i, c->held[0].step);
		if (!settled && !all && now - c->held[0].since_ns < wait)
			break;
		release_head(c);
	}
	uv_timer_stop(&c->hold_timer);
	if (c->nheld)
		uv_timer_start(&c->hold_timer, hold_cb,
			       (uint64_t)((c->held[0].since_ns + wait - now) / 1000000) + 1, 0);
}

static void hold_cb(uv_timer_t *t)
{
	release_ready(t->data, false);
}

static void leader_done(struct run_crec *c)
{
	if (c->done)
		return;
	c->done = true;
	uv_timer_stop(&c->end_timer);
	release_ready(c, true);
	run_manifest_write(c->r);
	crec_close(c->tx);
	c->tx = NULL;
}

/* member sends records and has not said its end yet */
static bool end_due(const struct run_crec *c, size_t member)
{
	return c->m[member].facts && !c->m[member].ended && !is_dropped(c, member);
}

static bool all_ended(const struct run_crec *c)
{
	for (size_t i = 1; i < c->s->nmembers; i++)
		if (end_due(c, i))
			return false;
	return true;
}

static void end_cb(uv_timer_t *t)
{
	struct run_crec *c = t->data;
	for (size_t i = 1; i < c->s->nmembers; i++)
		if (end_due(c, i))
			log_warn("cluster: member %s sent no end of its records within "
				 "CLUSTER_TIMEOUT=%gs of this run's end: what it sent is kept",
				 c->s->members[i], c->s->timeout_s);
	leader_done(c);
}

static void facts_in(struct run_crec *c, size_t member, const char *payload, size_t len)
{
	struct member_in *mi = &c->m[member];
	char err[300];
	json_object *f = mrec_parse(payload, len, err, sizeof(err)), *nodes = NULL;
	if (!f || mrec_facts(f, &nodes, err, sizeof(err)) < 0) {
		refusedf(c, member, "facts", 1, err);
		json_object_put(f);
		return;
	}
	/* its nodes are fixed by its first facts: a later one may not add any */
	if (mi->nodes) {
		for (size_t i = 0; i < json_object_array_length(nodes); i++) {
			const char *n = json_object_get_string(json_object_array_get_idx(nodes, i));
			bool known = false;
			for (size_t j = 0; j < json_object_array_length(mi->nodes); j++)
				known |= strcmp(n, json_object_get_string(
							   json_object_array_get_idx(mi->nodes, j))) ==
					 0;
			if (!known) {
				snprintf(err, sizeof(err),
					 "node \"%s\" was not among its first facts' nodes", n);
				refusedf(c, member, "facts", 1, err);
				json_object_put(f);
				json_object_put(nodes);
				return;
			}
		}
		json_object_put(nodes);
	} else {
		mi->nodes = nodes;
	}
	json_object_put(mi->facts);
	mi->facts = f;
}

/* A member's barrier record: its summary kept for the leader's own of the
 * same step; 0 or -1 with err. */
static int barrier_in(struct run_crec *c, size_t member, json_object *o, char *err, size_t errlen)
{
	struct member_in *mi = &c->m[member];
	const char *name = c->s->members[member];
	uint32_t step;
	json_object *s;
	char key[16];
	if (json_object_object_length(mi->pending) >= 2 * RUN_CREC_HELD_MAX) {
		snprintf(err, errlen,
			 "more than %d barrier records not yet matched by the leader's own",
			 2 * RUN_CREC_HELD_MAX);
		return -1;
	}
	if (mrec_barrier(o, name, mi->nodes, c->r->exp->nsteps, &step, &s, err, errlen) < 0)
		return -1;
	if (mrec_unsynchronised(s) && !mi->warned_unsync) {
		mi->warned_unsync = true;
		log_warn("cluster: member %s's clock is not synchronised (adjtimex): the skew across "
			 "hosts is only known to within its maxerror (barriers.ndjson: "
			 "cluster.across_hosts.skew_bound_ns)",
			 name);
	}
	snprintf(key, sizeof(key), "%" PRIu32, step);
	/* after the leader's own of that step was written (its hold ran out):
	 * counted, too late to be in it */
	if (step > c->released_step)
		json_object_object_add(mi->pending, key, s);
	else
		json_object_put(s);
	mi->barriers++;
	mi->last_step = step > mi->last_step ? step : mi->last_step;
	return 0;
}

/* Each line of an NDJSON payload, checked by kind. */
static void lines_in(struct run_crec *c, size_t member, enum crec_kind kind, const char *payload,
		     size_t len)
{
	struct member_in *mi = &c->m[member];
	const char *name = c->s->members[member], *what = crec_kind_name(kind);
	char err[300];
	size_t lineno = 0;
	for (const char *p = payload; p < payload + len;) {
		const char *nl = memchr(p, '\n', (size_t)(payload + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(payload + len - p);
		const char *line = p;
		p += n + 1;
		lineno++;
		if (!n)
			continue;
		if (!mi->nodes) {
			refusedf(c, member, what, lineno,
				 "before its manifest facts (no nodes declared)");
			continue;
		}
		json_object *o = n <= MREC_LINE_MAX ? mrec_parse(line, n, err, sizeof(err)) : NULL;
		if (n > MREC_LINE_MAX)
			snprintf(err, sizeof(err), "%zu bytes, more than %u", n, MREC_LINE_MAX);
		if (o && kind == CREC_SAMPLES &&
		    mrec_sample(o, name, mi->nodes, &c->units, err, sizeof(err)) == 0) {
			results_append_sample(c->r->results, o);
			c->r->samples_written++;
			mi->samples++;
		} else if (!o || kind != CREC_BARRIERS ||
			   barrier_in(c, member, o, err, sizeof(err)) < 0) {
			refusedf(c, member, what, lineno, err);
		}
		json_object_put(o);
	}
}

static void entry(void *data, size_t member, enum crec_kind kind, const char *payload, size_t len)
{
	struct run_crec *c = data;
	if (c->done)
		return;
	switch (kind) {
	case CREC_FACTS: facts_in(c, member, payload, len); break;
	case CREC_SAMPLES:
	case CREC_BARRIERS: lines_in(c, member, kind, payload, len); break;
	case CREC_END:
		c->m[member].ended = true;
		facts_in(c, member, payload, len);
		break;
	default: break;
	}
	release_ready(c, false);
	if (c->closing && all_ended(c))
		leader_done(c);
}

static void tx_error(void *data, const char *why)
{
	struct run_crec *c = data;
	c->failed = true;
	if (c->leader) {
		log_warn("%s: no more records from the followers (their own folders have them)", why);
		release_ready(c, false);
		if (c->closing)
			leader_done(c);
	} else {
		log_warn("%s: no more records go to the leader (this host's own folder has them)", why);
	}
}

static const struct crec_ops ops = { entry, refused, tx_error };

/* ---- the hooks ----------------------------------------------------------- */

void run_crec_start(struct run *r)
{
	const struct cluster_settings *s = &r->exp->cluster;
	if (!s->enabled || !r->results)
		return;
	struct run_crec *c = xcalloc(1, sizeof(*c));
	c->r = r;
	c->s = s;
	c->leader = s->role == CLUSTER_LEADER;
	uv_timer_init(r->loop, &c->flush_timer);
	uv_timer_init(r->loop, &c->hold_timer);
	uv_timer_init(r->loop, &c->end_timer);
	c->flush_timer.data = c->hold_timer.data = c->end_timer.data = c;
	c->handles = 3;
	if (c->leader) {
		mrec_units_init(&c->units);
		c->m = xcalloc(s->nmembers, sizeof(*c->m));
		for (size_t i = 0; i < s->nmembers; i++) {
			c->m[i].pending = json_object_new_object();
			c->m[i].refusals = json_object_new_array();
		}
	}
	r->crec = c;
	results_set_tee(r->results, line_queued, c);
	c->tx = crec_new(r->loop, s, &ops, c);
	/* a follower's facts go at once, before its first step: the leader
	 * waits for the records of members that sent them */
	run_manifest_write(r);
	if (!c->leader)
		follower_flush(c);
}

void run_crec_barrier(struct run *r, json_object *o)
{
	struct run_crec *c = r->crec;
	if (!c || !c->leader || c->done || c->s->nmembers < 2) {
		results_append_barrier(r->results, o);
		return;
	}
	json_object *step = NULL, *cl = obj(o, "cluster"), *d = NULL;
	json_object_object_get_ex(o, "step", &step);
	if (cl && json_object_object_get_ex(cl, "dropped", &d)) {
		json_object_put(c->dropped_members);
		c->dropped_members = json_object_get(d);
	}
	if (c->nheld == RUN_CREC_HELD_MAX)
		release_head(c);
	c->held[c->nheld++] = (struct held){ json_object_get(o),
					     (uint32_t)json_object_get_int64(step), clock_mono_ns() };
	release_ready(c, false);
}

static json_object *member_json(const struct run_crec *c, size_t i)
{
	const struct member_in *mi = &c->m[i];
	json_object *o = json_object_new_object(), *v;
	const char *keep[] = { "status",	 "reason",	 "host",
			       "steps_released", "failed_steps", "failures" };
	for (size_t k = 0; mi->facts && k < sizeof(keep) / sizeof(keep[0]); k++)
		if (json_object_object_get_ex(mi->facts, keep[k], &v))
			json_object_object_add(o, keep[k], json_object_get(v));
	json_object *rec = json_object_new_object();
	json_object_object_add(rec, "samples", json_object_new_uint64(mi->samples));
	json_object_object_add(rec, "barriers", json_object_new_uint64(mi->barriers));
	json_object_object_add(rec, "refused", json_object_new_uint64(mi->refused));
	json_object_object_add(o, "records", rec);
	json_object_object_add(o, "refusals", json_object_get(mi->refusals));
	json_object_object_add(o, "ended", json_object_new_boolean(mi->ended));
	json_object_object_add(o, "clock_unsynchronised", json_object_new_boolean(mi->warned_unsync));
	return o;
}

void run_crec_manifest(struct run *r, json_object *m)
{
	struct run_crec *c = r->crec;
	if (!c)
		return;
	if (!c->leader) {
		free(c->facts_now);
		c->facts_now = facts_of(m);
		return;
	}
	json_object *parts = NULL, *cl = cluster_of(m);
	json_object_object_get_ex(m, "participants", &parts);
	json_object *hosts = json_object_new_object();
	for (size_t i = 1; i < c->s->nmembers; i++) {
		if (c->m[i].facts && parts) {
			json_object *theirs = mrec_facts_participants(c->m[i].facts, c->s->members[i]);
			for (size_t k = 0; k < json_object_array_length(theirs); k++)
				json_object_array_add(parts,
						      json_object_get(
							      json_object_array_get_idx(theirs, k)));
			json_object_put(theirs);
		}
		json_object_object_add(hosts, c->s->members[i], member_json(c, i));
	}
	json_object *across = json_object_new_object();
	json_object_object_add(across, "steps", json_object_new_uint64(c->across_steps));
	json_object_object_add(across, "skew_max_ns",
			       c->across_steps ? json_object_new_int64(c->across_max_ns) : NULL);
	json_object_object_add(across, "skew_bound_max_ns",
			       c->across_steps ? json_object_new_int64(c->across_bound_max_ns) : NULL);
	json_object_object_add(cl, "hosts", hosts);
	json_object_object_add(cl, "across_hosts", across);
}

void run_crec_close(struct run *r)
{
	struct run_crec *c = r->crec;
	if (!c || c->closing)
		return;
	c->closing = true;
	if (!c->leader) {
		uv_timer_stop(&c->flush_timer);
		follower_flush(c);
		if (c->dropped || c->unsent)
			log_warn("cluster: %" PRIu64 " record lines and %" PRIu64
				 " entries were not sent to the leader (too long, or too many "
				 "waiting): this host's own folder has them",
				 c->dropped, c->unsent);
		const char *end = c->facts_now ? c->facts_now : "{}";
		crec_send(c->tx, CREC_END, end, strlen(end));
		crec_close(c->tx);
		c->tx = NULL;
		return;
	}
	if (all_ended(c) || c->failed) {
		leader_done(c);
		return;
	}
	uv_timer_start(&c->end_timer, end_cb, (uint64_t)(c->s->timeout_s * 1000), 0);
}

static void handle_closed(uv_handle_t *h)
{
	struct run_crec *c = h->data;
	if (--c->handles)
		return;
	for (size_t i = 0; c->m && i < c->s->nmembers; i++) {
		json_object_put(c->m[i].nodes);
		json_object_put(c->m[i].facts);
		json_object_put(c->m[i].pending);
		json_object_put(c->m[i].refusals);
	}
	free(c->m);
	for (size_t i = 0; i < c->nheld; i++)
		json_object_put(c->held[i].o);
	if (c->leader)
		mrec_units_fini(&c->units);
	json_object_put(c->dropped_members);
	free(c->out[0].buf);
	free(c->out[1].buf);
	free(c->facts_now);
	free(c->facts_sent);
	free(c);
}

/* After the loop: the handles' last callbacks run in the loop's close. */
void run_crec_free(struct run *r)
{
	struct run_crec *c = r->crec;
	if (!c)
		return;
	results_set_tee(r->results, NULL, NULL);
	r->crec = NULL;
	crec_close(c->tx);
	uv_close((uv_handle_t *)&c->flush_timer, handle_closed);
	uv_close((uv_handle_t *)&c->hold_timer, handle_closed);
	uv_close((uv_handle_t *)&c->end_timer, handle_closed);
	uv_run(r->loop, UV_RUN_DEFAULT);
}
