// SPDX-License-Identifier: GPL-2.0-or-later
#include "redis_link.h"

#include <hiredis/adapters/libuv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cluster.h"
#include "xalloc.h"

redisAsyncContext *redis_link_connect(uv_loop_t *loop, const struct cluster_settings *s, void *data,
				      redisConnectCallback *conn, redisDisconnectCallback *disc,
				      redisCallbackFn *auth_cb)
{
	redisAsyncContext *ac = redisAsyncConnect(s->redis_host, s->redis_port);
	if (!ac)
		abort(); /* out of memory */
	ac->data = data;
	if (ac->err)
		return ac; /* the caller tells it from the loop */
	redisLibuvAttach(ac, loop);
	redisAsyncSetConnectCallback(ac, conn);
	redisAsyncSetDisconnectCallback(ac, disc);
	if (s->password) {
		const char *argv[] = { "AUTH", s->password };
		size_t len[] = { 4, strlen(s->password) };
		redisAsyncCommandArgv(ac, auth_cb, "AUTH (CLUSTER_PASSWORD_FILE)", 2, argv, len);
	}
	return ac;
}

void redis_retry_lost(struct redis_retry *r, const char *why)
{
	if (r->down)
		return;
	r->down = true;
	r->since_ns = clock_mono_ns();
	r->wait_ms = CLUSTER_RETRY_FIRST_MS;
	r->tries = 0;
	snprintf(r->why, sizeof(r->why), "%s", why);
}

uint64_t redis_retry_wait_ms(struct redis_retry *r)
{
	int64_t w = r->wait_ms;
	r->wait_ms = w * 2 > CLUSTER_RETRY_MAX_MS ? CLUSTER_RETRY_MAX_MS : w * 2;
	return (uint64_t)w;
}

void redis_retry_schedule(struct redis_retry *r, uv_timer_t *t, uv_timer_cb cb, bool stopped)
{
	if (stopped || uv_is_active((uv_handle_t *)t))
		return;
	uv_timer_start(t, cb, redis_retry_wait_ms(r), 0);
}

bool redis_retry_expired(const struct redis_retry *r, double timeout_s)
{
	return (double)(clock_mono_ns() - r->since_ns) / 1e9 > timeout_s;
}

void redis_retry_back(struct redis_retry *r)
{
	r->down = false;
	r->tries = 0;
}

void redis_xread(redisAsyncContext *ac, redisCallbackFn *cb, int count, int64_t block_ms, size_t n,
		 const char *const *keys, const char *const *lasts)
{
	const char **argv = xcalloc(6 + 2 * n, sizeof(*argv));
	size_t *len = xcalloc(6 + 2 * n, sizeof(*len));
	char count_s[16], block_s[24];
	int a = 0;
	argv[a++] = "XREAD";
	if (count > 0) {
		snprintf(count_s, sizeof(count_s), "%d", count);
		argv[a++] = "COUNT";
		argv[a++] = count_s;
	}
	snprintf(block_s, sizeof(block_s), "%lld", (long long)block_ms);
	argv[a++] = "BLOCK";
	argv[a++] = block_s;
	argv[a++] = "STREAMS";
	for (size_t i = 0; i < n; i++)
		argv[a++] = keys[i];
	for (size_t i = 0; i < n; i++)
		argv[a++] = lasts[i];
	for (int i = 0; i < a; i++)
		len[i] = strlen(argv[i]);
	redisAsyncCommandArgv(ac, cb, NULL, a, argv, len);
	free(argv);
	free(len);
}

const redisReply *redis_xread_stream(const redisReply *sr, const char **name)
{
	if (sr->type != REDIS_REPLY_ARRAY || sr->elements != 2 ||
	    sr->element[0]->type != REDIS_REPLY_STRING || sr->element[1]->type != REDIS_REPLY_ARRAY)
		return NULL;
	*name = sr->element[0]->str;
	return sr->element[1];
}
