// SPDX-License-Identifier: GPL-2.0-or-later
#include "member_records.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* the length of buf's first line, its newline counted */
static size_t line_len(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);
	return nl ? (size_t)(nl - buf) + 1 : len;
}

size_t mrec_skip_long(const char *buf, size_t len, size_t *nlines)
{
	size_t at = 0, n;
	*nlines = 0;
	while (at < len && (n = line_len(buf + at, len - at)) > MREC_LINE_MAX) {
		at += n;
		(*nlines)++;
	}
	return at;
}

size_t mrec_take_lines(const char *buf, size_t len)
{
	size_t at = 0, n;
	while (at < len && (n = line_len(buf + at, len - at)) <= MREC_LINE_MAX &&
	       at + n <= MREC_LINES_MAX)
		at += n;
	return at;
}

bool mrec_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 63 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* C0, DEL, and C1 as UTF-8 (0xc2 0x80..0x9f): what could move a terminal */
static bool text_clean(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		     (unsigned char)s[i + 1] <= 0x9f))
			return false;
	}
	return true;
}

static bool tree_clean(json_object *o, int depth)
{
	if (depth > 16)
		return false;
	switch (json_object_get_type(o)) {
	case json_type_string:
		return text_clean(json_object_get_string(o), (size_t)json_object_get_string_len(o));
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (!tree_clean(json_object_array_get_idx(o, i), depth + 1))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			if (!text_clean(k, strlen(k)) || !tree_clean(v, depth + 1))
				return false;
		}
		return true;
	}
	default: return true;
	}
}

json_object *mrec_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new_ex(17);
	json_object *o = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	bool whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
		     json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	if (!o || !whole || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		bad(err, errlen, "not one JSON object (of depth at most 16)");
		return NULL;
	}
	if (!tree_clean(o, 0)) {
		json_object_put(o);
		bad(err, errlen, "a string holds a control character");
		return NULL;
	}
	return o;
}

static json_object *get(json_object *o, const char *k, json_type t)
{
	json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = get(o, k, json_type_string);
	return v ? json_object_get_string(v) : NULL;
}

static bool declared(json_object *nodes, const char *node)
{
	for (size_t i = 0; node && i < json_object_array_length(nodes); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(nodes, i)), node) == 0)
			return true;
	return false;
}

/* A node name a member's record uses: valid and one of its own. */
static int node_ok(const char *node, json_object *nodes, char *err, size_t errlen)
{
	if (!node)
		return bad(err, errlen, "no \"node\" string");
	if (!mrec_name_ok(node))
		return bad(err, errlen,
			   "node \"%.80s\" is not a node name ([A-Za-z0-9._-], not starting "
			   "with '.', at most 63 bytes)",
			   node);
	if (!declared(nodes, node))
		return bad(err, errlen, "node \"%.80s\" is not one of the member's own nodes", node);
	return 0;
}

static char *joined(const char *a, const char *b)
{
	char buf[160];
	snprintf(buf, sizeof(buf), "%s/%s", a, b);
	return strdup(buf);
}

int mrec_facts(json_object *facts, json_object **nodes, char *err, size_t errlen)
{
	json_object *parts = get(facts, "participants", json_type_array);
	*nodes = NULL;
	if (!parts)
		return bad(err, errlen, "manifest facts without a \"participants\" array");
	size_t n = json_object_array_length(parts);
	if (n > MREC_NODES_MAX)
		return bad(err, errlen, "%zu participants, more than %u", n, MREC_NODES_MAX);
	json_object *names = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const char *node = str(json_object_array_get_idx(parts, i), "node");
		if (!node || !mrec_name_ok(node) || declared(names, node)) {
			json_object_put(names);
			return bad(err, errlen, "participants[%zu]: node %s%.80s%s is %s", i,
				   node ? "\"" : "", node ? node : "missing", node ? "\"" : "",
				   node && mrec_name_ok(node) ? "declared twice" : "not a node name");
		}
		json_object_array_add(names, json_object_new_string(node));
	}
	*nodes = names;
	return 0;
}

json_object *mrec_facts_participants(json_object *facts, const char *member)
{
	json_object *parts = get(facts, "participants", json_type_array),
		    *out = json_object_new_array();
	for (size_t i = 0; parts && i < json_object_array_length(parts); i++) {
		json_object *p = NULL;
		json_object_deep_copy(json_object_array_get_idx(parts, i), &p, NULL);
		char *name = joined(member, str(p, "node"));
		json_object_object_add(p, "node", json_object_new_string(name));
		json_object_object_add(p, "member", json_object_new_string(member));
		free(name);
		json_object_array_add(out, p);
	}
	return out;
}

void mrec_units_init(struct mrec_units *u)
{
	u->map = json_object_new_object();
}

void mrec_units_fini(struct mrec_units *u)
{
	json_object_put(u->map);
	u->map = NULL;
}

/* The key hostctl tells a metric by: its benchmark, sweep point and name. */
static void metric_key(json_object *o, char *key, size_t size)
{
	const char *variant = str(o, "variant"), *bench = str(o, "benchmark"),
		   *metric = str(o, "metric");
	snprintf(key, size, "%s\x1f%s\x1f%s", bench ? bench : "", variant ? variant : "",
		 metric ? metric : "");
}

/* -1: the line says another unit or direction than an earlier one */
static int units_check(struct mrec_units *u, json_object *o, bool add, char *err, size_t errlen)
{
	char key[600], val[300];
	const char *unit = str(o, "unit");
	metric_key(o, key, sizeof(key));
	snprintf(val, sizeof(val), "%s\x1f%s", unit ? unit : "", str(o, "better"));
	json_object *was = get(u->map, key, json_type_string);
	if (was && strcmp(json_object_get_string(was), val) != 0)
		return bad(err, errlen,
			   "%.80s %.80s in \"%.40s\", better %s, but earlier lines say \"%.*s\"",
			   str(o, "benchmark"), str(o, "metric"), unit ? unit : "",
			   str(o, "better"), (int)strcspn(json_object_get_string(was), "\x1f"),
			   json_object_get_string(was));
	if (!was && add && json_object_object_length(u->map) < MREC_METRICS_MAX)
		json_object_object_add(u->map, key, json_object_new_string(val));
	return 0;
}

static bool is_metric_line(json_object *o)
{
	json_object *v;
	return str(o, "benchmark") && str(o, "metric") && str(o, "better") &&
	       !(json_object_object_get_ex(o, "failed", &v) && json_object_get_boolean(v));
}

void mrec_units_note(struct mrec_units *u, const char *line, size_t len)
{
	char err[8];
	struct json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	json_tokener_free(tok);
	if (o && is_metric_line(o))
		units_check(u, o, true, err, sizeof(err));
	json_object_put(o);
}

int mrec_sample(json_object *o, const char *member, json_object *nodes, struct mrec_units *u,
		char *err, size_t errlen)
{
	json_object *v;
	const char *node = str(o, "node");
	if (node_ok(node, nodes, err, errlen) < 0)
		return -1;
	const char *bench = str(o, "benchmark");
	if (!bench || !*bench)
		return bad(err, errlen, "no \"benchmark\" string");
	if (!get(o, "iteration", json_type_int))
		return bad(err, errlen, "no integer \"iteration\"");
	if (json_object_object_get_ex(o, "step", &v) && !json_object_is_type(v, json_type_int))
		return bad(err, errlen, "\"step\" is not an integer");
	if (json_object_object_get_ex(o, "variant", &v) && !json_object_is_type(v, json_type_string))
		return bad(err, errlen, "\"variant\" is not a string");
	bool failed = json_object_object_get_ex(o, "failed", &v) && json_object_get_boolean(v);
	if (!failed) {
		const char *metric = str(o, "metric"), *better = str(o, "better");
		if (!metric || !*metric)
			return bad(err, errlen, "no \"metric\" string");
		if (!better || (strcmp(better, "higher") && strcmp(better, "lower")))
			return bad(err, errlen, "\"better\" is not \"higher\" or \"lower\"");
		if (json_object_object_get_ex(o, "unit", &v) &&
		    !json_object_is_type(v, json_type_string))
			return bad(err, errlen, "\"unit\" is not a string");
		if (!json_object_object_get_ex(o, "value", &v) ||
		    !(json_object_is_type(v, json_type_double) ||
		      json_object_is_type(v, json_type_int)) ||
		    !isfinite(json_object_get_double(v)))
			return bad(err, errlen, "no finite numeric \"value\"");
		if (units_check(u, o, true, err, errlen) < 0)
			return -1;
	} else if (json_object_object_get_ex(o, "log", &v)) {
		json_object_object_add(o, "member_log", json_object_get(v));
		json_object_object_del(o, "log");
	}
	char *name = joined(member, node);
	json_object_object_add(o, "node", json_object_new_string(name));
	free(name);
	return 0;
}

/* {node: integer} of a member's record, renamed "<member>/<node>" into a
 * new object; nodes must be declared. */
static int node_map(json_object *map, const char *what, const char *member, json_object *nodes,
		    bool nonneg, json_object **out, char *err, size_t errlen)
{
	*out = json_object_new_object();
	json_object_object_foreach(map, node, v)
	{
		bool fine = node_ok(node, nodes, err, errlen) == 0;
		if (fine && (!json_object_is_type(v, json_type_int) ||
			     (nonneg && json_object_get_int64(v) < 0))) {
			bad(err, errlen, "%s of node \"%.80s\" is not a%s integer", what, node,
			    nonneg ? " non-negative" : "n");
			fine = false;
		}
		if (!fine) {
			json_object_put(*out);
			*out = NULL;
			return -1;
		}
		char *name = joined(member, node);
		json_object_object_add(*out, name, json_object_get(v));
		free(name);
	}
	return 0;
}

int mrec_barrier(json_object *o, const char *member, json_object *nodes, uint32_t nsteps,
		 uint32_t *step, json_object **summary, char *err, size_t errlen)
{
	json_object *v, *c = get(o, "cluster", json_type_object), *started = NULL, *bounds = NULL;
	*summary = NULL;
	err[0] = 0;
	v = get(o, "step", json_type_int);
	if (!v || json_object_get_int64(v) < 1 || json_object_get_int64(v) > nsteps)
		return bad(err, errlen, "no \"step\" from 1 to %u", nsteps);
	*step = (uint32_t)json_object_get_int64(v);
	json_object *st = get(c, "started_realtime_ns", json_type_object);
	if (!st)
		return bad(err, errlen, "step %u: no cluster.started_realtime_ns object", *step);
	if (node_map(st, "cluster.started_realtime_ns", member, nodes, true, &started, err, errlen) < 0)
		return -1;
	bounds = json_object_new_object();
	json_object *offs = get(o, "clock_offsets", json_type_object);
	json_object_object_foreach(offs, node, off)
	{
		json_object *b = get(off, "bound_ns", json_type_int);
		bool fine = node_ok(node, nodes, err, errlen) == 0;
		if (fine && (!b || json_object_get_int64(b) < 0)) {
			bad(err, errlen,
			    "clock_offsets of node \"%.80s\": no non-negative bound_ns", node);
			fine = false;
		}
		if (!fine) {
			json_object_put(started);
			json_object_put(bounds);
			return -1;
		}
		char *name = joined(member, node);
		json_object_object_add(bounds, name, json_object_get(b));
		free(name);
	}
	json_object *s = json_object_new_object();
	const char *keep[] = { "skew_ns", "skew_bound_ns" };
	for (size_t i = 0; i < 2; i++)
		if (json_object_object_get_ex(o, keep[i], &v) &&
		    (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_null)))
			json_object_object_add(s, keep[i], json_object_get(v));
	if ((v = get(c, "release_realtime_ns", json_type_int)))
		json_object_object_add(s, "release_realtime_ns", json_object_get(v));
	json_object_object_add(s, "started_realtime_ns", started);
	json_object_object_add(s, "bound_ns", bounds);
	json_object *hc = get(c, "host_clock", json_type_object), *h = json_object_new_object();
	const char *hk[] = { "maxerror_us", "esterror_us" };
	for (size_t i = 0; i < 2; i++)
		if ((v = get(hc, hk[i], json_type_int)) && json_object_get_int64(v) >= 0)
			json_object_object_add(h, hk[i], json_object_get(v));
	if ((v = get(hc, "unsynchronised", json_type_boolean)))
		json_object_object_add(h, "unsynchronised", json_object_get(v));
	json_object_object_add(s, "host_clock", h);
	*summary = s;
	return 0;
}

bool mrec_unsynchronised(json_object *summary)
{
	json_object *v = get(get(summary, "host_clock", json_type_object), "unsynchronised",
			     json_type_boolean);
	return v && json_object_get_boolean(v);
}

json_object *mrec_own_summary(json_object *o)
{
	json_object *c = get(o, "cluster", json_type_object), *v;
	json_object *st = get(c, "started_realtime_ns", json_type_object);
	if (!st)
		return NULL;
	json_object *s = json_object_new_object(), *bounds = json_object_new_object();
	json_object_object_add(s, "started_realtime_ns", json_object_get(st));
	json_object_object_foreach(get(o, "clock_offsets", json_type_object), node, off)
	{
		if ((v = get(off, "bound_ns", json_type_int)))
			json_object_object_add(bounds, node, json_object_get(v));
	}
	json_object_object_add(s, "bound_ns", bounds);
	if ((v = get(c, "host_clock", json_type_object)))
		json_object_object_add(s, "host_clock", json_object_get(v));
	return s;
}

/* A host's clock error as a bound in ns: its maxerror, or the largest
 * there is when it is not known. */
static int64_t host_error_ns(json_object *summary)
{
	json_object *v =
		get(get(summary, "host_clock", json_type_object), "maxerror_us", json_type_int);
	int64_t us = v ? json_object_get_int64(v) : MREC_MAXERROR_UNKNOWN_US;
	return us * 1000;
}

json_object *mrec_across(json_object *hosts)
{
	const char *first = NULL, *last = NULL, *first_host = NULL, *last_host = NULL;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	json_object *out = json_object_new_object(), *counted = json_object_new_array();
	json_object_object_foreach(hosts, member, s)
	{
		json_object_array_add(counted, json_object_new_string(member));
		json_object_object_foreach(get(s, "started_realtime_ns", json_type_object), node, t)
		{
			int64_t at = json_object_get_int64(t);
			if (at < lo) {
				lo = at;
				first = node;
				first_host = member;
			}
			if (at > hi) {
				hi = at;
				last = node;
				last_host = member;
			}
		}
	}
	if (!first) {
		json_object_object_add(out, "skew_ns", NULL);
		json_object_object_add(out, "skew_bound_ns", NULL);
	} else {
		json_object *fs = get(hosts, first_host, json_type_object);
		json_object *ls = get(hosts, last_host, json_type_object);
		json_object *fb = get(get(fs, "bound_ns", json_type_object), first, json_type_int);
		json_object *lb = get(get(ls, "bound_ns", json_type_object), last, json_type_int);
		int64_t bound =
			(fb ? json_object_get_int64(fb) : 0) + (lb ? json_object_get_int64(lb) : 0);
		/* on one host both ends read the same clock: its error cancels */
		if (strcmp(first_host, last_host) != 0)
			bound += host_error_ns(fs) + host_error_ns(ls);
		json_object_object_add(out, "skew_ns", json_object_new_int64(hi - lo));
		json_object_object_add(out, "skew_bound_ns", json_object_new_int64(bound));
		json_object_object_add(out, "first", json_object_new_string(first));
		json_object_object_add(out, "last", json_object_new_string(last));
	}
	json_object_object_add(out, "hosts", counted);
	return out;
}
