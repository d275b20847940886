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
};

/* A primary series as last judged: the guests together, their fairness,
 * or the host (names borrowed from the series). */
struct judged {
	const char *of, *name, *metric;
	bool within;
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
	bool *is_host; /* per node */
	struct series *s;
	size_t ns;
	struct failed_step *failed;
	size_t nfailed;
	uint32_t rounds;
	enum auto_iter_verdict verdict;
	struct judged *j;
	size_t nj, within;
	char summary[160];
};

struct run_auto *run_auto_new(const struct auto_iter_rule *rule, uint32_t steps_per_round,
			      size_t nodes, const bool *is_host)
{
	struct run_auto *a = xcalloc(1, sizeof(*a));
	a->is_host = xcalloc(nodes ? nodes : 1, sizeof(*a->is_host));
	for (size_t i = 0; i < nodes; i++)
		a->is_host[i] = is_host[i];
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
	free(a->j);
	free(a->is_host);
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

/* The agent's elapsed, beside a metric of the benchmark's own on the
 * same node: secondary, not judged. */
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

/* A guest node's series that counts now: the node is in the run, not the
 * host, and the series is primary. */
static bool guest_counts(const struct run_auto *a, const struct series *s, const bool *in_run)
{
	return s->node < a->nodes && in_run[s->node] && !a->is_host[s->node] && !secondary(a, s);
}

/* Per step, the guests' values of one benchmark's metric: their sum, sum of
 * squares and count (failed steps left out). */
struct step_acc {
	uint32_t step;
	double sum, sumsq;
	size_t n;
};

static struct step_acc *acc_at(struct step_acc **acc, size_t *nacc, uint32_t step)
{
	for (size_t i = 0; i < *nacc; i++)
		if ((*acc)[i].step == step)
			return &(*acc)[i];
	*acc = xrealloc(*acc, (*nacc + 1) * sizeof(**acc));
	(*acc)[*nacc] = (struct step_acc){ .step = step };
	return &(*acc)[(*nacc)++];
}

static void judge(struct run_auto *a, const char *of, const char *name, const char *metric,
		  const double *x, size_t n)
{
	a->j = xrealloc(a->j, (a->nj + 1) * sizeof(*a->j));
	struct judged *j = &a->j[a->nj++];
	*j = (struct judged){ .of = of, .name = name, .metric = metric };
	j->ci = (struct auto_iter_ci){ .n = n, .median = NAN, .pct = INFINITY };
	if (auto_iter_ci(x, n, &j->ci) < 0)
		j->ci.n = n;
	j->within = auto_iter_within(&a->rule, &j->ci);
	a->within += j->within;
}

/* The guests taken together (per step, the mean of the guests' values) and,
 * with two guests or more, their fairness (per step, Jain's index), for the
 * benchmark and metric of series s. */
static void judge_guests(struct run_auto *a, const struct series *s, const bool *in_run)
{
	struct step_acc *acc = NULL;
	size_t nacc = 0, guests = 0;
	for (size_t i = 0; i < a->ns; i++) {
		const struct series *g = &a->s[i];
		if (!guest_counts(a, g, in_run) || strcmp(g->name, s->name) ||
		    strcmp(g->metric, s->metric))
			continue;
		guests++;
		for (size_t k = 0; k < g->n; k++) {
			if (step_failed(a, g->node, g->step[k]))
				continue;
			struct step_acc *c = acc_at(&acc, &nacc, g->step[k]);
			c->sum += g->value[k];
			c->sumsq += g->value[k] * g->value[k];
			c->n++;
		}
	}
	double *mean = xcalloc(nacc ? nacc : 1, sizeof(*mean));
	double *fair = xcalloc(nacc ? nacc : 1, sizeof(*fair));
	size_t nm = 0, nf = 0;
	for (size_t i = 0; i < nacc; i++) {
		if (!acc[i].n)
			continue;
		mean[nm++] = acc[i].sum / (double)acc[i].n;
		/* Jain: (sum x)^2 / (n sum x^2); a step some guest missed says
		 * nothing of fairness */
		if (guests >= 2 && acc[i].n == guests && acc[i].sumsq > 0)
			fair[nf++] = acc[i].sum * acc[i].sum / ((double)acc[i].n * acc[i].sumsq);
	}
	judge(a, "guests", s->name, s->metric, mean, nm);
	if (guests >= 2)
		judge(a, "fairness", s->name, s->metric, fair, nf);
	free(mean);
	free(fair);
	free(acc);
}

/* The host's own series, as they are. */
static void judge_host(struct run_auto *a, const struct series *s, const char *of)
{
	double *x = xcalloc(s->n ? s->n : 1, sizeof(*x));
	size_t n = 0;
	for (size_t k = 0; k < s->n; k++)
		if (!step_failed(a, s->node, s->step[k]))
			x[n++] = s->value[k];
	judge(a, of, s->name, s->metric, x, n);
	free(x);
}

/* s is the first guest series in the run of its benchmark and metric. */
static bool first_of_guests(const struct run_auto *a, size_t i, const bool *in_run)
{
	for (size_t k = 0; k < i; k++)
		if (guest_counts(a, &a->s[k], in_run) && !strcmp(a->s[k].name, a->s[i].name) &&
		    !strcmp(a->s[k].metric, a->s[i].metric))
			return false;
	return true;
}

bool run_auto_stop_before(struct run_auto *a, uint32_t step, const bool *in_run)
{
	if (step <= 1 || (step - 1) % a->per_round != 0)
		return false;
	a->rounds = (step - 1) / a->per_round;
	a->nj = a->within = 0;
	for (size_t i = 0; i < a->ns; i++) {
		const struct series *s = &a->s[i];
		if (s->node >= a->nodes || !in_run[s->node] || secondary(a, s))
			continue;
		if (a->is_host[s->node])
			judge_host(a, s, "host");
		else if (first_of_guests(a, i, in_run))
			judge_guests(a, s, in_run);
	}
	a->verdict = auto_iter_decide(&a->rule, a->rounds, a->nj, a->within);
	switch (a->verdict) {
	case AUTO_ITER_CONVERGED:
		snprintf(a->summary, sizeof(a->summary),
			 "after %u rounds every series' 95%% interval of the median is within %g%%",
			 a->rounds, a->rule.target_ci_pct);
		break;
	case AUTO_ITER_CAPPED:
		snprintf(a->summary, sizeof(a->summary),
			 "AUTO_MAX=%u rounds reached; %zu of %zu series not within %g%%", a->rounds,
			 a->nj - a->within, a->nj, a->rule.target_ci_pct);
		break;
	case AUTO_ITER_NO_DATA:
		snprintf(a->summary, sizeof(a->summary),
			 "after %u rounds no series has a value (every step failed)", a->rounds);
		break;
	case AUTO_ITER_MORE:
		snprintf(a->summary, sizeof(a->summary),
			 "after %u rounds %zu of %zu series within %g%%", a->rounds, a->within,
			 a->nj, a->rule.target_ci_pct);
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

json_object *run_auto_json(const struct run_auto *a)
{
	json_object *o = json_object_new_object(), *rule = json_object_new_object();
	json_object_object_add(rule, "min", json_object_new_int64(a->rule.min));
	json_object_object_add(rule, "max", json_object_new_int64(a->rule.max));
	json_object_object_add(rule, "target_ci_pct", json_object_new_double(a->rule.target_ci_pct));
	json_object_object_add(rule, "confidence", json_object_new_double(AUTO_ITER_CONFIDENCE));
	json_object_object_add(rule, "interval", json_object_new_string("median, order statistics"));
	json_object_object_add(o, "rule", rule);
	json_object_object_add(o, "rounds", json_object_new_int64(a->rounds));
	/* "more": the run ended otherwise (a failure, a signal) before the rule did */
	json_object_object_add(o, "stopped",
			       json_object_new_string(auto_iter_verdict_name(a->verdict)));
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < a->nj; i++) {
		const struct judged *j = &a->j[i];
		json_object *e = json_object_new_object();
		json_object_object_add(e, "of", json_object_new_string(j->of));
		json_object_object_add(e, "series", json_object_new_string(j->name));
		json_object_object_add(e, "metric", json_object_new_string(j->metric));
		json_object_object_add(e, "n", json_object_new_int64((int64_t)j->ci.n));
		json_object_object_add(e, "median", num_or_null(j->ci.median));
		json_object_object_add(e, "ci_pct", num_or_null(j->ci.pct));
		json_object_object_add(e, "within", json_object_new_boolean(j->within));
		json_object_object_add(e, "hit_max",
				       json_object_new_boolean(!j->within &&
							       a->verdict == AUTO_ITER_CAPPED));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "series", arr);
	return o;
}
