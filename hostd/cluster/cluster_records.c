// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_records.h"

#include <errno.h>
#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cluster.h"
#include "member_records.h"
#include "redis_link.h"
#include "xalloc.h"

#define CREC_READ_BLOCK_MS 200
#define CREC_KEY_MAX 400
#define CREC_WATCH_MS 500

/* A follower's entry until Redis took it. */
struct crec_out {
	struct crec_out *next;
	char seq[24];
	enum crec_kind kind;
	int64_t sent_ns; /* mono ns, on the connection now */
	size_t len;
	char payload[];
};

static const char *const kind_names[CREC_NKINDS] = { "facts", "samples", "barriers", "end" };

struct crec {
	uv_loop_t *loop;
	const struct cluster_settings *s;
	const struct crec_ops *ops;
	void *data;
	redisAsyncContext *ac;
	uv_timer_t timer; /* the end: grace, then the handle goes */
	bool closing, failed, reading;
	int handles;
	uint64_t seq;
	/* Redis lost: connected again by the barrier's rule (redis_link.h) */
	struct redis_retry retry;
	uv_timer_t retry_timer;
	/* a connection gone without a word: the leader's read or a follower's
	 * oldest entry unanswered CLUSTER_STUCK_NS past its due */
	uv_timer_t watch_timer;
	int64_t read_t0, watch_at; /* mono ns: the read sent, the last watch */
	/* a follower's entries sent, Redis' reply not yet in, in order: sent
	 * again on the next connection when this one goes */
	struct crec_out *out, **out_tail;
	size_t unacked; /* their bytes */
	/* the leader's: per member, the last entry read and seq expected */
	char (*last)[48];
	uint64_t *next_seq;
};

const char *crec_kind_name(enum crec_kind k)
{
	return k < CREC_NKINDS ? kind_names[k] : "?";
}

size_t crec_kind_max(enum crec_kind k)
{
	return k == CREC_SAMPLES || k == CREC_BARRIERS ? MREC_LINES_MAX : MREC_FACTS_MAX;
}

static void stream_key(const struct crec *c, size_t member, char *key)
{
	snprintf(key, CREC_KEY_MAX, "%s__records__%s", c->s->id, c->s->members[member]);
}

static void redis_failed(struct crec *c, const char *what, const char *why)
{
	char text[600];
	if (c->closing || c->failed)
		return;
	c->failed = true;
	snprintf(text, sizeof(text), "cluster records: Redis at %s:%d: %s: %s", c->s->redis_host,
		 c->s->redis_port, what, why);
	c->ops->error(c->data, text);
}

static void link_lost(struct crec *c, const redisAsyncContext *ac, const char *why);

/* A reply: false when it is one to go on with.  None (the connection
 * went): connected again, see link_lost. */
static bool reply_bad(struct crec *c, redisAsyncContext *ac, redisReply *rep, const char *what)
{
	char why[300];
	if (c->closing || c->failed)
		return true;
	if (rep && rep->type != REDIS_REPLY_ERROR)
		return false;
	if (!rep) {
		snprintf(why, sizeof(why), "%s: %s", what,
			 ac->errstr[0] ? ac->errstr : "connection lost");
		link_lost(c, ac, why);
		return true;
	}
	redis_failed(c, what, rep->str);
	return true;
}

static void cmd_done(redisAsyncContext *ac, void *reply, void *priv)
{
	reply_bad(ac->data, ac, reply, priv);
}

/* Redis took an entry, or the connection went: then it and every later
 * one (no reply either) stay, to go again in order. */
static void xadd_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct crec *c = ac->data;
	struct crec_out *o = priv;
	if (!reply && !c->closing) {
		reply_bad(c, ac, reply, "XADD");
		return;
	}
	if (c->out == o) { /* replies come in order: the oldest */
		c->out = o->next;
		if (!c->out)
			c->out_tail = &c->out;
		c->unacked -= o->len;
		free(o);
	}
	reply_bad(c, ac, reply, "XADD");
}

static void xadd_issue(struct crec *c, struct crec_out *o)
{
	char key[CREC_KEY_MAX], maxlen[16];
	if (!c->ac || c->retry.down)
		return; /* sent when the connection is back */
	for (size_t i = 0; i < c->s->nmembers; i++)
		if (strcmp(c->s->members[i], c->s->member) == 0)
			stream_key(c, i, key);
	snprintf(maxlen, sizeof(maxlen), "%d", CREC_STREAM_MAXLEN);
	const char *argv[] = { "XADD", key,	  "MAXLEN", "~",
			       maxlen, "*",	  "member", c->s->member,
			       "seq",  o->seq,	  "kind",   kind_names[o->kind],
			       "data", o->payload };
	size_t lens[14];
	for (int i = 0; i < 13; i++)
		lens[i] = strlen(argv[i]);
	lens[13] = o->len;
	o->sent_ns = clock_mono_ns();
	redisAsyncCommandArgv(c->ac, xadd_done, o, 14, argv, lens);
}

int crec_send(struct crec *c, enum crec_kind kind, const char *payload, size_t len)
{
	if (!c || c->closing || c->failed)
		return -EPIPE;
	if (c->unacked + len > CREC_UNACKED_MAX)
		return -ENOBUFS;
	struct crec_out *o = xmalloc(sizeof(*o) + len + 1);
	o->next = NULL;
	snprintf(o->seq, sizeof(o->seq), "%" PRIu64, ++c->seq);
	o->kind = kind;
	o->len = len;
	memcpy(o->payload, payload, len);
	o->payload[len] = 0;
	c->unacked += len;
	*c->out_tail = o;
	c->out_tail = &o->next;
	xadd_issue(c, o);
	return 0;
}

/* ---- the leader ---------------------------------------------------------- */

static void read_next(struct crec *c);

static const char *field(redisReply *f, const char *name, size_t *len)
{
	for (size_t j = 0; j + 1 < f->elements; j += 2)
		if (f->element[j]->type == REDIS_REPLY_STRING && strcmp(f->element[j]->str, name) == 0 &&
		    f->element[j + 1]->type == REDIS_REPLY_STRING) {
			*len = (size_t)f->element[j + 1]->len;
			return f->element[j + 1]->str;
		}
	return NULL;
}

static void refuse(struct crec *c, size_t m, const char *id, const char *why)
{
	char text[400];
	snprintf(text, sizeof(text), "entry %s of %s__records__%s: %s", id, c->s->id,
		 c->s->members[m], why);
	c->ops->refused(c->data, m, text);
}

static void entry_in(struct crec *c, size_t m, redisReply *e)
{
	char why[200];
	size_t len = 0, mlen, slen, klen;
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
		return;
	const char *id = e->element[0]->str;
	snprintf(c->last[m], sizeof(c->last[m]), "%s", id);
	redisReply *f = e->element[1];
	const char *member = field(f, "member", &mlen), *seq = field(f, "seq", &slen),
		   *kind = field(f, "kind", &klen), *data = field(f, "data", &len);
	if (!member || !seq || !kind || !data || f->elements != 8) {
		refuse(c, m, id, "not the four fields member, seq, kind, data");
		return;
	}
	if (strcmp(member, c->s->members[m]) != 0) {
		snprintf(why, sizeof(why), "it says member \"%.64s\", in another member's stream",
			 member);
		refuse(c, m, id, why);
		return;
	}
	uint64_t n = strtoull(seq, NULL, 10);
	if (n < c->next_seq[m])
		return; /* sent again after Redis restarted: it is in already */
	if (n > c->next_seq[m]) {
		snprintf(why, sizeof(why),
			 "seq %" PRIu64 " where %" PRIu64
			 " was due: entries were lost (the stream was trimmed)",
			 n, c->next_seq[m]);
		refuse(c, m, id, why);
	}
	c->next_seq[m] = n + 1;
	int k = 0;
	while (k < CREC_NKINDS && strcmp(kind, kind_names[k]) != 0)
		k++;
	if (k == CREC_NKINDS) {
		snprintf(why, sizeof(why),
			 "kind \"%.32s\" is none of facts, samples, barriers, end", kind);
		refuse(c, m, id, why);
		return;
	}
	if (len > crec_kind_max((enum crec_kind)k)) {
		snprintf(why, sizeof(why), "%s of %zu bytes, more than %zu", kind, len,
			 crec_kind_max((enum crec_kind)k));
		refuse(c, m, id, why);
		return;
	}
	c->ops->entry(c->data, m, (enum crec_kind)k, data, len);
}

/* One stream of an XREAD reply: its entries and whose (*m), or NULL when
 * it is malformed or no follower's. */
static const redisReply *stream_of(struct crec *c, const redisReply *sr, size_t *m)
{
	char key[CREC_KEY_MAX];
	const char *name;
	const redisReply *entries = redis_xread_stream(sr, &name);
	for (*m = 1; entries && *m < c->s->nmembers; (*m)++) {
		stream_key(c, *m, key);
		if (strcmp(key, name) == 0)
			return entries;
	}
	return NULL;
}

static void read_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct crec *c = ac->data;
	redisReply *rep = reply;
	char key[CREC_KEY_MAX];
	(void)priv;
	c->reading = false;
	if (reply_bad(c, ac, rep, "XREAD"))
		return;
	for (size_t s = 0; rep->type == REDIS_REPLY_ARRAY && s < rep->elements; s++) {
		size_t m;
		const redisReply *entries = stream_of(c, rep->element[s], &m);
		for (size_t i = 0; entries && i < entries->elements; i++) {
			entry_in(c, m, entries->element[i]);
			if (c->closing || c->failed)
				return;
		}
		/* what was read is the leader's now: Redis need not keep it */
		if (entries && entries->elements) {
			stream_key(c, m, key);
			redisAsyncCommand(c->ac, cmd_done, "XTRIM", "XTRIM %s MINID %s", key,
					  c->last[m]);
		}
	}
	read_next(c);
}

static void read_next(struct crec *c)
{
	size_t n = c->s->nmembers - 1;
	if (c->reading || c->closing || c->failed || c->retry.down || !c->ac || n == 0)
		return;
	char names[CLUSTER_MEMBERS_MAX][CREC_KEY_MAX];
	const char *keys[CLUSTER_MEMBERS_MAX], *lasts[CLUSTER_MEMBERS_MAX];
	for (size_t m = 1; m <= n; m++) {
		stream_key(c, m, names[m - 1]);
		keys[m - 1] = names[m - 1];
		lasts[m - 1] = c->last[m];
	}
	c->reading = true;
	c->read_t0 = clock_mono_ns();
	redis_xread(c->ac, read_done, CREC_READ_COUNT, CREC_READ_BLOCK_MS, n, keys, lasts);
}

/* ---- the handle ---------------------------------------------------------- */

static void handle_closed(uv_handle_t *h)
{
	struct crec *c = h->data;
	if (--c->handles)
		return;
	while (c->out) {
		struct crec_out *o = c->out;
		c->out = o->next;
		free(o);
	}
	free(c->last);
	free(c->next_seq);
	free(c);
}

static void final_cb(uv_timer_t *t)
{
	struct crec *c = t->data;
	redisAsyncContext *ac = c->ac;
	c->ac = NULL;
	if (ac)
		redisAsyncFree(ac); /* pending callbacks run with no reply: we are closing */
	uv_close((uv_handle_t *)&c->timer, handle_closed);
	uv_close((uv_handle_t *)&c->retry_timer, handle_closed);
	uv_close((uv_handle_t *)&c->watch_timer, handle_closed);
}

static void retry_cb(uv_timer_t *t);

static void retry_later(struct crec *c)
{
	redis_retry_schedule(&c->retry, &c->retry_timer, retry_cb, c->closing || c->failed);
}

/* The connection went (ac: the one that said so, being freed by hiredis):
 * made again by the barrier's rule, for CLUSTER_TIMEOUT. */
static void link_lost(struct crec *c, const redisAsyncContext *ac, const char *why)
{
	if (ac && ac == c->ac)
		c->ac = NULL;
	if (c->closing || c->failed)
		return;
	if (!c->retry.down) {
		redis_retry_lost(&c->retry, why);
		uv_timer_stop(&c->retry_timer);
	}
	c->reading = false;
	retry_later(c);
}

/* Back: what Redis had not taken goes again (the leader drops what it
 * has by its seq), the leader reads on from the last entries it saw. */
static void link_up(struct crec *c)
{
	uv_timer_stop(&c->retry_timer);
	redis_retry_back(&c->retry);
	for (struct crec_out *o = c->out; o; o = o->next)
		xadd_issue(c, o);
	if (c->s->role == CLUSTER_LEADER)
		read_next(c);
}

/* Every CREC_WATCH_MS: a read or an entry unanswered long past its due is
 * a connection gone without a word (a cut cable; the libuv adapter drops
 * socket errors), as the barrier's (cluster_heartbeat.c) are watched. */
static void watch_cb(uv_timer_t *t)
{
	struct crec *c = t->data;
	int64_t now = clock_mono_ns(), late = now - c->watch_at, since = 0;
	char why[96];
	c->watch_at = now;
	if (c->closing || c->failed || c->retry.down || !c->ac || late > 2 * CREC_WATCH_MS * 1000000LL)
		return; /* down, or this loop was held up: replies may wait in it */
	if (c->reading)
		since = now - c->read_t0 - CREC_READ_BLOCK_MS * 1000000LL;
	else if (c->out && c->out->sent_ns)
		since = now - c->out->sent_ns;
	if (since <= CLUSTER_STUCK_NS)
		return;
	snprintf(why, sizeof(why), "%s unanswered for %.1f s",
		 c->reading ? "an XREAD BLOCK" : "an XADD", (double)since / 1e9);
	link_lost(c, NULL, why);
}

static void connected(const redisAsyncContext *ac, int status)
{
	struct crec *c = ac->data;
	if (status == REDIS_OK) {
		if (c->retry.down && ac == c->ac)
			link_up(c);
		return;
	}
	if (c->ac == ac)
		c->ac = NULL; /* hiredis frees it */
	if (c->retry.down)
		retry_later(c);
	else
		redis_failed(c, "connect", ac->errstr);
}

static void disconnected(const redisAsyncContext *ac, int status)
{
	struct crec *c = ac->data;
	(void)status;
	if (c->ac != ac)
		return;
	c->ac = NULL;
	if (c->closing) {
		/* flushed: no need to wait out the grace */
		uv_timer_stop(&c->timer);
		uv_timer_start(&c->timer, final_cb, 0, 0);
		return;
	}
	link_lost(c, NULL, ac->errstr[0] ? ac->errstr : "it closed the connection");
}

/* Outside any hiredis callback: what is left of the connection goes and a
 * new one is made, unless CLUSTER_TIMEOUT has passed since Redis went. */
static void retry_cb(uv_timer_t *t)
{
	struct crec *c = t->data;
	redisAsyncContext *old = c->ac;
	char why[400];
	if (c->closing || c->failed)
		return;
	c->ac = NULL;
	if (old)
		redisAsyncFree(old); /* its callbacks see the connection lost */
	if (redis_retry_expired(&c->retry, c->s->timeout_s)) {
		snprintf(why, sizeof(why),
			 "%s, and not back within CLUSTER_TIMEOUT=%gs (%d tries to connect again)",
			 c->retry.why, c->s->timeout_s, c->retry.tries);
		redis_failed(c, "lost", why);
		return;
	}
	c->retry.tries++;
	c->ac = redis_link_connect(c->loop, c->s, c, connected, disconnected, cmd_done);
	if (c->ac->err) {
		redisAsyncFree(c->ac);
		c->ac = NULL;
		retry_later(c);
		return;
	}
	/* a try not connected within this is dropped for the next */
	uv_timer_start(&c->retry_timer, retry_cb, CLUSTER_TRY_MS, 0);
}

static void early_error_cb(uv_timer_t *t)
{
	struct crec *c = t->data;
	redis_failed(c, "connect", "cannot connect");
}

struct crec *crec_new(uv_loop_t *loop, const struct cluster_settings *s, const struct crec_ops *ops,
		      void *data)
{
	struct crec *c = xcalloc(1, sizeof(*c));
	c->loop = loop;
	c->s = s;
	c->ops = ops;
	c->data = data;
	c->out_tail = &c->out;
	c->last = xcalloc(s->nmembers, sizeof(*c->last));
	c->next_seq = xcalloc(s->nmembers, sizeof(*c->next_seq));
	for (size_t m = 0; m < s->nmembers; m++) {
		snprintf(c->last[m], sizeof(c->last[m]), "0");
		c->next_seq[m] = 1;
	}
	uv_timer_init(loop, &c->timer);
	uv_timer_init(loop, &c->retry_timer);
	uv_timer_init(loop, &c->watch_timer);
	c->timer.data = c->retry_timer.data = c->watch_timer.data = c;
	c->handles = 3;
	c->watch_at = clock_mono_ns();
	uv_timer_start(&c->watch_timer, watch_cb, CREC_WATCH_MS, CREC_WATCH_MS);
	redisAsyncContext *ac = redis_link_connect(loop, s, c, connected, disconnected, cmd_done);
	if (ac->err) {
		redisAsyncFree(ac);
		uv_timer_start(&c->timer, early_error_cb, 0, 0);
		return c;
	}
	c->ac = ac;
	if (s->role == CLUSTER_LEADER)
		read_next(c);
	return c;
}

static void close_cb(uv_timer_t *t)
{
	struct crec *c = t->data;
	uv_timer_stop(&c->retry_timer);
	uv_timer_stop(&c->watch_timer);
	if (!c->ac || c->retry.down || c->s->role == CLUSTER_LEADER) {
		final_cb(t);
		return;
	}
	uv_timer_start(&c->timer, final_cb, CREC_CLOSE_GRACE_MS, 0);
	redisAsyncDisconnect(c->ac); /* after the replies pending */
}

void crec_close(struct crec *c)
{
	if (!c || c->closing)
		return;
	c->closing = true;
	uv_timer_stop(&c->timer);
	/* not from inside a hiredis callback, which may be this caller's */
	uv_timer_start(&c->timer, close_cb, 0, 0);
}
