/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One member's side of the cross-host barrier (docs/cluster.md): for each
 * step one roadblock "<CLUSTER_ID>:step-<n>" on Redis Streams, spoken as
 * roadblock speaks it, on the caller's libuv loop (hiredis' libuv adapter).
 *
 * The caller says when its own barrier of step n is complete
 * (cluster_step_ready); the cluster answers once per step through the
 * callback: released (with the leader's release instant on CLOCK_REALTIME,
 * or 0 against a plain roadblock leader: release now), or failed (timeout,
 * abort, Redis) with a sentence naming the step, the roadblock and who was
 * missing.  The leader picks the instant on all-ready: now plus twice the
 * slowest member's measured round trip through Redis plus a margin, sent
 * as a user-object before all-go.  Once a step is released the members
 * send heartbeats, and one silent too long is named (docs/cluster.md
 * "Heartbeats"); a lost Redis connection is made again within
 * CLUSTER_TIMEOUT ("Redis restarts").  Nothing here logs.
 */
#ifndef LOCKSTEP_CLUSTER_H
#define LOCKSTEP_CLUSTER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cluster_host.h"
#include "cluster_settings.h"

/* XREAD's BLOCK: how long a close or a next step may wait for a read. */
#define CLUSTER_READ_BLOCK_MS 200
/* A roadblock made longer than CLUSTER_TIMEOUT plus this ago is an
 * earlier run's (a reused CLUSTER_ID). */
#define CLUSTER_STALE_SLACK_S 60
/* At the end, how long the last messages written may take to go out. */
#define CLUSTER_CLOSE_GRACE_MS 1000
/* Redis lost: tries to connect again after 100 ms, doubling to 1 s, for
 * CLUSTER_TIMEOUT; a blocked read unanswered this long past its BLOCK is a
 * connection lost. */
#define CLUSTER_RETRY_FIRST_MS 100
#define CLUSTER_RETRY_MAX_MS 1000
#define CLUSTER_TRY_MS 1000 /* one try's connect, AUTH and check, at most */
#define CLUSTER_STUCK_NS 2000000000LL
/* Joining the next step's roadblock early: this long after the instant. */
#define CLUSTER_EARLY_AFTER_MS 5
/* Heartbeats: every CLUSTER_TIMEOUT/6 within these bounds. */
#define CLUSTER_HB_EVERY_MIN_NS 50000000LL
#define CLUSTER_HB_EVERY_MAX_NS 5000000000LL

enum cluster_outcome {
	CLUSTER_RELEASED,
	CLUSTER_TIMED_OUT,   /* roadblock's exit 3 */
	CLUSTER_ABORTED,     /* roadblock's exit 4: all-abort */
	CLUSTER_HEARTBEAT,   /* roadblock's exit 5 */
	CLUSTER_REDIS_ERROR, /* the server unreachable or refusing */
	CLUSTER_MEMBER_LOST, /* told, not failed: a member went silent and the
				run goes on without it (ON_HOST_FAILURE=continue) */
};

struct cluster_result {
	uint32_t step;
	enum cluster_outcome outcome;
	int64_t at_realtime_ns; /* released: the common instant; 0: at once */
	bool clock_unsync;	/* adjtimex says this host's clock is not synchronised */
	const char *why;	/* not released: the sentence */
	json_object *record;	/* the step's cluster facts for barriers.ndjson; borrowed */
};

typedef void (*cluster_cb)(void *data, const struct cluster_result *res);

struct cluster;

/* Connects (asynchronously: a refused connection comes back through cb as
 * CLUSTER_REDIS_ERROR of step 0).  s must outlive the cluster.  plan_sha256:
 * this host's plan; the leader aborts the run at the first step when a
 * follower's differs (every member must run the same g.conf).  nsteps: the
 * plan's steps; once every member speaks lockstep, each joins step k+1's
 * roadblock when step k is released, never past nsteps. */
struct cluster *cluster_new(uv_loop_t *loop, const struct cluster_settings *s,
			    const char *plan_sha256, uint32_t nsteps, cluster_cb cb, void *data);
/* Once a step is released every member sends a heartbeat (roadblock's
 * leader-heartbeat, follower-heartbeat) on that step's roadblock every
 * every_ns; the leader names a follower, a follower its leader, not heard
 * from for silent_ns: CLUSTER_TIMEOUT/6 (50 ms to 5 s) and
 * CLUSTER_TIMEOUT/2, so that one is named within CLUSTER_TIMEOUT. */
void cluster_heartbeat_bounds(double timeout_s, int64_t *every_ns, int64_t *silent_ns);
/* This host's own barrier of step k is complete. */
void cluster_step_ready(struct cluster *c, uint32_t k);
/* The local run is aborting: the leader sends all-abort, a follower
 * follower-ready-abort, for the step open (if any).  No callback follows. */
void cluster_abort(struct cluster *c);
/* Closes the connections and timers; the handle goes when they have
 * (uv_run returns).  Accepts NULL; safe inside the callback. */
void cluster_close(struct cluster *c);

#endif
