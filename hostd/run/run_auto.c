// SPDX-License-Identifier: GPL-2.0-or-later
#include "run_auto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct series {
	size_t node;
	char *name, *metric;
	size_t n, cap;
	double *value;
	uint32_t *step;
	/* the last judgement */
	bool judged, within;
	struct auto_iter_ci ci;
};

struct failed_step {
	size_t node;
	uint32_t step;
};

struct run_auto {
	struct auto_iter_rule rule;
	uint32_t per_round;
	size_t nodes;
	struct series *s;
	size_t ns;
	struct failed_step *failed;
	size_t nfailed;
	uint32_t rounds;
	enum auto_iter_verdict verdict;
	size_t judged, within;
	char summary[160];
};

struct run_auto *run_auto_new(const struct auto_iter_rule *rule, uint32_t steps_per_round,
			      size_t nodes)
{
	struct run_auto *a = xcalloc(1, sizeof(*a));
	a->rule = *rule;
	a->per_round = steps_per_round ? steps_per_round : 1;
	a->nodes = nodes;
	a->verdict = AUTO_ITER_MORE;
	return a;
}

void run_auto_free(struct run_auto *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ns; i++) {
		free(a->s[i].name);
		free(a->s[i].metric);
		free(a->s[i].value);
		free(a->s[i].step);
	}
	free(a->s);
	free(a->failed);
	free(a);
}

static struct series *find(struct run_auto *a, size_t node, const char *name, const char *metric)
{
	for (size_t i = 0; i < a->ns; i++)
		if (a->s[i].node == node && !strcmp(a->s[i].name, name) &&
		    !strcmp(a->s[i].metric, metric))
			return &a->s[i];
	a->s = xrealloc(a->s, (a->ns + 1) * sizeof(*a->s));
	struct series *s = &a->s[a->ns++];
	*s = (struct series){ .node = node, .name = xstrdup(name), .metric = xstrdup(metric) };
	return s;
}

void run_auto_value(struct run_auto *a, size_t node, uint32_t step, const char *series,
		    const char *metric, double value)
{
	if (!isfinite(value))
		return;
	struct series *s = find(a, node, series, metric);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->value = xrealloc(s->value, s->cap * sizeof(*s->value));
		s->step = xrealloc(s->step, s->cap * sizeof(*s->step));
	}
	s->value[s->n] = value;
	s->step[s->n++] = step;
}

void run_auto_failed(struct run_auto *a, size_t node, uint32_t step)
{
	a->failed = xrealloc(a->failed, (a->nfailed + 1) * sizeof(*a->failed));
	a->failed[a->nfailed++] = (struct failed_step){ node, step };
}

static bool step_failed(const struct run_auto *a, size_t node, uint32_t step)
{
	for (size_t i = 0; i < a->nfailed; i++)
		if (a->failed[i].node == node && a->failed[i].step == step)
			return true;
	return false;
}

/* The agent's elapsed, beside a metric of the benchmark's own: not judged. */
static bool secondary(const struct run_auto *a, const struct series *s)
{
	if (strcmp(s->metric, "elapsed") != 0)
		return false;
	for (size_t i = 0; i < a->ns; i++)
		if (a->s[i].node == s->node && !strcmp(a->s[i].name, s->name) &&
		    strcmp(a->s[i].metric, "elapsed") != 0)
			return true;
	return false;
}

static void judge(struct run_auto *a, struct series *s, double *buf)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!step_failed(a, s->node, s->step[i]))
			buf[n++] = s->value[i];
	s->judged = true;
	s->ci = (struct auto_iter_ci){ .n = n, .pct = INFINITY };
	if (n >= 2)
		auto_iter_ci(buf, n, &s->ci);
	s->ci.n = n;
	s->within = auto_iter_within(&a->rule, &s->ci);
}

bool run_auto_stop_before(struct run_auto *a, uint32_t step, const bool *in_run)
{
	if (step <= 1 || (step - 1) % a->per_round != 0)
		return false;
	a->rounds = (step - 1) / a->per_round;
	a->judged = a->within = 0;
	size_t most = 0;
	for (size_t i = 0; i < a->ns; i++)
		most = a->s[i].n > most ? a->s[i].n : most;
	double *buf = xcalloc(most ? most : 1, sizeof(*buf));
	for (size_t i = 0; i < a->ns; i++) {
		struct series *s = &a->s[i];
		s->judged = false;
		if ((s->node < a->nodes && !in_run[s->node]) || secondary(a, s))
			continue;
		judge(a, s, buf);
		a->judged++;
		a->within += s->within;
	}
	free(buf);
	a->verdict = auto_iter_decide(&a->rule, a->rounds, a->judged, a->within);
	switch (a->verdict) {
	case AUTO_ITER_CONVERGED:
		snprintf(a->summary, sizeof(a->summary),
			 "after %u rounds every series' 95%% interval of the mean is within %g%%",
			 a->rounds, a->rule.target_ci_pct);
		break;
	case AUTO_ITER_CAPPED:
		snprintf(a->summary, sizeof(a->summary),
			 "AUTO_MAX=%u rounds reached; %zu of %zu series not within %g%%",
			 a->rounds, a->judged - a->within, a->judged, a->rule.target_ci_pct);
		break;
	case AUTO_ITER_NO_DATA:
		snprintf(a->summary, sizeof(a->summary),
			 "after %u rounds no series has a value (every step failed)", a->rounds);
		break;
	case AUTO_ITER_MORE:
		snprintf(a->summary, sizeof(a->summary), "after %u rounds %zu of %zu series within %g%%",
			 a->rounds, a->within, a->judged, a->rule.target_ci_pct);
		break;
	}
	return a->verdict != AUTO_ITER_MORE;
}

uint32_t run_auto_rounds(const struct run_auto *a)
{
	return a->rounds;
}

const char *run_auto_summary(const struct run_auto *a)
{
	return a->summary;
}

static json_object *num_or_null(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

json_object *run_auto_json(const struct run_auto *a, const char *const *node_names)
{
	json_object *o = json_object_new_object(), *rule = json_object_new_object();
	json_object_object_add(rule, "min", json_object_new_int64(a->rule.min));
	json_object_object_add(rule, "max", json_object_new_int64(a->rule.max));
	json_object_object_add(rule, "target_ci_pct", json_object_new_double(a->rule.target_ci_pct));
	json_object_object_add(rule, "confidence", json_object_new_double(AUTO_ITER_CONFIDENCE));
	json_object_object_add(rule, "interval", json_object_new_string("mean, Student's t"));
	json_object_object_add(o, "rule", rule);
	json_object_object_add(o, "rounds", json_object_new_int64(a->rounds));
	/* "more": the run ended otherwise (a failure, a signal) before the rule did */
	json_object_object_add(o, "stopped", json_object_new_string(auto_iter_verdict_name(a->verdict)));
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < a->ns; i++) {
		const struct series *s = &a->s[i];
		if (!s->judged)
			continue;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "node", json_object_new_string(
			s->node < a->nodes ? node_names[s->node] : "?"));
		json_object_object_add(e, "series", json_object_new_string(s->name));
		json_object_object_add(e, "metric", json_object_new_string(s->metric));
		json_object_object_add(e, "n", json_object_new_int64((int64_t)s->ci.n));
		json_object_object_add(e, "mean", num_or_null(s->ci.n ? s->ci.mean : NAN));
		json_object_object_add(e, "ci_pct", num_or_null(s->ci.pct));
		json_object_object_add(e, "within", json_object_new_boolean(s->within));
		json_object_object_add(e, "hit_max", json_object_new_boolean(
			!s->within && a->verdict == AUTO_ITER_CAPPED));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "series", arr);
	return o;
}
