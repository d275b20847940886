// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostctl report, rendered by a real browser: the page is written from the
 * fixtures of tests/data/hostctl, every <img> it names must be a whole SVG
 * file, and headless Chromium must load the page with every image decoded
 * (the page's load handler writes data-images-loaded on <body>, which
 * --dump-dom shows); the verdict is read as words from the page's text
 * (Chromium's DOM, or the HTML itself when chromium is not installed, when
 * the rendering is not checked).  Exits 77 (skipped) without gnuplot.
 * argv[1] is the hostctl binary.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

extern char **environ;

static const char *hostctl;
static char *data;
static char tmp[64];

/* Strings a case made, freed by its teardown (LeakSanitizer runs the tests). */
static char *garbage[256];
static size_t ngarbage;

static char *keep(char *p)
{
	ck_assert_uint_lt(ngarbage, 256);
	return garbage[ngarbage++] = p;
}

#define K(...) keep(xasprintf(__VA_ARGS__))

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	strcpy(tmp, "/tmp/test-hostctl-report-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void teardown(void)
{
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	while (ngarbage)
		free(garbage[--ngarbage]);
}

/* Runs argv with stdout to out_path and stderr to err_path; exit status. */
static int spawn(const char *const *argv, const char *out_path, const char *err_path)
{
	posix_spawn_file_actions_t fa;
	int st;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(posix_spawnp(&pid, argv[0], &fa, NULL, (char **)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
	char *buf;
	size_t len;

	ck_assert_msg(fileio_read_all(path, 64 << 20, &buf, &len) == 0, "cannot read %s", path);
	return keep(buf);
}

static bool in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char *copy = xstrdup(p ? p : "/usr/bin:/bin"), *save = NULL;
	bool found = false;

	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", d, prog);

		found = access(f, X_OK) == 0;
		free(f);
	}
	free(copy);
	return found;
}

/* Each src="..." of an <img> in page, NULL-terminated. */
static char **img_sources(const char *page, size_t *n)
{
	char **v = (char **)keep(xcalloc(256, sizeof(*v)));

	*n = 0;
	for (const char *p = page; (p = strstr(p, "<img src=\"")) && *n < 255;) {
		const char *s = p + strlen("<img src=\""), *q = strchr(s, '"');

		ck_assert_ptr_nonnull(q);
		v[(*n)++] = keep(xstrndup(s, (size_t)(q - s)));
		p = q;
	}
	return v;
}

static bool have_chromium;

/* The DOM headless Chromium made of url, written to out_path. */
static char *chromium_dom(const char *url, const char *out_path, const char *err_path)
{
	char *prof = K("%s/profile-%zu", tmp, ngarbage), *udd = K("--user-data-dir=%s", prof);
	const char *argv[] = { "chromium",
			       "--headless",
			       "--no-sandbox",
			       "--disable-gpu",
			       "--disable-quic",
			       "--no-first-run",
			       "--disable-background-networking",
			       "--disable-component-update",
			       "--disable-sync",
			       udd,
			       "--dump-dom",
			       url,
			       NULL };

	ck_assert_int_eq(mkdir(prof, 0700), 0);
	ck_assert_int_eq(spawn(argv, out_path, err_path), 0);
	return slurp(out_path);
}

/* The text a reader sees in an HTML page: scripts and styles dropped,
 * inline elements (a, b, i, small, span) joined to their words, every
 * other tag a line break, entities decoded, blanks collapsed; one line per
 * block, no empty lines. */
static char *page_text(const char *page)
{
	static const char *const inl[] = { "a", "b", "i", "small", "span", NULL };
	static const char *const ent[][2] = { { "&amp;", "&" },	  { "&lt;", "<" },  { "&gt;", ">" },
					      { "&quot;", "\"" }, { "&#39;", "'" }, { NULL, NULL } };
	char *t = keep(xcalloc(strlen(page) + 1, 1)), *o = t;

	for (const char *p = page; *p;) {
		if (!strncmp(p, "<script", 7) || !strncmp(p, "<style", 6)) {
			const char *end =
				strstr(p, p[1] == 's' && p[2] == 'c' ? "</script>" : "</style>");

			p = end ? strchr(end, '>') + 1 : p + strlen(p);
			continue;
		}
		if (*p == '<') {
			const char *q = strchr(p, '>'), *name = p + 1 + (p[1] == '/');
			bool inline_tag = false;

			for (size_t i = 0; inl[i]; i++) {
				size_t n = strlen(inl[i]);

				inline_tag |= !strncmp(name, inl[i], n) &&
					      (name[n] == '>' || name[n] == ' ' || name[n] == '/');
			}
			if (!inline_tag && o > t && o[-1] != '\n')
				*o++ = '\n';
			p = q ? q + 1 : p + strlen(p);
			continue;
		}
		if (*p == '&') {
			size_t i;

			for (i = 0; ent[i][0] && strncmp(p, ent[i][0], strlen(ent[i][0])); i++)
				;
			if (ent[i][0]) {
				*o++ = ent[i][1][0];
				p += strlen(ent[i][0]);
				continue;
			}
		}
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			if (o > t && o[-1] != ' ' && o[-1] != '\n')
				*o++ = ' ';
			p++;
			continue;
		}
		if (o > t && o[-1] == ' ' && o - 1 > t && o[-2] == '\n')
			o--; /* no blank at the start of a line */
		*o++ = *p++;
	}
	*o = '\0';
	return t;
}

/* Issue 15: the verdict, read as words from the page a reader sees
 * (rendered by headless Chromium when it is installed, else the HTML's
 * own text), above the run headers and the first table. */
START_TEST(verdict_in_the_page_text)
{
	char *rep = K("%s/verdict", tmp), *out = K("%s/out", tmp), *err = K("%s/err", tmp);
	char *index = K("%s/index.html", rep), *text;
	const char *gen[] = { hostctl,	"report",      "--results", data,  "-o",     rep,
			      "--vary", "GUEST_COUNT", "base",	    "new", "nonode", NULL };
	static const char *const lines[] = {
		"Verdict: new against base\n"
		"significantly worse: cpu-probe ops_per_sec, fairness (Jain) -0.16% (p 0.00093)\n"
		"significantly better: cpu-probe ops_per_sec, host +19.89% (p 0.00093); cpu-probe "
		"ops_per_sec, guests together +16.59% (p 0.00093)\n"
		"no significant change elsewhere (3 other primary rows)\n",
		"Verdict: nonode against base\nsignificantly better: cpu-probe ops_per_sec, host "
		"+9.91% (p 0.00093); ",
		"\nRun base (base)\n",
		"\ncpu-probe ops_per_sec [ops/s, higher is better]\n",
	};
	const char *at = NULL;

	ck_assert_msg(spawn(gen, out, err) == 0, "report failed: %s", slurp(err));
	text = page_text(have_chromium ? chromium_dom(K("file://%s", index), out, err) : slurp(index));
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const char *next = strstr(text, lines[i]);

		ck_assert_msg(next && next > at,
			      "the page's text (%s) lacks, in this order:\n%s\n"
			      "---- text:\n%s",
			      have_chromium ? "Chromium" : "HTML", lines[i], text);
		at = next;
	}
}
END_TEST

START_TEST(page_renders_with_every_image)
{
	char *rep = K("%s/rep", tmp), *out = K("%s/out", tmp);
	char *err = K("%s/err", tmp);
	char *index = K("%s/index.html", rep), *url = K("file://%s", index);
	/* nonode has 2 guests: the comparison is about that (--vary) */
	const char *gen[] = { hostctl,	"report",      "--results", data,  "-o",     rep,
			      "--vary", "GUEST_COUNT", "base",	    "new", "nonode", NULL };
	char *page, *dom, *want, **src;
	size_t n;

	ck_assert_msg(spawn(gen, out, err) == 0, "report failed: %s", slurp(err));
	page = slurp(index);
	src = img_sources(page, &n);
	/* 3 metrics x (box plot + per iteration + Jain per iteration) + skew
	 * histogram + skew per step */
	ck_assert_uint_eq(n, 11);
	for (size_t i = 0; i < n; i++) {
		char *path = K("%s/%s", rep, src[i]), *svg;

		ck_assert_msg(!strchr(src[i], '/'), "%s is not inside the report folder", src[i]);
		svg = slurp(path);
		ck_assert_msg(!strncmp(svg, "<?xml", 5) && strstr(svg, "<svg") && strstr(svg, "</svg>"),
			      "%s is not a whole SVG file", path);
	}
	dom = chromium_dom(url, out, err);
	want = K("data-images-total=\"%zu\" data-images-loaded=\"%zu\"", n, n);
	ck_assert_msg(strstr(dom, want), "Chromium did not load every image: wanted %s in %.300s",
		      want, strstr(dom, "<body") ? strstr(dom, "<body") : dom);
	ck_assert_ptr_null(strstr(dom, "data-loaded=\"no\""));
	for (size_t i = 0; i < n; i++) {
		char *tag = K("src=\"%s\"", src[i]);

		ck_assert_msg(strstr(dom, tag), "dumped DOM lacks %s", tag);
	}
	ck_assert_ptr_nonnull(strstr(dom, "+19.91% better"));
	ck_assert_ptr_nonnull(strstr(dom, "no samples in run nonode"));
	/* issue 15: the verdict in words on top, the header of each run, the
	 * expected differences; a change not significant keeps its size */
	ck_assert_msg(strstr(dom, "<h2 id=\"verdict1\">Verdict: new against base</h2>") &&
			      strstr(dom, "<li>significantly better: <a href=\"#g0\">cpu-probe ops_per_sec</a>, "
					  "host +19.89%"),
		      "%s", dom);
	ck_assert(strstr(dom, "verdict1") < strstr(dom, "<h2 id=\"g0\">"));
	ck_assert_ptr_nonnull(strstr(dom, "<li>host kernel 6.1.0-patched; "));
	ck_assert_ptr_nonnull(
		strstr(dom, "<li>expected guest_count (GUEST_COUNT): base 3, nonode 2</li>"));
	ck_assert_ptr_nonnull(strstr(dom, "<td class=\"same\">+0.12% ~</td>"));
}
END_TEST

/* Issue 15: the page of a run with failed steps lists them on top, by
 * node, benchmark and reason; a forced comparison keeps its warning. */
START_TEST(failures_and_warning_on_the_page)
{
	char *rep = K("%s/fail", tmp), *out = K("%s/out", tmp), *err = K("%s/err", tmp);
	char *index = K("%s/index.html", rep), *page;
	const char *gen[] = { hostctl, "report", "--results",	data, "-o",
			      rep,     "base",	 "failedguest", NULL };
	const char *forced[] = { hostctl, "report",  "--results", data,	      "-o",
				 rep,	  "--force", "loops200",  "loops400", NULL };

	ck_assert_msg(spawn(gen, out, err) == 0, "%s", slurp(err));
	page = slurp(index);
	ck_assert_msg(strstr(page, "<li>failedguest: guest-2 cpu-probe: 2 failed steps: cpu-probe "
				   "exited with status 1</li>"),
		      "%s", page);
	ck_assert(strstr(page, "id=\"failures\"") < strstr(page, "<h2 id=\"g0\">"));
	ck_assert_int_eq(spawn(forced, out, err), 0);
	page = slurp(index);
	ck_assert_msg(strstr(page, "<p class=\"warn\" id=\"warning\">WARNING: these runs differ"),
		      "%s", page);
	ck_assert_ptr_nonnull(strstr(slurp(err), "WARNING"));
}
END_TEST

START_TEST(gnuplot_missing_is_said)
{
	char *rep = K("%s/rep", tmp), *out = K("%s/out", tmp);
	char *err = K("%s/err", tmp);
	const char *gen[] = { hostctl, "report",    "--results",
			      data,    "--gnuplot", "/nonexistent/gnuplot",
			      "-o",    rep,	    "base",
			      "new",   NULL };

	ck_assert_int_eq(spawn(gen, out, err), 1);
	ck_assert_msg(strstr(slurp(err), "install gnuplot-nox"), "%s", slurp(err));
}
END_TEST

START_TEST(single_run_report)
{
	char *rep = K("%s/one", tmp), *out = K("%s/out", tmp);
	char *err = K("%s/err", tmp), *index = K("%s/index.html", rep);
	const char *gen[] = { hostctl, "report", "--results", data, "-o", rep, "base", NULL };

	ck_assert_msg(spawn(gen, out, err) == 0, "%s", slurp(err));
	ck_assert_ptr_nonnull(strstr(slurp(index), "g2-iter.svg"));
}
END_TEST

/* Issue 15: a benchmark swept over groups=1,2,4 is drawn against groups
 * (the guests' median with its CI band); the page names the sweep plot. */
START_TEST(sweep_is_drawn)
{
	char *rep = K("%s/sweep", tmp), *out = K("%s/out", tmp), *err = K("%s/err", tmp);
	char *index = K("%s/index.html", rep), *svg;
	const char *gen[] = { hostctl, "report", "--results", data, "-o", rep, "sweep", NULL };

	ck_assert_msg(spawn(gen, out, err) == 0, "%s", slurp(err));
	ck_assert_msg(strstr(slurp(index), "<img src=\"s0-sweep.svg\" alt=\"hackbench time [s, "
					   "lower is better] against groups, guests together\">"),
		      "%s", slurp(index));
	ck_assert_ptr_null(strstr(slurp(index), "s1-sweep.svg")); /* one metric, one sweep */
	svg = slurp(K("%s/s0-sweep.svg", rep));
	ck_assert(strstr(svg, "<svg") && strstr(svg, "</svg>") && strstr(svg, "groups"));
}
END_TEST

/* The words of an SVG's <text> elements, '|'-separated. */
static char *svg_words(const char *svg)
{
	char *w = keep(xcalloc(strlen(svg) + 1, 1)), *o = w;

	for (const char *p = svg; (p = strstr(p, "<text"));) {
		const char *s = strchr(p, '>'), *e = s ? strstr(s, "</text>") : NULL;

		if (!e)
			break;
		memcpy(o, s + 1, (size_t)(e - s - 1));
		o += e - s - 1;
		*o++ = '|';
		p = e;
	}
	*o = '\0';
	return w;
}

/* Issue 15: the plots draw what the page says.  The per-iteration plot
 * names every node in its key (a colour each) and each run; the sweep plot
 * has a line and a CI band per run; skew per step is on a log scale with
 * the largest clock bound as a line (a copy of run new whose steps have a
 * 4 us bound). */
START_TEST(plots_say_what_they_draw)
{
	char *rep = K("%s/plots", tmp), *out = K("%s/out", tmp), *err = K("%s/err", tmp);
	char *copy = K("%s/bound", tmp), *src = K("%s/new", data), *w;
	const char *cp[] = { "cp", "-r", src, copy, NULL };
	const char *sed[] = { "sed", "-i", "s/\"skew_bound_ns\":0/\"skew_bound_ns\":4000/",
			      K("%s/barriers.ndjson", copy), NULL };
	const char *gen[] = { hostctl, "report", "--results", data, "-o", rep, "base", copy, NULL };
	const char *sweep[] = { hostctl, "report", "--results",		data, "-o",
				rep,	 "sweep",  K("%s/sweep", data), NULL };

	ck_assert_int_eq(spawn(cp, out, err), 0);
	ck_assert_int_eq(spawn(sed, out, err), 0);
	ck_assert_msg(spawn(gen, out, err) == 0, "%s", slurp(err));
	w = svg_words(slurp(K("%s/g0-iter.svg", rep)));
	ck_assert_msg(strstr(w, "|base nodes (a colour each)|base guests mean|new nodes (a colour "
				"each)|new guests mean|guest-1|guest-2|guest-3|host|"),
		      "%s", w);
	w = svg_words(slurp(K("%s/skew-steps.svg", rep)));
	ck_assert_msg(strstr(w, "|base|new|largest clock bound|barrier skew per released step (log "
				"scale)|"),
		      "%s", w);
	ck_assert_msg(spawn(sweep, out, err) == 0, "%s", slurp(err));
	char *svg = slurp(K("%s/s0-sweep.svg", rep));
	w = svg_words(svg);
	/* the two runs (one named by its folder: the same name twice) */
	ck_assert_msg(strstr(w, "|groups|") && strstr(w, "/sweep|sweep|hackbench time"), "%s", w);
	size_t bands = 0;
	for (const char *p = svg; (p = strstr(p, "fill-opacity")); p++)
		bands++; /* gnuplot's transparent filledcurves */
	ck_assert_msg(bands >= 2, "%zu filled bands in the sweep plot, wanted one per run", bands);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("hostctl-report");
	TCase *tc = tcase_create("report");
	SRunner *sr;
	int failed;

	if (argc < 2 || !getenv("LOCKSTEP_SOURCE_ROOT")) {
		fprintf(stderr, "usage: test-hostctl-report HOSTCTL (with LOCKSTEP_SOURCE_ROOT set)\n");
		return EXIT_FAILURE;
	}
	if (!in_path("gnuplot")) {
		fprintf(stderr, "test-hostctl-report: skipped: needs gnuplot (tools/install-deps)\n");
		return 77;
	}
	have_chromium = in_path("chromium");
	if (!have_chromium)
		fprintf(stderr, "test-hostctl-report: no chromium: the page's text is read from its "
				"HTML, and the rendering is not checked (tools/install-deps)\n");
	hostctl = argv[1];
	data = xasprintf("%s/tests/data/hostctl", getenv("LOCKSTEP_SOURCE_ROOT"));
	tcase_add_checked_fixture(tc, setup, teardown);
	if (have_chromium)
		tcase_add_test(tc, page_renders_with_every_image);
	tcase_add_test(tc, verdict_in_the_page_text);
	tcase_add_test(tc, gnuplot_missing_is_said);
	tcase_add_test(tc, single_run_report);
	tcase_add_test(tc, failures_and_warning_on_the_page);
	tcase_add_test(tc, sweep_is_drawn);
	tcase_add_test(tc, plots_say_what_they_draw);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(data);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
