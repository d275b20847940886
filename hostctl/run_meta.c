// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a run was, beyond its numbers: the header fields of manifest.json,
 * its plan without iterations, and the NAME=VALUE lines of the configs it
 * saved (config/h.conf, config/g.conf).  Everything is optional: an older
 * manifest without a field gives NULL or -1, and the header says "not
 * recorded".
 */
#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "run.h"
#include "xalloc.h"

/* Bounds on what a saved config may make us keep. */
#define META_CONF_MAX (1u << 20)
#define META_CONF_LINES 4096u
#define META_PLAN_MAX 4096u

static char *str_at(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, a, &v))
		return NULL;
	if (b && !json_object_object_get_ex(v, b, &v))
		return NULL;
	if (!json_object_is_type(v, json_type_string))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static int64_t int_at(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, a, &v))
		return -1;
	if (b && !json_object_object_get_ex(v, b, &v))
		return -1;
	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* Adds the distinct steps of a plan; a node's own plan (prefix "nodes: ")
 * only where it differs from the first node's, the first nmain entries. */
static void plan_add(struct run_meta *m, const char *prefix, struct json_object *steps, size_t nmain)
{
	if (!steps || !json_object_is_type(steps, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		struct json_object *s = json_object_array_get_idx(steps, i), *v;
		char *bench = str_at(s, "benchmark", NULL), *kind = str_at(s, "kind", NULL);
		char *variant = str_at(s, "variant", NULL), *cmd = str_at(s, "command", NULL);
		char units[32] = "", *sig;
		bool warm = json_object_object_get_ex(s, "warmup", &v) && json_object_get_boolean(v);
		bool dup = false;

		if (int_at(s, "units", NULL) >= 0)
			snprintf(units, sizeof(units), "units=%lld",
				 (long long)int_at(s, "units", NULL));
		sig = xasprintf("%s%s%s%s%s %s %s", prefix, bench ? bench : "?", variant ? " " : "",
				variant ? variant : "", warm ? " (warm-up)" : "", kind ? kind : "?",
				cmd ? cmd : units);
		for (size_t k = 0; k < m->nplan && !dup; k++)
			dup = !strcmp(m->plan[k], sig);
		/* a node's plan says only how it differs from the first node's */
		for (size_t k = 0; *prefix && k < nmain && !dup; k++)
			dup = !strcmp(m->plan[k], sig + strlen(prefix));
		if (dup || m->nplan >= META_PLAN_MAX) {
			free(sig);
		} else {
			m->plan = xrealloc(m->plan, (m->nplan + 1) * sizeof(*m->plan));
			m->plan[m->nplan++] = sig;
		}
		free(bench);
		free(kind);
		free(variant);
		free(cmd);
	}
}

/* NAME=VALUE and export NAME=VALUE lines; quotes around the value go. */
static void conf_read(struct run_meta *m, const char *dir, const char *file)
{
	char *path = xasprintf("%s/config/%s", dir, file), *buf = NULL;
	size_t len, lines = 0;

	if (fileio_read_all(path, META_CONF_MAX, &buf, &len) < 0) {
		free(path);
		return;
	}
	for (char *line = buf, *end; line < buf + len && lines < META_CONF_LINES; line = end + 1) {
		char *p = line, *name, *val, *vend;

		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len;
		*end = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "export ", 7))
			p += 7;
		name = p;
		if (!(isalpha((unsigned char)*p) || *p == '_'))
			continue;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (*p != '=')
			continue;
		*p++ = '\0';
		val = p;
		vend = val + strlen(val);
		while (vend > val && (vend[-1] == ' ' || vend[-1] == '\t' || vend[-1] == '\r'))
			*--vend = '\0';
		if (vend - val >= 2 && (*val == '"' || *val == '\'') && vend[-1] == *val) {
			vend[-1] = '\0';
			val++;
		}
		lines++;
		m->conf = xrealloc(m->conf, (m->nconf + 1) * sizeof(*m->conf));
		m->conf[m->nconf++] = (struct run_kv){ xasprintf("%s %s", file, name), xstrdup(val) };
	}
	free(buf);
	free(path);
}

/* participants[].kernel of the guests (the host's agent left out). */
static char *guest_kernels(struct json_object *man)
{
	struct json_object *a;
	char *all = NULL, *first = NULL;
	bool same = true;

	if (!man || !json_object_object_get_ex(man, "participants", &a) ||
	    !json_object_is_type(a, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		char *kind = str_at(p, "kind", NULL), *node = str_at(p, "node", NULL);
		char *k = str_at(p, "kernel", NULL);

		if (k && (!kind || strcmp(kind, "host"))) {
			char *t = xasprintf("%s%s%s %s", all ? all : "", all ? ", " : "",
					    node ? node : "?", k);

			free(all);
			all = t;
			if (!first)
				first = xstrdup(k);
			same &= !strcmp(first, k);
		}
		free(kind);
		free(node);
		free(k);
	}
	if (same) {
		free(all);
		return first;
	}
	free(first);
	return all;
}

/* A cluster leader's hosts: itself, then each member it holds nodes of. */
static char *cluster_hosts(struct json_object *man)
{
	struct json_object *c, *hosts;
	char *leader = str_at(man, "cluster", "member");

	if (!leader || !json_object_object_get_ex(man, "cluster", &c) ||
	    !json_object_object_get_ex(c, "hosts", &hosts) ||
	    !json_object_is_type(hosts, json_type_object) || !json_object_object_length(hosts)) {
		free(leader);
		return NULL;
	}
	char *text = xasprintf("%s (leader)", leader);
	free(leader);
	json_object_object_foreach(hosts, member, h)
	{
		char *t = xasprintf("%s, %s", text, member);
		(void)h;
		free(text);
		text = t;
	}
	return text;
}

void run_meta_load(struct run_meta *m, struct json_object *man, const char *dir)
{
	struct json_object *v;

	memset(m, 0, sizeof(*m));
	m->hostname = str_at(man, "host", "hostname");
	m->kernel = str_at(man, "host", "kernel");
	m->cpu_model = str_at(man, "host", "cpu_model");
	m->started = str_at(man, "started", NULL);
	m->ended = str_at(man, "ended", NULL);
	if (!m->ended)
		m->ended = str_at(man, "updated", NULL);
	m->hostd_version = str_at(man, "hostd_version", NULL);
	m->release = str_at(man, "settings", "release");
	m->reason = str_at(man, "reason", NULL);
	m->guest_kind = str_at(man, "settings", "guest_kind");
	m->guest_kernel = str_at(man, "settings", "guest_kernel");
	m->guest_kernels = guest_kernels(man);
	m->guest_count = int_at(man, "settings", "guest_count");
	m->guest_vcpus = int_at(man, "settings", "guest_vcpus");
	m->guest_memory_mib = int_at(man, "settings", "guest_memory_mib");
	m->cluster_hosts = cluster_hosts(man);
	if (man && json_object_object_get_ex(man, "plan", &v))
		plan_add(m, "", v, 0);
	size_t nmain = m->nplan;

	if (man && json_object_object_get_ex(man, "node_plans", &v) &&
	    json_object_is_type(v, json_type_array))
		for (size_t k = 0; k < json_object_array_length(v); k++) {
			struct json_object *np = json_object_array_get_idx(v, k), *nodes, *steps;
			char *prefix = xstrdup("");

			if (json_object_object_get_ex(np, "nodes", &nodes) &&
			    json_object_is_type(nodes, json_type_array))
				for (size_t i = 0; i < json_object_array_length(nodes); i++) {
					char *t =
						xasprintf("%s%s%s", prefix, i ? "," : "",
							  json_object_get_string(
								  json_object_array_get_idx(nodes, i)));
					free(prefix);
					prefix = t;
				}
			char *t = xasprintf("%s: ", prefix);
			free(prefix);
			if (json_object_object_get_ex(np, "plan", &steps))
				plan_add(m, t, steps, nmain);
			free(t);
		}
	if (man && json_object_object_get_ex(man, "failures", &v) &&
	    json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *f = json_object_array_get_idx(v, i);
			char *node = str_at(f, "node", NULL), *reason = str_at(f, "reason", NULL);

			m->manifest_failures = xrealloc(m->manifest_failures,
							(m->nmanifest_failures + 1) * sizeof(char *));
			m->manifest_failures[m->nmanifest_failures++] =
				xasprintf("%s at step %lld: %s", node ? node : "?",
					  (long long)int_at(f, "step", NULL), reason ? reason : "?");
			free(node);
			free(reason);
		}
	conf_read(m, dir, "h.conf");
	conf_read(m, dir, "g.conf");
}

const char *run_meta_conf(const struct run_meta *m, const char *key)
{
	for (size_t i = m->nconf; i-- > 0;) /* the last assignment wins, as in the shell */
		if (!strcmp(m->conf[i].key, key))
			return m->conf[i].value;
	return NULL;
}

void run_meta_free(struct run_meta *m)
{
	free(m->hostname);
	free(m->kernel);
	free(m->cpu_model);
	free(m->started);
	free(m->ended);
	free(m->hostd_version);
	free(m->release);
	free(m->reason);
	free(m->guest_kind);
	free(m->guest_kernel);
	free(m->guest_kernels);
	free(m->cluster_hosts);
	for (size_t i = 0; i < m->nplan; i++)
		free(m->plan[i]);
	free(m->plan);
	for (size_t i = 0; i < m->nconf; i++) {
		free(m->conf[i].key);
		free(m->conf[i].value);
	}
	free(m->conf);
	for (size_t i = 0; i < m->nmanifest_failures; i++)
		free(m->manifest_failures[i]);
	free(m->manifest_failures);
	memset(m, 0, sizeof(*m));
}
