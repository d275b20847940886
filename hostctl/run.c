// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading a results folder back: manifest.json, samples.ndjson, barriers.ndjson. */
#include "run.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "fileio.h"
#include "xalloc.h"

void run_err_set(struct run_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	diag_vset(e->msg, sizeof(e->msg), 0, NULL, fmt, ap);
	va_end(ap);
}

/* ---- dictionary ---- */

void run_dict_init(struct run_dict *d)
{
	memset(d, 0, sizeof(*d));
}

void run_dict_free(struct run_dict *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	free(d->slots);
	memset(d, 0, sizeof(*d));
}

static uint32_t dict_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void dict_rehash(struct run_dict *d, size_t nslots)
{
	free(d->slots);
	d->slots = xcalloc(nslots, sizeof(*d->slots));
	d->nslots = nslots;
	for (size_t i = 0; i < d->n; i++) {
		size_t s = dict_hash(d->names[i]) & (nslots - 1);

		while (d->slots[s])
			s = (s + 1) & (nslots - 1);
		d->slots[s] = (uint32_t)i + 1;
	}
}

int run_dict_find(const struct run_dict *d, const char *name)
{
	if (!d->nslots)
		return -1;
	for (size_t s = dict_hash(name) & (d->nslots - 1); d->slots[s]; s = (s + 1) & (d->nslots - 1))
		if (!strcmp(d->names[d->slots[s] - 1], name))
			return (int)d->slots[s] - 1;
	return -1;
}

int run_dict_intern(struct run_dict *d, const char *name)
{
	int i = run_dict_find(d, name);

	if (i >= 0)
		return i;
	if (d->n >= RUN_NAMES_MAX)
		return -E2BIG;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->names = xrealloc(d->names, d->cap * sizeof(*d->names));
	}
	d->names[d->n++] = xstrdup(name);
	if (2 * d->n > d->nslots)
		dict_rehash(d, d->nslots ? 2 * d->nslots : 256);
	else {
		size_t s = dict_hash(name) & (d->nslots - 1);

		while (d->slots[s])
			s = (s + 1) & (d->nslots - 1);
		d->slots[s] = (uint32_t)d->n;
	}
	return (int)d->n - 1;
}

/* ---- locating ---- */

static bool has_manifest(const char *dir)
{
	char *m = xasprintf("%s/manifest.json", dir);
	struct stat st;
	bool ok = stat(m, &st) == 0 && S_ISREG(st.st_mode);

	free(m);
	return ok;
}

int run_locate(const char *arg, const char *results_dir, char **path, struct run_err *e)
{
	char *p;

	if (has_manifest(arg)) {
		*path = xstrdup(arg);
		return 0;
	}
	if (!strchr(arg, '/')) {
		p = xasprintf("%s/%s", results_dir, arg);
		if (has_manifest(p)) {
			*path = p;
			return 0;
		}
		run_err_set(e,
			    "run '%s': neither ./%s/manifest.json nor %s/manifest.json exists "
			    "(give a run folder, or a run name under --results DIR)",
			    arg, arg, p);
		free(p);
		return -ENOENT;
	}
	run_err_set(e, "run '%s': %s/manifest.json does not exist (not a results folder)", arg, arg);
	return -ENOENT;
}

/* ---- manifest ---- */

void run_iterations_text(const struct run *r, char *buf, size_t size)
{
	if (r->auto_stopped)
		snprintf(buf, size, "%lld (auto: %s, at most %lld)", (long long)r->auto_rounds,
			 r->auto_stopped, (long long)r->iterations);
	else
		snprintf(buf, size, "%lld", (long long)r->iterations);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int add_node(struct run *r, struct run_dict *d, const char *name, bool host)
{
	int i = run_dict_intern(d, name);

	if (i < 0)
		return i;
	for (size_t k = 0; k < r->nnodes; k++)
		if (r->nodes[k] == (uint32_t)i)
			return 0;
	r->nodes = xrealloc(r->nodes, (r->nnodes + 1) * sizeof(*r->nodes));
	r->node_is_host = xrealloc(r->node_is_host, (r->nnodes + 1) * sizeof(*r->node_is_host));
	r->nodes[r->nnodes] = (uint32_t)i;
	r->node_is_host[r->nnodes] = host;
	r->nnodes++;
	return 0;
}

static int load_manifest(struct run *r, struct run_dict *d, struct run_err *e)
{
	char *file = xasprintf("%s/manifest.json", r->path), *buf = NULL;
	struct json_object *m = NULL, *v, *parts;
	size_t len;
	int ret = fileio_read_all(file, RUN_MANIFEST_MAX, &buf, &len);

	if (ret < 0) {
		run_err_set(e, "%s: cannot read: %s", file, strerror(-ret));
		goto out;
	}
	m = json_tokener_parse(buf);
	ret = -EINVAL;
	if (!m || !json_object_is_type(m, json_type_object)) {
		run_err_set(e, "%s: not a JSON object", file);
		goto out;
	}
	if (!json_object_object_get_ex(m, "schema_version", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		run_err_set(e, "%s: no integer schema_version (not a lockstep results folder?)", file);
		goto out;
	}
	if (json_object_get_int64(v) != RESULTS_SCHEMA_VERSION) {
		run_err_set(e,
			    "%s: schema_version %lld, but this hostctl reads version %d "
			    "(use the hostctl of the lockstep that wrote it)",
			    file, (long long)json_object_get_int64(v), RESULTS_SCHEMA_VERSION);
		goto out;
	}
	run_meta_load(&r->meta, m, r->path);
	r->name = xstrdup(jstr(m, "run") ? jstr(m, "run") : r->path);
	r->status = xstrdup(jstr(m, "status") ? jstr(m, "status") : "unknown");
	if (json_object_object_get_ex(m, "settings", &v) &&
	    json_object_object_get_ex(v, "iterations", &v) && json_object_is_type(v, json_type_int))
		r->iterations = json_object_get_int64(v);
	struct json_object *a, *rounds;
	if (json_object_object_get_ex(m, "auto_iterations", &a) &&
	    json_object_object_get_ex(a, "rounds", &rounds) &&
	    json_object_is_type(rounds, json_type_int)) {
		r->auto_rounds = json_object_get_int64(rounds);
		r->auto_stopped = xstrdup(jstr(a, "stopped") ? jstr(a, "stopped") : "unknown");
	}
	if (json_object_object_get_ex(m, "participants", &parts) &&
	    json_object_is_type(parts, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(parts); i++) {
			struct json_object *p = json_object_array_get_idx(parts, i);
			const char *node = jstr(p, "node"), *kind = jstr(p, "kind");

			if (!node) {
				run_err_set(e, "%s: participants[%zu] has no node name", file, i);
				goto out;
			}
			ret = add_node(r, d, node,
				       kind ? !strcmp(kind, "host") : !strcmp(node, "host"));
			if (ret < 0) {
				run_err_set(e, "%s: too many names", file);
				goto out;
			}
		}
	}
	ret = 0;
out:
	json_object_put(m);
	free(buf);
	free(file);
	return ret;
}

/* ---- NDJSON ---- */

typedef int (*line_fn)(struct run *r, struct run_dict *d, struct json_object *o, const char *where,
		       struct run_err *e);

static int read_ndjson(struct run *r, struct run_dict *d, const char *name, line_fn fn,
		       struct run_err *e)
{
	char *file = xasprintf("%s/%s", r->path, name), *buf = NULL;
	struct json_tokener *tok = json_tokener_new();
	size_t len, lineno = 0;
	int ret = fileio_read_all(file, RUN_NDJSON_MAX, &buf, &len);

	if (ret < 0) {
		run_err_set(e, "%s: cannot read: %s", file, strerror(-ret));
		goto out;
	}
	for (char *line = buf, *end; line < buf + len; line = end + 1) {
		struct json_object *o;
		char where[600];

		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len; /* a cut-off last line is still read, if whole JSON */
		lineno++;
		if (end == line)
			continue;
		snprintf(where, sizeof(where), "%s:%zu", file, lineno);
		if ((size_t)(end - line) > RUN_LINE_MAX) {
			run_err_set(e, "%s: line longer than %u bytes", where, RUN_LINE_MAX);
			ret = -E2BIG;
			goto out;
		}
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, line, (int)(end - line));
		if (!o || !json_object_is_type(o, json_type_object)) {
			run_err_set(e, "%s: not a JSON object", where);
			json_object_put(o);
			ret = -EINVAL;
			goto out;
		}
		ret = fn(r, d, o, where, e);
		json_object_put(o);
		if (ret < 0)
			goto out;
	}
	ret = 0;
out:
	json_tokener_free(tok);
	free(buf);
	free(file);
	return ret;
}

static int get_name(struct run_dict *d, struct json_object *o, const char *key, const char *where,
		    uint32_t *out, struct run_err *e)
{
	const char *s = jstr(o, key);
	int i;

	if (!s || !*s) {
		run_err_set(e, "%s: no \"%s\" string", where, key);
		return -EINVAL;
	}
	i = run_dict_intern(d, s);
	if (i < 0) {
		run_err_set(e, "%s: more than %u distinct names", where, RUN_NAMES_MAX);
		return i;
	}
	*out = (uint32_t)i;
	return 0;
}

/* A benchmark swept over a parameter is one series per point: the
 * variant ("groups=4") is part of its name, "hackbench-process-pipes:groups=4". */
static int get_bench(struct run_dict *d, struct json_object *o, const char *where, uint32_t *out,
		     struct run_err *e)
{
	const char *variant = jstr(o, "variant");
	if (!variant || !*variant)
		return get_name(d, o, "benchmark", where, out, e);
	const char *bench = jstr(o, "benchmark");
	if (!bench || !*bench) {
		run_err_set(e, "%s: no \"benchmark\" string", where);
		return -EINVAL;
	}
	char *name = xasprintf("%s:%s", bench, variant);
	int i = run_dict_intern(d, name);
	free(name);
	if (i < 0) {
		run_err_set(e, "%s: more than %u distinct names", where, RUN_NAMES_MAX);
		return i;
	}
	*out = (uint32_t)i;
	return 0;
}

static int check_metric(struct run *r, struct run_dict *d, struct json_object *o,
			const struct run_sample *s, const char *where, struct run_err *e)
{
	const char *unit = jstr(o, "unit"), *better = jstr(o, "better");
	enum run_better b;
	struct run_metric *m;

	if (!better || (strcmp(better, "higher") && strcmp(better, "lower"))) {
		run_err_set(e, "%s: \"better\" is %s%s%s, expected \"higher\" or \"lower\"", where,
			    better ? "\"" : "", better ? better : "missing", better ? "\"" : "");
		return -EINVAL;
	}
	b = better[0] == 'h' ? RUN_BETTER_HIGHER : RUN_BETTER_LOWER;
	unit = unit ? unit : "";
	m = (struct run_metric *)run_metric_find(r, s->bench, s->metric);
	if (!m) {
		r->metrics = xrealloc(r->metrics, (r->nmetrics + 1) * sizeof(*r->metrics));
		m = &r->metrics[r->nmetrics++];
		*m = (struct run_metric){ s->bench, s->metric, xstrdup(unit), b, xstrdup(where) };
		return 0;
	}
	if (m->better != b || strcmp(m->unit, unit)) {
		run_err_set(e, "%s: %s %s is in \"%s\", better %s, but %s said \"%s\", better %s",
			    where, d->names[s->bench], d->names[s->metric], unit, better, m->where,
			    m->unit, m->better > 0 ? "higher" : "lower");
		return -EINVAL;
	}
	return 0;
}

/* A failure record: which node, benchmark, iteration and step, and why.
 * Its node is a participant even when it never gave a number. */
static int failure_line(struct run *r, struct run_dict *d, struct json_object *o, const char *where,
			struct run_err *e)
{
	struct run_failure f = { .step = -1 };
	struct json_object *v;
	const char *reason = jstr(o, "reason");
	int ret;

	if ((ret = get_name(d, o, "node", where, &f.node, e)) < 0 ||
	    (ret = get_bench(d, o, where, &f.bench, e)) < 0)
		return ret;
	if (!json_object_object_get_ex(o, "iteration", &v) || !json_object_is_type(v, json_type_int)) {
		run_err_set(e, "%s: no integer \"iteration\"", where);
		return -EINVAL;
	}
	f.iteration = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "step", &v) && json_object_is_type(v, json_type_int))
		f.step = json_object_get_int64(v);
	f.warmup = json_object_object_get_ex(o, "warmup", &v) && json_object_get_boolean(v);
	if ((ret = add_node(r, d, d->names[f.node], !strcmp(d->names[f.node], "host"))) < 0)
		return ret;
	f.reason = xstrdup(reason && *reason ? reason : "no reason given");
	r->failures = xrealloc(r->failures, (r->failed_steps + 1) * sizeof(*r->failures));
	r->failures[r->failed_steps++] = f;
	return 0;
}

static bool sample_failed(const struct run *r, const struct run_sample *s)
{
	for (size_t i = 0; i < r->failed_steps; i++) {
		const struct run_failure *f = &r->failures[i];

		if (f->node != s->node)
			continue;
		if (f->step >= 0 && s->step >= 0 ? f->step == s->step
						 : f->bench == s->bench && f->iteration == s->iteration)
			return true;
	}
	return false;
}

/* A step with a failure record gives no number from that node: whatever
 * it sent besides (the agent's elapsed of a benchmark that never ran) is
 * not a measurement of the benchmark. */
static void drop_failed(struct run *r)
{
	size_t k = 0;

	if (!r->failed_steps)
		return;
	for (size_t i = 0; i < r->nsamples; i++)
		if (!sample_failed(r, &r->samples[i]))
			r->samples[k++] = r->samples[i];
	r->dropped_samples = r->nsamples - k;
	r->nsamples = k;
}

static int sample_line(struct run *r, struct run_dict *d, struct json_object *o, const char *where,
		       struct run_err *e)
{
	struct run_sample s;
	struct json_object *v;
	int ret;

	/* a failed step's record stands where its samples would be: counted,
	 * not compared; warm-up runs are kept in the file but not compared */
	if (json_object_object_get_ex(o, "failed", &v) && json_object_get_boolean(v))
		return failure_line(r, d, o, where, e);
	if (json_object_object_get_ex(o, "warmup", &v) && json_object_get_boolean(v)) {
		r->warmup_samples++;
		return 0;
	}
	if ((ret = get_name(d, o, "node", where, &s.node, e)) < 0 ||
	    (ret = get_bench(d, o, where, &s.bench, e)) < 0 ||
	    (ret = get_name(d, o, "metric", where, &s.metric, e)) < 0)
		return ret;
	if (!json_object_object_get_ex(o, "iteration", &v) || !json_object_is_type(v, json_type_int)) {
		run_err_set(e, "%s: no integer \"iteration\"", where);
		return -EINVAL;
	}
	s.iteration = json_object_get_int64(v);
	s.step = json_object_object_get_ex(o, "step", &v) && json_object_is_type(v, json_type_int)
			 ? json_object_get_int64(v)
			 : -1;
	if (!json_object_object_get_ex(o, "value", &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
		run_err_set(e, "%s: no numeric \"value\"", where);
		return -EINVAL;
	}
	s.value = json_object_get_double(v);
	if (!isfinite(s.value)) {
		run_err_set(e,
			    "%s: value of %s %s for %s, iteration %lld, is %g: "
			    "not a finite number, so no statistic can use it",
			    where, d->names[s.bench], d->names[s.metric], d->names[s.node],
			    (long long)s.iteration, s.value);
		return -EDOM;
	}
	if ((ret = check_metric(r, d, o, &s, where, e)) < 0)
		return ret;
	if ((ret = add_node(r, d, d->names[s.node], !strcmp(d->names[s.node], "host"))) < 0)
		return ret;
	if ((r->nsamples & (r->nsamples - 1)) == 0)
		r->samples = xrealloc(r->samples, (r->nsamples ? 2 * r->nsamples : 1) * sizeof(s));
	r->samples[r->nsamples++] = s;
	return 0;
}

/* A cluster leader's record: the step's skew across hosts, when known. */
static int hosts_skew(struct run *r, struct json_object *o, const char *where, struct run_err *e)
{
	struct json_object *x, *v;

	if (!json_object_object_get_ex(o, "cluster", &x) ||
	    !json_object_object_get_ex(x, "across_hosts", &x) ||
	    !json_object_object_get_ex(x, "skew_ns", &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
		run_err_set(e,
			    "%s: cluster.across_hosts.skew_ns is %s, expected a non-negative integer "
			    "or null",
			    where, json_object_to_json_string(v));
		return -EINVAL;
	}
	if ((r->nhosts_skew & (r->nhosts_skew - 1)) == 0)
		r->hosts_skew_ns =
			xrealloc(r->hosts_skew_ns,
				 (r->nhosts_skew ? 2 * r->nhosts_skew : 1) * sizeof(double));
	r->hosts_skew_ns[r->nhosts_skew++] = (double)json_object_get_int64(v);
	if (json_object_object_get_ex(x, "skew_bound_ns", &v) && json_object_is_type(v, json_type_int) &&
	    json_object_get_double(v) > r->hosts_skew_bound_max_ns)
		r->hosts_skew_bound_max_ns = json_object_get_double(v);
	return 0;
}

static int barrier_line(struct run *r, struct run_dict *d, struct json_object *o, const char *where,
			struct run_err *e)
{
	struct json_object *v;
	int ret;

	(void)d;
	r->nsteps++;
	if ((ret = hosts_skew(r, o, where, e)) < 0)
		return ret;
	if (json_object_object_get_ex(o, "skew_bound_ns", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_double(v) > r->skew_bound_max_ns)
		r->skew_bound_max_ns = json_object_get_double(v);
	if (!json_object_object_get_ex(o, "skew_ns", &v) || json_object_is_type(v, json_type_null)) {
		r->steps_unstarted++;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
		run_err_set(e, "%s: skew_ns is %s, expected a non-negative integer or null", where,
			    json_object_to_json_string(v));
		return -EINVAL;
	}
	if ((r->nskew & (r->nskew - 1)) == 0)
		r->skew_ns = xrealloc(r->skew_ns, (r->nskew ? 2 * r->nskew : 1) * sizeof(double));
	r->skew_ns[r->nskew++] = (double)json_object_get_int64(v);
	return 0;
}

static int sample_cmp(const void *pa, const void *pb)
{
	const struct run_sample *a = pa, *b = pb;

	if (a->bench != b->bench)
		return a->bench < b->bench ? -1 : 1;
	if (a->metric != b->metric)
		return a->metric < b->metric ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return (a->iteration > b->iteration) - (a->iteration < b->iteration);
}

int run_load(struct run *r, const char *path, struct run_dict *d, struct run_err *e)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->path = xstrdup(path);
	if ((ret = load_manifest(r, d, e)) < 0 ||
	    (ret = read_ndjson(r, d, "samples.ndjson", sample_line, e)) < 0)
		goto fail;
	if ((ret = read_ndjson(r, d, "barriers.ndjson", barrier_line, e)) < 0 && ret != -ENOENT)
		goto fail;
	drop_failed(r);
	qsort(r->samples, r->nsamples, sizeof(*r->samples), sample_cmp);
	return 0;
fail:
	run_free(r);
	return ret;
}

void run_free(struct run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nmetrics; i++) {
		free(r->metrics[i].unit);
		free(r->metrics[i].where);
	}
	free(r->metrics);
	for (size_t i = 0; i < r->failed_steps; i++)
		free(r->failures[i].reason);
	free(r->failures);
	run_meta_free(&r->meta);
	free(r->name);
	free(r->path);
	free(r->status);
	free(r->auto_stopped);
	free(r->nodes);
	free(r->node_is_host);
	free(r->samples);
	free(r->skew_ns);
	free(r->hosts_skew_ns);
	memset(r, 0, sizeof(*r));
}

bool run_is_host(const struct run *r, uint32_t node)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i] == node)
			return r->node_is_host[i];
	return false;
}

const struct run_metric *run_metric_find(const struct run *r, uint32_t bench, uint32_t metric)
{
	for (size_t i = 0; i < r->nmetrics; i++)
		if (r->metrics[i].bench == bench && r->metrics[i].metric == metric)
			return &r->metrics[i];
	return NULL;
}

/* First sample not ordered before the key (bench, metric, node). */
static size_t lower_bound(const struct run *r, uint32_t bench, uint32_t metric, uint32_t node)
{
	struct run_sample key = { bench, metric, node, INT64_MIN, 0, 0 };
	size_t lo = 0, hi = r->nsamples;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sample_cmp(&r->samples[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t run_samples_of(const struct run *r, uint32_t bench, uint32_t metric, uint32_t node, size_t *first)
{
	size_t i = lower_bound(r, bench, metric, node), j = i;

	while (j < r->nsamples && r->samples[j].bench == bench && r->samples[j].metric == metric &&
	       r->samples[j].node == node)
		j++;
	*first = i;
	return j - i;
}

size_t run_samples_metric(const struct run *r, uint32_t bench, uint32_t metric, size_t *first)
{
	size_t i = lower_bound(r, bench, metric, 0), j = i;

	while (j < r->nsamples && r->samples[j].bench == bench && r->samples[j].metric == metric)
		j++;
	*first = i;
	return j - i;
}

bool run_guest_failed_in(const struct run *r, uint32_t bench, int64_t iteration)
{
	for (size_t i = 0; i < r->failed_steps; i++) {
		const struct run_failure *f = &r->failures[i];

		if (f->bench == bench && f->iteration == iteration && !f->warmup &&
		    !run_is_host(r, f->node))
			return true;
	}
	return false;
}
