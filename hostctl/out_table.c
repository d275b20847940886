// SPDX-License-Identifier: GPL-2.0-or-later
/* The aligned text table and markdown: one table per (benchmark, metric). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "xalloc.h"

const char *const out_headers[OUT_COLS] = {
	"node", "run", "n", "median", "95% CI of median", "mean", "sd", "CV", "change", "p",
};

void out_num(char *buf, size_t len, double v)
{
	static const struct {
		double f;
		const char *p;
	} si[] = { { 1e12, "T" }, { 1e9, "G" },	 { 1e6, "M" },	{ 1e3, "k" },
		   { 1, "" },	  { 1e-3, "m" }, { 1e-6, "u" }, { 1e-9, "n" } };
	double a = fabs(v);

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (a == 0 || (a >= 1 && a < 1e4)) {
		snprintf(buf, len, "%.4g", v);
		return;
	}
	for (size_t i = 0; i < sizeof(si) / sizeof(si[0]); i++)
		if (a >= si[i].f || i + 1 == sizeof(si) / sizeof(si[0])) {
			snprintf(buf, len, "%.4g%s", v / si[i].f, si[i].p);
			return;
		}
}

void out_ns(char *buf, size_t len, double ns)
{
	if (!isfinite(ns))
		snprintf(buf, len, "-");
	else if (ns >= 1e9)
		snprintf(buf, len, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3g ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.3g us", ns / 1e3);
	else
		snprintf(buf, len, "%.0f ns", ns);
}

char *out_group_title(const struct cmp_result *c, const struct cmp_row *r)
{
	return xasprintf("%s %s [%s%s%s is better]", cmp_name(c, r->bench), cmp_name(c, r->metric),
			 r->unit, r->unit[0] ? ", " : "", r->better > 0 ? "higher" : "lower");
}

char *out_test_words(const struct cmp_result *c)
{
	const char *holm =
		c->opts.family_all
			? "Holm-Bonferroni correction over every tested row of each pair "
			  "(--family all)"
			: "Holm-Bonferroni correction over the primary rows of each pair (each "
			  "benchmark's own metrics for the guests together, fairness, the host); "
			  "secondary rows (each guest's own, the agent's elapsed) decided on their "
			  "raw p, marked \"raw\"";
	char *s = xasprintf("%s, two-sided, alpha %g, %s",
			    c->opts.test == CMP_TEST_WELCH
				    ? "Welch's t test"
				    : "Mann-Whitney U test (exact below 50 per side without ties)",
			    c->opts.alpha, c->opts.holm ? holm : "no correction for multiple rows");

	return s;
}

/* Jain's index lives in (0, 1]: prefixes would only hide it */
static void plain_num(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%.4g", v);
	else
		snprintf(buf, len, "-");
}

static char *cell_change(const struct cmp_cell *x)
{
	switch (x->verdict) {
	case CMP_BASE: return xstrdup("(base)");
	case CMP_NO_CHANGE:
		/* the size of a change is never hidden: ~ only says it is not significant */
		if (!isfinite(x->change_pct))
			return xstrdup("~");
		return xasprintf(fabs(x->change_pct) >= 0.01 || x->change_pct == 0 ? "%+.2f%% ~"
										   : "%+.2g%% ~",
				 x->change_pct);
	case CMP_BETTER:
	case CMP_WORSE:
		/* a tiny significant change keeps its digits: "+0.00%" would read as none */
		return xasprintf(fabs(x->change_pct) >= 0.01 ? "%+.2f%% %s%s" : "%+.2g%% %s%s",
				 x->change_pct, x->verdict == CMP_BETTER ? "better" : "worse",
				 x->regression ? " REGRESSION" : "");
	case CMP_DIFFERENT: return xstrdup("different, centre unchanged");
	case CMP_TOO_FEW:
	case CMP_MISSING:
	case CMP_UNTESTABLE: return xstrdup(x->why);
	}
	return xstrdup("?");
}

static char *cell_p(const struct cmp_row *r, const struct cmp_cell *x)
{
	if (!x->tested)
		return NULL;
	return xasprintf(r->primary ? "%.2g" : "%.2g raw", x->p_adj);
}

static void fill_row(const struct cmp_result *c, const struct cmp_row *r, size_t run, char **cell)
{
	const struct cmp_cell *x = &r->cells[run];
	void (*num)(char *, size_t, double);
	char a[32], b[32];

	cell[0] = run != 0			? NULL
		  : r->kind == CMP_ROW_GUESTS	? xstrdup("guests (mean)")
		  : r->kind == CMP_ROW_FAIRNESS ? xstrdup("fairness (Jain)")
		  : r->primary			? xstrdup(cmp_name(c, r->node))
						: xasprintf("%s (secondary)", cmp_name(c, r->node));
	if (run == 0 && !r->primary && r->kind != CMP_ROW_NODE) {
		free(cell[0]);
		cell[0] = xasprintf("%s (secondary)",
				    r->kind == CMP_ROW_GUESTS ? "guests (mean)" : "fairness (Jain)");
	}
	cell[1] = xstrdup(c->runs[run].name);
	if (!x->present) {
		cell[2] = xstrdup("0");
		cell[8] = run ? cell_change(x) : xstrdup("no samples");
		return;
	}
	cell[2] = x->noisy ? xasprintf("%zu, %zu noisy", x->n, x->noisy) : xasprintf("%zu", x->n);
	num = r->kind == CMP_ROW_FAIRNESS ? plain_num : out_num;
	num(a, sizeof(a), x->d.median);
	cell[3] = xstrdup(a);
	if (x->d.has_ci) {
		num(a, sizeof(a), x->d.ci_lo);
		num(b, sizeof(b), x->d.ci_hi);
		cell[4] = xasprintf("[%s, %s]", a, b);
	} else {
		cell[4] = xasprintf("n<%d: no CI", STATS_CI_MIN_N);
	}
	num(a, sizeof(a), x->d.mean);
	cell[5] = xstrdup(a);
	num(a, sizeof(a), x->d.sd);
	cell[6] = xstrdup(a);
	cell[7] = isfinite(x->d.cv) ? xasprintf("%.1f%%", 100 * x->d.cv) : xstrdup("-");
	cell[8] = cell_change(x);
	cell[9] = cell_p(r, x);
}

void out_group_table(const struct cmp_result *c, size_t first, size_t *count, struct out_table *t)
{
	size_t n = 0, k = 0;

	while (first + n < c->nrows && c->rows[first + n].bench == c->rows[first].bench &&
	       c->rows[first + n].metric == c->rows[first].metric)
		n++;
	*count = n;
	t->ncols = OUT_COLS;
	t->nrows = n * c->nruns;
	t->cell = xcalloc(t->nrows * t->ncols, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < c->nruns; j++, k++)
			fill_row(c, &c->rows[first + i], j, &t->cell[k * OUT_COLS]);
}

void out_table_free(struct out_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
}

char *out_fairness_words(const struct cmp_result *c, size_t first, size_t count)
{
	const struct cmp_row *r = NULL;
	char *s;

	for (size_t i = first; i < first + count; i++)
		if (c->rows[i].kind == CMP_ROW_FAIRNESS)
			r = &c->rows[i];
	if (!r)
		return NULL;
	s = xstrdup("fairness across guests, per iteration, median over iterations:");
	for (size_t j = 0; j < c->nruns; j++) {
		const struct cmp_cell *x = &r->cells[j];
		char *t = x->present ? xasprintf("%s %s: Jain %.4f, CV %.2f%%, max/min %.4g", s,
						 c->runs[j].name, x->d.median, 100 * x->fair_cv,
						 x->fair_maxmin)
				     : xasprintf("%s %s: fewer than 2 guests", s, c->runs[j].name);

		free(s);
		s = xasprintf("%s%s", t, j + 1 < c->nruns ? ";" : "");
		free(t);
	}
	return s;
}

/* ---- text ---- */

static void print_aligned(FILE *f, const struct out_table *t)
{
	size_t w[OUT_COLS] = { 0 };

	for (size_t k = 0; k < OUT_COLS; k++)
		w[k] = strlen(out_headers[k]);
	for (size_t i = 0; i < t->nrows; i++)
		for (size_t k = 0; k < OUT_COLS - 2; k++) /* the last two run ragged */
			if (t->cell[i * OUT_COLS + k] && strlen(t->cell[i * OUT_COLS + k]) > w[k])
				w[k] = strlen(t->cell[i * OUT_COLS + k]);
	for (int h = -1; h < (int)t->nrows; h++) {
		char *const *row = h < 0 ? (char *const *)out_headers : &t->cell[h * OUT_COLS];
		/* p before change: the change column may be a sentence */
		static const int order[OUT_COLS] = { 0, 1, 2, 3, 4, 5, 6, 7, 9, 8 };
		char line[2048];
		size_t pos = 0;

		for (size_t k = 0; k < OUT_COLS; k++) {
			int col = order[k];
			const char *s = row[col] ? row[col] : "";
			int width = col == 9 ? 11 : (int)w[col];
			bool right = col == 2 || col == 3 || col == 5 || col == 6 || col == 7;

			if (col == 8)
				width = 0;
			pos += (size_t)snprintf(line + pos, sizeof(line) - pos,
						right ? "%*s  " : "%-*s  ", width, s);
			if (pos >= sizeof(line))
				pos = sizeof(line) - 1;
		}
		while (pos && line[pos - 1] == ' ')
			line[--pos] = '\0';
		fprintf(f, "  %s\n", line);
	}
}

/* A cluster leader's run: the skew across every host's nodes. */
static void print_hosts_skew(FILE *f, const char *run, const struct cmp_skew *s)
{
	char text[3][32];
	double v[3] = { s->hosts_median_ns, s->hosts_max_ns, s->hosts_bound_max_ns };

	for (int i = 0; i < 3; i++)
		out_ns(text[i], sizeof(text[i]), v[i]);
	fprintf(f,
		"  %s across hosts: median %s, max %s over %zu steps, clock bound up to %s (the "
		"hosts' clock errors added)\n",
		run, text[0], text[1], s->hosts_measured, text[2]);
}

static void print_skew_text(FILE *f, const struct cmp_result *c)
{
	fprintf(f, "barrier skew (last start minus first start, per released step):\n");
	for (size_t j = 0; j < c->nruns; j++) {
		const struct cmp_skew *s = &c->skew[j];
		char med[32], max[32], bound[32];

		out_ns(med, sizeof(med), s->median_ns);
		out_ns(max, sizeof(max), s->max_ns);
		out_ns(bound, sizeof(bound), s->bound_max_ns);
		fprintf(f,
			"  %s: median %s, max %s over %zu steps (%zu with nobody started), "
			"clock bound up to %s\n",
			c->runs[j].name, med, max, s->steps, s->unstarted, bound);
		if (s->hosts_measured)
			print_hosts_skew(f, c->runs[j].name, s);
		if (s->failed_steps)
			fprintf(f, "  %s: %zu failed benchmark runs (failure records in samples.ndjson)\n",
				c->runs[j].name, s->failed_steps);
	}
}

static void text_lines(FILE *f, const char *title, struct out_lines *l, const char *indent)
{
	if (!l->n)
		return;
	if (title)
		fprintf(f, "%s\n", title);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s%s\n", i || title ? indent : "", l->line[i]);
	out_lines_free(l);
}

void out_text(FILE *f, const struct cmp_result *c)
{
	char *w = out_test_words(c);
	struct out_lines l = { 0 };

	if (out_forced_warning(c))
		fprintf(f, "%s\n\n", out_forced_warning(c));
	for (size_t j = 1; j < c->nruns; j++) {
		out_verdict(c, j, &l);
		fprintf(f, "verdict, ");
		text_lines(f, NULL, &l, "  ");
	}
	if (c->nruns < 2)
		fprintf(f, "one run: its figures, no tests\n");
	for (size_t j = 0; j < c->nruns; j++)
		out_failures(c, j, &l);
	fprintf(f, "\n");
	if (l.n) {
		text_lines(f, "failures (a failed step gives no number from its node):", &l, "  ");
		fprintf(f, "\n");
	}
	for (size_t j = 0; j < c->nruns; j++) {
		out_header(c, j, &l);
		text_lines(f, NULL, &l, "  ");
	}
	for (size_t j = 1; j < c->nruns; j++)
		fprintf(f, "%s: %zu tests in its Holm family\n", c->runs[j].name, c->family[j]);
	out_diffs(c, &l);
	if (l.n) {
		fprintf(f, "\n");
		text_lines(f, "settings that differ from the base (config diff):", &l, "  ");
	}
	fprintf(f, "\ntest: %s; p shown is the one decided on\n", w);
	fprintf(f, "change: of the %s against the base; \"~\" beside it = not significant\n\n",
		c->opts.test == CMP_TEST_WELCH ? "mean" : "median");
	free(w);
	for (size_t i = 0, n; i < c->nrows; i += n) {
		struct out_table t;
		char *title = out_group_title(c, &c->rows[i]), *fw;

		out_group_table(c, i, &n, &t);
		fprintf(f, "%s\n", title);
		print_aligned(f, &t);
		fw = out_fairness_words(c, i, n);
		if (fw)
			fprintf(f, "  %s\n", fw);
		fprintf(f, "\n");
		free(fw);
		free(title);
		out_table_free(&t);
	}
	print_skew_text(f, c);
	for (size_t i = 0; i < c->nnotes; i++)
		fprintf(f, "note: %s\n", c->notes[i]);
}

/* ---- markdown ---- */

static void md_cell(FILE *f, const char *s)
{
	fputs(" ", f);
	for (; s && *s; s++) {
		if (*s == '|' || *s == '~' || *s == '*' || *s == '_' || *s == '[' || *s == ']')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputs(" |", f);
}

static void md_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|' || *s == '~' || *s == '*' || *s == '_' || *s == '[' || *s == ']' ||
		    *s == '<' || *s == '`')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void md_list(FILE *f, const char *title, struct out_lines *l)
{
	if (!l->n)
		return;
	fprintf(f, "%s\n\n", title);
	for (size_t i = 0; i < l->n; i++) {
		fputs("- ", f);
		md_text(f, l->line[i]);
		fputc('\n', f);
	}
	fputc('\n', f);
	out_lines_free(l);
}

void out_markdown(FILE *f, const struct cmp_result *c)
{
	char *w = out_test_words(c);
	struct out_lines l = { 0 };

	if (out_forced_warning(c)) {
		fputs("**", f);
		md_text(f, out_forced_warning(c));
		fputs("**\n\n", f);
	}
	for (size_t j = 1; j < c->nruns; j++) {
		char *t = xasprintf("### Verdict: %s against %s", c->runs[j].name, c->runs[0].name);

		out_verdict(c, j, &l);
		free(l.line[0]); /* the title says it */
		memmove(l.line, l.line + 1, --l.n * sizeof(*l.line));
		md_list(f, t, &l);
		free(t);
	}
	for (size_t j = 0; j < c->nruns; j++)
		out_failures(c, j, &l);
	md_list(f, "### Failures (a failed step gives no number from its node)", &l);
	for (size_t j = 0; j < c->nruns; j++) {
		char *t = xasprintf("### Run %s (%s)", c->runs[j].name, j ? "new" : "base");

		out_header(c, j, &l);
		md_list(f, t, &l);
		free(t);
	}
	out_diffs(c, &l);
	md_list(f, "### Settings that differ from the base", &l);
	fputs("Test: ", f);
	md_text(f, w);
	fprintf(f, ". Change: of the %s; `~` beside it = not significant.\n\n",
		c->opts.test == CMP_TEST_WELCH ? "mean" : "median");
	free(w);
	for (size_t i = 0, n; i < c->nrows; i += n) {
		struct out_table t;
		char *title = out_group_title(c, &c->rows[i]), *fw;

		out_group_table(c, i, &n, &t);
		fprintf(f, "### %s\n\n|", title);
		for (size_t k = 0; k < OUT_COLS; k++)
			md_cell(f, out_headers[k]);
		fprintf(f, "\n|---|---|--:|--:|---|--:|--:|--:|---|--:|\n");
		for (size_t r = 0; r < t.nrows; r++) {
			fputc('|', f);
			for (size_t k = 0; k < OUT_COLS; k++)
				md_cell(f, t.cell[r * OUT_COLS + k]);
			fputc('\n', f);
		}
		fw = out_fairness_words(c, i, n);
		if (fw)
			fprintf(f, "\n%s\n", fw);
		fprintf(f, "\n");
		free(fw);
		free(title);
		out_table_free(&t);
	}
	fprintf(f, "### barrier skew\n\n| run | steps | nobody started | median | max |\n|---|--:|--:|--:|--:|\n");
	for (size_t j = 0; j < c->nruns; j++) {
		char med[32], max[32];

		out_ns(med, sizeof(med), c->skew[j].median_ns);
		out_ns(max, sizeof(max), c->skew[j].max_ns);
		fprintf(f, "| %s | %zu | %zu | %s | %s |\n", c->runs[j].name, c->skew[j].steps,
			c->skew[j].unstarted, med, max);
		if (c->skew[j].hosts_measured) {
			out_ns(med, sizeof(med), c->skew[j].hosts_median_ns);
			out_ns(max, sizeof(max), c->skew[j].hosts_max_ns);
			fprintf(f, "| %s, across hosts | %zu | | %s | %s |\n", c->runs[j].name,
				c->skew[j].hosts_measured, med, max);
		}
	}
	for (size_t i = 0; i < c->nnotes; i++)
		fprintf(f, "%s- %s\n", i ? "" : "\nNotes:\n\n", c->notes[i]);
}
