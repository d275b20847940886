// SPDX-License-Identifier: GPL-2.0-or-later
/* The plots of a report: data files and one gnuplot script, one gnuplot run. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "out.h"
#include "report.h"
#include "xalloc.h"

extern char **environ;

/* One colour per run, readable on white and for the common colour blindnesses
 * (Okabe & Ito). */
static const char *const colours[] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7",
				       "#56B4E9", "#D55E00", "#F0E442", "#000000" };
#define COLOUR(j) colours[(j) % (sizeof(colours) / sizeof(colours[0]))]
/* filled circle, square, triangle, diamond, pentagon */
static const int point_types[5] = { 7, 5, 9, 13, 15 };

/* gnuplot's single-quoted strings end at a quote; names are checked by
 * hostd, but a report may read anything, so quotes are dropped. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s != '\'' && *s != '\n')
			fputc(*s, f);
	fputc('\'', f);
}

/* A report folder with a quote in its name cannot be said to gnuplot:
 * cmd_report refuses it. */
static void gp_output(FILE *f, const char *dir, const char *name)
{
	fprintf(f, "set output '%s/%s'\n", dir, name);
}

/* Title and axis labels, then the start of the plot command. */
static void gp_plot_head(FILE *gp, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(gp, "set title ");
	gp_str(gp, title);
	fprintf(gp, " noenhanced\nset xlabel ");
	gp_str(gp, xlabel);
	fprintf(gp, "\nset ylabel ");
	gp_str(gp, ylabel);
	fprintf(gp, "\nplot ");
}

static FILE *open_data(const char *tmp, const char *name, struct run_err *e)
{
	char *p = xasprintf("%s/%s", tmp, name);
	FILE *f = fopen(p, "w");

	if (!f)
		run_err_set(e, "%s: cannot write: %s", p, strerror(errno));
	free(p);
	return f;
}

static int close_data(FILE *f, const char *name, struct run_err *e)
{
	if (fclose(f) != 0) {
		run_err_set(e, "%s: write failed: %s", name, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Node rows of the group, in order: box positions 1..n. */
static size_t group_nodes(const struct cmp_result *c, const struct report_group *g,
			  const struct cmp_row **nodes)
{
	size_t n = 0;

	for (size_t i = g->first; i < g->first + g->count; i++)
		if (c->rows[i].kind == CMP_ROW_NODE)
			nodes[n++] = &c->rows[i];
	return n;
}

static int box_plot(FILE *gp, const struct report *r, size_t gi, const char *tmp, struct run_err *e)
{
	const struct cmp_result *c = r->c;
	const struct report_group *g = &r->groups[gi];
	const struct cmp_row **nodes = xmalloc(g->count * sizeof(*nodes));
	size_t n = group_nodes(c, g, nodes), step = n > 24 ? (n + 23) / 24 : 1;
	double w = 0.8 / (double)c->nruns;
	char *title = NULL;

	for (size_t j = 0; j < c->nruns; j++) {
		char name[64];
		FILE *f;

		snprintf(name, sizeof(name), "g%zu-r%zu-box.dat", gi, j);
		if (!(f = open_data(tmp, name, e)))
			goto fail;
		for (size_t k = 0; k < n; k++) {
			const struct cmp_cell *x = &nodes[k]->cells[j];

			for (size_t q = 0; q < x->n; q++)
				fprintf(f, "%.17g\n", x->values[q]);
			fprintf(f, "\n\n"); /* an empty block keeps indices = nodes */
		}
		if (close_data(f, name, e) < 0)
			goto fail;
	}
	title = out_group_title(c, &c->rows[g->first]);
	gp_output(gp, r->dir, g->box);
	fprintf(gp, "set title ");
	gp_str(gp, title);
	fprintf(gp, " noenhanced\nset xrange [0.4:%zu.6]\nset xtics rotate by -40 (", n);
	for (size_t k = 0; k < n; k++) {
		if (k % step && k + 1 != n) /* every step-th name, and the last (the host) */
			continue;
		fprintf(gp, "%s", k ? ", " : "");
		gp_str(gp, cmp_row_label(c, nodes[k]));
		fprintf(gp, " %zu", k + 1);
	}
	fprintf(gp, ")\nset boxwidth %.3f\nset ylabel ", w * 0.9);
	gp_str(gp, c->rows[g->first].unit);
	fprintf(gp, "\nplot ");
	/* one element per box: gnuplot refuses a boxplot of an empty block */
	for (size_t j = 0, any = 0; j < c->nruns; j++) {
		bool titled = false;

		for (size_t k = 0; k < n; k++) {
			if (!nodes[k]->cells[j].n)
				continue;
			fprintf(gp,
				"%s'%s/g%zu-r%zu-box.dat' index %zu using (%.3f):1 with boxplot "
				"lc rgb '%s' ",
				any++ ? ", \\\n  " : "", tmp, gi, j, k,
				(double)(k + 1) + ((double)j - (double)(c->nruns - 1) / 2) * w,
				COLOUR(j));
			if (titled) {
				fputs("notitle", gp);
				continue;
			}
			fputs("title ", gp);
			gp_str(gp, c->runs[j].name);
			titled = true;
		}
	}
	fprintf(gp, "\nunset xtics\nset xtics\nunset xrange\nset xrange [*:*]\n");
	free(title);
	free(nodes);
	return 0;
fail:
	free(nodes);
	return -EIO;
}

struct itv {
	int64_t it;
	double v;
};

static int itv_cmp(const void *pa, const void *pb)
{
	const struct itv *a = pa, *b = pb;

	return (a->it > b->it) - (a->it < b->it);
}

/* Every node's value per iteration (points) and the guests' mean (line). */
static int write_iter_data(const struct run *run, const struct cmp_row *row, const char *tmp,
			   size_t gi, size_t j, struct run_err *e)
{
	size_t first, n = run_samples_metric(run, row->bench, row->metric, &first), ng = 0;
	struct itv *g = xmalloc((n ? n : 1) * sizeof(*g));
	char name[64], mname[64];
	FILE *f, *m;
	int ret = -EIO;

	snprintf(name, sizeof(name), "g%zu-r%zu-it.dat", gi, j);
	snprintf(mname, sizeof(mname), "g%zu-r%zu-mean.dat", gi, j);
	if (!(f = open_data(tmp, name, e)))
		goto out;
	if (!(m = open_data(tmp, mname, e))) {
		fclose(f);
		goto out;
	}
	fprintf(f, "NaN NaN 1\n"); /* a run without this metric still plots */
	fprintf(m, "NaN NaN\n");
	for (size_t i = first; i < first + n; i++) {
		const struct run_sample *s = &run->samples[i];

		/* the node's colour: its place in the run's participants */
		size_t node = 0;

		while (node < run->nnodes && run->nodes[node] != s->node)
			node++;
		fprintf(f, "%lld %.17g %zu\n", (long long)s->iteration, s->value, node + 1);
		/* as in the table: an iteration with a failed guest has no mean */
		if (!run_is_host(run, s->node) && !run_guest_failed_in(run, row->bench, s->iteration))
			g[ng++] = (struct itv){ s->iteration, s->value };
	}
	qsort(g, ng, sizeof(*g), itv_cmp);
	for (size_t i = 0, k; i < ng; i = k) {
		double sum = 0;

		for (k = i; k < ng && g[k].it == g[i].it; k++)
			sum += g[k].v;
		fprintf(m, "%lld %.17g\n", (long long)g[i].it, sum / (double)(k - i));
	}
	ret = close_data(f, name, e);
	if (close_data(m, mname, e) < 0)
		ret = -EIO;
out:
	free(g);
	return ret;
}

static int iter_plot(FILE *gp, const struct report *r, size_t gi, const char *tmp, struct run_err *e)
{
	const struct cmp_result *c = r->c;
	const struct cmp_row *row = &c->rows[r->groups[gi].first];
	char *title = out_group_title(c, row);
	double w = 0.5 / (double)c->nruns;

	for (size_t j = 0; j < c->nruns; j++)
		if (write_iter_data(&c->runs[j], row, tmp, gi, j, e) < 0) {
			free(title);
			return -EIO;
		}
	gp_output(gp, r->dir, r->groups[gi].iter);
	gp_plot_head(gp, title, "iteration", row->unit);
	for (size_t j = 0; j < c->nruns; j++) {
		double off = ((double)j - (double)(c->nruns - 1) / 2) * w;

		/* a colour per node (gnuplot's line types), a point shape per run */
		fprintf(gp,
			"%s'%s/g%zu-r%zu-it.dat' using ($1%+.3f):2:3 with points pt %d ps 0.45 "
			"lc variable title ",
			j ? ", " : "", tmp, gi, j, off, point_types[j % 5]);
		gp_str(gp, c->runs[j].name);
		fprintf(gp, ".' nodes (a colour each)'");
		fprintf(gp,
			", '%s/g%zu-r%zu-mean.dat' using 1:2 with linespoints lw 2 pt 5 "
			"lc rgb '%s' title ",
			tmp, gi, j, COLOUR(j));
		gp_str(gp, c->runs[j].name);
		fprintf(gp, ".' guests mean'");
	}
	/* the key of the nodes' colours, from the base's participants */
	for (size_t k = 0; k < c->runs[0].nnodes && k < 12; k++) {
		fprintf(gp, ", NaN with points pt 7 lc %zu title ", k + 1);
		gp_str(gp, cmp_name(c, c->runs[0].nodes[k]));
	}
	fprintf(gp, "\nunset xlabel\n");
	free(title);
	return 0;
}

/* "bench:param=value" with a numeric value: the bench, the param and the
 * value; false for anything else. */
static bool sweep_point(const char *name, char *bench, size_t blen, char *param, size_t plen,
			double *value)
{
	const char *colon = strrchr(name, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	char *end;

	if (!colon || !eq || (size_t)(colon - name) >= blen || (size_t)(eq - colon - 1) >= plen)
		return false;
	*value = strtod(eq + 1, &end);
	if (end == eq + 1 || *end)
		return false;
	snprintf(bench, blen, "%.*s", (int)(colon - name), name);
	snprintf(param, plen, "%.*s", (int)(eq - colon - 1), colon + 1);
	return true;
}

/* The row a sweep plot follows: the guests together, else the host. */
static const struct cmp_row *sweep_row(const struct cmp_result *c, const struct report_group *g)
{
	const struct cmp_row *host = NULL;

	for (size_t i = g->first; i < g->first + g->count; i++) {
		if (c->rows[i].kind == CMP_ROW_GUESTS)
			return &c->rows[i];
		if (c->rows[i].kind == CMP_ROW_NODE && !strcmp(cmp_name(c, c->rows[i].node), "host"))
			host = &c->rows[i];
	}
	return host;
}

/* MMTests' classic graph: each sweep point's median with its 95% CI as a
 * band, against the parameter, a line per run. */
static int sweep_plots(FILE *gp, struct report *r, const char *tmp, struct run_err *e)
{
	const struct cmp_result *c = r->c;
	bool *done = xcalloc(r->ngroups + 1, sizeof(*done));
	int ret = 0;

	for (size_t gi = 0; gi < r->ngroups && ret == 0; gi++) {
		const struct cmp_row *row = &c->rows[r->groups[gi].first];
		char bench[128], param[64], b2[128], p2[64], name[64];
		double v;
		size_t npoints = 0, si = r->nsweeps;

		if (done[gi] || !sweep_point(cmp_name(c, row->bench), bench, sizeof(bench), param,
					     sizeof(param), &v))
			continue;
		for (size_t j = 0; j < c->nruns && ret == 0; j++) {
			FILE *f;

			snprintf(name, sizeof(name), "s%zu-r%zu.dat", si, j);
			if (!(f = open_data(tmp, name, e))) {
				ret = -EIO;
				break;
			}
			fprintf(f, "NaN NaN NaN NaN\n");
			npoints = 0;
			for (size_t k = gi; k < r->ngroups; k++) {
				const struct cmp_row *rk = &c->rows[r->groups[k].first], *sr;

				if (rk->metric != row->metric ||
				    !sweep_point(cmp_name(c, rk->bench), b2, sizeof(b2), p2,
						 sizeof(p2), &v) ||
				    strcmp(b2, bench) || strcmp(p2, param))
					continue;
				done[k] = true;
				npoints++;
				sr = sweep_row(c, &r->groups[k]);
				if (sr && sr->cells[j].present)
					fprintf(f, "%.17g %.17g %.17g %.17g\n", v,
						sr->cells[j].d.median,
						sr->cells[j].d.has_ci ? sr->cells[j].d.ci_lo
								      : sr->cells[j].d.median,
						sr->cells[j].d.has_ci ? sr->cells[j].d.ci_hi
								      : sr->cells[j].d.median);
			}
			if (close_data(f, name, e) < 0)
				ret = -EIO;
		}
		if (ret || npoints < 2)
			continue;
		r->sweeps = xrealloc(r->sweeps, (r->nsweeps + 1) * sizeof(*r->sweeps));
		snprintf(r->sweeps[si].file, sizeof(r->sweeps[si].file), "s%zu-sweep.svg", si);
		r->sweeps[si].title =
			xasprintf("%s %s [%s%s%s is better] against %s, %s", bench,
				  cmp_name(c, row->metric), row->unit, *row->unit ? ", " : "",
				  row->better > 0 ? "higher" : "lower", param,
				  sweep_row(c, &r->groups[gi]) &&
						  sweep_row(c, &r->groups[gi])->kind == CMP_ROW_GUESTS
					  ? "guests together"
					  : "host");
		r->nsweeps++;
		gp_output(gp, r->dir, r->sweeps[si].file);
		gp_plot_head(gp, r->sweeps[si].title, param, row->unit);
		for (size_t j = 0; j < c->nruns; j++) {
			fprintf(gp,
				"%s'%s/s%zu-r%zu.dat' using 1:3:4 with filledcurves fs transparent "
				"solid 0.2 noborder lc rgb '%s' notitle, '%s/s%zu-r%zu.dat' using 1:2 "
				"with linespoints lw 2 pt 7 lc rgb '%s' title ",
				j ? ", " : "", tmp, si, j, COLOUR(j), tmp, si, j, COLOUR(j));
			gp_str(gp, c->runs[j].name);
		}
		fprintf(gp, "\nunset xlabel\n");
	}
	free(done);
	return ret;
}

/* Jain's index across guests per iteration, a line per run: whether
 * fairness drifted during a run, not only its median. */
static int jain_plot(FILE *gp, struct report *r, size_t gi, const char *tmp, struct run_err *e)
{
	const struct cmp_result *c = r->c;
	struct report_group *g = &r->groups[gi];
	const struct cmp_row *fr = NULL;
	char *title;

	for (size_t i = g->first; i < g->first + g->count; i++)
		if (c->rows[i].kind == CMP_ROW_FAIRNESS)
			fr = &c->rows[i];
	g->has_jain = fr != NULL;
	if (!fr)
		return 0;
	for (size_t j = 0; j < c->nruns; j++) {
		char name[64];
		FILE *f;

		snprintf(name, sizeof(name), "g%zu-r%zu-jain.dat", gi, j);
		if (!(f = open_data(tmp, name, e)))
			return -EIO;
		fprintf(f, "NaN NaN\n");
		for (size_t q = 0; q < fr->cells[j].n; q++)
			fprintf(f, "%zu %.17g\n", q + 1, fr->cells[j].values[q]);
		if (close_data(f, name, e) < 0)
			return -EIO;
	}
	title = out_group_title(c, fr);
	gp_output(gp, r->dir, g->jain);
	fprintf(gp, "set title ");
	gp_str(gp, title);
	fprintf(gp, ".' Jain index across guests' noenhanced\nset xlabel 'iteration (in order, "
		    "those with a failed guest left out)'\nset ylabel 'Jain index (1 = fair)'\nplot ");
	for (size_t j = 0; j < c->nruns; j++) {
		fprintf(gp,
			"%s'%s/g%zu-r%zu-jain.dat' using 1:2 with linespoints lw 2 pt 7 "
			"lc rgb '%s' title ",
			j ? ", " : "", tmp, gi, j, COLOUR(j));
		gp_str(gp, c->runs[j].name);
	}
	fprintf(gp, "\nunset xlabel\n");
	free(title);
	return 0;
}

/* Skew per released step on a log scale, with the largest clock bound:
 * a skew below the bound is not known to be a skew. */
static void skew_steps_plot(FILE *gp, const struct report *r, const char *tmp)
{
	const struct cmp_result *c = r->c;
	double bound = 0;

	for (size_t j = 0; j < c->nruns; j++)
		bound = fmax(bound, c->runs[j].skew_bound_max_ns / 1e3);
	gp_output(gp, r->dir, "skew-steps.svg");
	fprintf(gp, "set title 'barrier skew per released step (log scale)'\n"
		    "set xlabel 'released step (in order)'\nset ylabel 'skew (us)'\nset logscale y\n"
		    "unset xrange\nset xrange [*:*]\nplot ");
	for (size_t j = 0; j < c->nruns; j++) {
		fprintf(gp,
			"%s'%s/skew-r%zu.dat' using 0:($1 > 0 ? $1 : 0.001) with linespoints "
			"pt 7 ps 0.4 lc rgb '%s' title ",
			j ? ", " : "", tmp, j, COLOUR(j));
		gp_str(gp, c->runs[j].name);
	}
	if (bound > 0)
		fprintf(gp, ", %.9g with lines dt 2 lc rgb '#444444' title 'largest clock bound'",
			bound);
	fprintf(gp, "\nunset logscale y\nunset xlabel\n");
}

static int skew_plot(FILE *gp, struct report *r, const char *tmp, struct run_err *e)
{
	const struct cmp_result *c = r->c;
	double max = 0;

	for (size_t j = 0; j < c->nruns; j++)
		for (size_t i = 0; i < c->runs[j].nskew; i++)
			max = fmax(max, c->runs[j].skew_ns[i] / 1e3);
	r->has_skew = false;
	for (size_t j = 0; j < c->nruns; j++)
		r->has_skew |= c->runs[j].nskew > 0;
	if (!r->has_skew)
		return 0;
	for (size_t j = 0; j < c->nruns; j++) {
		char name[64];
		FILE *f;

		snprintf(name, sizeof(name), "skew-r%zu.dat", j);
		if (!(f = open_data(tmp, name, e)))
			return -EIO;
		fprintf(f, "NaN\n");
		for (size_t i = 0; i < c->runs[j].nskew; i++)
			fprintf(f, "%.6f\n", c->runs[j].skew_ns[i] / 1e3);
		if (close_data(f, name, e) < 0)
			return -EIO;
	}
	gp_output(gp, r->dir, "skew.svg");
	fprintf(gp,
		"set title 'barrier skew: last start minus first start, "
		"per released step'\nset xlabel 'skew (us)'\nset ylabel 'steps'\n"
		"bw = %.9g\nbin(x) = bw * floor(x / bw) + bw / 2\nset boxwidth bw * 0.9\n"
		"set xrange [0:*]\nplot ",
		max > 0 ? max / 30 : 1);
	for (size_t j = 0; j < c->nruns; j++) {
		fprintf(gp,
			"%s'%s/skew-r%zu.dat' using (bin($1)):(1.0) smooth frequency with boxes "
			"fs transparent solid 0.45 lc rgb '%s' title ",
			j ? ", " : "", tmp, j, COLOUR(j));
		gp_str(gp, c->runs[j].name);
	}
	fprintf(gp, "\n");
	skew_steps_plot(gp, r, tmp);
	return 0;
}

static int run_gnuplot(const char *gnuplot, const char *script, const char *log, struct run_err *e)
{
	char *argv[] = { (char *)gnuplot, (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	int st, ret;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	ret = posix_spawnp(&pid, gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		run_err_set(e, "cannot run %s: %s (install gnuplot-nox, or give --gnuplot PATH)",
			    gnuplot, strerror(ret));
		return -ret;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char *out = NULL;
		size_t len;

		if (fileio_read_all(log, 4096, &out, &len) < 0)
			out = xstrdup("(no output)");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			run_err_set(e, "cannot run %s (install gnuplot-nox, or give --gnuplot PATH)",
				    gnuplot);
		else
			run_err_set(e, "%s %s failed: %s", gnuplot, script, out);
		free(out);
		return -EIO;
	}
	return 0;
}

int report_plot(struct report *r, const char *tmp, const char *gnuplot, struct run_err *e)
{
	char *script = xasprintf("%s/plots.gp", tmp), *log = xasprintf("%s/gnuplot.log", tmp);
	FILE *gp = fopen(script, "w");
	int ret = -EIO;

	if (!gp) {
		run_err_set(e, "%s: cannot write: %s", script, strerror(errno));
		goto out;
	}
	fprintf(gp, "set terminal svg size 960,440 noenhanced font 'sans,11' background rgb 'white'\n"
		    "set encoding utf8\nset grid ytics lc rgb '#dddddd'\nset key outside right top\n"
		    "set style fill solid 0.35 border -1\nset style boxplot outliers pointtype 7\n"
		    "set pointsize 0.5\n");
	for (size_t gi = 0; gi < r->ngroups; gi++)
		if (box_plot(gp, r, gi, tmp, e) < 0 || iter_plot(gp, r, gi, tmp, e) < 0 ||
		    jain_plot(gp, r, gi, tmp, e) < 0) {
			fclose(gp);
			goto out;
		}
	if (sweep_plots(gp, r, tmp, e) < 0 || skew_plot(gp, r, tmp, e) < 0) {
		fclose(gp);
		goto out;
	}
	if (fclose(gp) != 0) {
		run_err_set(e, "%s: write failed: %s", script, strerror(errno));
		goto out;
	}
	ret = run_gnuplot(gnuplot, script, log, e);
out:
	free(script);
	free(log);
	return ret;
}
