// SPDX-License-Identifier: GPL-2.0-or-later
/* What this member writes to Redis: each command kept in the outbox until
 * its reply, so that a connection lost sends it again on the next
 * (cluster_reconnect.c); the messages written together in one command
 * (cl_batch_begin .. cl_batch_end); roadblock's messages of ours. */
#include "cluster_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "xalloc.h"

bool cl_reply_bad(struct cluster *c, redisAsyncContext *ac, redisReply *rep, const char *what)
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
		cl_link_lost(c, ac, why);
		return true;
	}
	cl_fail(c, CLUSTER_REDIS_ERROR, "cluster: Redis at %s:%d: %s: %s", c->s->redis_host,
		c->s->redis_port, what,
		rep		? rep->str
		: ac->errstr[0] ? ac->errstr
				: "connection lost");
	return true;
}

void cl_cmd_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	cl_reply_bad(c, ac, reply, priv ? priv : "a command");
}

void cl_out_free(struct out_cmd *o)
{
	for (int i = 0; i < o->argc; i++)
		free(o->argv[i]);
	free(o->argv);
	free(o->len);
	free(o);
}

/* A reply to a command of the outbox: it leaves the outbox, unless the
 * connection went before the reply (no reply, not closing): then it stays,
 * to go again on the next connection. */
static void out_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	struct out_cmd *o = priv, **pp = &c->outbox;
	if (!reply && !c->closing) {
		cl_link_lost(c, ac, ac->errstr[0] ? ac->errstr : "connection lost");
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
	cl_out_free(o);
}

void cl_out_issue(struct cluster *c, struct out_cmd *o)
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
	cl_out_issue(c, o);
}

/* The same, of words: cmd_words(c, cb, priv, "GET", key, NULL). */
void cl_cmd_words(struct cluster *c, redisCallbackFn *cb, void *priv, ...)
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
	if (c->batching) {
		if (c->nbatch == BATCH_MAX) {
			/* full: what is held goes first, so that the order stays */
			cl_batch_end(c);
			cl_batch_begin(c);
		}
		c->batch_stream[c->nbatch] = xstrdup(stream);
		c->batch_text[c->nbatch++] = text;
		return;
	}
	const char *argv[] = { "XADD", stream, "*", "msg", text };
	size_t len[] = { 4, strlen(stream), 1, 3, strlen(text) };
	cmd_send(c, cl_cmd_done, "XADD", 5, argv, len);
	free(text);
}

/* The messages written from here to batch_end go in one command.  Redis
 * answers the reads blocked on a stream after each command: three XADDs
 * (all-ready, the instant, all-go) would wake every follower three times,
 * one script wakes each once, with the three. */
void cl_batch_begin(struct cluster *c)
{
	c->batching = true;
	c->nbatch = 0;
}

static const char batch_script[] =
	"for i = 1, #KEYS do redis.call('XADD', KEYS[i], '*', 'msg', ARGV[i]) end return #KEYS";

void cl_batch_end(struct cluster *c)
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
	cmd_send(c, cl_cmd_done, "EVAL of XADDs", 3 + 2 * n, argv, len);
	for (int i = 0; i < n; i++) {
		free(c->batch_stream[i]);
		free(c->batch_text[i]);
	}
}

/* A message of ours for roadblock rb. */
void cl_send_rb(struct cluster *c, const char *rb, const char *stream, enum rb_recipient to,
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
void cl_send_msg(struct cluster *c, const char *stream, enum rb_recipient to, const char *to_id,
		 enum rb_command cmd, json_object *user_object, const char *value)
{
	cl_send_rb(c, c->st.id, stream, to, to_id, cmd, user_object, value);
}

void cl_to_followers(struct cluster *c, enum rb_command cmd, json_object *uo)
{
	cl_send_msg(c, "followers", RB_TO_ALL, NULL, cmd, uo, NULL);
}

void cl_to_leader(struct cluster *c, enum rb_command cmd, json_object *uo)
{
	cl_send_msg(c, "leader", RB_TO_LEADER, c->s->members[0], cmd, uo, NULL);
}
