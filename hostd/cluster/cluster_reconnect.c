// SPDX-License-Identifier: GPL-2.0-or-later
/* Redis lost and made again (docs/cluster.md "Redis restarts"): the three
 * connections dropped and remade together within CLUSTER_TIMEOUT, the
 * run's data checked, then what was not answered sent again and the reads
 * resumed. */
#include "cluster_priv.h"

#include "clock.h"

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
		cl_out_issue(c, o);
	if (c->pending && c->st.st != ST_WAITING) {
		/* asked while the last read was out, which the loss ended */
		uint32_t k = c->pending;
		c->pending = 0;
		cl_step_begin(c, k);
	}
	cl_read_next(c);
	cl_hb_read(c);
}

static void persist_done(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	redisReply *rep = reply;
	(void)priv;
	if (c->closing || c->failed)
		return;
	if (!rep) {
		cl_link_lost(c, ac, ac->errstr[0] ? ac->errstr : "connection lost");
		return;
	}
	if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 1) {
		resume(c);
		return;
	}
	c->retry.down = false;
	cl_fail(c, CLUSTER_REDIS_ERROR,
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
void cl_link_lost(struct cluster *c, const redisAsyncContext *ac, const char *why)
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
		cl_fail(c, CLUSTER_REDIS_ERROR,
			"cluster: Redis at %s:%d lost (%s) and not back within CLUSTER_TIMEOUT=%gs "
			"(%d tries to connect again)",
			c->s->redis_host, c->s->redis_port, c->retry.why, c->s->timeout_s,
			c->retry.tries);
		return;
	}
	c->retry.tries++;
	c->ups = 0;
	c->cmd = cl_connect_one(c);
	c->rd = cl_connect_one(c);
	c->hb = cl_connect_one(c);
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
			cl_fail(c, CLUSTER_REDIS_ERROR,
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
		uv_timer_start(&c->close_timer, cl_close_final, 0, 0);
	}
	if (!c->closing)
		cl_link_lost(c, NULL,
			     status != REDIS_OK && ac->errstr[0] ? ac->errstr
								 : "it closed the connection");
}

redisAsyncContext *cl_connect_one(struct cluster *c)
{
	return redis_link_connect(c->loop, c->s, c, connected, disconnected, cl_cmd_done);
}
