/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * h.conf's cluster keys (docs/cluster.md): one host's part in an
 * experiment run on many hosts at once.  None set: a single-host run,
 * which never talks to Redis.
 *
 *   CLUSTER_REDIS=host:port        the Redis server every member uses
 *   CLUSTER_PASSWORD_FILE=path     its password, the file's first line
 *   CLUSTER_ID=name                the experiment's id, the same on every member
 *   CLUSTER_ROLE=leader|follower
 *   CLUSTER_MEMBER=name            this host's id
 *   CLUSTER_MEMBERS="a b c"        every member, the leader first (the same line on all)
 *   CLUSTER_TIMEOUT=seconds        a step's cross-host barrier, at most (default 60);
 *                                  also heartbeats every /6, silent after /2, and
 *                                  how long Redis may be gone
 *   ON_HOST_FAILURE=abort|continue a member missing at a barrier or silent: the
 *                                  run aborts, or the leader goes on without it
 */
#ifndef LOCKSTEP_CLUSTER_SETTINGS_H
#define LOCKSTEP_CLUSTER_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "config.h"

#define CLUSTER_MEMBERS_MAX 64
#define CLUSTER_KEYS                                                                              \
	"CLUSTER_REDIS", "CLUSTER_PASSWORD_FILE", "CLUSTER_ID", "CLUSTER_ROLE", "CLUSTER_MEMBER", \
		"CLUSTER_MEMBERS", "CLUSTER_TIMEOUT", "ON_HOST_FAILURE"

enum cluster_role { CLUSTER_LEADER, CLUSTER_FOLLOWER };
enum cluster_policy { CLUSTER_ON_FAILURE_ABORT, CLUSTER_ON_FAILURE_CONTINUE };

struct cluster_settings {
	bool enabled;
	char *redis_host;
	int redis_port;
	char *password;	     /* NULL: none */
	char *password_file; /* where it came from, for messages */
	char *id;
	enum cluster_role role;
	char *member;
	char *members[CLUSTER_MEMBERS_MAX]; /* [0] the leader */
	size_t nmembers;
	double timeout_s;
	enum cluster_policy on_failure;
};

/* Reads and checks the keys of c (from path); 0, or -EINVAL with d naming
 * the file, line and value. */
int cluster_settings_load(const struct config *c, const char *path, struct cluster_settings *s,
			  struct config_diag *d);
void cluster_settings_fini(struct cluster_settings *s);
/* For manifest.json: redis, id, role, member, members, timeout_s,
 * on_host_failure (never the password). */
json_object *cluster_settings_json(const struct cluster_settings *s);
/* What hostd --check prints: one line per key, or that the run is on one host. */
void cluster_settings_print(FILE *out, const struct cluster_settings *s);

#endif
