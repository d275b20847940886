/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the barrier's connections (cluster_reconnect.c) and the records' connection
 * (cluster_records.c) share about a Redis link (docs/cluster.md "Redis
 * restarts"): one connection made on the caller's loop with its AUTH, and
 * the rule of connecting again once Redis went: the first try after
 * CLUSTER_RETRY_FIRST_MS, then waits doubling to CLUSTER_RETRY_MAX_MS, for
 * CLUSTER_TIMEOUT from the loss.  Nothing here logs.
 */
#ifndef LOCKSTEP_REDIS_LINK_H
#define LOCKSTEP_REDIS_LINK_H

#include <hiredis/async.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cluster_settings.h"

/* Connects to s's Redis (asynchronously), sends AUTH when s has a password
 * (its reply to auth_cb, with priv "AUTH (CLUSTER_PASSWORD_FILE)").  A
 * context with err set failed at once: the caller tells it from the loop
 * and frees it.  data becomes ac->data. */
redisAsyncContext *redis_link_connect(uv_loop_t *loop, const struct cluster_settings *s, void *data,
				      redisConnectCallback *conn, redisDisconnectCallback *disc,
				      redisCallbackFn *auth_cb);

/* Sends XREAD [COUNT count] BLOCK block_ms STREAMS keys... lasts... for n
 * streams (count 0: no COUNT), its reply to cb (priv NULL). */
void redis_xread(redisAsyncContext *ac, redisCallbackFn *cb, int count, int64_t block_ms, size_t n,
		 const char *const *keys, const char *const *lasts);
/* One stream of an XREAD reply ([name, [entries...]]): its entries, and its
 * name in *name; NULL when it has another shape. */
const redisReply *redis_xread_stream(const redisReply *sr, const char **name);

/* The tries to connect again after a loss. */
struct redis_retry {
	bool down;	  /* lost, not back yet */
	int64_t since_ns; /* mono ns it went */
	int64_t wait_ms;  /* the next try's wait */
	int tries;	  /* tries since it went */
	char why[256];	  /* what was seen when it went */
};

/* It went (why: what was seen); no-op when already down. */
void redis_retry_lost(struct redis_retry *r, const char *why);
/* The wait before the next try (then doubled up to the maximum). */
uint64_t redis_retry_wait_ms(struct redis_retry *r);
/* Starts t with cb for the next try after redis_retry_wait_ms, unless
 * stopped (closing, failed) or t is already started. */
void redis_retry_schedule(struct redis_retry *r, uv_timer_t *t, uv_timer_cb cb, bool stopped);
/* CLUSTER_TIMEOUT (timeout_s) has passed since it went: give up. */
bool redis_retry_expired(const struct redis_retry *r, double timeout_s);
/* Back. */
void redis_retry_back(struct redis_retry *r);

#endif
