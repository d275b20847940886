// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl report: the command line around report.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd.h"
#include "cmp_opts.h"
#include "out.h"
#include "report.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: hostctl report [OPTIONS] -o DIR RUN [RUN...]\n\n"
		"Writes DIR/index.html and its SVG images: the comparison of every RUN\n"
		"with the first (as hostctl compare prints it: verdict, failures, headers\n"
		"and settings that differ on top), per-node box plots of each run side by\n"
		"side, values and Jain's index per iteration for each benchmark metric,\n"
		"sweep plots, and barrier skew as a histogram and per step.  Plots are\n"
		"drawn by gnuplot.\n\n"
		"options:\n"
		"  -o, --output DIR          the report folder (created; files in it replaced)\n" CMP_OPTS_HELP
		"  --results DIR             where run names are looked up (default ./%s)\n"
		"  --gnuplot PATH            the gnuplot to run (default: gnuplot from PATH)\n"
		"  -h, --help                this text\n\n"
		"exit status: 0 written; 1 runs unreadable or not comparable, or gnuplot\n"
		"failed; 2 usage; 3 written, and a significant change for the worse beyond\n"
		"--fail-on-regression PCT.\n",
		HOSTCTL_DEFAULT_RESULTS);
}

int cmd_report(int argc, char **argv)
{
	static const struct option lopts[] = {
		CMP_OPTS_LONG,
		{ "output", required_argument, NULL, 'o' },
		{ "results", required_argument, NULL, 'r' },
		{ "gnuplot", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmp_opts o = CMP_OPTS_DEFAULT;
	const char *results = HOSTCTL_DEFAULT_RESULTS, *dir = NULL, *gnuplot = "gnuplot";
	struct run_err e = { "" };
	struct cmp_result c;
	struct run_dict d;
	struct run *runs;
	int opt, status;
	size_t n;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:", lopts, NULL)) != -1) {
		int r = cmp_opts_parse(opt, optarg, &o);

		if (r == 0)
			continue;
		if (r != -ENOENT)
			return HOSTCTL_EXIT_USAGE; /* said by cmp_opts_parse */
		switch (opt) {
		case 'o': dir = optarg; break;
		case 'r': results = optarg; break;
		case 'g': gnuplot = optarg; break;
		case 'h': report_usage(stdout); return HOSTCTL_EXIT_OK;
		default: report_usage(stderr); return HOSTCTL_EXIT_USAGE;
		}
	}
	n = (size_t)(argc - optind);
	if (!dir || n < 1) {
		cmd_error("report needs -o DIR and at least one run");
		report_usage(stderr);
		return HOSTCTL_EXIT_USAGE;
	}
	run_dict_init(&d);
	if (cmd_load_runs(argv + optind, n, results, &d, &runs) < 0) {
		run_dict_free(&d);
		return HOSTCTL_EXIT_ERROR;
	}
	status = HOSTCTL_EXIT_ERROR;
	if (cmp_build(&c, runs, n, &d, &o, &e) < 0) {
		cmd_error("%s", e.msg);
		goto out;
	}
	if (report_write(&c, dir, gnuplot, &e) < 0) {
		cmd_error("%s", e.msg);
		cmp_free(&c);
		goto out;
	}
	printf("%s/index.html\n", dir);
	if (out_forced_warning(&c))
		cmd_error("%s", out_forced_warning(&c));
	status = c.regression ? HOSTCTL_EXIT_REGRESSION : HOSTCTL_EXIT_OK;
	cmp_free(&c);
out:
	cmd_free_runs(runs, n);
	run_dict_free(&d);
	stats_cleanup();
	return status;
}
