// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl compare: the command line, loading runs, the exit status. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "compare.h"
#include "cmp_opts.h"
#include "out.h"
#include "xalloc.h"

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	fputs("hostctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool name_taken(const struct run *runs, size_t n, size_t i, const char *name)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && !strcmp(runs[j].name, name))
			return true;
	return false;
}

/* Two runs of one name (a run folder renamed, or copied from another
 * host) are told apart by their folders' names, or whole paths. */
static void rename_duplicates(struct run *runs, size_t n)
{
	bool *dup = xcalloc(n, sizeof(*dup));

	for (size_t i = 0; i < n; i++)
		dup[i] = name_taken(runs, n, i, runs[i].name);
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(runs[i].path, '/');

		if (!dup[i])
			continue;
		free(runs[i].name);
		runs[i].name = xstrdup(base && base[1] ? base + 1 : runs[i].path);
	}
	for (size_t i = 0; i < n; i++)
		if (dup[i] && name_taken(runs, n, i, runs[i].name)) {
			free(runs[i].name);
			runs[i].name = xstrdup(runs[i].path);
		}
	free(dup);
}

int cmd_load_runs(char **args, size_t n, const char *results_dir, struct run_dict *d, struct run **out)
{
	struct run *runs = xcalloc(n, sizeof(*runs));

	for (size_t i = 0; i < n; i++) {
		struct run_err e = { "" };
		char *path;
		int ret = run_locate(args[i], results_dir, &path, &e);

		if (ret == 0) {
			ret = run_load(&runs[i], path, d, &e);
			free(path);
		}
		if (ret < 0) {
			cmd_error("%s", e.msg);
			cmd_free_runs(runs, i);
			return ret;
		}
	}
	rename_duplicates(runs, n);
	*out = runs;
	return 0;
}

void cmd_free_runs(struct run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		cmd_error("%s '%s': expected a number from %g to %g", opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cmp_opts_parse(int opt, const char *arg, struct cmp_opts *o)
{
	switch (opt) {
	case CMP_OPT_TEST:
		if (!strcmp(arg, "mann-whitney") || !strcmp(arg, "u"))
			o->test = CMP_TEST_MWU;
		else if (!strcmp(arg, "welch"))
			o->test = CMP_TEST_WELCH;
		else {
			cmd_error("--test '%s': expected mann-whitney (or u) or welch", arg);
			return -EINVAL;
		}
		return 0;
	case CMP_OPT_ALPHA:
		if (parse_double("--alpha", arg, 1e-9, 0.5, &o->alpha) < 0)
			return -EINVAL;
		return 0;
	case CMP_OPT_CORRECTION:
		if (!strcmp(arg, "holm") || !strcmp(arg, "none")) {
			o->holm = arg[0] == 'h';
			return 0;
		}
		cmd_error("--correction '%s': expected holm or none", arg);
		return -EINVAL;
	case CMP_OPT_FAIL:
		o->fail_set = true;
		return parse_double("--fail-on-regression", arg, 0, 1e9, &o->fail_pct);
	case CMP_OPT_FORCE: o->force = true; return 0;
	case CMP_OPT_VARY:
		if (!*arg || o->nvary >= CMP_VARY_MAX) {
			cmd_error("--vary '%s': expected a setting's name, at most %d of them", arg,
				  CMP_VARY_MAX);
			return -EINVAL;
		}
		o->vary[o->nvary++] = arg;
		return 0;
	case CMP_OPT_NOISE: return parse_double("--noise-pct", arg, 0, 100, &o->noise_pct);
	case CMP_OPT_FAMILY:
		if (!strcmp(arg, "primary") || !strcmp(arg, "all")) {
			o->family_all = arg[0] == 'a';
			return 0;
		}
		cmd_error("--family '%s': expected primary or all", arg);
		return -EINVAL;
	}
	return -ENOENT;
}

static void compare_usage(FILE *f)
{
	fprintf(f,
		"usage: hostctl compare [OPTIONS] BASE NEW [NEW...]\n\n"
		"Compares each NEW run with BASE.  First the verdict in words, the failed\n"
		"steps (by node, benchmark and reason: they give no number), each run's\n"
		"header (kernels, host, dates, hostd, release, skew) and the settings that\n"
		"differ from the base; runs whose plan or guests differ are refused unless\n"
		"--force or --vary.  Then one row per (benchmark, metric, node), one for the\n"
		"guests taken together (their mean per iteration) and one for fairness\n"
		"across guests (Jain's index per iteration); barrier skew per run (and\n"
		"across hosts, for a cluster leader's run).\n"
		"A run is a results folder, or a run name under --results DIR.\n\n"
		"options:\n" CMP_OPTS_HELP
		"  --format FMT              text (default), json, csv or markdown\n"
		"  --results DIR             where run names are looked up (default ./%s)\n"
		"  -h, --help                this text\n\n"
		"exit status: 0 ok; 1 runs unreadable or not comparable; 2 usage;\n"
		"3 a significant change for the worse beyond --fail-on-regression PCT.\n",
		HOSTCTL_DEFAULT_RESULTS);
}

int cmd_compare(int argc, char **argv)
{
	static const struct option lopts[] = {
		CMP_OPTS_LONG,
		{ "format", required_argument, NULL, 'f' },
		{ "results", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmp_opts o = CMP_OPTS_DEFAULT;
	enum out_format fmt = OUT_TEXT;
	const char *results = HOSTCTL_DEFAULT_RESULTS;
	struct run_dict d;
	struct run *runs;
	struct cmp_result c;
	struct run_err e = { "" };
	size_t n;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (cmp_opts_parse(opt, optarg, &o) == 0)
			continue;
		switch (opt) {
		case 'f':
			if (out_parse_format(optarg, &fmt) < 0) {
				cmd_error("--format '%s': expected text, json, csv or markdown",
					  optarg);
				return HOSTCTL_EXIT_USAGE;
			}
			break;
		case 'r': results = optarg; break;
		case 'h': compare_usage(stdout); return HOSTCTL_EXIT_OK;
		case CMP_OPT_TEST:
		case CMP_OPT_ALPHA:
		case CMP_OPT_CORRECTION:
		case CMP_OPT_FAIL:
		case CMP_OPT_VARY:
		case CMP_OPT_FAMILY:
		case CMP_OPT_NOISE: return HOSTCTL_EXIT_USAGE; /* said by cmp_opts_parse */
		default: compare_usage(stderr); return HOSTCTL_EXIT_USAGE;
		}
	}
	n = (size_t)(argc - optind);
	if (n < 2) {
		cmd_error("compare needs a base run and at least one run to compare with it");
		compare_usage(stderr);
		return HOSTCTL_EXIT_USAGE;
	}
	run_dict_init(&d);
	if (cmd_load_runs(argv + optind, n, results, &d, &runs) < 0) {
		run_dict_free(&d);
		return HOSTCTL_EXIT_ERROR;
	}
	if (cmp_build(&c, runs, n, &d, &o, &e) < 0) {
		cmd_error("%s", e.msg);
		cmd_free_runs(runs, n);
		run_dict_free(&d);
		return HOSTCTL_EXIT_ERROR;
	}
	out_print(stdout, fmt, &c);
	fflush(stdout);
	if (out_forced_warning(&c)) /* also where CSV has no room for it */
		cmd_error("%s", out_forced_warning(&c));
	opt = c.regression ? HOSTCTL_EXIT_REGRESSION : HOSTCTL_EXIT_OK;
	if (c.regression)
		cmd_error("a significant change for the worse beyond %g%% (--fail-on-regression): "
			  "exit status 3",
			  o.fail_pct);
	cmp_free(&c);
	cmd_free_runs(runs, n);
	run_dict_free(&d);
	stats_cleanup();
	return opt;
}
