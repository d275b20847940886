// SPDX-License-Identifier: GPL-2.0-or-later
/* The handle made (its connections and timers) and closed: what was
 * written last flushed for CLUSTER_CLOSE_GRACE_MS, then the timers closed
 * and the memory freed. */
#include "cluster_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "xalloc.h"

static void handle_closed(uv_handle_t *h)
{
	struct cluster *c = h->data;
	if (--c->handles == 0) {
		json_object_put(c->st.record);
		json_object_put(c->carry);
		while (c->outbox) {
			struct out_cmd *o = c->outbox;
			c->outbox = o->next;
			cl_out_free(o);
		}
		free(c);
	}
}

/* The end: a command connection that did not flush within its grace goes
 * now, and the timers close. */
void cl_close_final(uv_timer_t *t)
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
		cl_close_final(t);
		return;
	}
	uv_timer_start(&c->close_timer, cl_close_final, CLUSTER_CLOSE_GRACE_MS, 0);
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
		cl_fail(c, CLUSTER_REDIS_ERROR,
			"cluster: cannot reach Redis at %s:%d (CLUSTER_REDIS): %s",
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
	c->cmd = cl_connect_one(c);
	c->rd = cl_connect_one(c);
	c->hb = cl_connect_one(c);
	if (c->cmd->err || c->rd->err || c->hb->err)
		uv_timer_start(&c->close_timer, early_error_cb, 0, 0);
	return c;
}
void cluster_close(struct cluster *c)
{
	if (!c || c->closing)
		return;
	/* the others stop watching this member: its run is over */
	if (c->hb_step && !c->retry.down && c->cmd) {
		if (c->s->role == CLUSTER_LEADER)
			cl_send_rb(c, c->hb_id, "followers", RB_TO_ALL, NULL, RB_USER_OBJECT,
				   cl_end_object(c->s->member), NULL);
		else
			cl_send_rb(c, c->hb_id, "leader", RB_TO_LEADER, c->s->members[0],
				   RB_USER_OBJECT, cl_end_object(c->s->member), NULL);
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
