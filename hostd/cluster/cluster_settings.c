// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roadblock_msg.h"
#include "xalloc.h"

/* Room left in a roadblock id for ":step-4294967295" and a stream's suffix. */
#define CLUSTER_ID_MAX (RB_ID_MAX - 48)

/* A key every member needs; the error points at the key that made this a
 * cluster run (first). */
static int need(const struct config *c, const char *name, const char *path, const char *first,
		const char **out, struct config_diag *d)
{
	*out = config_get(c, name);
	if (*out && **out)
		return 0;
	return config_diag_at(d, c, first, path,
			      "%s is set but %s is not: a cluster run needs CLUSTER_REDIS, "
			      "CLUSTER_ID, CLUSTER_ROLE, CLUSTER_MEMBER and CLUSTER_MEMBERS",
			      first, name);
}

static int parse_redis(const struct config *c, const char *path, const char *v,
		       struct cluster_settings *s, struct config_diag *d)
{
	const char *colon = strrchr(v, ':');
	char *end;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || colon == v || !colon[1] || *end || port < 1 || port > 65535)
		return config_diag_at(d, c, "CLUSTER_REDIS", path,
				      "CLUSTER_REDIS=\"%s\" is not host:port (a port of 1 to 65535)",
				      v);
	s->redis_host = xstrndup(v, (size_t)(colon - v));
	s->redis_port = (int)port;
	return 0;
}

static int read_password(const struct config *c, const char *path, const char *file,
			 struct cluster_settings *s, struct config_diag *d)
{
	char line[512];
	FILE *f = fopen(file, "re");
	if (!f)
		return config_diag_at(d, c, "CLUSTER_PASSWORD_FILE", path,
				      "CLUSTER_PASSWORD_FILE=\"%s\" cannot be read: %s", file,
				      strerror(errno));
	bool got = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	line[got ? strcspn(line, "\r\n") : 0] = 0;
	if (!line[0])
		return config_diag_at(d, c, "CLUSTER_PASSWORD_FILE", path,
				      "CLUSTER_PASSWORD_FILE=\"%s\": its first line is empty", file);
	s->password = xstrdup(line);
	s->password_file = xstrdup(file);
	return 0;
}

static int parse_members(const struct config *c, const char *path, const char *v,
			 struct cluster_settings *s, struct config_diag *d)
{
	char *copy = xstrdup(v), *save = NULL;
	int r = 0;
	bool me = false;
	for (char *w = strtok_r(copy, " \t,", &save); w && r == 0; w = strtok_r(NULL, " \t,", &save)) {
		if (!rb_name_valid(w, RB_NAME_MAX))
			r = config_diag_at(d, c, "CLUSTER_MEMBERS", path,
					   "CLUSTER_MEMBERS: \"%s\" is not a member id (1 to %d "
					   "printable ASCII characters, no quotes)",
					   w, RB_NAME_MAX - 1);
		for (size_t i = 0; r == 0 && i < s->nmembers; i++)
			if (strcmp(s->members[i], w) == 0)
				r = config_diag_at(d, c, "CLUSTER_MEMBERS", path,
						   "CLUSTER_MEMBERS: \"%s\" is listed twice", w);
		if (r == 0 && s->nmembers == CLUSTER_MEMBERS_MAX)
			r = config_diag_at(d, c, "CLUSTER_MEMBERS", path,
					   "CLUSTER_MEMBERS: more than %d members",
					   CLUSTER_MEMBERS_MAX);
		if (r == 0) {
			me = me || strcmp(w, s->member) == 0;
			s->members[s->nmembers++] = xstrdup(w);
		}
	}
	free(copy);
	if (r < 0)
		return r;
	if (s->nmembers < 2)
		return config_diag_at(d, c, "CLUSTER_MEMBERS", path,
				      "CLUSTER_MEMBERS=\"%s\" names fewer than two members (the leader "
				      "first, then its followers)",
				      v);
	if (!me)
		return config_diag_at(d, c, "CLUSTER_MEMBERS", path,
				      "CLUSTER_MEMBERS=\"%s\" does not name this host, CLUSTER_MEMBER=%s",
				      v, s->member);
	bool first = strcmp(s->members[0], s->member) == 0;
	if ((s->role == CLUSTER_LEADER) != first)
		return config_diag_at(d, c, "CLUSTER_ROLE", path,
				      "CLUSTER_ROLE=%s but CLUSTER_MEMBERS=\"%s\" names %s as the "
				      "leader (its first member)",
				      s->role == CLUSTER_LEADER ? "leader" : "follower", v,
				      s->members[0]);
	return 0;
}

int cluster_settings_load(const struct config *c, const char *path, struct cluster_settings *s,
			  struct config_diag *d)
{
	static const char *const keys[] = { CLUSTER_KEYS, NULL };
	static const char *const roles[] = { "leader", "follower", NULL };
	static const char *const policies[] = { "abort", "continue", NULL };
	const char *redis, *id, *role_s, *member, *members, *pw, *first = config_first_set(c, keys);
	int role = CLUSTER_LEADER, policy = CLUSTER_ON_FAILURE_ABORT;

	memset(s, 0, sizeof(*s));
	s->timeout_s = 60;
	if (!first)
		return 0;
	s->enabled = true;
	if (need(c, "CLUSTER_REDIS", path, first, &redis, d) < 0 ||
	    need(c, "CLUSTER_ID", path, first, &id, d) < 0 ||
	    need(c, "CLUSTER_ROLE", path, first, &role_s, d) < 0 ||
	    need(c, "CLUSTER_MEMBER", path, first, &member, d) < 0 ||
	    need(c, "CLUSTER_MEMBERS", path, first, &members, d) < 0 ||
	    config_get_choice(c, "CLUSTER_ROLE", roles, &role, d) < 0 ||
	    config_get_choice(c, "ON_HOST_FAILURE", policies, &policy, d) < 0 ||
	    config_get_seconds(c, "CLUSTER_TIMEOUT", 0.1, 86400, &s->timeout_s, d) < 0 ||
	    parse_redis(c, path, redis, s, d) < 0)
		return -EINVAL;
	s->role = (enum cluster_role)role;
	s->on_failure = (enum cluster_policy)policy;
	if (!rb_name_valid(id, CLUSTER_ID_MAX))
		return config_diag_at(d, c, "CLUSTER_ID", path,
				      "CLUSTER_ID=\"%s\" is not an id (1 to %d printable ASCII "
				      "characters, no spaces or quotes)",
				      id, CLUSTER_ID_MAX - 1);
	if (!rb_name_valid(member, RB_NAME_MAX))
		return config_diag_at(d, c, "CLUSTER_MEMBER", path,
				      "CLUSTER_MEMBER=\"%s\" is not a member id (1 to %d printable "
				      "ASCII characters, no spaces or quotes)",
				      member, RB_NAME_MAX - 1);
	s->id = xstrdup(id);
	s->member = xstrdup(member);
	if (parse_members(c, path, members, s, d) < 0)
		return -EINVAL;
	pw = config_get(c, "CLUSTER_PASSWORD_FILE");
	if (pw && *pw && read_password(c, path, pw, s, d) < 0)
		return -EINVAL;
	return 0;
}

void cluster_settings_fini(struct cluster_settings *s)
{
	free(s->redis_host);
	if (s->password)
		memset(s->password, 0, strlen(s->password));
	free(s->password);
	free(s->password_file);
	free(s->id);
	free(s->member);
	for (size_t i = 0; i < s->nmembers; i++)
		free(s->members[i]);
	memset(s, 0, sizeof(*s));
}

void cluster_settings_print(FILE *out, const struct cluster_settings *s)
{
	fprintf(out, "cluster (docs/cluster.md):\n");
	if (!s->enabled) {
		fprintf(out, "  none: a run on this host alone, Redis is not used\n");
		return;
	}
	fprintf(out, "  CLUSTER_REDIS=%s:%d\n", s->redis_host, s->redis_port);
	fprintf(out, "  CLUSTER_PASSWORD_FILE=%s\n", s->password_file ? s->password_file : "(none)");
	fprintf(out, "  CLUSTER_ID=%s (one roadblock per step: %s:step-<n>)\n", s->id, s->id);
	fprintf(out, "  CLUSTER_ROLE=%s\n", s->role == CLUSTER_LEADER ? "leader" : "follower");
	fprintf(out, "  CLUSTER_MEMBER=%s\n", s->member);
	fprintf(out, "  CLUSTER_MEMBERS=");
	for (size_t i = 0; i < s->nmembers; i++)
		fprintf(out, "%s%s%s", i ? " " : "", s->members[i], i == 0 ? " (leader)" : "");
	fprintf(out, "\n  CLUSTER_TIMEOUT=%gs\n", s->timeout_s);
	fprintf(out, "  ON_HOST_FAILURE=%s\n",
		s->on_failure == CLUSTER_ON_FAILURE_ABORT ? "abort" : "continue");
}

json_object *cluster_settings_json(const struct cluster_settings *s)
{
	json_object *o = json_object_new_object(), *m = json_object_new_array();
	char redis[300];
	snprintf(redis, sizeof(redis), "%s:%d", s->redis_host, s->redis_port);
	json_object_object_add(o, "redis", json_object_new_string(redis));
	json_object_object_add(o, "id", json_object_new_string(s->id));
	json_object_object_add(o, "role",
			       json_object_new_string(s->role == CLUSTER_LEADER ? "leader"
										: "follower"));
	json_object_object_add(o, "member", json_object_new_string(s->member));
	for (size_t i = 0; i < s->nmembers; i++)
		json_object_array_add(m, json_object_new_string(s->members[i]));
	json_object_object_add(o, "members", m);
	json_object_object_add(o, "timeout_s", json_object_new_double(s->timeout_s));
	json_object_object_add(o, "on_host_failure",
			       json_object_new_string(s->on_failure == CLUSTER_ON_FAILURE_ABORT
							      ? "abort"
							      : "continue"));
	return o;
}
