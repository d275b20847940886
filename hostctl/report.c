// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl report: the page (index.html) around the plots of report_plot.c. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "out.h"
#include "report.h"
#include "xalloc.h"

static void html(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static const char style[] =
	"body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:90%}"
	"td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
	"td.l,th.l{text-align:left}td.w{text-align:left;white-space:normal}"
	"tr.first td{border-top:2px solid #888}"
	".better{color:#06623b;font-weight:bold}.worse{color:#a50f15;font-weight:bold}"
	".same{color:#666}.reg{background:#fdd}"
	"img{max-width:100%;height:auto;display:block;margin:.5em 0}"
	".notes li{margin:.2em 0}.warn{background:#fdd;border:2px solid #a50f15;padding:.5em}"
	"tr.sec td{font-style:italic}.verdict li{margin:.2em 0}";

/* Marks each image the browser decoded, so a headless browser's dumped DOM
 * shows whether the page came out whole (tests/test_hostctl_report.c). */
static const char script[] = "window.addEventListener('load',function(){var im=document.images,ok=0;"
			     "for(var i=0;i<im.length;i++){var g=im[i].complete&&im[i].naturalWidth>0;"
			     "im[i].setAttribute('data-loaded',g?'yes':'no');if(g)ok++;}"
			     "document.body.setAttribute('data-images-total',im.length);"
			     "document.body.setAttribute('data-images-loaded',ok);});";

static const char *verdict_class(enum cmp_verdict v)
{
	return v == CMP_BETTER ? "better" : v == CMP_WORSE ? "worse" : "same";
}

static void group_table(FILE *f, const struct cmp_result *c, const struct report_group *g)
{
	struct out_table t;
	size_t n;

	out_group_table(c, g->first, &n, &t);
	fputs("<table><tr>", f);
	for (size_t k = 0; k < OUT_COLS; k++) {
		fprintf(f, "<th%s>", k < 2 || k == 8 ? " class=\"l\"" : "");
		html(f, out_headers[k]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t i = 0; i < t.nrows; i++) {
		const struct cmp_cell *x = &c->rows[g->first + i / c->nruns].cells[i % c->nruns];

		const struct cmp_row *row = &c->rows[g->first + i / c->nruns];

		fprintf(f, "<tr class=\"%s%s\">", i % c->nruns ? "" : "first ",
			row->primary ? "" : "sec");
		for (size_t k = 0; k < OUT_COLS; k++) {
			const char *cls = k < 2 ? "l" : k == 8 ? verdict_class(x->verdict) : "";

			if (k == 8 && x->regression)
				cls = "worse reg";
			if (k == 8 && (x->verdict == CMP_TOO_FEW || x->verdict == CMP_MISSING ||
				       x->verdict == CMP_UNTESTABLE))
				cls = "w";
			fprintf(f, "<td class=\"%s\">", cls);
			html(f, t.cell[i * OUT_COLS + k]);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	out_table_free(&t);
}

static void skew_section(FILE *f, const struct report *r)
{
	const struct cmp_result *c = r->c;

	fputs("<h2 id=\"skew\">Barrier skew</h2>\n<p>Last start minus first start of each released "
	      "step: whether the guests really started together.</p>\n<table><tr><th class=\"l\">run"
	      "</th><th>steps</th><th>nobody started</th><th>median</th><th>max</th>"
	      "<th>clock bound</th></tr>\n",
	      f);
	for (size_t j = 0; j < c->nruns; j++) {
		const struct cmp_skew *s = &c->skew[j];
		char med[32], max[32], b[32];

		out_ns(med, sizeof(med), s->median_ns);
		out_ns(max, sizeof(max), s->max_ns);
		out_ns(b, sizeof(b), s->bound_max_ns);
		fputs("<tr><td class=\"l\">", f);
		html(f, c->runs[j].name);
		fprintf(f, "</td><td>%zu</td><td>%zu</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			s->steps, s->unstarted, med, max, b);
		if (!s->hosts_measured)
			continue;
		out_ns(med, sizeof(med), s->hosts_median_ns);
		out_ns(max, sizeof(max), s->hosts_max_ns);
		out_ns(b, sizeof(b), s->hosts_bound_max_ns);
		fputs("<tr><td class=\"l\">", f);
		html(f, c->runs[j].name);
		fprintf(f,
			", across hosts</td><td>%zu</td><td></td><td>%s</td><td>%s</td><td>%s</td>"
			"</tr>\n",
			s->hosts_measured, med, max, b);
	}
	fputs("</table>\n", f);
	if (r->has_skew)
		fputs("<img src=\"skew.svg\" alt=\"histogram of barrier skew per run\">\n"
		      "<img src=\"skew-steps.svg\" alt=\"barrier skew per step, log scale, with the "
		      "clock bound\">\n",
		      f);
	else
		fputs("<p>No run measured a skew (no barriers.ndjson, or nobody started).</p>\n", f);
}

static void html_list(FILE *f, const char *title, const char *id, const char *cls, struct out_lines *l)
{
	if (!l->n)
		return;
	fprintf(f, "<h2 id=\"%s\">", id);
	html(f, title);
	fprintf(f, "</h2>\n<ul class=\"%s\">", cls);
	for (size_t i = 0; i < l->n; i++) {
		fputs("<li>", f);
		html(f, l->line[i]);
		fputs("</li>", f);
	}
	fputs("</ul>\n", f);
	out_lines_free(l);
}

/* A verdict line with each "benchmark metric," it names linked to its
 * table. */
static void verdict_line(FILE *f, const struct report *r, const char *s)
{
	const struct cmp_result *c = r->c;

	while (*s) {
		size_t len = 0, gi;

		for (gi = 0; gi < r->ngroups && !len; gi++) {
			const struct cmp_row *row = &c->rows[r->groups[gi].first];
			char *name = xasprintf("%s %s,", cmp_name(c, row->bench),
					       cmp_name(c, row->metric));

			if (!strncmp(s, name, strlen(name)))
				len = strlen(name) - 1;
			free(name);
		}
		if (!len) {
			char one[2] = { *s++, 0 };

			html(f, one);
			continue;
		}
		char *text = xstrndup(s, len);

		fprintf(f, "<a href=\"#g%zu\">", gi - 1);
		html(f, text);
		fputs("</a>", f);
		free(text);
		s += len;
	}
}

static void verdict_list(FILE *f, const struct report *r, size_t j)
{
	struct out_lines l = { 0 };

	out_verdict(r->c, j, &l);
	fprintf(f, "<h2 id=\"verdict%zu\">Verdict: ", j);
	html(f, r->c->runs[j].name);
	fputs(" against ", f);
	html(f, r->c->runs[0].name);
	fputs("</h2>\n<ul class=\"verdict\">", f);
	for (size_t i = 1; i < l.n; i++) { /* line 0 names the pair: the title says it */
		fputs("<li>", f);
		verdict_line(f, r, l.line[i]);
		fputs("</li>", f);
	}
	fputs("</ul>\n", f);
	out_lines_free(&l);
}

/* Verdict, failures, each run's header and the settings that differ:
 * what a kernel engineer reads before any table. */
static void summary(FILE *f, const struct report *r)
{
	const struct cmp_result *c = r->c;
	struct out_lines l = { 0 };

	if (out_forced_warning(c)) {
		fputs("<p class=\"warn\" id=\"warning\">", f);
		html(f, out_forced_warning(c));
		fputs("</p>\n", f);
	}
	for (size_t j = 1; j < c->nruns; j++)
		verdict_list(f, r, j);
	for (size_t j = 0; j < c->nruns; j++)
		out_failures(c, j, &l);
	html_list(f, "Failures (a failed step gives no number from its node)", "failures", "notes", &l);
	for (size_t j = 0; j < c->nruns; j++) {
		char *t = xasprintf("Run %s (%s)", c->runs[j].name, j ? "new" : "base");
		char id[32];

		snprintf(id, sizeof(id), "run%zu", j);
		out_header(c, j, &l);
		html_list(f, t, id, "notes", &l);
		free(t);
	}
	out_diffs(c, &l);
	html_list(f, "Settings that differ from the base", "differences", "notes", &l);
}

static void page(FILE *f, const struct report *r)
{
	const struct cmp_result *c = r->c;
	char *w = out_test_words(c);

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>lockstep report: ");
	for (size_t j = 0; j < c->nruns; j++) {
		fputs(j ? " vs " : "", f);
		html(f, c->runs[j].name);
	}
	fprintf(f,
		"</title>\n<style>%s</style>\n<script>%s</script></head>\n<body>\n"
		"<h1>lockstep report</h1>\n<table><tr><th class=\"l\">run</th><th class=\"l\">role"
		"</th><th class=\"l\">status</th><th>iterations</th><th class=\"l\">folder</th></tr>\n",
		style, script);
	for (size_t j = 0; j < c->nruns; j++) {
		fputs("<tr><td class=\"l\">", f);
		html(f, c->runs[j].name);
		fprintf(f, "</td><td class=\"l\">%s</td><td class=\"l\">", j ? "new" : "base");
		html(f, c->runs[j].status);
		char iters[96];
		run_iterations_text(&c->runs[j], iters, sizeof(iters));
		fprintf(f, "</td><td>%s</td><td class=\"l\">", iters);
		html(f, c->runs[j].path);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	summary(f, r);
	fputs("<p>Test: ", f);
	html(f, w);
	fprintf(f,
		". Change: of the %s against the base; <b>~</b> beside it (greyed) = not "
		"significant; p is the one decided on; secondary rows in italics, on their raw "
		"p.</p>\n<ul>",
		c->opts.test == CMP_TEST_WELCH ? "mean" : "median");
	for (size_t gi = 0; gi < r->ngroups; gi++) {
		char *t = out_group_title(c, &c->rows[r->groups[gi].first]);

		fprintf(f, "<li><a href=\"#g%zu\">", gi);
		html(f, t);
		fputs("</a></li>", f);
		free(t);
	}
	fputs("<li><a href=\"#skew\">barrier skew</a></li></ul>\n", f);
	free(w);
	if (r->nsweeps)
		fputs("<h2 id=\"sweeps\">Sweeps</h2>\n<p>Each sweep point's median with its 95% "
		      "confidence interval as a band, a line per run.</p>\n",
		      f);
	for (size_t i = 0; i < r->nsweeps; i++) {
		fprintf(f, "<img src=\"%s\" alt=\"", r->sweeps[i].file);
		html(f, r->sweeps[i].title);
		fputs("\">\n", f);
	}
	for (size_t gi = 0; gi < r->ngroups; gi++) {
		const struct report_group *g = &r->groups[gi];
		char *t = out_group_title(c, &c->rows[g->first]);
		char *fw = out_fairness_words(c, g->first, g->count);

		fprintf(f, "<h2 id=\"g%zu\">", gi);
		html(f, t);
		fputs("</h2>\n", f);
		group_table(f, c, g);
		if (fw) {
			fputs("<p>", f);
			html(f, fw);
			fputs("</p>\n", f);
		}
		fprintf(f, "<img src=\"%s\" alt=\"", g->box);
		html(f, t);
		fprintf(f, ": per-node box plots, runs side by side\">\n<img src=\"%s\" alt=\"",
			g->iter);
		html(f, t);
		fputs(": values per iteration\">\n", f);
		if (g->has_jain) {
			fprintf(f, "<img src=\"%s\" alt=\"", g->jain);
			html(f, t);
			fputs(": Jain's index across guests per iteration, per run\">\n", f);
		}
		free(t);
		free(fw);
	}
	skew_section(f, r);
	if (c->nnotes) {
		fputs("<h2>Notes</h2>\n<ul class=\"notes\">", f);
		for (size_t i = 0; i < c->nnotes; i++) {
			fputs("<li>", f);
			html(f, c->notes[i]);
			fputs("</li>", f);
		}
		fputs("</ul>\n", f);
	}
	fprintf(f, "<p><small>hostctl %s</small></p>\n</body></html>\n", LOCKSTEP_VERSION);
}

int report_html(const struct report *r, struct run_err *e)
{
	char *path = xasprintf("%s/index.html", r->dir), *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		abort(); /* memory only */
	page(f, r);
	fclose(f);
	ret = fileio_write_atomic(path, buf, len);
	if (ret < 0)
		run_err_set(e, "%s: cannot write: %s", path, strerror(-ret));
	free(buf);
	free(path);
	return ret;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int report_write(const struct cmp_result *c, const char *dir, const char *gnuplot, struct run_err *e)
{
	struct report r = { .c = c, .dir = dir };
	char tmp[] = "/tmp/hostctl-report-XXXXXX";
	int ret;

	if (strpbrk(dir, "'\n")) {
		run_err_set(e,
			    "%s: a report folder name cannot hold a quote or a newline "
			    "(gnuplot is told it in quotes)",
			    dir);
		return -EINVAL;
	}
	ret = fileio_mkdir_p(dir, 0755);
	if (ret < 0) {
		run_err_set(e, "%s: cannot create the report folder: %s", dir, strerror(-ret));
		return ret;
	}
	if (!mkdtemp(tmp)) {
		ret = -errno;
		run_err_set(e, "%s: cannot create a temporary folder: %s", tmp, strerror(errno));
		return ret;
	}
	for (size_t i = 0, n; i < c->nrows; i += n) {
		struct report_group *g;

		for (n = 1; i + n < c->nrows && c->rows[i + n].bench == c->rows[i].bench &&
			    c->rows[i + n].metric == c->rows[i].metric;
		     n++)
			;
		r.groups = xrealloc(r.groups, (r.ngroups + 1) * sizeof(*r.groups));
		g = &r.groups[r.ngroups];
		g->first = i;
		g->count = n;
		snprintf(g->box, sizeof(g->box), "g%zu-box.svg", r.ngroups);
		snprintf(g->iter, sizeof(g->iter), "g%zu-iter.svg", r.ngroups);
		snprintf(g->jain, sizeof(g->jain), "g%zu-jain.svg", r.ngroups);
		r.ngroups++;
	}
	ret = report_plot(&r, tmp, gnuplot, e);
	if (ret == 0)
		ret = report_html(&r, e);
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(r.groups);
	for (size_t i = 0; i < r.nsweeps; i++)
		free(r.sweeps[i].title);
	free(r.sweeps);
	return ret;
}
