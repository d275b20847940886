// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_host.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timex.h>

int cluster_probe(const struct cluster_settings *s, char *err, size_t errlen)
{
	struct timeval tv = { CLUSTER_PROBE_MS / 1000, (CLUSTER_PROBE_MS % 1000) * 1000 };
	redisContext *rc = redisConnectWithTimeout(s->redis_host, s->redis_port, tv);
	redisReply *rep = NULL;
	const char *what = "connect";
	if (rc && !rc->err && s->password) {
		what = "AUTH (CLUSTER_PASSWORD_FILE)";
		rep = redisCommand(rc, "AUTH %s", s->password);
	}
	if (rc && !rc->err && (!rep || rep->type != REDIS_REPLY_ERROR)) {
		freeReplyObject(rep);
		what = "PING";
		rep = redisCommand(rc, "PING");
	}
	int r = 0;
	if (!rc || rc->err || !rep || rep->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "cluster: Redis at %s:%d (CLUSTER_REDIS): %s: %s",
			 s->redis_host, s->redis_port, what,
			 !rc	   ? "out of memory"
			 : rc->err ? rc->errstr
			 : rep	   ? rep->str
				   : "no reply");
		r = -1;
	}
	freeReplyObject(rep);
	redisFree(rc);
	return r;
}

/* LOCKSTEP_TEST_ADJTIMEX="maxerror_us,esterror_us,unsync" stands in for
 * the kernel's answer: tests make one member's clock synchronised and
 * another's not on one machine (docs/cluster.md). */
static int test_adjtimex(struct timex *tx)
{
	const char *e = getenv("LOCKSTEP_TEST_ADJTIMEX");
	long maxerr, esterr;
	int unsync;
	if (!e || sscanf(e, "%ld,%ld,%d", &maxerr, &esterr, &unsync) != 3)
		return adjtimex(tx);
	tx->maxerror = maxerr;
	tx->esterror = esterr;
	tx->status = unsync ? STA_UNSYNC : 0;
	return unsync ? TIME_ERROR : TIME_OK;
}

json_object *cluster_host_clock(bool *unsync)
{
	struct timex tx = { 0 };
	int state = test_adjtimex(&tx);
	json_object *o = json_object_new_object();
	*unsync = state == TIME_ERROR || (tx.status & STA_UNSYNC);
	if (state < 0) {
		json_object_object_add(o, "error", json_object_new_string(strerror(errno)));
	} else {
		json_object_object_add(o, "maxerror_us", json_object_new_int64(tx.maxerror));
		json_object_object_add(o, "esterror_us", json_object_new_int64(tx.esterror));
		json_object_object_add(o, "unsynchronised", json_object_new_boolean(*unsync));
	}
	return o;
}
