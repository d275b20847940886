// SPDX-License-Identifier: GPL-2.0-or-later
/* The machine formats: JSON (versioned, docs/hostctl.md) and CSV. */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

int out_parse_format(const char *s, enum out_format *f)
{
	static const char *const names[] = { "text", "json", "csv", "markdown" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*f = (enum out_format)i;
			return 0;
		}
	return -1;
}

/* The shortest of %.15g and %.17g that reads back as v: 0.05, not
 * 0.050000000000000003. */
static struct json_object *num(double v)
{
	char buf[40];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	return json_object_new_double_s(v, buf);
}

static const char *kind_name(enum cmp_kind k)
{
	return k == CMP_ROW_NODE ? "node" : k == CMP_ROW_GUESTS ? "guests" : "fairness";
}

static struct json_object *json_cell(const struct cmp_result *c, const struct cmp_row *r, size_t j)
{
	const struct cmp_cell *x = &r->cells[j];
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "run", json_object_new_string(c->runs[j].name));
	json_object_object_add(o, "n", json_object_new_int64((int64_t)x->n));
	json_object_object_add(o, "noisy", json_object_new_int64((int64_t)x->noisy));
	if (x->present) {
		json_object_object_add(o, "median", num(x->d.median));
		json_object_object_add(o, "ci_low", x->d.has_ci ? num(x->d.ci_lo) : NULL);
		json_object_object_add(o, "ci_high", x->d.has_ci ? num(x->d.ci_hi) : NULL);
		json_object_object_add(o, "ci_level", x->d.has_ci ? num(x->d.ci_level) : NULL);
		json_object_object_add(o, "mean", num(x->d.mean));
		json_object_object_add(o, "sd", num(x->d.sd));
		json_object_object_add(o, "cv", num(x->d.cv));
		json_object_object_add(o, "min", num(x->d.min));
		json_object_object_add(o, "max", num(x->d.max));
		if (r->kind == CMP_ROW_FAIRNESS) {
			json_object_object_add(o, "cv_median", num(x->fair_cv));
			json_object_object_add(o, "max_min_median", num(x->fair_maxmin));
		}
	}
	if (j == 0)
		return o;
	json_object_object_add(o, "verdict", json_object_new_string(cmp_verdict_name(x->verdict)));
	json_object_object_add(o, "change_pct", num(x->change_pct));
	json_object_object_add(o, "significant", json_object_new_boolean(x->significant));
	json_object_object_add(o, "test",
			       x->tested ? json_object_new_string(stats_method_name(x->t.method))
					 : NULL);
	json_object_object_add(o, "statistic", x->tested ? num(x->t.stat) : NULL);
	json_object_object_add(o, "df", x->tested ? num(x->t.df) : NULL);
	json_object_object_add(o, "p", x->tested ? num(x->t.p) : NULL);
	json_object_object_add(o, "p_adjusted", x->tested ? num(x->p_adj) : NULL);
	json_object_object_add(o, "regression", json_object_new_boolean(x->regression));
	json_object_object_add(o, "why", x->why[0] ? json_object_new_string(x->why) : NULL);
	return o;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *int_or_null(int64_t v)
{
	return v >= 0 ? json_object_new_int64(v) : NULL;
}

static struct json_object *json_header(const struct cmp_result *c, size_t j)
{
	const struct run_meta *m = &c->runs[j].meta;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "host_kernel", str_or_null(m->kernel));
	json_object_object_add(o, "guest_kernel", str_or_null(m->guest_kernel));
	json_object_object_add(o, "guest_kernels", str_or_null(m->guest_kernels));
	json_object_object_add(o, "hostname", str_or_null(m->hostname));
	json_object_object_add(o, "cpu_model", str_or_null(m->cpu_model));
	json_object_object_add(o, "started", str_or_null(m->started));
	json_object_object_add(o, "ended", str_or_null(m->ended));
	json_object_object_add(o, "hostd_version", str_or_null(m->hostd_version));
	json_object_object_add(o, "release", str_or_null(m->release));
	if (m->cluster_hosts)
		json_object_object_add(o, "cluster_hosts", json_object_new_string(m->cluster_hosts));
	json_object_object_add(o, "reason", str_or_null(m->reason));
	json_object_object_add(o, "guest_kind", str_or_null(m->guest_kind));
	json_object_object_add(o, "guest_count", int_or_null(m->guest_count));
	json_object_object_add(o, "guest_vcpus", int_or_null(m->guest_vcpus));
	json_object_object_add(o, "guest_memory_mib", int_or_null(m->guest_memory_mib));
	return o;
}

static struct json_object *json_failures(const struct cmp_result *c, size_t j)
{
	const struct run *r = &c->runs[j];
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < r->failed_steps; i++) {
		const struct run_failure *f = &r->failures[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "node", json_object_new_string(cmp_name(c, f->node)));
		json_object_object_add(o, "benchmark", json_object_new_string(cmp_name(c, f->bench)));
		json_object_object_add(o, "iteration", json_object_new_int64(f->iteration));
		json_object_object_add(o, "step", int_or_null(f->step));
		json_object_object_add(o, "warmup", json_object_new_boolean(f->warmup));
		json_object_object_add(o, "reason", json_object_new_string(f->reason));
		json_object_array_add(a, o);
	}
	for (size_t i = 0; i < r->meta.nmanifest_failures; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "participant",
				       json_object_new_string(r->meta.manifest_failures[i]));
		json_object_array_add(a, o);
	}
	return a;
}

static void out_json(FILE *f, const struct cmp_result *c)
{
	struct json_object *root = json_object_new_object(), *a, *o;

	json_object_object_add(root, "schema", json_object_new_string("lockstep-hostctl-compare"));
	json_object_object_add(root, "schema_version", json_object_new_int(OUT_JSON_SCHEMA_VERSION));
	json_object_object_add(root, "hostctl_version", json_object_new_string(LOCKSTEP_VERSION));
	o = json_object_new_object();
	json_object_object_add(o, "test",
			       json_object_new_string(
				       c->opts.test == CMP_TEST_WELCH ? "welch" : "mann-whitney"));
	json_object_object_add(o, "alpha", num(c->opts.alpha));
	json_object_object_add(o, "correction", json_object_new_string(c->opts.holm ? "holm" : "none"));
	json_object_object_add(o, "change_of",
			       json_object_new_string(c->opts.test == CMP_TEST_WELCH ? "mean"
										     : "median"));
	json_object_object_add(o, "fail_on_regression_pct",
			       c->opts.fail_set ? num(c->opts.fail_pct) : NULL);
	json_object_object_add(o, "family",
			       json_object_new_string(c->opts.family_all ? "all" : "primary"));
	json_object_object_add(o, "noise_pct", num(c->opts.noise_pct));
	json_object_object_add(o, "force", json_object_new_boolean(c->opts.force));
	a = json_object_new_array();
	for (size_t i = 0; i < c->opts.nvary; i++)
		json_object_array_add(a, json_object_new_string(c->opts.vary[i]));
	json_object_object_add(o, "vary", a);
	json_object_object_add(root, "settings", o);
	json_object_object_add(root, "comparable", json_object_new_boolean(!c->forced));
	json_object_object_add(root, "warning",
			       out_forced_warning(c) ? json_object_new_string(out_forced_warning(c))
						     : NULL);
	a = json_object_new_array();
	for (size_t i = 0; i < c->ndiffs; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "run", json_object_new_string(c->runs[c->diffs[i].run].name));
		json_object_object_add(o, "kind",
				       json_object_new_string(
					       c->diffs[i].kind == CMP_DIFF_EXPECTED  ? "expected"
					       : c->diffs[i].kind == CMP_DIFF_REFUSED ? "refused"
										      : "shown"));
		json_object_object_add(o, "what", json_object_new_string(c->diffs[i].what));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "differences", a);
	a = json_object_new_array();
	for (size_t j = 0; j < c->nruns; j++) {
		const struct cmp_skew *s = &c->skew[j];
		struct json_object *sk = json_object_new_object();

		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(c->runs[j].name));
		json_object_object_add(o, "path", json_object_new_string(c->runs[j].path));
		json_object_object_add(o, "status", json_object_new_string(c->runs[j].status));
		json_object_object_add(o, "role", json_object_new_string(j ? "new" : "base"));
		json_object_object_add(o, "iterations", json_object_new_int64(c->runs[j].iterations));
		json_object_object_add(o, "tests",
				       j ? json_object_new_int64((int64_t)c->family[j]) : NULL);
		json_object_object_add(sk, "steps", json_object_new_int64((int64_t)s->steps));
		json_object_object_add(sk, "measured", json_object_new_int64((int64_t)s->measured));
		json_object_object_add(sk, "nobody_started",
				       json_object_new_int64((int64_t)s->unstarted));
		json_object_object_add(o, "failed_steps",
				       json_object_new_int64((int64_t)s->failed_steps));
		json_object_object_add(sk, "median_ns", num(s->median_ns));
		json_object_object_add(sk, "max_ns", num(s->max_ns));
		json_object_object_add(sk, "bound_max_ns", num(s->bound_max_ns));
		if (s->hosts_measured) {
			struct json_object *x = json_object_new_object();

			json_object_object_add(x, "measured",
					       json_object_new_int64((int64_t)s->hosts_measured));
			json_object_object_add(x, "median_ns", num(s->hosts_median_ns));
			json_object_object_add(x, "max_ns", num(s->hosts_max_ns));
			json_object_object_add(x, "bound_max_ns", num(s->hosts_bound_max_ns));
			json_object_object_add(sk, "across_hosts", x);
		}
		json_object_object_add(o, "barrier_skew", sk);
		json_object_object_add(o, "header", json_header(c, j));
		json_object_object_add(o, "failures", json_failures(c, j));
		json_object_object_add(o, "left_out_iterations",
				       json_object_new_int64((int64_t)c->left_out[j]));
		json_object_object_add(o, "noisy_steps",
				       json_object_new_int64((int64_t)c->noisy_steps[j]));
		if (j) {
			struct out_lines l = { 0 };
			struct json_object *v = json_object_new_array();

			out_verdict(c, j, &l);
			for (size_t i = 1; i < l.n; i++) /* line 0 names the pair */
				json_object_array_add(v, json_object_new_string(l.line[i]));
			out_lines_free(&l);
			json_object_object_add(o, "verdict", v);
		}
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "runs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];
		struct json_object *cells = json_object_new_array();

		o = json_object_new_object();
		json_object_object_add(o, "benchmark", json_object_new_string(cmp_name(c, r->bench)));
		json_object_object_add(o, "metric", json_object_new_string(cmp_name(c, r->metric)));
		json_object_object_add(o, "kind", json_object_new_string(kind_name(r->kind)));
		json_object_object_add(o, "node",
				       r->kind == CMP_ROW_NODE
					       ? json_object_new_string(cmp_name(c, r->node))
					       : NULL);
		json_object_object_add(o, "unit", json_object_new_string(r->unit));
		json_object_object_add(o, "better",
				       json_object_new_string(r->better > 0 ? "higher" : "lower"));
		json_object_object_add(o, "primary", json_object_new_boolean(r->primary));
		for (size_t j = 0; j < c->nruns; j++)
			json_object_array_add(cells, json_cell(c, r, j));
		json_object_object_add(o, "runs", cells);
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "rows", a);
	a = json_object_new_array();
	for (size_t i = 0; i < c->nnotes; i++)
		json_object_array_add(a, json_object_new_string(c->notes[i]));
	json_object_object_add(root, "notes", a);
	json_object_object_add(root, "regression", json_object_new_boolean(c->regression));
	fprintf(f, "%s\n",
		json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* RFC 4180: quote when needed, double the quotes. */
static void csv_str(FILE *f, const char *s, bool last)
{
	if (s && strpbrk(s, ",\"\n\r")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else if (s) {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	fputc(',', f);
}

static void out_csv(FILE *f, const struct cmp_result *c)
{
	fprintf(f, "benchmark,metric,unit,better,kind,node,run,role,n,median,ci_low,ci_high,mean,sd,cv,"
		   "change_pct,test,p,p_adjusted,verdict,regression,why,primary,noisy\n");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		for (size_t j = 0; j < c->nruns; j++) {
			const struct cmp_cell *x = &r->cells[j];
			bool t = j && x->tested;

			csv_str(f, cmp_name(c, r->bench), false);
			csv_str(f, cmp_name(c, r->metric), false);
			csv_str(f, r->unit, false);
			csv_str(f, r->better > 0 ? "higher" : "lower", false);
			csv_str(f, kind_name(r->kind), false);
			csv_str(f, r->kind == CMP_ROW_NODE ? cmp_name(c, r->node) : "", false);
			csv_str(f, c->runs[j].name, false);
			csv_str(f, j ? "new" : "base", false);
			fprintf(f, "%zu,", x->n);
			csv_num(f, x->present ? x->d.median : NAN);
			csv_num(f, x->present && x->d.has_ci ? x->d.ci_lo : NAN);
			csv_num(f, x->present && x->d.has_ci ? x->d.ci_hi : NAN);
			csv_num(f, x->present ? x->d.mean : NAN);
			csv_num(f, x->present ? x->d.sd : NAN);
			csv_num(f, x->present ? x->d.cv : NAN);
			csv_num(f, j ? x->change_pct : NAN);
			csv_str(f, t ? stats_method_name(x->t.method) : "", false);
			csv_num(f, t ? x->t.p : NAN);
			csv_num(f, t ? x->p_adj : NAN);
			csv_str(f, cmp_verdict_name(x->verdict), false);
			csv_str(f, x->regression ? "1" : "0", false);
			csv_str(f, x->why, false);
			csv_str(f, r->primary ? "1" : "0", false);
			fprintf(f, "%zu\n", x->noisy);
		}
	}
}

void out_print(FILE *f, enum out_format fmt, const struct cmp_result *c)
{
	switch (fmt) {
	case OUT_TEXT: out_text(f, c); break;
	case OUT_JSON: out_json(f, c); break;
	case OUT_CSV: out_csv(f, c); break;
	case OUT_MARKDOWN: out_markdown(f, c); break;
	}
}
