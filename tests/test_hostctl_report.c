// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostctl report, rendered by a real browser: the page is written from the
 * fixtures of tests/data/hostctl, every <img> it names must be a whole SVG
 * file, and headless Chromium must load the page with every image decoded
 * (the page's load handler writes data-images-loaded on <body>, which
 * --dump-dom shows).  Exits 77 (skipped) when chromium or gnuplot is not
 * installed.  argv[1] is the hostctl binary.
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

START_TEST(page_renders_with_every_image)
{
	char *rep = K("%s/rep", tmp), *out = K("%s/out", tmp);
	char *err = K("%s/err", tmp), *prof = K("%s/profile", tmp);
	char *index = K("%s/index.html", rep), *url = K("file://%s", index);
	/* nonode has 2 guests: the comparison is about that (--vary) */
	const char *gen[] = { hostctl,	"report",      "--results", data,  "-o",     rep,
			      "--vary", "GUEST_COUNT", "base",	    "new", "nonode", NULL };
	const char *chromium[] = { "chromium",
				   "--headless",
				   "--no-sandbox",
				   "--disable-gpu",
				   "--disable-quic",
				   "--no-first-run",
				   "--disable-background-networking",
				   "--disable-component-update",
				   "--disable-sync",
				   NULL,
				   "--dump-dom",
				   url,
				   NULL };
	char *page, *dom, *want, **src, *udd = K("--user-data-dir=%s", prof);
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
	ck_assert_int_eq(mkdir(prof, 0700), 0);
	chromium[9] = udd;
	ck_assert_int_eq(spawn(chromium, out, err), 0);
	dom = slurp(out);
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
	if (!in_path("gnuplot") || !in_path("chromium")) {
		fprintf(stderr, "test-hostctl-report: skipped: needs gnuplot and chromium "
				"(tools/install-deps)\n");
		return 77;
	}
	hostctl = argv[1];
	data = xasprintf("%s/tests/data/hostctl", getenv("LOCKSTEP_SOURCE_ROOT"));
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, page_renders_with_every_image);
	tcase_add_test(tc, gnuplot_missing_is_said);
	tcase_add_test(tc, single_run_report);
	tcase_add_test(tc, failures_and_warning_on_the_page);
	tcase_add_test(tc, sweep_is_drawn);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(data);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
