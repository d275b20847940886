// SPDX-License-Identifier: GPL-2.0-or-later
/* Building the rows of a comparison and testing each against the base. */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *cmp_verdict_name(enum cmp_verdict v)
{
	static const char *const names[] = {
		[CMP_BASE] = "base",	       [CMP_BETTER] = "better",
		[CMP_WORSE] = "worse",	       [CMP_NO_CHANGE] = "no-change",
		[CMP_DIFFERENT] = "different", [CMP_TOO_FEW] = "too-few-samples",
		[CMP_MISSING] = "missing",     [CMP_UNTESTABLE] = "untestable",
	};

	return names[v];
}

const char *cmp_name(const struct cmp_result *c, uint32_t i)
{
	return c->dict->names[i];
}

const char *cmp_row_label(const struct cmp_result *c, const struct cmp_row *r)
{
	switch (r->kind) {
	case CMP_ROW_NODE: return cmp_name(c, r->node);
	case CMP_ROW_GUESTS: return "guests";
	case CMP_ROW_FAIRNESS: return "fairness";
	}
	return "?";
}

static void note(struct cmp_result *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct cmp_result *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < c->nnotes; i++)
		if (!strcmp(c->notes[i], s)) {
			free(s);
			return;
		}
	c->notes = xrealloc(c->notes, (c->nnotes + 1) * sizeof(*c->notes));
	c->notes[c->nnotes++] = s;
}

static struct cmp_row *add_row(struct cmp_result *c, enum cmp_kind kind, const struct run_metric *m,
			       uint32_t node)
{
	struct cmp_row *r;

	if ((c->nrows & (c->nrows - 1)) == 0)
		c->rows = xrealloc(c->rows, (c->nrows ? 2 * c->nrows : 1) * sizeof(*c->rows));
	r = &c->rows[c->nrows++];
	*r = (struct cmp_row){ .kind = kind,
			       .bench = m->bench,
			       .metric = m->metric,
			       .node = node,
			       .unit = m->unit,
			       .better = m->better,
			       .primary = true,
			       .cells = xcalloc(c->nruns, sizeof(*r->cells)) };
	if (kind == CMP_ROW_FAIRNESS) {
		r->unit = "";
		r->better = RUN_BETTER_HIGHER; /* Jain: 1 is fair */
	}
	return r;
}

static void cell_set(struct cmp_cell *cell, double *v, size_t n)
{
	cell->fair_cv = cell->fair_maxmin = NAN;
	if (!n) {
		free(v);
		return;
	}
	cell->present = true;
	cell->values = v;
	cell->n = n;
	stats_describe(v, n, &cell->d); /* finite: checked when read */
}

/* (iteration, value) of every guest sample of a metric, sorted by iteration. */
struct itv {
	int64_t it;
	double v;
};

static int itv_cmp(const void *pa, const void *pb)
{
	const struct itv *a = pa, *b = pb;

	return (a->it > b->it) - (a->it < b->it);
}

static size_t guest_values(const struct run *r, const struct run_metric *m, struct itv **out)
{
	size_t first, n = run_samples_metric(r, m->bench, m->metric, &first), k = 0;
	struct itv *v = xmalloc((n ? n : 1) * sizeof(*v));

	for (size_t i = first; i < first + n; i++)
		if (!run_is_host(r, r->samples[i].node))
			v[k++] = (struct itv){ r->samples[i].iteration, r->samples[i].value };
	qsort(v, k, sizeof(*v), itv_cmp);
	*out = v;
	return k;
}

static double median_of(double *x, size_t n)
{
	struct stats_desc d;

	return n && stats_describe(x, n, &d) == 0 ? d.median : NAN;
}

/* The guests row (mean per iteration) and the fairness row (Jain per
 * iteration, with CV and max/min beside it) of one run. */
static size_t fill_aggregates(const struct run *r, const struct run_metric *m,
			      struct cmp_cell *guests, struct cmp_cell *fair)
{
	size_t left_out = 0;

	struct itv *v;
	size_t n = guest_values(r, m, &v), ng = 0, nf = 0, ncv = 0, nmm = 0;
	double *gm = xmalloc((n ? n : 1) * sizeof(double)),
	       *jain = xmalloc((n ? n : 1) * sizeof(double));
	double *cv = xmalloc((n ? n : 1) * sizeof(double)),
	       *mm = xmalloc((n ? n : 1) * sizeof(double));

	for (size_t i = 0, j; i < n; i = j) {
		double *grp, j_idx;
		struct stats_desc d;
		size_t k;

		for (j = i; j < n && v[j].it == v[i].it; j++)
			;
		/* a guest's step failed: the others of that iteration are no
		 * set of guests to average or to judge fairness by */
		if (run_guest_failed_in(r, m->bench, v[i].it)) {
			left_out++;
			continue;
		}
		k = j - i;
		grp = xmalloc(k * sizeof(*grp));
		for (size_t q = 0; q < k; q++)
			grp[q] = v[i + q].v;
		stats_describe(grp, k, &d);
		gm[ng++] = d.mean;
		if (k >= 2 && stats_jain(grp, k, &j_idx) == 0) {
			jain[nf++] = j_idx;
			if (isfinite(d.cv))
				cv[ncv++] = d.cv;
			if (d.min > 0)
				mm[nmm++] = d.max / d.min;
		}
		free(grp);
	}
	cell_set(guests, gm, ng);
	cell_set(fair, jain, nf);
	fair->fair_cv = median_of(cv, ncv);
	fair->fair_maxmin = median_of(mm, nmm);
	free(cv);
	free(mm);
	free(v);
	return left_out;
}

/* Noise flags: the steps of a run in which some node's monitors saw steal
 * time, another process's load (CPU pressure) or a guest's vCPU waiting
 * to run above the limit.  noisy[step], for steps 0..*nsteps-1. */
static bool *noisy_steps(const struct run *r, const struct run_dict *d, double pct, size_t *nsteps,
			 size_t *count)
{
	size_t n = 1;
	bool *noisy;

	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].step >= 0 && (size_t)r->samples[i].step >= n)
			n = (size_t)r->samples[i].step + 1;
	noisy = xcalloc(n, sizeof(*noisy));
	*count = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct run_sample *s = &r->samples[i];
		const char *m = d->names[s->metric];

		if (s->step < 0 || s->value <= pct || noisy[s->step] ||
		    (strcmp(m, "steal_pct") && strcmp(m, "cpu_pressure") && strcmp(m, "vcpu_delay_pct")))
			continue;
		noisy[s->step] = true;
		(*count)++;
	}
	*nsteps = n;
	return noisy;
}

static bool step_noisy(const struct cmp_result *c, size_t run, int64_t step)
{
	return step >= 0 && (size_t)step < c->nnoisy[run] && c->noisy[run][step];
}

static void fill_node(const struct cmp_result *c, size_t run, const struct run_metric *m,
		      uint32_t node, struct cmp_cell *cell)
{
	const struct run *r = &c->runs[run];
	size_t first, n = run_samples_of(r, m->bench, m->metric, node, &first), noisy = 0;
	double *v = xmalloc((n ? n : 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		v[i] = r->samples[first + i].value;
		noisy += step_noisy(c, run, r->samples[first + i].step);
	}
	cell_set(cell, v, n);
	cell->noisy = noisy;
}

/* Iterations of a metric with a value from a noisy step, any node's. */
static size_t noisy_iterations(const struct cmp_result *c, size_t run, const struct run_metric *m)
{
	const struct run *r = &c->runs[run];
	size_t first, n = run_samples_metric(r, m->bench, m->metric, &first), count = 0;
	int64_t *its = xmalloc((n ? n : 1) * sizeof(*its));

	for (size_t i = first; i < first + n; i++) {
		bool seen = false;

		if (!step_noisy(c, run, r->samples[i].step))
			continue;
		for (size_t k = 0; k < count && !seen; k++)
			seen = its[k] == r->samples[i].iteration;
		if (!seen)
			its[count++] = r->samples[i].iteration;
	}
	free(its);
	return count;
}

/* Words for a pair the test cannot decide; "" when it can. */
static void too_few(const struct cmp_opts *o, size_t nb, size_t nn, char *why, size_t len)
{
	size_t k = 1;

	if (o->test == CMP_TEST_WELCH) {
		if (nb < 2 || nn < 2)
			snprintf(why, len,
				 "too few samples: n=%zu and %zu, Welch's t needs 2 per side", nb, nn);
		return;
	}
	if (stats_mwu_min_p(nb, nn) < o->alpha)
		return;
	while (stats_mwu_min_p(k, k) >= o->alpha && k < 1000)
		k++;
	snprintf(why, len,
		 "too few samples: with n=%zu and %zu, U cannot reach p < %g "
		 "(needs %zu per side)",
		 nb, nn, o->alpha, k);
}

static void test_cell(const struct cmp_opts *o, const struct cmp_cell *b, struct cmp_cell *c,
		      const char *base_name, const char *name)
{
	double cb = o->test == CMP_TEST_WELCH ? b->d.mean : b->d.median;
	double cn = o->test == CMP_TEST_WELCH ? c->d.mean : c->d.median;
	int ret;

	c->change_pct = NAN;
	if (!b->present || !c->present) {
		c->verdict = CMP_MISSING;
		snprintf(c->why, sizeof(c->why), "no samples in run %s", b->present ? name : base_name);
		return;
	}
	if (cb != 0)
		c->change_pct = (cn - cb) / fabs(cb) * 100;
	too_few(o, b->n, c->n, c->why, sizeof(c->why));
	if (c->why[0]) {
		c->verdict = CMP_TOO_FEW;
		return;
	}
	if (o->test == CMP_TEST_WELCH)
		ret = stats_welch(b->values, b->n, c->values, c->n, &c->t);
	else
		ret = stats_mann_whitney(b->values, b->n, c->values, c->n, &c->t);
	if (ret < 0) {
		c->verdict = CMP_UNTESTABLE;
		snprintf(c->why, sizeof(c->why),
			 "both samples are constant and differ: "
			 "Welch's t is undefined (try the default U test)");
		return;
	}
	c->tested = true;
}

static void decide(struct cmp_result *c, size_t run)
{
	double *p = xmalloc((c->nrows ? c->nrows : 1) * sizeof(double));
	double *adj = xmalloc((c->nrows ? c->nrows : 1) * sizeof(double));
	size_t n = 0;

	for (size_t i = 0; i < c->nrows; i++)
		if (c->rows[i].cells[run].tested && c->rows[i].primary)
			p[n++] = c->rows[i].cells[run].t.p;
	if (c->opts.holm)
		stats_holm(p, n, adj);
	else
		memcpy(adj, p, n * sizeof(double));
	c->family[run] = n;
	n = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		struct cmp_row *r = &c->rows[i];
		struct cmp_cell *x = &r->cells[run];

		if (!x->tested)
			continue;
		x->p_adj = r->primary ? adj[n++] : x->t.p;
		x->significant = x->p_adj < c->opts.alpha;
		if (!x->significant)
			x->verdict = CMP_NO_CHANGE;
		else if (!isfinite(x->change_pct) || x->change_pct == 0)
			x->verdict = CMP_DIFFERENT;
		else
			x->verdict = (x->change_pct > 0) == (r->better == RUN_BETTER_HIGHER)
					     ? CMP_BETTER
					     : CMP_WORSE;
		/* the gate is the verdict's: a secondary row, on its raw p, would
		 * trip it by chance among many guests */
		x->regression = c->opts.fail_set && r->primary && x->verdict == CMP_WORSE &&
				fabs(x->change_pct) > c->opts.fail_pct;
		c->regression |= x->regression;
	}
	free(p);
	free(adj);
}

static void fill_skew(const struct run *r, struct cmp_skew *s)
{
	struct stats_desc d;

	s->steps = r->nsteps;
	s->measured = r->nskew;
	s->unstarted = r->steps_unstarted;
	s->failed_steps = r->failed_steps;
	s->bound_max_ns = r->skew_bound_max_ns;
	s->median_ns = s->max_ns = NAN;
	if (r->nskew && stats_describe(r->skew_ns, r->nskew, &d) == 0) {
		s->median_ns = d.median;
		s->max_ns = d.max;
	}
	s->hosts_measured = r->nhosts_skew;
	s->hosts_median_ns = s->hosts_max_ns = NAN;
	s->hosts_bound_max_ns = r->hosts_skew_bound_max_ns;
	if (r->nhosts_skew && stats_describe(r->hosts_skew_ns, r->nhosts_skew, &d) == 0) {
		s->hosts_median_ns = d.median;
		s->hosts_max_ns = d.max;
	}
}

/* The union of the runs' metrics; -EINVAL when units or directions differ. */
static int metric_union(const struct run *runs, size_t nruns, const struct run_dict *d,
			const struct run_metric ***out, size_t *nout, struct run_err *e)
{
	const struct run_metric **u = NULL;
	size_t n = 0;

	for (size_t i = 0; i < nruns; i++)
		for (size_t k = 0; k < runs[i].nmetrics; k++) {
			const struct run_metric *m = &runs[i].metrics[k], *f = NULL;

			for (size_t j = 0; j < n && !f; j++)
				if (u[j]->bench == m->bench && u[j]->metric == m->metric)
					f = u[j];
			if (f && (f->better != m->better || strcmp(f->unit, m->unit))) {
				run_err_set(e,
					    "%s %s is in \"%s\", better %s, at %s, but in \"%s\", "
					    "better %s, at %s: these runs measured different things",
					    d->names[m->bench], d->names[m->metric], f->unit,
					    f->better > 0 ? "higher" : "lower", f->where, m->unit,
					    m->better > 0 ? "higher" : "lower", m->where);
				free(u);
				return -EINVAL;
			}
			if (f)
				continue;
			u = xrealloc(u, (n + 1) * sizeof(*u));
			u[n++] = m;
		}
	*out = u;
	*nout = n;
	return 0;
}

static char *bench_list(const struct run *r, const struct run_dict *d)
{
	char *s = xstrdup("");

	for (size_t i = 0; i < r->nmetrics; i++) {
		char *t = xasprintf("%s%s%s %s", s, i ? ", " : "", d->names[r->metrics[i].bench],
				    d->names[r->metrics[i].metric]);

		free(s);
		s = t;
	}
	return s;
}

static int check_shared(struct cmp_result *c, const struct run_metric **mets, size_t nm,
			struct run_err *e)
{
	const struct run *base = &c->runs[0];

	for (size_t i = 1; i < c->nruns; i++) {
		size_t shared = 0;

		for (size_t k = 0; k < nm; k++)
			shared += run_metric_find(base, mets[k]->bench, mets[k]->metric) &&
				  run_metric_find(&c->runs[i], mets[k]->bench, mets[k]->metric);
		if (!shared) {
			char *a = bench_list(base, c->dict), *b = bench_list(&c->runs[i], c->dict);

			run_err_set(e,
				    "runs %s and %s share no benchmark metric: %s has [%s], "
				    "%s has [%s]",
				    base->name, c->runs[i].name, base->name, a, c->runs[i].name, b);
			free(a);
			free(b);
			return -EINVAL;
		}
	}
	for (size_t k = 0; k < nm; k++)
		for (size_t i = 0; i < c->nruns; i++)
			if (!run_metric_find(&c->runs[i], mets[k]->bench, mets[k]->metric))
				note(c, "%s %s is not in run %s: its rows there are marked missing",
				     cmp_name(c, mets[k]->bench), cmp_name(c, mets[k]->metric),
				     c->runs[i].name);
	return 0;
}

static bool run_has_node_samples(const struct run *r, uint32_t node)
{
	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].node == node)
			return true;
	return false;
}

bool cmp_monitor_metric(const char *metric)
{
	static const char *const names[] = { "steal_pct", "run_delay", "cpu_pressure",
					     "vcpu_time_pct", "vcpu_delay_pct" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(metric, names[i]))
			return true;
	return false;
}

/* What a row measures besides the benchmark: the agent times every step,
 * and beside a benchmark's own metrics its elapsed is a by-product; the
 * monitors' step summaries (docs/monitors.md) say how the step ran, not
 * what the benchmark measured. */
static bool secondary_metric(const struct run_metric *const *mets, size_t nm,
			     const struct run_metric *m, const struct run_dict *d)
{
	const char *name = d->names[m->metric];

	if (cmp_monitor_metric(name))
		return true;
	if (strcmp(name, "elapsed"))
		return false;
	for (size_t k = 0; k < nm; k++)
		if (mets[k]->bench == m->bench && strcmp(d->names[mets[k]->metric], "elapsed") &&
		    !cmp_monitor_metric(d->names[mets[k]->metric]))
			return true;
	return false;
}

static void add_metric_rows(struct cmp_result *c, const struct run_metric *m, bool *seen,
			    bool secondary_metric)
{
	struct cmp_row *g, *f;
	bool any_g = false, any_f = false;

	memset(seen, 0, c->dict->n * sizeof(*seen));
	for (size_t i = 0; i < c->nruns; i++)
		for (size_t k = 0; k < c->runs[i].nnodes; k++) {
			uint32_t node = c->runs[i].nodes[k];
			size_t first;
			struct cmp_row *r;

			if (seen[node] ||
			    !run_samples_of(&c->runs[i], m->bench, m->metric, node, &first))
				continue;
			seen[node] = true;
			r = add_row(c, CMP_ROW_NODE, m, node);
			r->primary = c->opts.family_all ||
				     (!secondary_metric && run_is_host(&c->runs[i], node));
			for (size_t j = 0; j < c->nruns; j++) {
				fill_node(c, j, m, node, &r->cells[j]);
				if (r->cells[j].present ||
				    !run_metric_find(&c->runs[j], m->bench, m->metric))
					continue;
				if (!run_has_node_samples(&c->runs[j], node))
					note(c, "node %s has no samples at all in run %s",
					     cmp_name(c, node), c->runs[j].name);
				else
					note(c, "node %s has no %s %s samples in run %s",
					     cmp_name(c, node), cmp_name(c, m->bench),
					     cmp_name(c, m->metric), c->runs[j].name);
			}
		}
	add_row(c, CMP_ROW_GUESTS, m, 0);
	add_row(c, CMP_ROW_FAIRNESS, m, 0); /* may move the rows: index them after */
	g = &c->rows[c->nrows - 2];
	f = &c->rows[c->nrows - 1];
	g->primary = f->primary = c->opts.family_all || !secondary_metric;
	for (size_t j = 0; j < c->nruns; j++) {
		size_t out = fill_aggregates(&c->runs[j], m, &g->cells[j], &f->cells[j]);

		g->cells[j].noisy = f->cells[j].noisy = noisy_iterations(c, j, m);

		if (out) {
			c->left_out[j] += out;
			note(c,
			     "%s %s in run %s: %zu iteration%s where a guest's step failed %s left "
			     "out of guests (mean) and fairness; the nodes that ran keep their own rows",
			     cmp_name(c, m->bench), cmp_name(c, m->metric), c->runs[j].name, out,
			     out == 1 ? "" : "s", out == 1 ? "is" : "are");
		}
		any_g |= g->cells[j].present;
		any_f |= f->cells[j].present;
	}
	/* drop what no run has: host-only runs, a single guest */
	for (int k = 0; k < 2; k++) {
		struct cmp_row *r = &c->rows[c->nrows - 1];

		if (r->kind == CMP_ROW_FAIRNESS ? any_f : any_g)
			break;
		for (size_t j = 0; j < c->nruns; j++)
			free(r->cells[j].values);
		free(r->cells);
		c->nrows--;
		if (r->kind == CMP_ROW_GUESTS)
			break;
	}
}

int cmp_build(struct cmp_result *c, const struct run *runs, size_t nruns, const struct run_dict *d,
	      const struct cmp_opts *o, struct run_err *e)
{
	const struct run_metric **mets;
	size_t nm;
	bool *seen;
	int ret;

	memset(c, 0, sizeof(*c));
	c->dict = d;
	c->runs = runs;
	c->nruns = nruns;
	c->opts = *o;
	c->left_out = xcalloc(nruns, sizeof(*c->left_out));
	if ((ret = metric_union(runs, nruns, d, &mets, &nm, e)) < 0) {
		cmp_free(c);
		return ret;
	}
	ret = cmp_fit(c, e);
	if (ret == 0)
		ret = check_shared(c, mets, nm, e);
	if (ret < 0) {
		free(mets);
		cmp_free(c);
		return ret;
	}
	c->noisy = xcalloc(nruns, sizeof(*c->noisy));
	c->nnoisy = xcalloc(nruns, sizeof(*c->nnoisy));
	c->noisy_steps = xcalloc(nruns, sizeof(*c->noisy_steps));
	for (size_t j = 0; j < nruns; j++)
		c->noisy[j] =
			noisy_steps(&runs[j], d, o->noise_pct, &c->nnoisy[j], &c->noisy_steps[j]);
	seen = xcalloc(d->n ? d->n : 1, sizeof(*seen));
	for (size_t k = 0; k < nm; k++)
		add_metric_rows(c, mets[k], seen,
				!o->family_all && secondary_metric(mets, nm, mets[k], d));
	free(seen);
	free(mets);
	c->skew = xcalloc(nruns, sizeof(*c->skew));
	c->family = xcalloc(nruns, sizeof(*c->family));
	for (size_t i = 0; i < nruns; i++)
		fill_skew(&runs[i], &c->skew[i]);
	for (size_t i = 0; i < c->nrows; i++) {
		c->rows[i].cells[0].verdict = CMP_BASE;
		for (size_t j = 1; j < nruns; j++)
			test_cell(o, &c->rows[i].cells[0], &c->rows[i].cells[j], runs[0].name,
				  runs[j].name);
	}
	for (size_t j = 1; j < nruns; j++)
		decide(c, j);
	return 0;
}

void cmp_free(struct cmp_result *c)
{
	for (size_t i = 0; i < c->nrows; i++) {
		for (size_t j = 0; j < c->nruns; j++)
			free(c->rows[i].cells[j].values);
		free(c->rows[i].cells);
	}
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->rows);
	free(c->skew);
	free(c->family);
	free(c->left_out);
	for (size_t j = 0; c->noisy && j < c->nruns; j++)
		free(c->noisy[j]);
	free(c->noisy);
	free(c->nnoisy);
	free(c->noisy_steps);
	for (size_t i = 0; i < c->ndiffs; i++)
		free(c->diffs[i].what);
	free(c->diffs);
	memset(c, 0, sizeof(*c));
}
